//! Blackwell: the frame nvlink writes for a weak copy that a later input's
//! definition replaced (docs/blackwell.md §5).
//!
//! When such a copy's frame survives (it held the name when its input was
//! read), nvlink 13.0.88 at sm_100+ rewrites its FDE to describe the winner:
//! the winner's SASS range, and the winner's rows merged by location with the
//! replaced copy's rows. The copy's locations are its Mercury ones (the
//! `.nv.merc.debug_frame` FDE) carried over to SASS through the winner's
//! Mercury-to-SASS pairs (its two FDEs' row boundaries, in order, plus the
//! start and the end of the ranges), but for its end, which is where its own
//! SASS program ends. Only that much of the map is known:
//! where a location of the copy falls between two pairs, nvlink's choice is
//! not followed and [`merged_fde`] gives `None` (the frame stays as written).
//! Identical instructions at one location appear once; a location where one
//! stream only advances still splits the other's advance.

use super::debugline::uleb;
use super::InputFile;
use crate::fxhash::HashMap;
use std::collections::BTreeMap;

/// `DW_CFA_advance_loc4`, the advance nvlink writes.
const ADVANCE_LOC4: u8 = 0x04;
/// `DW_CFA_nop`.
const NOP: u8 = 0x00;

/// The size in bytes of a 64-bit DWARF entry's header before its body: the
/// `0xffffffff` escape and the `u64` length.
const ENTRY_HEADER: usize = 12;

/// A CFA program split at its advances: the instructions at each location
/// (bytes from the function's start), in order; every advance (but one by
/// nothing) opens a location, instructions or not.
type Rows<'a> = Vec<(u64, Vec<&'a [u8]>)>;

/// The code alignment factor of a version-3 CIE whose body (after the CIE id)
/// is `body`; `None` for another layout.
fn code_alignment(body: &[u8]) -> Option<u64> {
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
pub(super) enum Cfa {
    /// `DW_CFA_advance_loc*`: the operand's width in bytes after the opcode
    /// (0: in the opcode) and the delta in code units.
    Advance { width: usize, units: u64 },
    /// Any other instruction, ending at `end`.
    Other { end: usize },
}

/// The call frame instruction at `at` of `ins`; `None` for an opcode this
/// reader does not know or one cut short.
pub(super) fn instruction(ins: &[u8], at: usize) -> Option<Cfa> {
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
fn rows(ins: &[u8], align: u64) -> Option<Rows<'_>> {
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

/// One FDE of a `.debug_frame`-format section: its CIE's code alignment, its
/// range and its instructions.
struct Fde<'a> {
    align: u64,
    range: u64,
    ins: &'a [u8],
}

/// The entries (header included) of the FDE of function symbol `sym` in
/// `f`'s section `name` (`.debug_frame` or `.nv.merc.debug_frame`) and of
/// its CIE: the FDE found by the relocation at its initial location
/// (`.symtab` and `.nv.merc.symtab` are index-aligned), the CIE the one in
/// front of it (ptxas writes one per function).
pub(super) fn fde_entries<'a>(
    f: &'a InputFile<'_>,
    name: &str,
    sym: u32,
) -> Option<(&'a [u8], &'a [u8])> {
    let sec = f.cubin.section_by_name(name)?;
    // (`.nv.merc.rela.*`: RELA entries of the Mercury type family.)
    let merc_rela = f
        .cubin
        .sections
        .iter()
        .filter(|r| r.info == sec.index && r.name.starts_with(".nv.merc.rela"))
        .flat_map(|r| r.data.chunks_exact(24))
        .filter_map(|e| {
            let offset = u64::from_le_bytes(e[0..8].try_into().ok()?);
            let info = u64::from_le_bytes(e[8..16].try_into().ok()?);
            Some((offset, (info >> 32) as u32))
        });
    // (Other relocations name the function too: `R_CUDA_UNUSED_CLEAR64` at
    // the range.)
    let at_sym: Vec<u64> = f
        .cubin
        .sections
        .iter()
        .filter(|r| r.is_reloc() && r.info == sec.index)
        .flat_map(|r| f.cubin.relocs(r))
        .map(|r| (r.offset, r.sym))
        .chain(merc_rela)
        .filter(|&(_, s)| s == sym)
        .map(|(o, _)| o)
        .collect();
    let entries = super::blackwell::frame_entries(sec.data)?;
    let fde = entries
        .iter()
        .find(|e| !e.is_cie && at_sym.contains(&(e.start as u64 + 20)))?;
    let cie = entries
        .iter()
        .rev()
        .find(|e| e.is_cie && e.start < fde.start)?;
    Some((&sec.data[cie.start..cie.end], &sec.data[fde.start..fde.end]))
}

