//! ELF notes: `.note.nv.tkinfo` (toolkit information, `n_type` 2000) and
//! `.note.nv.cuinfo` (CUDA information, `n_type` 1000), owner `"NVIDIA Corp\0"`.
//!
//! A note is `u32 n_namesz, u32 n_descsz, u32 n_type`, the name (`n_namesz`
//! bytes, including its NUL) padded to 4, then the descriptor (`n_descsz` bytes)
//! padded to 4. nvlink's `ET_EXEC` output holds several tkinfo notes: nvlink's own
//! first, then each input's, in input order; `-r` output holds only nvlink's.
//!
//! # `.note.nv.tkinfo` descriptor
//!
//! Six u32 words, then a block of NUL-terminated strings the words index (offsets
//! from the start of the block, i.e. from descriptor byte 24), zero-padded so the
//! descriptor length is a multiple of 4 (`n_descsz` counts the padding):
//!
//! | bytes | field | ptxas | nvlink |
//! |---|---|---|---|
//! | 0..4 | note version | 2 | 2 |
//! | 4..8 | offset of the object file name | 0 (`""`) | 0 (`""`) |
//! | 8..12 | offset of the tool name | 1 (`"ptxas"`) | 1 (`"nvlink"`) |
//! | 12..16 | offset of the tool version | `"Cuda compilation tools, release 13.0, V13.0.88"` | same |
//! | 16..20 | offset of the tool branch | `"Build cuda_13.0.r13.0/compiler.36424714_0"` | same |
//! | 20..24 | offset of the command-line arguments | `"-arch sm_90 -c  "` | `"-arch sm_90 "` (`-r`: `"-arch sm_90 -r  "`) |
//!
//! `cuobjdump -elf` prints these as "Note Version", "Object File" (only when not
//! empty), "Tool Name", "Tool Version", "Tool Branch", "Tool Command Line Arguments".
//!
//! # `.note.nv.cuinfo` descriptor
//!
//! 8 bytes: u16 note version (2), u16 virtual SM (e.g. 90), u32 CUDA API version
//! (0x82 = 130 for CUDA 13.0; cuobjdump prints "13.0").

use crate::elf::{NOTE_OWNER_NVIDIA, NT_CUDA_CUINFO, NT_CUDA_TKINFO};
use crate::error::{Error, ErrorKind, Result};

use super::eiattr::le32;

/// One ELF note, borrowed from the section bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Note<'d> {
    /// Byte offset of the note header within the section.
    pub offset: usize,
    /// The owner name, `n_namesz` bytes (normally including the terminating NUL).
    pub name: &'d [u8],
    /// `n_type`.
    pub ntype: u32,
    /// The descriptor, `n_descsz` bytes.
    pub desc: &'d [u8],
}

fn pad4(n: usize) -> Option<usize> {
    n.checked_add(3).map(|v| v & !3)
}

/// Parses every note of a `SHT_NOTE` section.
///
/// Fails on a truncated header, name or descriptor. The padding after the last
/// descriptor may be missing (some writers omit it), but never the padding between
/// notes.
pub fn parse_notes(bytes: &[u8]) -> Result<Vec<Note<'_>>> {
    let mut notes = Vec::new();
    let mut off = 0usize;
    while off < bytes.len() {
        let bad = |m: &str| Error::malformed(format!("note: {m}")).at(off as u64);
        let (Some(namesz), Some(descsz), Some(ntype)) =
            (le32(bytes, off), le32(bytes, off + 4), le32(bytes, off + 8))
        else {
            return Err(bad("truncated header"));
        };
        let name_start = off + 12;
        let name_end = name_start
            .checked_add(namesz as usize)
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| bad("name runs past the section end"))?;
        let desc_start = pad4(name_end).ok_or_else(|| bad("size overflow"))?;
        let desc_end = desc_start
            .checked_add(descsz as usize)
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| bad("descriptor runs past the section end"))?;
        notes.push(Note {
            offset: off,
            name: &bytes[name_start..name_end],
            ntype,
            desc: &bytes[desc_start..desc_end],
        });
        off = pad4(desc_end)
            .ok_or_else(|| bad("size overflow"))?
            .min(bytes.len());
    }
    Ok(notes)
}

