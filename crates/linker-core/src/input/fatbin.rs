//! The fatbinary container (`0xBA55ED50`): what `fatbinary --create` writes and
//! what `nvcc -dc` embeds in a host object's `__nv_relfatbin` section.
//!
//! Layout (little endian, measured on fatbinary 13.0.88 output):
//!
//! ```text
//! container header, 16 bytes:
//!   0  u32 magic 0xBA55ED50     4  u16 version (1)
//!   6  u16 header size (16)     8  u64 size of everything after the header
//! entry header, `header size` bytes (64 to 144, a multiple of 8), then the payload:
//!   0  u16 kind (1 PTX, 2 ELF)  2  u16 version (0x0101)
//!   4  u32 header size          8  u64 payload size (padded to 8)
//!  16  u32 compressed size (0 when not compressed)
//!  20  u32 where the options' (offset, length) pair is (64, or 72 after an
//!      object name)
//!  24  u16 minor, 26 u16 major (PTX ISA or ELF format version)
//!  28  u32 SM number (90 for sm_90)
//!  32  u32 offset, 36 u32 length of the object name (when there is one)
//!  40  u64 flags: 0x2000 LZ4 block, 0x8000 Zstandard frame, 0x10_0000 the
//!      ELF is for `sm_XXa`, 0x20_0000 for `sm_XXf` (nvcc 13.0.88 `-gencode`)
//!  56  u64 uncompressed size (when compressed)
//!  64.. extension (PTX: the object name when there is one, u32 offset and
//!      u32 length of the ptxas options, e.g. `--compile-only`, or
//!      `--compile-only  --generate-line-info ` for `nvcc -lineinfo`, then
//!      the strings, inside the entry header)
//! ```
//!
//! Containers may follow one another (sections padded with zeros between them);
//! every container is read. The parser borrows payloads from the input; only
//! compressed payloads are copied (decompressed) by [`Entry::contents`].

use crate::arch::ArchVariant;
use crate::error::{Error, ErrorKind, Result};
use std::borrow::Cow;

/// The container magic, `0xBA55ED50`.
pub const FATBIN_MAGIC: u32 = 0xBA55_ED50;
/// Entry flag: the payload is one LZ4 block (`fatbinary --compress-mode=speed`).
pub const FLAG_COMPRESS_LZ4: u64 = 0x2000;
/// Entry flag: the payload is a Zstandard frame (`--compress-all`, default and
/// `size`/`balance` modes; `nvcc -dc` compresses device ELF this way).
pub const FLAG_COMPRESS_ZSTD: u64 = 0x8000;
/// Entry flag: the ELF is for the arch-specific variant (`sm_90a`).
pub const FLAG_ARCH_SPECIFIC: u64 = 0x10_0000;
/// Entry flag: the ELF is for the family variant (`sm_100f`).
pub const FLAG_ARCH_FAMILY: u64 = 0x20_0000;
/// The largest uncompressed size accepted (guards against hostile headers).
const MAX_UNCOMPRESSED: u64 = 1 << 32;

/// What an entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// PTX text.
    Ptx,
    /// A device ELF (cubin).
    Elf,
    /// Another kind (e.g. [`KIND_LTO_IR`]), kept by number and never linked.
    Other(u16),
}

/// The entry kind of NVVM IR for link-time optimization (`nvcc -dlto`,
/// `code=lto_XX`).
pub const KIND_LTO_IR: u16 = 8;

/// How an entry's payload is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Stored as is.
    None,
    /// One LZ4 block.
    Lz4,
    /// A Zstandard frame.
    Zstd,
}

/// One entry of a fatbinary.
#[derive(Debug, Clone)]
pub struct Entry<'d> {
    /// Offset of the entry header from the start of the parsed bytes.
    pub offset: usize,
    /// What the entry holds.
    pub kind: EntryKind,
    /// The SM number the entry is for (90 for sm_90).
    pub sm: u32,
    /// The raw flags word.
    pub flags: u64,
    /// How the payload is compressed.
    pub compression: Compression,
    /// The stored payload: the compressed bytes, or the whole padded payload.
    pub payload: &'d [u8],
    /// The uncompressed size (when compressed), else the payload size.
    pub uncompressed_size: u64,
    /// The ptxas options recorded for a PTX entry (e.g. `--compile-only`).
    pub options: &'d str,
}

