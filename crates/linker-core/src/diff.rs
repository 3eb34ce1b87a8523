//! Semantic equivalence of two cubins: does `ours` mean to the CUDA driver what
//! `reference` (nvlink's output) means?
//!
//! The rules are written down in `docs/equivalence.md`. In short: header fields,
//! every non-string section by name (type, flags, alignment, size, entsize,
//! contents; `sh_link`/`sh_info` by the *name* they refer to), symbols,
//! relocations, EIATTR records, call graph and prototypes as multisets with
//! symbol indices resolved to names, and `.note.nv.tkinfo` without its first
//! (linker's own) note; the Blackwell Mercury family (`.nv.merc.symtab`,
//! `.nv.merc.rela.*`, `.nv.merc.nv.info*`, capsule headers) likewise, with
//! Mercury symbol indices resolved through `.nv.merc.symtab`. Section order, file offsets, symbol order and program
//! headers are not compared; [`check_program_headers`] checks the latter
//! against the layout rule instead.

use crate::cubin::{Cubin, Section};
use crate::dump::{graph_items, info_is_text_symbol, render_attr_value, symbol_display_name};
use crate::elf::*;
use crate::view;
use std::collections::BTreeMap;
use std::fmt;

/// What part of the file a [`Difference`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DiffKind {
    /// An ELF header field.
    Header,
    /// A section present on one side only.
    Section,
    /// A section header field (type, flags, alignment, size, entsize, link, info).
    SectionHeader,
    /// Section contents other than text.
    Contents,
    /// Instruction bytes of a `.text.*` section.
    Text,
    /// A symbol.
    Symbol,
    /// A relocation.
    Relocation,
    /// An EIATTR (`.nv.info*`) or EICOMPAT (`.nv.compat`) record.
    Attribute,
    /// A `.nv.callgraph` or `.nv.prototype` entry.
    CallGraph,
    /// A note of `.note.nv.*`.
    Note,
    /// The program header rule ([`check_program_headers`]).
    ProgramHeader,
}

/// One difference, described in linker terms.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Difference {
    /// What it is about.
    pub kind: DiffKind,
    /// The description, e.g. "text of function `kern_a` (.text.kern_a) differs at instruction offset 0x40".
    pub message: String,
}

