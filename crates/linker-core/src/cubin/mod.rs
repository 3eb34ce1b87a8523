//! The zero-copy, validating reader of CUDA ELF files ("cubins").
//! (Being written: header, sections, symbols, relocations.)

pub mod callgraph;
pub mod compat;
pub mod eiattr;
pub mod notes;

/// A parsed cubin (being written).
pub struct Cubin<'data> {
    /// The whole file.
    pub data: &'data [u8],
}
