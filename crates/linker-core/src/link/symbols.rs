//! Phase 2: one global symbol table over all inputs, in command-line order.
//!
//! Rules (nvlink's, measured): a strong definition beats a weak one in either
//! order; two strong definitions are an error naming both files; two weak
//! definitions of different sizes are an error; of two weak definitions of the
//! same size the first one wins. Every such error of the link is collected
//! before the link stops. Undefined references are judged later, in
//! `relocate`, where the referencing function is known and dead code no longer
//! counts.

use super::{Diags, FileId, GlobalId, InputFile};
use crate::config::LinkFailure;
use crate::cubin::Symbol;
use crate::elf::{STB_GLOBAL, STB_WEAK, STT_SECTION};
use crate::error::{Error, ErrorKind};
use indexmap::IndexMap;

/// An input symbol: file and index in that file's `.symtab`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct SymRef {
    pub file: FileId,
    pub index: u32,
}

/// One global (or weak) name.
#[derive(Debug, Clone)]
pub(crate) struct GlobalSym {
    /// The winning definition, if any.
    pub def: Option<SymRef>,
    /// Whether the winning definition is strong (`STB_GLOBAL`).
    pub def_strong: bool,
    /// The first input that mentioned the name (defined or not).
    pub first_mention: SymRef,
    /// Whether every mention so far was weak.
    pub all_weak: bool,
}

/// The symbol database.
pub(crate) struct SymbolDb<'d> {
    /// Globals by name, in first-mention order (deterministic).
    pub globals: IndexMap<&'d str, GlobalSym>,
    /// For each file, for each input symbol: its global id (non-local symbols only).
    pub global_of: Vec<Vec<Option<GlobalId>>>,
}

impl SymbolDb<'_> {
    /// The global entry of an id.
    pub(crate) fn global(&self, id: GlobalId) -> (&str, &GlobalSym) {
        let (name, g) = self
            .globals
            .get_index(id.0 as usize)
            .expect("GlobalId comes from this table");
        (name, g)
    }

    /// The definition an input symbol refers to: itself for locals and
    /// definitions that won, the winning definition for globals, `None` when
    /// the name is undefined in the whole link.
    pub(crate) fn resolve(&self, r: SymRef) -> Option<SymRef> {
        match self.global_of[r.file.0 as usize][r.index as usize] {
            None => Some(r),
            Some(g) => self.global(g).1.def,
        }
    }
}

fn is_global(sym: &Symbol<'_>) -> bool {
    let b = sym.bind();
    (b == STB_GLOBAL || b == STB_WEAK) && sym.ty() != STT_SECTION && sym.index != 0
}

/// Builds the symbol database; returns every duplicate/mismatch error at once.
pub(crate) fn resolve<'d>(
    files: &[InputFile<'d>],
    diags: &mut Diags,
) -> Result<SymbolDb<'d>, LinkFailure> {
    let _span = tracing::info_span!("symbols").entered();
    let mut globals: IndexMap<&'d str, GlobalSym> = IndexMap::new();
    let mut global_of = Vec::with_capacity(files.len());
    for f in files {
        let mut map = vec![None; f.cubin.symbols.len()];
        for sym in &f.cubin.symbols {
            if !is_global(sym) {
                continue;
            }
            let here = SymRef {
                file: f.id,
                index: sym.index,
            };
            let weak = sym.bind() == STB_WEAK;
            let entry = globals.entry(sym.name);
            let gid = GlobalId(entry.index() as u32);
            let g = entry.or_insert(GlobalSym {
                def: None,
                def_strong: false,
                first_mention: here,
                all_weak: true,
            });
            g.all_weak &= weak;
            map[sym.index as usize] = Some(gid);
            if sym.is_undefined() {
                continue;
            }
            match g.def {
                None => {
                    g.def = Some(here);
                    g.def_strong = !weak;
                }
                Some(prev) => {
                    let prev_file = &files[prev.file.0 as usize];
                    let prev_sym = &prev_file.cubin.symbols[prev.index as usize];
                    if !weak && g.def_strong {
                        diags.error(
                            Error::new(
                                ErrorKind::Symbol,
                                format!(
                                    "multiple definition of '{}': defined in '{}' and in '{}'",
                                    sym.name, prev_file.name, f.name
                                ),
                            )
                            .for_symbol(sym.name),
                        );
                    } else if !weak {
                        // Strong replaces an earlier weak definition.
                        g.def = Some(here);
                        g.def_strong = true;
                    } else if !g.def_strong && prev_sym.size != sym.size {
                        diags.error(
                            Error::new(
                                ErrorKind::Symbol,
                                format!(
                                    "size of weak symbol '{}' is {:#x} in '{}' but {:#x} in '{}', where it was first defined",
                                    sym.name, sym.size, f.name, prev_sym.size, prev_file.name
                                ),
                            )
                            .for_symbol(sym.name),
                        );
                    }
                    // Weak after any definition of equal size: the first one stays.
                }
            }
        }
        global_of.push(map);
    }
    diags.checkpoint()?;
    Ok(SymbolDb { globals, global_of })
}
