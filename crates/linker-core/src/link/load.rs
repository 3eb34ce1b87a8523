//! Phase 1: read every input and parse it.
//!
//! Files are memory-mapped (no copy); in-memory inputs are borrowed. The kind of
//! an input is decided by its content, never its name. Parsing and validation
//! run in parallel (rayon), one task per input; errors are collected in input
//! order so the report is deterministic.

use super::{Diags, FileId};
use crate::arch::SmArch;
use crate::config::{InputSource, LinkFailure};
use crate::cubin::Cubin;
use crate::elf::{EM_CUDA, ET_REL};
use crate::error::{Error, ErrorKind, Result};
use rayon::prelude::*;
use std::sync::Arc;

/// The bytes of one input, kept alive for the whole link.
pub(crate) enum Blob {
    /// A memory-mapped file.
    Mapped(memmap2::Mmap),
    /// Bytes handed in by the caller, or a file too small to map.
    Owned(Arc<[u8]>),
}

/// One input's bytes plus the name diagnostics use for it.
pub(crate) struct NamedBlob {
    pub name: String,
    pub blob: Blob,
}

impl NamedBlob {
    pub(crate) fn bytes(&self) -> &[u8] {
        match &self.blob {
            Blob::Mapped(m) => m,
            Blob::Owned(b) => b,
        }
    }
}

/// A parsed relocatable input.
pub(crate) struct InputFile<'d> {
    /// Position on the command line.
    pub id: FileId,
    /// The name as the user gave it.
    pub name: &'d str,
    /// The parsed object.
    pub cubin: Cubin<'d>,
    /// For each section: the index of the `.text.<fn>` section of the function
    /// that owns it (the text section itself, `.nv.constant0.<fn>`,
    /// `.nv.shared.<fn>`, `.nv.info.<fn>`, relocation sections of those), or
    /// `None` for module-level sections.
    pub owner: Vec<Option<u32>>,
    /// For each `.text.<fn>` section: the function's symbol index (else 0).
    pub func_sym: Vec<u32>,
}

/// Reads (maps) every input, in order.
pub(crate) fn read_all(inputs: &[InputSource]) -> Result<Vec<NamedBlob>> {
    let _span = tracing::info_span!("read_inputs", count = inputs.len()).entered();
    inputs
        .par_iter()
        .map(|input| match input {
            InputSource::Bytes { name, data } => Ok(NamedBlob {
                name: name.clone(),
                blob: Blob::Owned(data.clone()),
            }),
            InputSource::File(path) => {
                let name = path.display().to_string();
                let file = std::fs::File::open(path).map_err(|e| {
                    Error::new(ErrorKind::Io, format!("cannot open input file: {e}"))
                        .in_file(name.clone())
                })?;
                let meta = file.metadata().map_err(|e| {
                    Error::new(ErrorKind::Io, format!("cannot stat input file: {e}"))
                        .in_file(name.clone())
                })?;
                if meta.is_dir() {
                    return Err(Error::new(ErrorKind::Io, "input is a directory").in_file(name));
                }
                let blob = if meta.len() == 0 {
                    Blob::Owned(Arc::from(Vec::new()))
                } else {
                    // SAFETY: the map is read-only and lives as long as the link; a file
                    // truncated by another process while we link would fault, as with
                    // every mmap-based linker (mold, lld, wild).
                    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| {
                        Error::new(ErrorKind::Io, format!("cannot map input file: {e}"))
                            .in_file(name.clone())
                    })?;
                    Blob::Mapped(map)
                };
                Ok(NamedBlob { name, blob })
            }
        })
        .collect()
}

/// What an input's bytes are, judged by content.
fn describe_kind(data: &[u8]) -> &'static str {
    if data.len() >= 4 && data[..4] == [0x50, 0xed, 0x55, 0xba] {
        "a fatbinary"
    } else if data.starts_with(b"!<arch>\n") || data.starts_with(b"!<thin>\n") {
        "an archive"
    } else if data.starts_with(b"\x7fELF") {
        if data.len() >= 20 && u16::from_le_bytes([data[18], data[19]]) != EM_CUDA {
            "a host (non-CUDA) ELF object"
        } else {
            "a CUDA ELF file"
        }
    } else if data.starts_with(b"//") || data.starts_with(b".version") {
        "PTX text"
    } else if data.is_empty() {
        "an empty file"
    } else {
        "not a recognised input format"
    }
}

