//! The Blackwell Mercury section family: what nvlink 13.0.88 does with the
//! `.nv.capmerc.*` / `.nv.merc.*` sections ptxas writes for sm_100 and later
//! (measured; `docs/blackwell.md` has the facts and experiments).
//!
//! Every sm_100+ object carries, next to its SASS, a *capsule Mercury* copy of
//! each function (`.nv.capmerc.text.<fn>`) that the driver's finalizer can
//! rebuild SASS from, with its own symbol table (`.nv.merc.symtab`, entry `i`
//! mirroring `.symtab` entry `i`), relocations (`.nv.merc.rela.*`, types
//! `0x10000 + n`, see [`crate::reloc::mercury`]), EIATTR sections and debug
//! frames. nvlink links that family alongside the SASS one:
//!
//! - `.nv.capmerc.text.<fn>` is kept exactly when `.text.<fn>` is; its first
//!   word is rewritten to the output section index of `.text.<fn>`, `sh_info`
//!   is the function's `.nv.merc.symtab` index;
//! - `.nv.merc.debug_frame` is concatenated like `.debug_frame` (dead
//!   functions' entries stay, their range cleared); `.nv.merc.nv.global.init`
//!   and `.nv.merc.nv.constant.user` are aliases: headers over the very bytes of
//!   `.nv.global.init` / `.nv.constant3` (same offset), in inputs and output;
//! - `.nv.merc.symtab` mirrors the output `.symtab` in order, minus symbols
//!   with no Mercury twin (the parameter banks' section symbols), with the
//!   inputs' Mercury values: CUDA variable type 13 and `st_other` kept, sizes
//!   of the Mercury code; names live in `.strtab`;
//! - `.nv.merc.rela.*`: like the SASS relocations: debug-frame CIE pointers
//!   resolved, `UNUSED_CLEAR64` dropped, shared-memory / constant-bank /
//!   unified-table references resolved and dropped, everything else kept for
//!   the driver with the unified forms rewritten; texture and surface handles
//!   become slots of a per-kernel `.nv.merc.nv.constant.entry_image_header_indices.<k>`
//!   table (one 4-byte slot per handle, in order of first use) carrying
//!   `R_MERCURY_TEX/SAMP/SURF_HEADER_INDEX` relocations;
//! - `.nv.merc.nv.info` is the output `.nv.info` with Mercury symbol indices
//!   (inputs' module records are identical in both families);
//!   `.nv.merc.nv.info.<fn>` is the input's, renumbered, with the call-tree
//!   records (`EXTERNS`, `NUM_BARRIERS`, `NUM_MBARRIERS`, the flags of
//!   `nvinfo::TREE_FLAGS`, recursion's `CRS_STACK_SIZE`) taken from the
//!   output `.nv.info.<fn>`.
//!
//! - the values resolved into capsule instructions (module-constant offsets
//!   of `ABS16`/`ABS32` relocations against `.nv.constant3` symbols, and the
//!   header-table slot offsets of texture/surface handles) are written into
//!   the raw Mercury instruction the capsule carries for that SASS instruction
//!   (see [`super::capsule`]); the SASS instruction is found through the SASS
//!   relocation of the same operand (`docs/blackwell.md` §4).
//!
//! - `-r` (`docs/blackwell.md` §7): the same family with nothing dead, no
//!   header-index tables (texture slots are the final link's), and Mercury
//!   relocations treated like the SASS ones in `rmode.rs`: all kept with
//!   their own types (no unified rewrite), except `UNUSED_CLEAR64` (dropped);
//!   CIE pointers and module-constant capsule operands are written as nvlink
//!   -r writes them **and** kept, so the final link rewrites them wherever the
//!   object lands; `.nv.merc.symtab` stays index-aligned with `.symtab`.

use super::capsule::CapsuleLayout;
use super::live::Live;
use super::relocate::{is_driver_provided, stays_undefined, UNIFIED_TABLE_SYMBOLS};
use super::sections::{Body, InfoTo, LinkTo, OutSection, Patch, Placement, Plan, Role};
use super::symbols::{SymRef, SymbolDb};
use super::symtab::SymTable;
use super::{FileId, InputFile, OutSecId};
use crate::cubin::eiattr::{self, EiAttr, OwnedRecord};
use crate::elf::*;
use crate::error::{Error, Result};
use crate::fxhash::{HashMap, HashSet};
use crate::reloc::mercury as rm;
use crate::reloc::table::RelocType;
use std::collections::BTreeMap;

/// Section type of `.nv.merc.nv.constant.entry_image_header_indices.<k>`.
pub const SHT_CUDA_MERC_HEADER_INDICES: u32 = 0x7000_0079;

/// Ordering groups of the family inside the output (after every SASS section),
/// as nvlink lays them out.
use super::symtab::encode_shndx;

mod group {
    pub const TEXT: u8 = 0;
    /// `.nv.merc.symtab_shndx`: after the capsules (measured).
    pub const SYMTAB_SHNDX: u8 = 1;
    pub const DATA: u8 = 2;
    pub const INFO: u8 = 3;
    pub const INFO_FN: u8 = 4;
    pub const RELA: u8 = 5;
    pub const HEADER_INDICES: u8 = 6;
    pub const ALIAS: u8 = 7;
    pub const SYMTAB: u8 = 8;
}

/// The first section index nvlink writes through `SHN_XINDEX` in
/// `.nv.merc.symtab`: one above `.symtab`'s (measured: index 0xff00 raw,
/// 0xff01 and up extended, 0xfff2 raw as in `.symtab`).
const FIRST_MERC_XINDEX: u32 = super::symtab::FIRST_XINDEX + 1;

/// `.nv.merc.symtab_shndx` (created with `.symtab_shndx`, before the section
/// order is fixed): the extended section indices of `.nv.merc.symtab`
/// (`SHT_SYMTAB_SHNDX`, flags `SHF_CUDA_MERCURY`, as nvlink writes it).
pub(crate) fn symtab_shndx_section(merc_symtab: OutSecId) -> OutSection {
    let mut o = OutSection::new(
        ".nv.merc.symtab_shndx",
        SHT_SYMTAB_SHNDX,
        Role::Mercury(group::SYMTAB_SHNDX),
    );
    o.flags = SHF_CUDA_MERCURY;
    o.align = 4;
    o.entsize = 4;
    o.link = LinkTo::Section(merc_symtab);
    o
}

/// One `.nv.merc.symtab` entry of an input.
#[derive(Debug, Clone, Copy)]
struct MSym<'d> {
    name: &'d str,
    info: u8,
    other: u8,
    shndx: u16,
    value: u64,
    size: u64,
}

/// The symbol a kept Mercury relocation refers to.
#[derive(Debug, Clone, Copy)]
enum MTarget {
    /// An input symbol (resolved definition or undefined name), by its `.symtab` index.
    Input(SymRef),
    /// The section symbol of an output Mercury section.
    Section(OutSecId),
    /// Symbol 0.
    Null,
}

/// A Mercury relocation of a capsule that the linker resolves: its value
/// goes into the capsule's copy of the instruction.
#[derive(Debug, Clone, Copy)]
struct Operand {
    /// `r_offset` (in the Mercury instruction stream, 16-byte units).
    offset: u64,
    rtype: u32,
    /// Symbol index (`.nv.merc.symtab`, index-aligned with `.symtab`).
    sym: u32,
    addend: i64,
    value: u64,
}

#[derive(Debug, Clone, Copy)]
struct Kept {
    target: OutSecId,
    offset: u64,
    rtype: u32,
    sym: MTarget,
    addend: i64,
}

/// State of the Mercury family across the link phases.
#[derive(Default)]
pub(crate) struct Mercury<'d> {
    /// Per input: its `.nv.merc.symtab` entries (empty without Mercury).
    syms: Vec<Vec<MSym<'d>>>,
    symtab: Option<OutSecId>,
    /// (file, input capmerc section, output capmerc, output `.text` of the function).
    texts: Vec<(FileId, u32, OutSecId, OutSecId)>,
    kept: Vec<Kept>,
    /// Output relocation section per target, in creation order.
    rela: Vec<(OutSecId, OutSecId)>,
    /// `--preserve-relocs`: the resolved capsule relocations (shared-memory
    /// references), and their output section per target.
    resolved: Vec<Kept>,
    resolved_rela: Vec<(OutSecId, OutSecId)>,
    /// Per output capmerc section: its header-index table and the handles in slot order.
    header_tables: HashMap<OutSecId, (OutSecId, Vec<String>)>,
    info_module: Option<OutSecId>,
    /// (output section, file, input section, live function index).
    info_fn: Vec<(OutSecId, FileId, u32, u32)>,
    /// Main output symbol index → Mercury output symbol index (0: none).
    main_to_merc: Vec<u32>,
    /// Output Mercury section → its section symbol in `.nv.merc.symtab`.
    section_syms: HashMap<OutSecId, u32>,
    /// Section symbols of sections the linker rebuilds (notes, call graph), by
    /// name → main output symbol index.
    meta_syms: HashMap<String, u32>,
    /// `.nv.merc.nv.constant.optimizer.*` input sections placed in more than
    /// one output section (a function's jump tables in the bank of every
    /// kernel reaching it): the placements beyond `plan.placement`'s.
    extra_placements: HashMap<(FileId, u32), Vec<Placement>>,
    /// Output bank-2 section (`.nv.constant2.<k>`) → its Mercury twin.
    const_opt_twin: HashMap<OutSecId, OutSecId>,
    /// `-r`: a winner's SASS section ([`Plan::replaced_by`]) → the slot of
    /// the first replaced copy's Mercury twin, where the winner's goes.
    slots: HashMap<OutSecId, u32>,
    /// `-r`: twins of banks laid over another function's (file, twin, the
    /// bank's output section), placed once every twin is.
    overlays: Vec<(FileId, u32, OutSecId)>,
    /// `-r`: output bank 2 → its Mercury twin.
    twin_r: HashMap<OutSecId, OutSecId>,
}

/// The SASS-side section an input's Mercury section shares its bytes with
/// (same offset and size), when that section is in the output.
fn twin_of<'a, 'd>(
    f: &'a InputFile<'d>,
    s: &crate::cubin::Section<'d>,
    plan: &Plan,
) -> Option<&'a crate::cubin::Section<'d>> {
    f.cubin.sections.iter().find(|t| {
        !is_merc(t)
            && t.size == s.size
            && t.offset == s.offset
            && !t.data.is_empty()
            && plan.placement[f.id.0 as usize][t.index as usize].is_some()
    })
}

