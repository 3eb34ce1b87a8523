//! The layout of a capsule Mercury section (`.nv.capmerc.text.<fn>`), as far
//! as the linker needs it: where the raw Mercury instruction of an explicit
//! SASS instruction sits, so that values nvlink resolves at link time
//! (module-constant offsets, texture/surface header-table slots) can be
//! written into it (measured; `docs/blackwell.md` §4).
//!
//! ```text
//! u32 SASS text section index   (rewritten by the linker)
//! u32 0xc0000001
//! u32 n                         capsule instructions (see below)
//! u32 mask[ceil(n/32)]          bit i (LSB first) = 1: instruction i is implicit
//! items ...                     one per zero bit except the last, in order
//! u16 trailer                   the last zero bit (the final BRA)
//! ```
//!
//! The capsule instructions are the SASS instructions of `.text.<fn>` up to
//! its final `BRA` (the NOP padding after it excluded), minus those guarded by
//! `!PT` (never executed; e.g. the `@!PT LDS RZ, [RZ]` fillers next to
//! `LDGSTS`); NOPs inside the code are capsule instructions.
//!
//! Items by their first bytes: `0x01` (16 bytes), `0x02` (32 bytes: 16 bytes
//! of description, then the instruction's raw 16-byte Mercury encoding),
//! `0x41` and `0x42` (4 bytes), `d0 00` (2 bytes: NOPs, `DEPBAR`), and
//! `51 0n`, n = 1..3 (a 2-byte prefix before a `0x01` / `0x02` item: `51 01`,
//! `51 02` on an `LDGSTS`, `51 03` on a 64-bit global `atomicAdd`). Only that much was measured (every capsule of the `tests/link`
//! fixtures and of about 2300 generated functions); a capsule with any other
//! item, or whose items do not match its mask one to one, is reported as
//! undecodable and left alone by the caller.

use std::fmt;

/// Second word of every capsule.
pub(crate) const CAPSULE_MAGIC: u32 = 0xc000_0001;

/// Why a capsule could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CapsuleError {
    /// Shorter than its header, mask and trailer.
    Truncated,
    /// The second word is not [`CAPSULE_MAGIC`].
    BadMagic(u32),
    /// An item whose first byte is not one of the measured kinds.
    UnknownItem { offset: usize, tag: u8 },
    /// The items do not end exactly at the trailer, or their number is not
    /// that of the mask's zero bits minus one.
    Inconsistent,
}

impl fmt::Display for CapsuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CapsuleError::Truncated => write!(f, "capsule truncated"),
            CapsuleError::BadMagic(m) => write!(f, "capsule magic {m:#010x}, not 0xc0000001"),
            CapsuleError::UnknownItem { offset, tag } => {
                write!(
                    f,
                    "capsule item kind {tag:#04x} at byte {offset:#x} not known"
                )
            }
            CapsuleError::Inconsistent => {
                write!(f, "capsule items do not match its instruction mask")
            }
        }
    }
}

/// The explicit items of one capsule, by SASS instruction index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CapsuleLayout {
    /// Instruction count `n` of the header.
    instructions: u32,
    /// (instruction index, byte offset of its record, record kind), ascending;
    /// the record follows the 2-byte prefix of `0x51` items.
    explicit: Vec<(u32, usize, u8)>,
}

/// (length of the item starting `item`, offset of its record inside it), for
/// the kinds measured.
fn item_len(item: &[u8]) -> Option<(usize, usize)> {
    match item {
        [0x01, ..] => Some((16, 0)),
        [0x02, ..] => Some((32, 0)),
        [0x41 | 0x42, ..] => Some((4, 0)),
        [0xd0, 0x00, ..] => Some((2, 0)),
        // A 2-byte `51 nn` prefix before a record: `51 01`/`51 02` before
        // records of that kind (LDGSTS), and `51 03` before a `0x02` record
        // (an nvcc kernel's `atomicAdd` on a 64-bit global).
        [0x51, 0x01..=0x03, 0x01, ..] => Some((18, 2)),
        [0x51, 0x01..=0x03, 0x02, ..] => Some((34, 2)),
        _ => None,
    }
}

