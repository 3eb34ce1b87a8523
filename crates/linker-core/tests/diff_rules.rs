//! The equivalence rules of `linker_core::diff` exercised on NVIDIA-tool output
//! (nvlink and ptxas 13.0.88): every reference is equivalent to itself, each
//! mutation class is caught and named, duplicate local functions match as
//! multisets, and the program-header rule holds where it should.

use linker_core::cubin::{eiattr, Cubin, SHDR_SIZE, SYM_SIZE};
use linker_core::diff::{check_program_headers, diff, equivalent, DiffKind, Difference};
use linker_core::dump::dump_to_string;
use linker_core::elf::*;
use std::path::{Path, PathBuf};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(data_dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Every nvlink output: the committed copies in tests/data plus, when present,
/// the shared fixture set `tests/link/*/nvlink.sm_*.cubin`.
fn references() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(data_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cubin"))
        .collect();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/link");
    if let Ok(cases) = std::fs::read_dir(&fixtures) {
        for case in cases.flatten() {
            if let Ok(files) = std::fs::read_dir(case.path()) {
                paths.extend(files.flatten().map(|f| f.path()).filter(|p| {
                    let n = p.file_name().unwrap().to_string_lossy();
                    n.starts_with("nvlink.sm_") && n.ends_with(".cubin")
                }));
            }
        }
    }
    paths.sort();
    for p in paths {
        out.push((p.display().to_string(), std::fs::read(&p).unwrap()));
    }
    assert!(out.len() >= 6, "too few references: {}", out.len());
    out
}

fn parse(bytes: &[u8]) -> Cubin<'_> {
    Cubin::parse(bytes).unwrap()
}

fn sections(c: &Cubin<'_>) -> Vec<(u32, String, u64, u64, u32)> {
    c.sections
        .iter()
        .map(|s| (s.index, s.name.to_string(), s.offset, s.size, s.sh_type))
        .collect()
}

/// Whether two defined symbols share a name: their diff identities depend on
/// what refers to them, so one mutation may show up more than once.
fn has_duplicate_names(c: &Cubin<'_>) -> bool {
    let mut names: Vec<&str> = c
        .symbols
        .iter()
        .skip(1)
        .filter(|s| !s.is_undefined() && !s.name.is_empty())
        .map(|s| s.name)
        .collect();
    names.sort_unstable();
    names.windows(2).any(|w| w[0] == w[1])
}

/// Asserts `d` holds exactly one difference (or, with duplicate names, at least
/// one) and returns the first one of `kind` for which `ok` holds.
fn expect_one(
    name: &str,
    c: &Cubin<'_>,
    d: &[Difference],
    kind: DiffKind,
    ok: impl Fn(&str) -> bool,
) {
    if !has_duplicate_names(c) {
        assert_eq!(d.len(), 1, "{name}:\n{}", show(d));
    }
    assert!(
        d.iter().any(|x| x.kind == kind && ok(&x.to_string())),
        "{name}: no {kind:?} difference as expected:\n{}",
        show(d)
    );
}

fn show(d: &[Difference]) -> String {
    d.iter().map(|x| format!("  {x}\n")).collect()
}

/// Applies `mutate` to a copy of `bytes`, diffs it against the original and returns the differences.
fn mutated(bytes: &[u8], mutate: impl FnOnce(&mut Vec<u8>)) -> Vec<Difference> {
    let mut m = bytes.to_vec();
    mutate(&mut m);
    let ours = Cubin::parse(&m).expect("mutation keeps the file parseable");
    diff(&ours, &parse(bytes))
}

#[test]
fn every_reference_is_equivalent_to_itself_and_dumps_deterministically() {
    for (name, bytes) in references() {
        let c = parse(&bytes);
        let d = diff(&c, &c);
        assert!(d.is_empty(), "{name}:\n{}", show(&d));
        assert!(equivalent(&c, &c));
        let a = dump_to_string(&c);
        assert_eq!(a, dump_to_string(&parse(&bytes)), "{name}");
        assert!(
            a.contains("ELF header:") && a.contains("Symbols ("),
            "{name}"
        );
    }
}

#[test]
fn flipped_text_bit_is_caught_with_function_and_offset() {
    for (name, bytes) in references() {
        let c = parse(&bytes);
        let Some(t) = c
            .sections
            .iter()
            .find(|s| s.name.starts_with(".text.") && s.size > 0x30)
        else {
            continue;
        };
        let at = t.offset as usize + 0x23;
        let func = t.name.trim_start_matches(".text.").to_string();
        let d = mutated(&bytes, |m| m[at] ^= 0x10);
        expect_one(&name, &c, &d, DiffKind::Text, |m| {
            m.contains(&format!("`{func}")) && m.contains("instruction offset 0x20")
        });
    }
}

