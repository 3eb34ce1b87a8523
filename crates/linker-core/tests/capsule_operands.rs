//! Blackwell capsules get the values the linker resolves (`docs/blackwell.md`
//! §4); a capsule the linker cannot decode, or an operand whose SASS twin is
//! missing, is copied unpatched and the link still succeeds.
//!
//! Inputs: `tests/link/const_multi/c{1,2}.sm_100.o`, mutated in memory. In the
//! reference link, `k1`'s capsule gets `ca+4` = 0x0c and `k2`'s `cb+8` = 0x1c,
//! both at capsule byte 0x70 (byte 12 of the raw copy of SASS instruction 6).

use linker_core::{Cubin, InputSource, LinkOptions, SmArch};
use std::path::PathBuf;
use std::sync::Arc;

fn object(stem: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../tests/link/const_multi/{stem}.sm_100.o"));
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Links `c1` and `c2` at sm_100; the output's capsule bytes of `k1` and `k2`.
fn link(c1: &[u8], c2: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let src = |name: &str, d: &[u8]| InputSource::Bytes {
        name: name.into(),
        data: Arc::from(d),
    };
    let out = linker_core::link(&LinkOptions {
        arch: Some(SmArch::new(100)),
        inputs: vec![src("c1.o", c1), src("c2.o", c2)],
        ..LinkOptions::default()
    })
    .expect("links");
    let c = Cubin::parse(&out.cubin).expect("parses");
    let cap = |k: &str| {
        c.sections
            .iter()
            .find(|s| s.name == format!(".nv.capmerc.text.{k}"))
            .expect("capsule")
            .data
            .to_vec()
    };
    (cap("k1"), cap("k2"))
}

/// File offset of section `name` of `obj`.
fn section_offset(obj: &[u8], name: &str) -> usize {
    let c = Cubin::parse(obj).expect("parses");
    let s = c.sections.iter().find(|s| s.name == name).expect(name);
    s.offset as usize
}

fn word(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

#[test]
fn resolved_operands_are_written() {
    let (k1, k2) = link(&object("c1"), &object("c2"));
    assert_eq!(word(&k1, 0x70), 0x0c, "ca+4");
    assert_eq!(word(&k2, 0x70), 0x1c, "cb+8");
}

#[test]
fn undecodable_capsule_is_copied_unpatched() {
    let mut c2 = object("c2");
    // An unknown item kind in k2's capsule (its first item, after the header
    // and the two mask words).
    let cap = section_offset(&c2, ".nv.capmerc.text.k2");
    assert_eq!(c2[cap + 0x14], 0x01);
    c2[cap + 0x14] = 0x77;
    let (k1, k2) = link(&object("c1"), &c2);
    assert_eq!(word(&k1, 0x70), 0x0c, "k1 still patched");
    assert_eq!(word(&k2, 0x70), 0, "k2 left alone");
    assert_eq!(k2[0x14], 0x77);
}

#[test]
fn operand_without_sass_twin_is_left_alone() {
    let mut c2 = object("c2");
    // Change the addend of the SASS relocation of `cb+8` (the one at .text
    // offset 0x60): the Mercury one no longer has a twin.
    let rela = section_offset(&c2, ".rela.text.k2");
    let c = Cubin::parse(&c2).expect("parses");
    let size = c
        .sections
        .iter()
        .find(|s| s.name == ".rela.text.k2")
        .expect("rela")
        .size as usize;
    drop(c);
    let entry = (0..size / 24)
        .map(|i| rela + 24 * i)
        .find(|&e| u64::from_le_bytes(c2[e..e + 8].try_into().expect("8")) == 0x60)
        .expect("relocation at 0x60");
    c2[entry + 16] = 12; // addend 8 -> 12
    let (k1, k2) = link(&object("c1"), &c2);
    assert_eq!(word(&k1, 0x70), 0x0c);
    assert_eq!(word(&k2, 0x70), 0, "no twin: unpatched");
}
