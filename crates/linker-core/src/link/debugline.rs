//! Blackwell line tables: the sequences of dead functions leave `.debug_line`
//! and `.nv_debug_line_sass`.
//!
//! ptxas writes one DWARF line-number program per object (`-lineinfo` and
//! `-G`), one *sequence* per function: `DW_LNE_set_address` (relocated
//! against the function's symbol) … `DW_LNE_end_sequence`. nvlink 13.0.88
//! concatenates them on sm_75–90. On sm_100 and later it rewrites them: a
//! sequence whose function is not in the output goes, and the unit's
//! `unit_length` shrinks (measured: an nvcc `-lineinfo` object whose device
//! function was inlined into its kernel: `.debug_line` 0x70 → 0x5a,
//! `.nv_debug_line_sass` 0x71 → 0x57). Two more changes come with it:
//!
//! - the kept sequences of a unit are ordered by their function's output
//!   symbol index (measured: `apply`, first mentioned by another object, moves
//!   before the `rec`, `add`, … ptxas wrote first; a kernel's device function
//!   before the kernel);
//! - the last 4 bytes of a `.debug_line` unit's header (after the file table;
//!   0 from ptxas) become the output offset of the object's `.debug_str`
//!   contribution (0x22 after a 0x22-byte `.debug_str` of the object before;
//!   `.nv_debug_line_sass` keeps them).
//!
//! In `-g` links the sequences of dead code (a losing weak twin's) go too;
//! a weak copy replaced by a later input's keeps its sequence when its
//! relocation stays (`nvinfo::line_kept_for_winner`).
//! The order is nvlink's output symbol index in every link — but nvlink
//! writes its symbol table in another order than culink's (which `culink
//! diff` does not compare): each input's local
//! symbols and the weak definitions it mentions first, in input symbol order,
//! input after input, then the other globals in first-mention order
//! (measured at sm_100/120 on nvcc `-G` builds of the `cu_features`,
//! `cu_templates`, `cu_lambda_new` sources and variations: a global
//! defined before a `static` function moves after it; a weak template
//! instance another input calls first moves among the globals; a weak
//! definition replaced by a later input's with fewer registers keeps the
//! first one's place). [`sort_key`] gives that order.
//!
//! Runs after the symbol table is built (for the order), before the kept
//! relocations are serialized: they move with their bytes.

use super::sections::{Body, Plan};
use super::symbols::{SymRef, SymbolDb};
use super::InputFile;
use crate::cubin::frame::uleb;
use crate::elf::{STB_LOCAL, STT_SECTION};

/// The line-table sections rewritten (same format).
const LINE_SECTIONS: [&str; 2] = [".debug_line", ".nv_debug_line_sass"];

/// `DW_LNE_end_sequence`.
const DW_LNE_END_SEQUENCE: u8 = 0x01;
/// `DW_LNS_fixed_advance_pc`: its operand is a 2-byte `uhalf`, not a LEB128.
const DW_LNS_FIXED_ADVANCE_PC: u8 = 0x09;

/// A sequence's place in the output order: (region, first, second), compared
/// as a tuple (see [`sort_key`]).
type Key = (u8, u32, u32);

/// The key of a sequence naming no function: after all others.
const NO_FUNCTION: Key = (2, 0, 0);

