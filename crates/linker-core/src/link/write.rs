//! Phase 9: write the cubin.
//!
//! Sizes and offsets are final, so the output is one zeroed buffer carved into
//! disjoint `&mut [u8]` slices, one per section; rayon fills them in parallel
//! (copying input bytes and applying the recorded patches through the one
//! relocation applier). No locks, no reallocation; the result does not depend
//! on the number of threads.

use super::layout::Layout;
use super::sections::{Body, InfoTo, LinkTo, Plan, Role};
use super::{InputFile, OutSecId};
use crate::cubin::{EHDR_SIZE, PHDR_SIZE, SHDR_SIZE};
use crate::elf::*;
use crate::error::{Error, Result};
use crate::reloc;
use rayon::prelude::*;

fn put16(b: &mut [u8], o: usize, v: u16) {
    b[o..o + 2].copy_from_slice(&v.to_le_bytes());
}
fn put32(b: &mut [u8], o: usize, v: u32) {
    b[o..o + 4].copy_from_slice(&v.to_le_bytes());
}
fn put64(b: &mut [u8], o: usize, v: u64) {
    b[o..o + 8].copy_from_slice(&v.to_le_bytes());
}

/// `e_flags` bit nvlink sets on images with extended section numbering.
const EF_CUDA_EXTENDED_SECTIONS: u32 = 0x0100_0000;