#[test]
fn changed_regcount_is_caught_with_attribute_and_kernel() {
    let mut seen = 0;
    for (name, bytes) in references() {
        let c = parse(&bytes);
        let mut target = None;
        for s in c.sections.iter().filter(|s| s.sh_type == SHT_CUDA_INFO) {
            for r in eiattr::parse(s.data).unwrap() {
                if r.attr == eiattr::EiAttr::EIATTR_REGCOUNT && target.is_none() {
                    let (sym, _) = r.sym_value().unwrap();
                    let at = s.offset as usize + r.offset + 8;
                    target = Some((at, c.symbols[sym as usize].name.to_string()));
                }
            }
        }
        let Some((at, func)) = target else { continue };
        seen += 1;
        let d = mutated(&bytes, |m| m[at] = m[at].wrapping_add(1));
        assert_eq!(d.len(), 1, "{name}:\n{}", show(&d));
        assert_eq!(d[0].kind, DiffKind::Attribute);
        let msg = d[0].to_string();
        assert!(
            msg.contains("EIATTR_REGCOUNT") && msg.contains(&format!("`{func}")),
            "{name}: {msg}"
        );
    }
    assert!(seen > 0);
}

#[test]
fn changed_symbol_size_is_caught() {
    for (name, bytes) in references() {
        let c = parse(&bytes);
        let Some(index) = c
            .symbols
            .iter()
            .position(|s| s.ty() == STT_FUNC && s.size > 0)
        else {
            continue;
        };
        let sym = &c.symbols[index];
        let symtab = &c.sections[c.symtab.unwrap() as usize];
        let at = symtab.offset as usize + index * SYM_SIZE + 16;
        let sname = sym.name.to_string();
        let d = mutated(&bytes, |m| m[at] ^= 0x80);
        assert!(
            d.iter().any(|x| x.kind == DiffKind::Symbol
                && x.to_string().contains(&format!("`{sname}"))
                && x.to_string().contains("size")),
            "{name}:\n{}",
            show(&d)
        );
    }
}

#[test]
fn changed_addend_and_deleted_relocation_are_caught() {
    let mut seen = 0;
    for (name, bytes) in references() {
        let c = parse(&bytes);
        let Some(rs) = c
            .sections
            .iter()
            .find(|s| s.sh_type == SHT_RELA && s.size >= 48)
        else {
            continue;
        };
        seen += 1;
        let target = c.section_name(rs.info);
        // Changed addend of the first entry.
        let at = rs.offset as usize + 16;
        let d = mutated(&bytes, |m| m[at] = m[at].wrapping_add(8));
        expect_one(&name, &c, &d, DiffKind::Relocation, |m| {
            m.contains(&target) && m.contains("addend")
        });
        // Deleted last entry: shrink sh_size by one entry.
        let shdr = c.header.e_shoff as usize + rs.index as usize * SHDR_SIZE + 32;
        let d = mutated(&bytes, |m| {
            let size = u64::from_le_bytes(m[shdr..shdr + 8].try_into().unwrap()) - 24;
            m[shdr..shdr + 8].copy_from_slice(&size.to_le_bytes());
        });
        expect_one(&name, &c, &d, DiffKind::Relocation, |m| {
            m.starts_with("missing relocation") && m.contains(&target)
        });
    }
    assert!(seen > 0);
}

#[test]
fn same_inputs_in_other_order_differ_only_in_debug_frame() {
    // nvlink a b vs b a: merged .debug_frame order (and so its relocation offsets)
    // follows input order; everything else matches as multisets.
    let (ab, ba) = (read("ab_90.cubin"), read("ba_90.cubin"));
    let d = diff(&parse(&ba), &parse(&ab));
    assert!(!d.is_empty());
    for x in &d {
        assert!(x.to_string().contains(".debug_frame"), "{x}");
    }
}

#[test]
fn duplicate_local_functions_match_as_multisets() {
    // d1.ptx and d2.ptx each define a local `.func helper` (adding 11 and 22).
    for sm in [75, 90] {
        let a = read(&format!("dupl_{sm}.cubin"));
        let b = read(&format!("duplrev_{sm}.cubin"));
        let (ca, cb) = (parse(&a), parse(&b));
        assert_eq!(
            ca.sections
                .iter()
                .filter(|s| s.name == ".text.helper")
                .count(),
            2
        );
        assert!(diff(&ca, &ca).is_empty());
        // Reversed input order: the two helpers swap places; only .debug_frame
        // (FDE order) differs.
        let d = diff(&cb, &ca);
        for x in &d {
            assert!(x.to_string().contains(".debug_frame"), "sm_{sm}: {x}");
        }
        // A flipped bit in the second helper is caught and named.
        let second = ca
            .sections
            .iter()
            .filter(|s| s.name == ".text.helper")
            .nth(1)
            .unwrap();
        let at = second.offset as usize + 0x11;
        let d = mutated(&a, |m| m[at] ^= 1);
        assert!(
            d.iter().any(|x| x.kind == DiffKind::Text
                && x.to_string().contains("`helper#")
                && x.to_string().contains("instruction offset 0x10")),
            "sm_{sm}:\n{}",
            show(&d)
        );
        // A call retargeted from one helper to the other is caught: swap the symbol
        // index of the CALL relocation in kern1's relocations.
        let helpers: Vec<u32> = ca
            .symbols
            .iter()
            .enumerate()
            .filter(|(_, s)| s.name == "helper")
            .map(|(i, _)| i as u32)
            .collect();
        let (rel, k, r) = ca
            .sections
            .iter()
            .filter(|s| s.is_reloc() && ca.section_name(s.info) == ".text.kern1")
            .find_map(|s| {
                ca.relocs(s)
                    .enumerate()
                    .find(|(_, r)| helpers.contains(&r.sym))
                    .map(|(k, r)| (s, k, r))
            })
            .unwrap();
        let ent = if rel.sh_type == SHT_RELA { 24 } else { 16 };
        let other = if r.sym == helpers[0] {
            helpers[1]
        } else {
            helpers[0]
        };
        let at = rel.offset as usize + k * ent + 12;
        let d = mutated(&a, |m| m[at..at + 4].copy_from_slice(&other.to_le_bytes()));
        assert!(
            d.iter().any(|x| x.kind == DiffKind::Relocation),
            "sm_{sm}:\n{}",
            show(&d)
        );
    }
}

