//! EICOMPAT attribute streams: the `.nv.compat` section (`SHT_CUDA_COMPAT` =
//! 0x70000086), sm_80 and later.
//!
//! The wire format is the EIATTR TLV of [`super::eiattr`] with its own code space
//! [`EiCompat`]; records are [`Record<'_, EiCompat>`](super::eiattr::Record).
//! ptxas 13.0 emits, for sm_90, in this order: CUDA_ACCELERATOR_TARGET (BVAL),
//! ISA_CLASS (BVAL), INST_TCGEN05_MMA (BVAL), MERCURY_ISA_MAJOR_MINOR_VERSION
//! (HVAL), INST_TENSORMAP_V1 (BVAL), ENABLE_OPPORTUNISTIC_FINALIZATION (BVAL),
//! CAN_FASTPATH_FINALIZE (SVAL, 8 bytes). nvlink's `ET_EXEC` output drops
//! CAN_FASTPATH_FINALIZE below sm_100 and keeps the rest in order (Blackwell:
//! `link::blackwell::output_fastpath_value`).

use std::fmt;

use super::eiattr::{self, attr_codes, OwnedRecord, Record};
use crate::error::Result;

/// An EICOMPAT attribute code (the second byte of a `.nv.compat` record).
/// Codes and names were paired by feeding `cuobjdump -elf` every code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EiCompat(pub u8);

attr_codes! { EiCompat;
    /// Invalid/sentinel code.
    EICOMPAT_ATTR_ERROR = 0,
    /// Padding.
    EICOMPAT_ATTR_PAD = 1,
    /// Architecture-variant class (carries the `a`/`f` suffix distinction).
    EICOMPAT_ATTR_ISA_CLASS = 2,
    /// Tensormap v1 instruction requirement level.
    EICOMPAT_ATTR_INST_TENSORMAP_V1 = 3,
    /// tcgen05 MMA requirement (deprecated form).
    EICOMPAT_ATTR_INST_TCGEN05_MMA_DEPRECATED = 4,
    /// tcgen05 MMA requirement level.
    EICOMPAT_ATTR_INST_TCGEN05_MMA = 5,
    /// Opportunistic finalization enabled.
    EICOMPAT_ATTR_ENABLE_OPPORTUNISTIC_FINALIZATION = 6,
    /// Mercury ISA major.minor version (HVAL; low byte major, high byte minor).
    EICOMPAT_ATTR_MERCURY_ISA_MAJOR_MINOR_VERSION = 7,
    /// Mercury ISA patch version.
    EICOMPAT_ATTR_MERCURY_ISA_PATCH_VERSION = 8,
    /// CUDA accelerator target.
    EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET = 9,
    /// CUDA driver version.
    EICOMPAT_ATTR_CUDA_DRIVER_VERSION = 10,
    /// Can fast-path finalize (SVAL, 8 bytes in ptxas output).
    EICOMPAT_ATTR_CAN_FASTPATH_FINALIZE = 11,
    /// One past the last known code.
    EICOMPAT_ATTR_ERROR_LAST = 12,
}

/// A `.nv.compat` record.
pub type CompatRecord<'d> = Record<'d, EiCompat>;

/// An owned `.nv.compat` record.
pub type OwnedCompatRecord = OwnedRecord<EiCompat>;

/// Parses a whole `.nv.compat` section.
pub fn parse(bytes: &[u8]) -> Result<Vec<CompatRecord<'_>>> {
    eiattr::parse_as(bytes)
}

/// Appends the encoding of `records` to `out`.
pub fn encode(records: &[CompatRecord<'_>], out: &mut Vec<u8>) -> Result<()> {
    eiattr::encode(records, out)
}