/// A parsed fatbinary: the entries of every container, in file order.
#[derive(Debug, Clone)]
pub struct Fatbin<'d> {
    /// Every entry, in order.
    pub entries: Vec<Entry<'d>>,
}

/// Whether `data` starts with the fatbinary magic.
pub fn is_fatbin(data: &[u8]) -> bool {
    data.len() >= 4 && u32::from_le_bytes([data[0], data[1], data[2], data[3]]) == FATBIN_MAGIC
}

fn rd16(d: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([d[o], d[o + 1]])
}
fn rd32(d: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(d[o..o + 4].try_into().expect("4 bytes"))
}
fn rd64(d: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(d[o..o + 8].try_into().expect("8 bytes"))
}

impl<'d> Fatbin<'d> {
    /// Parses every container in `data` (trailing zero padding is allowed).
    ///
    /// Errors are [`ErrorKind::Malformed`] with the offset of the bad header.
    pub fn parse(data: &'d [u8]) -> Result<Fatbin<'d>> {
        let _span = tracing::debug_span!("fatbin_parse", len = data.len()).entered();
        let mut entries = Vec::new();
        let mut pos = 0usize;
        let mut containers = 0;
        while pos < data.len() {
            if data[pos..].iter().all(|&b| b == 0) && containers > 0 {
                break;
            }
            let rest = &data[pos..];
            if rest.len() < 16 {
                return Err(Error::malformed("fatbinary header truncated").at(pos as u64));
            }
            if !is_fatbin(rest) {
                return Err(Error::malformed(format!(
                    "bad fatbinary magic {:#010x} (expected {FATBIN_MAGIC:#010x})",
                    rd32(rest, 0)
                ))
                .at(pos as u64));
            }
            let hsize = rd16(rest, 6) as usize;
            let body = rd64(rest, 8);
            if hsize < 16 || hsize > rest.len() {
                return Err(Error::malformed(format!(
                    "fatbinary header size {hsize} out of range"
                ))
                .at(pos as u64));
            }
            let end = (hsize as u64)
                .checked_add(body)
                .filter(|&e| e <= rest.len() as u64)
                .ok_or_else(|| {
                    Error::malformed(format!(
                        "fatbinary size {body:#x} runs past the end of the data ({:#x} bytes left)",
                        rest.len() - hsize
                    ))
                    .at(pos as u64)
                })? as usize;
            let mut e = hsize;
            while e < end {
                let entry = parse_entry(&rest[..end], e).map_err(|err| err.at((pos + e) as u64))?;
                e += entry.1;
                let mut entry = entry.0;
                entry.offset += pos;
                entries.push(entry);
            }
            pos += end;
            containers += 1;
        }
        if containers == 0 {
            return Err(Error::malformed("empty fatbinary"));
        }
        Ok(Fatbin { entries })
    }

    /// The entry to link: an ELF accepted by `compatible(entry_sm, variant)`,
    /// the highest SM first and, for one SM, `sm_XXa` before `sm_XXf` before
    /// plain `sm_XX` whatever their order (nvlink 13.0.88: a `-gencode` list of
    /// sm_90 and sm_90a links the sm_90a code at `-arch=sm_90` too).
    pub fn select_elf(
        &self,
        mut compatible: impl FnMut(u32, ArchVariant) -> bool,
    ) -> Option<&Entry<'d>> {
        let rank = |e: &Entry<'_>| {
            let v = match e.variant() {
                ArchVariant::Specific => 2,
                ArchVariant::Family => 1,
                ArchVariant::Base => 0,
            };
            (e.sm, v)
        };
        let mut best: Option<&Entry<'d>> = None;
        for e in self.entries.iter().filter(|e| e.kind == EntryKind::Elf) {
            if compatible(e.sm, e.variant()) && !matches!(best, Some(b) if rank(b) >= rank(e)) {
                best = Some(e);
            }
        }
        best
    }

    /// The PTX entry to compile for a target of SM `target_sm`: the highest SM
    /// not above the target (PTX is forward compatible).
    pub fn select_ptx(&self, target_sm: u32) -> Option<&Entry<'d>> {
        let mut best: Option<&Entry<'d>> = None;
        for e in self.entries.iter().filter(|e| e.kind == EntryKind::Ptx) {
            if e.sm <= target_sm && !matches!(best, Some(b) if b.sm >= e.sm) {
                best = Some(e);
            }
        }
        best
    }
}

