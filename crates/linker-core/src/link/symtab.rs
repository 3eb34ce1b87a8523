//! Phase 6: the output symbol table.
//!
//! Order: the null symbol, section symbols and local symbols (in section
//! order, then input order; in `-r` each input's locals with the weak
//! definitions it mentions first, in its symbol order, as nvlink -r writes
//! them, so that a relink sorts line tables as the direct link does), then
//! the other globals in first-mention order (`sh_info` of
//! `.symtab` is the first of those; `-r` of Blackwell objects puts the
//! parameter banks' section symbols after the globals, `sh_info` one past
//! them, as nvlink -r does). What changes on the way, as nvlink
//! does it: CUDA's variable type 13 becomes `STT_OBJECT` and variables' `st_other`
//! becomes 0; shared-memory symbols, extern shared declarations, the unified
//! table helpers (`__UFT*`, `__UDT*`) and nameless locals are dropped;
//! `.nv.reservedSmem.*` and `.nv.independent.samplerrefDescSize` (driver
//! variables) become `STB_GLOBAL`; a weak symbol with no strong
//! definition stays weak; values are rebased into merged sections. The
//! result also maps every input symbol to its output index.

use super::live::Live;
use super::relocate::{stays_undefined, SymTarget, UNIFIED_TABLE_SYMBOLS};
use super::sections::{Body, Plan, Role};
use super::symbols::{GlobalSym, SymRef, SymbolDb};
use super::{GlobalId, InputFile, OutSecId};
use crate::elf::*;
use crate::fxhash::{HashMap, HashSet};
use rayon::prelude::*;
use std::borrow::Cow;

/// One output symbol before serialization.
#[derive(Debug, Clone)]
struct OutSym<'a> {
    /// Borrowed from the inputs for locals and globals (no allocation per symbol).
    name: Cow<'a, str>,
    info: u8,
    other: u8,
    section: Option<OutSecId>,
    shndx_raw: u16,
    value: u64,
    size: u64,
}

impl OutSym<'_> {
    /// The section symbol of output section `id` (its name is written from
    /// the section's own at serialization: no copy).
    fn section(id: OutSecId) -> Self {
        OutSym {
            name: Cow::Borrowed(""),
            info: STT_SECTION,
            other: 0,
            section: Some(id),
            shndx_raw: 0,
            value: 0,
            size: 0,
        }
    }
}

/// The output symbol table and the input → output index maps.
pub(crate) struct SymTable<'a> {
    /// Per file, per input symbol: its output index as a local (0: none).
    local_map: Vec<Vec<u32>>,
    /// The symbol database's map (borrowed, not cloned).
    global_of: &'a [Vec<Option<GlobalId>>],
    global_map: Vec<u32>,
    section_syms: Vec<u32>,
    /// Output index of each live function's symbol (by live function index).
    pub func_index: Vec<u32>,
    /// Index of the first symbol after the locals (and, in `-r`, the weak
    /// definitions written among them): where the other globals begin.
    pub first_global: u32,
    /// Prototype signature strings: (file, input `.strtab` offset) → output offset.
    sig_map: HashMap<(u32, u32), u32>,
}

impl SymTable<'_> {
    /// Output index of an input symbol (0 when it was dropped).
    pub(crate) fn output_index(&self, r: SymRef) -> u32 {
        match self.global_of[r.file.0 as usize][r.index as usize] {
            Some(g) => self.global_map[g.0 as usize],
            None => self.local_map[r.file.0 as usize]
                .get(r.index as usize)
                .copied()
                .unwrap_or(0),
        }
    }
    /// Output `.strtab` offset of a prototype signature string of an input.
    pub(crate) fn signature(&self, file: super::FileId, input_offset: u32) -> Option<u32> {
        self.sig_map.get(&(file.0, input_offset)).copied()
    }
    /// Output index of an output section's section symbol (0 if it has none).
    pub(crate) fn section_symbol(&self, s: OutSecId) -> u32 {
        self.section_syms[s.0 as usize]
    }
}

fn is_variable(ty: u8) -> bool {
    ty == STT_CUDA_OBJECT || ty == STT_OBJECT
}

