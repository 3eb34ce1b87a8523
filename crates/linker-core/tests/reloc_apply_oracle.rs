//! The applier against nvlink 13.0.88's own patched bytes.
//!
//! Every vector is (relocation type, value(s) nvlink used, the site bytes ptxas wrote, the
//! site bytes in nvlink's output), copied from the oracle link matrix
//! (`shared/oracle-ptx/link.sh`: `<out>.cubin` from `<in>.o`, ptxas/nvlink 13.0.88). The site
//! starts at `r_offset`; only the first `width_bytes` are relocated, the rest must be kept.

use linker_core::reloc::table::{describe, RelocType, ValueKind};
use linker_core::reloc::{apply, apply_at, extract, extract_value};
use linker_core::ErrorKind;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// One oracle vector.
struct Case {
    /// Where it came from: output file, input object, section, r_offset, symbol+addend.
    origin: &'static str,
    ty: RelocType,
    /// The value of address-like kinds (symbol offset + addend).
    addr: u64,
    /// The constant bank, when nvlink's output has one.
    bank: Option<u64>,
    input: &'static str,
    output: &'static str,
}

const CASES: &[Case] = &[
    // sm_75..89: .const offsets (SHIFT2: stored /4) and the bank (0 from ptxas -> 3).
    Case {
        origin: "c12_75.cubin: c1_75.o .text.k1 +0x20, ca(0x8)+4",
        ty: RelocType::R_CUDA_CONST_FIELD19_40,
        addr: 0xc,
        bank: Some(3),
        input: "247606ff00000000ff008e0700e20f00",
        output: "247606ff0003c000ff008e0700e20f00",
    },
    Case {
        origin: "c12_75.cubin: c2_75.o .text.k2 +0x20, cb(0x14)+8",
        ty: RelocType::R_CUDA_CONST_FIELD19_40,
        addr: 0x1c,
        bank: Some(3),
        input: "247606ff00000000ff008e0700e20f00",
        output: "247606ff0007c000ff008e0700e20f00",
    },
    Case {
        origin: "all_75.cubin: c1_75.o .text.k1 +0x20, ca(0x10)+4",
        ty: RelocType::R_CUDA_CONST_FIELD19_40,
        addr: 0x14,
        bank: Some(3),
        input: "247606ff00000000ff008e0700e20f00",
        output: "247606ff0005c000ff008e0700e20f00",
    },
    Case {
        origin: "k_75.cubin: k_75.o .text.kern +0xb0, c1(0x0)+0",
        ty: RelocType::R_CUDA_CONST_FIELD19_40,
        addr: 0,
        bank: Some(3),
        input: "107a02030000000002e0ff0700d04f00",
        output: "107a02030000c00002e0ff0700d04f00",
    },
    Case {
        origin: "c12_80.cubin: c2_80.o .text.k2 +0x20, cb(0x14)+8",
        ty: RelocType::R_CUDA_CONST_FIELD19_40,
        addr: 0x1c,
        bank: Some(3),
        input: "247608ff00000000ff008e0700e20f00",
        output: "247608ff0007c000ff008e0700e20f00",
    },
    // sm_75..89: .shared offsets in the kernel's window.
    Case {
        origin: "c12_75.cubin: c1_75.o .text.k1 +0xe0, dyn(0x80)+4",
        ty: RelocType::R_CUDA_ABS24_40,
        addr: 0x84,
        bank: None,
        input: "847902ff000000000018000000220e00",
        output: "847902ff008400000018000000220e00",
    },
    Case {
        origin: "c12_75.cubin: c1_75.o .text.k1 +0x80, dyn(0x80)+0xc",
        ty: RelocType::R_CUDA_ABS24_40,
        addr: 0x8c,
        bank: None,
        input: "887300ff050000000008000000e81f00",
        output: "887300ff058c00000008000000e81f00",
    },
    Case {
        origin: "k_75.cubin: k_75.o .text.kern +0xa0, $__sh__11(0x0)+4",
        ty: RelocType::R_CUDA_ABS24_40,
        addr: 0x4,
        bank: None,
        input: "847902ff000000000018000000a40e00",
        output: "847902ff000400000018000000a40e00",
    },
    // sm_75..89: texref/surfref -> constant0 slot (0x168, 0x16c in .nv.constant0.ktex), /4.
    Case {
        origin: "tex_75.cubin: tex_75.o .text.ktex +0x20, tex1 -> slot 0x168",
        ty: RelocType::R_CUDA_BINDLESSOFF14_40,
        addr: 0x168,
        bank: None,
        input: "667b0004ff000010ff019e0000421f00",
        output: "667b0004ff5a0010ff019e0000421f00",
    },
    Case {
        origin: "tex_75.cubin: tex_75.o .text.ktex +0x30, surf1 -> slot 0x16c",
        ty: RelocType::R_CUDA_BINDLESSOFF14_40,
        addr: 0x16c,
        bank: None,
        input: "997b02040000001000091f0000620f00",
        output: "997b0204005b001000091f0000620f00",
    },
    // sm_90+: .shared offsets.
    Case {
        origin: "c12_90.cubin: c1_90.o .text.k1 +0xe0, dyn -> 0x80",
        ty: RelocType::R_CUDA_ABS32_32,
        addr: 0x80,
        bank: None,
        input: "82780600000000000000000000e40f00",
        output: "82780600800000000000000000e40f00",
    },
    Case {
        origin: "c12_90.cubin: c2_90.o .text.k2 +0xa0, dyn -> 0x40",
        ty: RelocType::R_CUDA_ABS32_32,
        addr: 0x40,
        bank: None,
        input: "82780600000000000000000000e40f00",
        output: "82780600400000000000000000e40f00",
    },
    // sm_90+: .const offsets, byte offset unshifted; bank already 3 in the input.
    Case {
        origin: "c12_90.cubin: c1_90.o .text.k1 +0x90, ca(0x8)+4",
        ty: RelocType::R_CUDA_CONST_FIELD21_38,
        addr: 0xc,
        bank: Some(3),
        input: "827b00ff0000c0000008000000a20e00",
        output: "827b00ff0003c0000008000000a20e00",
    },
    Case {
        origin: "c12_90.cubin: c2_90.o .text.k2 +0x70, cb(0x14)+8",
        ty: RelocType::R_CUDA_CONST_FIELD21_38,
        addr: 0x1c,
        bank: Some(3),
        input: "827b04ff0000c0000008000000a20e00",
        output: "827b04ff0007c0000008000000a20e00",
    },
    Case {
        origin: "c12_100.cubin: c2_100.o .text.k2 +0x60, cb(0x14)+8",
        ty: RelocType::R_CUDA_CONST_FIELD21_38,
        addr: 0x1c,
        bank: Some(3),
        input: "827b04ff0000c0000008000000e20e00",
        output: "827b04ff0007c0000008000000e20e00",
    },
    // sm_90+: surfref -> constant0 slot 0x21c, bank 0 (ptxas pre-filled 0x218).
    Case {
        origin: "tex_90.cubin: tex_90.o .text.ktex +0x50, surf1 -> c[0x0][0x21c]",
        ty: RelocType::R_CUDA_CONST_FIELD21_38,
        addr: 0x21c,
        bank: Some(0),
        input: "b97a0400008600000008000000e40f00",
        output: "b97a0400008700000008000000e40f00",
    },
    // sm_100/120: the 17-bit variant, surfref -> constant0 slot 0x394.
    Case {
        origin: "tex_100.cubin: tex_100.o .text.ktex +0x50, surf1 -> c[0x0][0x394]",
        ty: RelocType::R_CUDA_CONST_FIELD22_37,
        addr: 0x394,
        bank: Some(0),
        input: "ac7704ff007200000008000800241e00",
        output: "ac7704ff807200000008000800241e00",
    },
    // .debug_frame: CIE pointer -> offset of the CIE in the output section.
    Case {
        origin: "loc_90.cubin: loc_90.o .debug_frame +0x17c, .debug_frame+0x150",
        ty: RelocType::R_CUDA_64,
        addr: 0x150,
        bank: None,
        input: "0000000000000000",
        output: "5001000000000000",
    },
    // .debug_frame: address_range of dead-stripped `unusedvis` zeroed.
    Case {
        origin: "loc_90.cubin: loc_90.o .debug_frame +0x18c, unusedvis (dead)",
        ty: RelocType::R_CUDA_UNUSED_CLEAR64,
        addr: 0,
        bank: None,
        input: "0001000000000000",
        output: "0000000000000000",
    },
];

