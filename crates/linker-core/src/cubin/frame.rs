//! The 64-bit DWARF `.debug_frame` format ptxas and nvlink write (also
//! `.nv.merc.debug_frame`): its entries, LEB128 numbers, and call frame
//! instructions split into rows. Read by the link (frame rebuilds,
//! `link/frame_merge.rs`, re-finalization) and by `diff` (frames compared by
//! their rows).

/// Reads an unsigned LEB128 at `*at` (advancing it); `None` past the end.
/// (The crate's one LEB128 reader: line tables and frames use it.)
pub(crate) fn uleb(data: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    let mut shift = 0u32;
    loop {
        let b = *data.get(*at)?;
        *at += 1;
        if shift < 64 {
            v |= u64::from(b & 0x7f) << shift;
        }
        if b & 0x80 == 0 {
            return Some(v);
        }
        shift += 7;
    }
}

/// One CIE or FDE of a 64-bit DWARF `.debug_frame` (`0xffffffff`, u64 length).
#[derive(Debug, Clone, Copy)]
pub(crate) struct FrameEntry {
    pub start: usize,
    pub end: usize,
    pub is_cie: bool,
}

/// Splits a `.debug_frame` into entries; `None` when it is not the 64-bit
/// format ptxas writes.
pub(crate) fn entries(data: &[u8]) -> Option<Vec<FrameEntry>> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < data.len() {
        let head = data.get(at..at + 20)?;
        if head[..4] != [0xff; 4] {
            return None;
        }
        let len = usize::try_from(u64::from_le_bytes(head[4..12].try_into().ok()?)).ok()?;
        let end = at.checked_add(12)?.checked_add(len)?;
        if end > data.len() {
            return None;
        }
        let id = u64::from_le_bytes(head[12..20].try_into().ok()?);
        out.push(FrameEntry {
            start: at,
            end,
            is_cie: id == u64::MAX,
        });
        at = end;
    }
    Some(out)
}

/// `DW_CFA_advance_loc4`, the advance nvlink writes.
pub(crate) const ADVANCE_LOC4: u8 = 0x04;
/// `DW_CFA_nop`.
pub(crate) const NOP: u8 = 0x00;

/// A CFA program split at its advances: the instructions at each location
/// (bytes from the function's start), in order; every advance (but one by
/// nothing) opens a location, instructions or not.
pub(crate) type Rows<'a> = Vec<(u64, Vec<&'a [u8]>)>;

/// The code alignment factor of a version-3 CIE whose body (after the CIE id)
/// is `body`; `None` for another layout.
pub(crate) fn code_alignment(body: &[u8]) -> Option<u64> {
    if *body.first()? != 3 {
        return None;
    }
    let nul = body[1..].iter().position(|&b| b == 0)?;
    if nul != 0 {
        return None; // an augmentation this reader does not know
    }
    let mut at = 2;
    uleb(body, &mut at).filter(|&a| a != 0)
}

/// One call frame instruction (DWARF 4, section 6.4.2).
pub(crate) enum Cfa {
    /// `DW_CFA_advance_loc*`: the operand's width in bytes after the opcode
    /// (0: in the opcode) and the delta in code units.
    Advance { width: usize, units: u64 },
    /// Any other instruction, ending at `end`.
    Other { end: usize },
}

/// The call frame instruction at `at` of `ins`; `None` for an opcode this
/// reader does not know or one cut short.
pub(crate) fn instruction(ins: &[u8], at: usize) -> Option<Cfa> {
    let op = *ins.get(at)?;
    let operand = |width: usize| ins.get(at + 1..at + 1 + width);
    let advance = |width: usize, units: u64| Some(Cfa::Advance { width, units });
    match op {
        0x40..=0x7f => return advance(0, u64::from(op & 0x3f)),
        0x02 => return advance(1, u64::from(operand(1)?[0])),
        0x03 => {
            return advance(
                2,
                u64::from(u16::from_le_bytes(operand(2)?.try_into().ok()?)),
            )
        }
        ADVANCE_LOC4 => {
            return advance(
                4,
                u64::from(u32::from_le_bytes(operand(4)?.try_into().ok()?)),
            )
        }
        _ => {}
    }
    // Operands: `u` a ULEB128, `s` an SLEB128, `b` a block (ULEB128
    // length, then bytes).
    let operands = match op {
        0x00 | 0x0a | 0x0b | 0xc0..=0xff => "",
        0x80..=0xbf | 0x06 | 0x07 | 0x08 | 0x0d | 0x0e => "u",
        0x05 | 0x09 | 0x0c | 0x14 => "uu",
        0x11 | 0x12 | 0x15 => "us",
        0x13 => "s",
        0x0f => "b",
        0x10 | 0x16 => "ub",
        _ => return None,
    };
    let mut end = at + 1;
    for kind in operands.chars() {
        // (An SLEB128 has the length of the ULEB128 read over it.)
        let v = uleb(ins, &mut end)?;
        if kind == 'b' {
            end = end.checked_add(usize::try_from(v).ok()?)?;
        }
    }
    Some(Cfa::Other { end })
}

/// Splits `ins` (a CFA program of code alignment `align`) into [`Rows`];
/// `None` on an instruction this reader does not know.
pub(crate) fn rows(ins: &[u8], align: u64) -> Option<Rows<'_>> {
    let mut out: Rows<'_> = vec![(0, Vec::new())];
    let mut loc = 0u64;
    let mut at = 0usize;
    while at < ins.len() {
        match instruction(ins, at)? {
            Cfa::Advance { width, units } => {
                at += 1 + width;
                // (An advance by nothing, as Mercury programs start, opens none.)
                if units != 0 {
                    loc = loc.checked_add(units.checked_mul(align)?)?;
                    out.push((loc, Vec::new()));
                }
            }
            Cfa::Other { end } => {
                if ins[at] != NOP {
                    out.last_mut()?.1.push(ins.get(at..end)?);
                }
                at = end;
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `DW_CFA_def_cfa` of register 0x28 (ULEB `81 80 80 28`...) and an offset,
    /// as ptxas writes them.
    const DEF_CFA_0: [u8; 6] = [0x0c, 0x81, 0x80, 0x80, 0x28, 0x00];

    #[test]
    fn rows_open_a_location_at_every_advance() {
        let mut ins = DEF_CFA_0.to_vec();
        ins.extend_from_slice(&[ADVANCE_LOC4, 4, 0, 0, 0, NOP, NOP]);
        let r = rows(&ins, 4).expect("parses");
        assert_eq!(r.len(), 2);
        assert_eq!(r[0], (0, vec![&DEF_CFA_0[..]]));
        assert_eq!(r[1], (0x10, vec![]));
    }

    #[test]
    fn an_unknown_instruction_is_not_guessed() {
        assert!(rows(&[0x2f], 4).is_none());
    }

    #[test]
    fn a_version_3_cie_gives_its_code_alignment() {
        // version 3, no augmentation, code alignment 4, data alignment -4.
        assert_eq!(code_alignment(&[3, 0, 4, 0x7c]), Some(4));
        assert_eq!(code_alignment(&[3, 0, 1, 0x7c]), Some(1));
        assert_eq!(code_alignment(&[1, 0, 4, 0x7c]), None);
    }
}
