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
use crate::elf::{
    SHN_COMMON, STB_GLOBAL, STB_WEAK, STT_CUDA_OBJECT, STT_FUNC, STT_OBJECT, STT_SECTION,
};
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
    /// The first definition seen in command-line order (it may have lost later).
    pub first_def: Option<SymRef>,
    /// For `.common` variables (while no real definition exists): the merged
    /// size (largest) and alignment (first declaration's).
    pub common: Option<Common>,
    /// When the winning definition is a PTX `.alias`: the function it stands
    /// for, which references to the name resolve to
    /// ([`InputFile::alias_target`]).
    pub alias_of: Option<SymRef>,
}

/// A merged `.common` variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Common {
    pub size: u64,
    pub align: u64,
    /// The input whose declaration set `size` (named in size errors).
    pub sized_by: FileId,
    /// Whether the variable stays bound `STB_WEAK`: a weak uninitialized
    /// definition held the name when the first `.common` declaration came,
    /// and no strong uninitialized one followed.
    pub weak: bool,
}

/// The symbol database.
pub(crate) struct SymbolDb<'d> {
    /// Globals by name, in first-mention order (deterministic).
    pub globals: IndexMap<&'d str, GlobalSym, crate::fxhash::FxBuild>,
    /// For each file, for each input symbol: its global id (non-local symbols only).
    pub global_of: Vec<Vec<Option<GlobalId>>>,
    /// Definitions that won their name when their input was read and were
    /// replaced by a later input's (a strong definition after a weak one, a
    /// weak function with fewer registers, an initialized definition after
    /// commons, a weak uninitialized definition a later common merges with),
    /// and the strong uninitialized definitions that merged into commons
    /// (they keep their place in their input's bss). A losing definition not in this set lost when its input was read
    /// (the definitions that held a name when read are its winner and these:
    /// a per-name list of them was 2.5 MB at N = 2000).
    pub replaced: crate::fxhash::HashSet<SymRef>,
    /// The weak definitions that lost when read to a weak definition holding
    /// the name then.
    pub lost_to_weak: crate::fxhash::HashSet<SymRef>,
    /// Names one of whose [`SymbolDb::replaced`] definitions has code with
    /// relocations of its own: the `RELA` frame and line entries of every
    /// replaced copy of such a name go (`nvinfo::frame_reloc_dropped`).
    pub replaced_with_relocs: crate::fxhash::HashSet<GlobalId>,
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

    /// The global whose first mention is `r`, when `r` (a symbol of `f`) is
    /// a weak definition (not of a `.common` variable). nvlink's symbol table lists such
    /// a global among the locals of `r`'s input, in that input's symbol
    /// order (the other globals follow every local, by first mention):
    /// measured with nvlink -r at sm_90/100 and in the line-table order of
    /// final links at sm_100/120 (`debugline::sort_key`).
    pub(crate) fn weak_first_definition(&self, f: &InputFile<'_>, r: SymRef) -> Option<GlobalId> {
        let sym = f.cubin.symbols.get(r.index as usize)?;
        if sym.bind() != STB_WEAK || sym.is_undefined() || sym.shndx == SHN_COMMON {
            return None;
        }
        let g = self.global_of[r.file.0 as usize]
            .get(r.index as usize)
            .copied()
            .flatten()?;
        // (A weak bss definition that merged into a `.common` stays with the
        // commons, which `-r` orders among themselves.)
        let gs = self.global(g).1;
        (gs.first_mention == r && gs.common.is_none()).then_some(g)
    }

    /// The function a reference `r` stands for when its name's definition is
    /// a PTX `.alias` ([`GlobalSym::alias_of`]): `-r` keeps such references
    /// against the function, as nvlink -r writes them.
    pub(crate) fn alias_of(&self, r: SymRef) -> Option<SymRef> {
        let g = self.global_of[r.file.0 as usize]
            .get(r.index as usize)?
            .as_ref()?;
        self.global(*g).1.alias_of
    }

    /// Whether definition `r` is weak and lost, when its input was read, to
    /// a weak definition holding the name then.
    pub(crate) fn lost_to_weak(&self, r: SymRef) -> bool {
        self.lost_to_weak.contains(&r)
    }

    /// Whether input symbol `r` is the definition its name resolves to:
    /// true for locals and for the winning definition of a global name
    /// (a winning `.alias` too, which [`Self::resolve`] maps to its
    /// function), false for losing definitions and undefined references.
    pub(crate) fn is_winner(&self, r: SymRef) -> bool {
        match self.global_of[r.file.0 as usize][r.index as usize] {
            None => true,
            Some(g) => self.global(g).1.def == Some(r),
        }
    }

    /// The definition an input symbol refers to: itself for locals and
    /// definitions that won, the winning definition for globals (the
    /// function, when that is a `.alias` of it), `None` when the name is
    /// undefined in the whole link.
    pub(crate) fn resolve(&self, r: SymRef) -> Option<SymRef> {
        match self.global_of[r.file.0 as usize][r.index as usize] {
            None => Some(r),
            Some(g) => {
                let g = self.global(g).1;
                g.alias_of.or(g.def)
            }
        }
    }
}

