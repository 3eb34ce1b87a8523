//! The layout of a capsule Mercury section (`.nv.capmerc.text.<fn>`), as far
//! as the linker needs it: where the raw Mercury instruction covering a SASS
//! instruction sits, so that values nvlink resolves at link time
//! (module-constant offsets, texture/surface header-table slots) can be
//! written into it (measured; `docs/blackwell.md` §4).
//!
//! ```text
//! u32 SASS text section index   (rewritten by the linker)
//! u32 0xc0000001
//! u32 n                         capsule instructions (see below)
//! u32 mask[ceil(n/32)]          bit i (LSB first) = 1: instruction i is implicit
//! items ...                     one per zero bit except the last, in order
//! u16 trailer                   the last zero bit (the final BRA and padding)
//! ```
//!
//! Each capsule instruction stands for a run of consecutive SASS
//! instructions (16-byte slots of `.text.<fn>`), in order, and the runs
//! cover the text exactly: an implicit instruction or a plain item stands for
//! one, an item behind a *span prefix* for as many as the prefix says.
//!
//! Items by their first bytes: `0x01` (16 bytes), `0x02` (32 bytes: 16 bytes
//! of description, then the instruction's raw 16-byte Mercury encoding),
//! `0x41` and `0x42` (4 bytes), and two-byte items read as a little-endian
//! `u16` `v` whose low 7 bits are a tag and `v >> 7` is a SASS instruction
//! count (so the count's low bit lands in the first byte's top bit: `d1 04`
//! is tag 0x51, 9 instructions):
//!
//! * tag `0x51`: a span prefix before a `0x01` / `0x02` item: that item
//!   stands for `v >> 7` SASS instructions (`51 01`: `LD.STRONG` +
//!   `CCTL.IVALL`; `51 02`: three `@!PT LDS` fillers + `LDGSTS`, or the
//!   `CS2R.32 SR_CgaSize; IMAD; R2UR` triple + `LDCU`; `d1 04`: a fence's
//!   four fillers, `MEMBAR`s, `ERRBAR`, `CGAERRBAR` and `CCTL` / `ATOM`);
//! * tag `0x50`: an item of its own standing for `v >> 7` instructions
//!   (`d0 00`: one NOP or `DEPBAR`); the trailer has this tag too (the final
//!   `BRA` and the NOP padding after it: `50 07` is 14).
//!
//! Measured on every capsule of the `tests/link` fixtures, about 2300
//! generated functions and nvshmem 3.8's device library (1229 capsules in the
//! last check, all covering their text exactly). A capsule with any other
//! item, or whose items do not match its mask one to one, is reported as
//! undecodable and left alone by the caller; so is one whose runs do not
//! cover its text (the caller checks [`CapsuleLayout::sass_len`]).

use std::fmt;

/// Second word of every capsule.
pub(crate) const CAPSULE_MAGIC: u32 = 0xc000_0001;

/// Tag (low 7 bits of a two-byte item) of a span prefix.
const TAG_SPAN: u16 = 0x51;
/// Tag of a two-byte item standing for instructions of its own (NOPs, the
/// trailer).
const TAG_RUN: u16 = 0x50;

/// Why a capsule could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CapsuleError {
    /// Shorter than its header, mask and trailer.
    Truncated,
    /// The second word is not [`CAPSULE_MAGIC`].
    BadMagic(u32),
    /// An item whose first byte is not one of the measured kinds.
    UnknownItem { offset: usize, tag: u8 },
    /// The items do not end exactly at the trailer, their number is not
    /// that of the mask's zero bits minus one, or one stands for no
    /// instruction.
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

/// One explicit capsule instruction: the SASS instructions it stands for and
/// its record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Explicit {
    /// First SASS instruction (16-byte slot of the text) it stands for.
    first: u32,
    /// How many SASS instructions it stands for.
    span: u32,
    /// Byte offset of its record (after a span prefix).
    record: usize,
    /// The record's first byte.
    tag: u8,
}

/// The explicit items of one capsule, by the SASS instructions they cover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CapsuleLayout {
    /// Instruction count `n` of the header.
    instructions: u32,
    /// SASS instructions the capsule covers (the runs' total).
    sass_len: u32,
    /// Explicit instructions, ascending by `first`.
    explicit: Vec<Explicit>,
}