/// `st_other` in the output: variables lose their memory-space bits
/// (global/shared/constant) but keep the rest (`__managed__` keeps 0x04).
fn out_other(ty: u8, other: u8) -> u8 {
    if is_variable(ty) {
        other & !(STO_CUDA_GLOBAL | STO_CUDA_SHARED | STO_CUDA_CONSTANT)
    } else {
        other
    }
}

/// The first section index nvlink writes through `SHN_XINDEX` in `.symtab`
/// (measured at sm_90 and sm_100 with 80,018 and 144,025 sections: 0xff00 and
/// up, except 0xfff2; see [`encode_shndx`]).
pub(crate) const FIRST_XINDEX: u32 = SHN_LORESERVE as u32;

/// `-r`: the `.common` variables that stay common, reordered among their own
/// places in the symbol table by their first `.common` declaration (input,
/// then symbol index). The final link allocates commons in the reverse of
/// that order (`sections.rs`), so the relinked object places them as a
/// direct link of the inputs would; the table lists globals by first
/// mention, which an earlier `extern` can bring forward.
fn keep_common_order(db: &SymbolDb<'_>, syms: &mut [OutSym<'_>], global_map: &mut [u32]) {
    let mut commons: Vec<(usize, (u32, u32))> = db
        .globals
        .values()
        .enumerate()
        .filter(|(gi, g)| g.common.is_some() && global_map[*gi] != 0)
        .map(|(gi, g)| (gi, g.def.map_or((0, 0), |d| (d.file.0, d.index))))
        .collect();
    let mut places: Vec<u32> = commons.iter().map(|&(gi, _)| global_map[gi]).collect();
    places.sort_unstable();
    commons.sort_by_key(|c| c.1);
    let mut moved: Vec<(u32, OutSym<'_>)> = Vec::with_capacity(commons.len());
    for (&(gi, _), &place) in commons.iter().zip(&places) {
        let from = global_map[gi] as usize;
        moved.push((
            place,
            std::mem::replace(&mut syms[from], OutSym::section(OutSecId(0))),
        ));
        global_map[gi] = place;
    }
    for (place, sym) in moved {
        syms[place as usize] = sym;
    }
}

/// `st_shndx` and the `SHT_SYMTAB_SHNDX` entry for a symbol in section
/// `index`: indices from `first` on go through `SHN_XINDEX`, except 0xfff2,
/// which nvlink 13.0.88 writes raw (the value of `SHN_COMMON`: it checks the
/// 16-bit value it would write against the special indices), so culink does
/// too. Other symbols get table entry 0.
pub(crate) fn encode_shndx(index: u32, first: u32) -> (u16, u32) {
    if index >= first && index != u32::from(SHN_COMMON) {
        (SHN_XINDEX, index)
    } else {
        (index as u16, 0)
    }
}

/// One input's locals (with, in `-r`, the globals written among them): the
/// symbols, each input symbol's position among them, and the globals'
/// (position, id).
type FileLocals<'a> = (Vec<OutSym<'a>>, Vec<u32>, Vec<(u32, GlobalId)>);

/// Marks an input symbol that is not a kept local while locals are collected.
const NO_LOCAL: u32 = u32::MAX;

