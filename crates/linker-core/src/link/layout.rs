//! Phase 8: file offsets and program headers.
//!
//! File order: ELF header, section contents in section order (each at its
//! alignment; NOBITS sections take no space), the section header table, then
//! the program header table — as nvlink writes it.
//!
//! Program headers (all with `p_vaddr = p_paddr = 0`, `p_align = 8`; the
//! driver places the segments):
//! - sm_75..sm_89 (ptxas and nvlink agree): `PT_PHDR` R+X over the header
//!   table; `PT_LOAD` R+X from the first constant bank through the last text
//!   section; `PT_LOAD` R+W over `.nv.global.init` (filesz) plus the NOBITS
//!   sections (memsz) when there is data; `PT_LOAD` R+X over the header table.
//! - sm_90 and later (the seed's six-segment scheme, as ptxas lays out a final
//!   cubin): `PT_PHDR` R, `PT_LOAD` R over the header table, `PT_LOAD` R over
//!   `.nv.constant3`/`.nv.constant4` (only when present), `PT_LOAD` R+X over the
//!   text, `PT_LOAD` R+W over data (filesz) + NOBITS (memsz) when present,
//!   `PT_LOAD` R over the `.nv.constant0.*` parameter banks. nvlink itself
//!   writes only 3–4 headers for sm_90; culink follows ptxas here (docs/).

use super::sections::{Body, Plan, Role};
use super::{InputFile, OutSecId};
use crate::arch::SmArch;
use crate::cubin::{EHDR_SIZE, PHDR_SIZE, SHDR_SIZE};
use crate::elf::*;

/// One program header to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Phdr {
    pub p_type: u32,
    pub flags: u32,
    pub offset: u64,
    pub filesz: u64,
    pub memsz: u64,
}

/// The final file layout.
pub(crate) struct Layout {
    /// File offset of each section (by `OutSecId`).
    pub offsets: Vec<u64>,
    /// `.shstrtab` contents and each section's name offset (by `OutSecId`).
    pub shstrtab: Vec<u8>,
    pub name_offsets: Vec<u32>,
    pub shoff: u64,
    pub phoff: u64,
    pub phdrs: Vec<Phdr>,
    pub file_size: u64,
}

fn align_up(v: u64, a: u64) -> u64 {
    if a <= 1 {
        v
    } else {
        v.div_ceil(a) * a
    }
}