/// The output-order key of function symbol `func` of `f`: its position in
/// nvlink's symbol table.
///
/// nvlink writes its table in another order than culink's, measured at
/// sm_100/120 (nvcc `-G` objects linked with `-g`, and `-lineinfo` objects
/// without `-g`: a weak `inline` function defined in three objects sorts
/// before the first object's `static` function; fixture
/// `cu_lineinfo_weak_order`): each input's local symbols and the weak
/// definitions it mentions first, in input order and input after input, then
/// every other global in first-mention order. So a local or first-mentioned
/// weak function sorts by (input, input symbol index) before every global
/// one, whose keys are culink's (first-mention) output index; a weak function
/// an earlier input mentioned first (undefined there) sorts with the globals.
fn sort_key(
    files: &[InputFile<'_>],
    db: &SymbolDb<'_>,
    f: &InputFile<'_>,
    func: u32,
    order: &dyn Fn(SymRef) -> u32,
) -> Key {
    let here = SymRef {
        file: f.id,
        index: func,
    };
    let global = || (1, order(here), 0);
    let Some(sym) = f.cubin.symbols.get(func as usize) else {
        return global();
    };
    if sym.bind() == STB_LOCAL {
        return (0, f.id.0, func);
    }
    let Some(g) = db.global_of[f.id.0 as usize]
        .get(func as usize)
        .copied()
        .flatten()
    else {
        return global();
    };
    let m = db.global(g).1.first_mention;
    match files
        .get(m.file.0 as usize)
        .and_then(|mf| db.weak_first_definition(mf, m))
    {
        Some(_) => (0, m.file.0, m.index),
        None => global(),
    }
}

/// One unit of a line table: its header and sequences, as byte ranges.
struct Unit {
    start: usize,
    header_end: usize,
    /// `[start, end)` of each sequence; bytes after the last
    /// `DW_LNE_end_sequence` (none in ptxas output) form one more.
    sequences: Vec<(usize, usize)>,
}

/// Splits a line table into units and sequences; `None` when a unit is not
/// a 32-bit DWARF 2–4 one this code can walk (the table is then kept whole).
fn units(data: &[u8]) -> Option<Vec<Unit>> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < data.len() {
        let start = at;
        let len = u32::from_le_bytes(data.get(at..at + 4)?.try_into().ok()?);
        if len >= 0xffff_fff0 {
            return None; // DWARF64 or reserved
        }
        let end = at.checked_add(4)?.checked_add(len as usize)?;
        if end > data.len() {
            return None;
        }
        let version = u16::from_le_bytes(data.get(at + 4..at + 6)?.try_into().ok()?);
        if !(2..=4).contains(&version) {
            return None;
        }
        let header_len = u32::from_le_bytes(data.get(at + 6..at + 10)?.try_into().ok()?);
        let header_end = (at + 10).checked_add(header_len as usize)?;
        if header_end > end {
            return None;
        }
        // minimum_instruction_length, [maximum_operations_per_instruction],
        // default_is_stmt, line_base, line_range, opcode_base.
        let fields = at + 10;
        let opcode_base_at = fields + if version >= 4 { 5 } else { 4 };
        let opcode_base = *data.get(opcode_base_at)?;
        if opcode_base == 0 {
            return None;
        }
        let lengths = data.get(opcode_base_at + 1..opcode_base_at + usize::from(opcode_base))?;
        let mut sequences = Vec::new();
        let mut seq_start = header_end;
        let mut p = header_end;
        while p < end {
            let op = data[p];
            p += 1;
            if op == 0 {
                let n = usize::try_from(uleb(data, &mut p)?).ok()?;
                let sub = *data.get(p)?;
                p = p.checked_add(n)?;
                if n > 0 && sub == DW_LNE_END_SEQUENCE {
                    sequences.push((seq_start, p));
                    seq_start = p;
                }
            } else if op == DW_LNS_FIXED_ADVANCE_PC && op < opcode_base {
                p += 2;
            } else if op < opcode_base {
                for _ in 0..lengths[usize::from(op) - 1] {
                    uleb(data, &mut p)?;
                }
            }
            if p > end {
                return None;
            }
        }
        if seq_start < end {
            sequences.push((seq_start, end));
        }
        out.push(Unit {
            start,
            header_end,
            sequences,
        });
        at = end;
    }
    Some(out)
}