fn is_merc(s: &crate::cubin::Section<'_>) -> bool {
    s.flags & SHF_CUDA_MERCURY != 0
        || s.name.starts_with(".nv.merc.")
        || s.name.starts_with(".nv.capmerc.")
}

/// Reads an input's `.nv.merc.symtab` (entry `i` must be `.symtab` entry `i`'s twin).
fn read_symtab<'d>(f: &InputFile<'d>) -> Result<Vec<MSym<'d>>> {
    let c = &f.cubin;
    let Some(st) = c
        .sections
        .iter()
        .find(|s| s.sh_type == SHT_CUDA_MERC_SYMTAB)
    else {
        return Ok(Vec::new());
    };
    let bad = |m: String| Error::malformed(m).in_file(f.name).in_section(st.name);
    let strtab = c
        .sections
        .get(st.link as usize)
        .filter(|s| s.sh_type == SHT_STRTAB)
        .ok_or_else(|| bad("sh_link is not a string table".into()))?;
    let mut out = Vec::with_capacity(st.data.len() / 24);
    for (i, e) in st.data.chunks_exact(24).enumerate() {
        let name_off = u32::from_le_bytes([e[0], e[1], e[2], e[3]]) as usize;
        let name = strtab
            .data
            .get(name_off..)
            .and_then(|r| r.iter().position(|&b| b == 0).map(|n| &r[..n]))
            .and_then(|b| std::str::from_utf8(b).ok())
            .ok_or_else(|| bad(format!("symbol {i}: bad name offset {name_off:#x}")))?;
        let sym = MSym {
            name,
            info: e[4],
            other: e[5],
            shndx: u16::from_le_bytes([e[6], e[7]]),
            value: u64::from_le_bytes(e[8..16].try_into().expect("8 bytes")),
            size: u64::from_le_bytes(e[16..24].try_into().expect("8 bytes")),
        };
        if usize::from(sym.shndx) >= c.sections.len() && sym.shndx < SHN_LORESERVE {
            return Err(bad(format!(
                "symbol {i} ({name}): bad section index {}",
                sym.shndx
            )));
        }
        let twin = c.symbols.get(i);
        let same = twin.is_some_and(|t| {
            t.name == name || (t.ty() == STT_SECTION && sym.info & 0xf == STT_SECTION)
        });
        if !same {
            return Err(bad(format!(
                "symbol {i} ({name}) has no twin at the same index of .symtab; \
                 culink expects ptxas' parallel Mercury symbol table"
            )));
        }
        out.push(sym);
    }
    Ok(out)
}

/// The `.strtab` offset of `name`, appended when it is not there yet (0 for
/// the empty name).
fn intern<'n>(
    strtab: &mut Vec<u8>,
    offsets: &mut HashMap<std::borrow::Cow<'n, str>, u32>,
    name: std::borrow::Cow<'n, str>,
) -> u32 {
    if name.is_empty() {
        return 0;
    }
    *offsets.entry(name).or_insert_with_key(|n| {
        let o = strtab.len() as u32;
        strtab.extend_from_slice(n.as_bytes());
        strtab.push(0);
        o
    })
}

fn align_up(v: u64, a: u64) -> u64 {
    if a <= 1 {
        v
    } else {
        v.div_ceil(a) * a
    }
}