/// Computes offsets and program headers; section sizes are final.
pub(crate) fn compute(plan: &Plan, arch: SmArch, _files: &[InputFile<'_>]) -> Layout {
    let _span = tracing::info_span!("layout").entered();
    // .shstrtab: each section's name in section order. Not deduplicated:
    // output section names are distinct but for same-named local functions of
    // different inputs (nvlink does not share them either: its table is 45%
    // larger at N = 2000), and hashing 80k names cost ~5 ms.
    let total: usize = plan.sections.iter().map(|s| s.name.len() + 1).sum();
    let mut shstrtab = Vec::with_capacity(total + 1);
    shstrtab.push(0u8);
    let mut name_offsets = vec![0u32; plan.sections.len()];
    for &id in &plan.order {
        let name = plan.sec(id).name.as_str();
        if name.is_empty() {
            continue;
        }
        name_offsets[id.0 as usize] = shstrtab.len() as u32;
        shstrtab.extend_from_slice(name.as_bytes());
        shstrtab.push(0);
    }
    let size_of = |id: OutSecId| -> u64 {
        let s = plan.sec(id);
        if s.role == Role::ShStrTab {
            shstrtab.len() as u64
        } else {
            s.size
        }
    };
    let mut offsets = vec![0u64; plan.sections.len()];
    let mut cur = EHDR_SIZE as u64;
    for &id in plan.order.iter().skip(1) {
        let s = plan.sec(id);
        let off = align_up(cur, s.align);
        offsets[id.0 as usize] = off;
        match s.body {
            Body::NoBits | Body::Alias(_) => {}
            _ => cur = off + size_of(id),
        }
    }
    // Aliases share their target's bytes.
    for &id in &plan.order {
        if let Body::Alias(t) = plan.sec(id).body {
            offsets[id.0 as usize] = offsets[t.0 as usize];
        }
    }
    let shoff = align_up(cur, 8);
    let shnum = plan.sections.len() as u64;
    let phoff = shoff + shnum * SHDR_SIZE as u64;

    // Program headers.
    let six = arch.is_sm90_or_later();
    let span_of = |roles: &[Role]| -> Option<(u64, u64)> {
        let mut lo = u64::MAX;
        let mut hi = 0u64;
        for &id in &plan.order {
            let s = plan.sec(id);
            if roles.contains(&s.role) && !matches!(s.body, Body::NoBits | Body::Alias(_)) {
                let o = offsets[id.0 as usize];
                lo = lo.min(o);
                hi = hi.max(o + s.size);
            }
        }
        (lo != u64::MAX).then(|| (lo, hi - lo))
    };
    // The data segment: PROGBITS data (filesz, rounded to its alignment) then NOBITS (memsz).
    let data = {
        let mut start: Option<u64> = None;
        let mut filesz = 0u64;
        let mut max_align = 1u64;
        for &id in &plan.order {
            let s = plan.sec(id);
            if s.role == Role::Data {
                start.get_or_insert(offsets[id.0 as usize]);
                filesz = align_up(filesz, s.align) + s.size;
                max_align = max_align.max(s.align);
            }
        }
        filesz = align_up(filesz, max_align);
        let mut memsz = filesz;
        let mut any_nobits = false;
        for &id in &plan.order {
            let s = plan.sec(id);
            if s.role == Role::NoBits {
                start.get_or_insert(offsets[id.0 as usize]);
                memsz = align_up(memsz, s.align) + s.size;
                any_nobits = true;
            }
        }
        start.filter(|_| filesz > 0 || any_nobits).map(|off| Phdr {
            p_type: PT_LOAD,
            flags: PF_R | PF_W,
            offset: off,
            filesz,
            memsz,
        })
    };
    let load = |flags: u32, (offset, size): (u64, u64)| Phdr {
        p_type: PT_LOAD,
        flags,
        offset,
        filesz: size,
        memsz: size,
    };
    let mut phdrs: Vec<Phdr> = Vec::new();
    if six {
        phdrs.push(Phdr {
            p_type: PT_PHDR,
            flags: PF_R,
            offset: 0,
            filesz: 0,
            memsz: 0,
        });
        phdrs.push(load(PF_R, (0, 0)));
        if let Some(span) = span_of(&[Role::ConstBank]) {
            phdrs.push(load(PF_R, span));
        }
        if let Some(span) = span_of(&[Role::Text]) {
            phdrs.push(load(PF_R | PF_X, span));
        }
        if let Some(d) = data {
            phdrs.push(d);
        }
        if let Some(span) = span_of(&[Role::Const0]) {
            phdrs.push(load(PF_R, span));
        }
    } else {
        phdrs.push(Phdr {
            p_type: PT_PHDR,
            flags: PF_R | PF_X,
            offset: 0,
            filesz: 0,
            memsz: 0,
        });
        if let Some(span) = span_of(&[Role::ConstBank, Role::Const0, Role::Text]) {
            phdrs.push(load(PF_R | PF_X, span));
        }
        if let Some(d) = data {
            phdrs.push(d);
        }
        phdrs.push(load(PF_R | PF_X, (0, 0)));
    }
    // Patch the entries that cover the header table itself.
    let table = (phdrs.len() * PHDR_SIZE) as u64;
    let last = phdrs.len() - 1;
    for (i, p) in phdrs.iter_mut().enumerate() {
        let covers_table = i == 0 || (six && i == 1) || (!six && i == last);
        if covers_table {
            p.offset = phoff;
            p.filesz = table;
            p.memsz = table;
        }
    }
    Layout {
        offsets,
        shstrtab,
        name_offsets,
        shoff,
        phoff,
        phdrs,
        file_size: phoff + table,
    }
}
