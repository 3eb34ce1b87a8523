//! A deterministic, readable dump of a cubin: header, sections, program
//! headers, symbols, relocations (with R_CUDA names), the EIATTR records of every
//! `.nv.info*` section (symbol indices shown as names), `.nv.compat`, notes and
//! the call graph / prototypes.
//!
//! The output depends only on the file's bytes; it is meant for people and for
//! textual diffs of two dumps (`culink dump a | diff - <(culink dump b)`).

use crate::cubin::{Cubin, Section};
use crate::elf::*;
use crate::view::{self, AttrValue, SymWords};
use std::fmt::{self, Write};

/// The readable name of symbol `index`: its name, or for a section symbol
/// without a name the section's name; `#index` when out of range; `(none)` for 0.
pub fn symbol_display_name(cubin: &Cubin<'_>, index: u32) -> String {
    if index == 0 {
        return "(none)".into();
    }
    match cubin.symbols.get(index as usize) {
        Some(s) if !s.name.is_empty() => s.name.to_string(),
        Some(s) if s.ty() == STT_SECTION => cubin
            .symbol_section(s)
            .map(|sec| sec.name.to_string())
            .unwrap_or_else(|| format!("#{index}")),
        Some(_) => format!("#{index}"),
        None => format!("#{index}?"),
    }
}

/// A readable `e_type`.
pub fn elf_type_name(e_type: u16) -> String {
    match e_type {
        ET_REL => "REL".into(),
        ET_EXEC => "EXEC".into(),
        t => format!("Unknown({t})"),
    }
}

/// A readable `sh_flags` (`A|X|I|...`), with unknown bits in hex.
pub fn section_flags_name(flags: u64) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut rest = flags;
    for (bit, name) in [
        (SHF_WRITE, "W"),
        (SHF_ALLOC, "A"),
        (SHF_EXECINSTR, "X"),
        (SHF_INFO_LINK, "I"),
        (SHF_CUDA_NOTE_CUINFO, "CUINFO"),
        (SHF_CUDA_NOTE_TKINFO, "TKINFO"),
        (SHF_CUDA_MERCURY, "MERCURY"),
    ] {
        if flags & bit != 0 {
            parts.push(name.into());
            rest &= !bit;
        }
    }
    if rest != 0 {
        parts.push(format!("{rest:#x}"));
    }
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join("|")
    }
}

/// A readable `p_type`.
pub fn segment_type_name(p_type: u32) -> String {
    match p_type {
        0 => "NULL".into(),
        PT_LOAD => "LOAD".into(),
        PT_PHDR => "PHDR".into(),
        t => format!("Unknown({t:#x})"),
    }
}

/// A readable `p_flags` (`R`, `RX`, `RW`, ...).
pub fn segment_flags_name(flags: u32) -> String {
    let mut s = String::new();
    if flags & PF_R != 0 {
        s.push('R');
    }
    if flags & PF_W != 0 {
        s.push('W');
    }
    if flags & PF_X != 0 {
        s.push('X');
    }
    let rest = flags & !(PF_R | PF_W | PF_X);
    if rest != 0 {
        s.push_str(&format!("+{rest:#x}"));
    }
    if s.is_empty() {
        s.push('-');
    }
    s
}

/// Whether `sh_info` of this section is a symbol index (the `.text.*` convention),
/// and whether its top byte is a register count (sm_75..sm_89).
pub(crate) fn info_is_text_symbol(cubin: &Cubin<'_>, s: &Section<'_>) -> Option<bool> {
    let is_text = s.flags & SHF_EXECINSTR != 0 && Some(s.link) == cubin.symtab && s.link != 0;
    is_text.then(|| !cubin.arch().is_sm90_or_later())
}

/// Renders an EIATTR record's value, with symbol-index words replaced by names
/// (`sym` renders an index). Used by the dump and by diff.
pub(crate) fn render_attr_value(
    attr: u8,
    value: &AttrValue<'_>,
    sym: &dyn Fn(u32) -> String,
    symbolic: bool,
) -> String {
    match value {
        AttrValue::None => String::new(),
        AttrValue::Byte(b) => format!("{b:#x}"),
        AttrValue::Half(h) => format!("{h:#x}"),
        AttrValue::Bytes(bytes) => {
            let words = if symbolic {
                view::symbol_words(attr, bytes.len())
            } else {
                SymWords::None
            };
            if bytes.len() % 4 != 0 {
                return format!("[{}]", view::hex(bytes));
            }
            let parts: Vec<String> = bytes
                .chunks_exact(4)
                .enumerate()
                .map(|(k, c)| {
                    let w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    match (words, k) {
                        (SymWords::All, _) | (SymWords::First, 0) => sym(w),
                        _ => format!("{w:#x}"),
                    }
                })
                .collect();
            parts.join(" ")
        }
    }
}