impl Difference {
    fn new(kind: DiffKind, message: impl Into<String>) -> Self {
        Difference {
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Whether `ours` and `reference` are equivalent ([`diff`] finds nothing).
pub fn equivalent(ours: &Cubin<'_>, reference: &Cubin<'_>) -> bool {
    diff(ours, reference).is_empty()
}

/// Every difference between `ours` and `reference`, in a deterministic order.
pub fn diff(ours: &Cubin<'_>, reference: &Cubin<'_>) -> Vec<Difference> {
    let _span = tracing::debug_span!("diff").entered();
    let mut out = Vec::new();
    diff_header(ours, reference, &mut out);
    let (mut o, mut r) = (Side::new(ours), Side::new(reference));
    pair_hashed(&o, &mut r);
    for name in FRAME_SECTIONS {
        let (Some(a), Some(b)) = (only_section(ours, name), only_section(reference, name)) else {
            continue;
        };
        if a.data != b.data {
            if let Some(map) = frame_remap(a.data, b.data) {
                o.frames.insert(name.to_string(), map);
            }
        }
    }
    diff_sections(&o, &r, &mut out);
    diff_symbols(&o, &r, &mut out);
    diff_relocs(&o, &r, &mut out);
    diff_merc_symbols(&o, &r, &mut out);
    diff_merc_relocs(&o, &r, &mut out);
    out
}

fn field<T: PartialEq + fmt::LowerHex>(
    out: &mut Vec<Difference>,
    kind: DiffKind,
    what: &str,
    o: T,
    r: T,
) {
    if o != r {
        out.push(Difference::new(
            kind,
            format!("{what}: ours {o:#x}, reference {r:#x}"),
        ));
    }
}

fn diff_header(o: &Cubin<'_>, r: &Cubin<'_>, out: &mut Vec<Difference>) {
    let (a, b) = (&o.header, &r.header);
    let k = DiffKind::Header;
    field(out, k, "ELF header e_type", a.e_type, b.e_type);
    field(out, k, "ELF header e_machine", a.e_machine, b.e_machine);
    field(out, k, "ELF header EI_CLASS", a.ident[4], b.ident[4]);
    field(out, k, "ELF header EI_DATA", a.ident[5], b.ident[5]);
    field(out, k, "ELF header EI_OSABI", a.osabi(), b.osabi());
    field(
        out,
        k,
        "ELF header EI_ABIVERSION",
        a.abi_version(),
        b.abi_version(),
    );
    if a.e_flags != b.e_flags {
        out.push(Difference::new(
            k,
            format!(
                "ELF header e_flags: ours {:#010x} ({}), reference {:#010x} ({})",
                a.e_flags,
                a.arch(),
                b.e_flags,
                b.arch()
            ),
        ));
    }
    field(out, k, "ELF header e_version", a.e_version, b.e_version);
    field(out, k, "ELF header e_entry", a.e_entry, b.e_entry);
}

/// A cubin with the names diff uses for its symbols: the symbol's name, or, when
/// several defined symbols share it (two local functions `helper` from different
/// objects), the name qualified so that the copies can be told apart:
/// `helper#[.text.kern1]` by the sections whose relocations refer to it (debug
/// sections aside) when that set is unique among the copies, else
/// `helper#<hash>` by a hash of its defining section's contents, value and size.
/// A section symbol of a duplicated section takes the qualifier of the function
/// defined at offset 0 of that section. So a relocation or attribute that names
/// the wrong `helper` is still caught, and a changed instruction inside one copy
/// does not rename it (the two sides' unmatched hash-qualified copies are paired
/// by [`pair_hashed`]).
struct Side<'a, 'd> {
    c: &'a Cubin<'d>,
    ids: Vec<String>,
    /// Per symbol: its id is qualified by [`content_hash`].
    hashed: Vec<bool>,
    /// `.nv.merc.symtab` (Blackwell), when present.
    merc: Vec<MercSym>,
    /// Frame sections whose entries mean what the reference's do though their
    /// bytes differ ([`frame_remap`]), by name: where each of our entries
    /// starts and ends, and where the reference's same entry starts (our
    /// relocations into them are compared at the reference's offsets).
    frames: BTreeMap<String, Vec<(u64, u64, u64)>>,
}

/// One `.nv.merc.symtab` entry, with its name resolved.
#[derive(Debug, Clone)]
struct MercSym {
    name: String,
    info: u8,
    other: u8,
    shndx: u16,
    /// The `.nv.merc.symtab_shndx` entry of an `SHN_XINDEX` symbol.
    ext_shndx: Option<u32>,
    value: u64,
    size: u64,
}

/// Reads the Mercury symbol table of `c` (empty when there is none or it is unreadable).
fn merc_symbols(c: &Cubin<'_>) -> Vec<MercSym> {
    let Some(st) = c
        .sections
        .iter()
        .find(|s| s.sh_type == SHT_CUDA_MERC_SYMTAB)
    else {
        return Vec::new();
    };
    let strtab = c
        .sections
        .get(st.link as usize)
        .map(|s| s.data)
        .unwrap_or(&[]);
    // `.nv.merc.symtab_shndx`: the real index of SHN_XINDEX entries.
    let ext = c
        .sections
        .iter()
        .find(|s| s.sh_type == SHT_SYMTAB_SHNDX && s.link == st.index)
        .map(|s| s.data)
        .unwrap_or(&[]);
    st.data
        .chunks_exact(24)
        .enumerate()
        .map(|(i, e)| {
            let off = u32::from_le_bytes([e[0], e[1], e[2], e[3]]) as usize;
            let name = strtab
                .get(off..)
                .and_then(|r| r.iter().position(|&b| b == 0).map(|n| &r[..n]))
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_else(|| format!("#name{off:#x}"));
            let shndx = u16::from_le_bytes([e[6], e[7]]);
            let ext_shndx = (shndx == SHN_XINDEX)
                .then(|| ext.get(i * 4..i * 4 + 4))
                .flatten()
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            MercSym {
                name,
                info: e[4],
                other: e[5],
                shndx,
                ext_shndx,
                value: u64::from_le_bytes(e[8..16].try_into().unwrap_or([0; 8])),
                size: u64::from_le_bytes(e[16..24].try_into().unwrap_or([0; 8])),
            }
        })
        .collect()
}

/// The diff name of Mercury symbol `index` (its name; `#index` when out of range).
fn merc_id(c: &Side<'_, '_>, index: u32) -> String {
    match c.merc.get(index as usize) {
        Some(m) if index != 0 => m.name.clone(),
        Some(_) => String::new(),
        None => format!("#{index}"),
    }
}

fn content_hash(c: &Cubin<'_>, sym: &crate::cubin::Symbol<'_>) -> u32 {
    // FNV-1a over the defining section's bytes, the value and the size.
    let mut h: u32 = 0x811c_9dc5;
    let data = c.symbol_section(sym).map(|s| s.data).unwrap_or(&[]);
    for b in data
        .iter()
        .copied()
        .chain(sym.value.to_le_bytes())
        .chain(sym.size.to_le_bytes())
    {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    h
}

impl<'a, 'd> Side<'a, 'd> {
    fn new(c: &'a Cubin<'d>) -> Self {
        let n = c.symbols.len();
        let names: Vec<String> = (0..n as u32).map(|i| symbol_display_name(c, i)).collect();
        let mut groups: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
        for (i, _) in c
            .symbols
            .iter()
            .enumerate()
            .filter(|(i, s)| *i != 0 && !s.is_undefined())
        {
            groups.entry(names[i].as_str()).or_default().push(i as u32);
        }
        let mut ids = names.clone();
        let dups: Vec<&Vec<u32>> = groups.values().filter(|g| g.len() > 1).collect();
        if dups.is_empty() {
            return Side {
                c,
                ids,
                hashed: vec![false; n],
                merc: merc_symbols(c),
                frames: BTreeMap::new(),
            };
        }
        // Which sections' relocations refer to each symbol.
        let mut referrers: Vec<std::collections::BTreeSet<String>> = vec![Default::default(); n];
        for rs in c.sections.iter().filter(|s| s.is_reloc()) {
            let target = c.section_name(rs.info);
            if target.starts_with(".debug") {
                continue;
            }
            for r in c.relocs(rs) {
                if let Some(set) = referrers.get_mut(r.sym as usize) {
                    set.insert(target.clone());
                }
            }
        }
        let mut section_syms = Vec::new();
        let mut hashed = vec![false; n];
        for g in &dups {
            for &i in g.iter() {
                let sym = &c.symbols[i as usize];
                if sym.ty() == STT_SECTION {
                    section_syms.push(i);
                    continue;
                }
                let refs = &referrers[i as usize];
                let unique = !refs.is_empty()
                    && g.iter()
                        .filter(|&&j| &referrers[j as usize] == refs)
                        .count()
                        == 1;
                ids[i as usize] = if unique {
                    let list: Vec<&str> = refs.iter().map(String::as_str).collect();
                    format!("{}#[{}]", names[i as usize], list.join(","))
                } else {
                    hashed[i as usize] = true;
                    format!("{}#{:08x}", names[i as usize], content_hash(c, sym))
                };
            }
        }
        for i in section_syms {
            let sym = &c.symbols[i as usize];
            let func = c.symbols.iter().enumerate().position(|(fi, f)| {
                f.ty() == STT_FUNC
                    && f.section() == sym.section()
                    && f.value == 0
                    && fi != i as usize
            });
            ids[i as usize] = match func {
                Some(f) if ids[f] != names[f] => {
                    hashed[i as usize] = hashed[f];
                    let q = &ids[f][names[f].len()..];
                    format!("{}{q}", names[i as usize])
                }
                _ => {
                    hashed[i as usize] = true;
                    format!("{}#{:08x}", names[i as usize], content_hash(c, sym))
                }
            };
        }
        Side {
            c,
            ids,
            hashed,
            merc: merc_symbols(c),
            frames: BTreeMap::new(),
        }
    }
}

impl<'d> std::ops::Deref for Side<'_, 'd> {
    type Target = Cubin<'d>;
    fn deref(&self) -> &Cubin<'d> {
        self.c
    }
}

/// Gives the reference's content-hash-qualified symbols that match none of
/// ours the ids of ours that match none of the reference's, pairing the
/// copies of one name in section order (then value), when both sides have
/// the same number of such copies. A copy whose code differs (nvlink
/// re-finalized one of two `static` kernels `k` at sm_100+) is then reported
/// as the difference in its section, not as one symbol missing and another
/// extra, with every attribute and relocation naming it following.
fn pair_hashed(o: &Side<'_, '_>, r: &mut Side<'_, '_>) {
    type Copies = BTreeMap<String, Vec<(u32, u64, u32)>>;
    let unmatched = |a: &Side<'_, '_>, b: &Side<'_, '_>| -> Copies {
        let theirs: std::collections::HashSet<&str> = b.ids.iter().map(String::as_str).collect();
        let mut by_name = Copies::new();
        for (i, id) in a.ids.iter().enumerate() {
            if !a.hashed[i] || theirs.contains(id.as_str()) {
                continue;
            }
            let Some((base, _)) = id.rsplit_once('#') else {
                continue;
            };
            let sym = &a.c.symbols[i];
            by_name.entry(base.to_string()).or_default().push((
                sym.section().unwrap_or(u32::MAX),
                sym.value,
                i as u32,
            ));
        }
        for v in by_name.values_mut() {
            v.sort_unstable();
        }
        by_name
    };
    let (ours, refs) = (unmatched(o, r), unmatched(r, o));
    for (base, mine) in &ours {
        match refs.get(base) {
            Some(theirs) if theirs.len() == mine.len() => {
                for (a, b) in mine.iter().zip(theirs) {
                    r.ids[b.2 as usize] = o.ids[a.2 as usize].clone();
                }
            }
            _ => {}
        }
    }
}

/// The diff name of symbol `index` (see [`Side`]).
fn sym_id(c: &Side<'_, '_>, index: u32) -> String {
    match c.ids.get(index as usize) {
        Some(n) if index != 0 => n.clone(),
        _ => symbol_display_name(c, index),
    }
}

/// Sections whose contents are compared elsewhere (or not at all).
fn compared_section(s: &Section<'_>) -> bool {
    s.index != 0
        && s.sh_type != SHT_SYMTAB
        && s.sh_type != SHT_CUDA_MERC_SYMTAB
        && s.sh_type != SHT_CUDA_MERC_RELA
        && s.sh_type != SHT_CUDA_MERC_RESOLVED_RELA // compared as Mercury relocations
        && s.sh_type != SHT_SYMTAB_SHNDX // compared through the symbols' sections
        && !s.is_reloc()
        && s.sh_type != SHT_CUDA_RESOLVED_RELA // compared as relocations
        && !(s.sh_type == SHT_STRTAB && (s.name == ".shstrtab" || s.name == ".strtab"))
}

fn by_name<'c, 'd>(c: &'c Cubin<'d>) -> BTreeMap<&'d str, Vec<&'c Section<'d>>> {
    let mut m: BTreeMap<&'d str, Vec<&'c Section<'d>>> = BTreeMap::new();
    for s in c.sections.iter().filter(|s| compared_section(s)) {
        m.entry(s.name).or_default().push(s);
    }
    m
}

fn diff_sections(o: &Side<'_, '_>, r: &Side<'_, '_>, out: &mut Vec<Difference>) {
    let ours = by_name(o);
    let refs = by_name(r);
    let mut names: Vec<&str> = ours.keys().chain(refs.keys()).copied().collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let a = ours.get(name).map(Vec::as_slice).unwrap_or(&[]);
        let b = refs.get(name).map(Vec::as_slice).unwrap_or(&[]);
        // Match duplicates as a multiset: pair each of ours with an identical reference
        // section first, then pair the rest in order and report their differences.
        let mut used = vec![false; b.len()];
        let mut unmatched = Vec::new();
        for sa in a {
            let hit =
                (0..b.len()).find(|&j| !used[j] && compare_section(o, sa, r, b[j]).is_empty());
            match hit {
                Some(j) => used[j] = true,
                None => unmatched.push(*sa),
            }
        }
        let mut rest_b = (0..b.len()).filter(|&j| !used[j]).map(|j| b[j]);
        for sa in unmatched {
            match rest_b.next() {
                Some(sb) => out.extend(compare_section(o, sa, r, sb)),
                None => out.push(Difference::new(
                    DiffKind::Section,
                    format!(
                        "extra section {name} ({}, {:#x} bytes) in ours",
                        section_type_name(sa.sh_type),
                        sa.size
                    ),
                )),
            }
        }
        for sb in rest_b {
            out.push(Difference::new(
                DiffKind::Section,
                format!(
                    "missing section {name} ({}, {:#x} bytes): present in the reference only",
                    section_type_name(sb.sh_type),
                    sb.size
                ),
            ));
        }
    }
}