fn values(case: &Case) -> impl Fn(ValueKind) -> Option<u64> + '_ {
    move |k| match k {
        ValueKind::CBank => case.bank,
        _ => Some(case.addr),
    }
}

#[test]
fn apply_reproduces_nvlink_bytes() {
    for case in CASES {
        let desc = case.ty.desc().unwrap();
        let mut site = hex(case.input);
        apply(desc, &mut site, values(case)).unwrap_or_else(|e| panic!("{}: {e}", case.origin));
        assert_eq!(site, hex(case.output), "{} ({})", case.origin, case.ty);
        // The same through apply_at, inside a larger section.
        let mut section = vec![0xaa; 0x40];
        section.extend_from_slice(&hex(case.input));
        apply_at(&mut section, 0x40, case.ty.0, values(case)).unwrap();
        assert_eq!(&section[0x40..], &hex(case.output)[..], "{}", case.origin);
        assert!(section[..0x40].iter().all(|&b| b == 0xaa));
        // Reading the address field back gives the value.
        assert_eq!(
            extract_value(desc, &site, 0).unwrap(),
            case.addr,
            "{}",
            case.origin
        );
    }
}

#[test]
fn unsupplied_fields_are_kept() {
    // Without a bank the sm_90 bank (3, pre-filled by ptxas) stays.
    let desc = describe(RelocType::R_CUDA_CONST_FIELD21_38.0).unwrap();
    let mut site = hex("827b00ff0000c0000008000000a20e00");
    apply(desc, &mut site, |k| (k == ValueKind::Addr).then_some(0xc)).unwrap();
    assert_eq!(site, hex("827b00ff0003c0000008000000a20e00"));
    assert_eq!(extract(desc, &site, 1).unwrap(), 3);
    apply(desc, &mut site, |_| None).unwrap();
    assert_eq!(site, hex("827b00ff0003c0000008000000a20e00"));
}

