//! Every class of malformed input is an error — never a panic, never silently
//! accepted — and the error names the file and the section / symbol / offset.
//!
//! Each test mutates a real fixture object (`tests/link/*/*.sm_90.o`) in memory
//! and links it with `linker_core::link` through `InputSource::Bytes`. The inputs
//! the fuzzers found crashes with are replayed from `tests/data/fuzz-regressions/`.
//! A counting allocator checks that absurd counts and sizes allocate nothing big.

mod common;

use linker_core::{
    Error, ErrorKind, InputSource, LinkFailure, LinkOptions, LinkOutput, Severity, SmArch,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The largest single allocation made so far (all threads).
static LARGEST_ALLOC: AtomicUsize = AtomicUsize::new(0);

struct Counting;

// SAFETY: forwards to `System`, recording sizes only.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LARGEST_ALLOC.fetch_max(l.size(), Ordering::Relaxed);
        // SAFETY: same contract.
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        LARGEST_ALLOC.fetch_max(l.size(), Ordering::Relaxed);
        // SAFETY: same contract.
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        LARGEST_ALLOC.fetch_max(n, Ordering::Relaxed);
        // SAFETY: same contract.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A fixture object with ELF field accessors for mutation.
#[derive(Clone)]
struct Obj(Vec<u8>);

impl Obj {
    fn load(case: &str, stem: &str) -> Obj {
        let p = common::workspace_root().join(format!("tests/link/{case}/{stem}.sm_90.o"));
        Obj(std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
    }
    fn u16(&self, o: usize) -> u16 {
        u16::from_le_bytes(self.0[o..o + 2].try_into().unwrap())
    }
    fn u32(&self, o: usize) -> u32 {
        u32::from_le_bytes(self.0[o..o + 4].try_into().unwrap())
    }
    fn u64(&self, o: usize) -> u64 {
        u64::from_le_bytes(self.0[o..o + 8].try_into().unwrap())
    }
    fn set16(&mut self, o: usize, v: u16) {
        self.0[o..o + 2].copy_from_slice(&v.to_le_bytes());
    }
    fn set32(&mut self, o: usize, v: u32) {
        self.0[o..o + 4].copy_from_slice(&v.to_le_bytes());
    }
    fn set64(&mut self, o: usize, v: u64) {
        self.0[o..o + 8].copy_from_slice(&v.to_le_bytes());
    }
    /// File offset of section header `i`.
    fn shdr(&self, i: usize) -> usize {
        self.u64(40) as usize + 64 * i
    }
    fn shnum(&self) -> usize {
        self.u16(60) as usize
    }
    fn name_of(&self, i: usize) -> String {
        let str_hdr = self.shdr(self.u16(62) as usize);
        let base = self.u64(str_hdr + 24) as usize + self.u32(self.shdr(i)) as usize;
        let end = base + self.0[base..].iter().position(|&b| b == 0).unwrap();
        String::from_utf8(self.0[base..end].to_vec()).unwrap()
    }
    /// Index of the section called `name`.
    fn sec(&self, name: &str) -> usize {
        (1..self.shnum())
            .find(|&i| self.name_of(i) == name)
            .unwrap_or_else(|| panic!("no section {name}"))
    }
    /// File offset of the header of section `name`.
    fn hdr(&self, name: &str) -> usize {
        self.shdr(self.sec(name))
    }
    /// The size of section `name`.
    fn size(&self, name: &str) -> u64 {
        self.u64(self.hdr(name) + 32)
    }
    /// Sets section `name`'s size (keeping its data in place).
    fn set_size(&mut self, name: &str, size: u64) {
        self.set64(self.hdr(name) + 32, size);
    }
    /// File offset of the contents of section `name`.
    fn data_off(&self, name: &str) -> usize {
        self.u64(self.hdr(name) + 24) as usize
    }
    /// File offset of symbol `k` of `.symtab`.
    fn sym(&self, k: usize) -> usize {
        self.data_off(".symtab") + 24 * k
    }
    /// Index of the symbol called `name`.
    fn sym_index(&self, name: &str) -> usize {
        let strtab = self.data_off(".strtab");
        let n = self.u64(self.shdr(self.sec(".symtab")) + 32) as usize / 24;
        (1..n)
            .find(|&k| {
                let b = strtab + self.u32(self.sym(k)) as usize;
                self.0[b..].starts_with(name.as_bytes()) && self.0[b + name.len()] == 0
            })
            .unwrap_or_else(|| panic!("no symbol {name}"))
    }
}

fn bytes(name: &str, data: &[u8]) -> InputSource {
    InputSource::Bytes {
        name: name.into(),
        data: Arc::from(data),
    }
}

fn link_at(sm: u32, inputs: Vec<InputSource>) -> Result<LinkOutput, LinkFailure> {
    linker_core::link(&LinkOptions {
        arch: Some(SmArch::new(sm)),
        inputs,
        ..LinkOptions::default()
    })
}

/// Links the mutated `a` (as `a.o`) with `call_extern`'s real `b.o` at sm_90.
fn link_a(a: &Obj) -> Result<LinkOutput, LinkFailure> {
    let b = Obj::load("call_extern", "b");
    link_at(90, vec![bytes("a.o", &a.0), bytes("b.o", &b.0)])
}

/// The first error of a link that must fail, which must name `a.o`.
#[track_caller]
fn error_of(r: Result<LinkOutput, LinkFailure>) -> Error {
    let failure = match r {
        Ok(_) => panic!("malformed input was linked without an error"),
        Err(f) => f,
    };
    let e = failure
        .errors()
        .next()
        .expect("a failure has an error")
        .clone();
    assert_eq!(
        e.file.as_deref(),
        Some("a.o"),
        "error does not name the file: {e}"
    );
    e
}

/// Asserts kind, message and the context fields that must be present.
#[track_caller]
fn check(e: &Error, kind: ErrorKind, words: &str, section: Option<&str>, offset: Option<u64>) {
    assert_eq!(e.kind, kind, "{e}");
    assert!(e.message.contains(words), "{e:?} lacks {words:?}");
    if let Some(s) = section {
        assert_eq!(e.section.as_deref(), Some(s), "{e}");
    }
    if let Some(o) = offset {
        assert_eq!(e.offset, Some(o), "{e}");
    }
    // The rendered message carries the context too.
    let shown = e.to_string();
    assert!(shown.starts_with("a.o: "), "{shown}");
}

fn a() -> Obj {
    Obj::load("call_extern", "a")
}

/// The error of linking a copy of `call_extern`'s `a.o`, changed by `mutate`,
/// with its real `b.o` (see `error_of`).
#[track_caller]
fn error_after(mutate: impl FnOnce(&mut Obj)) -> Error {
    let mut o = a();
    mutate(&mut o);
    error_of(link_a(&o))
}

/// `error_after(mutate)`, which must be `ErrorKind::Malformed` with `words`,
/// `section` and `offset` (see `check`).
#[track_caller]
fn rejects(
    mutate: impl FnOnce(&mut Obj),
    words: &str,
    section: Option<&str>,
    offset: Option<u64>,
) -> Error {
    let e = error_after(mutate);
    check(&e, ErrorKind::Malformed, words, section, offset);
    e
}

#[test]
fn unmutated_fixture_links() {
    link_a(&a()).unwrap_or_else(|f| panic!("{:?}", f.errors().collect::<Vec<_>>()));
}

#[test]
fn not_elf() {
    let e = error_of(link_at(90, vec![bytes("a.o", b"hello, world\n")]));
    check(
        &e,
        ErrorKind::Malformed,
        "not a recognised input format",
        None,
        None,
    );
}

/// An empty file is skipped, as nvlink skips it, but not silently: the
/// output is that of the link without it, with a warning naming the file.
#[test]
fn empty_file_is_skipped_with_a_warning() {
    let a = Obj::load("call_extern", "a");
    let b = Obj::load("call_extern", "b");
    let without = link_at(90, vec![bytes("a.o", &a.0), bytes("b.o", &b.0)]).unwrap();
    let with = link_at(
        90,
        vec![bytes("a.o", &a.0), bytes("e.o", b""), bytes("b.o", &b.0)],
    )
    .unwrap_or_else(|f| panic!("{:?}", f.errors().collect::<Vec<_>>()));
    assert_eq!(with.cubin, without.cubin);
    let warned: Vec<String> = with
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .map(|d| d.error.to_string())
        .collect();
    assert_eq!(warned, ["e.o: empty input file; ignored"]);
}

#[test]
fn wrong_class_endianness_machine() {
    rejects(|o| o.0[4] = 1, "ELFCLASS64", None, Some(4));
    rejects(|o| o.0[5] = 2, "little endian", None, Some(5));
    // CUDA's OS ABI with another machine: a damaged cubin, not a host object
    // to skip (host objects without device code are ignored, as by nvlink).
    rejects(|o| o.set16(18, 62), "EM_CUDA", None, Some(18)); // EM_X86_64
}

#[test]
fn truncated_at_every_byte_offset() {
    let o = a();
    let b = Obj::load("call_extern", "b");
    // (Cut at 0 is an empty file, skipped: `empty_file_is_skipped_with_a_warning`.)
    for cut in 1..o.0.len() {
        let r = link_at(90, vec![bytes("a.o", &o.0[..cut]), bytes("b.o", &b.0)]);
        let e = error_of(r);
        assert!(matches!(e.kind, ErrorKind::Malformed), "cut at {cut}: {e}");
    }
}

#[test]
fn section_header_table_out_of_bounds() {
    rejects(
        |o| o.set64(40, o.0.len() as u64 - 32),
        "section header table",
        None,
        Some(40),
    );
    rejects(
        |o| o.set16(60, o.u16(60) + 1),
        "holds at most",
        None,
        Some(60),
    );
    rejects(|o| o.set16(58, 40), "e_shentsize", None, Some(58));
}

#[test]
fn section_data_out_of_bounds() {
    rejects(
        |o| o.set64(o.hdr(".nv.info") + 24, o.0.len() as u64 - 4),
        "past the end of the file",
        Some(".nv.info"),
        None,
    );
    // size: offset + size overflows
    rejects(
        |o| o.set_size(".nv.info", u64::MAX - 8),
        "past the end",
        Some(".nv.info"),
        None,
    );
}

#[test]
fn overlapping_section_data() {
    let e = rejects(
        |o| {
            o.set64(
                o.hdr(".nv.info") + 24,
                o.data_off(".note.nv.cuinfo") as u64 + 4,
            )
        },
        "overlaps",
        None,
        None,
    );
    assert!(
        e.message.contains(".note.nv.cuinfo") && e.message.contains(".nv.info"),
        "{e}"
    );
}

#[test]
fn misaligned_section_data() {
    let text = ".text.kern_a";
    // Aligned to 16, not 128.
    rejects(
        |o| o.set64(o.hdr(text) + 24, o.u64(o.hdr(text) + 24) + 0x10),
        "not aligned",
        Some(text),
        None,
    );
    // Not a power of two.
    rejects(
        |o| o.set64(o.hdr(text) + 48, 96),
        "power of two",
        Some(text),
        None,
    );
    // A power of two, but absurd.
    rejects(
        |o| o.set64(o.hdr(text) + 48, 1 << 20),
        "not aligned",
        Some(text),
        None,
    );
}

#[test]
fn bad_sh_link() {
    rejects(
        |o| o.set32(o.hdr(".symtab") + 40, o.sec(".debug_frame") as u32),
        "not a string table",
        Some(".symtab"),
        None,
    );
    rejects(
        |o| o.set32(o.hdr(".symtab") + 40, 999),
        "sh_link 999",
        Some(".symtab"),
        None,
    );
    rejects(
        |o| o.set32(o.hdr(".rela.text.kern_a") + 40, o.sec(".strtab") as u32),
        "not the symbol table",
        Some(".rela.text.kern_a"),
        None,
    );
}

#[test]
fn bad_sh_info() {
    for bad in [0, 999] {
        rejects(
            |o| o.set32(o.hdr(".rela.text.kern_a") + 44, bad),
            "not a valid target",
            Some(".rela.text.kern_a"),
            None,
        );
    }
    // A text section's sh_info must name its function symbol.
    rejects(
        |o| o.set32(o.hdr(".text.kern_a") + 44, 0),
        "does not name a symbol",
        Some(".text.kern_a"),
        None,
    );
}

#[test]
fn string_offsets_out_of_range() {
    let fixture = a();
    let i = fixture.sec(".nv.info");
    rejects(
        |o| o.set32(o.shdr(i), 0xffff),
        "outside its string table",
        Some(&format!("#{i}")),
        None,
    );
    let k = fixture.sym_index("kern_a");
    rejects(
        |o| o.set32(o.sym(k), 0x00ff_ffff),
        "outside its string table",
        Some(".symtab"),
        Some(24 * k as u64),
    );
    // The name table must be a string table.
    rejects(
        |o| o.set16(62, o.sec(".debug_frame") as u16),
        "not SHT_STRTAB",
        None,
        None,
    );
}

#[test]
fn symbol_section_index_out_of_range() {
    let k = a().sym_index("kern_a");
    let e = rejects(
        |o| o.set16(o.sym(k) + 6, 0x200),
        "section index 512",
        Some(".symtab"),
        Some(24 * k as u64),
    );
    assert_eq!(e.symbol.as_deref(), Some("kern_a"));
}

/// File offset of entry `k` of `.rela.text.kern_a`.
fn rela(o: &Obj, k: usize) -> usize {
    o.data_off(".rela.text.kern_a") + 24 * k
}

#[test]
fn relocation_offset_beyond_its_section() {
    // .text.kern_a is 0x180 bytes
    rejects(
        |o| o.set64(rela(o, 1), 0x180),
        "beyond its target section",
        Some(".rela.text.kern_a"),
        Some(24),
    );
}

#[test]
fn relocation_symbol_index_out_of_range() {
    rejects(
        |o| o.set32(rela(o, 2) + 12, 5000),
        "symbol index 5000",
        Some(".rela.text.kern_a"),
        Some(48),
    );
}

#[test]
fn unknown_relocation_type() {
    let fixture = a();
    let at = fixture.u64(rela(&fixture, 0));
    rejects(
        |o| o.set32(rela(o, 0) + 8, 0xfe),
        "unknown relocation type 254",
        Some(".rela.text.kern_a"),
        Some(at),
    );
}

#[test]
fn value_does_not_fit_its_bit_field() {
    // const_multi's c1 reads the constant-bank variable `ca` through a
    // R_CUDA_CONST_FIELD relocation, which the linker resolves: an offset of
    // 2^40 does not fit the field.
    let mut o = Obj::load("const_multi", "c1");
    let c2 = Obj::load("const_multi", "c2");
    let base = o.data_off(".rela.text.k1");
    let h = o.shdr(o.sec(".rela.text.k1"));
    let n = o.u64(h + 32) as usize / 24;
    let k = (0..n)
        .find(|&k| o.u32(base + 24 * k + 8) == 0x42)
        .expect("a constant-bank relocation");
    let site = o.u64(base + 24 * k);
    link_at(90, vec![bytes("a.o", &o.0), bytes("c2.o", &c2.0)]).expect("unmutated links");
    o.set64(base + 24 * k + 16, 1 << 40);
    let e = error_of(link_at(90, vec![bytes("a.o", &o.0), bytes("c2.o", &c2.0)]));
    check(&e, ErrorKind::Overflow, "", Some(".text.k1"), Some(site));
}

#[test]
fn malformed_eiattr_records() {
    for name in [".nv.info", ".nv.info.kern_a"] {
        // The first record's payload length runs past the section.
        rejects(
            |o| o.set16(o.data_off(name) + 2, 0x7fff),
            "",
            Some(name),
            None,
        );
        // A record cut short.
        rejects(|o| o.set_size(name, o.size(name) - 1), "", Some(name), None);
    }
}

#[test]
fn malformed_eicompat_records() {
    let compat = ".nv.compat";
    // The last record (an SVAL) cut short.
    rejects(
        |o| o.set_size(compat, o.size(compat) - 1),
        "",
        Some(compat),
        None,
    );
    // An unknown record format.
    rejects(
        |o| {
            let d = o.data_off(compat);
            o.0[d] = 0x09;
        },
        "",
        Some(compat),
        None,
    );
}

#[test]
fn malformed_notes() {
    for name in [".note.nv.tkinfo", ".note.nv.cuinfo"] {
        // n_descsz
        rejects(
            |o| o.set32(o.data_off(name) + 4, 0x7fff_0000),
            "",
            Some(name),
            None,
        );
        // n_namesz
        rejects(
            |o| o.set32(o.data_off(name), 0x7fff_0000),
            "",
            Some(name),
            None,
        );
    }
}

#[test]
fn malformed_callgraph_and_prototypes() {
    for name in [".nv.callgraph", ".nv.prototype"] {
        // Half an entry.
        rejects(|o| o.set_size(name, o.size(name) - 4), "", Some(name), None);
    }
}

#[test]
fn absurd_counts_allocate_nothing_big() {
    const BIG: usize = 64 << 20;
    let before = LARGEST_ALLOC.load(Ordering::Relaxed);
    // 2^32 sections through extended numbering (e_shnum 0, count in section 0).
    rejects(
        |o| {
            o.set16(60, 0);
            o.set64(o.shdr(0) + 32, 1 << 32);
        },
        "holds at most",
        None,
        Some(60),
    );
    // 65535 sections.
    rejects(|o| o.set16(60, 0xffff), "holds at most", None, Some(60));
    // Huge sizes of sections with contents.
    for name in [
        ".symtab",
        ".rela.text.kern_a",
        ".nv.info",
        ".strtab",
        ".text.kern_a",
    ] {
        rejects(
            |o| o.set_size(name, 1 << 62),
            "past the end",
            Some(name),
            None,
        );
    }
    // A huge section that occupies no file space.
    let mut g = Obj::load("globals_const_shared", "k");
    let name = (1..g.shnum())
        .map(|i| g.name_of(i))
        .find(|n| n.starts_with(".nv.global") && !n.contains("init"))
        .expect("a .nv.global section");
    g.set_size(&name, 1 << 62);
    let e = error_of(link_at(90, vec![bytes("a.o", &g.0)]));
    check(
        &e,
        ErrorKind::Overflow,
        "exceeds culink's limit",
        Some(&name),
        None,
    );
    // Absurd section alignment.
    let mut o = a();
    let h = o.shdr(o.sec(".nv.info"));
    let off = o.u64(h + 24);
    o.set64(h + 48, 1 << 62);
    o.set64(h + 24, off); // stays misaligned: the reader rejects it first
    assert!(link_a(&o).is_err());
    let after = LARGEST_ALLOC.load(Ordering::Relaxed);
    assert!(
        after < BIG.max(before),
        "an allocation of {after} bytes for absurd counts"
    );
}

#[test]
fn same_name_with_and_without_file_space() {
    // Sections are merged by name; `.nv.global` occupies no file space, so an
    // input whose `.nv.global` has contents cannot be merged with it.
    let k = Obj::load("globals_const_shared", "k");
    let mut o = k.clone();
    let h = o.shdr(o.sec(".nv.global"));
    o.set32(h + 4, 1); // SHT_PROGBITS
                       // The same bytes as .shstrtab (identical ranges are allowed).
    let sh = o.shdr(o.sec(".shstrtab"));
    let (off, size) = (o.u64(sh + 24), o.u64(sh + 32));
    o.set64(h + 24, off);
    o.set64(h + 32, size);
    o.set64(h + 48, 1);
    let e = error_of(link_at(90, vec![bytes("x.o", &k.0), bytes("a.o", &o.0)]));
    check(
        &e,
        ErrorKind::Malformed,
        "sections of one name are merged",
        Some(".nv.global"),
        None,
    );
    assert!(e.message.contains("'x.o'"), "{e}");
}

/// A fatbinary container with one ELF entry: `flags` (compression) and the
/// claimed uncompressed size are the caller's.
fn fatbin(payload: &[u8], sm: u32, flags: u64, uncompressed: u64) -> Vec<u8> {
    let padded = payload.len().div_ceil(8) * 8;
    let mut h = [0u8; 64];
    h[0..2].copy_from_slice(&2u16.to_le_bytes());
    h[2..4].copy_from_slice(&0x0101u16.to_le_bytes());
    h[4..8].copy_from_slice(&64u32.to_le_bytes());
    h[8..16].copy_from_slice(&(padded as u64).to_le_bytes());
    h[16..20].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    h[28..32].copy_from_slice(&sm.to_le_bytes());
    h[40..48].copy_from_slice(&flags.to_le_bytes());
    h[56..64].copy_from_slice(&uncompressed.to_le_bytes());
    let mut out = 0xBA55_ED50u32.to_le_bytes().to_vec();
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(&((64 + padded) as u64).to_le_bytes());
    out.extend_from_slice(&h);
    out.extend_from_slice(payload);
    out.resize(16 + 64 + padded, 0);
    out
}

#[test]
fn containers_truncated_at_every_offset() {
    let a0 = a();
    let b = Obj::load("call_extern", "b");
    let fb = fatbin(&a0.0, 90, 0, 0);
    // The whole fatbinary links like the object it holds.
    link_at(90, vec![bytes("a.o", &fb), bytes("b.o", &b.0)]).expect("fatbinary links");
    for cut in 1..fb.len() {
        let e = error_of(link_at(
            90,
            vec![bytes("a.o", &fb[..cut]), bytes("b.o", &b.0)],
        ));
        assert!(e.to_string().contains("a.o"), "cut at {cut}: {e}");
    }
}

#[test]
fn compressed_size_bombs_allocate_nothing_big() {
    let before = LARGEST_ALLOC.load(Ordering::Relaxed);
    let b = Obj::load("call_extern", "b");
    // LZ4 flag 0x2000, Zstandard 0x8000: 16 bytes claiming 4 GiB.
    for flags in [0x2000u64, 0x8000] {
        let fb = fatbin(&[0x55; 16], 90, flags, (1 << 32) - 8);
        let e = error_of(link_at(90, vec![bytes("a.o", &fb), bytes("b.o", &b.0)]));
        assert_eq!(e.kind, ErrorKind::Malformed, "{e}");
    }
    let after = LARGEST_ALLOC.load(Ordering::Relaxed);
    assert!(
        after < (64 << 20).max(before),
        "an allocation of {after} bytes"
    );
}

#[test]
fn fuzz_regressions_fail_cleanly() {
    let dir = common::workspace_root().join("crates/linker-core/tests/data/fuzz-regressions");
    let b = Obj::load("call_extern", "b");
    let a0 = a();
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let sm = linker_core::Cubin::parse(&data)
            .map(|c| c.arch().sm)
            .unwrap_or(90);
        for inputs in [
            vec![bytes("a.o", &data)],
            vec![bytes("a.o", &data), bytes("b.o", &b.0)],
            vec![bytes("x.o", &a0.0), bytes("a.o", &data)],
        ] {
            match link_at(sm, inputs) {
                Ok(out) => {
                    linker_core::Cubin::parse(&out.cubin).unwrap_or_else(|e| {
                        panic!("{}: output does not parse: {e}", path.display())
                    });
                }
                Err(f) => {
                    let e = f.errors().next().expect("an error");
                    assert!(e.file.is_some(), "{}: {e}", path.display());
                }
            }
        }
        n += 1;
    }
    assert!(n >= 7, "regression inputs missing from {}", dir.display());
}