/// [`fde_entries`] read: the CIE's code alignment, the FDE's range and
/// instructions.
fn fde_of<'a>(f: &'a InputFile<'_>, name: &str, sym: u32) -> Option<Fde<'a>> {
    let (cie, fde) = fde_entries(f, name, sym)?;
    Some(Fde {
        align: code_alignment(cie.get(20..)?)?,
        range: u64::from_le_bytes(fde.get(28..36)?.try_into().ok()?),
        ins: fde.get(36..)?,
    })
}

/// The FDE nvlink writes for `replaced` (function symbol `sym` of that
/// input, whose SASS FDE is `own` — the entry's bytes, header included), a
/// copy that `winner`'s definition (symbol `wsym`) replaced: the entry
/// rewritten with the winner's range and the merged rows, the CIE pointer
/// and initial location as they are. `None` where the rows cannot be
/// merged as nvlink merges them (see the module documentation).
pub(crate) fn merged_fde(
    replaced: &InputFile<'_>,
    sym: u32,
    own: &[u8],
    winner: &InputFile<'_>,
    wsym: u32,
) -> Option<Vec<u8>> {
    let w_sass = fde_of(winner, ".debug_frame", wsym)?;
    let w_merc = fde_of(winner, ".nv.merc.debug_frame", wsym)?;
    let r_merc = fde_of(replaced, ".nv.merc.debug_frame", sym)?;
    let r_sass = fde_of(replaced, ".debug_frame", sym)?;
    let (ws, wm) = (
        rows(w_sass.ins, w_sass.align)?,
        rows(w_merc.ins, w_merc.align)?,
    );
    if ws.len() != wm.len() {
        return None;
    }
    let mut map: HashMap<u64, u64> = HashMap::default();
    map.insert(0, 0);
    map.insert(w_merc.range, w_sass.range);
    for (m, s) in wm.iter().zip(&ws) {
        if *map.entry(m.0).or_insert(s.0) != s.0 {
            return None;
        }
    }
    let mut merged: BTreeMap<u64, Vec<&[u8]>> = BTreeMap::new();
    let copy = rows(r_merc.ins, r_merc.align)?;
    let last = copy.len() - 1;
    for (k, (loc, ins)) in copy.into_iter().enumerate() {
        // The copy's end (a last advance with no row after it) is where its
        // own SASS program ends, which may split one of the winner's
        // advances (difftest 1200515: at 0x70 inside the winner's
        // 0x40..0x220; 1190010, 1200405: on one of its boundaries).
        if k == last && ins.is_empty() && k > 0 {
            let own = rows(r_sass.ins, r_sass.align)?;
            if let Some((end, at_end)) = own.last().filter(|_| own.len() > 1) {
                if at_end.is_empty() {
                    merged.entry(*end).or_default();
                }
            }
            continue;
        }
        let at = *map.get(&loc)?;
        merged.entry(at).or_default().extend(ins);
    }
    for (loc, ins) in ws {
        let here = merged.entry(loc).or_default();
        for i in ins {
            if !here.contains(&i) {
                here.push(i);
            }
        }
    }
    // The merged program in the SASS CIE's units.
    let align = r_sass.align;
    let mut ins: Vec<u8> = Vec::new();
    let mut cur = 0u64;
    for (loc, list) in merged {
        if loc > cur {
            let units = u32::try_from((loc - cur) / align).ok()?;
            if !(loc - cur).is_multiple_of(align) {
                return None;
            }
            ins.push(ADVANCE_LOC4);
            ins.extend_from_slice(&units.to_le_bytes());
            cur = loc;
        }
        for i in list {
            ins.extend_from_slice(i);
        }
    }
    // The entry: header, CIE pointer and initial location as they are, the
    // winner's range, the program, `DW_CFA_nop` up to 8-byte alignment.
    let mut out = own.get(..28)?.to_vec();
    out.extend_from_slice(&w_sass.range.to_le_bytes());
    out.extend_from_slice(&ins);
    while !out.len().is_multiple_of(8) {
        out.push(NOP);
    }
    let len = (out.len() - ENTRY_HEADER) as u64;
    out[4..12].copy_from_slice(&len.to_le_bytes());
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
