//! Phase 9: write the cubin.
//!
//! Sizes and offsets are final, so the output is written straight into the
//! caller's [`crate::OutputSink`] (a `Vec` for [`crate::link()`], the memory-mapped
//! output file for the CLI), in file order, one window of about 8 MB at a time:
//! each window is carved into disjoint `&mut [u8]` slices, one per section, and
//! rayon fills them in parallel (copying input bytes and applying the recorded
//! patches through the one relocation applier). No locks, no reallocation, no
//! intermediate copy of the output; the result does not depend on the number of
//! threads.

use super::layout::Layout;
use super::sections::{Body, InfoTo, LinkTo, Plan, Role};
use super::{FileId, InputFile, OutSecId};
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
        // OSABI 0x41, ABI version 8 and e_flags 0x05005a04 at sm_90,
        // 0x05006402 at sm_100.
        return (0x41, 8, 0x0500_0000 | (sm << 8) | format_nibble(plan.arch));
    };
    let h = &best.cubin.header;
    if h.abi_version() < 8 {
        // Only ELF ABI 7 inputs (CUDA 11.8-12.9): nvlink 13 still writes
        // its own format (measured at sm_80 and sm_90).
        // Bits 24-31 count the debug sections as for ABI 8 inputs (CUDA
        // 12.6 `-G` objects at sm_80: 0x0e; ABI 7 objects leave them 0).
        let top = debug_flag_byte(plan, NO_DEBUG_TOP_BYTE);
        return (0x41, 8, (top << 24) | (sm << 8) | format_nibble(plan.arch));
    }
    let mut flags = if h.abi_version() >= 8 {
        (h.e_flags & !0xff00) | (sm << 8)
    } else {
        (h.e_flags & !0x00ff_00ff) | sm | (sm << 16)
    };
    if h.abi_version() >= 8 {
        flags = (flags & 0x00ff_ffff) | (debug_flag_byte(plan, flags >> 24) << 24);
    }
    (h.osabi(), h.abi_version(), flags)
}

/// The low nibble of the `e_flags` nvlink writes when it makes the format up
/// (no input, or only ELF ABI 7 ones): 2 on Blackwell, 4 before.
fn format_nibble(arch: crate::arch::SmArch) -> u32 {
    if arch.is_blackwell_or_later() {
        0x02
    } else {
        0x04
    }
}

/// Bits 24–31 of `e_flags` of an ELF ABI 8 object without debug sections.
const NO_DEBUG_TOP_BYTE: u32 = 0x06;

/// Whether a section is one of the debug sections bits 24–31 of `e_flags`
/// count: `.debug_*` but `.debug_frame` (every object has one), and
/// `.nv_debug_*` (`.nv_debug_line_sass`, `.nv_debug_ptx_txt.<hash>`, ...; not
/// `.nv_debug.shared`).
fn counts_as_debug(name: &str) -> bool {
    (name.starts_with(".debug_") && name != ".debug_frame") || name.starts_with(".nv_debug_")
}

/// Bits 24–31 of the output's `e_flags` (ELF ABI 8 inputs): 0x06 plus the
/// number of debug sections the output has, as ptxas writes them for an
/// object (measured with ptxas/nvcc 13.0.88: no debug 0x06; `-lineinfo` 0x09
/// with `.debug_line`, `.nv_debug_line_sass`, `.nv_debug_ptx_txt.<h>`, 0x0a
/// when `.debug_str` is there too; `-G` 0x0e at sm_90 (8 sections), 0x0f at
/// sm_100 (9)) and nvlink for a link (each input's `.nv_debug_ptx_txt.<h>`
/// stays a section of its own: two `-lineinfo` objects 0x0a + 0x09 → 0x0b,
/// `-lineinfo` + `-G` 0x0a + 0x0e → 0x10, three `-G` 0x0f → 0x11, at sm_90
/// and sm_100 alike). Without debug sections: `first` (the chosen input's
/// byte).
fn debug_flag_byte(plan: &Plan, first: u32) -> u32 {
    let n = plan
        .sections
        .iter()
        .filter(|s| counts_as_debug(&s.name))
        .count() as u32;
    if n == 0 {
        return first;
    }
    (NO_DEBUG_TOP_BYTE + n) & 0xff
}

