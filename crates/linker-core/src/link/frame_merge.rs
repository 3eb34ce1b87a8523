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

fn uleb(data: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    let mut shift = 0;
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

/// Splits `ins` (a CFA program of code alignment `align`) into [`Rows`];
/// `None` on an instruction this reader does not know.
fn rows(ins: &[u8], align: u64) -> Option<Rows<'_>> {
    let mut out: Rows<'_> = vec![(0, Vec::new())];
    let mut loc = 0u64;
    let mut at = 0usize;
    while at < ins.len() {
        let start = at;
        let op = ins[at];
        at += 1;
        let delta = match op {
            NOP => continue,
            0x40..=0x7f => Some(u64::from(op & 0x3f)),
            0x02 => Some(u64::from(*ins.get(at)?)).inspect(|_| at += 1),
            0x03 => {
                let v = u16::from_le_bytes(ins.get(at..at + 2)?.try_into().ok()?);
                at += 2;
                Some(u64::from(v))
            }
            ADVANCE_LOC4 => {
                let v = u32::from_le_bytes(ins.get(at..at + 4)?.try_into().ok()?);
                at += 4;
                Some(u64::from(v))
            }
            _ => None,
        };
        if let Some(d) = delta {
            // (An advance by nothing, as Mercury programs start, opens none.)
            if d != 0 {
                loc = loc.checked_add(d.checked_mul(align)?)?;
                out.push((loc, Vec::new()));
            }
            continue;
        }
        // Operands: ULEB/SLEB counts by opcode (DWARF 4, section 6.4.2).
        let operands = match op {
            0x80..=0xbf => 1,               // offset: ULEB offset
            0xc0..=0xff | 0x0a | 0x0b => 0, // restore, remember/restore_state
            0x05 | 0x09 | 0x0c | 0x11 | 0x12 | 0x14 | 0x15 => 2,
            0x06..=0x08 | 0x0d | 0x0e | 0x13 => 1,
            0x0f => {
                let len = uleb(ins, &mut at)?;
                at = at.checked_add(usize::try_from(len).ok()?)?;
                0
            }
            0x10 | 0x16 => {
                uleb(ins, &mut at)?;
                let len = uleb(ins, &mut at)?;
                at = at.checked_add(usize::try_from(len).ok()?)?;
                0
            }
            _ => return None,
        };
        for _ in 0..operands {
            uleb(ins, &mut at)?;
        }
        out.last_mut()?.1.push(ins.get(start..at)?);
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

/// The FDE of function symbol `sym` in `f`'s section `name`, found by the
/// relocation at its initial location (`.symtab` and `.nv.merc.symtab` are
/// index-aligned), with its CIE: the one in front of it (ptxas writes one
/// per function).
fn fde_of<'a>(f: &'a InputFile<'_>, name: &str, sym: u32) -> Option<Fde<'a>> {
    let sec = f.cubin.section_by_name(name)?;
    let data = sec.data;
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
    let (mut at, mut cie) = (0usize, None);
    while at < data.len() {
        let len = usize::try_from(u64::from_le_bytes(
            data.get(at + 4..at + 12)?.try_into().ok()?,
        ))
        .ok()?;
        let end = at.checked_add(ENTRY_HEADER)?.checked_add(len)?;
        let id = u64::from_le_bytes(data.get(at + 12..at + 20)?.try_into().ok()?);
        if id == u64::MAX {
            cie = Some(data.get(at + 20..end)?);
        } else if at_sym.contains(&(at as u64 + 20)) {
            let range = u64::from_le_bytes(data.get(at + 28..at + 36)?.try_into().ok()?);
            return Some(Fde {
                align: code_alignment(cie?)?,
                range,
                ins: data.get(at + 36..end)?,
            });
        }
        at = end;
    }
    None
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
