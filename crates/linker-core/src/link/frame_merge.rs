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
use crate::cubin::frame::{code_alignment, rows, ADVANCE_LOC4, NOP};
use crate::fxhash::HashMap;
use std::collections::BTreeMap;

/// The size in bytes of a 64-bit DWARF entry's header before its body: the
/// `0xffffffff` escape and the `u64` length.
const ENTRY_HEADER: usize = 12;

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
    let entries = crate::cubin::frame::entries(sec.data)?;
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
