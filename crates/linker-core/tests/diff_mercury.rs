//! `diff` compares the Blackwell Mercury family by meaning: a retargeted
//! Mercury relocation, a capsule header naming another `.text`, a changed
//! `.nv.merc.symtab` entry and a changed `.nv.merc.nv.info` record are caught;
//! the reference equals itself.

use linker_core::diff::diff;
use linker_core::Cubin;
use std::path::PathBuf;

fn reference() -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/link/call_extern/nvlink.sm_100.cubin");
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// (file offset, size, sh_info) of the first section of type `ty`.
fn section(c: &Cubin<'_>, ty: u32) -> (usize, usize, u32) {
    let s = c
        .sections
        .iter()
        .find(|s| s.sh_type == ty)
        .expect("section present");
    (s.offset as usize, s.size as usize, s.info)
}

fn differences(mutated: &[u8], orig: &[u8]) -> Vec<String> {
    let (a, b) = (Cubin::parse(mutated).unwrap(), Cubin::parse(orig).unwrap());
    diff(&a, &b).into_iter().map(|d| d.message).collect()
}

#[test]
fn mercury_family_by_meaning() {
    let orig = reference();
    assert!(differences(&orig, &orig).is_empty());
    let c = Cubin::parse(&orig).unwrap();
    let (rela, _, _) = section(&c, 0x7000_0082);
    let (symtab, symsize, first_global) = section(&c, 0x7000_0085);
    let (capsule, _, _) = section(&c, 0x7000_0016);
    let (info, _, _) = section(&c, 0x7000_0083);
    drop(c);

    // A Mercury relocation against another symbol.
    let mut m = orig.clone();
    let sym = u32::from_le_bytes(m[rela + 12..rela + 16].try_into().unwrap());
    let other = if sym + 1 < (symsize / 24) as u32 {
        sym + 1
    } else {
        1
    };
    m[rela + 12..rela + 16].copy_from_slice(&other.to_le_bytes());
    let d = differences(&m, &orig);
    assert!(d.iter().any(|x| x.contains("Mercury relocation")), "{d:#?}");

    // The capsule's first word names another section.
    let mut m = orig.clone();
    m[capsule] ^= 1;
    let d = differences(&m, &orig);
    assert!(d.iter().any(|x| x.contains("capsule")), "{d:#?}");

    // A global Mercury symbol's size.
    let mut m = orig.clone();
    let e = symtab + 24 * first_global as usize;
    m[e + 16] ^= 0x10;
    let d = differences(&m, &orig);
    assert!(d.iter().any(|x| x.contains("Mercury symbol")), "{d:#?}");

    // Renumbering Mercury symbols consistently is no difference: swap two
    // global entries and every reference to them.
    let n = symsize / 24;
    if n >= first_global as usize + 2 {
        let (i, j) = (first_global as usize, first_global as usize + 1);
        let mut m = orig.clone();
        for k in 0..24 {
            m.swap(symtab + 24 * i + k, symtab + 24 * j + k);
        }
        let c = Cubin::parse(&orig).unwrap();
        let swap = |v: u32| -> u32 {
            if v == i as u32 {
                j as u32
            } else if v == j as u32 {
                i as u32
            } else {
                v
            }
        };
        for s in c.sections.iter().filter(|s| s.sh_type == 0x7000_0082) {
            for r in 0..(s.size as usize / 24) {
                let at = s.offset as usize + 24 * r + 12;
                let v = u32::from_le_bytes(m[at..at + 4].try_into().unwrap());
                m[at..at + 4].copy_from_slice(&swap(v).to_le_bytes());
            }
        }
        for s in c.sections.iter().filter(|s| s.sh_type == 0x7000_0016) {
            let at = c.header.e_shoff as usize + 64 * s.index as usize + 44;
            let v = u32::from_le_bytes(m[at..at + 4].try_into().unwrap());
            m[at..at + 4].copy_from_slice(&swap(v).to_le_bytes());
        }
        // Symbol words of .nv.merc.nv.info* (REGCOUNT etc.: first word of SVAL records).
        for s in c.sections.iter().filter(|s| s.sh_type == 0x7000_0083) {
            let (mut p, end) = (s.offset as usize, (s.offset + s.size) as usize);
            while p + 4 <= end {
                let (fmt, attr) = (m[p], m[p + 1]);
                if fmt == 4 {
                    let len = u16::from_le_bytes([m[p + 2], m[p + 3]]) as usize;
                    if matches!(attr, 0x11 | 0x12 | 0x2f | 0x23) && len >= 4 {
                        let v = u32::from_le_bytes(m[p + 4..p + 8].try_into().unwrap());
                        m[p + 4..p + 8].copy_from_slice(&swap(v).to_le_bytes());
                    }
                    p += 4 + len;
                } else {
                    p += 4;
                }
            }
        }
        drop(c);
        let d = differences(&m, &orig);
        assert!(d.is_empty(), "consistent renumbering reported: {d:#?}");
    }

    // A changed Mercury EIATTR value.
    let mut m = orig.clone();
    let _ = info;
    let c = Cubin::parse(&orig).unwrap();
    let s = c
        .sections
        .iter()
        .find(|s| s.name == ".nv.merc.nv.info")
        .expect(".nv.merc.nv.info");
    // Last record is MIN_STACK_SIZE / REGCOUNT style (sym, value): bump the value.
    let at = (s.offset + s.size) as usize - 1;
    drop(c);
    m[at] ^= 1;
    let d = differences(&m, &orig);
    assert!(d.iter().any(|x| x.contains(".nv.merc.nv.info")), "{d:#?}");
}
