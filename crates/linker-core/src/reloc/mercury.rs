//! The R_MERCURY relocation table (Blackwell capsule-Mercury sections), as data
//! next to the R_CUDA table.
//!
//! Relocations inside `.nv.merc.rela.*` sections carry `0x10000 + n` in
//! `ELF64_R_TYPE`; `n` indexes this table. The 65 rows (names, resolver
//! classes, bit actions) were read out of nvlink 13.0.88's own Mercury
//! descriptor table (64-byte rows: name pointer, class, three
//! `(first bit, width, value kind, shift)` actions), whose value-kind numbering
//! is the R_CUDA table's (checked: nvlink's R_CUDA descriptor rows match
//! [`R_CUDA_TABLE`](super::table::R_CUDA_TABLE) row for row). Two of nvlink's
//! name strings end in a space (`R_MERCURY_UNIFIED_8_0 `, `..._8_8 `); the row
//! past the last type is named `R_MERCURY_NONE_LAST` here.
//!
//! Offsets of Mercury relocations are positions in the *Mercury instruction
//! stream* the finalizer rebuilds, not in the compressed `.nv.capmerc.text.*`
//! bytes (some exceed the section size), so the linker never applies these
//! actions to capsule bytes; it only applies them to plain data
//! (`.nv.merc.debug_frame`).

use super::table::{act, RelocDesc, ResolverClass, ValueKind};

/// Added to a Mercury table index to form the ELF relocation type.
pub const R_MERCURY_BASE: u32 = 0x1_0000;

/// Number of rows of [`R_MERCURY_TABLE`].
pub const R_MERCURY_COUNT: usize = 65;

/// `R_MERCURY_ABS64` (index 2).
pub const R_MERCURY_ABS64: u32 = R_MERCURY_BASE + 2;
/// `R_MERCURY_ABS32` (index 3).
pub const R_MERCURY_ABS32: u32 = R_MERCURY_BASE + 3;
/// `R_MERCURY_ABS16` (index 4).
pub const R_MERCURY_ABS16: u32 = R_MERCURY_BASE + 4;
/// `R_MERCURY_ABS32_LO` (index 5).
pub const R_MERCURY_ABS32_LO: u32 = R_MERCURY_BASE + 5;
/// `R_MERCURY_ABS32_HI` (index 6).
pub const R_MERCURY_ABS32_HI: u32 = R_MERCURY_BASE + 6;
/// `R_MERCURY_TEX_HEADER_INDEX` (index 11).
pub const R_MERCURY_TEX_HEADER_INDEX: u32 = R_MERCURY_BASE + 11;
/// `R_MERCURY_SAMP_HEADER_INDEX` (index 12).
pub const R_MERCURY_SAMP_HEADER_INDEX: u32 = R_MERCURY_BASE + 12;
/// `R_MERCURY_SURF_HEADER_INDEX` (index 13).
pub const R_MERCURY_SURF_HEADER_INDEX: u32 = R_MERCURY_BASE + 13;
/// `R_MERCURY_UNUSED_CLEAR64` (index 14).
pub const R_MERCURY_UNUSED_CLEAR64: u32 = R_MERCURY_BASE + 14;
/// `R_MERCURY_UNIFIED` (index 50).
pub const R_MERCURY_UNIFIED: u32 = R_MERCURY_BASE + 50;
/// `R_MERCURY_UNIFIED32_LO` (index 62).
pub const R_MERCURY_UNIFIED32_LO: u32 = R_MERCURY_BASE + 62;
/// `R_MERCURY_UNIFIED32_HI` (index 63).
pub const R_MERCURY_UNIFIED32_HI: u32 = R_MERCURY_BASE + 63;

/// Whether an ELF relocation type is a Mercury one.
pub const fn is_mercury(rtype: u32) -> bool {
    rtype >= R_MERCURY_BASE && rtype < R_MERCURY_BASE + R_MERCURY_COUNT as u32
}

/// The row of a Mercury ELF relocation type (`0x10000 + n`).
pub fn describe_mercury(rtype: u32) -> Option<&'static RelocDesc> {
    let n = rtype.checked_sub(R_MERCURY_BASE)?;
    R_MERCURY_TABLE.get(usize::try_from(n).ok()?)
}

/// The type nvlink writes for a kept Mercury relocation: like the R_CUDA
/// `UNIFIED` rewrites, the unified-address forms become plain addresses
/// (`R_MERCURY_UNIFIED` → `R_MERCURY_ABS64`, `UNIFIED32_LO/HI` → `ABS32_LO/HI`;
/// measured on `loc` at sm_100/sm_120).
pub const fn rewritten_mercury_type(rtype: u32) -> u32 {
    match rtype {
        R_MERCURY_UNIFIED => R_MERCURY_ABS64,
        R_MERCURY_UNIFIED32_LO => R_MERCURY_ABS32_LO,
        R_MERCURY_UNIFIED32_HI => R_MERCURY_ABS32_HI,
        t => t,
    }
}