/// Rewrites the Blackwell line tables (see the module documentation);
/// `order` gives a symbol's output index.
pub(crate) fn rebuild(
    files: &[InputFile<'_>],
    db: &SymbolDb<'_>,
    plan: &mut Plan,
    order: &dyn Fn(SymRef) -> u32,
) -> crate::error::Result<()> {
    if !plan.arch.is_blackwell_or_later() {
        return Ok(());
    }
    for name in LINE_SECTIONS {
        if let Some(id) = super::blackwell::debug_section(plan, name) {
            let moved = rebuild_one(files, db, plan, id, name == ".debug_line", order)?;
            if name == ".debug_line" && !moved.is_empty() {
                remap_stmt_lists(files, plan, id, &moved);
            }
        }
    }
    Ok(())
}

/// `.debug_info`'s references into the rewritten `.debug_line` (each
/// compile unit's `DW_AT_stmt_list`: an `R_CUDA_32` against the object's
/// `.debug_line`, already resolved to the old output offset) follow their
/// unit to its new place (`moved`: old start, old end, new start; sorted).
/// Measured at sm_100/120 (nvlink 13.0.88): three `-G` objects linked with
/// `-g`, the second unit shrinking by a dead sequence: the third CU's
/// `stmt_list` is the unit's new offset (fixture `cu_debug_stmt_list`).
fn remap_stmt_lists(
    files: &[InputFile<'_>],
    plan: &mut Plan,
    line_id: super::OutSecId,
    moved: &[(u64, u64, u64)],
) {
    let new_offset = |old: u64| -> Option<u64> {
        let i = moved.partition_point(|m| m.1 <= old);
        moved.get(i).filter(|m| old >= m.0).map(|m| old - m.0 + m.2)
    };
    for f in files {
        let fid = f.id.0 as usize;
        for rs in f.cubin.sections.iter().filter(|s| s.is_reloc()) {
            let Some(target) = f.cubin.sections.get(rs.info as usize) else {
                continue;
            };
            if target.name != ".debug_info" {
                continue;
            }
            for r in f.cubin.relocs(rs) {
                let Some(sec) = f
                    .cubin
                    .symbols
                    .get(r.sym as usize)
                    .and_then(|s| s.section())
                else {
                    continue;
                };
                let into_line = plan.placement[fid]
                    .get(sec as usize)
                    .copied()
                    .flatten()
                    .is_some_and(|pl| pl.out == line_id);
                if !into_line {
                    continue;
                }
                for p in plan.patches[fid].list(rs.info) {
                    if p.offset == r.offset && p.bank.is_none() {
                        if let Some(v) = new_offset(p.value) {
                            p.value = v;
                        }
                    }
                }
            }
        }
    }
    // `-r` also keeps them as relocations against the output `.debug_line`,
    // the offset in the addend (`rmode.rs`): moved the same way.
    if plan.relocatable {
        plan.kept.retain_mut(|k| {
            if matches!(k.sym, super::relocate::SymTarget::Section(id) if id == line_id) {
                if let Some(v) = u64::try_from(k.addend).ok().and_then(new_offset) {
                    k.addend = v as i64;
                }
            }
            true
        });
    }
}

fn rebuild_one(
    files: &[InputFile<'_>],
    db: &SymbolDb<'_>,
    plan: &mut Plan,
    id: super::OutSecId,
    str_base: bool,
    order: &dyn Fn(SymRef) -> u32,
) -> crate::error::Result<Vec<(u64, u64, u64)>> {
    let Body::Pieces(pieces) = plan.sec(id).body.clone() else {
        return Ok(Vec::new());
    };
    let mut bytes: Vec<u8> = Vec::new();
    // (old output offset range start, end, new start) of every kept range.
    let mut moved: Vec<(u64, u64, u64)> = Vec::new();
    let mut changed = false;
    for p in &pieces {
        let f = &files[p.file.0 as usize];
        let fid = p.file.0 as usize;
        let sec = &f.cubin.sections[p.section as usize];
        let data = super::blackwell::patched_piece(files, plan, p)?;
        // Each contribution at its alignment, as `sections::plan` placed it.
        let align = sec.addralign.max(1) as usize;
        bytes.resize(bytes.len().div_ceil(align) * align, 0);
        let keep_all = |bytes: &mut Vec<u8>, moved: &mut Vec<(u64, u64, u64)>| {
            moved.push((p.offset, p.offset + data.len() as u64, bytes.len() as u64));
            bytes.extend_from_slice(&data);
        };
        let Some(units) = units(&data) else {
            keep_all(&mut bytes, &mut moved);
            continue;
        };
        // The function each relocated place names, by input offset: whether
        // its code is in the output, and its output symbol index.
        let mut targets: Vec<(u64, bool, Key)> = Vec::new();
        for rs in f
            .cubin
            .sections
            .iter()
            .filter(|r| r.is_reloc() && r.info == sec.index)
        {
            for r in f.cubin.relocs(rs) {
                let Some(sym) = f.cubin.symbols.get(r.sym as usize) else {
                    continue;
                };
                let Some(code) = sym.section() else { continue };
                // The code the sequence describes: this object's section, or
                // a replaced copy's whose relocation stays, pointing at the
                // winner (`nvinfo::line_kept_for_winner`; fixture
                // `lineinfo_weak_replaced`).
                let live = plan.placement[fid][code as usize].is_some()
                    || (sym.ty() != STT_SECTION
                        && super::nvinfo::line_kept_for_winner(db, f, r.sym, r.is_rela));
                let func = if sym.ty() == STT_SECTION {
                    f.func_sym.get(code as usize).copied().unwrap_or(0)
                } else {
                    r.sym
                };
                let key = if func == 0 {
                    NO_FUNCTION
                } else {
                    sort_key(files, db, f, func, order)
                };
                targets.push((r.offset, live, key));
            }
        }
        targets.sort_unstable();
        let target = |(s, e): (usize, usize)| -> Option<(bool, Key)> {
            let i = targets.partition_point(|t| t.0 < s as u64);
            targets
                .get(i)
                .filter(|t| t.0 < e as u64)
                .map(|t| (t.1, t.2))
        };
        let dead = |r: (usize, usize)| target(r).is_some_and(|t| !t.0);
        // The object's `.debug_str` in the output.
        let str_offset = f
            .cubin
            .sections
            .iter()
            .find(|t| t.name == ".debug_str")
            .and_then(|t| plan.placement[fid][t.index as usize])
            .map(|p| p.offset);
        for u in units {
            let mut kept: Vec<(usize, usize)> =
                u.sequences.iter().copied().filter(|&r| !dead(r)).collect();
            // By output symbol index (stable: sequences without a function
            // keep their place after those with one).
            kept.sort_by_key(|&r| target(r).map_or(NO_FUNCTION, |t| t.1));
            if kept != u.sequences {
                changed = true;
            }
            let new_start = bytes.len();
            moved.push((
                p.offset + u.start as u64,
                p.offset + u.header_end as u64,
                new_start as u64,
            ));
            bytes.extend_from_slice(&data[u.start..u.header_end]);
            if let Some(base) = str_offset.filter(|_| str_base) {
                let at = bytes.len() - 4;
                let v = u32::from_le_bytes(bytes[at..].try_into().expect("4 bytes"));
                let v = v.wrapping_add(base as u32);
                bytes[at..].copy_from_slice(&v.to_le_bytes());
                changed |= base != 0;
            }
            // Kept relocations move with their sequence: `moved` must stay
            // sorted by old offset, so it gets the ranges in old order.
            let mut placed: Vec<(u64, u64, u64)> = Vec::with_capacity(kept.len());
            for (s, e) in kept {
                placed.push((p.offset + s as u64, p.offset + e as u64, bytes.len() as u64));
                bytes.extend_from_slice(&data[s..e]);
            }
            placed.sort_unstable();
            moved.extend(placed);
            let unit_length = (bytes.len() - new_start - 4) as u32;
            bytes[new_start..new_start + 4].copy_from_slice(&unit_length.to_le_bytes());
        }
    }
    if !changed {
        return Ok(Vec::new()); // every sequence kept: the copy as planned is the same
    }
    super::blackwell::replace_contents(plan, id, &moved, bytes);
    Ok(moved)
}