impl<'d> Mercury<'d> {
    /// Phase 4 (after `sections::plan`): output sections for the capsules, the
    /// merged Mercury data and the aliases; placements of their inputs.
    pub(crate) fn plan(files: &[InputFile<'d>], plan: &mut Plan) -> Result<Self> {
        let mut m = Mercury::default();
        if !plan.arch.is_blackwell_or_later() {
            m.syms = files.iter().map(|_| Vec::new()).collect();
            return Ok(m);
        }
        for f in files {
            m.syms.push(read_symtab(f)?);
        }
        // An empty link (no input has code for the target) still gets a
        // Mercury table mirroring `.symtab`, as nvlink's empty Blackwell
        // cubin has (measured at sm_100 with an sm_120-only object).
        if !files.is_empty() && m.syms.iter().all(Vec::is_empty) {
            return Ok(m);
        }
        let mut st = OutSection::new(
            ".nv.merc.symtab",
            SHT_CUDA_MERC_SYMTAB,
            Role::Mercury(group::SYMTAB),
        );
        st.flags = SHF_CUDA_MERCURY;
        st.align = 8;
        st.entsize = 24;
        let symtab = plan.add(st);
        m.symtab = Some(symtab);
        let mut merged: HashMap<String, OutSecId> = HashMap::default();
        // An input's Mercury section may share its bytes with its SASS twin
        // (same offset and size): the output shares them too only when every
        // contribution of that name does; otherwise each is copied in order
        // (nvlink: `-G` objects at sm_100, one aliased `.nv.merc.nv_debug_info_reg_type`
        // and one not: 0xf + 0x1f bytes of their own, not the SASS section's).
        let mut unshared: HashSet<&str> = HashSet::default();
        for f in files {
            for s in f.cubin.sections.iter().filter(|s| is_merc(s)) {
                if twin_of(f, s, plan).is_none() {
                    unshared.insert(s.name);
                }
            }
        }
        let mut const_opt: Vec<(FileId, u32)> = Vec::new();
        for f in files {
            let fid = f.id.0 as usize;
            if m.syms[fid].is_empty() {
                continue;
            }
            for s in f.cubin.sections.iter().filter(|s| is_merc(s)) {
                match s.sh_type {
                    SHT_CUDA_MERC_SYMTAB | SHT_CUDA_MERC_RELA | SHT_CUDA_MERC_INFO => continue,
                    // Placed after the capsules (their sh_info names one).
                    SHT_CUDA_MERC_CONST_OPT if !plan.relocatable => {
                        const_opt.push((f.id, s.index));
                    }
                    SHT_CUDA_CAPMERC_TEXT => {
                        // The function: .symtab twin of the capsule's sh_info symbol.
                        let Some(text) = f
                            .cubin
                            .symbols
                            .get(s.info as usize)
                            .and_then(|sym| sym.section())
                        else {
                            return Err(Error::malformed(format!(
                                "sh_info {} of a capsule names no function",
                                s.info
                            ))
                            .in_file(f.name)
                            .in_section(s.name));
                        };
                        let Some(tp) = plan.placement[fid][text as usize] else {
                            // A dead function; a replaced copy's place goes
                            // to the winner's capsule (`-r`).
                            if let Some(&w) = plan.replaced_by.get(&(f.id, text)) {
                                let at = plan.sections.len() as u32;
                                m.slots.entry(w).or_insert(at);
                            }
                            continue;
                        };
                        let mut o = OutSection::new(s.name, s.sh_type, Role::Mercury(group::TEXT));
                        o.slot = m.slots.get(&tp.out).copied();
                        o.flags = s.flags;
                        o.align = s.addralign.max(1);
                        o.entsize = s.entsize;
                        o.link = LinkTo::Section(symtab);
                        o.size = s.size;
                        o.body = Body::whole(f.id, s);
                        let id = plan.add(o);
                        plan.placement[fid][s.index as usize] =
                            Some(Placement { out: id, offset: 0 });
                        m.texts.push((f.id, s.index, id, tp.out));
                    }
                    _ => {
                        // An alias of a SASS-side section (same bytes)?
                        let twin = twin_of(f, s, plan).filter(|_| !unshared.contains(s.name));
                        if let Some(t) = twin {
                            let tp = plan.placement[fid][t.index as usize].expect("checked");
                            let id = match merged.get(s.name) {
                                Some(&id) => id,
                                None => {
                                    let mut o = OutSection::new(
                                        s.name,
                                        s.sh_type,
                                        Role::Mercury(group::ALIAS),
                                    );
                                    o.flags = s.flags;
                                    o.entsize = s.entsize;
                                    o.align = plan.sec(tp.out).align;
                                    o.size = plan.sec(tp.out).size;
                                    o.body = Body::Alias(tp.out);
                                    let id = plan.add(o);
                                    merged.insert(s.name.to_string(), id);
                                    id
                                }
                            };
                            plan.placement[fid][s.index as usize] = Some(Placement {
                                out: id,
                                offset: tp.offset,
                            });
                            continue;
                        }
                        // Reserved shared memory mirrors its SASS twin's
                        // layout, less the reserved offset the SASS side
                        // starts from (nvlink: 0x80 here for 0xc0 there).
                        // An empty one goes with its SASS twin
                        // (`sections`: `nvcc -ewp` objects).
                        if s.sh_type == SHT_CUDA_SHARED_RESERVED && s.size == 0 && !plan.relocatable
                        {
                            continue;
                        }
                        if s.sh_type == SHT_CUDA_SHARED_RESERVED {
                            let twin = s.name.strip_prefix(".nv.merc").and_then(|n| {
                                f.cubin.sections.iter().find(|t| !is_merc(t) && t.name == n)
                            });
                            if let Some(tp) =
                                twin.and_then(|t| plan.placement[fid][t.index as usize])
                            {
                                let base = plan
                                    .reserved_base
                                    .iter()
                                    .find(|(id, _)| *id == tp.out)
                                    .map_or(0, |b| b.1);
                                let size = plan.sec(tp.out).size.saturating_sub(base);
                                let align = plan.sec(tp.out).align;
                                let id = match merged.get(s.name) {
                                    Some(&id) => id,
                                    None => {
                                        let mut o = OutSection::new(
                                            s.name,
                                            s.sh_type,
                                            Role::Mercury(group::DATA),
                                        );
                                        o.flags = s.flags;
                                        o.entsize = s.entsize;
                                        o.body = Body::NoBits;
                                        let id = plan.add(o);
                                        merged.insert(s.name.to_string(), id);
                                        id
                                    }
                                };
                                let o = plan.sec_mut(id);
                                o.size = size;
                                o.align = align;
                                plan.placement[fid][s.index as usize] = Some(Placement {
                                    out: id,
                                    offset: tp.offset.saturating_sub(base),
                                });
                                continue;
                            }
                        }
                        if plan.relocatable && s.sh_type == SHT_CUDA_MERC_CONST_OPT {
                            m.place_const_opt_r(f, s, plan);
                            continue;
                        }
                        let id = match merged.get(s.name) {
                            Some(&id) => id,
                            None => {
                                let mut o =
                                    OutSection::new(s.name, s.sh_type, Role::Mercury(group::DATA));
                                o.flags = s.flags;
                                o.entsize = s.entsize;
                                o.body = if s.is_nobits() {
                                    Body::NoBits
                                } else {
                                    Body::Pieces(super::sections::Pieces::default())
                                };
                                let id = plan.add(o);
                                merged.insert(s.name.to_string(), id);
                                id
                            }
                        };
                        let o = plan.sec_mut(id);
                        let a = s.addralign.max(1);
                        o.align = o.align.max(a);
                        let offset = align_up(o.size, a);
                        o.size = offset + s.size;
                        if let Body::Pieces(p) = &mut o.body {
                            p.push(super::sections::Piece {
                                file: f.id,
                                section: s.index,
                                offset,
                            });
                        }
                        plan.placement[fid][s.index as usize] = Some(Placement { out: id, offset });
                    }
                }
            }
        }
        m.place_overlays_r(plan);
        m.place_const_opt(files, plan, &const_opt);
        Ok(m)
    }

    /// The Mercury twins of the constant banks 2 (`.nv.constant2.<fn>`, whose
    /// jump tables the Mercury code reads from
    /// `.nv.merc.nv.constant.optimizer.<fn>`), laid out as the SASS banks are
    /// (measured, fixture `jump_tables`): nvlink gives each kernel one
    /// section, `.nv.merc.nv.constant.optimizer.<k>`, the size of its
    /// `.nv.constant2.<k>`, holding each function's table at the offset its
    /// bank 2 has there (so a function reached by two kernels is in both,
    /// with its relocations), `sh_info` the kernel's capsule; the functions
    /// keep none of their own. A function whose bank has no output place
    /// (dead) loses its twin.
    fn place_const_opt(
        &mut self,
        files: &[InputFile<'d>],
        plan: &mut Plan,
        list: &[(FileId, u32)],
    ) {
        if list.is_empty() {
            return;
        }
        // Where each input bank 2 landed: (output bank, offset), in section order.
        let mut banks: HashMap<(FileId, u32), Vec<(OutSecId, u64)>> = HashMap::default();
        for (i, o) in plan.sections.iter().enumerate() {
            if !o.name.starts_with(".nv.constant2.") {
                continue;
            }
            if let Body::Pieces(p) = &o.body {
                for piece in p {
                    banks
                        .entry((piece.file, piece.section))
                        .or_default()
                        .push((OutSecId(i as u32), piece.offset));
                }
            }
        }
        // Output `.text` → output capsule.
        let capsule_of: HashMap<OutSecId, OutSecId> =
            self.texts.iter().map(|t| (t.3, t.2)).collect();
        for &(file, index) in list {
            let f = &files[file.0 as usize];
            let s = &f.cubin.sections[index as usize];
            let bank = twin_bank(f, s);
            let Some(places) = bank.and_then(|b| banks.get(&(file, b.index))) else {
                continue; // dead, or no bank to mirror
            };
            let primary = bank.and_then(|b| plan.placement[file.0 as usize][b.index as usize]);
            // A bank clipped to a winner's shorter table (`place_bank2`):
            // its twin too, zeros, its relocations past the end dropped.
            if let Some(len) = bank
                .and_then(|b| plan.overlaid.get(&(file, b.index)))
                .map(Vec::len)
                .filter(|&len| (len as u64) < s.size)
            {
                plan.overlaid.insert((file, index), vec![0; len]);
            }
            let mut primary_done = false;
            for &(sass, offset) in places {
                let id = self.const_opt_twin_of(plan, sass, s, &capsule_of);
                if let Body::Pieces(p) = &mut plan.sec_mut(id).body {
                    p.push(super::sections::Piece {
                        file,
                        section: index,
                        offset,
                    });
                }
                let place = Placement { out: id, offset };
                if !primary_done && primary.is_some_and(|p| p.out == sass) {
                    primary_done = true;
                    plan.placement[file.0 as usize][index as usize] = Some(place);
                } else {
                    self.extra_placements
                        .entry((file, index))
                        .or_default()
                        .push(place);
                }
            }
        }
        // A bank holding no table, only zeros up to a replaced copy's empty
        // block (`sections::place_bank2`), gets a twin of zeros too
        // (measured: difftest 130103).
        let like = &files[list[0].0 .0 as usize].cubin.sections[list[0].1 as usize];
        let bare: Vec<OutSecId> = plan
            .sections
            .iter()
            .enumerate()
            .filter(|(_, o)| {
                o.name.starts_with(".nv.constant2.")
                    && matches!(&o.body, Body::Pieces(p) if p.is_empty())
            })
            .map(|(i, _)| OutSecId(i as u32))
            .filter(|id| !self.const_opt_twin.contains_key(id))
            .collect();
        for sass in bare {
            self.const_opt_twin_of(plan, sass, like, &capsule_of);
        }
    }

    /// `-r`: the Mercury twin of a function's bank 2 (input section `s` of
    /// `f`), one output section per input one, as the SASS bank (a table of
    /// the function; the same name may stand for static functions of several
    /// inputs): placed when that bank is, `sh_info` the capsule of the text
    /// the bank names — the winner's for the table of a weak copy that lost
    /// when read (`sections::relocatable_loser_table_owner`).
    fn place_const_opt_r(
        &mut self,
        f: &InputFile<'d>,
        s: &crate::cubin::Section<'_>,
        plan: &mut Plan,
    ) {
        let fid = f.id.0 as usize;
        let bank = twin_bank(f, s);
        let Some(bp) = bank.and_then(|b| plan.placement[fid][b.index as usize]) else {
            // The bank was dropped (a weak copy's that lost): so is its twin;
            // a replaced copy's place goes to the winner's twin.
            if let Some(&w) = bank.and_then(|b| plan.replaced_by.get(&(f.id, b.index))) {
                let at = plan.sections.len() as u32;
                self.slots.entry(w).or_insert(at);
            }
            return;
        };
        // A replaced copy's bank lies over the winner's (`sections`, `-r` at
        // Blackwell): so does its twin over the winner's twin, made later.
        let own = match &plan.sec(bp.out).body {
            Body::Pieces(p) => p.iter().next().map(|p| (p.file, p.section)),
            _ => None,
        };
        if bank.is_some_and(|b| own != Some((f.id, b.index))) {
            self.overlays.push((f.id, s.index, bp.out));
            return;
        }
        let capsule = match plan.sec(bp.out).info {
            InfoTo::Section(t) => self.texts.iter().find(|c| c.3 == t).map(|c| c.2),
            _ => None,
        };
        let mut o = OutSection::new(s.name, s.sh_type, Role::Mercury(group::DATA));
        o.slot = self.slots.get(&bp.out).copied();
        o.flags = s.flags;
        o.entsize = s.entsize;
        o.align = s.addralign.max(1);
        o.size = s.size;
        o.info = capsule.map_or(InfoTo::Raw(0), InfoTo::Section);
        o.body = Body::whole(f.id, s);
        let id = plan.add(o);
        plan.placement[fid][s.index as usize] = Some(Placement { out: id, offset: 0 });
        self.twin_r.insert(bp.out, id);
    }

    /// `-r`: the twins of replaced copies' banks ([`Mercury::overlays`]),
    /// over the winners' twins from offset 0 (their relocations kept).
    fn place_overlays_r(&mut self, plan: &mut Plan) {
        for (file, sec, bank) in std::mem::take(&mut self.overlays) {
            let Some(&twin) = self.twin_r.get(&bank) else {
                continue;
            };
            if let Body::Pieces(p) = &mut plan.sec_mut(twin).body {
                p.push(super::sections::Piece {
                    file,
                    section: sec,
                    offset: 0,
                });
            }
            plan.placement[file.0 as usize][sec as usize] = Some(Placement {
                out: twin,
                offset: 0,
            });
        }
    }

    /// The Mercury twin of output bank 2 `sass`
    /// (`.nv.merc.nv.constant.optimizer.<k>`: its size and alignment,
    /// `sh_info` the kernel's capsule, type and flags as input twin `like`),
    /// created empty on first use.
    fn const_opt_twin_of(
        &mut self,
        plan: &mut Plan,
        sass: OutSecId,
        like: &crate::cubin::Section<'_>,
        capsule_of: &HashMap<OutSecId, OutSecId>,
    ) -> OutSecId {
        if let Some(&id) = self.const_opt_twin.get(&sass) {
            return id;
        }
        let out = plan.sec(sass);
        let name = out.name.strip_prefix(".nv.constant2.").unwrap_or(&out.name);
        let info = match out.info {
            InfoTo::Section(t) => capsule_of.get(&t).copied(),
            _ => None,
        };
        let mut o = OutSection::new(
            format!(".nv.merc.nv.constant.optimizer.{name}"),
            like.sh_type,
            Role::Mercury(group::DATA),
        );
        o.flags = like.flags;
        o.entsize = like.entsize;
        o.align = out.align;
        o.size = out.size;
        o.info = info.map_or(InfoTo::Raw(0), InfoTo::Section);
        o.body = Body::Pieces(super::sections::Pieces::default());
        let id = plan.add(o);
        self.const_opt_twin.insert(sass, id);
        id
    }

    /// Phase 5: decides every Mercury relocation (resolved, dropped or kept),
    /// creating header-index tables for texture handles, then the output
    /// relocation sections.
    pub(crate) fn classify(
        &mut self,
        files: &[InputFile<'d>],
        db: &SymbolDb<'_>,
        plan: &mut Plan,
    ) -> Result<()> {
        let Some(symtab) = self.symtab else {
            return Ok(());
        };
        for f in files {
            let fid = f.id.0 as usize;
            let dropped = super::live::dropped_init_ranges(db, f);
            for rs in f
                .cubin
                .sections
                .iter()
                .filter(|s| s.sh_type == SHT_CUDA_MERC_RELA)
            {
                let Some(tp) = plan
                    .placement
                    .get(fid)
                    .and_then(|p| p.get(rs.info as usize))
                    .copied()
                    .flatten()
                else {
                    continue;
                };
                let target = &f.cubin.sections[rs.info as usize];
                let is_capsule = target.sh_type == SHT_CUDA_CAPMERC_TEXT;
                // Capsules are not SHF_ALLOC either, but they are code: only
                // the frames are debug information.
                let debug_target = target.flags & SHF_ALLOC == 0 && !is_capsule;
                let mut operands: Vec<Operand> = Vec::new();
                let mut relocs: Vec<(u64, u32, u32, i64)> = rela_entries(rs.data).collect();
                if target.name.strip_prefix(".nv.merc") == Some(super::live::GLOBAL_INIT) {
                    // As the SASS twin: a weak variable that lost to a weak
                    // one keeps no relocations (`live::dropped_init_ranges`).
                    relocs.retain(|r| !super::live::in_ranges(&dropped, r.0));
                }
                // A twin clipped to a winner's shorter table: the relocations
                // past its end go (measured, `bank2_replaced_longer`).
                if let Some(len) = (!plan.overlaid.is_empty())
                    .then(|| plan.overlaid.get(&(f.id, rs.info)))
                    .flatten()
                    .map(|b| b.len() as u64)
                    .filter(|&len| len < target.size)
                {
                    relocs.retain(|r| r.0 < len);
                }
                relocs.sort_by_key(|r| r.0);
                let kept_from = self.kept.len();
                for (offset, rtype, si, addend) in relocs {
                    if rm::describe_mercury(rtype).is_none() {
                        return Err(Error::malformed(format!(
                            "unknown Mercury relocation type {rtype:#x}"
                        ))
                        .in_file(f.name)
                        .in_section(rs.name)
                        .at(offset));
                    }
                    // `-r` keeps the types for the final link to rewrite.
                    let out_type = if plan.relocatable {
                        rtype
                    } else {
                        rm::rewritten_mercury_type(rtype)
                    };
                    let keep = |sym: MTarget, addend: i64| Kept {
                        target: tp.out,
                        offset: tp.offset.wrapping_add(offset),
                        rtype: out_type,
                        sym,
                        addend,
                    };
                    if si == 0 {
                        self.kept.push(keep(MTarget::Null, addend));
                        continue;
                    }
                    let Some(sym) = f.cubin.symbols.get(si as usize) else {
                        return Err(Error::malformed(format!("symbol index {si} out of range"))
                            .in_file(f.name)
                            .in_section(rs.name)
                            .at(offset));
                    };
                    let msym = self.syms[fid].get(si as usize).copied();
                    let here = SymRef {
                        file: f.id,
                        index: si,
                    };
                    let patch = |plan: &mut Plan, rtype: u32, value: u64| {
                        plan.patches[fid].list(rs.info).push(Patch {
                            offset,
                            rtype,
                            value,
                            bank: None,
                        });
                    };
                    let def = db.resolve(here);
                    let def_placed = |plan: &Plan| {
                        def.is_some_and(|d| {
                            files[d.file.0 as usize].cubin.symbols[d.index as usize]
                                .section()
                                .is_some_and(|s| {
                                    plan.placement[d.file.0 as usize][s as usize].is_some()
                                })
                        })
                    };
                    // A losing definition's frame and line-table entries: as
                    // the SASS RELA ones (`nvinfo::frame_reloc_dropped`).
                    if super::nvinfo::follows_frame_rule(target.name)
                        && super::nvinfo::frame_reloc_dropped(db, f, si, true)
                    {
                        continue;
                    }
                    if rtype == rm::R_MERCURY_UNUSED_CLEAR64 {
                        if !def_placed(plan) {
                            patch(plan, RelocType::R_CUDA_UNUSED_CLEAR64.0, 0);
                        } else if let Some(d) = def.filter(|_| plan.relocatable) {
                            // `-r`: kept (nvlink -r drops it), so that the
                            // final link clears the range if the function
                            // dies there, as a direct link does.
                            self.kept.push(keep(MTarget::Input(d), addend));
                        }
                        continue;
                    }
                    if plan.relocatable {
                        // `-r` (rmode.rs): as the SASS relocations, everything
                        // but the CIE pointers is kept, with its own type.
                        let keep_r = |sym: MTarget, addend: i64| Kept {
                            target: tp.out,
                            offset: tp.offset.wrapping_add(offset),
                            rtype,
                            sym,
                            addend,
                        };
                        // Module constants: the value is written now, as nvlink
                        // -r does; the kept relocation rewrites it in the final link.
                        if let Some(d) = def.filter(|_| is_capsule) {
                            let df = &files[d.file.0 as usize];
                            if let Some(op) =
                                df.cubin.symbols[d.index as usize].section().and_then(|ds| {
                                    Self::const_operand(
                                        plan,
                                        df,
                                        d,
                                        ds,
                                        (offset, rtype, si, addend),
                                    )
                                })
                            {
                                operands.push(op);
                            }
                        }
                        let def = match def {
                            Some(d) if !sym.is_undefined() => d,
                            _ => {
                                let to = db.alias_of(here).unwrap_or(here);
                                self.kept.push(keep_r(MTarget::Input(to), addend));
                                continue;
                            }
                        };
                        // (`.nv.merc.debug_info`/`.nv.merc.debug_loc` keep a
                        // losing twin's entries, pointing at the winner, as
                        // the SASS ones do in `rmode.rs` and a final link.)
                        if debug_target
                            && def != here
                            && super::live::lost_to_earlier(db, f, si)
                            && !super::nvinfo::keeps_losers_entries(target.name)
                        {
                            continue;
                        }
                        let df = &files[def.file.0 as usize];
                        let dsym = &df.cubin.symbols[def.index as usize];
                        let Some(dsec_idx) = dsym.section() else {
                            self.kept.push(keep_r(MTarget::Input(def), addend));
                            continue;
                        };
                        let msec = self.twin_section(def, dsym, msym, dsec_idx);
                        let Some(dp) = plan.placement[def.file.0 as usize]
                            .get(msec as usize)
                            .copied()
                            .flatten()
                        else {
                            continue;
                        };
                        let msec_in = &df.cubin.sections[msec as usize];
                        if dsym.ty() != STT_SECTION {
                            self.kept.push(keep_r(MTarget::Input(def), addend));
                        } else if msec_in.flags & SHF_ALLOC == 0 && rtype == rm::R_MERCURY_ABS64 {
                            // A CIE pointer: resolved as nvlink -r does, and
                            // also kept, so that the final link points it at
                            // the CIE wherever these frames land (nvlink -r
                            // drops it: frames linked after another object's
                            // then point at that object's CIE).
                            let value = dp.offset.wrapping_add(addend as u64);
                            patch(plan, RelocType::R_CUDA_64.0, value);
                            self.kept
                                .push(keep_r(MTarget::Section(dp.out), value as i64));
                        } else {
                            let value = addend.wrapping_add(dp.offset as i64);
                            // `-G`: the DWARF sections' 32-bit references to
                            // each other (`.debug_abbrev` offsets) are written
                            // as nvlink -r writes them, and kept; those into a
                            // line table stay 0 (it is rebuilt: see rmode.rs).
                            if msec_in.flags & SHF_ALLOC == 0
                                && rtype == rm::R_MERCURY_ABS32
                                && debug_target
                                && !super::nvinfo::is_line_table(msec_in.name)
                            {
                                patch(plan, RelocType::R_CUDA_32.0, value as u64);
                            }
                            self.kept.push(keep_r(MTarget::Section(dp.out), value));
                        }
                        continue;
                    }
                    if sym.is_undefined() && super::relocate::is_texture_kind(sym.ty()) {
                        // The slot goes into the capsule (the tables: header_tables()).
                        if is_capsule {
                            if let Some(slot) =
                                plan.tex.handles.iter().position(|h| h.name == sym.name)
                            {
                                operands.push(Operand {
                                    offset,
                                    rtype,
                                    sym: si,
                                    addend,
                                    value: (4 * slot as u64).wrapping_add(addend as u64),
                                });
                            }
                        }
                        continue;
                    }
                    if sym.is_undefined() && sym.name == super::relocate::PTX_CONST0_SIZE {
                        // Resolved like the SASS twin (relocate::ptx_const0_size).
                        if is_capsule {
                            operands.push(Operand {
                                offset,
                                rtype,
                                sym: si,
                                addend,
                                value: super::relocate::ptx_const0_size(plan)
                                    .wrapping_add(addend as u64),
                            });
                        }
                        continue;
                    }
                    // Shared memory named by debug information (nvcc -G's
                    // `.nv.merc.debug_info`): written as in the SASS twin
                    // (`shared::debug_location`; measured at sm_100/120: the
                    // `extern __shared__` array 0x3ff without -g, the dynamic
                    // base + 0x400 with it, a kernel's variable its offset +
                    // 0x400, the addends holding the reserve).
                    if debug_target {
                        if let Some(sr) = super::shared::classify(files, db, here) {
                            let name = db.global_of[fid].get(si as usize).copied().flatten();
                            let cuda = match rtype {
                                rm::R_MERCURY_ABS64 => Some(RelocType::R_CUDA_64.0),
                                rm::R_MERCURY_ABS32 => Some(RelocType::R_CUDA_32.0),
                                _ => None,
                            };
                            if let (Some(v), Some(cuda)) =
                                (super::shared::debug_location(plan, &sr, name), cuda)
                            {
                                patch(plan, cuda, v.wrapping_add(addend as u64));
                            }
                            continue;
                        }
                    }
                    if is_capsule && plan.resolved.is_some() {
                        // `--preserve-relocs`: the shared-variable references,
                        // as the SASS side lists them (`preserve.rs`; on
                        // Blackwell no constant-bank ones, measured at sm_100).
                        if let Some(super::shared::SharedRef::Var(d)) =
                            super::shared::classify(files, db, here)
                        {
                            self.resolved.push(Kept {
                                target: tp.out,
                                offset: tp.offset.wrapping_add(offset),
                                rtype,
                                sym: MTarget::Input(d),
                                addend,
                            });
                        }
                    }
                    if sym.is_undefined()
                        && (UNIFIED_TABLE_SYMBOLS.contains(&sym.name)
                            || sym.other & STO_CUDA_SHARED != 0)
                    {
                        continue; // resolved (unified table: 0; extern shared: the window)
                    }
                    // As in the SASS twins (`relocate.rs`): a weak twin's
                    // `.nv.merc.debug_info`/`.nv.merc.debug_loc` entries stay,
                    // pointing at the winner (measured at sm_100/120, a
                    // template in two -G objects, fixture `cu_debug_shared_g`).
                    if debug_target
                        && !super::nvinfo::keeps_losers_entries(target.name)
                        && !sym.is_undefined()
                        && sym.ty() != STT_SECTION
                        && def != Some(here)
                        && super::live::lost_to_earlier(db, f, si)
                    {
                        continue;
                    }
                    if sym.is_undefined() && sym.bind() == STB_LOCAL {
                        continue; // a label ptxas left undefined: dropped, as in the SASS twin
                    }
                    let Some(def) = def else {
                        if sym.bind() == STB_WEAK
                            || stays_undefined(sym.name)
                            || is_driver_provided(sym.name)
                        {
                            self.kept.push(keep(MTarget::Input(here), addend));
                        }
                        continue; // the SASS pass reported it
                    };
                    let df = &files[def.file.0 as usize];
                    let dsym = &df.cubin.symbols[def.index as usize];
                    let Some(dsec_idx) = dsym.section() else {
                        self.kept.push(keep(MTarget::Input(def), addend));
                        continue;
                    };
                    let dsec = &df.cubin.sections[dsec_idx as usize];
                    let in_const =
                        (SHT_CUDA_CONSTANT0..=SHT_CUDA_CONSTANT17).contains(&dsec.sh_type);
                    if is_capsule {
                        if let Some(op) = Self::const_operand(
                            plan,
                            df,
                            def,
                            dsec_idx,
                            (offset, rtype, si, addend),
                        ) {
                            operands.push(op);
                        }
                    }
                    // Resolved by the linker in code; but data and debug
                    // information keep their driver relocations against
                    // constant variables, as the SASS twins do (measured at
                    // sm_100/120: `R_MERCURY_G64` against a `__constant__`
                    // array in `.nv.merc.debug_info`, and in
                    // `.nv.merc.nv.global.init` / `.nv.merc.nv.constant.user`
                    // for a pointer initialized with its address, fixture
                    // `cu_const_pointer`).
                    let driver_data = !is_capsule
                        && rm::describe_mercury(rtype)
                            .is_some_and(|d| d.class == crate::reloc::table::ResolverClass::Driver);
                    if dsec.sh_type == SHT_CUDA_SHARED || (in_const && !driver_data) {
                        continue;
                    }
                    let msec = self.twin_section(def, dsym, msym, dsec_idx);
                    let Some(dp) = plan.placement[def.file.0 as usize]
                        .get(msec as usize)
                        .copied()
                        .flatten()
                    else {
                        continue; // dead function
                    };
                    let msec_in = &df.cubin.sections[msec as usize];
                    if dsym.ty() == STT_SECTION {
                        let abs = match rtype {
                            rm::R_MERCURY_ABS64 => Some(RelocType::R_CUDA_64.0),
                            rm::R_MERCURY_ABS32 => Some(RelocType::R_CUDA_32.0),
                            _ => None,
                        };
                        if let (true, Some(cuda)) = (msec_in.flags & SHF_ALLOC == 0, abs) {
                            // An offset inside merged debug information: CIE
                            // pointers in the frames; with `-G` objects the
                            // DWARF sections' references to each other
                            // (`.debug_abbrev`, `.debug_loc`, `.debug_info`).
                            patch(plan, cuda, dp.offset.wrapping_add(addend as u64));
                        } else {
                            self.kept
                                .push(keep(MTarget::Section(dp.out), addend + dp.offset as i64));
                        }
                        continue;
                    }
                    self.kept.push(keep(MTarget::Input(def), addend));
                }
                // A jump table in several kernels' banks: its kept
                // relocations in each (`place_const_opt`).
                if let Some(extra) = self.extra_placements.get(&(f.id, rs.info)) {
                    let copies: Vec<Kept> = extra
                        .iter()
                        .flat_map(|p| {
                            self.kept[kept_from..].iter().map(move |k| Kept {
                                target: p.out,
                                offset: k.offset - tp.offset + p.offset,
                                ..*k
                            })
                        })
                        .collect();
                    self.kept.extend(copies);
                }
                if !operands.is_empty() {
                    write_capsule_operands(f, rs.info, operands, plan);
                }
            }
        }
        self.header_tables(plan);
        // Output relocation sections, in order of first entry.
        self.rela = relocation_sections(
            plan,
            &self.kept,
            ".nv.merc.rela",
            SHT_CUDA_MERC_RELA,
            symtab,
        );
        self.resolved_rela = relocation_sections(
            plan,
            &self.resolved,
            ".nv.merc.nv.resolvedrela",
            SHT_CUDA_MERC_RESOLVED_RELA,
            symtab,
        );
        Ok(())
    }

    /// A capsule operand against a module constant (`dsec_idx` of `df` a
    /// constant bank): the constant's offset in its output bank plus the
    /// addend, as the SASS pass resolves it. `r` is (offset, type, symbol, addend).
    fn const_operand(
        plan: &Plan,
        df: &InputFile<'_>,
        def: SymRef,
        dsec_idx: u32,
        r: (u64, u32, u32, i64),
    ) -> Option<Operand> {
        let dsec = &df.cubin.sections[dsec_idx as usize];
        if !(SHT_CUDA_CONSTANT0..=SHT_CUDA_CONSTANT17).contains(&dsec.sh_type) {
            return None;
        }
        let placed = plan.placement[def.file.0 as usize]
            .get(dsec_idx as usize)
            .copied()
            .flatten();
        // The dropped bank 2 of a function no kernel reaches: its own offsets.
        let dp_offset = match placed {
            Some(p) => p.offset,
            None if dsec.sh_type == SHT_CUDA_CONSTANT2 && !plan.relocatable => 0,
            None => return None,
        };
        let dsym = &df.cubin.symbols[def.index as usize];
        let base = if dsym.ty() == STT_SECTION {
            0
        } else {
            dsym.value
        };
        let (offset, rtype, sym, addend) = r;
        Some(Operand {
            offset,
            rtype,
            sym,
            addend,
            value: dp_offset.wrapping_add(base).wrapping_add(addend as u64),
        })
    }

    /// The section of a definition's Mercury twin (a Mercury section, or a
    /// shared one): `msym` is the referencing Mercury entry.
    fn twin_section(
        &self,
        def: SymRef,
        dsym: &crate::cubin::Symbol<'_>,
        msym: Option<MSym<'_>>,
        dsec_idx: u32,
    ) -> u32 {
        if dsym.ty() == STT_SECTION {
            msym.map(|m| u32::from(m.shndx)).unwrap_or(dsec_idx)
        } else {
            self.syms[def.file.0 as usize]
                .get(def.index as usize)
                .map(|m| u32::from(m.shndx))
                .filter(|&s| s != 0)
                .unwrap_or(dsec_idx)
        }
    }

    /// The header-index table of every kernel given handle slots in its
    /// parameter bank (`texslots.rs`): one 4-byte entry per handle of the
    /// link, in slot order, each with its `R_MERCURY_*_HEADER_INDEX`
    /// (measured: the same handles and order as the `.nv.constant0` slots).
    fn header_tables(&mut self, plan: &mut Plan) {
        if plan.tex.handles.is_empty() {
            return;
        }
        for &(_, _, capsule, text_out) in &self.texts {
            if !plan.tex.has_slots(text_out) || self.header_tables.contains_key(&capsule) {
                continue;
            }
            let kernel = plan
                .sec(capsule)
                .name
                .strip_prefix(".nv.capmerc.text.")
                .unwrap_or("")
                .to_string();
            let mut o = OutSection::new(
                format!(".nv.merc.nv.constant.entry_image_header_indices.{kernel}"),
                SHT_CUDA_MERC_HEADER_INDICES,
                Role::Mercury(group::HEADER_INDICES),
            );
            o.flags = SHF_CUDA_MERCURY | SHF_INFO_LINK | SHF_ALLOC;
            o.align = 4;
            o.info = InfoTo::Section(capsule);
            o.size = 4 * plan.tex.handles.len() as u64;
            o.body = Body::Bytes(vec![0; o.size as usize]);
            let table = plan.add(o);
            let mut names = Vec::with_capacity(plan.tex.handles.len());
            for (slot, h) in plan.tex.handles.iter().enumerate() {
                names.push(h.name.clone());
                if !plan.tex.kinds(text_out).header_index_for(h.ty) {
                    continue;
                }
                let rtype = match h.ty {
                    super::relocate::STT_CUDA_SURFACE => rm::R_MERCURY_SURF_HEADER_INDEX,
                    super::relocate::STT_CUDA_SAMPLER => rm::R_MERCURY_SAMP_HEADER_INDEX,
                    _ => rm::R_MERCURY_TEX_HEADER_INDEX,
                };
                self.kept.push(Kept {
                    target: table,
                    offset: 4 * slot as u64,
                    rtype,
                    sym: MTarget::Input(h.sym),
                    addend: 0,
                });
            }
            self.header_tables.insert(capsule, (table, names));
        }
    }

    /// After `nvinfo::create_sections`: the Mercury `.nv.info` sections.
    pub(crate) fn create_info_sections(
        &mut self,
        files: &[InputFile<'d>],
        live: &Live,
        plan: &mut Plan,
    ) {
        let Some(symtab) = self.symtab else { return };
        let nv_info = plan.sections.iter().position(|s| s.role == Role::NvInfo);
        if nv_info.is_some()
            && files.iter().any(|f| {
                f.cubin
                    .sections
                    .iter()
                    .any(|s| s.sh_type == SHT_CUDA_MERC_INFO && s.flags & SHF_INFO_LINK == 0)
            })
        {
            let mut o = OutSection::new(
                ".nv.merc.nv.info",
                SHT_CUDA_MERC_INFO,
                Role::Mercury(group::INFO),
            );
            o.flags = SHF_CUDA_MERCURY;
            o.align = 4;
            o.link = LinkTo::Section(symtab);
            self.info_module = Some(plan.add(o));
        }
        let capsule_of: HashMap<(FileId, u32), (u32, OutSecId)> = self
            .texts
            .iter()
            .map(|t| {
                (
                    (
                        t.0,
                        files[t.0 .0 as usize].cubin.sections[t.1 as usize].info,
                    ),
                    (t.1, t.2),
                )
            })
            .collect();
        for (fi, func) in live.funcs.iter().enumerate() {
            if !live.live[fi] {
                continue;
            }
            let f = &files[func.key.file.0 as usize];
            let fsym = f.func_sym[func.key.text as usize];
            let Some(&(cap_in, cap_out)) = capsule_of.get(&(f.id, fsym)) else {
                continue;
            };
            let Some(s) = f.cubin.sections.iter().find(|s| {
                s.sh_type == SHT_CUDA_MERC_INFO && s.flags & SHF_INFO_LINK != 0 && s.info == cap_in
            }) else {
                continue;
            };
            let mut o = OutSection::new(s.name, SHT_CUDA_MERC_INFO, Role::Mercury(group::INFO_FN));
            o.flags = s.flags;
            o.align = s.addralign.max(1);
            o.link = LinkTo::Section(symtab);
            o.info = InfoTo::Section(cap_out);
            let id = plan.add(o);
            self.info_fn.push((id, f.id, s.index, fi as u32));
        }
    }

    /// Main output symbol index of input symbol `index` of `f` (0: none).
    fn main_index(&self, f: &InputFile<'_>, index: u32, plan: &Plan, syms: &SymTable) -> u32 {
        let Some(sym) = f.cubin.symbols.get(index as usize) else {
            return 0;
        };
        if sym.ty() == STT_SECTION {
            let Some(sec) = sym.section() else { return 0 };
            match plan.placement[f.id.0 as usize][sec as usize] {
                Some(p) => syms.section_symbol(p.out),
                // Rebuilt metadata sections (notes, call graph): by name.
                None => self
                    .meta_syms
                    .get(f.cubin.sections[sec as usize].name)
                    .copied()
                    .unwrap_or(0),
            }
        } else {
            syms.output_index(SymRef { file: f.id, index })
        }
    }

    /// Phase 6 (after `symtab::build`): `.nv.merc.symtab`, names appended to
    /// `.strtab`, capsule headers and `sh_info`.
    pub(crate) fn build_symtab(
        &mut self,
        files: &[InputFile<'d>],
        db: &SymbolDb<'_>,
        syms: &SymTable,
        plan: &mut Plan,
    ) -> Result<()> {
        let Some(symtab) = self.symtab else {
            return Ok(());
        };
        let main_id = plan.find_role(Role::SymTab).expect("plan has .symtab");
        let strtab_id = plan.find_role(Role::StrTab).expect("plan has .strtab");
        let main: Vec<u8> = match &plan.sec(main_id).body {
            Body::Bytes(b) => b.clone(),
            _ => Vec::new(),
        };
        let n_main = main.len() / 24;
        // `.symtab_shndx` (extended images): the real index of main entries
        // that hold SHN_XINDEX.
        let main_ext: Vec<u8> = match plan.find_role(Role::SymTabShndx).map(|x| &plan.sec(x).body) {
            Some(Body::Bytes(b)) => b.clone(),
            _ => Vec::new(),
        };
        let merc_ext_id = plan
            .sections
            .iter()
            .position(|s| s.sh_type == SHT_SYMTAB_SHNDX && s.link == LinkTo::Section(symtab));
        // Per output entry: its `.nv.merc.symtab_shndx` value.
        let mut ext: Vec<u32> = vec![0];
        let mut placed = vec![false; plan.sections.len()];
        for p in plan.placement.iter().flatten().flatten() {
            placed[p.out.0 as usize] = true;
        }
        self.meta_syms = plan
            .sections
            .iter()
            .enumerate()
            .filter(|(i, s)| s.section_symbol && !placed[*i])
            .map(|(i, s)| (s.name.clone(), syms.section_symbol(OutSecId(i as u32))))
            .collect();
        // The Mercury twin of each main output symbol: prefer the winning definition.
        let mut cand: Vec<Option<(FileId, u32, bool)>> = vec![None; n_main];
        for f in files {
            let fid = f.id.0 as usize;
            for i in 1..self.syms[fid].len() as u32 {
                let j = self.main_index(f, i, plan, syms) as usize;
                if j == 0 || j >= n_main {
                    continue;
                }
                let r = SymRef {
                    file: f.id,
                    index: i,
                };
                let winner = db.is_winner(r);
                match cand[j] {
                    Some((_, _, true)) => {}
                    Some(_) if !winner => {}
                    _ => cand[j] = Some((f.id, i, winner)),
                }
            }
        }
        let main_strtab: Vec<u8> = match &plan.sec(strtab_id).body {
            Body::Bytes(b) => b.clone(),
            _ => vec![0],
        };
        let mut strtab = main_strtab.clone();
        // Names already in `.strtab` (shared with the main table), borrowed
        // from a copy of it (a `String` per name was ~20 ms at 2000 objects).
        let mut str_off: HashMap<std::borrow::Cow<'_, str>, u32> = HashMap::default();
        str_off.reserve(main_strtab.len() / 16);
        {
            let mut start = 0usize;
            for (i, &b) in main_strtab.iter().enumerate() {
                if b == 0 {
                    if let Ok(s) = std::str::from_utf8(&main_strtab[start..i]) {
                        str_off.entry(s.into()).or_insert(start as u32);
                    }
                    start = i + 1;
                }
            }
        }
        let mut out: Vec<u8> = vec![0; 24];
        out[8..16].copy_from_slice(&plan.null_value.to_le_bytes());
        self.main_to_merc = vec![0; n_main];
        let mut first_global: Option<u32> = None;
        // A kernel's parameter-bank section symbol has, as Mercury twin, the
        // section symbol of its header-index table (when it has one).
        let mut table_of_bank: HashMap<u32, (OutSecId, String)> = HashMap::default();
        for (&cap, (table, _)) in &self.header_tables {
            let Some(&(_, _, _, text_out)) = self.texts.iter().find(|t| t.2 == cap) else {
                continue;
            };
            for (i, sec) in plan.sections.iter().enumerate() {
                if sec.role == Role::Const0 && sec.info == InfoTo::Section(text_out) {
                    let j = syms.section_symbol(OutSecId(i as u32));
                    let name = plan.sec(*table).name.replacen(".nv.merc", "", 1);
                    table_of_bank.insert(j, (*table, name));
                }
            }
        }
        // A kernel's bank 2 whose jump-table twin holds only other kernels'
        // first placements (no input section symbol stands for it): the
        // twin's section symbol (`place_const_opt`).
        let const_opt_of_bank: HashMap<u32, (OutSecId, String)> = self
            .const_opt_twin
            .iter()
            .map(|(&sass, &merc)| {
                (
                    syms.section_symbol(sass),
                    (merc, plan.sec(merc).name.replacen(".nv.merc", "", 1)),
                )
            })
            .filter(|(j, _)| *j != 0)
            .collect();
        // The notes' section symbols are mirrored even when the inputs' Mercury
        // tables lack them (CUDA 12.9 objects), as nvlink does.
        let note_syms: HashMap<u32, OutSecId> = plan
            .sections
            .iter()
            .enumerate()
            .filter(|(_, s)| {
                matches!(s.role, Role::TkInfo | Role::CuInfo)
                    // An empty link's table also mirrors the call graph's
                    // (measured at sm_100/103/110).
                    || (files.is_empty() && s.role == Role::CallGraph)
            })
            .map(|(i, _)| {
                let id = OutSecId(i as u32);
                (syms.section_symbol(id), id)
            })
            .collect();
        // So are those of the memory sections the link creates when no input
        // has them (`.nv.global` for `.common` variables only, a kernel's
        // `.nv.shared.<k>` for module `.shared` of the functions it calls):
        // measured at sm_100/120, `mercury_created_sections`.
        let created_syms: HashMap<u32, OutSecId> = plan
            .sections
            .iter()
            .enumerate()
            .filter(|(_, s)| {
                s.section_symbol
                    && s.role == Role::NoBits
                    && (s.name == ".nv.global"
                        || (s.name.starts_with(".nv.shared.")
                            && !s.name.starts_with(".nv.shared.reserved")))
            })
            .map(|(i, _)| {
                let id = OutSecId(i as u32);
                (syms.section_symbol(id), id)
            })
            .collect();
        for (j, c) in cand.iter().enumerate() {
            // A section symbol nvlink mirrors without an input twin: a note's
            // (when the inputs lack it), a created memory section's, or a
            // parameter bank's header-index table.
            let created = note_syms
                .get(&(j as u32))
                .or_else(|| created_syms.get(&(j as u32)));
            let twin = match (c, created) {
                (None, Some(&note)) => Some((note, plan.sec(note).name.clone(), false)),
                _ => table_of_bank
                    .get(&(j as u32))
                    .map(|(table, name)| (*table, name.clone(), true)),
            }
            .or_else(|| {
                c.is_none()
                    .then(|| const_opt_of_bank.get(&(j as u32)))
                    .flatten()
                    .map(|(t, name)| (*t, name.clone(), true))
            });
            if let Some((sec, name, is_table)) = twin {
                let idx = (out.len() / 24) as u32;
                if is_table {
                    self.section_syms.entry(sec).or_insert(idx);
                }
                self.main_to_merc[j] = idx;
                let name_off = intern(&mut strtab, &mut str_off, name.into());
                out.extend_from_slice(&name_off.to_le_bytes());
                out.push(STT_SECTION);
                out.push(0);
                let (shndx, x) = encode_shndx(plan.index(sec), FIRST_MERC_XINDEX);
                ext.push(x);
                out.extend_from_slice(&shndx.to_le_bytes());
                out.extend_from_slice(&[0; 16]);
                continue;
            }
            let Some((fid, i, _)) = *c else { continue };
            let f = &files[fid.0 as usize];
            let ms = self.syms[fid.0 as usize][i as usize];
            let e = &main[j * 24..j * 24 + 24];
            let m_info = e[4];
            let m_shndx = u16::from_le_bytes([e[6], e[7]]);
            let m_value = u64::from_le_bytes(e[8..16].try_into().expect("8"));
            let msec_in = f.cubin.sections.get(usize::from(ms.shndx));
            let ((shndx, x), value, out_sec) = match msec_in {
                Some(s) if ms.shndx != 0 && ms.shndx < SHN_LORESERVE && is_merc(s) => {
                    match plan.placement[fid.0 as usize][s.index as usize] {
                        Some(p) => {
                            let v = if ms.info & 0xf == STT_SECTION {
                                0
                            } else if s.sh_type == SHT_CUDA_SHARED_RESERVED && !plan.relocatable {
                                p.offset // st_value is the alignment
                            } else {
                                p.offset + ms.value
                            };
                            let idx = encode_shndx(plan.index(p.out), FIRST_MERC_XINDEX);
                            (idx, v, Some(p.out))
                        }
                        None => continue,
                    }
                }
                // Undefined: the Mercury value (the SASS side may differ, e.g.
                // `.nv.reservedSmem.*`); shared sections: the SASS value.
                _ if m_shndx == SHN_UNDEF => ((m_shndx, 0), ms.value, None),
                // The SASS entry's section, re-encoded for this table.
                _ if m_shndx == SHN_XINDEX => {
                    let real = main_ext
                        .get(j * 4..j * 4 + 4)
                        .map_or(0, |b| u32::from_le_bytes(b.try_into().expect("4 bytes")));
                    (encode_shndx(real, FIRST_MERC_XINDEX), m_value, None)
                }
                // A shared-memory variable (`-g` keeps them, and the
                // `extern __shared__` object in `.nv_debug.shared`): the
                // window offset without the 0x400 reserve the SASS value has
                // (measured at sm_100/120: `st` 0x400 → 0, `dyn` 0x4a0 → 0xa0).
                _ if !plan.relocatable
                    && ms.other & STO_CUDA_SHARED != 0
                    && ms.info & 0xf != STT_SECTION =>
                {
                    let v = m_value.saturating_sub(super::shared::SM90_SHARED_RESERVE);
                    ((m_shndx, 0), v, None)
                }
                _ => ((m_shndx, 0), m_value, None),
            };
            ext.push(x);
            // Type: the input's Mercury type, except that nvlink's CUDA-variable
            // retyping of the SASS symbol (`.nv.reservedSmem.*`) applies too.
            let ty = if m_info & 0xf == STT_CUDA_OBJECT {
                STT_CUDA_OBJECT
            } else {
                ms.info & 0xf
            };
            let idx = (out.len() / 24) as u32;
            // (A `-r` output's weak definitions among the locals do not count.)
            if m_info >> 4 != STB_LOCAL && j as u32 >= syms.first_global && first_global.is_none() {
                first_global = Some(idx);
            }
            if ms.info & 0xf == STT_SECTION {
                if let Some(o) = out_sec {
                    self.section_syms.entry(o).or_insert(idx);
                }
            }
            self.main_to_merc[j] = idx;
            // A kernel's jump-table section holds other functions' tables
            // too: its section symbol is named after it, whichever input's
            // symbol stands for it (`place_const_opt`).
            // A `-r` renames the tables' own symbols (symtab.rs): as the
            // `.symtab` twin.
            let name: std::borrow::Cow<'_, str> = match out_sec {
                Some(o) if plan.sec(o).sh_type == SHT_CUDA_MERC_CONST_OPT => {
                    if ms.info & 0xf == STT_SECTION {
                        plan.sec(o).name.replacen(".nv.merc", "", 1).into()
                    } else if plan.relocatable || plan.resolved.is_some() {
                        let at = u32::from_le_bytes(e[0..4].try_into().expect("4 bytes")) as usize;
                        main_strtab
                            .get(at..)
                            .and_then(|b| b.split(|&c| c == 0).next())
                            .and_then(|b| std::str::from_utf8(b).ok())
                            .unwrap_or(ms.name)
                            .to_string()
                            .into()
                    } else {
                        ms.name.into()
                    }
                }
                _ => ms.name.into(),
            };
            let name_off = intern(&mut strtab, &mut str_off, name);
            out.extend_from_slice(&name_off.to_le_bytes());
            out.push((m_info & 0xf0) | ty);
            // `--preserve-relocs` marks the kept shared-memory symbols
            // (`st_other` 1 on the SASS side): their twins get the bit too
            // (measured at sm_100).
            let preserved_shared =
                plan.resolved.is_some() && ms.other & STO_CUDA_SHARED != 0 && e[5] & 1 != 0;
            out.push(if preserved_shared {
                ms.other | 1
            } else {
                ms.other
            });
            out.extend_from_slice(&shndx.to_le_bytes());
            out.extend_from_slice(&value.to_le_bytes());
            // A `.common` variable has the merged size (the largest of its
            // declarations), as its `.symtab` entry: measured, difftest
            // 30054, fixture `common_sizes_mercury`.
            let size = if ms.shndx == SHN_COMMON {
                u64::from_le_bytes(e[16..24].try_into().expect("8 bytes"))
            } else {
                ms.size
            };
            out.extend_from_slice(&size.to_le_bytes());
        }
        let n = (out.len() / 24) as u32;
        if plan.relocatable {
            // A `-r` output is read again as an input: entry `i` must be the
            // twin of `.symtab` entry `i` (symtab.rs puts the symbols without
            // a twin, the parameter banks', last).
            let aligned = self.main_to_merc.iter().enumerate().all(|(j, &m)| {
                if m != 0 {
                    m as usize == j
                } else {
                    j == 0 || j >= n as usize
                }
            });
            if !aligned {
                return Err(Error::new(
                    crate::error::ErrorKind::Unsupported,
                    "-r: these objects give a Mercury symbol table that is not index-aligned \
                     with .symtab, which culink cannot write as a relocatable object",
                ));
            }
        }
        if let Some(x) = merc_ext_id {
            let bytes: Vec<u8> = ext.iter().flat_map(|v| v.to_le_bytes()).collect();
            let s = plan.sec_mut(OutSecId(x as u32));
            s.size = bytes.len() as u64;
            s.body = Body::Bytes(bytes);
        }
        {
            let s = plan.sec_mut(strtab_id);
            s.size = strtab.len() as u64;
            s.body = Body::Bytes(strtab);
        }
        {
            let s = plan.sec_mut(symtab);
            s.size = out.len() as u64;
            s.body = Body::Bytes(out);
            s.link = LinkTo::Section(strtab_id);
            s.info = InfoTo::Raw(first_global.unwrap_or(n));
        }
        // Capsules: sh_info is the function's Mercury symbol; the first word
        // of the capsule names the output `.text` section.
        for &(fid, cap_in, cap_out, text_out) in &self.texts {
            let f = &files[fid.0 as usize];
            let fsym = f.cubin.sections[cap_in as usize].info;
            let j = self.main_index(f, fsym, plan, syms) as usize;
            let merc = self.main_to_merc.get(j).copied().unwrap_or(0);
            plan.sec_mut(cap_out).info = InfoTo::Raw(merc);
            let text_index = u64::from(plan.index(text_out));
            plan.patches[fid.0 as usize].list(cap_in).push(Patch {
                offset: 0,
                rtype: RelocType::R_CUDA_32.0,
                value: text_index,
                bank: None,
            });
        }
        Ok(())
    }

    /// The Mercury output index of input symbol `index` of `f` (0: none).
    fn merc_index(&self, f: &InputFile<'_>, index: u32, plan: &Plan, syms: &SymTable) -> u32 {
        let j = self.main_index(f, index, plan, syms) as usize;
        self.main_to_merc.get(j).copied().unwrap_or(0)
    }

    /// Phase 7 (after `nvinfo::build`): the Mercury `.nv.info` sections, from
    /// the output `.nv.info*` and the inputs' Mercury records.
    pub(crate) fn build_info(
        &self,
        files: &[InputFile<'d>],
        db: &SymbolDb<'_>,
        syms: &SymTable,
        plan: &mut Plan,
    ) -> Result<()> {
        let translate = |j: u32| -> Option<u32> {
            self.main_to_merc
                .get(j as usize)
                .copied()
                .filter(|&m| m != 0)
        };
        let bytes_of = |plan: &Plan, role: Role, pred: &dyn Fn(&OutSection) -> bool| {
            plan.sections
                .iter()
                .find(|s| s.role == role && pred(s))
                .and_then(|s| match &s.body {
                    Body::Bytes(b) => Some(b.clone()),
                    _ => None,
                })
        };
        if let Some(id) = self.info_module {
            let main = bytes_of(plan, Role::NvInfo, &|_| true).unwrap_or_default();
            let mut out: Vec<OwnedRecord> = Vec::new();
            for rec in eiattr::parse(&main)? {
                if let Some(o) = super::nvinfo::renumber(&rec, &translate, &|_| true)? {
                    out.push(o);
                }
            }
            let mut bytes = Vec::new();
            eiattr::encode_owned(&out, &mut bytes)?;
            let s = plan.sec_mut(id);
            s.size = bytes.len() as u64;
            s.body = Body::Bytes(bytes);
        }
        // Call-tree records the SASS side recomputed, per function.
        // (Besides these, the call-tree flags: `nvinfo::TREE_FLAGS`.)
        const FROM_MAIN: [EiAttr; 5] = [
            EiAttr::EIATTR_VRC_CTA_INIT_COUNT,
            EiAttr::EIATTR_AT_ENTRY_FRAGMENTS,
            EiAttr::EIATTR_EXTERNS,
            EiAttr::EIATTR_NUM_BARRIERS,
            EiAttr::EIATTR_NUM_MBARRIERS,
        ];
        let from_main = |a: &EiAttr| FROM_MAIN.contains(a) || super::nvinfo::TREE_FLAGS.contains(a);
        let main_fn_info: HashMap<u32, Vec<u8>> = plan
            .sections
            .iter()
            .filter(|o| o.role == Role::NvInfoFn)
            .filter_map(|o| match (&o.body, o.func) {
                (Body::Bytes(b), Some(fi)) => Some((fi, b.clone())),
                _ => None,
            })
            .collect();
        for &(id, fid, sec, fi) in &self.info_fn {
            let f = &files[fid.0 as usize];
            let s = &f.cubin.sections[sec as usize];
            let main_fn = main_fn_info.get(&fi).cloned().unwrap_or_default();
            let main_recs = eiattr::parse(&main_fn)?;
            let main_crs = main_recs.iter().any(|r| {
                r.attr == EiAttr::EIATTR_CRS_STACK_SIZE && r.int_value() == Some(u32::MAX)
            });
            let mut out: Vec<OwnedRecord> = Vec::new();
            let map = |i: u32| -> Option<u32> {
                let m = self.merc_index(f, i, plan, syms);
                (m != 0).then_some(m)
            };
            let external = |i: u32| {
                (i as usize) < f.cubin.symbols.len()
                    && db
                        .resolve(SymRef {
                            file: f.id,
                            index: i,
                        })
                        .is_none()
            };
            // `EIATTR_SPARSE_MMA_MASK`: the main section's value (a kernel's
            // changes in links with `.alias` symbols) and its further records
            // (one per alias: `nvinfo::SPARSE_UNKNOWN`).
            let sparse = || {
                main_recs
                    .iter()
                    .filter(|r| r.attr == EiAttr::EIATTR_SPARSE_MMA_MASK)
            };
            for rec in eiattr::parse(s.data).map_err(|e| e.in_file(f.name).in_section(s.name))? {
                if from_main(&rec.attr) || (main_crs && rec.attr == EiAttr::EIATTR_CRS_STACK_SIZE) {
                    continue;
                }
                if let Some(first) = (rec.attr == EiAttr::EIATTR_SPARSE_MMA_MASK)
                    .then(|| sparse().next())
                    .flatten()
                {
                    out.push(first.to_owned_record());
                    continue;
                }
                if let Some(o) = super::nvinfo::renumber(&rec, &map, &external)
                    .map_err(|e| e.in_file(f.name).in_section(s.name))?
                {
                    out.push(o);
                }
            }
            for rec in &main_recs {
                let wanted =
                    from_main(&rec.attr) || (main_crs && rec.attr == EiAttr::EIATTR_CRS_STACK_SIZE);
                if wanted {
                    if let Some(o) = super::nvinfo::renumber(rec, &translate, &|_| true)? {
                        out.push(o);
                    }
                }
            }
            out.extend(sparse().skip(1).map(|r| r.to_owned_record()));
            super::blackwell::add_default_isa_version(plan.arch, &mut out);
            let mut bytes = Vec::new();
            eiattr::encode_owned(&out, &mut bytes)?;
            let o = plan.sec_mut(id);
            o.size = bytes.len() as u64;
            o.body = Body::Bytes(bytes);
        }
        Ok(())
    }

    /// Phase 8: serializes the kept Mercury relocations (ascending offsets).
    pub(crate) fn finish(&self, files: &[InputFile<'d>], syms: &SymTable, plan: &mut Plan) {
        self.serialize(&self.kept, &self.rela, files, syms, plan);
        self.serialize(&self.resolved, &self.resolved_rela, files, syms, plan);
    }

    /// Writes `entries` into their output relocation sections `sections`
    /// (target → section), ascending offsets.
    fn serialize(
        &self,
        entries: &[Kept],
        sections: &[(OutSecId, OutSecId)],
        files: &[InputFile<'d>],
        syms: &SymTable,
        plan: &mut Plan,
    ) {
        let mut by_target: HashMap<OutSecId, Vec<&Kept>> = HashMap::default();
        for k in entries {
            by_target.entry(k.target).or_default().push(k);
        }
        for &(target, id) in sections {
            let mut entries: Vec<(u64, u32, u32, i64)> = by_target
                .remove(&target)
                .unwrap_or_default()
                .into_iter()
                .map(|k| {
                    let sym = match k.sym {
                        MTarget::Null => 0,
                        MTarget::Section(s) => self.section_syms.get(&s).copied().unwrap_or(0),
                        MTarget::Input(r) => {
                            self.merc_index(&files[r.file.0 as usize], r.index, plan, syms)
                        }
                    };
                    (k.offset, k.rtype, sym, k.addend)
                })
                .collect();
            let bytes = super::relocate::encode_entries(&mut entries, true);
            let s = plan.sec_mut(id);
            s.size = bytes.len() as u64;
            s.body = Body::Bytes(bytes);
        }
    }
}

/// One relocation section per target of `entries` (in order of first
/// entry), named `prefix` + the target's name less `.nv.capmerc`/`.nv.merc`
/// (`.nv.merc.rela.text.k`, `.nv.merc.nv.resolvedrela.text.k`); their bytes
/// come in [`Mercury::finish`]. (A set for membership: a `Vec::contains` per
/// relocation was 0.36 s of a 2000-object sm_100 link.)
fn relocation_sections(
    plan: &mut Plan,
    entries: &[Kept],
    prefix: &str,
    sh_type: u32,
    symtab: OutSecId,
) -> Vec<(OutSecId, OutSecId)> {
    let mut seen: Vec<OutSecId> = Vec::new();
    let mut known: HashSet<OutSecId> = HashSet::default();
    for k in entries {
        if known.insert(k.target) {
            seen.push(k.target);
        }
    }
    seen.into_iter()
        .map(|target| {
            let tname = plan.sec(target).name.clone();
            let rest = tname
                .strip_prefix(".nv.capmerc")
                .or_else(|| tname.strip_prefix(".nv.merc"))
                .unwrap_or(&tname);
            let mut o = OutSection::new(
                format!("{prefix}{rest}"),
                sh_type,
                Role::Mercury(group::RELA),
            );
            o.flags = SHF_CUDA_MERCURY | SHF_INFO_LINK;
            o.align = 8;
            o.entsize = 24;
            o.link = LinkTo::Section(symtab);
            o.info = InfoTo::Section(target);
            (target, plan.add(o))
        })
        .collect()
}

/// The SASS bank 2 (`.nv.constant2.<fn>`) of `f` whose Mercury twin is
/// `twin` (`.nv.merc.nv.constant.optimizer.<fn>`): the bank of the function
/// whose capsule `twin`'s `sh_info` names.
pub(crate) fn twin_bank<'a, 'd>(
    f: &'a InputFile<'d>,
    twin: &crate::cubin::Section<'_>,
) -> Option<&'a crate::cubin::Section<'d>> {
    let text = f
        .cubin
        .sections
        .get(twin.info as usize)
        .filter(|c| c.sh_type == SHT_CUDA_CAPMERC_TEXT)
        .and_then(|c| f.cubin.symbols.get(c.info as usize))
        .and_then(|sym| sym.section())?;
    // A `-r` output may attach several tables (and twins) to one function:
    // the k-th twin of the capsule pairs with the k-th bank of the text.
    let rank = f
        .cubin
        .sections
        .iter()
        .take_while(|c| c.index != twin.index)
        .filter(|c| c.sh_type == twin.sh_type && c.info == twin.info)
        .count();
    f.cubin
        .sections
        .iter()
        .filter(|b| b.sh_type == SHT_CUDA_CONSTANT2 && b.info == text)
        .nth(rank)
}

/// The entries of a Mercury relocation section (`Elf64_Rela`): (offset,
/// type, symbol index, addend).
pub(crate) fn rela_entries(data: &[u8]) -> impl Iterator<Item = (u64, u32, u32, i64)> + '_ {
    data.chunks_exact(24).map(|e| {
        let info = u64::from_le_bytes(e[8..16].try_into().expect("8"));
        (
            u64::from_le_bytes(e[0..8].try_into().expect("8")),
            info as u32,
            (info >> 32) as u32,
            i64::from_le_bytes(e[16..24].try_into().expect("8")),
        )
    })
}

/// Writes the values of resolved Mercury relocations of capsule `capsule`
/// (input section index of `f`) into the raw Mercury instructions the capsule
/// carries, as nvlink does.
///
/// A Mercury relocation's offset counts Mercury instructions, which do not
/// map one to one onto the capsule's (SASS) instructions; its SASS twin does:
/// ptxas writes, for the same operand, a SASS relocation with the same symbol
/// index and addend in `.rela.text.<fn>`, in the same order. So the k-th
/// Mercury relocation of a (symbol, addend) pair is the k-th SASS one, whose
/// instruction (offset / 16, not counting `!PT`-guarded instructions before
/// it) is the capsule instruction; the value goes at the
/// same byte of the 16-byte unit (`r_offset % 16`) in the instruction's raw
/// copy, with the Mercury type's own field (`ABS32`: 32 bits, `ABS16`: 16).
/// Implicit instructions (no raw copy in the capsule) get nothing: the
/// finalizer rebuilds them from the patched SASS. Capsules this module cannot
/// decode, and pairs whose counts differ, are left unpatched (traced).
fn write_capsule_operands(
    f: &InputFile<'_>,
    capsule: u32,
    operands: Vec<Operand>,
    plan: &mut Plan,
) {
    let sec = &f.cubin.sections[capsule as usize];
    let layout = match CapsuleLayout::parse(sec.data) {
        Ok(l) => l,
        Err(e) => {
            tracing::debug!(
                file = f.name,
                section = sec.name,
                "capsule left unpatched: {e}"
            );
            return;
        }
    };
    let Some(text) = f
        .cubin
        .symbols
        .get(sec.info as usize)
        .and_then(|s| s.section())
    else {
        return;
    };
    let Some(text_data) = f.cubin.sections.get(text as usize).map(|s| s.data) else {
        return;
    };
    if text_data.len() % 16 != 0 || layout.sass_len() as usize != text_data.len() / 16 {
        tracing::debug!(
            file = f.name,
            section = sec.name,
            "capsule runs do not cover the function's text: left unpatched"
        );
        return;
    }
    let mut sass: BTreeMap<(u32, i64), Vec<u64>> = BTreeMap::new();
    for rs in f
        .cubin
        .sections
        .iter()
        .filter(|s| s.is_reloc() && s.info == text)
    {
        for r in f.cubin.relocs(rs) {
            sass.entry((r.sym, r.addend)).or_default().push(r.offset);
        }
    }
    let mut merc: BTreeMap<(u32, i64), Vec<Operand>> = BTreeMap::new();
    for op in operands {
        merc.entry((op.sym, op.addend)).or_default().push(op);
    }
    for (key, mut ops) in merc {
        let Some(mut offsets) = sass.remove(&key).filter(|o| o.len() == ops.len()) else {
            tracing::debug!(
                file = f.name,
                section = sec.name,
                symbol = key.0,
                "capsule operand without its SASS relocation: left unpatched"
            );
            continue;
        };
        ops.sort_by_key(|o| o.offset);
        offsets.sort_unstable();
        for (op, sass_offset) in ops.iter().zip(offsets) {
            let width = match op.rtype {
                rm::R_MERCURY_ABS32 => 4,
                rm::R_MERCURY_ABS16 => 2,
                _ => continue,
            };
            let within = op.offset % 16;
            if within + width > 16 {
                continue;
            }
            let Some(raw) = u32::try_from(sass_offset / 16)
                .ok()
                .and_then(|i| layout.raw_instruction(i))
            else {
                continue; // implicit: rebuilt from the SASS
            };
            plan.patches[f.id.0 as usize].list(capsule).push(Patch {
                offset: raw as u64 + within,
                rtype: op.rtype,
                value: op.value,
                bank: None,
            });
        }
    }
}