#[test]
fn overflow_is_an_error_and_writes_nothing() {
    let cases = [
        (RelocType::R_CUDA_ABS24_40, 1u64 << 24),
        (RelocType::R_CUDA_ABS32_32, 1 << 32),
        (RelocType::R_CUDA_CONST_FIELD21_38, 0x1_0000),
        (RelocType::R_CUDA_CONST_FIELD19_40, 0x1_0000),
        (RelocType::R_CUDA_CONST_FIELD19_40, 0x6), // not a multiple of 4
        (RelocType::R_CUDA_BINDLESSOFF14_40, 0x16a),
        (RelocType::R_CUDA_32, 1 << 32),
    ];
    for (ty, v) in cases {
        let desc = ty.desc().unwrap();
        let before = vec![0x5a; 16];
        let mut site = before.clone();
        let e = apply(desc, &mut site, |k| (k != ValueKind::CBank).then_some(v)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Overflow, "{ty}");
        assert!(e.message.contains(desc.name), "{}", e.message);
        assert_eq!(site, before, "{ty}: nothing written");
        let e = apply_at(&mut site, 0, ty.0, |k| (k != ValueKind::CBank).then_some(v)).unwrap_err();
        assert_eq!(e.offset, Some(0));
    }
    // The largest values that fit do fit.
    let mut site = vec![0; 16];
    apply(
        RelocType::R_CUDA_ABS24_40.desc().unwrap(),
        &mut site,
        |_| Some(0xff_ffff),
    )
    .unwrap();
    assert_eq!(site[5..8], [0xff, 0xff, 0xff]);
    // A negative value that fits as two's complement is written truncated, as
    // nvlink does (CUB radix sort at sm_75: a shared variable at window offset
    // 0, addend -0x400 -> 0xfffc00); one below the signed range is an error.
    let abs24 = RelocType::R_CUDA_ABS24_40.desc().unwrap();
    let mut site = vec![0; 16];
    apply(abs24, &mut site, |_| Some((-0x400i64) as u64)).unwrap();
    assert_eq!(site[5..8], [0x00, 0xfc, 0xff]);
    let e = apply(abs24, &mut [0; 16], |_| Some((-(1i64 << 23) - 1) as u64)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Overflow);
    let cbank = RelocType::R_CUDA_CONST_FIELD21_38.desc().unwrap();
    let e = apply(cbank, &mut [0; 8], |k| {
        (k == ValueKind::CBank).then_some(32)
    })
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Overflow);
}

