//! Phase 5: decide every input relocation.
//!
//! A relocation is **resolved** by the linker when its value is known at link
//! time: offsets inside a constant bank, a kernel's shared-memory window, a
//! non-allocated section (`.debug_frame`'s CIE pointers), the cleared range of
//! a dead function's FDE. Its patch is recorded for the writer and the entry
//! is dropped. Every other relocation (absolute code or data addresses,
//! function descriptors, header indices: the driver's work) is **kept**: its
//! offset moved into the output section, its symbol renumbered later, its
//! addend rebased when it points through a merged section's section symbol,
//! and its type rewritten where nvlink rewrites it (`R_CUDA_UNIFIED` →
//! `R_CUDA_64`, `R_CUDA_UNIFIED32_LO/HI_32` → `R_CUDA_ABS32_LO/HI_32`).
//! The `SHT_REL`/`SHT_RELA` split of the inputs is preserved.
//!
//! Undefined references are found here, where the referencing function is
//! known and dead code no longer counts. The functions the CUDA driver
//! provides (`vprintf`, `malloc`, device-runtime `cnp*`, ...) stay undefined.

use super::live::Live;
use super::sections::{Body, FilePatches, InfoTo, LinkTo, OutSection, Patch, Plan, Role};
use super::symbols::{SymRef, SymbolDb};
use super::symtab::SymTable;
use super::{Diags, InputFile, OutSecId};
use crate::cubin::occupies_no_file_space;
use crate::elf::*;
use crate::error::{Error, ErrorKind};
use crate::fxhash::{HashMap, HashSet};
use crate::reloc::table::{describe, RelocType, ResolverClass};
use rayon::prelude::*;

/// The symbol a kept relocation refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum SymTarget {
    /// An input symbol (the resolved definition, or an undefined name's first mention).
    Input(SymRef),
    /// The section symbol of an output section.
    Section(OutSecId),
}

/// A relocation kept for the driver.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeptReloc {
    pub target: OutSecId,
    pub rela: bool,
    pub offset: u64,
    pub rtype: u32,
    pub sym: SymTarget,
    pub addend: i64,
}

/// The relocations kept for the driver, in classification order. Stored as
/// chunks (one per input file, split where a texture slot's relocation comes
/// in between) so that the files' lists, built in parallel, are moved in, not
/// copied: one flat list doubled the phase's memory while it was assembled.
#[derive(Debug, Default)]
pub(crate) struct KeptList {
    chunks: Vec<Vec<KeptReloc>>,
}

impl KeptList {
    /// Appends one relocation.
    pub(crate) fn push(&mut self, k: KeptReloc) {
        match self.chunks.last_mut() {
            Some(c) => c.push(k),
            None => self.chunks.push(vec![k]),
        }
    }
    /// Appends a run of relocations (moved, not copied).
    pub(crate) fn append(&mut self, mut run: Vec<KeptReloc>) {
        if !run.is_empty() {
            // Runs grow by doubling; they live until `finish` (-3 MB at N = 2000).
            run.shrink_to_fit();
            self.chunks.push(run);
        }
    }
    /// Every relocation, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &KeptReloc> {
        self.chunks.iter().flatten()
    }
    /// Keeps the relocations `f` returns true for (it may change them).
    pub(crate) fn retain_mut(&mut self, mut f: impl FnMut(&mut KeptReloc) -> bool) {
        for c in &mut self.chunks {
            c.retain_mut(&mut f);
        }
    }
}

/// Functions the CUDA driver provides; references to them stay undefined in
/// the output (the list is a string table inside nvlink 13.0.88).
pub const DRIVER_FUNCTIONS: &[&str] = &[
    "vprintf",
    "malloc",
    "free",
    "vfprintf",
    "__assertfail",
    "__profile",
    "cnpGetParameterBuffer",
    "cnpLaunchDevice",
    "cnpCtxSynchronize",
    "cnpFuncGetAttribute",
    "cnpStreamCreate",
    "cnpStreamDestroy",
    "cnpStreamWaitEvent",
    "cnpEventCreate",
    "cnpEventRecord",
    "cnpEventDestroy",
    "cnpDeviceGetName",
    "cnpDeviceGetAttribute",
    "cnpGetDeviceCount",
    "cnpGetDevice",
    "cnpGetLastError",
    "cnpSetLastError",
    "cnpGetCacheConfig",
    "cnpGetSharedMemConfig",
    "cnpGetLimit",
    "cnpDeviceGetTotalMem",
    "cnpGetParameterBufferV2",
    "cnpLaunchDeviceV2",
    "cudaGraphLaunch",
    "cudaGraphSetConditional",
    "cudaGraphKernelNodeSetParam",
    "cudaGraphKernelNodeSetGridDim",
    "cudaGraphKernelNodeSetEnabled",
    "cudaGraphKernelNodeUpdatesApply",
];