/// Parses the entry at `at` of one container (`c` ends at the container's end);
/// returns it and the number of bytes it spans.
fn parse_entry(c: &[u8], at: usize) -> Result<(Entry<'_>, usize)> {
    let h = &c[at..];
    if h.len() < 64 {
        return Err(Error::malformed(format!(
            "fatbinary entry header truncated ({} of 64 bytes)",
            h.len()
        )));
    }
    let kind = match rd16(h, 0) {
        1 => EntryKind::Ptx,
        2 => EntryKind::Elf,
        k => EntryKind::Other(k),
    };
    let hsize = rd32(h, 4) as usize;
    let psize = rd64(h, 8);
    if hsize < 64 || hsize > h.len() {
        return Err(Error::malformed(format!(
            "fatbinary entry header size {hsize} out of range"
        )));
    }
    let payload_end = (hsize as u64)
        .checked_add(psize)
        .filter(|&e| e <= h.len() as u64)
        .ok_or_else(|| {
            Error::malformed(format!(
                "fatbinary entry payload size {psize:#x} runs past the end of its container"
            ))
        })? as usize;
    let csize = rd32(h, 16) as u64;
    let sm = rd32(h, 28);
    let flags = rd64(h, 40);
    let usize_ = rd64(h, 56);
    let compression = if flags & FLAG_COMPRESS_ZSTD != 0 {
        Compression::Zstd
    } else if flags & FLAG_COMPRESS_LZ4 != 0 {
        Compression::Lz4
    } else {
        Compression::None
    };
    let payload_all = &h[hsize..payload_end];
    let (payload, uncompressed_size) = if compression == Compression::None {
        (payload_all, psize)
    } else {
        if csize > psize {
            return Err(Error::malformed(format!(
                "compressed size {csize:#x} exceeds the payload size {psize:#x}"
            )));
        }
        if usize_ > MAX_UNCOMPRESSED {
            return Err(Error::malformed(format!(
                "uncompressed size {usize_:#x} is implausibly large"
            )));
        }
        (&payload_all[..csize as usize], usize_)
    };
    let mut options = "";
    // The (offset, length) pair of the options string sits where the u32 at
    // 20 says: 64, or 72 when an object name (`a.cu`, `nvcc -lineinfo`/`-G`
    // entries: its offset and length at 32) comes first.
    let pair = match rd32(h, 20) as usize {
        d if d >= 64 && d + 8 <= hsize => d,
        _ => 64,
    };
    if kind == EntryKind::Ptx && hsize >= pair + 8 {
        let (off, len) = (rd32(h, pair) as usize, rd32(h, pair + 4) as usize);
        if len > 0 && off.checked_add(len).is_some_and(|e| e <= hsize) {
            options = std::str::from_utf8(&h[off..off + len])
                .unwrap_or("")
                .trim_end_matches(['\0', ' ']);
        }
    }
    Ok((
        Entry {
            offset: at,
            kind,
            sm,
            flags,
            compression,
            payload,
            uncompressed_size,
            options,
        },
        payload_end,
    ))
}

impl<'d> Entry<'d> {
    /// The `a`/`f` variant an ELF entry is for (from its flags).
    pub fn variant(&self) -> ArchVariant {
        if self.flags & FLAG_ARCH_SPECIFIC != 0 {
            ArchVariant::Specific
        } else if self.flags & FLAG_ARCH_FAMILY != 0 {
            ArchVariant::Family
        } else {
            ArchVariant::Base
        }
    }

