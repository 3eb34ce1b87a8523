//! Rules nvlink 13.0.88 applies only to Blackwell (sm_100 and later) links,
//! outside the Mercury section family (that is `mercury.rs`). Measured facts,
//! written down in `docs/blackwell.md`:
//!
//! - **Arch compatibility.** An input links into a target of the same SM
//!   whatever the `a`/`f` variants; into a *newer* SM of the same family
//!   (sm_100 → sm_103, sm_120 → sm_121, sm_80 → sm_86/89) unless the input
//!   was built for the arch-specific `a` variant. The variant is not in
//!   `e_flags`: ptxas records it in `.nv.compat` (`EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET`
//!   = 1 for `sm_XXa`); `sm_XXf` objects are identical to plain ones. A
//!   pre-Blackwell input in a Blackwell link first gets the warning "Output is
//!   limited to run on SM Arch 'NNN' only due to limitations in input file F",
//!   then the arch-mismatch error.
//! - **`.nv.compat`** of the output: the inputs' attributes, with
//!   `EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET` = 1 exactly when the *target* is an
//!   `a` variant (this one holds for sm_90a too), and `EICOMPAT_ATTR_CAN_FASTPATH_FINALIZE` kept (sm_90 and
//!   older drop it): the target SM's ptxas value ANDed with the values of the
//!   inputs that contribute live code (`output_fastpath_value`).
//! - No `.nv.rel.action` section.
//! - **`.debug_frame`** is rebuilt unit by unit (a unit: a CIE and its FDEs;
//!   ptxas writes one per function): units whose FDEs all describe dead
//!   functions, or lost their address because they describe a losing weak
//!   definition (`nvinfo::frame_reloc_dropped`), are dropped (sm_90 and
//!   older keep them, with the range cleared or kept),
//!   and every FDE's CIE pointer is the output offset of its unit's CIE (ptxas'
//!   relocation addends assume 0x70-byte units where the units are 0x68 long;
//!   nvlink writes the true offsets); a replaced weak copy's surviving FDE is
//!   rewritten to describe the winner (`frame_merge`).

use super::sections::{Body, Patch, Plan, Role};
use super::symbols::{SymRef, SymbolDb};
use super::{FileId, InputFile};
use crate::arch::{ArchVariant, SmArch};
use crate::cubin::compat::{self, EiCompat};
use crate::cubin::eiattr::{OwnedRecord, OwnedValue};
use crate::cubin::frame::FrameEntry;
use crate::cubin::Cubin;
use crate::elf::{SHT_CUDA_COMPAT, STT_FUNC, STT_SECTION};
use crate::fxhash::{HashMap, HashSet};
use crate::reloc::table::RelocType;

/// The `a`/`f` variant an input was compiled for, as far as the object tells
/// (`f` objects are indistinguishable from plain ones: reported as `Base`).
pub(crate) fn input_variant(cubin: &Cubin<'_>) -> ArchVariant {
    let specific = cubin
        .sections
        .iter()
        .filter(|s| s.sh_type == SHT_CUDA_COMPAT)
        .filter_map(|s| compat::parse(s.data).ok())
        .flatten()
        .any(|r| {
            r.attr == EiCompat::EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET
                && r.int_value().is_some_and(|v| v != 0)
        });
    if specific {
        ArchVariant::Specific
    } else {
        ArchVariant::Base
    }
}

/// SMs of a major version that link with no other of it, in or out:
/// sm_87 (Jetson Orin) and sm_88 (nvlink 13.0.88: an sm_80 or sm_86 object
/// does not link at sm_87 or sm_88, nor an sm_87 or sm_88 one at sm_89).
const ALONE_IN_MAJOR: &[u32] = &[87, 88];

/// Whether an object built for `input` (with `variant`) may be linked into an
/// image for `target` (nvlink 13.0.88, measured over sm_75..sm_121 and the
/// `a`/`f` variants): the same SM, or an earlier plain one of the same
/// major version but for [`ALONE_IN_MAJOR`].
pub(crate) fn arch_compatible(input: SmArch, variant: ArchVariant, target: SmArch) -> bool {
    if input.sm == target.sm {
        return true;
    }
    input.sm / 10 == target.sm / 10
        && input.sm < target.sm
        && variant != ArchVariant::Specific
        && !ALONE_IN_MAJOR.contains(&input.sm)
        && !ALONE_IN_MAJOR.contains(&target.sm)
}

/// The warning nvlink prints before rejecting a pre-Blackwell input in a
/// Blackwell link (`None` when it does not).
pub(crate) fn limited_output_warning(input: SmArch, target: SmArch, file: &str) -> Option<String> {
    (target.is_blackwell_or_later() && !input.is_blackwell_or_later()).then(|| {
        format!(
            "output is limited to run on SM Arch '{}' only due to limitations in input file '{file}'",
            target.sm
        )
    })
}

