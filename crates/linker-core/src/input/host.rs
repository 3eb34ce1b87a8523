//! Host (CPU) ELF objects as `nvcc -dc` writes them: the device code is a
//! fatbinary in section `__nv_relfatbin` (relocatable device code) or
//! `.nv_fatbin`; `__nv_module_id` holds the module id (NUL-terminated) used
//! by the register-link file; `.nvHRKE`/`.nvHRKI` (kernels), `.nvHRDE`/`.nvHRDI`
//! (variables) and `.nvHRCE`/`.nvHRCI` (constants) list, as NUL-separated name
//! patterns, the device symbols the host code references.
//!
//! Only the ELF header and section headers are read (64-bit little-endian; any
//! machine but `EM_CUDA`); nothing is copied.

use crate::elf::EM_CUDA;
use crate::error::{Error, ErrorKind, Result};

/// The section names that may hold the device fatbinary, in preference order.
pub const FATBIN_SECTIONS: &[&str] = &["__nv_relfatbin", ".nv_fatbin"];

/// Host-reference lists (`.nvHR*` sections) of one object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostRefs<'d> {
    /// Kernel name patterns (`.nvHRKE` then `.nvHRKI`), e.g. `_Z4used*`.
    pub kernels: Vec<&'d str>,
    /// Variable name patterns (`.nvHRDE`, `.nvHRDI`).
    pub variables: Vec<&'d str>,
    /// Constant name patterns (`.nvHRCE`, `.nvHRCI`).
    pub constants: Vec<&'d str>,
}

/// What a host object carries for the device link.
#[derive(Debug, Clone, Default)]
pub struct HostObject<'d> {
    /// The fatbinary section: (name, file offset, bytes).
    pub fatbin: Option<(&'d str, u64, &'d [u8])>,
    /// The module id from `__nv_module_id`.
    pub module_id: Option<&'d str>,
    /// The host-reference lists, when the object has `.nvHR*` sections.
    pub host_refs: Option<HostRefs<'d>>,
}

/// Whether `data` is an ELF file for another machine than `EM_CUDA`. An ELF
/// with CUDA's OS ABI (`EI_OSABI` 0x41, or 0x33 before CUDA 12) is a cubin
/// whatever its `e_machine` says: a damaged one must be reported, not skipped
/// as a host object without device code.
pub fn is_host_elf(data: &[u8]) -> bool {
    data.len() >= 20
        && data.starts_with(b"\x7fELF")
        && u16::from_le_bytes([data[18], data[19]]) != EM_CUDA
        && !matches!(data[7], 0x41 | 0x33)
}

fn u16_at(d: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_le_bytes(d.get(o..o + 2)?.try_into().ok()?))
}
fn u32_at(d: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(o..o + 4)?.try_into().ok()?))
}
fn u64_at(d: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(d.get(o..o + 8)?.try_into().ok()?))
}

fn patterns(data: &[u8]) -> impl Iterator<Item = &str> {
    data.split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .filter_map(|s| std::str::from_utf8(s).ok())
}