    /// The entry's contents: borrowed when stored uncompressed, else decompressed.
    pub fn contents(&self) -> Result<Cow<'d, [u8]>> {
        let _span = tracing::debug_span!("fatbin_decompress", offset = self.offset).entered();
        let bad = |what: String| {
            Error::new(
                ErrorKind::Malformed,
                format!("fatbinary entry: cannot decompress: {what}"),
            )
            .at(self.offset as u64)
        };
        let n = self.uncompressed_size as usize;
        match self.compression {
            Compression::None => Ok(Cow::Borrowed(self.payload)),
            Compression::Lz4 => {
                // An LZ4 block expands at most ~255 times (one length byte can
                // add 255 bytes of match): refuse sizes no payload can reach
                // before allocating them.
                if self.uncompressed_size > (self.payload.len() as u64 + 16) * 255 {
                    return Err(bad(format!(
                        "{n} bytes cannot come from a {}-byte LZ4 block",
                        self.payload.len()
                    )));
                }
                let mut out = Vec::new();
                out.try_reserve_exact(n)
                    .map_err(|_| bad(format!("cannot allocate {n} bytes")))?;
                out.resize(n, 0);
                let got = lz4_flex::block::decompress_into(self.payload, &mut out)
                    .map_err(|e| bad(format!("LZ4: {e}")))?;
                if got != n {
                    return Err(bad(format!("LZ4 gave {got} bytes, expected {n}")));
                }
                Ok(Cow::Owned(out))
            }
            Compression::Zstd => {
                // Every Zstandard block takes at least 3 bytes and yields at most
                // 128 KiB: refuse sizes no payload can reach before allocating
                // (the decoder fills the reserved capacity).
                let reachable = (self.payload.len() as u64 / 3 + 1) * (128 << 10);
                if self.uncompressed_size > reachable {
                    return Err(bad(format!(
                        "{n} bytes cannot come from {} bytes of Zstandard data",
                        self.payload.len()
                    )));
                }
                let mut out = Vec::new();
                out.try_reserve_exact(n)
                    .map_err(|_| bad(format!("cannot allocate {n} bytes")))?;
                // Decodes into the reserved capacity and fails when the data
                // would need more (libzstd: 3.7x faster than a pure-Rust
                // decoder on nvshmem's 14 MB sm_90 image, docs/dependencies.md).
                zstd::bulk::Decompressor::new()
                    .and_then(|mut d| d.decompress_to_buffer(self.payload, &mut out))
                    .map_err(|e| bad(format!("Zstandard: {e}")))?;
                if out.len() != n {
                    return Err(bad(format!(
                        "Zstandard gave {} bytes, expected {n}",
                        out.len()
                    )));
                }
                Ok(Cow::Owned(out))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A container holding `entries` (kind, sm, flags, payload, uncompressed size).
    pub(crate) fn build(entries: &[(u16, u32, u64, &[u8], u64)]) -> Vec<u8> {
        let mut body = Vec::new();
        for &(kind, sm, flags, payload, usz) in entries {
            let padded = payload.len().div_ceil(8) * 8;
            let mut h = vec![0u8; 64];
            h[0..2].copy_from_slice(&kind.to_le_bytes());
            h[2..4].copy_from_slice(&0x0101u16.to_le_bytes());
            h[4..8].copy_from_slice(&64u32.to_le_bytes());
            h[8..16].copy_from_slice(&(padded as u64).to_le_bytes());
            if flags & (FLAG_COMPRESS_LZ4 | FLAG_COMPRESS_ZSTD) != 0 {
                h[16..20].copy_from_slice(&(payload.len() as u32).to_le_bytes());
                h[56..64].copy_from_slice(&usz.to_le_bytes());
            }
            h[28..32].copy_from_slice(&sm.to_le_bytes());
            h[40..48].copy_from_slice(&(flags | 0x11).to_le_bytes());
            body.extend_from_slice(&h);
            body.extend_from_slice(payload);
            body.resize(body.len() + padded - payload.len(), 0);
        }
        container(&body)
    }

    /// A container header in front of `body` (its entries).
    fn container(body: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&FATBIN_MAGIC.to_le_bytes());
        out.extend_from_slice(&1u16.to_le_bytes());
        out.extend_from_slice(&16u16.to_le_bytes());
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(body);
        out
    }

    /// A PTX entry whose header holds `name` (when not empty) and then the
    /// options pair and string, as nvcc 13.0.88 writes them (`a.cu` with
    /// `-lineinfo`/`-G`; none for a plain build).
    fn ptx_entry_with(name: &str, options: &str) -> Vec<u8> {
        let name_len = if name.is_empty() { 0 } else { 8 };
        let pair = 64 + name_len;
        let strings = pair + 8;
        let hsize = (strings + options.len()).div_ceil(8) * 8;
        let mut h = vec![0u8; hsize];
        h[0..2].copy_from_slice(&1u16.to_le_bytes());
        h[2..4].copy_from_slice(&0x0101u16.to_le_bytes());
        h[4..8].copy_from_slice(&(hsize as u32).to_le_bytes());
        h[8..16].copy_from_slice(&8u64.to_le_bytes());
        h[20..24].copy_from_slice(&(pair as u32).to_le_bytes());
        h[28..32].copy_from_slice(&80u32.to_le_bytes());
        if !name.is_empty() {
            h[32..36].copy_from_slice(&64u32.to_le_bytes());
            h[36..40].copy_from_slice(&(name.len() as u32).to_le_bytes());
            h[64..64 + name.len()].copy_from_slice(name.as_bytes());
        }
        h[40..48].copy_from_slice(&0x11u64.to_le_bytes());
        h[pair..pair + 4].copy_from_slice(&(strings as u32).to_le_bytes());
        h[pair + 4..pair + 8].copy_from_slice(&(options.len() as u32).to_le_bytes());
        h[strings..strings + options.len()].copy_from_slice(options.as_bytes());
        h.extend_from_slice(b".version");
        container(&h)
    }

    #[test]
    fn ptx_options_follow_the_pair_offset() {
        for (name, options) in [
            ("", "--compile-only  "),
            ("a.cu", "--compile-only  --generate-line-info "),
            (
                "a.cu",
                "--compile-only  -g --dont-merge-basicblocks --return-at-end ",
            ),
        ] {
            let f = ptx_entry_with(name, options);
            let fb = Fatbin::parse(&f).unwrap();
            assert_eq!(fb.entries[0].kind, EntryKind::Ptx);
            assert_eq!(fb.entries[0].offset, 16);
            assert_eq!(fb.entries[0].options, options.trim_end(), "{name:?}");
        }
    }

    #[test]
    fn entries_and_selection() {
        let f = build(&[
            (2, 80, 0, b"elf80...", 0),
            (2, 90, 0, b"elf90", 0),
            (1, 75, 0, b".version", 0),
        ]);
        let fb = Fatbin::parse(&f).unwrap();
        assert_eq!(fb.entries.len(), 3);
        assert_eq!(fb.entries[0].offset, 16);
        assert_eq!(fb.entries[1].payload, b"elf90\0\0\0");
        assert_eq!(fb.select_elf(|sm, _| sm == 90).unwrap().sm, 90);
        assert_eq!(
            fb.select_elf(|sm, _| sm / 10 == 8 && sm <= 86).unwrap().sm,
            80
        );
        assert!(fb.select_elf(|sm, _| sm == 100).is_none());
        assert_eq!(fb.select_ptx(90).unwrap().sm, 75);
        assert!(fb.select_ptx(70).is_none());
        // Two containers back to back, then zero padding.
        let mut two = f.clone();
        two.extend_from_slice(&f);
        two.extend_from_slice(&[0; 8]);
        assert_eq!(Fatbin::parse(&two).unwrap().entries.len(), 6);
    }

    /// nvlink 13.0.88, measured on nvcc `-gencode` objects: for one SM the
    /// `a` ELF wins over `f` and plain whatever the order; a lower SM of the
    /// family is taken only when not `a`.
    #[test]
    fn variant_preference() {
        use crate::arch::SmArch;
        use crate::link::blackwell::arch_compatible;
        let pick = |entries: &[(u16, u32, u64, &[u8], u64)], target: &str| {
            let f = build(entries);
            let fb = Fatbin::parse(&f).unwrap();
            let t = SmArch::parse(target).unwrap();
            let e = fb.select_elf(|sm, v| arch_compatible(SmArch::new(sm), v, t));
            e.map(|e| (e.sm, e.variant()))
        };
        let (a, f) = (FLAG_ARCH_SPECIFIC, FLAG_ARCH_FAMILY);
        use ArchVariant::*;
        let plain_then_a: &[(u16, u32, u64, &[u8], u64)] =
            &[(2, 90, 0, b"p", 0), (2, 90, a, b"a", 0)];
        assert_eq!(pick(plain_then_a, "sm_90"), Some((90, Specific)));
        assert_eq!(pick(plain_then_a, "sm_90a"), Some((90, Specific)));
        let a_then_plain: &[(u16, u32, u64, &[u8], u64)] =
            &[(2, 100, a, b"a", 0), (2, 100, 0, b"p", 0)];
        assert_eq!(pick(a_then_plain, "sm_100"), Some((100, Specific)));
        assert_eq!(pick(a_then_plain, "sm_103"), Some((100, Base)));
        let f_then_a: &[(u16, u32, u64, &[u8], u64)] =
            &[(2, 100, f, b"f", 0), (2, 100, a, b"a", 0)];
        assert_eq!(pick(f_then_a, "sm_100f"), Some((100, Specific)));
        assert_eq!(pick(f_then_a, "sm_103"), Some((100, Family)));
        let only_a: &[(u16, u32, u64, &[u8], u64)] = &[(2, 100, a, b"a", 0)];
        assert_eq!(pick(only_a, "sm_103"), None);
    }

    #[test]
    fn lz4_payload() {
        let plain: Vec<u8> = (0..200u32).flat_map(|i| (i % 7).to_le_bytes()).collect();
        let packed = lz4_flex::block::compress(&plain);
        let f = build(&[(2, 90, FLAG_COMPRESS_LZ4, &packed, plain.len() as u64)]);
        let fb = Fatbin::parse(&f).unwrap();
        assert_eq!(fb.entries[0].compression, Compression::Lz4);
        assert_eq!(&*fb.entries[0].contents().unwrap(), &plain[..]);
        // Wrong uncompressed size.
        let f = build(&[(2, 90, FLAG_COMPRESS_LZ4, &packed, plain.len() as u64 + 1)]);
        let e = Fatbin::parse(&f).unwrap().entries[0]
            .contents()
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Malformed);
        assert_eq!(e.offset, Some(16));
        // Garbage.
        let f = build(&[(2, 90, FLAG_COMPRESS_ZSTD, b"\x28\xb5\x2f\xfdjunk", 100)]);
        assert!(Fatbin::parse(&f).unwrap().entries[0].contents().is_err());
    }