/// `EICOMPAT_ATTR_CAN_FASTPATH_FINALIZE` as ptxas 13.0.88 writes it for a
/// target SM (first byte of the 8-byte value; the rest is zero): 0x09 for
/// sm_100, 0x50 for sm_120, 0 otherwise (sm_103, sm_110, sm_121). ptxas
/// clears the sm_103 bit of an sm_100 object whose code holds an instruction
/// of [`FASTPATH_BLOCKING_OPCODES`] (double-precision arithmetic, float
/// division, `sqrtf`, ...); the output's value is `output_fastpath_value`.
pub(crate) fn fastpath_finalize_value(target: SmArch) -> [u8; 8] {
    let first = match target.sm {
        100 => 0x09,
        120 => 0x50,
        _ => 0,
    };
    [first, 0, 0, 0, 0, 0, 0, 0]
}

/// The bit of `CAN_FASTPATH_FINALIZE`'s first byte that says sm_100 code may
/// be fast-path finalized for sm_103 (ptxas sets it at sm_100 unless the code
/// holds an instruction that prevents it).
const FASTPATH_SM103: u8 = 0x08;

/// SASS opcodes (bits 0–11 of an sm_100 instruction: operation and operand
/// form) that clear [`FASTPATH_SM103`] for the function holding them, as
/// nvlink 13.0.88 decides it. Measured (`docs/blackwell.md` §1): nvlink
/// reads the *code*, not the inputs' attribute (an object patched from 0x09
/// to 0x01 still links to 0x09, and back), and patching one instruction's
/// opcode field through all 4096 values flips the result for exactly these
/// forms of `DMUL` (x28), `DADD` (x29), `DSETP` (x2a), `DFMA` (x2b) and
/// `FSETP` with an immediate (0x80b); the immediate forms of `DADD`, `DMUL`
/// and `DFMA` (0x429, 0x828, 0x82b, 0x42b), which ptxas writes as explicit
/// capsule instructions, from single-instruction kernels assembled by ptxas.
/// Checked against the attribute of 551 sm_100 objects (fixtures, difftest
/// programs, single-instruction kernels): an object has 0x01 exactly when one
/// of its functions holds one of these.
const FASTPATH_BLOCKING_OPCODES: [u16; 14] = [
    0x228, 0x229, 0x22a, 0x22b, 0x80b, 0xc28, 0xc2b, 0xe29, 0xe2a, 0xe2b, 0x429, 0x828, 0x82b,
    0x42b,
];

/// The 12-bit opcode fields of the 16-byte instructions of `code`.
fn sass_opcodes(code: &[u8]) -> impl Iterator<Item = u16> + '_ {
    code.chunks_exact(16)
        .map(|i| u16::from_le_bytes([i[0], i[1]]) & 0xfff)
}

/// Whether `code` holds an instruction of [`FASTPATH_BLOCKING_OPCODES`].
fn blocks_fastpath(code: &[u8]) -> bool {
    sass_opcodes(code).any(|op| FASTPATH_BLOCKING_OPCODES.contains(&op))
}

/// Whether `code` holds an instruction the table may not judge right: any
/// form of the double-precision operations (whether one blocks depends on more
/// than the opcode: `DSETP` with an immediate does not, `DSETP.MAX` with one
/// does), and `FSETP` in a form other than register, constant-bank or
/// uniform-register operand.
fn fastpath_uncertain(code: &[u8]) -> bool {
    sass_opcodes(code).any(|op| {
        matches!(op & 0x1ff, 0x28..=0x2b) || (op & 0x1ff == 0x0b && !matches!(op >> 9, 1 | 5 | 6))
    })
}

/// Whether [`output_fastpath_value`] needs an input's code: the target's
/// value has the sm_103 bit and the input's attribute does not.
pub(crate) fn fastpath_needs_code(target: SmArch, value: Option<&[u8]>) -> bool {
    fastpath_finalize_value(target)[0] & FASTPATH_SM103 != 0
        && value.is_none_or(|b| b.first().copied().unwrap_or(0) & FASTPATH_SM103 == 0)
}

/// One input file that contributes at least one live function, for
/// [`output_fastpath_value`].
pub(crate) struct FastpathInput<'a> {
    /// Its `CAN_FASTPATH_FINALIZE` value; `None` for CUDA 12 objects, which
    /// have none.
    pub value: Option<&'a [u8]>,
    /// The SASS of its functions in the output.
    pub live_code: Vec<&'a [u8]>,
    /// The SASS of its other functions (dead, or weak copies that lost).
    pub other_code: Vec<&'a [u8]>,
}