fn word(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
}

/// A two-byte item at `at`: (tag, instruction count).
fn short(b: &[u8], at: usize) -> Option<(u16, u32)> {
    let v = u16::from_le_bytes([*b.get(at)?, *b.get(at + 1)?]);
    Some((v & 0x7f, u32::from(v >> 7)))
}

/// One capsule instruction as [`walk`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Instr {
    /// Whether its mask bit is 1 (no item).
    implicit: bool,
    /// First SASS instruction it stands for.
    first: u32,
    /// How many SASS instructions it stands for.
    span: u32,
    /// Byte range of its item, span prefix included (empty for an implicit
    /// instruction: where its item would go).
    start: usize,
    end: usize,
    /// Byte offset of its record (after a span prefix) and the record's
    /// first byte.
    record: usize,
    tag: u8,
}

/// Decodes the header, mask and item sequence of `bytes`: every capsule
/// instruction in order, the trailer last.
fn walk(bytes: &[u8]) -> Result<Vec<Instr>, CapsuleError> {
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
    let implicit = |i: u32| {
        let w = word(bytes, 12 + 4 * (i as usize / 32)).unwrap_or(0);
        (w >> (i % 32)) & 1 == 1
    };
    let last_zero = (0..n).rev().find(|&i| !implicit(i));
    let mut out = Vec::with_capacity(n as usize);
    let mut at = items_start;
    let mut sass: u32 = 0;
    for i in 0..n {
        if implicit(i) {
            out.push(Instr {
                implicit: true,
                first: sass,
                span: 1,
                start: at,
                end: at,
                record: at,
                tag: 0,
            });
            sass = sass.checked_add(1).ok_or(CapsuleError::Inconsistent)?;
            continue;
        }
        let item = at;
        let (span, record, tag) = if Some(i) == last_zero {
            // The trailer: the final BRA and the padding after it.
            if at != end {
                return Err(CapsuleError::Inconsistent);
            }
            match short(bytes, at) {
                Some((TAG_RUN, count)) => {
                    at += 2;
                    (count, item, bytes[item])
                }
                _ => {
                    return Err(CapsuleError::UnknownItem {
                        offset: at,
                        tag: bytes[at],
                    })
                }
            }
        } else {
            let mut span = 1;
            if at >= end {
                return Err(CapsuleError::Inconsistent);
            }
            if let Some((TAG_SPAN, count)) = short(bytes, at) {
                span = count;
                at += 2;
            }
            let tag = *bytes.get(at).ok_or(CapsuleError::Inconsistent)?;
            let len = match tag {
                0x01 => 16,
                0x02 => 32,
                0x41 | 0x42 if at == item => 4,
                _ => match short(bytes, at) {
                    Some((TAG_RUN, count)) if at == item => {
                        span = count;
                        2
                    }
                    _ => return Err(CapsuleError::UnknownItem { offset: at, tag }),
                },
            };
            if at + len > end {
                return Err(CapsuleError::Inconsistent);
            }
            let record = at;
            at += len;
            (span, record, tag)
        };
        if span == 0 {
            return Err(CapsuleError::Inconsistent);
        }
        out.push(Instr {
            implicit: false,
            first: sass,
            span,
            start: item,
            end: at,
            record,
            tag,
        });
        sass = sass.checked_add(span).ok_or(CapsuleError::Inconsistent)?;
    }
    // Every item read, the trailer included.
    if last_zero.is_none() || at != bytes.len() {
        return Err(CapsuleError::Inconsistent);
    }
    Ok(out)
}