/// Whether an undefined name is provided by the driver at load time.
pub fn is_driver_provided(name: &str) -> bool {
    DRIVER_FUNCTIONS.contains(&name) || name.starts_with("__cuda_syscall")
}

/// The ptxas helper symbols for unified function/data tables, removed from
/// final output (they resolve to 0 when no table is built).
pub const UNIFIED_TABLE_SYMBOLS: &[&str] = &[
    "__UDT_OFFSET",
    "__UFT_OFFSET",
    "__UFT_CANONICAL",
    "__UDT_CANONICAL",
    "__UFT",
    "__UDT",
    "__UFT_END",
    "__UDT_END",
];

/// The undefined local symbol through which ptxas asks for the size of the
/// program's PTX `.const` space (libcudadevrt's `cudaMemcpyAsync`,
/// `cudaMemsetAsync` and their 2D variants load it with an
/// `R_CUDA_ABS32_32`, their capsules with an `R_MERCURY_ABS32`).
pub(crate) const PTX_CONST0_SIZE: &str = ".nv.ptx.const0.size";

/// The value of [`PTX_CONST0_SIZE`] in a link: the size of the output's
/// `.nv.constant3` (the user constants of every input, laid out), 0xffffffff
/// when there is none. Measured with nvlink 13.0.88 at sm_90 and sm_100: 0x190
/// for one 400-byte `__constant__` array, 0x2b for a 3-byte and a 40-byte one,
/// 0x1bb / 0x1bc for both objects in either order (the section's size each
/// time, alignment padding included), 0x1c for an unused one, 0xffffffff for
/// none; nvlink resolves the relocation and drops it.
pub(crate) fn ptx_const0_size(plan: &Plan) -> u64 {
    plan.sections
        .iter()
        .find(|s| s.name == ".nv.constant3")
        .map_or(0xffff_ffff, |s| s.size)
}

/// The size of an independent-mode sampler descriptor, which the driver
/// provides: ptxas declares it (weak, undefined) for `txq` on a sampler.
pub(crate) const SAMPLER_DESC_SIZE: &str = ".nv.independent.samplerrefDescSize";

/// Variables the driver provides: nvlink keeps them in the output's symbol
/// table, `STB_GLOBAL` (typed as CUDA variables on Blackwell), even when no
/// live code refers to them (measured for `SAMPLER_DESC_SIZE` at
/// sm_80/90/100 with the `txq` in a kernel and in dead code; fixture
/// `sampler_desc_size`).
pub(crate) fn is_driver_variable(name: &str) -> bool {
    name.starts_with(".nv.reservedSmem") || name == SAMPLER_DESC_SIZE
}

/// Whether an undefined symbol is one nvlink leaves undefined without complaint.
pub(crate) fn stays_undefined(name: &str) -> bool {
    is_driver_provided(name) || is_driver_variable(name)
}

fn rewritten_type(rtype: u32) -> u32 {
    match RelocType(rtype) {
        RelocType::R_CUDA_UNIFIED => RelocType::R_CUDA_64.0,
        RelocType::R_CUDA_UNIFIED32_LO_32 => RelocType::R_CUDA_ABS32_LO_32.0,
        RelocType::R_CUDA_UNIFIED32_HI_32 => RelocType::R_CUDA_ABS32_HI_32.0,
        _ => rtype,
    }
}

fn is_clear(rtype: u32) -> bool {
    matches!(
        RelocType(rtype),
        RelocType::R_CUDA_UNUSED_CLEAR32 | RelocType::R_CUDA_UNUSED_CLEAR64
    )
}

/// What classifying one file's relocations leaves for the in-order merge:
/// everything that touches link-wide state (the kept list,
/// `--preserve-relocs` records, diagnostics) in the order a sequential pass
/// would have produced it.
enum Item<'d> {
    /// A `--preserve-relocs` entry (see `preserve.rs`).
    Preserve(OutSecId, u64, u32, SymTarget, i64),
    /// A shared variable's window offset for `--preserve-relocs`.
    PreserveShared(SymRef, u64),
    Error(Box<Error>),
    /// An undefined reference: reported once per name, at its first use.
    Undefined(&'d str, Box<Error>),
}

/// One file's classification: runs of kept relocations, each followed by the
/// item (if any) that came after it.
type Segments<'d> = Vec<(Vec<KeptReloc>, Option<Item<'d>>)>;