/// `EICOMPAT_ATTR_CAN_FASTPATH_FINALIZE` of a Blackwell output. `inputs` has
/// one item per input file that contributes at least one live function. The
/// result is the target SM's value (`fastpath_finalize_value`) ANDed byte by
/// byte with every present value, but for the sm_103 bit
/// ([`FASTPATH_SM103`]), which nvlink decides per live *function* from its
/// code; all zero when no input contributes code.
///
/// Measured with nvlink 13.0.88 (`docs/blackwell.md` §1): ptxas writes 0x09
/// at sm_100 for most code and 0x01 for code holding double-precision
/// arithmetic or an `FSETP` with an immediate (float division, `sqrtf`,
/// `powf`, ...); an sm_100 link of a 0x01 and a 0x09 object writes 0x01, in
/// either order, and 0x09 when the 0x01 object's offending functions are
/// dead (never called, kernels left out by `-kernels-used` or host-reference
/// pruning); a link of only data-only objects writes 0; an sm_103 link of
/// sm_100 objects writes 0. The attribute of an input is an upper bound:
/// a function of a 0x09 object keeps the bit; one of a 0x01 object keeps it
/// only when the object's other (dead) functions hold a blocking instruction
/// ([`FASTPATH_BLOCKING_OPCODES`], which then explains the 0x01) and it holds
/// none the table may misjudge ([`fastpath_uncertain`]); a CUDA 12 object
/// (no attribute) keeps it unless a live function holds a blocking
/// instruction. So culink never claims the bit where the inputs' own values
/// and the measured table do not both allow it.
pub(crate) fn output_fastpath_value<'a>(
    target: SmArch,
    inputs: impl IntoIterator<Item = FastpathInput<'a>>,
) -> [u8; 8] {
    let mut value = fastpath_finalize_value(target);
    let mut any = false;
    let mut sm103 = true;
    for input in inputs {
        any = true;
        if let Some(bytes) = input.value {
            for (i, v) in value.iter_mut().enumerate() {
                let keep = if i == 0 { FASTPATH_SM103 } else { 0 };
                *v &= bytes.get(i).copied().unwrap_or(0) | keep;
            }
        }
        let first = input.value.map(|b| b.first().copied().unwrap_or(0));
        let functions_allow = match first {
            Some(v) if v & FASTPATH_SM103 != 0 => true,
            None => !input.live_code.iter().any(|c| blocks_fastpath(c)),
            Some(_) => {
                input.other_code.iter().any(|c| blocks_fastpath(c))
                    && !input.live_code.iter().any(|c| fastpath_uncertain(c))
            }
        };
        sm103 &= functions_allow;
    }
    if !sm103 {
        value[0] &= !FASTPATH_SM103;
    }
    if any {
        value
    } else {
        [0; 8]
    }
}

/// Applies nvlink's target rules to the merged `.nv.compat` records of the
/// output: the accelerator-target flag follows the *target's* variant (any
/// arch: an `sm_90a` link of `sm_90` objects writes 1, an `sm_90` link of
/// `sm_90a` objects 0), and on Blackwell the fast-path finalization value is
/// `fastpath` (from `output_fastpath_value`).
pub(crate) fn adjust_compat(
    merged: &mut Vec<OwnedRecord<EiCompat>>,
    target: SmArch,
    fastpath: [u8; 8],
) {
    let has = |m: &Vec<OwnedRecord<EiCompat>>, a: EiCompat| m.iter().any(|r| r.attr == a);
    // CUDA 12 objects lack some attributes nvlink 13 always writes (measured with
    // CUDA 12.9 ptxas objects: sm_90 gets the accelerator target; sm_100 also
    // the Mercury ISA version 1.0 and the fast-path value).
    if !has(merged, EiCompat::EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET) {
        merged.insert(
            0,
            OwnedRecord::bval(EiCompat::EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET, 0),
        );
    }
    if target.is_blackwell_or_later() {
        if !has(
            merged,
            EiCompat::EICOMPAT_ATTR_MERCURY_ISA_MAJOR_MINOR_VERSION,
        ) {
            merged.push(OwnedRecord::hval(
                EiCompat::EICOMPAT_ATTR_MERCURY_ISA_MAJOR_MINOR_VERSION,
                0x100,
            ));
        }
        if !has(merged, EiCompat::EICOMPAT_ATTR_CAN_FASTPATH_FINALIZE) {
            merged.push(OwnedRecord::sval(
                EiCompat::EICOMPAT_ATTR_CAN_FASTPATH_FINALIZE,
                Vec::new(),
            ));
        }
    }
    for r in merged.iter_mut() {
        match r.attr {
            EiCompat::EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET => {
                r.value = OwnedValue::Byte(u8::from(target.variant == ArchVariant::Specific));
            }
            EiCompat::EICOMPAT_ATTR_CAN_FASTPATH_FINALIZE if target.is_blackwell_or_later() => {
                r.value = OwnedValue::Bytes(fastpath.to_vec());
            }
            _ => {}
        }
    }
}