/// `sh_link` as the name of the linked section (`0` for none).
fn link_meaning(c: &Side<'_, '_>, s: &Section<'_>) -> String {
    if s.link == 0 {
        "0".into()
    } else {
        c.section_name(s.link)
    }
}

/// `sh_info` by meaning: a symbol name (text), a section name (`SHF_INFO_LINK`), or the number.
fn info_meaning(c: &Side<'_, '_>, s: &Section<'_>) -> String {
    if s.sh_type == SHT_CUDA_CAPMERC_TEXT {
        return format!("Mercury symbol {}", merc_id(c, s.info));
    }
    match info_is_text_symbol(c, s) {
        Some(true) => format!(
            "symbol {} with register count {}",
            sym_id(c, s.info & 0x00ff_ffff),
            s.info >> 24
        ),
        Some(false) => format!("symbol {}", sym_id(c, s.info)),
        None if s.flags & SHF_INFO_LINK != 0 && s.info != 0 && s.sh_type != SHT_NOTE => {
            format!("section {}", c.section_name(s.info))
        }
        // A section naming a function's text without `SHF_INFO_LINK`: nvlink
        // keeps a `.nv.constant0.<fn>` of a CUDA 11.8-12.2 object so (its
        // flags as read, `sh_info` the text's output index).
        None if s.info != 0
            && !matches!(s.sh_type, SHT_NOTE | SHT_SYMTAB | SHT_CUDA_MERC_SYMTAB)
            && c.c
                .sections
                .get(s.info as usize)
                .is_some_and(|t| t.flags & SHF_EXECINSTR != 0) =>
        {
            format!("section {}", c.section_name(s.info))
        }
        // `.note.nv.cuinfo`'s sh_info is the index of `.nv.compat` (measured:
        // it moves with it, and is 0 on sm_75 where there is none).
        None if s.sh_type == SHT_NOTE && s.flags & SHF_INFO_LINK != 0 && s.info != 0 => {
            format!("section {}", c.section_name(s.info))
        }
        None => format!("{:#x}", s.info),
    }
}

/// "function `f` (.text.f)" for text, the section name otherwise.
fn describe(c: &Side<'_, '_>, s: &Section<'_>) -> String {
    match info_is_text_symbol(c, s) {
        Some(regs) => {
            let idx = if regs { s.info & 0x00ff_ffff } else { s.info };
            format!("function `{}` ({})", sym_id(c, idx), s.name)
        }
        None => s.name.to_string(),
    }
}

fn is_tkinfo(s: &Section<'_>) -> bool {
    s.sh_type == SHT_NOTE && (s.name == ".note.nv.tkinfo" || s.flags & SHF_CUDA_NOTE_TKINFO != 0)
}

fn compare_section(
    oc: &Side<'_, '_>,
    a: &Section<'_>,
    rc: &Side<'_, '_>,
    b: &Section<'_>,
) -> Vec<Difference> {
    let mut out = Vec::new();
    let what = describe(oc, a);
    let k = DiffKind::SectionHeader;
    if a.sh_type != b.sh_type {
        out.push(Difference::new(
            k,
            format!(
                "section {}: type ours {}, reference {}",
                a.name,
                section_type_name(a.sh_type),
                section_type_name(b.sh_type)
            ),
        ));
    }
    field(
        &mut out,
        k,
        &format!("section {} sh_flags", a.name),
        a.flags,
        b.flags,
    );
    field(
        &mut out,
        k,
        &format!("section {} sh_addralign", a.name),
        a.addralign,
        b.addralign,
    );
    field(
        &mut out,
        k,
        &format!("section {} sh_entsize", a.name),
        a.entsize,
        b.entsize,
    );
    // Frames whose rows match (rule 2, frames) may differ in size.
    let same_frames = oc.frames.contains_key(a.name);
    if !is_tkinfo(a) && !same_frames {
        field(
            &mut out,
            k,
            &format!("section {} size", a.name),
            a.size,
            b.size,
        );
    }
    let (la, lb) = (link_meaning(oc, a), link_meaning(rc, b));
    if la != lb {
        out.push(Difference::new(
            k,
            format!("section {} sh_link: ours {la}, reference {lb}", a.name),
        ));
    }
    let (ia, ib) = (info_meaning(oc, a), info_meaning(rc, b));
    if ia != ib {
        out.push(Difference::new(
            k,
            format!("section {} sh_info: ours {ia}, reference {ib}", a.name),
        ));
    }
    if a.is_nobits() || b.is_nobits() || same_frames {
        return out;
    }
    match a.sh_type {
        SHT_CUDA_CAPMERC_TEXT if b.sh_type == SHT_CUDA_CAPMERC_TEXT => {
            diff_capsule(oc, a, rc, b, &mut out)
        }
        SHT_CUDA_INFO | SHT_CUDA_COMPAT | SHT_CUDA_MERC_INFO if a.sh_type == b.sh_type => {
            diff_attrs(oc, a, rc, b, &mut out)
        }
        SHT_CUDA_CALLGRAPH | SHT_CUDA_PROTOTYPE if a.sh_type == b.sh_type => {
            diff_callgraph(oc, a, rc, b, &mut out)
        }
        SHT_NOTE if is_tkinfo(a) && b.sh_type == SHT_NOTE => diff_tkinfo(a, b, &mut out),
        _ if a.flags & SHF_EXECINSTR != 0 => diff_text(&what, a.data, b.data, &mut out),
        _ => diff_bytes(&what, a.data, b.data, &mut out),
    }
    out
}

fn diff_text(what: &str, a: &[u8], b: &[u8], out: &mut Vec<Difference>) {
    let n = a.len().min(b.len());
    let mut offs: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < n {
        let end = (i + 16).min(n);
        if a[i..end] != b[i..end] {
            offs.push(i);
        }
        i = end;
    }
    const SHOWN: usize = 8;
    const NOTE: &str = " (scheduling control field only: stall, yield, scoreboards, reuse)";
    let scheduling = |off: usize| {
        let end = (off + 16).min(n);
        control_only(&a[off..end], &b[off..end])
    };
    for &off in offs.iter().take(SHOWN) {
        let end = (off + 16).min(n);
        let note = if scheduling(off) { NOTE } else { "" };
        out.push(Difference::new(
            DiffKind::Text,
            format!(
                "text of {what} differs at instruction offset {off:#x}: ours {}, reference {}{note}",
                view::hex(&a[off..end]),
                view::hex(&b[off..end])
            ),
        ));
    }
    if offs.len() > SHOWN {
        // The note where every one of them differs only there.
        let note = if offs[SHOWN..].iter().all(|&off| scheduling(off)) {
            NOTE
        } else {
            ""
        };
        out.push(Difference::new(
            DiffKind::Text,
            format!(
                "text of {what}: {} more differing instructions{note}",
                offs.len() - SHOWN
            ),
        ));
    }
}