impl CapsuleLayout {
    /// Decodes the header, mask and item sequence of `bytes`.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, CapsuleError> {
        let instrs = walk(bytes)?;
        let sass_len = instrs.last().map_or(0, |t| t.first + t.span);
        let trailer = instrs.len() - 1;
        let explicit = instrs[..trailer]
            .iter()
            .filter(|i| !i.implicit)
            .map(|i| Explicit {
                first: i.first,
                span: i.span,
                record: i.record,
                tag: i.tag,
            })
            .collect();
        Ok(CapsuleLayout {
            instructions: instrs.len() as u32,
            sass_len,
            explicit,
        })
    }

    /// How many SASS instructions (16-byte slots) the capsule's runs cover:
    /// the whole text of its function when the layout is understood.
    pub(crate) fn sass_len(&self) -> u32 {
        self.sass_len
    }

    /// Byte offset of the raw Mercury instruction carried for the capsule
    /// instruction that stands for SASS instruction `sass` (its 16-byte slot
    /// in the text): `None` when that instruction is implicit (rebuilt from
    /// the SASS by the finalizer) or its item carries no instruction.
    pub(crate) fn raw_instruction(&self, sass: u32) -> Option<usize> {
        let i = self.explicit.partition_point(|e| e.first <= sass);
        let e = self.explicit.get(i.checked_sub(1)?)?;
        (sass - e.first < e.span && e.tag == 0x02).then_some(e.record + 16)
    }
}

/// A two-byte item: `tag` in the low 7 bits, `count` SASS instructions
/// above (`None` when the count does not fit).
fn two_byte(tag: u16, count: u32) -> Option<[u8; 2]> {
    u16::try_from(count)
        .ok()
        .and_then(|c| c.checked_mul(128))
        .map(|v| (v | tag).to_le_bytes())
}

/// The span prefix standing for `count` SASS instructions (`51 02`: 4).
pub(crate) fn span_prefix(count: u8) -> [u8; 2] {
    (u16::from(count) << 7 | TAG_SPAN).to_le_bytes()
}

/// A change to the capsule, at a (old) SASS instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// The implicit capsule instruction standing for this SASS instruction
    /// alone gets this item (span prefix included): its mask bit is cleared.
    Item(Vec<u8>),
    /// This SASS instruction is dropped: the explicit capsule instruction
    /// whose run holds it stands for one fewer (its span prefix goes when one
    /// is left: a fence's `51 05` → none, nvlink's re-finalized leaf kernels).
    Drop,
    /// One SASS instruction is inserted in front of this one, inside the run
    /// of the explicit capsule instruction holding it.
    Grow,
}

