//! R_CUDA relocations: the descriptor table and the one bit-field applier.

pub mod apply;
pub mod table;