/// Whether two 16-byte instructions differ only in the scheduling control
/// field, bits 105..=125 (stall, yield, write/read scoreboard, wait mask,
/// reuse), the part nvlink recomputes when it re-finalizes Blackwell code
/// (`docs/blackwell.md` §8).
fn control_only(a: &[u8], b: &[u8]) -> bool {
    const MASK: u128 = ((1u128 << 21) - 1) << 105;
    match (<[u8; 16]>::try_from(a), <[u8; 16]>::try_from(b)) {
        (Ok(a), Ok(b)) => {
            let x = u128::from_le_bytes(a) ^ u128::from_le_bytes(b);
            x != 0 && x & !MASK == 0
        }
        _ => false,
    }
}

fn diff_bytes(what: &str, a: &[u8], b: &[u8], out: &mut Vec<Difference>) {
    let n = a.len().min(b.len());
    let differing: Vec<usize> = (0..n).filter(|&i| a[i] != b[i]).collect();
    if let Some(&first) = differing.first() {
        let end = (first + 8).min(n);
        out.push(Difference::new(
            DiffKind::Contents,
            format!(
                "contents of {what} differ at offset {first:#x} ({} bytes differ): ours {}, reference {}",
                differing.len(),
                view::hex(&a[first..end]),
                view::hex(&b[first..end])
            ),
        ));
    }
}

/// Splits the unmatched items of both sides into pairs that share a key (exactly
/// one item per side has it: a changed item) and the rest. O(n log n).
fn pair_unique<T, K: Ord>(
    a: Vec<T>,
    b: Vec<T>,
    key: impl Fn(&T) -> K,
) -> (Vec<(T, T)>, Vec<T>, Vec<T>) {
    let mut count: BTreeMap<K, (usize, usize)> = BTreeMap::new();
    for x in &a {
        count.entry(key(x)).or_default().0 += 1;
    }
    for x in &b {
        count.entry(key(x)).or_default().1 += 1;
    }
    let unique = |x: &T| count.get(&key(x)) == Some(&(1, 1));
    let (pa, rest_a): (Vec<T>, Vec<T>) = a.into_iter().partition(|x| unique(x));
    let (pb, rest_b): (Vec<T>, Vec<T>) = b.into_iter().partition(|x| unique(x));
    let mut by_key: BTreeMap<K, T> = pb.into_iter().map(|x| (key(&x), x)).collect();
    let pairs = pa
        .into_iter()
        .filter_map(|x| by_key.remove(&key(&x)).map(|y| (x, y)))
        .collect();
    (pairs, rest_a, rest_b)
}

/// Multiset difference: items of `a` not in `b` and items of `b` not in `a`, sorted.
fn multiset_diff<T: Ord + Clone>(a: &[T], b: &[T]) -> (Vec<T>, Vec<T>) {
    let mut m: BTreeMap<&T, i64> = BTreeMap::new();
    for x in a {
        *m.entry(x).or_default() += 1;
    }
    for x in b {
        *m.entry(x).or_default() -= 1;
    }
    let (mut only_a, mut only_b) = (Vec::new(), Vec::new());
    for (x, n) in m {
        for _ in 0..n.max(0) {
            only_a.push(x.clone());
        }
        for _ in 0..(-n).max(0) {
            only_b.push(x.clone());
        }
    }
    (only_a, only_b)
}

/// One attribute record by meaning: (name, subject symbol or "", rendered value).
type AttrKey = (String, String, String);

fn attr_keys(c: &Side<'_, '_>, s: &Section<'_>) -> Result<Vec<AttrKey>, String> {
    let compat = s.sh_type == SHT_CUDA_COMPAT;
    let merc = s.sh_type == SHT_CUDA_MERC_INFO;
    let sym = |i: u32| if merc { merc_id(c, i) } else { sym_id(c, i) };
    Ok(view::parse_attrs(s.data)?
        .into_iter()
        .map(|rec| {
            let name = if compat {
                view::eicompat_name(rec.attr)
            } else {
                view::eiattr_name(rec.attr)
            };
            let subject = match (rec.value, compat) {
                (view::AttrValue::Bytes(b), false)
                    if view::symbol_words(rec.attr, b.len()) == view::SymWords::First =>
                {
                    sym(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                }
                _ => String::new(),
            };
            let mut value = render_attr_value(rec.attr, &rec.value, &sym, !compat);
            // Symbol lists (EIATTR_EXTERNS) are sets to the driver: compare sorted.
            if let view::AttrValue::Bytes(b) = rec.value {
                if !compat && view::symbol_words(rec.attr, b.len()) == view::SymWords::All {
                    let mut parts: Vec<&str> = value.split(' ').collect();
                    parts.sort_unstable();
                    value = parts.join(" ");
                }
            }
            (name, subject, value)
        })
        .collect())
}

fn diff_attrs(
    oc: &Side<'_, '_>,
    a: &Section<'_>,
    rc: &Side<'_, '_>,
    b: &Section<'_>,
    out: &mut Vec<Difference>,
) {
    let (ka, kb) = match (attr_keys(oc, a), attr_keys(rc, b)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) => {
            out.push(Difference::new(
                DiffKind::Attribute,
                format!("{}: ours is undecodable: {e}", a.name),
            ));
            return diff_bytes(a.name, a.data, b.data, out);
        }
        (_, Err(e)) => {
            out.push(Difference::new(
                DiffKind::Attribute,
                format!("{}: reference is undecodable: {e}", a.name),
            ));
            return diff_bytes(a.name, a.data, b.data, out);
        }
    };
    let owner = a
        .name
        .strip_prefix(".nv.info.")
        .or_else(|| a.name.strip_prefix(".nv.merc.nv.info."))
        .map(str::to_string);
    let (only_a, only_b) = multiset_diff(&ka, &kb);
    let of = |subject: &str| -> String {
        if !subject.is_empty() {
            format!(" of `{subject}`")
        } else if let Some(o) = &owner {
            format!(" of `{o}`")
        } else {
            String::new()
        }
    };
    // Same attribute for the same subject on both sides: a changed value.
    let (pairs, only_a, only_b) =
        pair_unique(only_a, only_b, |x: &AttrKey| (x.0.clone(), x.1.clone()));
    for ((n, s, va), (_, _, vb)) in pairs {
        out.push(Difference::new(
            DiffKind::Attribute,
            format!(
                "{}: attribute {n}{}: ours {va}, reference {vb}",
                a.name,
                of(&s)
            ),
        ));
    }
    for (n, s, v) in only_a {
        out.push(Difference::new(
            DiffKind::Attribute,
            format!("{}: extra attribute {n}{} = {v} in ours", a.name, of(&s)),
        ));
    }
    for (n, s, v) in only_b {
        out.push(Difference::new(
            DiffKind::Attribute,
            format!(
                "{}: missing attribute {n}{} = {v} (reference has it)",
                a.name,
                of(&s)
            ),
        ));
    }
}

fn diff_callgraph(
    oc: &Side<'_, '_>,
    a: &Section<'_>,
    rc: &Side<'_, '_>,
    b: &Section<'_>,
    out: &mut Vec<Difference>,
) {
    match (
        graph_items(oc, a, &|i| sym_id(oc, i)),
        graph_items(rc, b, &|i| sym_id(rc, i)),
    ) {
        (Ok(x), Ok(y)) => {
            let (only_a, only_b) = multiset_diff(&x, &y);
            for e in only_a {
                out.push(Difference::new(
                    DiffKind::CallGraph,
                    format!("{}: extra entry {e} in ours", a.name),
                ));
            }
            for e in only_b {
                out.push(Difference::new(
                    DiffKind::CallGraph,
                    format!("{}: missing entry {e} (reference has it)", a.name),
                ));
            }
        }
        (Err(e), _) | (_, Err(e)) => {
            out.push(Difference::new(
                DiffKind::CallGraph,
                format!("{}: undecodable: {e}", a.name),
            ));
            diff_bytes(a.name, a.data, b.data, out);
        }
    }
}