/// Builds `.symtab` and `.strtab` (after fixing the section order).
pub(crate) fn build<'a>(
    files: &'a [InputFile<'_>],
    db: &'a SymbolDb<'_>,
    live: &Live,
    plan: &mut Plan,
) -> SymTable<'a> {
    let _span = tracing::info_span!("symtab").entered();
    // `-r` (rmode.rs): CUDA types, memory-space bits, shared-memory and
    // undefined symbols all stay as the inputs have them.
    let rel = plan.relocatable;
    let ty_of = |ty: u8| {
        if ty == STT_CUDA_OBJECT && !rel {
            STT_OBJECT
        } else {
            ty
        }
    };
    let other_of = |ty: u8, other: u8| if rel { other } else { out_other(ty, other) };
    // Past SHN_LORESERVE sections, symbols name their section through
    // SHN_XINDEX and a `.symtab_shndx` table (as nvlink does for big links);
    // Blackwell images get `.nv.merc.symtab_shndx` for the Mercury table too.
    let merc_symtab = plan
        .sections
        .iter()
        .position(|s| s.sh_type == SHT_CUDA_MERC_SYMTAB);
    let extended =
        plan.sections.len() + 1 + usize::from(merc_symtab.is_some()) >= usize::from(SHN_LORESERVE);
    if extended {
        let mut o =
            super::sections::OutSection::new(".symtab_shndx", SHT_SYMTAB_SHNDX, Role::SymTabShndx);
        o.align = 4;
        o.entsize = 4;
        plan.add(o);
        if let Some(m) = merc_symtab {
            plan.add(super::mercury::symtab_shndx_section(OutSecId(m as u32)));
        }
    }
    plan.finalize_order();
    let mut syms: Vec<OutSym<'a>> = vec![OutSym {
        name: Cow::Borrowed(""),
        info: 0,
        other: 0,
        section: None,
        shndx_raw: 0,
        value: plan.null_value,
        size: 0,
    }];
    let mut section_syms = vec![0u32; plan.sections.len()];
    // `-r` of Blackwell objects: the parameter banks' section symbols, which
    // have no Mercury twin, go last (after the globals), as nvlink -r puts
    // them, so that `.nv.merc.symtab` stays index-aligned with `.symtab` (the
    // form ptxas writes and the final link reads; mercury.rs).
    let banks_last = rel && merc_symtab.is_some();
    let mut banks: Vec<OutSecId> = Vec::new();
    for &id in &plan.order {
        let s = plan.sec(id);
        if s.section_symbol && banks_last && s.role == Role::Const0 {
            banks.push(id);
        } else if s.section_symbol {
            section_syms[id.0 as usize] = syms.len() as u32;
            syms.push(OutSym::section(id));
        }
    }
    // Locals: each file's in parallel, concatenated in file order.
    // `--preserve-relocs` and `-g`: where module-scope shared variables'
    // symbols go (`preserve::SharedHomes`).
    let preserve_shared = super::preserve::SharedHomes::new(plan, rel);
    // Undefined names that kept relocations still reference.
    let mut referenced_undef: HashSet<GlobalId> = HashSet::default();
    for k in plan.kept.iter() {
        if let SymTarget::Input(r) = k.sym {
            if let Some(g) = db.global_of[r.file.0 as usize][r.index as usize] {
                if db.global(g).1.def.is_none() {
                    referenced_undef.insert(g);
                }
            }
        }
    }
    // The output symbol of global `gi` (`None`: not written).
    let global_out = |gi: usize, name: &&'a str, g: &GlobalSym| -> Option<OutSym<'a>> {
        let gid = GlobalId(gi as u32);
        match g.def {
            Some(def) => {
                let f = &files[def.file.0 as usize];
                let sym = &f.cubin.symbols[def.index as usize];
                let common = plan.common.get(&gid).copied().zip(g.common);
                let (section, value, shndx_raw) = match sym.section() {
                    _ if common.is_some() => {
                        let (p, _) = common.expect("checked");
                        (Some(p.out), p.offset, 0)
                    }
                    // `-r`: a merged `.common` stays one (`st_value` its
                    // alignment, as ptxas writes it; sections.rs).
                    _ if rel && g.common.is_some() => {
                        (None, g.common.map_or(0, |c| c.align), SHN_COMMON)
                    }
                    Some(sec) => {
                        let dsec = &f.cubin.sections[sec as usize];
                        let shared = dsec.sh_type == SHT_CUDA_SHARED;
                        // `-g`: a module-scope variable keeps its symbol
                        // where its window (or the module-scope region in
                        // `.nv_debug.shared`) holds it (`preserve::SharedHomes`).
                        let debug_home = (shared && plan.device_debug && plan.resolved.is_none())
                            .then(|| preserve_shared.module_symbol(plan, f, sec, def))
                            .flatten();
                        if let Some((section, value)) = debug_home {
                            (Some(section), value, 0)
                        } else if shared && !rel {
                            return None;
                        } else {
                            // Reserved shared memory: `st_value` is the alignment
                            // (sections.rs `place_reserved_shared`).
                            let reserved = dsec.sh_type == SHT_CUDA_SHARED_RESERVED && !rel;
                            match plan.placement[def.file.0 as usize][sec as usize] {
                                Some(p) if shared => (Some(p.out), sym.value, 0),
                                Some(p) if reserved => (Some(p.out), p.offset, 0),
                                Some(p) => (Some(p.out), p.offset + sym.value, 0),
                                None => return None, // dead function
                            }
                        }
                    }
                    None => (None, sym.value, sym.shndx),
                };
                let bind = if g.def_strong || g.common.is_some_and(|c| !c.weak) {
                    STB_GLOBAL
                } else {
                    STB_WEAK
                };
                Some(OutSym {
                    name: Cow::Borrowed(*name),
                    info: (bind << 4) | ty_of(sym.ty()),
                    other: other_of(sym.ty(), sym.other),
                    section,
                    shndx_raw,
                    value,
                    size: common
                        .map(|(_, c)| c.size)
                        .or(g.common.filter(|_| rel).map(|c| c.size))
                        .unwrap_or(sym.size),
                })
            }
            None => {
                let m = g.first_mention;
                let sym = &files[m.file.0 as usize].cubin.symbols[m.index as usize];
                let unified = UNIFIED_TABLE_SYMBOLS.contains(name);
                // `-g`: an `extern __shared__` array stays, as an object at
                // the dynamic window's base in `.nv_debug.shared`
                // (`shared::debug_dynamic_base`; fixtures `cu_debug_shared_g`,
                // `cu_debug_shared_static`); on sm_100+ plus the 0x400
                // reserve (0xa0 at sm_90 is 0x4a0 at sm_100; the Mercury
                // twin keeps 0xa0, `mercury.rs`).
                if !rel && plan.device_debug && sym.other & STO_CUDA_SHARED != 0 {
                    // (At sm_90 too when `.nv_debug.shared` holds the
                    // module-scope region: measured, fixture
                    // `cu_debug_fn_static_shared`, 0x400 → 0x800.)
                    let reserve = if plan.arch.is_blackwell_or_later()
                        || (plan.arch.is_sm90_or_later() && !plan.shared.region.is_empty())
                    {
                        super::shared::SM90_SHARED_RESERVE
                    } else {
                        0
                    };
                    let base =
                        super::shared::debug_dynamic_base(plan, Some(gid)).map(|b| b + reserve);
                    let sec = plan
                        .sections
                        .iter()
                        .position(|s| s.name == ".nv_debug.shared" && s.role == Role::NoBits);
                    if let (Some(value), Some(i)) = (base, sec) {
                        return Some(OutSym {
                            name: Cow::Borrowed(*name),
                            info: (STB_GLOBAL << 4) | STT_OBJECT,
                            other: 0,
                            section: Some(OutSecId(i as u32)),
                            shndx_raw: 0,
                            value,
                            size: 0,
                        });
                    }
                }
                if let Some(value) = preserve_shared
                    .dynamic_value(plan)
                    .filter(|_| sym.other & STO_CUDA_SHARED != 0)
                {
                    return Some(OutSym {
                        name: Cow::Borrowed(*name),
                        info: (STB_GLOBAL << 4) | STT_OBJECT,
                        other: 1,
                        section: preserve_shared.debug_shared,
                        shndx_raw: 0,
                        value,
                        size: 0,
                    });
                }
                if !rel && (unified || sym.other & STO_CUDA_SHARED != 0) {
                    return None;
                }
                let reserved = super::relocate::is_driver_variable(name);
                // Texture/sampler/surface handles stay even when unreferenced
                // (nvlink: every handle gets a slot, see texslots.rs).
                let handle = super::relocate::is_texture_kind(sym.ty());
                if !rel && !reserved && !handle && !referenced_undef.contains(&gid) {
                    return None;
                }
                // nvlink -r turns the weak `__UFT*`/`__UDT*` helpers GLOBAL.
                let bind = if reserved || unified || stays_undefined(name) || !g.all_weak {
                    STB_GLOBAL
                } else {
                    STB_WEAK
                };
                // Blackwell images keep the reserved-shared-memory symbols as
                // ptxas wrote them (value = the reservation), typed as CUDA
                // variables (ptxas writes STT_OBJECT for them).
                // nvlink -r types the unified-table helpers likewise on Blackwell.
                let keep = reserved && plan.arch.is_blackwell_or_later();
                let ty = if keep || (rel && unified && plan.arch.is_blackwell_or_later()) {
                    STT_CUDA_OBJECT
                } else {
                    ty_of(sym.ty())
                };
                Some(OutSym {
                    name: Cow::Borrowed(*name),
                    info: (bind << 4) | ty,
                    other: if rel { sym.other } else { 0 },
                    section: None,
                    shndx_raw: SHN_UNDEF,
                    value: if keep { sym.value } else { 0 },
                    size: sym.size,
                })
            }
        }
    };
    // Blackwell `-r` and `--preserve-relocs` links rename ptxas' jump-table
    // symbols (below); other links need not even look at them.
    let renames_tables = (rel || plan.resolved.is_some()) && plan.arch.is_blackwell_or_later();
    let locals_of = |f: &'a InputFile<'_>| -> FileLocals<'a> {
        let plan: &Plan = plan;
        let fid = f.id.0 as usize;
        let mut out = Vec::new();
        // Position in `out` of each input symbol, NO_LOCAL when not kept.
        let mut map = vec![NO_LOCAL; f.cubin.symbols.len()];
        // Jump-table symbols renamed by a Blackwell `-r` so far (see below).
        let mut jump_tables = 0u32;
        // Globals written among these locals (`-r`): (position in `out`, id).
        let mut early = Vec::new();
        for (i, sym) in f.cubin.symbols.iter().enumerate() {
            let here = SymRef {
                file: f.id,
                index: i as u32,
            };
            if rel && i != 0 {
                if let Some(g) = db.weak_first_definition(f, here) {
                    let (name, gs) = db.global(g);
                    if let Some(s) = global_out(g.0 as usize, &name, gs) {
                        early.push((out.len() as u32, g));
                        out.push(s);
                    }
                    continue;
                }
            }
            if i == 0 || sym.bind() != STB_LOCAL || sym.ty() == STT_SECTION || sym.ty() == STT_FILE
            {
                continue;
            }
            // Jump-table symbols get numbers in symbol order, those dropped
            // below included (renamed ones: see below; measured, difftest
            // seeds 240000, 240011: a device function's table before the
            // kernel's, `.nv.constant.optimizer.<k>.2`).
            let in_table = renames_tables
                && sym.name.contains(".const_opt.")
                && sym.section().is_some_and(|sec| {
                    f.cubin.sections[sec as usize].sh_type == SHT_CUDA_CONSTANT2
                });
            if in_table {
                jump_tables += 1;
            }
            // `--preserve-relocs` keeps the shared variables its entries name.
            let preserved = super::preserve::shared_value(plan, here);
            // `-g`: a kernel's own shared variables keep their symbol, valued
            // at their window offset (as nvlink writes them for debuggers).
            // (`--preserve-relocs` keeps them too, used or not: nvlink.)
            let debug_shared =
                if (plan.device_debug || plan.resolved.is_some()) && preserved.is_none() {
                    super::shared::debug_shared_value(plan, live, f, sym.section(), here)
                } else {
                    None
                };
            let module_home = sym
                .section()
                .and_then(|sec| preserve_shared.module_symbol(plan, f, sec, here));
            let kept_shared =
                preserved.is_some() || debug_shared.is_some() || module_home.is_some();
            if sym.name.is_empty() || (sym.other & STO_CUDA_SHARED != 0 && !rel && !kept_shared) {
                continue;
            }
            let Some(sec) = sym.section() else { continue };
            if let Some((section, value)) = module_home {
                map[i] = out.len() as u32;
                out.push(OutSym {
                    name: Cow::Borrowed(sym.name),
                    info: (sym.bind() << 4) | ty_of(sym.ty()),
                    // (`--preserve-relocs` marks them; `-g` does not.)
                    other: if plan.resolved.is_some() {
                        1
                    } else {
                        other_of(sym.ty(), sym.other)
                    },
                    section: Some(section),
                    shndx_raw: 0,
                    value,
                    size: sym.size,
                });
                continue;
            }
            let dsec = &f.cubin.sections[sec as usize];
            if (dsec.sh_type == SHT_CUDA_SHARED && !rel && !kept_shared)
                // Variables in a function's own constant bank (the parameter
                // bank; ptxas' `<k>.const_opt.*` in `.nv.constant2.<k>` on
                // sm_75–89) are dropped, as nvlink does.
                || ((SHT_CUDA_CONSTANT0..=SHT_CUDA_CONSTANT17).contains(&dsec.sh_type)
                    && f.owner.get(sec as usize).copied().flatten().is_some()
                    && is_variable(sym.ty())
                    && !rel
                    && (plan.resolved.is_none()
                        || super::relocate::device_function_table(f, dsec)))
            {
                continue;
            }
            // `-r`: the table of a copy a later definition replaced keeps its
            // symbols, in the winner's table (nvlink -r: two `f.const_opt.*`
            // there; fixture `bank2_replaced_slot_r`).
            let replaced_home = (rel && dsec.sh_type == SHT_CUDA_CONSTANT2)
                .then(|| plan.replaced_by.get(&(f.id, sec)))
                .flatten()
                .map(|&out| super::sections::Placement { out, offset: 0 });
            let Some(p) = plan.placement[fid][sec as usize]
                .or(replaced_home)
                .or_else(|| {
                    rel.then(|| loser_param_home(files, db, plan, f, sec))
                        .flatten()
                })
            else {
                continue;
            };
            // `-r`: the table of a weak copy that lost when read, kept as the
            // winner's (`sections::relocatable_loser_table_owner`), loses its
            // symbols (nvlink -r drops them; nothing refers to them).
            if rel
                && replaced_home.is_none()
                && dsec.sh_type == SHT_CUDA_CONSTANT2
                && f.owner[sec as usize].is_some_and(|t| plan.placement[fid][t as usize].is_none())
            {
                continue;
            }
            // Relocatable shared symbols hold their alignment in st_value.
            let value = if dsec.sh_type == SHT_CUDA_SHARED {
                sym.value
            } else if dsec.sh_type == SHT_CUDA_SHARED_RESERVED && !rel {
                p.offset
            } else {
                p.offset + sym.value
            };
            // nvlink writes them with their window offset and st_other 1.
            let (value, other) = match (preserved, debug_shared) {
                (Some(v), _) => (v, 1),
                (None, Some(v)) if plan.resolved.is_some() => (v, 1),
                (None, Some(v)) => (v, other_of(sym.ty(), sym.other)),
                (None, None) => (value, other_of(sym.ty(), sym.other)),
            };
            map[i] = out.len() as u32;
            // nvlink -r of Blackwell objects renames ptxas' jump-table
            // symbols `<fn>.const_opt.<from>.<to>` (bank 2) to
            // `.nv.constant.optimizer.<fn>.<n>`, `n` counting them per input
            // in symbol order (measured, fixture `cu_jump_tables_r`; its
            // sm_80/90 `-r` keeps the names).
            let name = match sym.name.split_once(".const_opt.") {
                // (So does a Blackwell `--preserve-relocs` link: measured,
                // difftest seed 240003.)
                Some((func, _)) if renames_tables && dsec.sh_type == SHT_CUDA_CONSTANT2 => {
                    Cow::Owned(format!(".nv.constant.optimizer.{func}.{jump_tables}"))
                }
                _ => Cow::Borrowed(sym.name),
            };
            out.push(OutSym {
                name,
                info: (STB_LOCAL << 4) | ty_of(sym.ty()),
                other,
                section: Some(p.out),
                shndx_raw: 0,
                value,
                size: sym.size,
            });
        }
        (out, map, early)
    };
    let per_file: Vec<_> = files.par_iter().with_min_len(64).map(locals_of).collect();
    let mut local_map: Vec<Vec<u32>> = Vec::with_capacity(files.len());
    let mut global_map = vec![0u32; db.globals.len()];
    let mut placed_early = vec![false; if rel { db.globals.len() } else { 0 }];
    for (locals, mut map, early) in per_file {
        let base = syms.len() as u32;
        for m in map.iter_mut() {
            *m = if *m == NO_LOCAL { 0 } else { base + *m };
        }
        for (at, g) in early {
            global_map[g.0 as usize] = base + at;
            placed_early[g.0 as usize] = true;
        }
        syms.extend(locals);
        local_map.push(map);
    }
    let first_global = syms.len() as u32;
    for (gi, (name, g)) in db.globals.iter().enumerate() {
        if placed_early.get(gi).copied().unwrap_or(false) {
            continue;
        }
        if let Some(sym) = global_out(gi, name, g) {
            global_map[gi] = syms.len() as u32;
            syms.push(sym);
        }
    }
    if rel {
        keep_common_order(db, &mut syms, &mut global_map);
    }
    // One past the last local (`sh_info`): after the banks when they go last.
    let mut locals_end = first_global;
    for id in banks {
        section_syms[id.0 as usize] = syms.len() as u32;
        syms.push(OutSym::section(id));
        locals_end = syms.len() as u32;
    }
    let mut table = SymTable {
        local_map,
        global_of: &db.global_of,
        global_map,
        section_syms,
        func_index: Vec::new(),
        first_global,
        sig_map: HashMap::default(),
    };
    table.func_index = live
        .funcs
        .iter()
        .map(|f| {
            table.output_index(SymRef {
                file: f.key.file,
                index: f.sym,
            })
        })
        .collect();
    // Serialize .strtab and .symtab.
    let mut strtab: Vec<u8> = Vec::with_capacity(syms.len() * 24);
    strtab.push(0);
    let mut offsets: HashMap<&str, u32> = HashMap::default();
    offsets.reserve(syms.len());
    let mut symtab = Vec::with_capacity(syms.len() * 24);
    let mut shndx_table: Vec<u8> = Vec::new();
    for s in &syms {
        let name: &str = match s.section {
            Some(id) if s.info == STT_SECTION => plan.sec(id).name.as_str(),
            _ => s.name.as_ref(),
        };
        let name_off = if name.is_empty() {
            0
        } else {
            *offsets.entry(name).or_insert_with(|| {
                let o = strtab.len() as u32;
                strtab.extend_from_slice(name.as_bytes());
                strtab.push(0);
                o
            })
        };
        let (shndx, ext) = match s.section {
            Some(id) => encode_shndx(plan.index(id), FIRST_XINDEX),
            None => (s.shndx_raw, 0),
        };
        if extended {
            shndx_table.extend_from_slice(&ext.to_le_bytes());
        }
        symtab.extend_from_slice(&name_off.to_le_bytes());
        symtab.push(s.info);
        symtab.push(s.other);
        symtab.extend_from_slice(&shndx.to_le_bytes());
        symtab.extend_from_slice(&s.value.to_le_bytes());
        symtab.extend_from_slice(&s.size.to_le_bytes());
    }
    // Prototype signature strings (`#ii`, ...) referenced from .nv.prototype
    // and the call graph's address-taken / indirect-call lists.
    for f in files {
        let Some(st) = f.cubin.symtab else { continue };
        let strdata = f.cubin.sections[f.cubin.sections[st as usize].link as usize].data;
        let mut wanted: Vec<u32> = Vec::new();
        for sec in &f.cubin.sections {
            if sec.sh_type == SHT_CUDA_PROTOTYPE {
                if let Ok(entries) = crate::cubin::callgraph::parse_prototypes(sec.data) {
                    wanted.extend(entries.iter().map(|e| e.signature));
                }
            } else if sec.sh_type == SHT_CUDA_CALLGRAPH {
                if let Ok(g) = crate::cubin::callgraph::CallGraph::parse(sec.data) {
                    wanted.extend(g.address_taken.iter().map(|e| e.1));
                    wanted.extend(g.indirect_calls.iter().map(|e| e.1));
                }
            }
        }
        for off in wanted {
            let Some(rest) = strdata.get(off as usize..) else {
                continue;
            };
            let Some(end) = rest.iter().position(|&b| b == 0) else {
                continue;
            };
            let Ok(text) = std::str::from_utf8(&rest[..end]) else {
                continue;
            };
            if !text.starts_with('#') {
                continue;
            }
            let o = *offsets.entry(text).or_insert_with(|| {
                let o = strtab.len() as u32;
                strtab.extend_from_slice(text.as_bytes());
                strtab.push(0);
                o
            });
            table.sig_map.insert((f.id.0, off), o);
        }
    }
    let strtab_id = plan.find_role(Role::StrTab).expect("plan has .strtab");
    let symtab_id = plan.find_role(Role::SymTab).expect("plan has .symtab");
    {
        let s = plan.sec_mut(strtab_id);
        s.size = strtab.len() as u64;
        // Reserved for the worst case; it lives until the write.
        strtab.shrink_to_fit();
        s.body = Body::Bytes(strtab);
    }
    if let Some(x) = plan.find_role(Role::SymTabShndx) {
        let s = plan.sec_mut(x);
        s.size = shndx_table.len() as u64;
        s.body = Body::Bytes(shndx_table);
        s.link = super::sections::LinkTo::Section(symtab_id);
    }
    {
        let s = plan.sec_mut(symtab_id);
        s.size = symtab.len() as u64;
        s.body = Body::Bytes(symtab);
        s.link = super::sections::LinkTo::Section(strtab_id);
        s.info = super::sections::InfoTo::Raw(locals_end);
    }
    table
}

