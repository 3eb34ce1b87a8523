//! `-r`: relocatable links (called from the phases when
//! [`crate::LinkOptions::relocatable`] is set).
//!
//! The output is an `ET_REL` object meant to be linked again, as `nvlink -r`
//! writes one: no program headers, no `.nv.rel.action`, CUDA section types
//! kept (`.nv.constant0.*` 0x70000064, `.nv.global.init` 0x70000008, ...),
//! variables keep type 13 and their `st_other` memory-space bits, the unified
//! table helpers (`__UDT*`, `__UFT*`) stay as `GLOBAL` undefined symbols,
//! `.nv.info` keeps `EIATTR_MAX_STACK_SIZE` and gets no `MIN_STACK_SIZE` (no
//! call-tree propagation at all: the final link does it), the tkinfo note
//! holds only culink's entry, and no function is dead-stripped.
//!
//! Relocations: `.debug_frame`'s CIE pointers (section-symbol references
//! inside a non-allocated section) are resolved, as nvlink -r does, and kept
//! (RELA, also the REL one ptxas writes for the CIE at offset 0), so that the
//! frames point at their CIEs wherever the final link puts them; the
//! `R_CUDA_UNUSED_CLEAR*` entries are kept (nvlink -r drops them) so that the
//! final link clears the ranges of functions that die there; a losing
//! definition's frame relocations follow the final link's rule
//! (`nvinfo::frame_reloc_dropped`); those inside a weak `.nv.global.init`
//! variable that lost to a weak one are dropped, as by nvlink
//! (`live::dropped_init_ranges`); **every other relocation is kept**
//! (against the resolved definition, section-symbol addends rebased by the
//! contribution's offset), including constant-bank and static shared-memory
//! references, which nvlink -r resolves. Keeping them is what makes the
//! object correct to link again after another object with `.nv.constant3`
//! or shared memory (docs/differences.md). Undefined references are not
//! errors: the final link reports them. `.common` variables stay common
//! (nvlink -r allocates them). The tests link each `-r` fixture's output
//! again, alone and split (the `-r` of all inputs but the first or last,
//! linked with it), and compare with nvlink's direct link.
//!
//! Blackwell objects keep their whole Mercury family (`mercury.rs`, which
//! classifies the Mercury relocations by the same rules; `docs/blackwell.md`
//! §7); the parameter banks' section symbols go last in `.symtab` so that
//! `.nv.merc.symtab` stays index-aligned with it (`symtab.rs`).

use super::layout::Layout;
use super::live::Live;
use super::relocate::{KeptReloc, SymTarget};
use super::sections::{Patch, Plan};
use super::symbols::{SymRef, SymbolDb};
use super::{Diags, InputFile};
use crate::cubin::{occupies_no_file_space, SHDR_SIZE};
use crate::elf::*;
use crate::error::Error;
use crate::reloc::table::{describe, RelocType};