/// Appends one note (header, name, descriptor, each padded to 4 with zeros) to `out`.
pub fn encode_note(name: &[u8], ntype: u32, desc: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let too_big = || {
        Error::new(
            ErrorKind::Overflow,
            "note name or descriptor larger than 4 GiB",
        )
    };
    let namesz = u32::try_from(name.len()).map_err(|_| too_big())?;
    let descsz = u32::try_from(desc.len()).map_err(|_| too_big())?;
    out.extend_from_slice(&namesz.to_le_bytes());
    out.extend_from_slice(&descsz.to_le_bytes());
    out.extend_from_slice(&ntype.to_le_bytes());
    out.extend_from_slice(name);
    out.resize(out.len() + (pad4(name.len()).unwrap_or(0) - name.len()), 0);
    out.extend_from_slice(desc);
    out.resize(out.len() + (pad4(desc.len()).unwrap_or(0) - desc.len()), 0);
    Ok(())
}

impl Note<'_> {
    /// Appends this note's wire form to `out` (see [`encode_note`]).
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        encode_note(self.name, self.ntype, self.desc, out)
    }

    /// Whether the owner is `"NVIDIA Corp\0"`.
    pub fn is_nvidia(&self) -> bool {
        self.name == NOTE_OWNER_NVIDIA
    }

    /// Decodes an NVIDIA tkinfo note's descriptor, `None` for other notes.
    pub fn tkinfo(&self) -> Option<Result<TkInfo<'_>>> {
        (self.is_nvidia() && self.ntype == NT_CUDA_TKINFO)
            .then(|| TkInfo::parse(self.desc).map_err(|e| e.at(self.offset as u64)))
    }

    /// Decodes an NVIDIA cuinfo note's descriptor, `None` for other notes.
    pub fn cuinfo(&self) -> Option<Result<CuInfo>> {
        (self.is_nvidia() && self.ntype == NT_CUDA_CUINFO)
            .then(|| CuInfo::parse(self.desc).map_err(|e| e.at(self.offset as u64)))
    }
}

/// The `.note.nv.cuinfo` descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CuInfo {
    /// Note version (2).
    pub version: u16,
    /// Virtual SM number (e.g. 90).
    pub virtual_sm: u16,
    /// CUDA API version (0x82 = 130 for CUDA 13.0).
    pub cuda_api_version: u32,
}

impl CuInfo {
    /// Size of the descriptor.
    pub const SIZE: usize = 8;

    /// Decodes an 8-byte descriptor.
    pub fn parse(desc: &[u8]) -> Result<CuInfo> {
        if desc.len() != Self::SIZE {
            return Err(Error::malformed(format!(
                "cuinfo descriptor is {} bytes, expected 8",
                desc.len()
            )));
        }
        Ok(CuInfo {
            version: u16::from_le_bytes([desc[0], desc[1]]),
            virtual_sm: u16::from_le_bytes([desc[2], desc[3]]),
            cuda_api_version: u32::from_le_bytes([desc[4], desc[5], desc[6], desc[7]]),
        })
    }

    /// The 8-byte descriptor.
    pub fn encode(&self) -> [u8; 8] {
        let mut d = [0u8; 8];
        d[0..2].copy_from_slice(&self.version.to_le_bytes());
        d[2..4].copy_from_slice(&self.virtual_sm.to_le_bytes());
        d[4..8].copy_from_slice(&self.cuda_api_version.to_le_bytes());
        d
    }

    /// Appends a whole `"NVIDIA Corp"` note of type [`NT_CUDA_CUINFO`] to `out`.
    pub fn encode_note(&self, out: &mut Vec<u8>) -> Result<()> {
        encode_note(NOTE_OWNER_NVIDIA, NT_CUDA_CUINFO, &self.encode(), out)
    }
}