/// Whether input symbol `index` takes part in resolution by name.
fn is_global(index: usize, sym: &Symbol<'_>) -> bool {
    let b = sym.bind();
    (b == STB_GLOBAL || b == STB_WEAK) && sym.ty() != STT_SECTION && index != 0
}

fn is_variable(sym: &Symbol<'_>) -> bool {
    matches!(sym.ty(), STT_OBJECT | STT_CUDA_OBJECT)
}

/// Whether variable `sym` is managed (`.attribute(.managed)`).
fn is_managed(sym: &Symbol<'_>) -> bool {
    sym.other & crate::elf::STO_CUDA_MANAGED != 0
}

/// The register count ptxas recorded for function symbol `idx` of `f`
/// (module `.nv.info` `EIATTR_REGCOUNT`, else the top byte of the text
/// section's `sh_info` on sm_75..89).
pub(crate) fn register_count(f: &InputFile<'_>, idx: u32) -> u32 {
    if let Some(info) = f.cubin.section_by_name(".nv.info") {
        if let Ok(records) = crate::cubin::eiattr::parse(info.data) {
            for r in records {
                if r.attr == crate::cubin::eiattr::EiAttr::EIATTR_REGCOUNT {
                    if let Some((sym, v)) = r.sym_value() {
                        if sym == idx {
                            return v;
                        }
                    }
                }
            }
        }
    }
    let sym = &f.cubin.symbols[idx as usize];
    sym.section()
        .and_then(|s| f.cubin.sections.get(s as usize))
        .map(|s| s.info >> 24)
        .unwrap_or(0)
}

/// Whether variable definition `sym` has initialized data (`.nv.global.init`,
/// not the `.nv.global` bss).
fn is_initialized(f: &InputFile<'_>, sym: &Symbol<'_>) -> bool {
    sym.section()
        .and_then(|s| f.cubin.sections.get(s as usize))
        .is_some_and(|s| {
            !matches!(
                s.sh_type,
                crate::elf::SHT_NOBITS | crate::elf::SHT_CUDA_GLOBAL
            )
        })
}