/// `-r`: where a local symbol of a losing kernel copy's parameter bank
/// (nvcc -G's `_param` in `.nv.constant0.<k>`, sm_75–89) goes: the winner's
/// bank of that name, as nvlink -r keeps it there (measured at sm_75/80,
/// fixture `cu_debug_weak_kernel_r`). `None` for any other section.
fn loser_param_home(
    files: &[InputFile<'_>],
    db: &SymbolDb<'_>,
    plan: &Plan,
    f: &InputFile<'_>,
    sec: u32,
) -> Option<super::sections::Placement> {
    let s = &f.cubin.sections[sec as usize];
    if s.sh_type != SHT_CUDA_CONSTANT0 {
        return None;
    }
    let text = f.owner.get(sec as usize).copied().flatten()?;
    let (w, wtext) = super::sections::winner_text(files, db, f, text)?;
    if w.file == f.id {
        return None;
    }
    let wf = &files[w.file.0 as usize];
    let wsec =
        wf.cubin.sections.iter().find(|b| {
            b.sh_type == s.sh_type && wf.owner.get(b.index as usize) == Some(&Some(wtext))
        })?;
    plan.placement[w.file.0 as usize][wsec.index as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The encodings nvlink 13.0.88 wrote for a 2000-object link at sm_100
    /// (144,025 sections; `.symtab` and `.nv.merc.symtab`, read back raw).
    #[test]
    fn extended_section_indices_as_nvlink_writes_them() {
        let merc = FIRST_XINDEX + 1;
        // .symtab: raw below 0xff00, SHN_XINDEX from 0xff00 on, 0xfff2 raw.
        assert_eq!(encode_shndx(0xfeff, FIRST_XINDEX), (0xfeff, 0));
        assert_eq!(encode_shndx(0xff00, FIRST_XINDEX), (SHN_XINDEX, 0xff00));
        assert_eq!(encode_shndx(0xfff1, FIRST_XINDEX), (SHN_XINDEX, 0xfff1));
        assert_eq!(encode_shndx(0xfff2, FIRST_XINDEX), (0xfff2, 0));
        assert_eq!(encode_shndx(0x23297, FIRST_XINDEX), (SHN_XINDEX, 0x23297));
        // .nv.merc.symtab: 0xff00 raw, 0xff01 and up extended, 0xfff2 raw.
        assert_eq!(encode_shndx(0xff00, merc), (0xff00, 0));
        assert_eq!(encode_shndx(0xff01, merc), (SHN_XINDEX, 0xff01));
        assert_eq!(encode_shndx(0xfff2, merc), (0xfff2, 0));
        assert_eq!(encode_shndx(0xffff, merc), (SHN_XINDEX, 0xffff));
    }
}