#[test]
fn split_and_truncated_values() {
    // LO/HI halves and bytes take their piece of a 64-bit address without overflow.
    let a = 0x1234_5678_9abc_def0u64;
    let mut s = [0u8; 8];
    apply(
        RelocType::R_CUDA_ABS32_LO_32.desc().unwrap(),
        &mut s,
        |_| Some(a),
    )
    .unwrap();
    assert_eq!(s, [0, 0, 0, 0, 0xf0, 0xde, 0xbc, 0x9a]);
    apply(
        RelocType::R_CUDA_ABS32_HI_32.desc().unwrap(),
        &mut s,
        |_| Some(a),
    )
    .unwrap();
    assert_eq!(s, [0, 0, 0, 0, 0x78, 0x56, 0x34, 0x12]);
    let mut b = [0u8; 1];
    apply(RelocType::R_CUDA_8_16.desc().unwrap(), &mut b, |_| Some(a)).unwrap();
    assert_eq!(b, [0xbc]);
    // ABS55_16_34 (cuobjdump: bit 16 = 0x4, bit 34 = 0x400).
    let d = RelocType::R_CUDA_ABS55_16_34.desc().unwrap();
    let mut s = [0u8; 16];
    apply(d, &mut s, |_| Some(0x404)).unwrap();
    assert_eq!(extract(d, &s, 0).unwrap(), 1);
    assert_eq!(extract(d, &s, 1).unwrap(), 1);
    assert_eq!(u128::from_le_bytes(s), (1 << 16) | (1 << 34));
    // ABS47_34 (sm_75 CALL: cuobjdump decodes bit 34 as 0x4).
    let d = RelocType::R_CUDA_ABS47_34.desc().unwrap();
    let mut s = [0u8; 16];
    apply(d, &mut s, |_| Some(0x4)).unwrap();
    assert_eq!(u128::from_le_bytes(s), 1 << 34);
    // PCREL is signed.
    let d = RelocType::R_CUDA_PCREL_IMM24_26.desc().unwrap();
    let mut s = [0u8; 8];
    apply(d, &mut s, |_| Some(-16i64 as u64)).unwrap();
    assert_eq!(extract_value(d, &s, 0).unwrap() as i64, -16);
    assert!(apply(d, &mut s, |_| Some(1 << 23)).is_err());
    assert!(apply(d, &mut s, |_| Some(-(1i64 << 23) as u64)).is_ok());
}

#[test]
fn short_sites_and_bad_entries_are_errors() {
    let d = RelocType::R_CUDA_CONST_FIELD19_40.desc().unwrap();
    let mut short = [0u8; 7];
    let e = apply(d, &mut short, |_| Some(0)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Malformed);
    assert!(extract(d, &short, 0).is_err());
    assert!(extract(d, &[0; 8], 2).is_err());
    let d128 = RelocType::R_CUDA_ABS47_34.desc().unwrap();
    assert!(apply(d128, &mut [0u8; 15], |_| Some(0)).is_err());
    let mut sec = [0u8; 0x20];
    for (off, code) in [
        (0x19u64, 2u32),
        (0x20, 2),
        (u64::MAX, 2),
        (0, 117),
        (0, 0x10001),
    ] {
        let e = apply_at(&mut sec, off, code, |_| Some(0)).unwrap_err();
        assert_eq!(e.offset, Some(off), "{off:#x} {code}");
    }
    // Types without actions touch nothing, even at the end of a section.
    apply_at(&mut sec, 0x20, RelocType::R_CUDA_NONE.0, |_| Some(1)).unwrap();
    assert_eq!(sec, [0; 0x20]);
    // INSTRUCTION128 cannot be extracted as u64.
    assert!(extract(
        RelocType::R_CUDA_INSTRUCTION128.desc().unwrap(),
        &[0; 16],
        0
    )
    .is_err());
}