/// "multiple definition" of a common declared in `file` after a strong
/// definition (`prev`) of the same variable.
fn multiple_common(name: &str, files: &[InputFile<'_>], prev: SymRef, file: &str) -> Error {
    symbol_error(
        name,
        format!(
            "multiple definition of '{name}': defined in '{}' and in '{file}' (common)",
            files[prev.file.0 as usize].name
        ),
    )
}

fn prev_sym<'a, 'd>(f: &'a InputFile<'d>, r: SymRef) -> &'a Symbol<'d> {
    &f.cubin.symbols[r.index as usize]
}

/// The size of kernel `sym`'s parameter bank (`.nv.constant0.<k>`), if any.
fn param_bank_size(f: &InputFile<'_>, sym: &Symbol<'_>) -> Option<u64> {
    let text = sym.section()?;
    f.cubin
        .sections
        .iter()
        .find(|b| b.sh_type == crate::elf::SHT_CUDA_CONSTANT0 && b.info_section() == Some(text))
        .map(|b| b.size)
}

fn size_error(name: &str, size: u64, file: &str, first: u64, first_file: &str) -> Error {
    symbol_error(
        name,
        format!(
            "size of '{name}' is {size:#x} in '{file}' but {first:#x} in '{first_file}', where it was first specified"
        ),
    )
}

fn common_too_large(name: &str, file: &str) -> Error {
    symbol_error(
        name,
        format!("common symbol '{name}' in '{file}' has larger size than its initialization"),
    )
}

fn symbol_error(name: &str, message: String) -> Error {
    Error::new(ErrorKind::Symbol, message).for_symbol(name)
}

/// Builds the symbol database; returns every duplicate/mismatch error at once.
///
/// Measured nvlink rules: a strong definition beats weak ones; two strong
/// definitions are an error; among weak *functions* the one with the fewest
/// registers wins (the first on a tie), whatever their sizes; weak or extern
/// *variables* must agree in size with the first sized mention of the name
/// (an unsized first declaration disables the check), or with an initialized
/// definition that replaced the commons (fixture `common_replaced_size`); `.common` variables
/// merge (largest size, first alignment) and yield to an initialized
/// definition, while uninitialized definitions merge into them (the variable
/// is placed as a common: fixture `common_bss_merge`); all must match: a common of another size than an uninitialized definition
/// is a size mismatch, one larger than an initialized definition an error of
/// its own, and a common after a strong uninitialized definition a multiple
/// definition (fixtures `common_after_strong`, `common_larger_than_init`,
/// `common_size_mismatch`); a name used as a variable in one input and a
/// function in another is an error.
pub(crate) fn resolve<'d>(
    files: &[InputFile<'d>],
    diags: &mut Diags,
) -> Result<SymbolDb<'d>, LinkFailure> {
    let _span = tracing::info_span!("symbols").entered();
    let mut globals: IndexMap<&'d str, GlobalSym, crate::fxhash::FxBuild> = IndexMap::default();
    let mut global_of = Vec::with_capacity(files.len());
    let mut replaced = crate::fxhash::HashSet::default();
    let mut lost_to_weak = crate::fxhash::HashSet::default();
    for f in files {
        let mut map = vec![None; f.cubin.symbols.len()];
        for (i, sym) in f.cubin.symbols.iter().enumerate() {
            if !is_global(i, sym) {
                continue;
            }
            let here = SymRef {
                file: f.id,
                index: i as u32,
            };
            let weak = sym.bind() == STB_WEAK;
            let entry = globals.entry(sym.name);
            let gid = GlobalId(entry.index() as u32);
            let g = entry.or_insert(GlobalSym {
                def: None,
                def_strong: false,
                first_mention: here,
                all_weak: true,
                first_def: None,
                common: None,
                alias_of: None,
            });
            g.all_weak &= weak;
            map[i] = Some(gid);
            let first_file = &files[g.first_mention.file.0 as usize];
            let first = &first_file.cubin.symbols[g.first_mention.index as usize];
            // Variable vs function.
            let kind_known = |s: &Symbol<'_>| s.ty() == STT_FUNC || is_variable(s);
            let kind_clash = here != g.first_mention
                && kind_known(sym)
                && kind_known(first)
                && is_variable(sym) != is_variable(first);
            if kind_clash {
                diags.error(symbol_error(
                    sym.name,
                    format!(
                        "'{}' is a {} in '{}' but a {} in '{}': memory space doesn't match",
                        sym.name,
                        if is_variable(sym) {
                            "variable"
                        } else {
                            "function"
                        },
                        f.name,
                        if is_variable(first) {
                            "variable"
                        } else {
                            "function"
                        },
                        first_file.name
                    ),
                ));
                // nvlink still compares a variable's size with the
                // function's (fixture func_var_clash_rev), nothing more.
            }
            // Every mention of a variable (definition or declaration, any
            // binding) must agree with the first one on `.managed`; nvlink
            // reports it before a size mismatch of the same mention
            // (measured over definitions, weak copies, commons and externs
            // in either order; difftest 1201017, 1201028; fixture
            // `managed_mismatch`).
            if here != g.first_mention
                && is_variable(sym)
                && is_variable(first)
                && is_managed(sym) != is_managed(first)
            {
                let (m, u) = if is_managed(first) {
                    (first_file.name, f.name)
                } else {
                    (f.name, first_file.name)
                };
                diags.error(symbol_error(
                    sym.name,
                    format!(
                        "managed attribute of '{}' doesn't match: managed in '{m}' but not in '{u}' (first specified in '{}')",
                        sym.name, first_file.name
                    ),
                ));
            }
            // Sizes of variables (not commons) must agree with the first
            // mention's, or, when that was unsized, with the first
            // definition's (weak or strong; sized externs before it are not
            // checked): measured, fixture `extern_unsized_then_defs`,
            // difftest 70048. nvlink names the first mention's file.
            // Once an initialized definition has replaced the merged
            // commons, it is the size every later mention must have (nvlink:
            // "first specified in" the definition's input; difftest 1200303).
            let is_common = sym.shndx == SHN_COMMON;
            let at = |r: SymRef| (r, &files[r.file.0 as usize].cubin.symbols[r.index as usize]);
            let sized = if first.size != 0 {
                Some(at(g.first_mention))
            } else {
                g.first_def.map(at)
            }
            .map(|(r, s)| match g.def {
                Some(d) if s.shndx == SHN_COMMON && g.common.is_none() => at(d),
                _ => (r, s),
            });
            if let Some((sized_at, sized_sym)) = sized.filter(|&(at, s)| {
                is_variable(sym)
                    && !is_common
                    && s.shndx != SHN_COMMON
                    && here != at
                    && s.size != 0
                    && sym.size != 0
                    && sym.size != s.size
            }) {
                let sized_file = files[sized_at.file.0 as usize].name;
                let from = if sized_at == g.first_mention {
                    String::new()
                } else {
                    format!(" (first mentioned in '{}')", first_file.name)
                };
                diags.error(symbol_error(
                    sym.name,
                    format!(
                        "size of '{}' is {:#x} in '{}' but {:#x} in '{}', where it was first specified{from}",
                        sym.name, sym.size, f.name, sized_sym.size, sized_file
                    ),
                ));
                // A second strong definition is also a multiple definition
                // (nvlink reports both, size first; difftest 30109).
                if kind_clash || !(g.def_strong && !sym.is_undefined() && !weak) {
                    continue;
                }
            }
            if kind_clash {
                continue;
            }
            // A sized extern declaration must match merged commons, and a
            // common a sized extern declaration seen first (measured;
            // fixture common_extern_size).
            if is_variable(sym) && sym.size != 0 && (!weak || sym.is_undefined()) {
                if let Some(c) = g.common.as_ref() {
                    if sym.is_undefined() && c.size != sym.size {
                        let dn = files[c.sized_by.0 as usize].name;
                        diags.error(size_error(sym.name, sym.size, f.name, c.size, dn));
                        continue;
                    }
                }
                if is_common
                    && g.def.is_none()
                    && first.is_undefined()
                    && first.shndx != SHN_COMMON
                    && first.size != 0
                    && first.size != sym.size
                {
                    diags.error(size_error(
                        sym.name,
                        sym.size,
                        f.name,
                        first.size,
                        first_file.name,
                    ));
                    continue;
                }
            }
            if sym.is_undefined() {
                continue;
            }
            g.first_def.get_or_insert(here);
            if is_common {
                match (g.def, g.common.as_mut()) {
                    (None, _) => {
                        g.def = Some(here);
                        g.def_strong = false;
                        g.common = Some(Common {
                            size: sym.size,
                            align: sym.value.max(1),
                            sized_by: f.id,
                            weak: false,
                        });
                    }
                    (Some(prev), Some(c)) if g.def_strong => {
                        // A strong uninitialized definition merged into the
                        // commons, then another common: as a common after a
                        // strong definition (measured), after a size
                        // mismatch when the sizes differ (difftest 90046).
                        if sym.size != c.size {
                            let by = files[c.sized_by.0 as usize].name;
                            diags.error(size_error(sym.name, sym.size, f.name, c.size, by));
                        }
                        diags.error(multiple_common(sym.name, files, prev, f.name));
                    }
                    (Some(_), Some(c)) => {
                        if sym.size > c.size {
                            c.size = sym.size;
                            c.sized_by = f.id;
                        }
                    }
                    (Some(prev), None) => {
                        // A real definition already won; nvlink still checks
                        // the common against it (measured, fixture
                        // common_vs_definition).
                        let prev_file = &files[prev.file.0 as usize];
                        let p = &prev_file.cubin.symbols[prev.index as usize];
                        if is_initialized(prev_file, p) {
                            if sym.size > p.size {
                                diags.error(common_too_large(sym.name, f.name));
                            }
                        } else {
                            if sym.size != p.size {
                                diags.error(size_error(
                                    sym.name,
                                    sym.size,
                                    f.name,
                                    p.size,
                                    prev_file.name,
                                ));
                            }
                            if g.def_strong {
                                // A strong uninitialized definition, then a common.
                                diags.error(multiple_common(sym.name, files, prev, f.name));
                            } else if sym.size == p.size {
                                // A weak uninitialized definition, then a
                                // common: the variable becomes the common
                                // (placed with the commons, at the common's
                                // alignment) and keeps the weak binding; the
                                // weak definition keeps its place in its
                                // input's bss (measured at sm_80, fixture
                                // `common_bss_merge`).
                                replaced.insert(prev);
                                g.def = Some(here);
                                g.common = Some(Common {
                                    size: sym.size,
                                    align: sym.value.max(1),
                                    sized_by: f.id,
                                    weak: true,
                                });
                            }
                        }
                    }
                }
                continue;
            }
            if let (Some(c), true) = (g.common.as_ref(), is_variable(sym)) {
                // A real definition after commons: it must not be smaller than
                // the merged commons when initialized, else of their size.
                let first_common = g.def.map(|d| files[d.file.0 as usize].name).unwrap_or("");
                if is_initialized(f, sym) {
                    if c.size > sym.size {
                        diags.error(common_too_large(sym.name, first_common));
                    }
                } else if c.size != sym.size {
                    diags.error(size_error(sym.name, sym.size, f.name, c.size, first_common));
                }
            }
            match g.def {
                None => {
                    g.def = Some(here);
                    g.def_strong = !weak;
                }
                Some(prev) if g.common.is_some() && is_initialized(f, sym) => {
                    // An initialized definition beats the merged commons.
                    replaced.insert(prev);
                    g.def = Some(here);
                    g.def_strong = !weak;
                    g.common = None;
                }
                Some(prev) if g.common.is_some() => {
                    // An uninitialized definition merges into the commons:
                    // the variable stays where the commons are placed. A
                    // weak one loses as it is read (its bss may take no
                    // space); a strong one makes the variable strong and
                    // keeps its place in its input's bss (measured at sm_80,
                    // fixture `common_bss_merge`).
                    if !weak {
                        if g.def_strong {
                            let prev_file = &files[prev.file.0 as usize];
                            diags.error(symbol_error(
                                sym.name,
                                format!(
                                    "multiple definition of '{}': defined in '{}' and in '{}'",
                                    sym.name, prev_file.name, f.name
                                ),
                            ));
                        } else {
                            replaced.insert(here);
                            g.def_strong = true;
                            if let Some(c) = g.common.as_mut() {
                                c.weak = false;
                            }
                        }
                    }
                }
                Some(prev) => {
                    let prev_file = &files[prev.file.0 as usize];
                    if !weak && g.def_strong {
                        diags.error(symbol_error(
                            sym.name,
                            format!(
                                "multiple definition of '{}': defined in '{}' and in '{}'",
                                sym.name, prev_file.name, f.name
                            ),
                        ));
                    } else if weak
                        && !g.def_strong
                        && sym.other & crate::elf::STO_CUDA_ENTRY != 0
                        && !f.cubin.header.arch().is_blackwell_or_later()
                        && param_bank_size(f, sym)
                            != param_bank_size(prev_file, prev_sym(prev_file, prev))
                    {
                        // Two weak kernels must have parameter banks of one
                        // size before Blackwell (weak vs strong may differ;
                        // sm_100+ accept it; fixture weak_entry_bank_size).
                        diags.error(symbol_error(
                            sym.name,
                            format!(
                                "duplicate weak parameter bank for '{}' is not the same size ('{}' and '{}')",
                                sym.name, prev_file.name, f.name
                            ),
                        ));
                    } else if !weak {
                        // Strong replaces an earlier weak definition.
                        replaced.insert(prev);
                        g.def = Some(here);
                        g.def_strong = true;
                    } else if !g.def_strong
                        && sym.ty() == STT_FUNC
                        && register_count(f, i as u32) < register_count(prev_file, prev.index)
                    {
                        // Of two weak functions, the one with fewer registers.
                        replaced.insert(prev);
                        g.def = Some(here);
                    } else if weak && !g.def_strong {
                        // The earlier weak definition stays.
                        lost_to_weak.insert(here);
                    }
                    // Otherwise the earlier strong definition stays.
                }
            }
        }
        global_of.push(map);
        // nvlink merges one input at a time and gives up after the first
        // input with symbol errors ("merge_elf failed"): later inputs' errors
        // are not reported (found by difftest).
        if diags.has_errors() {
            break;
        }
    }
    diags.checkpoint()?;
    for g in globals.values_mut() {
        g.alias_of = g.def.and_then(|d| {
            let index = files[d.file.0 as usize].alias_target(d.index)?;
            Some(SymRef {
                file: d.file,
                index,
            })
        });
    }
    let replaced_with_relocs = replaced
        .iter()
        .filter(|r| super::nvinfo::code_has_relocations(&files[r.file.0 as usize], r.index))
        .filter_map(|r| global_of[r.file.0 as usize][r.index as usize])
        .collect();
    Ok(SymbolDb {
        globals,
        global_of,
        replaced,
        lost_to_weak,
        replaced_with_relocs,
    })
}