/// Bytes of output a window covers before it is released to the sink (see
/// [`crate::OutputSink::release`]): bounds the resident output pages when the
/// sink is a memory-mapped file, and is large enough that every window still
/// has many sections to fill in parallel.
const WINDOW: u64 = 4 << 20;

/// One contiguous thing to write at a file offset.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Item {
    /// The ELF header.
    Ehdr,
    /// A section's contents.
    Section(OutSecId),
    /// The section header table.
    Shdrs,
    /// The program header table.
    Phdrs,
}

/// Serializes the plan into `sink`, window by window in file order.
///
/// Every byte of the output is written (gaps and padding with zeros), so the
/// sink's buffer may hold anything beforehand. Inside a window the sections are
/// filled in parallel into disjoint slices; the bytes never depend on the
/// number of threads. `after_window` is told the file offset up to which the
/// output is complete after each window.
pub(crate) fn write(
    files: &[InputFile<'_>],
    plan: &Plan,
    layout: &Layout,
    func_index: &[u32],
    sink: &mut dyn crate::config::OutputSink,
    after_window: &mut dyn FnMut(u64),
) -> Result<()> {
    let _span = tracing::info_span!("write", bytes = layout.file_size).entered();
    let size = usize::try_from(layout.file_size)
        .map_err(|_| Error::new(crate::ErrorKind::Overflow, "output too large"))?;
    sink.begin(size).map_err(|e| {
        if e.kind() == std::io::ErrorKind::OutOfMemory {
            Error::new(
                crate::ErrorKind::Overflow,
                format!("cannot allocate the {size}-byte output"),
            )
        } else {
            Error::new(
                crate::ErrorKind::Io,
                format!("cannot create the output: {e}"),
            )
        }
    })?;
    let len_of = |id: OutSecId| -> u64 {
        let s = plan.sec(id);
        if s.role == Role::ShStrTab {
            layout.shstrtab.len() as u64
        } else {
            s.size
        }
    };
    // Everything to write, by file offset.
    let mut items: Vec<(u64, u64, Item)> = Vec::with_capacity(plan.order.len() + 3);
    items.push((0, EHDR_SIZE as u64, Item::Ehdr));
    for &id in &plan.order {
        let s = plan.sec(id);
        let len = len_of(id);
        if !matches!(s.body, Body::NoBits | Body::Alias(_)) && s.role != Role::Null && len > 0 {
            items.push((layout.offsets[id.0 as usize], len, Item::Section(id)));
        }
    }
    let shdrs_len = (plan.sections.len() * SHDR_SIZE) as u64;
    items.push((layout.shoff, shdrs_len, Item::Shdrs));
    items.push((
        layout.phoff,
        (layout.phdrs.len() * PHDR_SIZE) as u64,
        Item::Phdrs,
    ));
    items.sort_unstable();
    let file_size = layout.file_size;
    let mut i = 0;
    let mut window_start = 0u64;
    while window_start < file_size {
        // Items [i, j) start in this window; it ends where the last one ends.
        let mut j = i;
        let mut window_end = window_start;
        while j < items.len() && (j == i || items[j].0 < window_start + WINDOW) {
            window_end = window_end.max(items[j].0 + items[j].1);
            j += 1;
        }
        if j == items.len() {
            window_end = file_size;
        }
        let buf = sink.window(window_start as usize..window_end as usize);
        let mut rest: &mut [u8] = buf;
        let mut pos = window_start;
        let mut jobs: Vec<(&mut [u8], Item)> = Vec::with_capacity(j - i);
        for &(off, len, item) in &items[i..j] {
            let tail = std::mem::take(&mut rest);
            let (gap, tail) = tail.split_at_mut((off - pos) as usize);
            gap.fill(0);
            let (mine, tail) = tail.split_at_mut(len as usize);
            jobs.push((mine, item));
            rest = tail;
            pos = off + len;
        }
        rest.fill(0);
        jobs.into_par_iter()
            .try_for_each(|(dst, item)| -> Result<()> {
                match item {
                    Item::Ehdr => {
                        write_ehdr(dst, files, plan, layout);
                        Ok(())
                    }
                    Item::Shdrs => {
                        write_shdrs(dst, plan, layout, func_index);
                        Ok(())
                    }
                    Item::Phdrs => {
                        write_phdrs(dst, layout);
                        Ok(())
                    }
                    Item::Section(id) => write_section(dst, id, files, plan, layout),
                }
            })?;
        sink.release(window_start as usize..window_end as usize);
        after_window(window_end);
        i = j;
        window_start = window_end;
    }
    Ok(())
}

/// The ELF header (`dst` is `EHDR_SIZE` bytes).
fn write_ehdr(out: &mut [u8], files: &[InputFile<'_>], plan: &Plan, layout: &Layout) {
    let (osabi, abiver, mut flags) = output_flags(files, plan);
    if plan.sections.len() as u64 >= u64::from(SHN_LORESERVE) && abiver >= 8 {
        // nvlink sets bit 24 of e_flags when the section count needs
        // extended numbering (measured: 0x06005a04 → 0x07005a04).
        flags |= EF_CUDA_EXTENDED_SECTIONS;
    }
    out.fill(0); // e_ident padding: every byte is written
    out[..4].copy_from_slice(b"\x7fELF");
    out[4] = 2;
    out[5] = 1;
    out[6] = 1;
    out[7] = osabi;
    out[8] = abiver;
    put16(out, 16, ET_EXEC);
    if plan.relocatable {
        super::rmode::set_rel_type(out);
    }
    put16(out, 18, EM_CUDA);
    put32(out, 20, 1);
    put64(out, 24, 0);
    put64(out, 32, layout.phoff);
    put64(out, 40, layout.shoff);
    put32(out, 48, flags);
    put16(out, 52, EHDR_SIZE as u16);
    put16(out, 54, PHDR_SIZE as u16);
    put16(out, 56, layout.phdrs.len() as u16);
    put16(out, 58, SHDR_SIZE as u16);
    // Extended numbering past SHN_LORESERVE sections: e_shnum 0, the count in
    // section 0's sh_size (written with the section headers).
    let count = plan.sections.len() as u64;
    let extended = count >= u64::from(SHN_LORESERVE);
    put16(out, 60, if extended { 0 } else { count as u16 });
    let shstrndx = plan
        .find_role(Role::ShStrTab)
        .map(|id| plan.index(id))
        .unwrap_or(0);
    put16(out, 62, shstrndx as u16);
}

/// The section header table (`out` starts at `e_shoff`). Text sections'
/// `sh_info` is the output symbol index of their function (`func_index`).
fn write_shdrs(out: &mut [u8], plan: &Plan, layout: &Layout, func_index: &[u32]) {
    let count = plan.sections.len() as u64;
    // The null header: zero, except the extended section count. (Every byte is
    // written: a sink's window may hold anything before, see `OutputSink`.)
    let null = SHDR_SIZE.min(out.len());
    out[..null].fill(0);
    if count >= u64::from(SHN_LORESERVE) {
        put64(out, 32, count);
    }
    let symtab_index = plan
        .find_role(Role::SymTab)
        .map(|id| plan.index(id))
        .unwrap_or(0);
    for (pos, &id) in plan.order.iter().enumerate() {
        let s = plan.sec(id);
        let o = pos * SHDR_SIZE;
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
            InfoTo::FuncSym { func, high } => {
                let sym = func_index.get(func as usize).copied().unwrap_or(0);
                high | (sym & 0x00ff_ffff)
            }
        };
        put32(out, o, layout.name_offsets[id.0 as usize]);
        put32(out, o + 4, s.sh_type);
        put64(out, o + 8, s.flags);
        put64(out, o + 16, 0);
        put64(out, o + 24, layout.offsets[id.0 as usize]);
        put64(out, o + 32, size);
        put32(out, o + 40, link);
        put32(out, o + 44, info);
        put64(out, o + 48, s.align);
        put64(out, o + 56, s.entsize);
    }
}

/// The program header table (`out` starts at `e_phoff`).
fn write_phdrs(out: &mut [u8], layout: &Layout) {
    for (i, p) in layout.phdrs.iter().enumerate() {
        let o = i * PHDR_SIZE;
        put32(out, o, p.p_type);
        put32(out, o + 4, p.flags);
        put64(out, o + 8, p.offset);
        put64(out, o + 16, 0);
        put64(out, o + 24, 0);
        put64(out, o + 32, p.filesz);
        put64(out, o + 40, p.memsz);
        put64(out, o + 48, 8);
    }
}

/// Where each input section the write copies lands in the output file: (file
/// offset, input file), for the page release after each window.
pub(crate) fn copied_spans(
    files: &[InputFile<'_>],
    plan: &Plan,
    layout: &Layout,
) -> Vec<(u64, FileId)> {
    let mut out = Vec::new();
    for f in files {
        for s in &f.cubin.sections {
            if s.data.is_empty() {
                continue;
            }
            if let Some(p) = plan.placement[f.id.0 as usize][s.index as usize] {
                if !matches!(plan.sec(p.out).body, Body::Pieces(_)) {
                    continue;
                }
                out.push((layout.offsets[p.out.0 as usize] + p.offset, f.id));
            }
        }
    }
    out
}

/// One section's contents (`dst` is exactly its file bytes); gaps are zeroed.
fn write_section(
    dst: &mut [u8],
    id: OutSecId,
    files: &[InputFile<'_>],
    plan: &Plan,
    layout: &Layout,
) -> Result<()> {
    let s = plan.sec(id);
    match &s.body {
        Body::Bytes(_) if s.role == Role::ShStrTab => {
            dst.copy_from_slice(&layout.shstrtab);
            Ok(())
        }
        Body::Bytes(b) if b.is_empty() => {
            dst.fill(0);
            Ok(())
        }
        Body::Bytes(b) => {
            dst.copy_from_slice(b);
            Ok(())
        }
        Body::Pieces(pieces) => {
            let mut end = 0usize;
            for p in pieces {
                let f = &files[p.file.0 as usize];
                let src = f.cubin.sections[p.section as usize].data;
                let at = p.offset as usize;
                // (Empty but for Blackwell weak-copy jump tables: no hashing
                // per piece otherwise.)
                let over = (!plan.overlaid.is_empty())
                    .then(|| plan.overlaid.get(&(p.file, p.section)))
                    .flatten();
                let src: &[u8] = over.map_or(src, Vec::as_slice);
                if at + src.len() > dst.len() {
                    return Err(Error::new(
                        crate::ErrorKind::Unsupported,
                        format!(
                            "piece of {} bytes at {at:#x} past the end of output section {} ({:#x} bytes)",
                            src.len(),
                            plan.sec(id).name,
                            dst.len()
                        ),
                    )
                    .in_file(f.name)
                    .in_section(f.cubin.sections[p.section as usize].name));
                }
                if at > end {
                    dst[end..at].fill(0);
                }
                let piece = &mut dst[at..at + src.len()];
                end = end.max(at + src.len());
                piece.copy_from_slice(src);
                if over.is_some() {
                    continue; // its own bytes (and patches) are not written
                }
                for patch in plan.patches[p.file.0 as usize].get(p.section) {
                    reloc::apply::apply_resolved(
                        patch.rtype,
                        &mut piece[patch.offset as usize..],
                        patch.value,
                        patch.bank.map(u64::from),
                    )
                    .map_err(|e| {
                        e.in_file(f.name)
                            .in_section(f.cubin.sections[p.section as usize].name)
                            .at(patch.offset)
                    })?;
                }
            }
            if end < dst.len() {
                dst[end..].fill(0);
            }
            Ok(())
        }
        Body::NoBits | Body::Alias(_) => Ok(()),
    }
}

/// Copies a finished image into `sink` (one window).
pub(crate) fn copy_to(image: &[u8], sink: &mut dyn crate::config::OutputSink) -> Result<()> {
    sink.begin(image.len()).map_err(|e| {
        Error::new(
            crate::ErrorKind::Io,
            format!("cannot create the output: {e}"),
        )
    })?;
    sink.window(0..image.len()).copy_from_slice(image);
    sink.release(0..image.len());
    Ok(())
}