fn word(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
}

impl CapsuleLayout {
    /// Decodes the header, mask and item sequence of `bytes`.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, CapsuleError> {
        let magic = word(bytes, 4).ok_or(CapsuleError::Truncated)?;
        if magic != CAPSULE_MAGIC {
            return Err(CapsuleError::BadMagic(magic));
        }
        let n = word(bytes, 8).ok_or(CapsuleError::Truncated)?;
        let mask_words = n.div_ceil(32) as usize;
        let items_start = 12 + 4 * mask_words;
        if bytes.len() < items_start + 2 {
            return Err(CapsuleError::Truncated);
        }
        let end = bytes.len() - 2;
        let zeros: Vec<u32> = (0..n)
            .filter(|&i| {
                let w = word(bytes, 12 + 4 * (i as usize / 32)).unwrap_or(0);
                (w >> (i % 32)) & 1 == 0
            })
            .collect();
        let mut explicit = Vec::with_capacity(zeros.len());
        let mut at = items_start;
        while at < end {
            let tag = bytes[at];
            let (len, record) =
                item_len(&bytes[at..end]).ok_or(CapsuleError::UnknownItem { offset: at, tag })?;
            let lane = *zeros
                .get(explicit.len())
                .ok_or(CapsuleError::Inconsistent)?;
            explicit.push((lane, at + record, bytes[at + record]));
            at += len;
        }
        // Exactly at the trailer, and one zero bit (the final BRA) left for it.
        if at != end || explicit.len() + 1 != zeros.len() {
            return Err(CapsuleError::Inconsistent);
        }
        Ok(CapsuleLayout {
            instructions: n,
            explicit,
        })
    }

    /// Byte offset of the raw Mercury instruction carried for SASS
    /// instruction `index`: `None` when that instruction is implicit (rebuilt
    /// from the SASS by the finalizer) or its item carries no instruction.
    pub(crate) fn raw_instruction(&self, index: u32) -> Option<usize> {
        if index >= self.instructions {
            return None;
        }
        let i = self
            .explicit
            .binary_search_by_key(&index, |&(lane, _, _)| lane)
            .ok()?;
        let (_, at, tag) = self.explicit[i];
        (tag == 0x02).then_some(at + 16)
    }
}