/// Classifies every relocation of every kept section.
///
/// Each file's relocations are classified in parallel (patches go straight
/// into that file's patch lists); what depends on link-wide state is merged
/// afterwards in file order, so the result equals a sequential pass.
pub(crate) fn classify(
    files: &[InputFile<'_>],
    db: &SymbolDb<'_>,
    live: &Live,
    plan: &mut Plan,
    diags: &mut Diags,
) {
    let _span = tracing::info_span!("relocate").entered();
    plan.tex = super::texslots::TexSlots::collect(files, live, plan);
    let mut patches = std::mem::take(&mut plan.patches);
    let items: Vec<Segments<'_>> = {
        let plan: &Plan = plan;
        files
            .par_iter()
            .zip(patches.par_iter_mut())
            .with_min_len(32)
            .map(|(f, file_patches)| {
                let segments = classify_file(files, db, live, plan, f, file_patches);
                file_patches.shrink();
                segments
            })
            .collect()
    };
    plan.patches = patches;
    let mut undefined_seen: HashSet<&str> = HashSet::default();
    for segments in items {
        for (run, item) in segments {
            plan.kept.append(run);
            let Some(item) = item else { continue };
            match item {
                Item::Preserve(out, at, rtype, to, addend) => {
                    super::preserve::record(plan, out, at, rtype, to, addend)
                }
                Item::PreserveShared(def, v) => super::preserve::record_shared(plan, def, v),
                Item::Error(e) => diags.error(*e),
                Item::Undefined(name, e) => {
                    if undefined_seen.insert(name) {
                        diags.undefined(*e);
                    }
                }
            }
        }
    }
    for (name, e) in replaced_copies_undefined(files, db, live) {
        if undefined_seen.insert(name) {
            diags.undefined(e);
        }
    }
    // Undefined variables are errors even when nothing live refers to them
    // (nvlink: variables are never dead-stripped; declared-only externs too).
    for (name, g) in &db.globals {
        if g.def.is_some() || g.all_weak || undefined_seen.contains(name) {
            continue;
        }
        let f = &files[g.first_mention.file.0 as usize];
        let sym = &f.cubin.symbols[g.first_mention.index as usize];
        let variable = matches!(sym.ty(), STT_OBJECT | STT_CUDA_OBJECT);
        let taken_fn = !variable && live.taken_undefined.iter().any(|n| n == name);
        if !(variable || taken_fn)
            || sym.other & STO_CUDA_SHARED != 0
            || stays_undefined(name)
            || UNIFIED_TABLE_SYMBOLS.contains(name)
        {
            continue;
        }
        diags.undefined(
            Error::new(
                ErrorKind::Symbol,
                format!("undefined reference to '{name}'"),
            )
            .in_file(f.name),
        );
    }
    super::texslots::assign(files, live, plan, diags);
}

/// Undefined references from the code of definitions that held their name
/// when their input was read and were replaced by a later input's, when the
/// winner is live: nvlink reports them although that code is not in the
/// output (measured at sm_90: a weak `f` calling an undefined `u`, replaced
/// by a later strong `f` that a kernel calls or whose address is taken:
/// "Undefined reference to 'u'"; nothing when `f` is dead or when the weak
/// copy came after the strong one; difftest 30098, fixture
/// `weak_replaced_undefined`). As the call-graph rule of `live.rs`: such a
/// copy's calls count for the winner.
fn replaced_copies_undefined<'d>(
    files: &[InputFile<'d>],
    db: &SymbolDb<'d>,
    live: &Live,
) -> Vec<(&'d str, Error)> {
    let mut out = Vec::new();
    for f in files {
        for rs in f.cubin.sections.iter().filter(|s| s.is_reloc()) {
            let copy = match f.func_sym.get(rs.info as usize) {
                Some(&i) if i != 0 => SymRef {
                    file: f.id,
                    index: i,
                },
                _ => continue,
            };
            if !db.replaced.contains(&copy)
                || !live
                    .func_of_symbol(files, db, copy)
                    .is_some_and(|fi| live.live[fi as usize])
            {
                continue;
            }
            for r in f.cubin.relocs(rs) {
                let Some(sym) = f.cubin.symbols.get(r.sym as usize) else {
                    continue;
                };
                let here = SymRef {
                    file: f.id,
                    index: r.sym,
                };
                // What the relocation pass resolves without a definition:
                // texture handles, the unified tables, the bank size,
                // `extern .shared` windows.
                if r.sym == 0
                    || !sym.is_undefined()
                    || sym.bind() == STB_WEAK
                    || stays_undefined(sym.name)
                    || is_texture_kind(sym.ty())
                    || UNIFIED_TABLE_SYMBOLS.contains(&sym.name)
                    || sym.name == PTX_CONST0_SIZE
                    || db.resolve(here).is_some()
                    || super::shared::classify(files, db, here).is_some()
                {
                    continue;
                }
                let copy_name = f.cubin.symbols[copy.index as usize].name;
                out.push((
                    sym.name,
                    Error::new(
                        ErrorKind::Symbol,
                        format!(
                            "undefined reference to '{}' (referenced from the replaced definition of '{copy_name}')",
                            sym.name
                        ),
                    )
                    .in_file(f.name),
                ));
            }
        }
    }
    out
}