/// The `.note.nv.cuinfo` nvlink writes when no input has one (CUDA 12 objects
/// carry `.note.nv.cuver` instead, which nvlink drops): note version 2, the
/// lowest input SM as virtual SM, CUDA API version 0x82 (13.0). `None` when an
/// input has a cuinfo note. Its `sh_link` (the tkinfo section) is the caller's.
pub(crate) fn synthesized_cuinfo(
    files: &[InputFile<'_>],
    target: SmArch,
) -> Option<super::sections::OutSection> {
    if files
        .iter()
        .any(|f| f.cubin.section_by_name(".note.nv.cuinfo").is_some())
    {
        return None;
    }
    let vsm = files
        .iter()
        .map(|f| f.cubin.arch().sm)
        .min()
        .unwrap_or(target.sm) as u16;
    let mut desc = Vec::with_capacity(32);
    desc.extend_from_slice(&12u32.to_le_bytes());
    desc.extend_from_slice(&8u32.to_le_bytes());
    desc.extend_from_slice(&1000u32.to_le_bytes());
    desc.extend_from_slice(b"NVIDIA Corp\0");
    desc.extend_from_slice(&2u16.to_le_bytes());
    desc.extend_from_slice(&vsm.to_le_bytes());
    desc.extend_from_slice(&0x82u32.to_le_bytes());
    let mut o =
        super::sections::OutSection::new(".note.nv.cuinfo", crate::elf::SHT_NOTE, Role::CuInfo);
    // `SHF_INFO_LINK` and `sh_info` come with the `.nv.compat` section
    // (`nvinfo::create_sections`): sm_75-89 images of ABI 7 objects have
    // none, and there the note has neither (measured with CUDA 11.8-12.8
    // objects at sm_80).
    o.flags = 0x0100_0000;
    o.align = 4;
    o.info = super::sections::InfoTo::Raw(0);
    o.section_symbol = true;
    o.size = desc.len() as u64;
    o.body = Body::Bytes(desc);
    Some(o)
}

/// Alignment of the first texture/surface handle slot after the largest
/// parameter bank: 16 on Blackwell (measured with banks of 0x388..0x394 bytes:
/// slots from 0x390, 0x390, 0x390, 0x3a0), 4 before.
pub(crate) fn handle_slot_align(arch: SmArch) -> u64 {
    if arch.is_blackwell_or_later() {
        16
    } else {
        4
    }
}

/// `EIATTR_BINDLESS_TEXTURE_BANK` and `EIATTR_BINDLESS_SURFACE_BANK` (bank 0),
/// which nvlink appends to the `.nv.info.<k>` of every Blackwell kernel given
/// handle slots in its parameter bank.
pub(crate) fn bindless_bank_records(
    plan: &Plan,
    func: &super::live::Func,
) -> Vec<OwnedRecord<crate::cubin::eiattr::EiAttr>> {
    use crate::cubin::eiattr::EiAttr;
    if !plan.arch.is_blackwell_or_later() {
        return Vec::new();
    }
    let Some(text) = plan.placement[func.key.file.0 as usize][func.key.text as usize] else {
        return Vec::new();
    };
    if !plan.tex.has_slots(text.out) {
        return Vec::new();
    }
    vec![
        OwnedRecord::bval(EiAttr::EIATTR_BINDLESS_TEXTURE_BANK, 0),
        OwnedRecord::bval(EiAttr::EIATTR_BINDLESS_SURFACE_BANK, 0),
    ]
}

/// On Blackwell, nvlink gives every function's `.nv.info.<fn>` (and its
/// Mercury twin) an `EIATTR_MERCURY_ISA_VERSION`: objects from CUDA 12.9 ptxas
/// have none per function and get 0x100 ("1.0"); CUDA 13 objects carry 0x101.
pub(crate) fn add_default_isa_version(
    arch: SmArch,
    records: &mut Vec<OwnedRecord<crate::cubin::eiattr::EiAttr>>,
) {
    use crate::cubin::eiattr::EiAttr;
    if arch.is_blackwell_or_later()
        && !records
            .iter()
            .any(|r| r.attr == EiAttr::EIATTR_MERCURY_ISA_VERSION)
    {
        records.push(OwnedRecord::hval(EiAttr::EIATTR_MERCURY_ISA_VERSION, 0x100));
    }
}

/// Rebuilds the merged `.debug_frame` of a Blackwell image (see the module
/// documentation): dead functions' units dropped, CIE pointers recomputed,
/// kept relocations moved with their entries. Runs after `relocate::classify`.
pub(crate) fn rebuild_debug_frame(
    files: &[InputFile<'_>],
    db: &SymbolDb<'_>,
    plan: &mut Plan,
) -> crate::error::Result<()> {
    if !plan.arch.is_blackwell_or_later() {
        return Ok(());
    }
    let Some(id) = debug_section(plan, ".debug_frame") else {
        return Ok(());
    };
    let Body::Pieces(pieces) = plan.sec(id).body.clone() else {
        return Ok(());
    };
    // Every piece must parse; otherwise keep nvlink-agnostic concatenation.
    let mut parsed = Vec::with_capacity(pieces.len());
    for p in &pieces {
        let f = &files[p.file.0 as usize];
        match crate::cubin::frame::entries(f.cubin.sections[p.section as usize].data) {
            Some(e) => parsed.push(e),
            None => return Ok(()),
        }
    }
    // Copies a later definition replaced, per winner (one is merged, see
    // below; with more nvlink's merge is not followed).
    let mut replaced_copies: HashMap<SymRef, usize> = HashMap::default();
    for &r in &db.replaced {
        if let Some(d) = db.resolve(r).filter(|&d| d != r) {
            *replaced_copies.entry(d).or_default() += 1;
        }
    }
    let mut bytes: Vec<u8> = Vec::new();
    // Functions (resolved definitions) whose frame was written, and the
    // input whose unit described each first.
    let mut described: HashMap<SymRef, FileId> = HashMap::default();
    // (old output offset range start, end, new start) of every kept entry.
    let mut moved: Vec<(u64, u64, u64)> = Vec::new();
    for (p, entries) in pieces.iter().zip(&parsed) {
        let f = &files[p.file.0 as usize];
        let sec = &f.cubin.sections[p.section as usize];
        // Function symbol of each FDE, from the input relocation at its
        // initial_location (entry start + 20).
        let mut loc_sym: std::collections::HashMap<u64, u32> = Default::default();
        for rs in f
            .cubin
            .sections
            .iter()
            .filter(|r| r.is_reloc() && r.info == sec.index)
        {
            for r in f.cubin.relocs(rs) {
                let sym = &f.cubin.symbols[r.sym as usize];
                // A losing definition's dropped address leaves its FDE
                // without a function: the unit goes like a dead one's.
                if sym.ty() != STT_SECTION
                    && !super::nvinfo::frame_reloc_dropped(db, f, r.sym, r.is_rela)
                {
                    loc_sym.insert(r.offset, r.sym);
                }
            }
        }
        let live_fn = |sym: u32| -> bool {
            db.resolve(SymRef {
                file: p.file,
                index: sym,
            })
            .is_some_and(|d| {
                files[d.file.0 as usize].cubin.symbols[d.index as usize]
                    .section()
                    .is_some_and(|s| plan.placement[d.file.0 as usize][s as usize].is_some())
            })
        };
        // Units: a CIE and the FDEs after it.
        let mut units: Vec<Vec<FrameEntry>> = Vec::new();
        for e in entries {
            if e.is_cie || units.is_empty() {
                units.push(Vec::new());
            }
            units.last_mut().expect("pushed").push(*e);
        }
        let data = patched_piece(files, plan, p)?;
        // A losing (weak) definition's frame, when the winner's was already
        // written, goes (nvlink 13.0.88, fixture `strong_weak`: the strong
        // `wf` first, then the weak one's unit is dropped, its CIE with it).
        // The other order keeps the loser's frame: see docs/blackwell.md §5.
        let duplicate = |e: &FrameEntry, described: &HashMap<SymRef, FileId>| -> bool {
            loc_sym.get(&(e.start as u64 + 20)).is_some_and(|&s| {
                let here = SymRef {
                    file: p.file,
                    index: s,
                };
                db.resolve(here)
                    .is_some_and(|d| d != here && described.contains_key(&d))
            })
        };
        for unit in units {
            let fdes: Vec<&FrameEntry> = unit
                .iter()
                .filter(|e| !e.is_cie && !duplicate(e, &described))
                .collect();
            let live = (fdes.is_empty() && unit.iter().all(|e| e.is_cie))
                || fdes.iter().any(|e| {
                    loc_sym
                        .get(&(e.start as u64 + 20))
                        .is_some_and(|&s| live_fn(s))
                });
            if !live {
                continue;
            }
            for e in &fdes {
                if let Some(&s) = loc_sym.get(&(e.start as u64 + 20)) {
                    let here = SymRef {
                        file: p.file,
                        index: s,
                    };
                    if let Some(d) = db.resolve(here) {
                        described.entry(d).or_insert(p.file);
                    }
                }
            }
            // The winner's own unit after a replaced copy's surviving frame
            // (which already describes the winner): nvlink writes the
            // function's Mercury CIE and an FDE cut short (see
            // [`mercury_unit`]).
            let winner_described_before = fdes.len() == 1
                && loc_sym.get(&(fdes[0].start as u64 + 20)).is_some_and(|&s| {
                    let here = SymRef {
                        file: p.file,
                        index: s,
                    };
                    db.is_winner(here) && described.get(&here).is_some_and(|&by| by != p.file)
                });
            if winner_described_before {
                let fde = fdes[0];
                let sym = loc_sym[&(fde.start as u64 + 20)];
                if let Some((cie, range)) = mercury_unit(f, sym) {
                    let cie_at = bytes.len() as u64;
                    bytes.extend_from_slice(cie);
                    let new = bytes.len() as u64;
                    bytes.extend_from_slice(&[0xff; 4]);
                    bytes.extend_from_slice(&CUT_FDE_LEN.to_le_bytes());
                    bytes.extend_from_slice(&cie_at.to_le_bytes());
                    bytes.extend_from_slice(&data[fde.start + 20..fde.start + 28]);
                    bytes.extend_from_slice(&range.to_le_bytes());
                    bytes.extend_from_slice(&[0; 4]);
                    // The initial location's relocation moves with it.
                    moved.push((
                        p.offset + fde.start as u64,
                        p.offset + fde.start as u64 + 28,
                        new,
                    ));
                    continue;
                }
            }
            let mut cie_out: Option<u64> = None;
            for e in unit
                .iter()
                .filter(|e| e.is_cie || fdes.iter().any(|f| f.start == e.start))
            {
                let new = bytes.len() as u64;
                let mut chunk = data[e.start..e.end].to_vec();
                // A replaced copy's surviving frame, which describes the
                // winner now: nvlink rewrites it with the winner's range and
                // both copies' rows (`frame_merge`). (nvlink -r rewrites it
                // otherwise, not followed: fixture `relocatable_frames`.)
                let merge = !e.is_cie && !plan.relocatable;
                if let (true, Some(&s)) = (merge, loc_sym.get(&(e.start as u64 + 20))) {
                    let here = SymRef {
                        file: p.file,
                        index: s,
                    };
                    let winner = db.resolve(here).filter(|&d| {
                        d != here
                            && db.replaced.contains(&here)
                            && replaced_copies.get(&d) == Some(&1)
                    });
                    if let Some(d) = winner {
                        let wf = &files[d.file.0 as usize];
                        if let Some(m) = super::frame_merge::merged_fde(f, s, &chunk, wf, d.index) {
                            chunk = m;
                        }
                    }
                }
                if e.is_cie {
                    cie_out = Some(new);
                } else if let Some(c) = cie_out {
                    chunk[12..20].copy_from_slice(&c.to_le_bytes());
                }
                bytes.extend_from_slice(&chunk);
                moved.push((p.offset + e.start as u64, p.offset + e.end as u64, new));
            }
        }
    }
    replace_contents(plan, id, &moved, bytes);
    Ok(())
}

/// Length field of the FDE nvlink writes in [`mercury_unit`]'s case: the
/// CIE pointer, initial location and range (8 bytes each) and 4 bytes of
/// `DW_CFA_nop`, no instructions.
const CUT_FDE_LEN: u64 = 0x1c;

/// The Mercury frame of `f`'s function symbol `sym` (`.nv.merc.symtab` is
/// index-aligned with `.symtab`): its CIE's bytes and the FDE's address
/// range. nvlink 13.0.88 on sm_100+ writes these for a definition that
/// replaced an earlier input's weak copy whose frame survives (already
/// describing the winner): the Mercury CIE (code alignment 1) in place of
/// the function's own CIE, then an FDE of the Mercury range without
/// instructions (measured on the fixture `weak_strong`, also with other
/// functions in the winner's input; the same in difftest seeds 40044, 70036,
/// whose replaced copy's own FDE nvlink also rewrites: `frame_merge`,
/// docs/blackwell.md §5). `None` when the Mercury frame is not found.
fn mercury_unit<'a>(f: &'a InputFile<'_>, sym: u32) -> Option<(&'a [u8], u64)> {
    let (cie, fde) = super::frame_merge::fde_entries(f, ".nv.merc.debug_frame", sym)?;
    let range = u64::from_le_bytes(fde.get(28..36)?.try_into().ok()?);
    Some((cie, range))
}

/// `.nv_debug_info_reg_sass` (nvcc `-G` objects) of a function whose code is
/// not in the output: nvlink 13.0.88 on sm_100+ zeroes the code range of each
/// of its register entries and keeps the rest (measured at sm_100/120, with
/// and without `-g`: the losing copy of a template instantiated in two `-G`
/// objects, fixture `cu_debug_shared_g`; sm_75-90 copy the section as is,
/// and the Mercury twin is copied as is). The section is, per function: its
/// name (NUL-terminated), a `u32` count, then that many entries of a `u32`,
/// the register's name (NUL-terminated), a `u32` (location kind) and the
/// `u32` start and end of the code range. A contribution this reader cannot
/// walk to its end is left as is.
pub(crate) fn zero_dead_register_ranges(files: &[InputFile<'_>], plan: &mut Plan) {
    if !plan.arch.is_blackwell_or_later() {
        return;
    }
    let has_blocks = |f: &InputFile<'_>| {
        f.cubin
            .sections
            .iter()
            .any(|s| s.name == ".nv_debug_info_reg_sass")
    };
    if !files.iter().any(has_blocks) {
        return;
    }
    // nvlink finds a block's function by name: the first input (in link
    // order) whose function of that name is in the output owns it, and the
    // blocks of later inputs' functions of that name — local functions of
    // one name, such as the `__assert_fail` every `-G` object using
    // `assert` defines — are treated as dead code's (measured at sm_100/120
    // with two and three such objects, fixture `cu_debug_assert_twins`).
    let mut owner: HashMap<&str, FileId> = HashMap::default();
    for f in files {
        let fid = f.id.0 as usize;
        for s in &f.cubin.symbols {
            let live = s.ty() == STT_FUNC
                && s.section()
                    .is_some_and(|t| matches!(plan.placement[fid].get(t as usize), Some(Some(_))));
            if live {
                owner.entry(s.name).or_insert(f.id);
            }
        }
    }
    for f in files {
        let fid = f.id.0 as usize;
        for sec in f
            .cubin
            .sections
            .iter()
            .filter(|s| s.name == ".nv_debug_info_reg_sass")
        {
            if plan.placement[fid][sec.index as usize].is_none() {
                continue;
            }
            let Some(blocks) = register_blocks(sec.data) else {
                continue;
            };
            // The functions this object defines whose code is not in the
            // output (a block names its function: this object's definition).
            let dead: HashSet<&str> = f
                .cubin
                .symbols
                .iter()
                .filter(|s| {
                    s.ty() == STT_FUNC
                        && s.section().is_some_and(|t| {
                            matches!(plan.placement[fid].get(t as usize), Some(None))
                        })
                })
                .map(|s| s.name)
                .collect();
            for (name, ranges) in blocks {
                let taken = owner.get(name).is_some_and(|&o| o != f.id);
                if !dead.contains(name) && !taken {
                    continue;
                }
                let list = plan.patches[fid].list(sec.index);
                for at in ranges {
                    for offset in [at, at + 4] {
                        list.push(Patch {
                            offset,
                            rtype: RelocType::R_CUDA_32.0,
                            value: 0,
                            bank: None,
                        });
                    }
                }
            }
        }
    }
}

/// The function blocks of a `.nv_debug_info_reg_sass` contribution: each
/// function's name and the offsets of its entries' code ranges; `None` when
/// the data is not that format to its end.
fn register_blocks(data: &[u8]) -> Option<Vec<(&str, Vec<u64>)>> {
    let cstr = |at: usize| -> Option<(&[u8], usize)> {
        let rest = data.get(at..)?;
        let n = rest.iter().position(|&b| b == 0)?;
        Some((&rest[..n], at + n + 1))
    };
    let u32_at = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(data.get(at..at + 4)?.try_into().ok()?))
    };
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < data.len() {
        let (name, next) = cstr(at)?;
        let name = std::str::from_utf8(name).ok()?;
        let count = u32_at(next)?;
        at = next + 4;
        let mut ranges = Vec::new();
        for _ in 0..count {
            let (_, next) = cstr(at.checked_add(4)?)?;
            let range = next.checked_add(4)?;
            data.get(range..range.checked_add(8)?)?;
            ranges.push(range as u64);
            at = range + 8;
        }
        out.push((name, ranges));
    }
    Some(out)
}