/// The capsule instruction index of each SASS instruction of `text` (16-byte
/// units): instructions guarded by `!PT` (predicate nibble, bits 12..15 of
/// the first word, 0xf) have none and do not count.
pub(crate) fn capsule_indices(text: &[u8]) -> Vec<Option<u32>> {
    let mut next = 0u32;
    text.chunks_exact(16)
        .map(|ins| {
            if (ins[1] >> 4) == 0xf {
                None
            } else {
                next += 1;
                Some(next - 1)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Capsule of `k2` (`tests/link/const_multi/c2.sm_100.o`).
    const K2: &str = "0e000000010000c02600000098ffefbf16000000010b040af800040000004100\
                      00040000010b060afa0004000000c1012c020000010b040af800040000000100\
                      01020000010b0e0afa000500000003023904000002220e06f800420000000101\
                      420002000000000000000000000000000000000001475a16f800040000000000\
                      0100000002220e06f80052000000030240000200000000000000000000000000\
                      0000000002220806fa0042000000010142000200000000000000000000000000\
                      0000000002380e32f80040110000000002020a00000202c00200000000000000\
                      00000000d005";

    fn unhex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
            .collect()
    }

    #[test]
    fn decodes_k2() {
        let b = unhex(K2);
        assert_eq!(b.len(), 0xe6);
        let l = CapsuleLayout::parse(&b).expect("decodes");
        assert_eq!(l.instructions, 38);
        let lanes: Vec<u32> = l.explicit.iter().map(|e| e.0).collect();
        assert_eq!(lanes, [0, 1, 2, 5, 6, 20, 30, 32, 35]);
        // cb+8 (instruction 6) and cshared (instruction 32): 2-unit records.
        assert_eq!(l.raw_instruction(6), Some(0x64));
        assert_eq!(l.raw_instruction(32), Some(0xb4));
        // Implicit, 1-unit, past the end.
        assert_eq!(l.raw_instruction(3), None);
        assert_eq!(l.raw_instruction(0), None);
        assert_eq!(l.raw_instruction(38), None);
    }

    #[test]
    fn two_byte_items() {
        // Instructions 0..3, 0 and 2 explicit: a `d0 00` item, then a 2-unit
        // record; instruction 3 (the last zero bit) is the trailer's.
        let mut b = unhex("00000000010000c004000000 02000000 d000");
        b.extend_from_slice(&[0x02; 1]);
        b.extend_from_slice(&[0; 31]);
        b.extend_from_slice(&[0x50, 0x07]);
        let mut b2 = b.clone();
        b2[12] = 0b0010; // zeros: 0, 2, 3
        let l = CapsuleLayout::parse(&b2).expect("decodes");
        assert_eq!(l.raw_instruction(0), None);
        assert_eq!(l.raw_instruction(2), Some(0x10 + 2 + 16));
        // A `51 02` prefix before the record: its raw copy moves by 2.
        let mut p = b2.clone();
        p.splice(0x12..0x12, [0x51, 0x02]);
        let l = CapsuleLayout::parse(&p).expect("decodes");
        assert_eq!(l.raw_instruction(2), Some(0x10 + 2 + 2 + 16));
        // `d0 xx` with xx != 0 is not an item kind measured.
        b2[0x10 + 1] = 0x05;
        assert!(matches!(
            CapsuleLayout::parse(&b2),
            Err(CapsuleError::UnknownItem { offset: 0x10, .. })
        ));
    }

    #[test]
    fn never_executed_instructions_do_not_count() {
        let mut text = vec![0u8; 16 * 5];
        // 0: LDGSTS-like, 1..2: `@!PT LDS RZ, [RZ]`, 3: NOP, 4: anything.
        for (i, lo) in [0x7fae_u16, 0xf984, 0xf984, 0x7918, 0x7c10]
            .into_iter()
            .enumerate()
        {
            text[16 * i..16 * i + 2].copy_from_slice(&lo.to_le_bytes());
        }
        assert_eq!(
            capsule_indices(&text),
            [Some(0), None, None, Some(1), Some(2)]
        );
        assert!(capsule_indices(&text[..15]).is_empty());
    }

    #[test]
    fn rejects_bad_capsules() {
        let b = unhex(K2);
        assert_eq!(CapsuleLayout::parse(&b[..10]), Err(CapsuleError::Truncated));
        let mut m = b.clone();
        m[7] = 0;
        assert!(matches!(
            CapsuleLayout::parse(&m),
            Err(CapsuleError::BadMagic(_))
        ));
        let mut u = b.clone();
        u[0x14] = 0x77;
        assert_eq!(
            CapsuleLayout::parse(&u),
            Err(CapsuleError::UnknownItem {
                offset: 0x14,
                tag: 0x77
            })
        );
        // One more implicit instruction: the items no longer match the mask.
        let mut i = b.clone();
        i[12] |= 1;
        assert_eq!(CapsuleLayout::parse(&i), Err(CapsuleError::Inconsistent));
        // Truncated item sequence.
        let mut t = b[..0xe0].to_vec();
        t.extend_from_slice(&[0xd0, 0x05]);
        assert!(CapsuleLayout::parse(&t).is_err());
        // Huge instruction count: no panic.
        let mut h = b;
        h[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(CapsuleLayout::parse(&h), Err(CapsuleError::Truncated));
    }
}