/// The `.note.nv.tkinfo` descriptor. Strings are borrowed without their NUL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TkInfo<'d> {
    /// Note version (2).
    pub version: u32,
    /// Object file name (empty in all observed ptxas/nvlink output).
    pub object_file: &'d [u8],
    /// Tool name: `ptxas`, `nvlink`.
    pub tool_name: &'d [u8],
    /// Tool version, e.g. `Cuda compilation tools, release 13.0, V13.0.88`.
    pub tool_version: &'d [u8],
    /// Tool build branch, e.g. `Build cuda_13.0.r13.0/compiler.36424714_0`.
    pub tool_branch: &'d [u8],
    /// Command-line arguments, e.g. `-arch sm_90 `.
    pub tool_args: &'d [u8],
}

impl<'d> TkInfo<'d> {
    /// Size of the fixed header (six u32 words) before the string block.
    pub const HEADER_SIZE: usize = 24;

    /// Decodes a descriptor. Fails if it is shorter than the header or a string
    /// offset points outside the string block or to an unterminated string.
    pub fn parse(desc: &'d [u8]) -> Result<TkInfo<'d>> {
        if desc.len() < Self::HEADER_SIZE {
            return Err(Error::malformed(format!(
                "tkinfo descriptor is {} bytes, shorter than its 24-byte header",
                desc.len()
            )));
        }
        let block = &desc[Self::HEADER_SIZE..];
        let word = |i: usize| le32(desc, i * 4).unwrap_or(0);
        let string = |i: usize| -> Result<&'d [u8]> {
            let at = word(i) as usize;
            let rest = block.get(at..).filter(|r| !r.is_empty()).ok_or_else(|| {
                Error::malformed(format!(
                    "tkinfo string offset {at:#x} outside the {}-byte string block",
                    block.len()
                ))
                .at((i * 4) as u64)
            })?;
            let end = rest.iter().position(|&b| b == 0).ok_or_else(|| {
                Error::malformed(format!("tkinfo string at {at:#x} is not NUL-terminated"))
                    .at((i * 4) as u64)
            })?;
            Ok(&rest[..end])
        };
        Ok(TkInfo {
            version: word(0),
            object_file: string(1)?,
            tool_name: string(2)?,
            tool_version: string(3)?,
            tool_branch: string(4)?,
            tool_args: string(5)?,
        })
    }

    /// The descriptor, laid out as ptxas and nvlink do: header, then the strings
    /// in field order, each NUL-terminated, zero-padded to a multiple of 4.
    pub fn encode(&self) -> Result<Vec<u8>> {
        let strings = [
            self.object_file,
            self.tool_name,
            self.tool_version,
            self.tool_branch,
            self.tool_args,
        ];
        let mut block = Vec::new();
        let mut d = Vec::with_capacity(Self::HEADER_SIZE + 128);
        d.extend_from_slice(&self.version.to_le_bytes());
        for s in strings {
            if s.contains(&0) {
                return Err(Error::new(
                    ErrorKind::Overflow,
                    "tkinfo string contains a NUL byte",
                ));
            }
            let at = u32::try_from(block.len())
                .map_err(|_| Error::new(ErrorKind::Overflow, "tkinfo strings too long"))?;
            d.extend_from_slice(&at.to_le_bytes());
            block.extend_from_slice(s);
            block.push(0);
        }
        d.extend_from_slice(&block);
        d.resize(pad4(d.len()).unwrap_or(d.len()), 0);
        Ok(d)
    }

    /// Appends a whole `"NVIDIA Corp"` note of type [`NT_CUDA_TKINFO`] to `out`.
    pub fn encode_note(&self, out: &mut Vec<u8>) -> Result<()> {
        encode_note(NOTE_OWNER_NVIDIA, NT_CUDA_TKINFO, &self.encode()?, out)
    }
}