fn diff_tkinfo(a: &Section<'_>, b: &Section<'_>, out: &mut Vec<Difference>) {
    let notes = |s: &Section<'_>| -> Result<Vec<String>, String> {
        Ok(view::parse_notes(s.data)?
            .iter()
            .skip(1)
            .map(view::describe_note)
            .collect())
    };
    match (notes(a), notes(b)) {
        (Ok(x), Ok(y)) => {
            let (only_a, only_b) = multiset_diff(&x, &y);
            for n in only_a {
                out.push(Difference::new(
                    DiffKind::Note,
                    format!("{}: extra input note in ours: {n}", a.name),
                ));
            }
            for n in only_b {
                out.push(Difference::new(
                    DiffKind::Note,
                    format!("{}: missing input note: {n}", a.name),
                ));
            }
        }
        (Err(e), _) | (_, Err(e)) => out.push(Difference::new(
            DiffKind::Note,
            format!("{}: notes undecodable: {e}", a.name),
        )),
    }
}

type SymKey = (String, u8, u8, u8, u64, String, u64);

fn sym_keys(c: &Side<'_, '_>) -> Vec<SymKey> {
    c.symbols
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let sec = match (s.section(), s.shndx) {
                (Some(i), _) => c.section_name(i),
                (None, SHN_UNDEF) => "UND".to_string(),
                (None, SHN_ABS) => "ABS".to_string(),
                (None, SHN_COMMON) => "COMMON".to_string(),
                (None, n) => format!("{n:#x}"),
            };
            let name = if i == 0 {
                String::new()
            } else {
                sym_id(c, i as u32)
            };
            (name, s.bind(), s.ty(), s.other, s.size, sec, s.value)
        })
        .collect()
}

fn render_sym(k: &SymKey) -> String {
    format!(
        "`{}` ({} {} other {} size {:#x} in {} value {:#x})",
        k.0,
        symbol_bind_name(k.1),
        symbol_type_name(k.2),
        symbol_other_name(k.3),
        k.4,
        k.5,
        k.6
    )
}

fn diff_symbols(o: &Side<'_, '_>, r: &Side<'_, '_>, out: &mut Vec<Difference>) {
    let (only_a, only_b) = multiset_diff(&sym_keys(o), &sym_keys(r));
    let (pairs, only_a, only_b) = pair_unique(only_a, only_b, |k: &SymKey| k.0.clone());
    for (a, b) in pairs {
        let name = &a.0;
        let mut parts = Vec::new();
        if a.1 != b.1 {
            parts.push(format!(
                "binding ours {}, reference {}",
                symbol_bind_name(a.1),
                symbol_bind_name(b.1)
            ));
        }
        if a.2 != b.2 {
            parts.push(format!(
                "type ours {}, reference {}",
                symbol_type_name(a.2),
                symbol_type_name(b.2)
            ));
        }
        if a.3 != b.3 {
            parts.push(format!(
                "st_other ours {}, reference {}",
                symbol_other_name(a.3),
                symbol_other_name(b.3)
            ));
        }
        if a.4 != b.4 {
            parts.push(format!("size ours {:#x}, reference {:#x}", a.4, b.4));
        }
        if a.5 != b.5 {
            parts.push(format!("section ours {}, reference {}", a.5, b.5));
        }
        if a.6 != b.6 {
            parts.push(format!("value ours {:#x}, reference {:#x}", a.6, b.6));
        }
        out.push(Difference::new(
            DiffKind::Symbol,
            format!("symbol `{name}`: {}", parts.join("; ")),
        ));
    }
    for k in only_a {
        out.push(Difference::new(
            DiffKind::Symbol,
            format!("extra symbol {} in ours", render_sym(&k)),
        ));
    }
    for k in only_b {
        out.push(Difference::new(
            DiffKind::Symbol,
            format!("missing symbol {} (reference has it)", render_sym(&k)),
        ));
    }
}

/// A relocation by meaning: (target section, offset, type, symbol, addend, is RELA).
type RelKey = (String, u64, u32, String, i64, bool);

/// The frame sections compared by their rows (rule 2).
const FRAME_SECTIONS: [&str; 2] = [".debug_frame", ".nv.merc.debug_frame"];

/// The bytes of an FDE before its instructions: the 64-bit length escape and
/// length, the CIE pointer, the initial location and the range (8 bytes
/// each). Relocations lie in them only.
const FDE_HEADER: usize = 36;

/// `c`'s one section named `name`, when there is exactly one.
fn only_section<'c, 'd>(c: &'c Cubin<'d>, name: &str) -> Option<&'c Section<'d>> {
    let mut it = c.sections.iter().filter(|s| s.name == name);
    let first = it.next()?;
    it.next().is_none().then_some(first)
}

/// Whether frame sections `a` (ours) and `b` mean the same, and if so where
/// each of our entries starts and ends with the reference's start: as many
/// entries, each CIE byte for byte, each FDE with the same CIE (by position),
/// initial location, range and rows. Rows are compared as DWARF defines
/// them: the instructions at each location, a location where nothing is set
/// (an advance split in two, `DW_CFA_nop` padding) being no row of its own
/// — nvlink splits a replaced weak copy's advances where the copy's own
/// code ended, a split that changes no rule (docs/equivalence.md).
fn frame_remap(a: &[u8], b: &[u8]) -> Option<Vec<(u64, u64, u64)>> {
    use crate::cubin::frame::{code_alignment, entries, rows};
    let (ea, eb) = (entries(a)?, entries(b)?);
    if ea.len() != eb.len() {
        return None;
    }
    let word = |d: &[u8], at: usize| -> Option<u64> {
        Some(u64::from_le_bytes(d.get(at..at + 8)?.try_into().ok()?))
    };
    // The entry a CIE pointer names (its index), or the raw value.
    let cie_of = |es: &[crate::cubin::frame::FrameEntry], ptr: u64| -> (bool, u64) {
        // (Entries are in section order: a binary search.)
        match es.binary_search_by_key(&ptr, |e| e.start as u64) {
            Ok(i) => (true, i as u64),
            Err(_) => (false, ptr),
        }
    };
    // The code alignment of the CIE at entry `i` (0: a layout not read).
    let align_of = |i: usize| -> u64 {
        let e = &ea[i];
        a.get(e.start + 20..e.end)
            .and_then(code_alignment)
            .unwrap_or(0)
    };
    let mut map = Vec::with_capacity(ea.len());
    for (x, y) in ea.iter().zip(&eb) {
        let (da, db) = (&a[x.start..x.end], &b[y.start..y.end]);
        if x.is_cie != y.is_cie {
            return None;
        }
        if x.is_cie {
            if da != db {
                return None;
            }
        } else {
            let cie = cie_of(&ea, word(da, 12)?);
            if cie != cie_of(&eb, word(db, 12)?)
                || da.get(20..FDE_HEADER)? != db.get(20..FDE_HEADER)?
            {
                return None;
            }
            let (ia, ib) = (&da[FDE_HEADER..], &db[FDE_HEADER..]);
            if ia != ib {
                // (A CIE pointer that names no entry, or an unknown CIE
                // layout: bytes only.)
                let align = match cie {
                    (true, i) => align_of(i as usize),
                    (false, _) => 0,
                };
                if align == 0 {
                    return None;
                }
                if set_rows(rows(ia, align)?) != set_rows(rows(ib, align)?) {
                    return None;
                }
            }
        }
        map.push((x.start as u64, x.end as u64, y.start as u64));
    }
    Some(map)
}

