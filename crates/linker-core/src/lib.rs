//! `linker_core`: the culink CUDA device linker as a library.
//!
//! culink reads relocatable device objects (`ET_REL` cubins from `ptxas -c`),
//! resolves symbols, merges sections, lays out the program segments, applies the
//! relocations a linker can resolve and writes an `ET_EXEC` cubin that means to the
//! CUDA driver exactly what nvlink's output means.
//!
//! Modules:
//! - [`error`]: the one error type, with file/section/symbol/offset context.
//! - [`arch`]: `SmArch` and the `e_flags` layouts (ELF ABI 7 and 8).
//! - [`elf`]: named constants (`SHT_CUDA_*`, `STO_CUDA_*`, ...).
//! - [`cubin`]: the zero-copy validating reader and its sub-formats
//!   (EIATTR streams, EICOMPAT, notes, call graph, prototypes).
//! - [`reloc`]: the R_CUDA relocation table and the one bit-field applier.
//! - [`input`]: input containers (fatbinary, host objects, archives, PTX).
//! - [`dump`] and [`diff`]: the readable dump and the semantic equivalence check.
//! - [`resources`]: the per-kernel resource report of a linked cubin (`nvlink -v`).

pub mod arch;
pub mod config;
pub mod cubin;
pub mod diff;
pub mod dump;
pub mod elf;
pub mod error;
mod fxhash;
pub mod input;
pub mod link;
pub mod reloc;
pub mod resources;
mod view;

pub use arch::SmArch;
pub use config::{
    register_link_source, Diagnostic, InputSource, Library, LinkFailure, LinkOptions, LinkOutput,
    LinkReports, OutputSink, ReportOptions, Severity,
};
pub use cubin::Cubin;
pub use error::{Error, ErrorKind, Result};
pub use link::{link, link_to, virtual_target_modules};