/// Marks every function live and every section kept (nvlink -r strips nothing).
pub(crate) fn keep_all(files: &[InputFile<'_>], live: &mut Live) {
    for l in &mut live.live {
        *l = true;
    }
    live.keep_sections(files);
}

fn is_clear(rtype: u32) -> bool {
    matches!(
        RelocType(rtype),
        RelocType::R_CUDA_UNUSED_CLEAR32 | RelocType::R_CUDA_UNUSED_CLEAR64
    )
}

/// Classifies every relocation for a relocatable output (replaces
/// `relocate::classify`).
pub(crate) fn classify(
    files: &[InputFile<'_>],
    db: &SymbolDb<'_>,
    plan: &mut Plan,
    diags: &mut Diags,
) {
    let _span = tracing::info_span!("relocate_r").entered();
    for f in files {
        let fid = f.id.0 as usize;
        let dropped = super::live::dropped_init_ranges(db, f);
        for rs in f.cubin.sections.iter().filter(|s| s.is_reloc()) {
            let target = &f.cubin.sections[rs.info as usize];
            let Some(tp) = plan.placement[fid][rs.info as usize] else {
                continue;
            };
            let mut relocs: Vec<_> = f.cubin.relocs(rs).collect();
            if target.name == super::live::GLOBAL_INIT {
                // nvlink -r drops them too (a weak variable that lost to a
                // weak one: `live::dropped_init_ranges`).
                relocs.retain(|r| !super::live::in_ranges(&dropped, r.offset));
            }
            relocs.sort_by_key(|r| r.offset);
            for r in relocs {
                if describe(r.rtype).is_none() {
                    diags.error(
                        Error::malformed(format!("unknown relocation type {}", r.rtype))
                            .in_file(f.name)
                            .in_section(rs.name)
                            .at(r.offset),
                    );
                    continue;
                }
                let here = SymRef {
                    file: f.id,
                    index: r.sym,
                };
                let keep = |plan: &mut Plan, sym: SymTarget, addend: i64| {
                    plan.kept.push(KeptReloc {
                        target: tp.out,
                        rela: r.is_rela,
                        offset: tp.offset.wrapping_add(r.offset),
                        rtype: r.rtype,
                        sym,
                        addend,
                    });
                };
                let Some(sym) = f.cubin.symbols.get(r.sym as usize) else {
                    continue;
                };
                if r.sym != 0 && sym.is_undefined() && sym.name == super::relocate::PTX_CONST0_SIZE
                {
                    // nvlink -r resolves it too, with the constants of this
                    // link (`relocate::ptx_const0_size`), and drops it.
                    let value = super::relocate::ptx_const0_size(plan);
                    plan.patches[fid].list(rs.info).push(Patch {
                        offset: r.offset,
                        rtype: r.rtype,
                        value: value.wrapping_add(r.addend as u64),
                        bank: None,
                    });
                    continue;
                }
                if r.sym == 0 || sym.is_undefined() {
                    let to = db.alias_of(here).unwrap_or(here);
                    keep(plan, SymTarget::Input(to), r.addend);
                    continue;
                }
                let debug_target = target.flags & SHF_ALLOC == 0;
                if debug_target && !db.is_winner(here) {
                    // A losing definition's entries. Frames follow the final
                    // link's rule (`nvinfo::frame_reloc_dropped`) now: the
                    // final link sees one definition only, so what stays is
                    // resolved against the winner there (the address kept or
                    // the range cleared as the winner lives or dies).
                    // `.debug_info` and `.debug_loc` keep them, pointing at
                    // the winner, as in a final link (`relocate.rs`; nvlink
                    // -r too: a cub `EmptyKernel` instantiated in two -G
                    // objects, fixture `cu_debug_weak_kernel_r`).
                    let dropped = if super::nvinfo::follows_frame_rule(target.name) {
                        super::nvinfo::frame_reloc_dropped(db, f, r.sym, r.is_rela)
                    } else if super::nvinfo::keeps_losers_entries(target.name) {
                        false
                    } else {
                        is_clear(r.rtype) || super::live::lost_to_earlier(db, f, r.sym)
                    };
                    if dropped {
                        continue;
                    }
                }
                let Some(def) = db.resolve(here) else {
                    keep(plan, SymTarget::Input(here), r.addend);
                    continue;
                };
                let df = &files[def.file.0 as usize];
                let dsym = &df.cubin.symbols[def.index as usize];
                let Some(dsec_idx) = dsym.section() else {
                    keep(plan, SymTarget::Input(def), r.addend);
                    continue;
                };
                let dplace = plan.placement[def.file.0 as usize][dsec_idx as usize];
                if is_clear(r.rtype) {
                    if dplace.is_none() {
                        plan.patches[fid].list(rs.info).push(Patch {
                            offset: r.offset,
                            rtype: r.rtype,
                            value: 0,
                            bank: None,
                        });
                    } else {
                        // Kept (nvlink -r drops it), so that the final link
                        // clears the range if the function dies there, as a
                        // direct link does.
                        keep(plan, SymTarget::Input(def), r.addend);
                    }
                    continue;
                }
                let Some(dplace) = dplace else {
                    continue;
                };
                let dsec = &df.cubin.sections[dsec_idx as usize];
                let is_section_sym = dsym.ty() == STT_SECTION;
                let non_alloc =
                    dsec.flags & SHF_ALLOC == 0 && !occupies_no_file_space(dsec.sh_type);
                if is_section_sym && non_alloc && debug_target {
                    // `.debug_frame` CIE pointers: an offset inside this very
                    // output section, known now and written as nvlink -r
                    // writes it. nvlink -r then drops the relocation, so its
                    // output relinked after other objects points at their
                    // CIE; culink keeps it (the Mercury side does the same)
                    // so the final link moves it along. ptxas writes the
                    // pointer to the CIE at offset 0 as a REL entry (implicit
                    // addend 0, the others RELA): kept as RELA, since the
                    // offset inside the output section is its addend now.
                    // References into a line table that this link rebuilds
                    // (sm_100+: `DW_AT_stmt_list`) are left as the input
                    // has them (0), as nvlink -r leaves them: only the kept
                    // relocation says where the unit went (fixture
                    // `cu_debug_stmt_list_r`).
                    let rebuilt = plan.arch.is_blackwell_or_later()
                        && super::nvinfo::is_line_table(dsec.name);
                    if !rebuilt {
                        plan.patches[fid].list(rs.info).push(Patch {
                            offset: r.offset,
                            rtype: r.rtype,
                            value: dplace.offset.wrapping_add(r.addend as u64),
                            bank: None,
                        });
                    }
                    plan.kept.push(KeptReloc {
                        target: tp.out,
                        rela: true,
                        offset: tp.offset.wrapping_add(r.offset),
                        rtype: r.rtype,
                        sym: SymTarget::Section(dplace.out),
                        addend: r.addend.wrapping_add(dplace.offset as i64),
                    });
                    super::preserve::record(
                        plan,
                        tp.out,
                        tp.offset.wrapping_add(r.offset),
                        r.rtype,
                        SymTarget::Section(dplace.out),
                        r.addend.wrapping_add(dplace.offset as i64),
                    );
                } else if is_section_sym {
                    keep(
                        plan,
                        SymTarget::Section(dplace.out),
                        r.addend.wrapping_add(dplace.offset as i64),
                    );
                } else {
                    keep(plan, SymTarget::Input(def), r.addend);
                }
            }
        }
    }
}

/// Drops the program headers from the layout (`ET_REL` has none).
pub(crate) fn strip_program_headers(layout: &mut Layout, section_count: usize) {
    layout.phdrs.clear();
    layout.phoff = 0;
    layout.file_size = layout.shoff + (section_count * SHDR_SIZE) as u64;
}

/// Marks the written image as `ET_REL`.
pub(crate) fn set_rel_type(cubin: &mut [u8]) {
    if let Some(t) = cubin.get_mut(16..18) {
        t.copy_from_slice(&ET_REL.to_le_bytes());
    }
}

/// The targets whose `-r` of Mercury objects was measured against nvlink -r
/// (docs/blackwell.md §7).
const MERCURY_R_ARCHS: [u32; 4] = [100, 103, 120, 121];

/// `-r` of objects with Mercury sections (`.nv.merc.*`, `.nv.capmerc.*`) at
/// a target it was not measured for (sm_110: nvlink -r there also resolves
/// shared-variable relocations, renames local shared symbols with a hash and
/// keeps `.nv.shared.reserved.0` once — measured, not reproduced): refuse
/// rather than write an object that links differently.
pub(crate) fn unsupported(files: &[InputFile<'_>], arch: crate::SmArch) -> Option<Error> {
    if MERCURY_R_ARCHS.contains(&arch.sm) {
        return None;
    }
    let f = files.iter().find(|f| {
        f.cubin
            .sections
            .iter()
            .any(|s| s.name.starts_with(".nv.merc.") || s.name.starts_with(".nv.capmerc."))
    })?;
    Some(
        Error::new(
            crate::error::ErrorKind::Unsupported,
            format!(
                "-r (relocatable link) of objects with Mercury sections is supported for \
                 sm_100, sm_103, sm_120 and sm_121, not yet for {arch}"
            ),
        )
        .in_file(f.name),
    )
}