impl<'d> HostObject<'d> {
    /// Reads the device-link sections of a host ELF object.
    pub fn parse(data: &'d [u8]) -> Result<HostObject<'d>> {
        let _span = tracing::debug_span!("host_object_parse", len = data.len()).entered();
        if !is_host_elf(data) {
            return Err(Error::malformed("not a host ELF object"));
        }
        if data[4] != 2 || data[5] != 1 {
            return Err(Error::new(
                ErrorKind::Unsupported,
                "host object is not 64-bit little-endian ELF (only -m64 hosts are supported)",
            ));
        }
        let trunc = || Error::malformed("host ELF header truncated");
        let shoff = u64_at(data, 0x28).ok_or_else(trunc)?;
        let shentsize = u16_at(data, 0x3a).ok_or_else(trunc)? as u64;
        let mut shnum = u16_at(data, 0x3c).ok_or_else(trunc)? as u64;
        let mut shstrndx = u16_at(data, 0x3e).ok_or_else(trunc)? as u32;
        if shoff == 0 {
            return Ok(HostObject::default());
        }
        if shentsize < 64 {
            return Err(Error::malformed(format!(
                "host ELF section header size {shentsize} is too small"
            )));
        }
        let sh = |i: u64| -> Result<&'d [u8]> {
            let o = i
                .checked_mul(shentsize)
                .and_then(|x| x.checked_add(shoff))
                .filter(|&o| o.checked_add(64).is_some_and(|e| e <= data.len() as u64))
                .ok_or_else(|| {
                    Error::malformed(format!("host ELF section header {i} is outside the file"))
                })? as usize;
            Ok(&data[o..o + 64])
        };
        // Extended numbering: the real counts live in section header 0.
        if shnum == 0 {
            shnum = u64_at(sh(0)?, 0x20).unwrap_or(0);
        }
        if shstrndx == 0xffff {
            shstrndx = u32_at(sh(0)?, 0x28).unwrap_or(0);
        }
        if shnum > data.len() as u64 / 64 {
            return Err(Error::malformed(format!(
                "host ELF claims {shnum} sections, more than fit in the file"
            )));
        }
        let body = |h: &[u8], i: u64| -> Result<(u64, &'d [u8])> {
            let ty = u32_at(h, 4).unwrap_or(0);
            let off = u64_at(h, 0x18).unwrap_or(0);
            let size = u64_at(h, 0x20).unwrap_or(0);
            if ty == 8 {
                return Ok((off, &[])); // SHT_NOBITS
            }
            let end = off
                .checked_add(size)
                .filter(|&e| e <= data.len() as u64)
                .ok_or_else(|| {
                    Error::malformed(format!(
                        "host ELF section {i} (offset {off:#x}, size {size:#x}) runs past the end of the file"
                    ))
                })?;
            Ok((off, &data[off as usize..end as usize]))
        };
        let strtab = if (shstrndx as u64) < shnum && shstrndx != 0 {
            body(sh(shstrndx as u64)?, shstrndx as u64)?.1
        } else {
            return Err(Error::malformed("host ELF has no section name table"));
        };
        let mut out = HostObject::default();
        let mut fatbin_rank = usize::MAX;
        let mut refs = HostRefs::default();
        let mut has_refs = false;
        for i in 1..shnum {
            let h = sh(i)?;
            let name_off = u32_at(h, 0).unwrap_or(0) as usize;
            let name = strtab
                .get(name_off..)
                .and_then(|s| s.split(|&b| b == 0).next())
                .and_then(|s| std::str::from_utf8(s).ok())
                .unwrap_or("");
            if let Some(rank) = FATBIN_SECTIONS.iter().position(|&n| n == name) {
                if rank < fatbin_rank {
                    let (off, bytes) = body(h, i)?;
                    out.fatbin = Some((FATBIN_SECTIONS[rank], off, bytes));
                    fatbin_rank = rank;
                }
            } else if name == "__nv_module_id" {
                let bytes = body(h, i)?.1;
                let id = bytes.split(|&b| b == 0).next().unwrap_or(&[]);
                out.module_id = std::str::from_utf8(id).ok().filter(|s| !s.is_empty());
            } else if let Some(kind) = name.strip_prefix(".nvHR") {
                let bytes = body(h, i)?.1;
                has_refs = true;
                let list = match kind {
                    "KE" | "KI" => &mut refs.kernels,
                    "DE" | "DI" => &mut refs.variables,
                    "CE" | "CI" => &mut refs.constants,
                    _ => continue,
                };
                list.extend(patterns(bytes));
            }
        }
        if has_refs {
            out.host_refs = Some(refs);
        }
        Ok(out)
    }
}