/// The rows of a CFA program that set something (and the first, at the
/// start): a location where nothing is set changes no rule.
fn set_rows(rows: crate::cubin::frame::Rows<'_>) -> crate::cubin::frame::Rows<'_> {
    rows.into_iter()
        .enumerate()
        .filter(|(i, (_, ins))| *i == 0 || !ins.is_empty())
        .map(|(_, row)| row)
        .collect()
}

/// `offset` in section `target` of `c`, moved to the reference's entry when
/// the section's frames match the reference's ([`frame_remap`]) and it lies
/// in an entry's header.
fn remapped(c: &Side<'_, '_>, target: &str, offset: u64) -> u64 {
    let Some(map) = c.frames.get(target) else {
        return offset;
    };
    // (The map is in section order: the entry is the last starting at or
    // before `offset`.)
    let at = map.partition_point(|&(s, _, _)| s <= offset);
    match at.checked_sub(1).map(|i| map[i]) {
        Some((s, e, t)) if offset < e && offset - s < FDE_HEADER as u64 => t + (offset - s),
        _ => offset,
    }
}

fn rel_keys(c: &Side<'_, '_>) -> Vec<RelKey> {
    let mut v = Vec::new();
    for s in c.sections.iter().filter(|s| s.is_reloc()) {
        let target = c.section_name(s.info);
        for r in c.relocs(s) {
            v.push((
                target.clone(),
                remapped(c, &target, r.offset),
                r.rtype,
                sym_id(c, r.sym),
                r.addend,
                r.is_rela,
            ));
        }
    }
    // `--preserve-relocs`: the resolved relocations, RELA-shaped entries of
    // `.nv.resolvedrela.<sec>`; compared like relocations, target marked.
    for s in c
        .sections
        .iter()
        .filter(|s| s.sh_type == SHT_CUDA_RESOLVED_RELA)
    {
        let target = format!("{} (resolved)", c.section_name(s.info));
        for e in s.data.chunks_exact(24) {
            let word = |o: usize| {
                let mut b = [0u8; 8];
                b.copy_from_slice(&e[o..o + 8]);
                u64::from_le_bytes(b)
            };
            let info = word(8);
            v.push((
                target.clone(),
                word(0),
                info as u32,
                sym_id(c, (info >> 32) as u32),
                word(16) as i64,
                true,
            ));
        }
    }
    v
}

fn render_rel(k: &RelKey) -> String {
    format!(
        "{} at {}+{:#x} against `{}` addend {:+#x} ({})",
        view::reloc_name(k.2),
        k.0,
        k.1,
        k.3,
        k.4,
        if k.5 { "RELA" } else { "REL" }
    )
}

fn diff_relocs(o: &Side<'_, '_>, r: &Side<'_, '_>, out: &mut Vec<Difference>) {
    let (only_a, only_b) = multiset_diff(&rel_keys(o), &rel_keys(r));
    let (pairs, only_a, only_b) = pair_unique(only_a, only_b, |k: &RelKey| (k.0.clone(), k.1));
    for (a, b) in pairs {
        out.push(Difference::new(
            DiffKind::Relocation,
            format!(
                "relocation at {}+{:#x} differs: ours {}, reference {}",
                a.0,
                a.1,
                render_rel(&a),
                render_rel(&b)
            ),
        ));
    }
    for k in only_a {
        out.push(Difference::new(
            DiffKind::Relocation,
            format!("extra relocation {} in ours", render_rel(&k)),
        ));
    }
    for k in only_b {
        out.push(Difference::new(
            DiffKind::Relocation,
            format!("missing relocation {} (reference has it)", render_rel(&k)),
        ));
    }
}

/// A Blackwell capsule (`.nv.capmerc.text.<fn>`): its first word is the section
/// index of the function's `.text`, compared by that section's name; the rest
/// byte for byte.
fn diff_capsule(
    oc: &Side<'_, '_>,
    a: &Section<'_>,
    rc: &Side<'_, '_>,
    b: &Section<'_>,
    out: &mut Vec<Difference>,
) {
    let head = |c: &Side<'_, '_>, s: &Section<'_>| -> Option<String> {
        let w = s.data.get(..4)?;
        Some(c.section_name(u32::from_le_bytes([w[0], w[1], w[2], w[3]])))
    };
    let (ha, hb) = (head(oc, a), head(rc, b));
    if ha != hb {
        out.push(Difference::new(
            DiffKind::Contents,
            format!(
                "capsule {} names text section {} in ours, {} in the reference",
                a.name,
                ha.unwrap_or_default(),
                hb.unwrap_or_default()
            ),
        ));
    }
    let masked = |d: &[u8]| -> Vec<u8> {
        let mut v = d.to_vec();
        for x in v.iter_mut().take(4) {
            *x = 0;
        }
        v
    };
    diff_bytes(a.name, &masked(a.data), &masked(b.data), out);
}

fn merc_sym_keys(c: &Side<'_, '_>) -> Vec<SymKey> {
    c.merc
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let sec = match (s.shndx, s.ext_shndx) {
                (SHN_XINDEX, Some(x)) => c.section_name(x),
                (SHN_UNDEF, _) => "UND".to_string(),
                (SHN_ABS, _) => "ABS".to_string(),
                (SHN_COMMON, _) => "COMMON".to_string(),
                (n, _) => c.section_name(u32::from(n)),
            };
            let name = if i == 0 {
                String::new()
            } else {
                s.name.clone()
            };
            (
                name,
                s.info >> 4,
                s.info & 0xf,
                s.other,
                s.size,
                sec,
                s.value,
            )
        })
        .collect()
}

/// `.nv.merc.symtab` as a multiset of symbols by meaning (as `.symtab`).
fn diff_merc_symbols(o: &Side<'_, '_>, r: &Side<'_, '_>, out: &mut Vec<Difference>) {
    if o.merc.is_empty() && r.merc.is_empty() {
        return;
    }
    let (only_a, only_b) = multiset_diff(&merc_sym_keys(o), &merc_sym_keys(r));
    for k in only_a {
        out.push(Difference::new(
            DiffKind::Symbol,
            format!("extra Mercury symbol {} in ours", render_sym(&k)),
        ));
    }
    for k in only_b {
        out.push(Difference::new(
            DiffKind::Symbol,
            format!(
                "missing Mercury symbol {} (reference has it)",
                render_sym(&k)
            ),
        ));
    }
}

fn merc_rel_keys(c: &Side<'_, '_>) -> Vec<RelKey> {
    let mut v = Vec::new();
    // `--preserve-relocs`' resolved ones too, their target marked.
    for s in c
        .sections
        .iter()
        .filter(|s| s.sh_type == SHT_CUDA_MERC_RELA || s.sh_type == SHT_CUDA_MERC_RESOLVED_RELA)
    {
        let target = if s.sh_type == SHT_CUDA_MERC_RESOLVED_RELA {
            format!("{} (resolved)", c.section_name(s.info))
        } else {
            c.section_name(s.info)
        };
        for e in s.data.chunks_exact(24) {
            let info = u64::from_le_bytes(e[8..16].try_into().unwrap_or([0; 8]));
            v.push((
                target.clone(),
                remapped(
                    c,
                    &target,
                    u64::from_le_bytes(e[0..8].try_into().unwrap_or([0; 8])),
                ),
                info as u32,
                merc_id(c, (info >> 32) as u32),
                i64::from_le_bytes(e[16..24].try_into().unwrap_or([0; 8])),
                true,
            ));
        }
    }
    v
}