/// Writes the dump of `cubin` to `out`.
pub fn dump(cubin: &Cubin<'_>, out: &mut impl Write) -> fmt::Result {
    let _span = tracing::debug_span!("dump").entered();
    let h = &cubin.header;
    writeln!(out, "ELF header:")?;
    writeln!(out, "  type        {}", elf_type_name(h.e_type))?;
    writeln!(out, "  machine     {} (EM_CUDA)", h.e_machine)?;
    writeln!(
        out,
        "  class       {} data {} osabi {:#x} abi version {}",
        h.ident[4],
        h.ident[5],
        h.osabi(),
        h.abi_version()
    )?;
    writeln!(out, "  version     {}", h.e_version)?;
    writeln!(out, "  entry       {:#x}", h.e_entry)?;
    writeln!(out, "  flags       {:#010x} ({})", h.e_flags, cubin.arch())?;
    writeln!(
        out,
        "  phoff {:#x} shoff {:#x} phnum {} shnum {} shstrndx {}",
        h.e_phoff,
        h.e_shoff,
        h.e_phnum,
        cubin.sections.len(),
        h.e_shstrndx
    )?;

    writeln!(out, "\nSections ({}):", cubin.sections.len())?;
    writeln!(
        out,
        "  [Nr] Name                             Type                 Flags        Offset   Size     Link Info                         Align EntSz"
    )?;
    for s in &cubin.sections {
        let info = match info_is_text_symbol(cubin, s) {
            Some(true) => format!(
                "{:#x} ({} regs {})",
                s.info,
                symbol_display_name(cubin, s.info & 0x00ff_ffff),
                s.info >> 24
            ),
            Some(false) => format!("{:#x} ({})", s.info, symbol_display_name(cubin, s.info)),
            None if s.flags & SHF_INFO_LINK != 0 || s.is_reloc() => {
                format!("{} ({})", s.info, cubin.section_name(s.info))
            }
            None => format!("{:#x}", s.info),
        };
        writeln!(
            out,
            "  [{:2}] {:32} {:20} {:12} {:#08x} {:#08x} {:4} {:28} {:5} {}",
            s.index,
            s.name,
            section_type_name(s.sh_type),
            section_flags_name(s.flags),
            s.offset,
            s.size,
            s.link,
            info,
            s.addralign,
            s.entsize
        )?;
    }

    writeln!(out, "\nProgram headers ({}):", cubin.program_headers.len())?;
    for (i, p) in cubin.program_headers.iter().enumerate() {
        writeln!(
            out,
            "  [{i}] {:5} {:3} offset {:#07x} vaddr {:#x} paddr {:#x} filesz {:#07x} memsz {:#07x} align {:#x}{}",
            segment_type_name(p.p_type),
            segment_flags_name(p.flags),
            p.offset,
            p.vaddr,
            p.paddr,
            p.filesz,
            p.memsz,
            p.align,
            covered_sections(cubin, p.offset, p.filesz.max(p.memsz))
        )?;
    }

    writeln!(out, "\nSymbols ({}):", cubin.symbols.len())?;
    for (i, s) in cubin.symbols.iter().enumerate() {
        let sec = match (s.section(), s.shndx) {
            (Some(i), _) => cubin.section_name(i),
            (None, SHN_UNDEF) => "UND".to_string(),
            (None, SHN_ABS) => "ABS".to_string(),
            (None, SHN_COMMON) => "COMMON".to_string(),
            (None, n) => format!("{n:#x}"),
        };
        writeln!(
            out,
            "  [{:3}] {:7} {:11} {:14} value {:#08x} size {:#06x} {:24} {}",
            i,
            symbol_bind_name(s.bind()),
            symbol_type_name(s.ty()),
            symbol_other_name(s.other),
            s.value,
            s.size,
            sec,
            symbol_display_name(cubin, i as u32)
        )?;
    }

    for s in cubin.sections.iter().filter(|s| s.is_reloc()) {
        let n = cubin.relocs(s).count();
        writeln!(
            out,
            "\nRelocations in {} ({} entries, target {}):",
            s.name,
            n,
            cubin.section_name(s.info)
        )?;
        for r in cubin.relocs(s) {
            write!(
                out,
                "  {:#08x} {:28} {}",
                r.offset,
                view::reloc_name(r.rtype),
                symbol_display_name(cubin, r.sym)
            )?;
            if r.is_rela {
                write!(out, " {:+#x}", r.addend)?;
            }
            writeln!(out)?;
        }
    }

    let sym = |i: u32| symbol_display_name(cubin, i);
    for s in &cubin.sections {
        match s.sh_type {
            SHT_CUDA_INFO | SHT_CUDA_COMPAT => {
                let compat = s.sh_type == SHT_CUDA_COMPAT;
                writeln!(out, "\nAttributes in {}:", s.name)?;
                match view::parse_attrs(s.data) {
                    Ok(recs) => {
                        for r in recs {
                            let name = if compat {
                                view::eicompat_name(r.attr)
                            } else {
                                view::eiattr_name(r.attr)
                            };
                            writeln!(
                                out,
                                "  {:#06x} {:40} {}",
                                r.offset,
                                name,
                                render_attr_value(r.attr, &r.value, &sym, !compat)
                            )?;
                        }
                    }
                    Err(e) => writeln!(out, "  (undecodable: {e})")?,
                }
            }
            SHT_NOTE => {
                writeln!(out, "\nNotes in {}:", s.name)?;
                match view::parse_notes(s.data) {
                    Ok(notes) => {
                        for n in notes {
                            writeln!(out, "  {:#06x} {}", n.offset, view::describe_note(&n))?;
                        }
                    }
                    Err(e) => writeln!(out, "  (undecodable: {e})")?,
                }
            }
            SHT_CUDA_CALLGRAPH | SHT_CUDA_PROTOTYPE => {
                let cg = s.sh_type == SHT_CUDA_CALLGRAPH;
                let what = if cg { "Call graph" } else { "Prototypes" };
                writeln!(out, "\n{what} in {}:", s.name)?;
                match graph_items(cubin, s, &sym) {
                    Ok(items) => {
                        for i in items {
                            writeln!(out, "  {i}")?;
                        }
                    }
                    Err(e) => writeln!(out, "  (undecodable: {e})")?,
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The entries of a `.nv.callgraph` or `.nv.prototype` section, rendered with
/// symbol names (and prototype signatures from `.strtab`), one string each.
pub(crate) fn graph_items(
    cubin: &Cubin<'_>,
    s: &Section<'_>,
    sym: &dyn Fn(u32) -> String,
) -> Result<Vec<String>, String> {
    use crate::cubin::callgraph::{self, CallGraphEntry, CallGraphList};
    let strtab = cubin
        .symtab
        .and_then(|i| cubin.sections.get(i as usize))
        .and_then(|st| cubin.sections.get(st.link as usize))
        .map(|st| st.data)
        .unwrap_or(&[]);
    // Prototype ids are `.strtab` offsets of signature strings (`#ii`). An
    // empty string is "no signature" wherever it lies: ptxas writes offset 0,
    // nvlink an empty string of its own (e.g. offset 85 after libcudadevrt's
    // signatures).
    let signature = |off: u32| -> String {
        let rest = strtab.get(off as usize..).unwrap_or(&[]);
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        let text = String::from_utf8_lossy(&rest[..end]);
        if text.starts_with('#') || (text.is_empty() && (off as usize) < strtab.len()) {
            format!("{text:?}")
        } else {
            format!("{off}")
        }
    };
    if s.sh_type == SHT_CUDA_PROTOTYPE {
        let entries = callgraph::parse_prototypes(s.data).map_err(|e| e.to_string())?;
        return Ok(entries
            .iter()
            .map(|e| {
                let rest = strtab.get(e.signature as usize..).unwrap_or(&[]);
                let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
                format!(
                    "{} signature {:?}",
                    sym(e.symbol),
                    String::from_utf8_lossy(&rest[..end])
                )
            })
            .collect());
    }
    let entries = callgraph::parse_callgraph(s.data).map_err(|e| e.to_string())?;
    let mut list = CallGraphList(0);
    Ok(entries
        .iter()
        .map(|e| match *e {
            CallGraphEntry::Marker(l) => {
                list = l;
                format!("list {l}")
            }
            CallGraphEntry::Pair { first, second } => match list {
                CallGraphList::CALLS | CallGraphList::ADDRESS_REFS => {
                    format!("{list}: {} -> {}", sym(first), sym(second))
                }
                CallGraphList::ADDRESS_TAKEN | CallGraphList::INDIRECT_CALLS => {
                    format!("{list}: {} prototype {}", sym(first), signature(second))
                }
                _ => format!("{list}: {} {second:#x}", sym(first)),
            },
        })
        .collect())
}

fn covered_sections(cubin: &Cubin<'_>, off: u64, len: u64) -> String {
    let end = off.saturating_add(len);
    let names: Vec<&str> = cubin
        .sections
        .iter()
        .filter(|s| s.index != 0 && s.flags & SHF_ALLOC != 0 && s.offset >= off && s.offset < end)
        .map(|s| s.name)
        .collect();
    if names.is_empty() {
        String::new()
    } else {
        format!(" [{}]", names.join(" "))
    }
}

/// The dump as a `String`.
pub fn dump_to_string(cubin: &Cubin<'_>) -> String {
    let mut s = String::new();
    // Writing into a String cannot fail.
    let _ = dump(cubin, &mut s);
    s
}