/// `bytes` with `changes` made (ascending by SASS instruction) and the
/// trailer's count set to `trailer` (the final `BRA` and its padding). The
/// caller's SASS text changed so that the runs cover it again (exit
/// barriers and fences, `refinalize.rs`). Errors when the capsule does not
/// decode or a change does not fit the instruction at its place.
pub(crate) fn edit(
    bytes: &[u8],
    changes: &[(u32, Change)],
    trailer: u32,
) -> Result<Vec<u8>, CapsuleError> {
    let instrs = walk(bytes)?;
    let n = instrs.len();
    let mask_start = 12;
    let items_start = mask_start + 4 * n.div_ceil(32);
    let mut out = bytes[..items_start].to_vec();
    // Per capsule instruction: its new item, or its span's change.
    let mut items: Vec<Option<&[u8]>> = vec![None; n];
    let mut spans: Vec<i64> = vec![0; n];
    for (slot, change) in changes {
        // The instruction whose run holds the slot (the trailer's excluded).
        let i = instrs[..n - 1]
            .partition_point(|ins| ins.first <= *slot)
            .checked_sub(1)
            .filter(|&i| *slot < instrs[i].first + instrs[i].span)
            .ok_or(CapsuleError::Inconsistent)?;
        let ins = &instrs[i];
        match change {
            Change::Item(item) => {
                if !ins.implicit || items[i].is_some() {
                    return Err(CapsuleError::Inconsistent);
                }
                items[i] = Some(item);
            }
            Change::Drop | Change::Grow => {
                if ins.implicit || ins.record == ins.start {
                    return Err(CapsuleError::Inconsistent);
                }
                spans[i] += if *change == Change::Drop { -1 } else { 1 };
            }
        }
    }
    for (i, ins) in instrs.iter().enumerate() {
        if i + 1 == n {
            // The trailer.
            out.extend_from_slice(&two_byte(TAG_RUN, trailer).ok_or(CapsuleError::Inconsistent)?);
            break;
        }
        if let Some(item) = items[i] {
            let w = mask_start + 4 * (i / 32);
            let bit = 1u32 << (i % 32);
            let m = word(&out, w).ok_or(CapsuleError::Truncated)? & !bit;
            out[w..w + 4].copy_from_slice(&m.to_le_bytes());
            out.extend_from_slice(item);
        } else if spans[i] != 0 {
            let count = i64::from(ins.span) + spans[i];
            if count != 1 {
                let prefix = u32::try_from(count)
                    .ok()
                    .filter(|&c| c > 1)
                    .and_then(|c| two_byte(TAG_SPAN, c))
                    .ok_or(CapsuleError::Inconsistent)?;
                out.extend_from_slice(&prefix);
            }
            out.extend_from_slice(&bytes[ins.record..ins.end]);
        } else {
            out.extend_from_slice(&bytes[ins.start..ins.end]);
        }
    }
    Ok(out)
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
        let firsts: Vec<u32> = l.explicit.iter().map(|e| e.first).collect();
        assert_eq!(firsts, [0, 1, 2, 5, 6, 20, 30, 32, 35]);
        // 37 instructions, then the trailer `d0 05`: BRA and 10 NOPs.
        assert_eq!(l.sass_len(), 37 + 11);
        // cb+8 (instruction 6) and cshared (instruction 32): 2-unit records.
        assert_eq!(l.raw_instruction(6), Some(0x64));
        assert_eq!(l.raw_instruction(32), Some(0xb4));
        // Implicit, 1-unit, past the end.
        assert_eq!(l.raw_instruction(3), None);
        assert_eq!(l.raw_instruction(0), None);
        assert_eq!(l.raw_instruction(38), None);
    }

    /// Header and mask of a capsule of `n` instructions whose mask word is
    /// `mask`.
    fn header(n: u32, mask: u32) -> Vec<u8> {
        let mut b = vec![0u8; 4];
        b.extend_from_slice(&CAPSULE_MAGIC.to_le_bytes());
        b.extend_from_slice(&n.to_le_bytes());
        b.extend_from_slice(&mask.to_le_bytes());
        b
    }

    fn record(b: &mut Vec<u8>, tag: u8, len: usize) {
        b.push(tag);
        b.extend(std::iter::repeat_n(0, len - 1));
    }

    #[test]
    fn two_byte_items() {
        // Instructions 0..4: 1 implicit; 0, 2, 3 explicit: a `d0 00` item
        // (one NOP), then a 2-unit record; 3 is the trailer (`50 07`: 14).
        let mut b = header(4, 0b0010);
        b.extend_from_slice(&[0xd0, 0x00]);
        record(&mut b, 0x02, 32);
        b.extend_from_slice(&[0x50, 0x07]);
        let l = CapsuleLayout::parse(&b).expect("decodes");
        assert_eq!(l.sass_len(), 1 + 1 + 1 + 14);
        assert_eq!(l.raw_instruction(0), None);
        assert_eq!(l.raw_instruction(2), Some(0x10 + 2 + 16));
        // A `51 02` prefix before the record: its raw copy moves by 2, and
        // it stands for 4 SASS instructions (fillers + LDGSTS).
        let mut p = b.clone();
        p.splice(0x12..0x12, [0x51, 0x02]);
        let l = CapsuleLayout::parse(&p).expect("decodes");
        assert_eq!(l.sass_len(), 1 + 1 + 4 + 14);
        for sass in 2..6 {
            assert_eq!(l.raw_instruction(sass), Some(0x10 + 2 + 2 + 16));
        }
        assert_eq!(l.raw_instruction(6), None);
        // `d0 05` inside the items: one item for 11 instructions.
        let mut r = b.clone();
        r[0x11] = 0x05;
        let l = CapsuleLayout::parse(&r).expect("decodes");
        assert_eq!(l.sass_len(), 11 + 1 + 1 + 14);
        assert_eq!(l.raw_instruction(12), Some(0x10 + 2 + 16));
        // A prefix before a 4-byte item, or before a two-byte item, is not
        // a kind measured; nor is a count of 0.
        let mut q = header(2, 0);
        q.extend_from_slice(&[0x51, 0x02, 0x42, 0, 0, 0, 0x50, 0x07]);
        assert!(matches!(
            CapsuleLayout::parse(&q),
            Err(CapsuleError::UnknownItem { offset: 0x12, .. })
        ));
        let mut z = b.clone();
        z[0x10] = 0x50;
        assert_eq!(CapsuleLayout::parse(&z), Err(CapsuleError::Inconsistent));
    }

    #[test]
    fn spans_cover_fences() {
        // `d1 04`: tag 0x51, 9 instructions (a fence's four `@!PT LDS`
        // fillers, MEMBAR.ALL.CTA, MEMBAR.SC.GPU, ERRBAR, CGAERRBAR,
        // CCTL.IVALL), as in nvshmem's `nvshmemi_transfer_syncapi_update_mem`.
        let mut b = header(3, 0b001);
        b.extend_from_slice(&[0xd1, 0x04]);
        record(&mut b, 0x02, 32);
        b.extend_from_slice(&[0x50, 0x07]);
        let l = CapsuleLayout::parse(&b).expect("decodes");
        assert_eq!(l.sass_len(), 1 + 9 + 14);
        assert_eq!(l.raw_instruction(0), None);
        assert_eq!(l.raw_instruction(1), Some(0x10 + 2 + 16));
        assert_eq!(l.raw_instruction(9), Some(0x10 + 2 + 16));
        assert_eq!(l.raw_instruction(10), None);
    }

    #[test]
    fn exit_items_as_nvlink_writes_them() {
        // `k3` of a hand-written sm_100 kernel (ptxas 13.0.88): `@!P0 EXIT P1`
        // (SASS 5) and `EXIT` (SASS 8) implicit; linked by nvlink 13.0.88
        // with -g, each behind three barriers (span 4, a 0x01 item), the
        // trailer 15 -> 9. The first word is the section index nvlink
        // rewrites (0x0f -> 0x10), kept here as the input's.
        let input = unhex(
            "0f000000010000c00a00000038010000010b040af80004000000410000040000\
             010b040af80004000000410101020000010b0e0afa000500000003013904000002\
             220e06f800520000008300400002000000000000000000000000000000000002\
             380e32f80040110000000082000a0000020140010000000000000000000000d007",
        );
        let mut nvlink = unhex(
            "10000000010000c00a00000018000000010b040af80004000000410000040000\
             010b040af80004000000410101020000010b0e0afa0005000000030139040000\
             51020111000a01000000000000080000000002220e06f8005200000083004000\
             02000000000000000000000000000000000002380e32f8004011000000008200\
             0a000002014001000000000000000000000051020111000af8000000000000f8\
             00000000d004",
        );
        nvlink[0] = 0x0f;
        let item = |g: u8, o: u8| {
            let mut v = vec![0x51, 0x02, 0x01, 0x11, 0x00, 0x0a, g];
            v.extend_from_slice(&[0, 0, 0, 0, 0, 0, o, 0, 0, 0, 0]);
            v
        };
        let got = edit(
            &input,
            &[
                (5, Change::Item(item(0x01, 0x08))),
                (8, Change::Item(item(0xf8, 0xf8))),
            ],
            9,
        );
        assert_eq!(got, Ok(nvlink.clone()));
        // An explicit instruction's slot, or one inside no instruction of its
        // own, is refused.
        assert_eq!(
            edit(&input, &[(0, Change::Item(item(0, 0)))], 9),
            Err(CapsuleError::Inconsistent)
        );
        assert_eq!(
            edit(&input, &[(40, Change::Item(item(0, 0)))], 9),
            Err(CapsuleError::Inconsistent)
        );
        // nvlink's capsule back to three barriers: the spans shrink to 3
        // (`d1 01`), the items stay.
        let mut three = nvlink.clone();
        for at in [0x40, 0x92] {
            assert_eq!(three[at..at + 2], [0x51, 0x02]);
            three[at..at + 2].copy_from_slice(&[0xd1, 0x01]);
        }
        let got = edit(&nvlink, &[(5, Change::Drop), (11, Change::Drop)], 9);
        assert_eq!(got, Ok(three.clone()));
        // And forth again.
        assert_eq!(
            edit(&three, &[(6, Change::Grow), (11, Change::Grow)], 9),
            Ok(nvlink.clone())
        );
        // A span change on an instruction without a prefix is refused.
        assert_eq!(
            edit(&input, &[(0, Change::Drop)], 9),
            Err(CapsuleError::Inconsistent)
        );
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