/// `.nv.merc.rela.*` as a multiset of relocations against Mercury symbol names.
fn diff_merc_relocs(o: &Side<'_, '_>, r: &Side<'_, '_>, out: &mut Vec<Difference>) {
    let (only_a, only_b) = multiset_diff(&merc_rel_keys(o), &merc_rel_keys(r));
    for k in only_a {
        out.push(Difference::new(
            DiffKind::Relocation,
            format!("extra Mercury relocation {} in ours", render_rel(&k)),
        ));
    }
    for k in only_b {
        out.push(Difference::new(
            DiffKind::Relocation,
            format!(
                "missing Mercury relocation {} (reference has it)",
                render_rel(&k)
            ),
        ));
    }
}

fn align_up(v: u64, a: u64) -> u64 {
    if a <= 1 {
        v
    } else {
        v.div_ceil(a).saturating_mul(a)
    }
}

/// File range `[start, end)` covered by `sections` (none: `None`).
fn span<'a>(sections: impl Iterator<Item = &'a Section<'a>>) -> Option<(u64, u64)> {
    sections.fold(None, |acc, s| {
        let (st, en) = (s.offset, s.offset.saturating_add(s.size));
        Some(match acc {
            None => (st, en),
            Some((a, b)) => (a.min(st), b.max(en)),
        })
    })
}