/// All 65 R_MERCURY types, indexed by `type - 0x10000`.
pub const R_MERCURY_TABLE: [RelocDesc; R_MERCURY_COUNT] = [
    RelocDesc {
        code: R_MERCURY_BASE,
        name: "R_MERCURY_NONE",
        class: ResolverClass::None,
        actions: &[],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 1,
        name: "R_MERCURY_G64",
        class: ResolverClass::Driver,
        actions: &[act(0, 63, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 2,
        name: "R_MERCURY_ABS64",
        class: ResolverClass::Either,
        actions: &[act(0, 63, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 3,
        name: "R_MERCURY_ABS32",
        class: ResolverClass::Either,
        actions: &[act(0, 31, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 4,
        name: "R_MERCURY_ABS16",
        class: ResolverClass::Either,
        actions: &[act(0, 15, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 5,
        name: "R_MERCURY_ABS32_LO",
        class: ResolverClass::Driver,
        actions: &[act(0, 31, ValueKind::LoAddr, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 6,
        name: "R_MERCURY_ABS32_HI",
        class: ResolverClass::Driver,
        actions: &[act(0, 31, ValueKind::HiAddr, 32)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 7,
        name: "R_MERCURY_PROG_REL64",
        class: ResolverClass::Finalizer,
        actions: &[act(0, 63, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 8,
        name: "R_MERCURY_PROG_REL32",
        class: ResolverClass::Finalizer,
        actions: &[act(0, 31, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 9,
        name: "R_MERCURY_PROG_REL32_LO",
        class: ResolverClass::Finalizer,
        actions: &[act(0, 31, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 10,
        name: "R_MERCURY_PROG_REL32_HI",
        class: ResolverClass::Finalizer,
        actions: &[act(0, 31, ValueKind::Addr, 32)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 11,
        name: "R_MERCURY_TEX_HEADER_INDEX",
        class: ResolverClass::Driver,
        actions: &[act(0, 19, ValueKind::Header, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 12,
        name: "R_MERCURY_SAMP_HEADER_INDEX",
        class: ResolverClass::Driver,
        actions: &[act(20, 31, ValueKind::Header, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 13,
        name: "R_MERCURY_SURF_HEADER_INDEX",
        class: ResolverClass::Driver,
        actions: &[act(0, 19, ValueKind::Header, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 14,
        name: "R_MERCURY_UNUSED_CLEAR64",
        class: ResolverClass::Linker,
        actions: &[act(0, 63, ValueKind::Clear, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 15,
        name: "R_MERCURY_FUNC_DESC_64",
        class: ResolverClass::Driver,
        actions: &[act(0, 63, ValueKind::FDescA, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 16,
        name: "R_MERCURY_8_0",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr8_0, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 17,
        name: "R_MERCURY_8_8",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr8_8, 8)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 18,
        name: "R_MERCURY_8_16",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr8_16, 16)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 19,
        name: "R_MERCURY_8_24",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr8_24, 24)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 20,
        name: "R_MERCURY_8_32",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr8_32, 32)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 21,
        name: "R_MERCURY_8_40",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr8_40, 40)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 22,
        name: "R_MERCURY_8_48",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr8_48, 48)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 23,
        name: "R_MERCURY_8_56",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr8_56, 56)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 24,
        name: "R_MERCURY_G8_0",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::GAddr8_0, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 25,
        name: "R_MERCURY_G8_8",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::GAddr8_8, 8)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 26,
        name: "R_MERCURY_G8_16",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::GAddr8_16, 16)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 27,
        name: "R_MERCURY_G8_24",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::GAddr8_24, 24)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 28,
        name: "R_MERCURY_G8_32",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::GAddr8_32, 32)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 29,
        name: "R_MERCURY_G8_40",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::GAddr8_40, 40)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 30,
        name: "R_MERCURY_G8_48",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::GAddr8_48, 48)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 31,
        name: "R_MERCURY_G8_56",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::GAddr8_56, 56)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 32,
        name: "R_MERCURY_FUNC_DESC_8_0",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::FDesc8_0, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 33,
        name: "R_MERCURY_FUNC_DESC_8_8",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::FDesc8_8, 8)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 34,
        name: "R_MERCURY_FUNC_DESC_8_16",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::FDesc8_16, 16)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 35,
        name: "R_MERCURY_FUNC_DESC_8_24",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::FDesc8_24, 24)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 36,
        name: "R_MERCURY_FUNC_DESC_8_32",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::FDesc8_32, 32)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 37,
        name: "R_MERCURY_FUNC_DESC_8_40",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::FDesc8_40, 40)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 38,
        name: "R_MERCURY_FUNC_DESC_8_48",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::FDesc8_48, 48)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 39,
        name: "R_MERCURY_FUNC_DESC_8_56",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::FDesc8_56, 56)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 40,
        name: "R_MERCURY_ABS_PROG_REL32_LO",
        class: ResolverClass::Driver,
        actions: &[act(0, 31, ValueKind::PcRel, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 41,
        name: "R_MERCURY_ABS_PROG_REL32_HI",
        class: ResolverClass::Driver,
        actions: &[act(0, 31, ValueKind::PcRel, 32)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 42,
        name: "R_MERCURY_PROG_REL8_0",
        class: ResolverClass::Finalizer,
        actions: &[act(0, 7, ValueKind::Addr8_0, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 43,
        name: "R_MERCURY_PROG_REL8_8",
        class: ResolverClass::Finalizer,
        actions: &[act(0, 7, ValueKind::Addr8_8, 8)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 44,
        name: "R_MERCURY_PROG_REL8_16",
        class: ResolverClass::Finalizer,
        actions: &[act(0, 7, ValueKind::Addr8_16, 16)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 45,
        name: "R_MERCURY_PROG_REL8_24",
        class: ResolverClass::Finalizer,
        actions: &[act(0, 7, ValueKind::Addr8_24, 24)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 46,
        name: "R_MERCURY_PROG_REL8_32",
        class: ResolverClass::Finalizer,
        actions: &[act(0, 7, ValueKind::Addr8_32, 32)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 47,
        name: "R_MERCURY_PROG_REL8_40",
        class: ResolverClass::Finalizer,
        actions: &[act(0, 7, ValueKind::Addr8_40, 40)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 48,
        name: "R_MERCURY_PROG_REL8_48",
        class: ResolverClass::Finalizer,
        actions: &[act(0, 7, ValueKind::Addr8_48, 48)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 49,
        name: "R_MERCURY_PROG_REL8_56",
        class: ResolverClass::Finalizer,
        actions: &[act(0, 7, ValueKind::Addr8_56, 56)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 50,
        name: "R_MERCURY_UNIFIED",
        class: ResolverClass::Driver,
        actions: &[act(0, 31, ValueKind::UAddr, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 51,
        name: "R_MERCURY_UNIFIED_32",
        class: ResolverClass::Driver,
        actions: &[act(0, 63, ValueKind::UAddr, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 52,
        name: "R_MERCURY_UNIFIED_8_0",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::UAddr8_0, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 53,
        name: "R_MERCURY_UNIFIED_8_8",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::UAddr8_8, 8)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 54,
        name: "R_MERCURY_UNIFIED_8_16",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::UAddr8_16, 16)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 55,
        name: "R_MERCURY_UNIFIED_8_24",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::UAddr8_24, 24)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 56,
        name: "R_MERCURY_UNIFIED_8_32",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::UAddr8_32, 32)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 57,
        name: "R_MERCURY_UNIFIED_8_40",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::UAddr8_40, 40)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 58,
        name: "R_MERCURY_UNIFIED_8_48",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::UAddr8_48, 48)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 59,
        name: "R_MERCURY_UNIFIED_8_56",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::UAddr8_56, 56)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 60,
        name: "R_MERCURY_ABS_PROG_REL32",
        class: ResolverClass::Driver,
        actions: &[act(0, 31, ValueKind::PcRel, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 61,
        name: "R_MERCURY_ABS_PROG_REL64",
        class: ResolverClass::Driver,
        actions: &[act(0, 63, ValueKind::PcRel, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 62,
        name: "R_MERCURY_UNIFIED32_LO",
        class: ResolverClass::Driver,
        actions: &[act(0, 31, ValueKind::LoUAddr, 0)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 63,
        name: "R_MERCURY_UNIFIED32_HI",
        class: ResolverClass::Driver,
        actions: &[act(0, 31, ValueKind::HiUAddr, 32)],
    },
    RelocDesc {
        code: R_MERCURY_BASE + 64,
        name: "R_MERCURY_NONE_LAST",
        class: ResolverClass::None,
        actions: &[],
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_indexed_and_named() {
        for (i, d) in R_MERCURY_TABLE.iter().enumerate() {
            assert_eq!(d.code, R_MERCURY_BASE + i as u32);
            assert!(d.name.starts_with("R_MERCURY_"), "{}", d.name);
        }
        assert_eq!(
            describe_mercury(R_MERCURY_ABS64).unwrap().name,
            "R_MERCURY_ABS64"
        );
        assert_eq!(
            describe_mercury(R_MERCURY_BASE + 61).unwrap().name,
            "R_MERCURY_ABS_PROG_REL64"
        );
        assert_eq!(
            describe_mercury(R_MERCURY_BASE + 40).unwrap().name,
            "R_MERCURY_ABS_PROG_REL32_LO"
        );
        assert!(describe_mercury(2).is_none());
        assert_eq!(
            rewritten_mercury_type(R_MERCURY_UNIFIED32_HI),
            R_MERCURY_ABS32_HI
        );
    }
}