    #[test]
    fn malformed() {
        let good = build(&[(2, 90, 0, b"elf90...", 0)]);
        let err = |d: &[u8]| Fatbin::parse(d).unwrap_err();
        assert!(err(&good[..10]).message.contains("truncated"));
        // Container size past the end.
        let mut d = good.clone();
        d[8] = 0xff;
        assert!(err(&d).message.contains("runs past the end"));
        // Entry header size below 64.
        let mut d = good.clone();
        d[16 + 4] = 8;
        let e = err(&d);
        assert!(e.message.contains("header size"), "{e}");
        assert_eq!(e.offset, Some(16));
        // Payload size past the container.
        let mut d = good.clone();
        d[16 + 8] = 0x80;
        assert!(err(&d).message.contains("payload size"));
        // Compressed size above the payload size.
        let mut d = build(&[(2, 90, FLAG_COMPRESS_LZ4, b"12345678", 50)]);
        d[16 + 16] = 0x40;
        assert!(err(&d).message.contains("compressed size"));
        // Truncated entry header.
        let mut d = good[..16 + 40].to_vec();
        d[8..16].copy_from_slice(&40u64.to_le_bytes());
        assert!(err(&d).message.contains("entry header truncated"));
        // Bad magic in a second container.
        let mut d = good.clone();
        d.extend_from_slice(b"garbage!garbage!");
        assert!(err(&d).message.contains("magic"));
        // Every prefix and every single-byte corruption: an error or a parse, never a panic.
        for n in 0..good.len() {
            let _ = Fatbin::parse(&good[..n]);
        }
        for i in 0..good.len() {
            let mut d = good.clone();
            d[i] ^= 0xff;
            if let Ok(f) = Fatbin::parse(&d) {
                for e in &f.entries {
                    let _ = e.contents();
                }
            }
        }
    }
}