/// Classifies the relocations of one file: patches into `patches` (this
/// file's lists), the rest as [`Item`]s in relocation order.
fn classify_file<'d>(
    files: &[InputFile<'d>],
    db: &SymbolDb<'d>,
    live: &Live,
    plan: &Plan,
    f: &'d InputFile<'d>,
    patches: &mut FilePatches,
) -> Segments<'d> {
    let fid = f.id.0 as usize;
    let mut items = Items::default();
    let preserving = plan.resolved.is_some();
    let const0_size = ptx_const0_size(plan);
    let dropped = super::live::dropped_init_ranges(db, f);
    for rs in f.cubin.sections.iter().filter(|s| s.is_reloc()) {
        let target = &f.cubin.sections[rs.info as usize];
        let Some(tp) = plan.placement[fid][rs.info as usize] else {
            continue; // target dropped (dead function) or rebuilt
        };
        let referencing_fn = f.owner[rs.info as usize]
            .map(|t| f.cubin.symbols[f.func_sym[t as usize] as usize].name);
        let mut relocs: Vec<_> = f.cubin.relocs(rs).collect();
        if target.name == super::live::GLOBAL_INIT && !dropped.is_empty() {
            // A weak variable that lost to a weak one: no relocations.
            relocs.retain(|r| !super::live::in_ranges(&dropped, r.offset));
        }
        relocs.sort_by_key(|r| r.offset);
        let patches = patches.list(rs.info);
        for r in relocs {
            let Some(desc) = describe(r.rtype) else {
                items.push(Item::Error(Box::new(
                    Error::malformed(format!("unknown relocation type {}", r.rtype))
                        .in_file(f.name)
                        .in_section(rs.name)
                        .at(r.offset),
                )));
                continue;
            };
            let sym = &f.cubin.symbols[r.sym as usize];
            let here = SymRef {
                file: f.id,
                index: r.sym,
            };
            let mut patch_bank = |value: u64, bank: Option<u8>| {
                patches.push(Patch {
                    offset: r.offset,
                    rtype: r.rtype,
                    value,
                    bank,
                });
            };
            let keep = |items: &mut Items<'d>, sym: SymTarget, addend: i64| {
                items.run.push(KeptReloc {
                    target: tp.out,
                    rela: r.is_rela,
                    offset: tp.offset + r.offset,
                    rtype: rewritten_type(r.rtype),
                    sym,
                    addend,
                });
            };
            let preserve = |items: &mut Items<'d>, at: u64, to: SymTarget, addend: i64| {
                if preserving {
                    items.push(Item::Preserve(tp.out, at, r.rtype, to, addend));
                }
            };
            if r.sym == 0 {
                // No symbol: a linker directive on the instruction itself.
                if desc.class == ResolverClass::Driver || desc.class == ResolverClass::Either {
                    keep(&mut items, SymTarget::Input(here), r.addend);
                }
                continue;
            }
            if sym.is_undefined() && is_texture_kind(sym.ty()) {
                // A texture/sampler/surface handle: its link-wide slot in
                // the parameter bank of every kernel reaching this code
                // (the slots and their relocations: `texslots.rs`).
                let func = live.func_of_text[fid]
                    .get(rs.info as usize)
                    .copied()
                    .flatten();
                match (func, plan.tex.slot(sym.name)) {
                    (Some(_), Some(slot)) => {
                        // The addend is added (measured: sm_75..89 ptxas writes
                        // the bank size as addend for texmode_independent loads).
                        patch_bank(slot.wrapping_add(r.addend as u64), None);
                    }
                    _ => items.push(Item::Error(Box::new(
                        Error::new(
                            ErrorKind::Unsupported,
                            format!("texture/surface '{}' used outside a function", sym.name),
                        )
                        .in_file(f.name)
                        .in_section(rs.name)
                        .at(r.offset),
                    ))),
                }
                continue;
            }
            if sym.is_undefined() && UNIFIED_TABLE_SYMBOLS.contains(&sym.name) {
                continue; // resolves to 0; the field already holds 0
            }
            if sym.is_undefined() && sym.name == PTX_CONST0_SIZE {
                patch_bank(const0_size.wrapping_add(r.addend as u64), None);
                continue;
            }
            if let Some(sr) = super::shared::classify(files, db, here) {
                // Shared memory: an offset in the window of the kernel(s)
                // running this code (see `shared.rs`).
                let func = live.func_of_text[fid]
                    .get(rs.info as usize)
                    .copied()
                    .flatten();
                // nvcc -G's `.debug_info` refers to shared memory outside any
                // function (measured, fixture `cu_debug_shared`):
                // `shared::debug_location`.
                let in_debug = f.cubin.sections[rs.info as usize].flags & SHF_ALLOC == 0;
                let debug_value = || {
                    if func.is_some() || !in_debug {
                        return None;
                    }
                    super::shared::debug_location(plan, &sr, db.global_of[fid][r.sym as usize])
                };
                let value = debug_value().or_else(|| {
                    func.and_then(|fi| match sr {
                        super::shared::SharedRef::Dynamic => plan.shared.dyn_base.get(&fi).copied(),
                        super::shared::SharedRef::Var(def) => plan
                            .shared
                            .kernels
                            .get(&fi)
                            .and_then(|w| w.offsets.get(&def).copied())
                            .or_else(|| plan.shared.module_offsets.get(&(fi, def)).copied()),
                    })
                });
                match value {
                    Some(v) => {
                        patch_bank(v.wrapping_add(r.addend as u64), None);
                        if let super::shared::SharedRef::Var(def) = sr {
                            let at = tp.offset.wrapping_add(r.offset);
                            preserve(&mut items, at, SymTarget::Input(def), r.addend);
                            if preserving {
                                items.push(Item::PreserveShared(def, v));
                            }
                        }
                    }
                    // Code no kernel reaches (kept because its address is
                    // taken) has no window: nvlink resolves the dynamic
                    // window to -1 and a module-scope variable to its
                    // offset in the windows holding it (0 when none does),
                    // plus the addend (measured, difftest seeds 1, 30,
                    // 80016; fixtures `shared_unreached_lone`,
                    // `shared_unreached_common`).
                    None if func.is_some() => {
                        let bits = desc.actions.iter().map(|a| a.width()).max().unwrap_or(32);
                        let base = match sr {
                            super::shared::SharedRef::Dynamic => u64::MAX,
                            super::shared::SharedRef::Var(def) => {
                                plan.shared.unreached.get(&def).copied().unwrap_or(0)
                            }
                        };
                        let v = base.wrapping_add(r.addend as u64);
                        patch_bank(v & (u64::MAX >> (64 - bits.clamp(1, 64))), None);
                        // `--preserve-relocs` lists it too (against the
                        // variable, whose symbol `preserve::SharedHomes`
                        // places; measured, difftest seed 230035).
                        let to = match sr {
                            super::shared::SharedRef::Var(def) => Some(def),
                            // The dynamic window too, when its name has a
                            // symbol (`preserve::SharedHomes::dynamic_value`;
                            // difftest seed 230014).
                            super::shared::SharedRef::Dynamic => {
                                super::preserve::dynamic_named(plan).then_some(here)
                            }
                        };
                        if let Some(to) = to {
                            preserve(
                                &mut items,
                                tp.offset.wrapping_add(r.offset),
                                SymTarget::Input(to),
                                r.addend,
                            );
                        }
                    }
                    None => items.push(Item::Error(Box::new(
                        Error::new(
                            ErrorKind::Unsupported,
                            format!(
                                "shared-memory reference to '{}' outside any kernel's call tree",
                                sym.name
                            ),
                        )
                        .in_file(f.name)
                        .in_section(rs.name)
                        .at(r.offset),
                    ))),
                }
                continue;
            }
            // Debug info of a definition that lost to another input's.
            // `.debug_frame`: `nvinfo::frame_reloc_dropped` (dropped when
            // the definition lost when its input was read, or, for RELA
            // entries, when its code has relocations; otherwise resolved
            // against the winner: address kept, range cleared when dead).
            // Other debug sections: nvlink drops the entries when the winner
            // came earlier and keeps them (pointing at the winner) when a
            // later definition won; no range clearing. Line tables follow
            // the frames' rule (`nvinfo::follows_frame_rule`).
            // Not `.debug_info` and `.debug_loc`: nvcc -G's entries there of
            // a weak twin that lost to an earlier one keep their relocations,
            // pointing at the winner, while `.debug_frame`, `.debug_line` and
            // `.nv_debug_line_sass` drop them (measured: a template device
            // function instantiated in two -G objects, fixture
            // `cu_debug_shared`).
            let debug_target =
                target.flags & SHF_ALLOC == 0 && !super::nvinfo::keeps_losers_entries(target.name);
            if super::nvinfo::follows_frame_rule(target.name) {
                if super::nvinfo::frame_reloc_dropped(db, f, r.sym, r.is_rela) {
                    continue;
                }
            } else if debug_target
                && !sym.is_undefined()
                && !db.is_winner(here)
                && (is_clear(r.rtype) || super::live::lost_to_earlier(db, f, r.sym))
            {
                continue;
            }
            if sym.is_undefined() && sym.bind() == STB_LOCAL {
                // A label ptxas left undefined (nvcc -G: `.debug_loc` lists
                // `$L__tmp1` of a loop over a `cuda::std::span`, written as
                // a RELA entry against a LOCAL UND symbol): nvlink drops the
                // entry and keeps the field's bytes (measured, fixture
                // `cu_debug_loc_undef_label`).
                continue;
            }
            let Some(def) = db.resolve(here) else {
                let weak = sym.bind() == STB_WEAK;
                if weak || stays_undefined(sym.name) {
                    keep(&mut items, SymTarget::Input(here), r.addend);
                } else {
                    let from = referencing_fn
                        .map(|n| format!(" (referenced from function '{n}')"))
                        .unwrap_or_else(|| format!(" (referenced from section '{}')", target.name));
                    items.push(Item::Undefined(
                        sym.name,
                        Box::new(
                            Error::new(
                                ErrorKind::Symbol,
                                format!("undefined reference to '{}'{from}", sym.name),
                            )
                            .in_file(f.name),
                        ),
                    ));
                }
                continue;
            };
            let df = &files[def.file.0 as usize];
            let dsym = &df.cubin.symbols[def.index as usize];
            let Some(dsec_idx) = dsym.section() else {
                // Defined absolute or common: keep for the driver.
                keep(&mut items, SymTarget::Input(def), r.addend);
                continue;
            };
            let dsec = &df.cubin.sections[dsec_idx as usize];
            let dplace = plan.placement[def.file.0 as usize][dsec_idx as usize];
            if is_clear(r.rtype) {
                if dplace.is_none() {
                    patch_bank(0, None); // dead function: clear its FDE range
                }
                continue;
            }
            if dplace.is_none()
                && dsec.sh_type == SHT_CUDA_CONSTANT2
                && !plan.relocatable
                && desc.class != ResolverClass::Driver
            {
                // The bank 2 of a function no kernel reaches, which the link
                // drops (`sections::plan`): offsets as in the function's own bank.
                let value = if dsym.ty() == STT_SECTION {
                    0
                } else {
                    dsym.value
                };
                patch_bank(value.wrapping_add(r.addend as u64), Some(2));
                continue;
            }
            let Some(dplace) = dplace else {
                // A dead function referenced from debug info, or from the
                // code of an address-taken function no kernel reaches (nvlink
                // walks no calls from there and leaves the call unpatched:
                // `taken_callee_dropped`): drop the entry.
                continue;
            };
            let is_section_sym = dsym.ty() == STT_SECTION;
            let sym_offset = dplace.offset + if is_section_sym { 0 } else { dsym.value };
            let sym_target = if is_section_sym {
                SymTarget::Section(dplace.out)
            } else {
                // An alias's references name the function, as nvlink writes them.
                let index = df.alias_target(def.index).unwrap_or(def.index);
                SymTarget::Input(SymRef {
                    file: def.file,
                    index,
                })
            };
            let section_addend = if is_section_sym {
                dplace.offset as i64
            } else {
                0
            };
            let in_const = (SHT_CUDA_CONSTANT0..=SHT_CUDA_CONSTANT17).contains(&dsec.sh_type);
            let non_alloc = dsec.flags & SHF_ALLOC == 0 && !occupies_no_file_space(dsec.sh_type);
            let linker_may = desc.class != ResolverClass::Driver;
            let resolved_addend = r.addend.wrapping_add(section_addend);
            let at = tp.offset.wrapping_add(r.offset);
            if in_const && linker_may {
                // At most 17: `in_const`.
                let bank = (dsec.sh_type - SHT_CUDA_CONSTANT0) as u8;
                patch_bank(sym_offset.wrapping_add(r.addend as u64), Some(bank));
                // A device function's jump table lies in the bank of every
                // kernel reaching it, at offsets of their own: nvlink keeps
                // no entry for it (a kernel's own table keeps its entries).
                // On Blackwell nvlink lists no constant-bank entry at all
                // (measured at sm_100/120, difftest seed 240003).
                if !device_function_table(df, dsec) && !plan.arch.is_blackwell_or_later() {
                    preserve(&mut items, at, sym_target, resolved_addend);
                }
            } else if non_alloc && linker_may {
                patch_bank(sym_offset.wrapping_add(r.addend as u64), None);
                // On Blackwell `.debug_frame` is rebuilt (`blackwell.rs`) and
                // nvlink lists none of its entries (measured at sm_100).
                let rebuilt_frame = plan.arch.is_blackwell_or_later()
                    && f.cubin.sections[rs.info as usize].name == ".debug_frame";
                if !rebuilt_frame {
                    preserve(&mut items, at, sym_target, resolved_addend);
                }
            } else if dsec.sh_type == SHT_CUDA_SHARED_RESERVED && !plan.relocatable && linker_may {
                // Reserved shared memory (`__nv_reservedSMEM_tcgen05_partition`
                // of tcgen05 code at sm_100a): its offset in the reserved
                // window, the symbol's output value (its `st_value` is its
                // alignment), as nvlink resolves it (measured, fixture
                // `tcgen05_callee`).
                patch_bank(dplace.offset.wrapping_add(r.addend as u64), None);
                preserve(&mut items, at, sym_target, resolved_addend);
            } else if desc.class == ResolverClass::Linker {
                items.push(Item::Error(Box::new(
                    Error::new(
                        ErrorKind::Unsupported,
                        format!(
                            "relocation {} against '{}' in section '{}' cannot be resolved at link time",
                            desc.name, dsym.name, dsec.name
                        ),
                    )
                    .in_file(f.name)
                    .in_section(rs.name)
                    .at(r.offset),
                )));
            } else {
                keep(
                    &mut items,
                    sym_target,
                    r.addend.wrapping_add(section_addend),
                );
            }
        }
    }
    items.finish()
}