/// Parses every input in parallel and checks that it is a relocatable cubin for `arch`.
pub(crate) fn parse_all<'d>(
    blobs: &'d [NamedBlob],
    arch: SmArch,
    diags: &mut Diags,
) -> std::result::Result<Vec<InputFile<'d>>, LinkFailure> {
    let _span = tracing::info_span!("parse_inputs", count = blobs.len()).entered();
    let results: Vec<(Result<InputFile<'d>>, Option<Error>)> = blobs
        .par_iter()
        .enumerate()
        .map(|(i, nb)| {
            let mut warning = None;
            let r = parse_one(FileId(i as u32), nb, arch, &mut warning);
            (r, warning)
        })
        .collect();
    let mut files = Vec::with_capacity(results.len());
    for (r, warning) in results {
        if let Some(w) = warning {
            diags.warning(w);
        }
        match r {
            Ok(f) => files.push(f),
            Err(e) => diags.error(e),
        }
    }
    diags.checkpoint()?;
    Ok(files)
}

fn parse_one<'d>(
    id: FileId,
    nb: &'d NamedBlob,
    arch: SmArch,
    warning: &mut Option<Error>,
) -> Result<InputFile<'d>> {
    let data = nb.bytes();
    let name = nb.name.as_str();
    let kind = describe_kind(data);
    if kind != "a CUDA ELF file" {
        let what = match kind {
            "a fatbinary" | "an archive" | "a host (non-CUDA) ELF object" | "PTX text" => {
                ErrorKind::Unsupported
            }
            _ => ErrorKind::Malformed,
        };
        return Err(Error::new(
            what,
            format!("input is {kind}; culink links relocatable CUDA device objects (ptxas -c / nvcc -dc --cubin output)"),
        )
        .in_file(name));
    }
    let cubin = Cubin::parse(data).map_err(|e| e.in_file(name))?;
    if cubin.header.e_type != ET_REL {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!(
                "input is not a relocatable object (e_type {}); link relocatable objects from ptxas -c or nvcc -dc",
                cubin.header.e_type
            ),
        )
        .in_file(name));
    }
    let in_arch = cubin.arch();
    let variant = super::blackwell::input_variant(&cubin);
    if !super::blackwell::arch_compatible(in_arch, variant, arch) {
        *warning = super::blackwell::limited_output_warning(in_arch, arch, name)
            .map(|w| Error::new(ErrorKind::Arch, w).in_file(name));
        return Err(Error::new(
            ErrorKind::Arch,
            format!("input is for {in_arch}, which does not match the target {arch}"),
        )
        .in_file(name));
    }
    let n = cubin.sections.len();
    let mut func_sym = vec![0u32; n];
    let mut owner = vec![None; n];
    for s in &cubin.sections {
        if s.name.starts_with(".text.") && s.flags & crate::elf::SHF_EXECINSTR != 0 {
            // sm_75..89 keep the register count in the top byte of sh_info.
            let sym = s.info & 0x00ff_ffff;
            if sym == 0 || sym as usize >= cubin.symbols.len() {
                return Err(Error::malformed(format!(
                    "sh_info {:#x} of a text section does not name a symbol",
                    s.info
                ))
                .in_file(name)
                .in_section(s.name));
            }
            func_sym[s.index as usize] = sym;
            owner[s.index as usize] = Some(s.index);
        }
    }
    // Sections tied to a function through sh_info (constant0, shared, nv.info.<fn>).
    for s in &cubin.sections {
        if owner[s.index as usize].is_some() || s.is_reloc() {
            continue;
        }
        let links_fn = s.flags & crate::elf::SHF_INFO_LINK != 0
            && (s.info as usize) < n
            && func_sym[s.info as usize] != 0;
        if links_fn {
            owner[s.index as usize] = Some(s.info);
        }
    }
    // Relocation sections follow their target.
    for s in &cubin.sections {
        if s.is_reloc() {
            owner[s.index as usize] = owner.get(s.info as usize).copied().flatten();
        }
    }
    Ok(InputFile {
        id,
        name,
        cubin,
        owner,
        func_sym,
    })
}