#[test]
fn program_header_rules() {
    for (name, bytes) in references() {
        let c = parse(&bytes);
        if c.header.e_type == linker_core::elf::ET_REL {
            continue; // `-r` references (nvlink -r) have no program headers
        }
        let p = check_program_headers(&c);
        let sm = c.arch().sm;
        if sm < 90 {
            // nvlink's sm_75..sm_89 layout is the old-layout rule.
            assert!(p.is_empty(), "{name}:\n{}", show(&p));
        } else if sm == 90 && !name.contains("whole") {
            // nvlink emits 3-4 headers for sm_90, not the six-segment scheme.
            assert!(!p.is_empty(), "{name}");
        }
    }
    // The six-segment scheme: ptxas whole-program sm_90 and nvlink sm_100.
    for f in ["c1_whole_90.cubin", "loc_100.cubin"] {
        let b = read(f);
        let p = check_program_headers(&parse(&b));
        assert!(p.is_empty(), "{f}:\n{}", show(&p));
        // A wrong flag is caught.
        let c = parse(&b);
        let at = c.header.e_phoff as usize + 3 * 56 + 4;
        let mut m = b.clone();
        m[at] ^= PF_W as u8;
        assert!(!check_program_headers(&parse(&m)).is_empty(), "{f}");
    }
    // Objects have no program headers.
    assert!(check_program_headers(&parse(&read("d1_90.o"))).is_empty());
}

#[test]
fn no_panic_on_damaged_input() {
    for (name, bytes) in references().into_iter().take(12) {
        let c = parse(&bytes);
        let secs = sections(&c);
        // Truncations and byte corruption inside every section: parse may fail,
        // but dump, diff and the phdr rule never panic.
        let mut cuts: Vec<usize> = (0..bytes.len()).step_by(97).collect();
        cuts.extend(secs.iter().map(|s| s.2 as usize));
        for cut in cuts {
            if let Ok(t) = Cubin::parse(&bytes[..cut.min(bytes.len())]) {
                let _ = dump_to_string(&t);
                let _ = diff(&t, &c);
                let _ = check_program_headers(&t);
            }
        }
        for (_, _, off, size, _) in secs {
            for k in [0u64, 1, 2, 3, 4, 5, 7, 8] {
                if k >= size {
                    continue;
                }
                let mut m = bytes.clone();
                let i = (off + k) as usize;
                if i < m.len() {
                    m[i] = m[i].wrapping_add(0x7f);
                }
                if let Ok(t) = Cubin::parse(&m) {
                    let _ = dump_to_string(&t);
                    let _ = diff(&t, &c);
                    let _ = diff(&c, &t);
                    let _ = check_program_headers(&t);
                }
            }
        }
        let _ = name;
    }
}

#[test]
fn changed_copy_of_a_twin_local_kernel_is_a_text_difference() {
    // Two static kernels `sk` (inputs a and c of fixture static_kernel_twins);
    // nothing but their own sections refers to them, so diff tells them apart
    // by content. A scheduling bit flipped in either copy (as when nvlink
    // re-finalizes one copy at sm_100+) must be reported as that copy's text
    // difference, not as one `sk` missing and another extra.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/link/static_kernel_twins");
    for sm in [75, 90, 100] {
        let bytes = std::fs::read(dir.join(format!("nvlink.sm_{sm}.cubin"))).unwrap();
        let c = parse(&bytes);
        let copies: Vec<_> = c.sections.iter().filter(|s| s.name == ".text.sk").collect();
        assert_eq!(copies.len(), 2, "sm_{sm}");
        for copy in copies {
            // Byte 15 of the second instruction: scheduling control only.
            let at = copy.offset as usize + 0x1f;
            let d = mutated(&bytes, |m| m[at] ^= 0x08);
            assert!(!d.is_empty(), "sm_{sm}");
            for x in &d {
                assert_eq!(x.kind, DiffKind::Text, "sm_{sm}:\n{}", show(&d));
                assert!(
                    x.to_string().contains("`sk#") && x.to_string().contains("offset 0x10"),
                    "sm_{sm}:\n{}",
                    show(&d)
                );
            }
        }
    }
}