/// Builds a file's [`Segments`].
#[derive(Default)]
struct Items<'d> {
    done: Segments<'d>,
    run: Vec<KeptReloc>,
}

impl<'d> Items<'d> {
    fn push(&mut self, item: Item<'d>) {
        self.done.push((std::mem::take(&mut self.run), Some(item)));
    }
    fn finish(mut self) -> Segments<'d> {
        if !self.run.is_empty() {
            self.done.push((self.run, None));
        }
        self.done
    }
}

/// CUDA symbol types of texture, sampler and surface references.
pub(crate) const STT_CUDA_TEXTURE: u8 = 10;
/// Sampler reference symbol type.
pub(crate) const STT_CUDA_SAMPLER: u8 = 11;
/// Surface reference symbol type.
pub(crate) const STT_CUDA_SURFACE: u8 = 12;

pub(crate) fn is_texture_kind(ty: u8) -> bool {
    matches!(ty, STT_CUDA_TEXTURE | STT_CUDA_SAMPLER | STT_CUDA_SURFACE)
}

/// Creates the output relocation sections (one per target section and REL/RELA kind).
pub(crate) fn create_sections(plan: &mut Plan) {
    // Creation order: by first kept relocation, for a stable, input-like order.
    let mut seen: Vec<(u32, bool)> = Vec::new();
    let mut known: HashSet<(u32, bool)> = HashSet::default();
    for k in plan.kept.iter() {
        let key = (k.target.0, k.rela);
        if known.insert(key) {
            seen.push(key);
        }
    }
    // `-r`: `.rel.debug_frame` before `.rela.debug_frame`, as ptxas writes
    // them. nvlink's final link reads them in order, and a replaced weak
    // copy's RELA entry read first (culink keeps the CIE pointers and
    // `R_CUDA_UNUSED_CLEAR64` as RELA) made it drop the copy's REL address
    // too (measured at sm_75/80, difftest --relocatable 320001, 320012;
    // fixture `frame_weak_replaced_r`).
    if plan.relocatable {
        let frame = plan.sections.iter().position(|s| s.name == ".debug_frame");
        if let Some(t) = frame.map(|t| t as u32) {
            let rel = seen.iter().position(|&k| k == (t, false));
            let rela = seen.iter().position(|&k| k == (t, true));
            if let (Some(a), Some(b)) = (rel, rela) {
                if b < a {
                    seen.swap(a, b);
                }
            }
        }
    }
    // A Blackwell `-r` output keeps each bank 2's (empty) `.rela` section, as
    // ptxas writes it and nvlink -r keeps it: nvlink's final link of a `-r`
    // object whose banks 2 have none drops the relocations of their Mercury
    // twins and writes every jump table as zeros (measured, fixture
    // `cu_jump_tables_r`; docs/blackwell.md §7). (nvlink -r at sm_80/90
    // drops them, and its final link needs none there.)
    if plan.relocatable && plan.arch.is_blackwell_or_later() {
        for (i, sec) in plan.sections.iter().enumerate() {
            if sec.sh_type == SHT_CUDA_CONSTANT2 && !known.contains(&(i as u32, true)) {
                seen.push((i as u32, true));
            }
        }
    }
    for (target, rela) in seen {
        let tname = plan.sections[target as usize].name.clone();
        let (prefix, ty, ent) = if rela {
            (".rela", SHT_RELA, 24)
        } else {
            (".rel", SHT_REL, 16)
        };
        let mut o = OutSection::new(format!("{prefix}{tname}"), ty, Role::Reloc);
        o.flags = SHF_INFO_LINK;
        o.align = 8;
        o.entsize = ent;
        o.link = LinkTo::SymTab;
        o.info = InfoTo::Section(OutSecId(target));
        o.body = Body::Bytes(Vec::new());
        plan.add(o);
    }
}