/// Whether `name` matches a host-reference pattern (`*` at the end matches any suffix).
pub fn pattern_matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => pattern == name,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A minimal x86-64 ELF relocatable object with the given sections.
    pub(crate) fn build(sections: &[(&str, &[u8])]) -> Vec<u8> {
        let mut shstr = vec![0u8];
        let mut name_offs = Vec::new();
        for (n, _) in sections {
            name_offs.push(shstr.len() as u32);
            shstr.extend_from_slice(n.as_bytes());
            shstr.push(0);
        }
        let shstr_name = shstr.len() as u32;
        shstr.extend_from_slice(b".shstrtab\0");
        let mut out = vec![0u8; 64];
        out[..4].copy_from_slice(b"\x7fELF");
        out[4] = 2;
        out[5] = 1;
        out[6] = 1;
        out[16] = 1; // ET_REL
        out[18] = 62; // EM_X86_64
        let mut places = Vec::new();
        for (_, d) in sections {
            out.resize(out.len().next_multiple_of(8), 0);
            places.push((out.len() as u64, d.len() as u64));
            out.extend_from_slice(d);
        }
        let shstr_off = out.len() as u64;
        out.extend_from_slice(&shstr);
        out.resize(out.len().next_multiple_of(8), 0);
        let shoff = out.len() as u64;
        let n = sections.len() + 2;
        out.extend_from_slice(&[0u8; 64]);
        let mut push = |name: u32, ty: u32, off: u64, size: u64| {
            let mut h = [0u8; 64];
            h[0..4].copy_from_slice(&name.to_le_bytes());
            h[4..8].copy_from_slice(&ty.to_le_bytes());
            h[0x18..0x20].copy_from_slice(&off.to_le_bytes());
            h[0x20..0x28].copy_from_slice(&size.to_le_bytes());
            out.extend_from_slice(&h);
        };
        for (i, (off, size)) in places.iter().enumerate() {
            push(name_offs[i], 1, *off, *size);
        }
        push(shstr_name, 3, shstr_off, shstr.len() as u64);
        out[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
        out[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        out[0x3c..0x3e].copy_from_slice(&(n as u16).to_le_bytes());
        out[0x3e..0x40].copy_from_slice(&((n - 1) as u16).to_le_bytes());
        out
    }

    #[test]
    fn sections_found() {
        let o = build(&[
            (".text", b"\x90\x90"),
            ("__nv_module_id", b"_abc_1\0\0"),
            (".nv_fatbin", b"XX"),
            ("__nv_relfatbin", b"FATBIN"),
            (".nvHRKE", b"_Z4used*\0_Z5otherv\0"),
            (".nvHRKI", b"\0"),
            (".nvHRDE", b"\0"),
        ]);
        let h = HostObject::parse(&o).unwrap();
        assert_eq!(h.module_id, Some("_abc_1"));
        let (name, _, bytes) = h.fatbin.unwrap();
        assert_eq!((name, bytes), ("__nv_relfatbin", &b"FATBIN"[..]));
        let r = h.host_refs.unwrap();
        assert_eq!(r.kernels, vec!["_Z4used*", "_Z5otherv"]);
        assert!(r.variables.is_empty());
        assert!(pattern_matches("_Z4used*", "_Z4usedPi"));
        assert!(!pattern_matches("_Z4used*", "_Z6unusedPi"));
        assert!(pattern_matches("k", "k") && !pattern_matches("k", "kk"));
        let bytes = build(&[(".text", b"\xc3")]);
        let plain = HostObject::parse(&bytes).unwrap();
        assert!(plain.fatbin.is_none() && plain.host_refs.is_none());
    }

    #[test]
    fn malformed() {
        let o = build(&[("__nv_relfatbin", b"FATBIN")]);
        // Section data past the end.
        let mut d = o.clone();
        let shoff = u64::from_le_bytes(d[0x28..0x30].try_into().unwrap()) as usize;
        d[shoff + 64 + 0x20] = 0xff;
        let e = HostObject::parse(&d).unwrap_err();
        assert!(e.message.contains("runs past the end"), "{e}");
        // Section headers outside the file.
        let mut d = o.clone();
        d[0x28] = 0xf0;
        d[0x29] = 0xff;
        assert!(HostObject::parse(&d).is_err());
        // 32-bit.
        let mut d = o.clone();
        d[4] = 1;
        assert_eq!(
            HostObject::parse(&d).unwrap_err().kind,
            ErrorKind::Unsupported
        );
        for n in 0..o.len() {
            let _ = HostObject::parse(&o[..n]);
        }
        for i in 0..o.len() {
            let mut d = o.clone();
            d[i] ^= 0xa5;
            let _ = HostObject::parse(&d);
        }
    }
}
