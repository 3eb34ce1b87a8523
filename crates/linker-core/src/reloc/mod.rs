//! R_CUDA relocations: the descriptor table and the one bit-field applier.
//!
//! A relocation is data plus one generic routine. [`table`] holds one const
//! [`RelocDesc`] row per R_CUDA type (code, name, who resolves it, and
//! up to three bit actions `bits[lo..=hi] = KIND >> shift`), transcribed from ptxas's own
//! action table and checked row for row against the seed file by a test. [`apply()`](fn@apply)
//! interprets any row: it reads the 1..16-byte little-endian word at the relocation site,
//! encodes each value the caller supplies into its field with a range check, and writes
//! the word back, or fails with [`ErrorKind::Overflow`](crate::ErrorKind::Overflow) /
//! [`ErrorKind::Malformed`](crate::ErrorKind::Malformed) without touching the site.
//! Which relocations to resolve, and with which values (symbol offsets, `.shared` window
//! offsets, constant banks, texture slots), is the linker's policy, not this module's.

pub mod apply;
pub mod mercury;
pub mod table;

pub use apply::{apply, apply_at, extract, extract_value};
pub use table::{
    describe, BitAction, RelocDesc, RelocType, ResolverClass, ValueKind, R_CUDA_COUNT, R_CUDA_TABLE,
};