/// One relocation section's entries: (offset, type, symbol index, addend).
pub(crate) type Entry = (u64, u32, u32, i64);

/// The bytes of a relocation section: `entries` sorted by (offset, type,
/// symbol), each as an ELF64 `Rel` or, when `rela`, `Rela`. (`.rel[a].*`,
/// `.nv.merc.rela.*` and `.nv.resolvedrela.*` all use it.)
pub(crate) fn encode_entries(entries: &mut [Entry], rela: bool) -> Vec<u8> {
    entries.sort_by_key(|e| (e.0, e.1, e.2));
    let mut bytes = Vec::with_capacity(entries.len() * if rela { 24 } else { 16 });
    for &(off, ty, sym, addend) in entries.iter() {
        bytes.extend_from_slice(&off.to_le_bytes());
        bytes.extend_from_slice(&((u64::from(sym) << 32) | u64::from(ty)).to_le_bytes());
        if rela {
            bytes.extend_from_slice(&addend.to_le_bytes());
        }
    }
    bytes
}

/// Serializes the kept relocations with final symbol indices, ascending offsets.
///
/// Grouped in a table indexed by section (a `BTreeMap`, then a hash map,
/// lookup per relocation was 2.3%, then ~10 ms of a 2000-object link), each
/// section sorted and encoded in parallel; `plan.kept` is freed afterwards (nothing later reads it).
pub(crate) fn finish(syms: &SymTable, plan: &mut Plan) {
    let _span = tracing::info_span!("relocate_finish").entered();
    // Grouped by (target section, REL/RELA) in a dense table: slot 2 * id + rela.
    // Only the slots that get entries (a list header for every slot was
    // 3.8 MB of the link's peak at N = 2000).
    let slot = |k: &KeptReloc| k.target.0 as usize * 2 + usize::from(k.rela);
    let mut by_section: HashMap<usize, Vec<Entry>> = HashMap::default();
    // Each chunk is freed once distributed.
    for chunk in std::mem::take(&mut plan.kept).chunks {
        for k in chunk {
            let sym = match k.sym {
                SymTarget::Input(r) => syms.output_index(r),
                SymTarget::Section(s) => syms.section_symbol(s),
            };
            by_section
                .entry(slot(&k))
                .or_default()
                .push((k.offset, k.rtype, sym, k.addend));
        }
    }
    let mut jobs: Vec<(usize, bool, Vec<Entry>)> = Vec::new();
    for (i, s) in plan.sections.iter().enumerate() {
        if s.role != Role::Reloc || s.sh_type == SHT_CUDA_RESOLVED_RELA {
            continue; // `.nv.resolvedrela.*`: preserve.rs
        }
        let InfoTo::Section(target) = s.info else {
            continue;
        };
        let rela = s.sh_type == SHT_RELA;
        let entries = by_section
            .remove(&(target.0 as usize * 2 + usize::from(rela)))
            .unwrap_or_default();
        jobs.push((i, rela, entries));
    }
    let encoded: Vec<(usize, Vec<u8>)> = jobs
        .into_par_iter()
        .with_min_len(256)
        .map(|(i, rela, mut entries)| (i, encode_entries(&mut entries, rela)))
        .collect();
    for (i, bytes) in encoded {
        let s = &mut plan.sections[i];
        s.size = bytes.len() as u64;
        s.body = Body::Bytes(bytes);
    }
}

/// Whether `sec` of `f` is the bank 2 (jump tables) of a function that is
/// not a kernel (`--preserve-relocs` keeps neither its symbols nor the
/// references to them, as nvlink; measured at sm_75-90, difftest seeds
/// 230014, 230024).
pub(crate) fn device_function_table(f: &InputFile<'_>, sec: &crate::cubin::Section<'_>) -> bool {
    sec.sh_type == SHT_CUDA_CONSTANT2
        && f.owner
            .get(sec.index as usize)
            .copied()
            .flatten()
            .is_some_and(|text| {
                f.cubin
                    .symbols
                    .get(f.func_sym[text as usize] as usize)
                    .is_some_and(|s| s.other & STO_CUDA_ENTRY == 0)
            })
}