/// An expected segment: (p_type, p_flags, file range (offset, size) or `None` for
/// the data segment, which has its own check, label).
type Want = (u32, u32, Option<(u64, u64)>, &'static str);

/// Checks `cubin`'s program headers against culink's layout rule (docs/equivalence.md):
/// the six-segment scheme for sm_90 and later, the older nvlink layout for
/// sm_75..sm_89. Returns one [`Difference`] per violation. `ET_REL` files must
/// have no program headers.
pub fn check_program_headers(cubin: &Cubin<'_>) -> Vec<Difference> {
    let mut out = Vec::new();
    let ph = &cubin.program_headers;
    let h = &cubin.header;
    let bad = |out: &mut Vec<Difference>, m: String| {
        out.push(Difference::new(DiffKind::ProgramHeader, m))
    };
    if h.e_type == ET_REL {
        if !ph.is_empty() {
            bad(
                &mut out,
                format!(
                    "relocatable object has {} program headers, expected none",
                    ph.len()
                ),
            );
        }
        return out;
    }
    let table = (h.e_phoff, (ph.len() * crate::cubin::PHDR_SIZE) as u64);
    let alloc = |s: &&Section<'_>| s.index != 0 && s.flags & SHF_ALLOC != 0;
    let secs: Vec<&Section<'_>> = cubin.sections.iter().filter(alloc).collect();
    let text = span(
        secs.iter()
            .copied()
            .filter(|s| s.flags & SHF_EXECINSTR != 0),
    );
    let const0 = span(
        secs.iter()
            .copied()
            .filter(|s| s.name.starts_with(".nv.constant0")),
    );
    let module_consts =
        span(secs.iter().copied().filter(|s| {
            s.name.starts_with(".nv.constant") && !s.name.starts_with(".nv.constant0")
        }));
    let all_consts = span(
        secs.iter()
            .copied()
            .filter(|s| s.name.starts_with(".nv.constant")),
    );
    let init = secs
        .iter()
        .copied()
        .find(|s| s.name == ".nv.global.init" && !s.is_nobits());
    // Mercury NOBITS sections (`.nv.merc.nv.shared.reserved.0`) are in no segment.
    let nobits: Vec<&Section<'_>> = secs
        .iter()
        .copied()
        .filter(|s| s.is_nobits() && s.flags & SHF_CUDA_MERCURY == 0)
        .collect();
    // Expected RW segment: offset and filesz from .nv.global.init, memsz adds every
    // NOBITS section in section order with its alignment. nvlink's filesz may
    // also run up to the first NOBITS section's aligned offset (measured: a
    // 0x43-byte `.nv.global.init` followed by an align-16 `.nv.shared.<k>`
    // gives filesz 0x50, fixture `cu_features` sm_75), or a later one's (a
    // 0x98-byte one, then an align-4 `.nv.shared.<k>` and the align-16
    // `.nv_debug.shared`: 0xa0, fixture `bank2_kernel_loser_pad` sm_75).
    let nobits_align = nobits.iter().map(|s| s.addralign).max().unwrap_or(1);
    let data_seg = if init.is_some() || !nobits.is_empty() {
        let (off, filesz_min, filesz_max) = match init {
            Some(s) => (
                Some(s.offset),
                s.size,
                align_up(s.size, s.addralign.max(nobits_align)),
            ),
            None => (None, 0, 0),
        };
        let mut mem = filesz_max;
        for s in &nobits {
            mem = align_up(mem, s.addralign).saturating_add(s.size);
        }
        let mem_min = nobits
            .iter()
            .fold(filesz_min, |m, s| m.saturating_add(s.size));
        Some((off, filesz_min, filesz_max, mem_min, mem))
    } else {
        None
    };

    // (p_type, p_flags, expected range (offset, filesz) or None for "not checked", label)
    let mut want: Vec<Want> = Vec::new();
    let six = cubin.arch().is_sm90_or_later();
    if six {
        want.push((
            PT_PHDR,
            PF_R,
            Some(table),
            "PT_PHDR over the program header table",
        ));
        want.push((
            PT_LOAD,
            PF_R,
            Some(table),
            "LOAD R over the program header table",
        ));
        if let Some((a, b)) = module_consts {
            want.push((
                PT_LOAD,
                PF_R,
                Some((a, b - a)),
                "LOAD R over .nv.constant3/.nv.constant4",
            ));
        }
        if let Some((a, b)) = text {
            want.push((
                PT_LOAD,
                PF_R | PF_X,
                Some((a, b - a)),
                "LOAD RX over the text",
            ));
        }
        if data_seg.is_some() {
            want.push((
                PT_LOAD,
                PF_R | PF_W,
                None,
                "LOAD RW over .nv.global.init and NOBITS",
            ));
        }
        if let Some((a, b)) = const0 {
            want.push((
                PT_LOAD,
                PF_R,
                Some((a, b - a)),
                "LOAD R over .nv.constant0.*",
            ));
        }
    } else {
        want.push((
            PT_PHDR,
            PF_R | PF_X,
            Some(table),
            "PT_PHDR over the program header table",
        ));
        let code = match (all_consts, text) {
            (Some((a, _)), Some((c, d))) => Some((a.min(c), d)),
            (x, None) | (None, x) => x,
        };
        if let Some((a, b)) = code {
            want.push((
                PT_LOAD,
                PF_R | PF_X,
                Some((a, b - a)),
                "LOAD RX over the constants and text",
            ));
        }
        if data_seg.is_some() {
            want.push((
                PT_LOAD,
                PF_R | PF_W,
                None,
                "LOAD RW over .nv.global.init and NOBITS",
            ));
        }
        want.push((
            PT_LOAD,
            PF_R | PF_X,
            Some(table),
            "LOAD RX over the program header table",
        ));
    }
    let layout = if six {
        "sm_90+ layout"
    } else {
        "sm_75..sm_89 layout"
    };
    if ph.len() != want.len() {
        bad(
            &mut out,
            format!(
                "{layout}: {} program headers, expected {} ({})",
                ph.len(),
                want.len(),
                want.iter().map(|w| w.3).collect::<Vec<_>>().join(", ")
            ),
        );
    }
    for (i, (p, w)) in ph.iter().zip(&want).enumerate() {
        let (ty, flags, range, label) = *w;
        if p.p_type != ty || p.flags != flags {
            bad(
                &mut out,
                format!(
                    "program header {i}: {} {}, expected {} {} ({label})",
                    crate::dump::segment_type_name(p.p_type),
                    crate::dump::segment_flags_name(p.flags),
                    crate::dump::segment_type_name(ty),
                    crate::dump::segment_flags_name(flags)
                ),
            );
        }
        if let Some((off, size)) = range {
            if p.offset != off || p.filesz != size || p.memsz != size {
                bad(
                    &mut out,
                    format!(
                        "program header {i} ({label}): offset {:#x} filesz {:#x} memsz {:#x}, expected offset {off:#x} size {size:#x}",
                        p.offset, p.filesz, p.memsz
                    ),
                );
            }
        } else if let Some((off, fmin, fmax, mmin, mmax)) = data_seg {
            let off_ok = match off {
                Some(o) => p.offset == o,
                None => true,
            };
            if !off_ok || p.filesz < fmin || p.filesz > fmax || p.memsz < mmin || p.memsz > mmax {
                bad(
                    &mut out,
                    format!(
                        "program header {i} ({label}): offset {:#x} filesz {:#x} memsz {:#x}, expected offset {} filesz {fmin:#x}..={fmax:#x} memsz {mmin:#x}..={mmax:#x}",
                        p.offset,
                        p.filesz,
                        p.memsz,
                        off.map(|o| format!("{o:#x}")).unwrap_or_else(|| "any".into())
                    ),
                );
            }
        }
        if p.vaddr != 0 || p.paddr != 0 {
            bad(
                &mut out,
                format!(
                    "program header {i} ({label}): vaddr {:#x} paddr {:#x}, expected 0",
                    p.vaddr, p.paddr
                ),
            );
        }
    }
    out
}

/// The error classes a linker's stderr names, nvlink's wording or culink's:
/// `undefined`, `multiple-definition`, `size-mismatch`,
/// `common-larger-than-init`, `weak-param-bank`, `memory-space`, `arch`, else
/// `other`. Only `error`/`fatal` lines count (not nvlink's closing "merge_elf
/// failed", nor its "Internal error"s: its own failures after the input's). The fixtures and `cargo xtask difftest` require both
/// linkers' failures to name the same classes.
pub fn error_classes(stderr: &str) -> std::collections::BTreeSet<&'static str> {
    let mut s = std::collections::BTreeSet::new();
    for line in stderr.lines() {
        let l = line.to_lowercase();
        if !(l.contains("error") || l.contains("fatal"))
            || l.contains("merge_elf failed")
            || l.contains("internal error")
        {
            continue;
        }
        let class = if l.contains("undefined reference") {
            "undefined"
        } else if l.contains("multiple definition") {
            "multiple-definition"
        } else if l.contains("managed attribute") {
            "managed-mismatch"
        } else if l.contains("size doesn't match") || l.contains("size of '") {
            "size-mismatch"
        } else if l.contains("larger size than") {
            "common-larger-than-init"
        } else if l.contains("duplicate weak parameter bank") {
            "weak-param-bank"
        } else if l.contains("memory space doesn't match") {
            "memory-space"
        } else if l.contains("too much global constant data") {
            "constant-limit"
        } else if l.contains("too much shared data") {
            "shared-limit"
        } else if l.contains("with max regcount of") {
            "maxreg"
        } else if l.contains("cta pair granularity") {
            "cta-group-mix"
        } else if l.contains("arch") {
            "arch"
        } else {
            "other"
        };
        s.insert(class);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::{control_only, diff_text, frame_remap};

    /// A 64-bit `.debug_frame` of ptxas' CIE (code alignment 4) and one FDE
    /// (range 0x100) with the instructions `ins`, padded with `DW_CFA_nop`.
    fn frame(ins: &[u8], pad: usize) -> Vec<u8> {
        let cie_body: Vec<u8> = [0xff; 8]
            .into_iter()
            .chain([3, 0, 4, 0x7c, 0xff, 0xff, 0xff, 0xff, 0x0f])
            .chain([0x0c, 0x81, 0x80, 0x80, 0x28, 0x00, 0, 0, 0])
            .collect();
        let mut out = vec![0xff; 4];
        out.extend((cie_body.len() as u64).to_le_bytes());
        out.extend(&cie_body);
        let mut fde = 0u64.to_le_bytes().to_vec(); // CIE at 0
        fde.extend(0u64.to_le_bytes());
        fde.extend(0x100u64.to_le_bytes());
        fde.extend(ins);
        fde.extend(std::iter::repeat_n(0u8, pad));
        out.extend([0xff; 4]);
        out.extend((fde.len() as u64).to_le_bytes());
        out.extend(fde);
        out
    }

    #[test]
    fn frames_compare_by_their_rows() {
        const DEF_CFA: [u8; 6] = [0x0c, 0x81, 0x80, 0x80, 0x28, 0x00];
        let adv = |units: u32| {
            let mut v = vec![0x04];
            v.extend(units.to_le_bytes());
            v
        };
        // def_cfa at 0, then nothing but an advance to 0x80.
        let one: Vec<u8> = DEF_CFA.iter().copied().chain(adv(0x20)).collect();
        // The same advance split at 0x30 (nvlink's replaced-copy split).
        let split: Vec<u8> = DEF_CFA
            .iter()
            .copied()
            .chain(adv(0x0c))
            .chain(adv(0x14))
            .collect();
        let (a, b) = (frame(&one, 0), frame(&split, 3));
        let map = frame_remap(&a, &b).expect("the same rows");
        // Entries map to the reference's starts (the CIE, then the FDE).
        assert_eq!(map.len(), 2);
        assert_eq!(map[1].2, map[1].0);
        // A rule set elsewhere is a difference: def_cfa at 0x30, not at 0.
        let moved: Vec<u8> = adv(0x0c)
            .into_iter()
            .chain(DEF_CFA)
            .chain(adv(0x14))
            .collect();
        assert!(frame_remap(&a, &frame(&moved, 0)).is_none());
        // And so is another range.
        let mut other = a.clone();
        let at = other.len() - one.len() - 8;
        other[at] = 0x80;
        assert!(frame_remap(&a, &other).is_none());
    }

    #[test]
    fn control_field_differences() {
        // libcudadevrt's memcpy_3d_device kernel at sm_100: ptxas 13.0.96's
        // `LDC R1, c[0x0][0x37c]` (write scoreboard 0) and nvlink's (none).
        let ours = [
            0x82, 0x7b, 0x01, 0xff, 0x00, 0xdf, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x30,
            0x0e, 0x00,
        ];
        let mut reference = ours;
        reference[13] = 0xf0;
        reference[14] = 0x0f;
        assert!(control_only(&ours, &reference));
        assert!(!control_only(&ours, &ours));
        // An operand byte.
        let mut operand = ours;
        operand[4] = 0x01;
        assert!(!control_only(&ours, &operand));
        // Bit 104 (below the field) and bit 126 (above it).
        let mut low = ours;
        low[13] ^= 0x01;
        assert!(!control_only(&ours, &low));
        let mut high = ours;
        high[15] ^= 0x40;
        assert!(!control_only(&ours, &high));
        // Truncated text.
        assert!(!control_only(&ours[..8], &reference[..8]));
    }

    #[test]
    fn the_count_line_says_when_the_rest_differ_in_scheduling_only() {
        let ours = [
            0x82u8, 0x7b, 0x01, 0xff, 0, 0xdf, 0, 0, 0, 0x08, 0, 0, 0, 0x30, 0x0e, 0,
        ];
        let mut other = ours;
        other[13] = 0xf0;
        let text = |n: usize, last: [u8; 16]| -> Vec<u8> {
            let mut t = ours.repeat(n);
            t.extend_from_slice(&last);
            t
        };
        let count_line = |b: &[u8]| {
            let mut out = Vec::new();
            diff_text("f", &text(10, ours), b, &mut out);
            out.last().map(ToString::to_string).unwrap_or_default()
        };
        let scheduling = [other; 11].concat();
        assert!(count_line(&scheduling)
            .ends_with("3 more differing instructions (scheduling control field only: stall, yield, scoreboards, reuse)"));
        // The last one differs in an operand too.
        let mut operand = other;
        operand[4] = 1;
        let mut mixed = [other; 10].concat();
        mixed.extend_from_slice(&operand);
        assert!(count_line(&mixed).ends_with("3 more differing instructions"));
    }
}