/// The merged debug section `name` of the output, when it is built from pieces.
pub(super) fn debug_section(plan: &Plan, name: &str) -> Option<super::OutSecId> {
    plan.sections
        .iter()
        .position(|s| s.role == Role::Debug && s.name == name)
        .map(|i| super::OutSecId(i as u32))
}

/// The bytes of one contribution to a debug section with its resolved
/// relocations applied: a section rebuilt from them is written as bytes, so
/// the write applies no patches to it. An unencodable value is an error, as
/// in the write.
pub(super) fn patched_piece(
    files: &[InputFile<'_>],
    plan: &Plan,
    p: &super::sections::Piece,
) -> crate::error::Result<Vec<u8>> {
    let f = &files[p.file.0 as usize];
    let sec = &f.cubin.sections[p.section as usize];
    let mut data = sec.data.to_vec();
    for patch in plan.patches[p.file.0 as usize].get(p.section) {
        crate::reloc::apply::apply_resolved(
            patch.rtype,
            &mut data[patch.offset as usize..],
            patch.value,
            patch.bank.map(u64::from),
        )
        .map_err(|e| e.in_file(f.name).in_section(sec.name).at(patch.offset))?;
    }
    Ok(data)
}

/// Makes `bytes` the contents of rebuilt section `id`; its kept relocations
/// move with their bytes (`moved`: old start, old end, new start of every
/// kept range, ascending) and those of dropped bytes go.
pub(super) fn replace_contents(
    plan: &mut Plan,
    id: super::OutSecId,
    moved: &[(u64, u64, u64)],
    bytes: Vec<u8>,
) {
    plan.kept.retain_mut(|k| {
        if k.target != id {
            return true;
        }
        let i = moved.partition_point(|m| m.1 <= k.offset);
        match moved.get(i).filter(|m| k.offset >= m.0) {
            Some(m) => {
                k.offset = k.offset - m.0 + m.2;
                true
            }
            None => false,
        }
    });
    let s = plan.sec_mut(id);
    s.size = bytes.len() as u64;
    s.body = Body::Bytes(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_blocks_walk_and_reject_truncation() {
        // f: 2 entries; g: 0 entries.
        let mut d = b"f\0".to_vec();
        d.extend_from_slice(&2u32.to_le_bytes());
        for (x, reg, lo, hi) in [
            (0u32, &b"%r1\0"[..], 0x10u32, 0x20u32),
            (1, b"%p2\0", 0x30, 0x40),
        ] {
            d.extend_from_slice(&x.to_le_bytes());
            d.extend_from_slice(reg);
            d.extend_from_slice(&0x0500_0000u32.to_le_bytes());
            d.extend_from_slice(&lo.to_le_bytes());
            d.extend_from_slice(&hi.to_le_bytes());
        }
        d.extend_from_slice(b"g\0");
        d.extend_from_slice(&0u32.to_le_bytes());
        let blocks = register_blocks(&d).expect("well formed");
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0].0, "f");
        // Entry 0: name at 6 + 4 = 10, ranges after "%r1\0" and the kind.
        assert_eq!(blocks[0].1, vec![18, 38]);
        assert_eq!(u32::from_le_bytes(d[18..22].try_into().unwrap()), 0x10);
        assert_eq!(u32::from_le_bytes(d[38..42].try_into().unwrap()), 0x30);
        assert!(blocks[1].1.is_empty());
        for cut in 1..d.len() - 6 {
            assert!(register_blocks(&d[..cut]).is_none(), "cut at {cut}");
        }
    }

    #[test]
    fn compat_matrix() {
        let s = SmArch::new;
        let (b, a) = (ArchVariant::Base, ArchVariant::Specific);
        assert!(arch_compatible(s(100), a, s(100)));
        assert!(arch_compatible(s(100), b, s(103)));
        assert!(!arch_compatible(s(100), a, s(103)));
        assert!(!arch_compatible(s(103), b, s(100)));
        assert!(arch_compatible(s(120), b, s(121)));
        assert!(!arch_compatible(s(100), b, s(110)));
        assert!(!arch_compatible(s(100), b, s(120)));
        assert!(!arch_compatible(s(90), b, s(100)));
        assert!(arch_compatible(s(80), b, s(86)));
        assert!(!arch_compatible(s(75), b, s(80)));
        // sm_8x: 80 and 86 link at 89, nothing else crosses (nvlink 13.0.88
        // over sm_80/86/87/88/89 objects and targets).
        for (input, target, ok) in [
            (80, 89, true),
            (86, 89, true),
            (80, 87, false),
            (86, 87, false),
            (80, 88, false),
            (87, 88, false),
            (87, 89, false),
            (88, 89, false),
            (87, 87, true),
            (88, 88, true),
        ] {
            assert_eq!(
                arch_compatible(s(input), b, s(target)),
                ok,
                "sm_{input} at sm_{target}"
            );
        }
        assert!(limited_output_warning(s(90), s(100), "b.o").is_some());
        assert!(limited_output_warning(s(80), s(90), "b.o").is_none());
    }

    /// Expected values measured with nvlink 13.0.88 (see `output_fastpath_value`).
    #[test]
    fn fastpath_value() {
        // Opcode fields (one 16-byte instruction each).
        const IADD: u16 = 0x210;
        const DADD: u16 = 0x229;
        const FSETP_IMM: u16 = 0x80b;
        const FSETP_REG: u16 = 0x20b;
        const DSETP_IMM: u16 = 0x42a;
        // An input: its attribute's first byte (None: CUDA 12, no attribute),
        // the opcodes of its live code, those of its other code.
        type In = (Option<u8>, &'static [u16], &'static [u16]);
        type Attr = [u8; 8];
        type Insn = [u8; 16];
        #[rustfmt::skip]
        let cases: &[(&str, u32, &[In], u8)] = &[
            ("a 0x01 input with live D-ops wins, first", 100,
             &[(Some(0x01), &[DADD], &[]), (Some(0x09), &[IADD], &[])], 0x01),
            ("a 0x01 input with live D-ops wins, second", 100,
             &[(Some(0x09), &[IADD], &[]), (Some(0x01), &[DADD], &[])], 0x01),
            ("one 0x09 input", 100, &[(Some(0x09), &[IADD], &[])], 0x09),
            ("the 0x01 input's D-op is dead", 100,
             &[(Some(0x01), &[IADD, FSETP_REG], &[DADD])], 0x09),
            ("the 0x01 input's FSETP-immediate is dead", 100,
             &[(Some(0x01), &[IADD], &[FSETP_IMM])], 0x09),
            ("the dead code does not explain the 0x01", 100,
             &[(Some(0x01), &[IADD], &[IADD])], 0x01),
            ("the live code holds a D-op the table may misjudge", 100,
             &[(Some(0x01), &[DSETP_IMM], &[DADD])], 0x01),
            ("sm_120: the attribute, whatever the code", 120,
             &[(Some(0x50), &[DADD], &[]), (Some(0x50), &[IADD], &[])], 0x50),
            ("an sm_103 link of sm_100 objects", 103, &[(Some(0x09), &[IADD], &[])], 0),
            ("CUDA 12 objects: the code decides (dead D-op)", 100,
             &[(None, &[IADD], &[]), (None, &[FSETP_REG], &[DADD])], 0x09),
            ("CUDA 12 objects: the code decides (live D-op)", 100,
             &[(None, &[IADD], &[]), (None, &[DADD], &[])], 0x01),
            ("no input contributes code", 100, &[], 0),
        ];
        let insn = |op: &u16| {
            let mut i = [0u8; 16];
            i[..2].copy_from_slice(&op.to_le_bytes());
            i
        };
        for (what, sm, ins, want) in cases {
            let owned: Vec<(Attr, Vec<Insn>, Vec<Insn>)> = ins
                .iter()
                .map(|(v, live, other)| {
                    let mut value = [0u8; 8];
                    value[0] = v.unwrap_or(0);
                    (
                        value,
                        live.iter().map(insn).collect(),
                        other.iter().map(insn).collect(),
                    )
                })
                .collect();
            let inputs: Vec<_> = ins
                .iter()
                .zip(&owned)
                .map(|((v, _, _), (value, live, other))| FastpathInput {
                    value: v.map(|_| &value[..]),
                    live_code: live.iter().map(|c| &c[..]).collect(),
                    other_code: other.iter().map(|c| &c[..]).collect(),
                })
                .collect();
            assert_eq!(
                output_fastpath_value(SmArch::new(*sm), inputs)[0],
                *want,
                "{what}"
            );
        }
    }
}