/// The `e_flags` of the output: the first input's layout with the target SM.
fn output_flags(files: &[InputFile<'_>], plan: &Plan) -> (u8, u8, u32) {
    let sm = plan.arch.sm & 0xff;
    let Some(best) = files
        .iter()
        .max_by_key(|f| (f.cubin.header.abi_version(), std::cmp::Reverse(f.id)))
    else {
        // No input has code for the target: nvlink 13.0's empty cubin has
        // OSABI 0x41, ABI version 8 and e_flags 0x05005a04 at sm_90.
        return (0x41, 8, 0x0500_0004 | (sm << 8));
    };
    let h = &best.cubin.header;
    if h.abi_version() < 8 {
        // Only CUDA 12 (ELF ABI 7) inputs: nvlink 13 still writes its own
        // format (measured at sm_90 with CUDA 12.9 objects).
        let nibble = if plan.arch.is_blackwell_or_later() {
            0x02
        } else {
            0x04
        };
        return (0x41, 8, 0x0600_0000 | (sm << 8) | nibble);
    }
    let flags = if h.abi_version() >= 8 {
        (h.e_flags & !0xff00) | (sm << 8)
    } else {
        (h.e_flags & !0x00ff_00ff) | sm | (sm << 16)
    };
    (h.osabi(), h.abi_version(), flags)
}

/// Serializes the plan into the final cubin bytes.
pub(crate) fn write(files: &[InputFile<'_>], plan: &Plan, layout: &Layout) -> Result<Vec<u8>> {
    let _span = tracing::info_span!("write", bytes = layout.file_size).entered();
    let size = usize::try_from(layout.file_size)
        .map_err(|_| Error::new(crate::ErrorKind::Overflow, "output too large"))?;
    let mut out: Vec<u8> = Vec::new();
    out.try_reserve_exact(size).map_err(|_| {
        Error::new(
            crate::ErrorKind::Overflow,
            format!("cannot allocate the {size}-byte output"),
        )
    })?;
    out.resize(size, 0);
    // ELF header.
    let (osabi, abiver, mut flags) = output_flags(files, plan);
    if plan.sections.len() as u64 >= u64::from(SHN_LORESERVE) && abiver >= 8 {
        // nvlink sets bit 24 of e_flags when the section count needs
        // extended numbering (measured: 0x06005a04 → 0x07005a04).
        flags |= EF_CUDA_EXTENDED_SECTIONS;
    }
    out[..4].copy_from_slice(b"\x7fELF");
    out[4] = 2;
    out[5] = 1;
    out[6] = 1;
    out[7] = osabi;
    out[8] = abiver;
    put16(&mut out, 16, ET_EXEC);
    put16(&mut out, 18, EM_CUDA);
    put32(&mut out, 20, 1);
    put64(&mut out, 24, 0);
    put64(&mut out, 32, layout.phoff);
    put64(&mut out, 40, layout.shoff);
    put32(&mut out, 48, flags);
    put16(&mut out, 52, EHDR_SIZE as u16);
    put16(&mut out, 54, PHDR_SIZE as u16);
    put16(&mut out, 56, layout.phdrs.len() as u16);
    put16(&mut out, 58, SHDR_SIZE as u16);
    // Extended numbering past SHN_LORESERVE sections: e_shnum 0, the count in
    // section 0's sh_size.
    let count = plan.sections.len() as u64;
    let extended = count >= u64::from(SHN_LORESERVE);
    put16(&mut out, 60, if extended { 0 } else { count as u16 });
    if extended {
        put64(&mut out, layout.shoff as usize + 32, count);
    }
    let shstrndx = plan
        .find_role(Role::ShStrTab)
        .map(|id| plan.index(id))
        .unwrap_or(0);
    put16(&mut out, 62, shstrndx as u16);
    // Section headers.
    let symtab_index = plan
        .find_role(Role::SymTab)
        .map(|id| plan.index(id))
        .unwrap_or(0);
    for (pos, &id) in plan.order.iter().enumerate() {
        let s = plan.sec(id);
        let o = layout.shoff as usize + pos * SHDR_SIZE;
        if s.role == Role::Null {
            continue;
        }
        let size = if s.role == Role::ShStrTab {
            layout.shstrtab.len() as u64
        } else {
            s.size
        };
        let link = match s.link {
            LinkTo::Zero => 0,
            LinkTo::SymTab => symtab_index,
            LinkTo::Section(t) => plan.index(t),
        };
        let info = match s.info {
            InfoTo::Raw(v) => v,
            InfoTo::Section(t) => plan.index(t),
            InfoTo::FuncSym { .. } => 0, // filled below by the caller-provided map
        };
        put32(&mut out, o, layout.name_offsets[id.0 as usize]);
        put32(&mut out, o + 4, s.sh_type);
        put64(&mut out, o + 8, s.flags);
        put64(&mut out, o + 16, 0);
        put64(&mut out, o + 24, layout.offsets[id.0 as usize]);
        put64(&mut out, o + 32, size);
        put32(&mut out, o + 40, link);
        put32(&mut out, o + 44, info);
        put64(&mut out, o + 48, s.align);
        put64(&mut out, o + 56, s.entsize);
    }
    // Program headers.
    for (i, p) in layout.phdrs.iter().enumerate() {
        let o = layout.phoff as usize + i * PHDR_SIZE;
        put32(&mut out, o, p.p_type);
        put32(&mut out, o + 4, p.flags);
        put64(&mut out, o + 8, p.offset);
        put64(&mut out, o + 16, 0);
        put64(&mut out, o + 24, 0);
        put64(&mut out, o + 32, p.filesz);
        put64(&mut out, o + 40, p.memsz);
        put64(&mut out, o + 48, 8);
    }
    // Section contents: carve disjoint slices, fill them in parallel.
    let mut spans: Vec<(u64, u64, OutSecId)> = plan
        .order
        .iter()
        .filter_map(|&id| {
            let s = plan.sec(id);
            let len = if s.role == Role::ShStrTab {
                layout.shstrtab.len() as u64
            } else {
                s.size
            };
            (!matches!(s.body, Body::NoBits | Body::Alias(_)) && s.role != Role::Null && len > 0)
                .then_some((layout.offsets[id.0 as usize], len, id))
        })
        .collect();
    spans.sort_unstable();
    let end_of_sections = layout.shoff as usize;
    let (mut rest, _) = out.split_at_mut(end_of_sections);
    let mut pos = 0u64;
    let mut jobs: Vec<(&mut [u8], OutSecId)> = Vec::with_capacity(spans.len());
    for (off, len, id) in spans {
        let skip = (off - pos) as usize;
        let tail = std::mem::take(&mut rest);
        let (_, tail) = tail.split_at_mut(skip);
        let (mine, tail) = tail.split_at_mut(len as usize);
        jobs.push((mine, id));
        rest = tail;
        pos = off + len;
    }
    jobs.into_par_iter()
        .try_for_each(|(dst, id)| -> Result<()> {
            let s = plan.sec(id);
            match &s.body {
                Body::Bytes(b) if s.role == Role::ShStrTab || b.is_empty() => {
                    if s.role == Role::ShStrTab {
                        dst.copy_from_slice(&layout.shstrtab);
                    }
                    Ok(())
                }
                Body::Bytes(b) => {
                    dst.copy_from_slice(b);
                    Ok(())
                }
                Body::Pieces(pieces) => {
                    for p in pieces {
                        let f = &files[p.file.0 as usize];
                        let src = f.cubin.sections[p.section as usize].data;
                        let at = p.offset as usize;
                        let piece = &mut dst[at..at + src.len()];
                        piece.copy_from_slice(src);
                        for patch in &plan.patches[p.file.0 as usize][p.section as usize] {
                            reloc::apply::apply_resolved(
                                patch.rtype,
                                &mut piece[patch.offset as usize..],
                                patch.value,
                                patch.bank,
                            )
                            .map_err(|e| {
                                e.in_file(f.name)
                                    .in_section(f.cubin.sections[p.section as usize].name)
                                    .at(patch.offset)
                            })?;
                        }
                    }
                    Ok(())
                }
                Body::NoBits | Body::Alias(_) => Ok(()),
            }
        })?;
    Ok(out)
}

/// Writes the `sh_info` of text sections (symbol indices are known only after
/// the symbol table); done after [`write`] to keep the parallel part simple.
pub(crate) fn fix_text_info(out: &mut [u8], plan: &Plan, layout: &Layout, func_index: &[u32]) {
    for (pos, &id) in plan.order.iter().enumerate() {
        let s = plan.sec(id);
        if let InfoTo::FuncSym { func, high } = s.info {
            let o = layout.shoff as usize + pos * SHDR_SIZE;
            let sym = func_index.get(func as usize).copied().unwrap_or(0);
            put32(out, o + 44, high | (sym & 0x00ff_ffff));
        }
    }
}
