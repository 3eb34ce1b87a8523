//! What nvlink 13.0.88's finalizer changes in kernels at sm_100 and later
//! that culink can redo as edits of the input code (measured; rules and
//! words in `docs/blackwell.md` §8):
//!
//! - **Exit barriers.** In a debug link (`-g`) every kernel gets
//!   `MEMBAR.SC.VC; ERRBAR; CGAERRBAR`, predicated as the `EXIT` is, in front
//!   of every `EXIT`. In a link with an object built with `-G` (ptxas marks
//!   it with `EIATTR_GEN_ERRBAR_AT_EXIT` in `.nv.info` and writes the three
//!   itself) kernels that call get the three, leaf kernels `ERRBAR;
//!   CGAERRBAR` (a `-G` leaf kernel loses its `MEMBAR.SC.VC`). Barriers
//!   already there are kept. Final and `-r` links.
//! - **Fences.** In final links without `-g`, kernels that do not call lose
//!   the `@!PT LDS RZ, [RZ]` fillers ptxas puts in front of a `MEMBAR` in
//!   `-rdc` code, and a `MEMBAR.ALL.CTA` right before a GPU- or system-wide
//!   `MEMBAR` (what whole-program ptxas writes).
//!
//! (The finalizer's re-allocation of scoreboards is not redone: it needs a
//! scheduler, not an edit.)
//!
//! This phase runs before the inputs are parsed for the link: it rewrites
//! the images whose kernels change into new images, as if ptxas had written
//! them so, and every later phase links them unchanged. Moving instructions
//! moves everything that points into the kernel's text:
//!
//! - the text ends at roundup(end of the final `BRA` + 0x80, 0x80) as ptxas
//!   pads it;
//! - PC-relative targets (`BRA`, `BRA.U`, `BRX`, `BSSY`, `CALL.REL`,
//!   `WARPSYNC.COLLECTIVE`) and relocation addends against the kernel
//!   (return addresses) move to where their label went: a target that was
//!   an `EXIT` becomes its first barrier;
//! - relocation offsets and the `*_INSTR_OFFSETS` attributes move with
//!   their instruction (`EIATTR_EXIT_INSTR_OFFSETS` names the `EXIT`), the
//!   branches of `EIATTR_INDIRECT_BRANCH_TARGETS` too, its targets and the
//!   jump tables in `.nv.constant2.<k>` as labels;
//! - the symbol size, the `.debug_frame` address range and advances, the
//!   line tables' address advances (`.debug_line`, `.nv_debug_line_sass`;
//!   a row whose advance changes is written as ptxas writes rows: a special
//!   opcode for a one-instruction advance, else `DW_LNS_advance_line`,
//!   `DW_LNS_advance_pc`, `DW_LNS_copy`), nvcc `-G`'s register ranges
//!   (`.nv_debug_info_reg_sass`);
//! - the capsule (`.nv.capmerc.text.<k>`, `capsule::edit`): an `EXIT`'s
//!   implicit instruction gets a span with a `0x01` item naming its
//!   predicates, spans over dropped or added instructions change, the
//!   trailer counts the new padding. The Mercury side (its symbol table,
//!   relocations, frames and line tables, in Mercury instruction units) does
//!   not change.
//!
//! A kernel whose code is not understood here (another form of `EXIT`, a
//! `RET`, a control instruction, capsule item, line-table or frame operation
//! not measured) keeps ptxas' code, as before this phase: valid, only not
//! nvlink's (traced at debug level).

use super::capsule;
use super::load::{Image, ImageBytes};
use crate::arch::SmArch;
use crate::cubin::eiattr::{EiAttr, EiFormat, Iter};
use crate::cubin::{le, Cubin};
use crate::elf::{
    SHT_CUDA_CAPMERC_TEXT, SHT_CUDA_INFO, SHT_PROGBITS, SHT_REL, SHT_RELA, STO_CUDA_ENTRY,
    STT_FUNC, STT_SECTION,
};
use crate::fxhash::{HashMap, HashSet};
use rayon::prelude::*;

mod scoreboards;

/// Bytes of one SASS instruction.
const SLOT: u64 = 16;
/// The opcode bits of an instruction's first word.
const OPCODE: u64 = 0xfff;
/// The guard predicate (bits 12–15: register, then negation).
const GUARD_SHIFT: u32 = 12;
const GUARD: u64 = 0xf << GUARD_SHIFT;

const OP_EXIT: u64 = 0x94d;
const OP_RET: u64 = 0x950;
const OP_BRA: u64 = 0x947;
/// `BRA.U` (a uniform predicate operand).
const OP_BRA_UNIFORM: u64 = 0x547;
const OP_BSYNC: u64 = 0x941;
const OP_YIELD: u64 = 0x946;
const OP_BMOV_CLEAR: u64 = 0x355;
const OP_BMOV: u64 = 0x356;
const OP_BPT: u64 = 0x95c;
/// `BREAK B<n>` (no target).
const OP_BREAK: u64 = 0x942;
const OP_KILL: u64 = 0x95b;
/// `NANOSLEEP` with an immediate and with a register.
const OP_NANOSLEEP: u64 = 0x95d;
const OP_NANOSLEEP_REGISTER: u64 = 0x35d;
/// `RPCMOV.32 Rpc.LO, R<n>` and `RPCMOV.32 R<n>, Rpc.LO` (ptxas uses the
/// return-PC register as a spare 32-bit register; the immediate forms are
/// not measured).
const OP_RPCMOV_TO: u64 = 0x352;
const OP_RPCMOV_FROM: u64 = 0x353;
/// `WARPSYNC` with a register mask.
const OP_WARPSYNC_REGISTER: u64 = 0x348;
const OP_BRX: u64 = 0x949;
/// `BRXU`: `BRX` through a uniform register (sm_120's switch tables).
const OP_BRXU: u64 = 0x958;
const OP_BSSY: u64 = 0x945;
const OP_CALL_REL: u64 = 0x944;
const OP_CALL_ABS: u64 = 0x943;
/// `CALL.ABS` through a register (calls by pointer).
const OP_CALL_INDIRECT: u64 = 0x343;
const OP_WARPSYNC: u64 = 0x948;
const OP_NOP: u64 = 0x918;
const OP_MEMBAR: u64 = 0x992;
/// `MEMBAR.ALL.CTA` (see [`membar_scope`]).
const MEMBAR_ALL_CTA: u64 = 0x8;
/// The words of `@!PT LDS RZ, [RZ]` (the second below the control field).
const FILLER: u64 = 0x0000_0000_ffff_f984;
const FILLER_HIGH: u64 = 0x800;
/// Bit 86 (bit 22 of the second word): `WARPSYNC.COLLECTIVE`, which has a
/// target (plain `WARPSYNC` has none).
const WARPSYNC_TARGET_BIT: u64 = 1 << 22;

/// `EXIT`'s second predicate operand (bits 87–90: register, negation), in
/// the second word.
const EXIT_OPERAND_SHIFT: u32 = 23;
/// The second word's bits below the scheduling control field (bit 105).
const BELOW_CONTROL: u64 = (1 << 41) - 1;

/// `MEMBAR.SC.VC`, `ERRBAR`, `CGAERRBAR` (first word without the guard,
/// second word), measured from nvlink's output and `ptxas -g`'s.
const BARRIERS: [(u64, u64); 3] = [
    (0x0992, 0x000f_c000_0000_5000),
    (0x09ab, 0x000f_c000_0000_0000),
    (0x05ab, 0x000f_ec00_0000_0000),
];

/// What a link asks of the kernels' exit barriers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// No `-g`, no `-G` object: no exit barriers change.
    Plain,
    /// `-g`, or `-r` with a `-G` object: every kernel gets [`Kind::Full`].
    Debug,
    /// An object built with `-G` is linked (without `-g`, final link):
    /// kernels that call get [`Kind::Full`], leaf kernels [`Kind::Errbar`]
    /// (measured: a kernel calling a `-G` function or one of its own
    /// object, and a leaf kernel).
    DebugCode,
}

/// Which barriers a kernel's `EXIT`s get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `MEMBAR.SC.VC; ERRBAR; CGAERRBAR`.
    Full,
    /// `ERRBAR; CGAERRBAR`.
    Errbar,
}

impl Kind {
    fn barriers(self) -> &'static [(u64, u64)] {
        match self {
            Kind::Full => &BARRIERS,
            Kind::Errbar => &BARRIERS[1..],
        }
    }
}

/// `NOP`, the padding after the final `BRA`.
const NOP: (u64, u64) = (0x7918, 0x000f_c000_0000_0000);
/// ptxas pads a function's text to this multiple, at least this far past
/// the end of its final `BRA`.
const PAD: u64 = 0x80;

/// The first bytes of the `0x01` capsule item of an `EXIT` behind its
/// barriers (after its span prefix: `51 02`, four SASS instructions, behind
/// three barriers; `d1 01` behind two).
const CAPSULE_EXIT_ITEM: [u8; 4] = [0x01, 0x11, 0x00, 0x0a];

/// The `*_INSTR_OFFSETS`-style attributes: lists of `u32` offsets of
/// instructions of the function.
const OFFSET_LISTS: [EiAttr; 13] = [
    EiAttr::EIATTR_EXIT_INSTR_OFFSETS,
    EiAttr::EIATTR_S2RCTAID_INSTR_OFFSETS,
    EiAttr::EIATTR_LD_CACHEMOD_INSTR_OFFSETS,
    EiAttr::EIATTR_ATOM_SYS_INSTR_OFFSETS,
    EiAttr::EIATTR_COOP_GROUP_INSTR_OFFSETS,
    EiAttr::EIATTR_ATOMF16_EMUL_INSTR_OFFSETS,
    EiAttr::EIATTR_INT_WARP_WIDE_INSTR_OFFSETS,
    EiAttr::EIATTR_MBARRIER_INSTR_OFFSETS,
    EiAttr::EIATTR_SYSCALL_OFFSETS,
    EiAttr::EIATTR_SW_WAR_MEMBAR_SYS_INSTR_OFFSETS,
    EiAttr::EIATTR_STACK_CANARY_TRAP_OFFSETS,
    EiAttr::EIATTR_LOCAL_CTA_ASYNC_STORE_OFFSETS,
    EiAttr::EIATTR_IGNOREOOB_CP_ASYNC_BULK_INSTR_OFFSETS,
];

/// Attributes of (instruction offset, value) pairs: the offsets move
/// (measured on nvlink's `-g` links: CUB's `UNUSED_LOAD_BYTE_OFFSET`, a
/// `__half` atomic's `ATOM16_EMUL_INSTR_REG_MAP`).
const OFFSET_PAIRS: [EiAttr; 2] = [
    EiAttr::EIATTR_UNUSED_LOAD_BYTE_OFFSET,
    EiAttr::EIATTR_ATOM16_EMUL_INSTR_REG_MAP,
];

/// Attributes that hold code offsets in a layout not measured: a kernel
/// with one keeps ptxas' code.
const OFFSETS_NOT_MEASURED: [EiAttr; 4] = [
    EiAttr::EIATTR_COROUTINE_RESUME_ID_OFFSETS,
    EiAttr::EIATTR_INSTR_REG_MAP,
    EiAttr::EIATTR_ANNOTATIONS,
    EiAttr::EIATTR_BINDLESS_IMAGE_OFFSETS,
];

/// The line-table sections whose address advances move.
const LINE_SECTIONS: [&str; 2] = [".debug_line", ".nv_debug_line_sass"];

/// Why a kernel keeps ptxas' code.
type Skip = &'static str;

/// Rewrites, in place, the images whose kernels nvlink's finalizer changes
/// in a link for `arch` (`debug`: `-g`; `relocatable`: `-r`): exit barriers
/// in `-g` links and links with a `-G` object, fences of kernels that do not
/// call in final links without `-g`. Images that do not parse are left for
/// the parse phase to report.
pub(crate) fn apply(images: &mut [Image<'_>], arch: SmArch, debug: bool, relocatable: bool) {
    if !arch.is_blackwell_or_later() {
        return;
    }
    let _span = tracing::info_span!("refinalize").entered();
    // Most links have no -G object: tell that from the section headers,
    // without parsing every image twice; one scan per image, which also
    // says whether its code has a fence.
    let scans: Vec<Option<Scan>> = if debug {
        Vec::new()
    } else {
        images.par_iter().map(|i| quick_scan(i.bytes())).collect()
    };
    let marked = images.par_iter().zip(&scans).any(|(i, s)| match s {
        Some(s) => s.marked,
        None => Cubin::parse(i.bytes())
            .ok()
            .is_some_and(|c| marked_image(&c)),
    });
    // In a -r link with a -G object every kernel gets the three barriers,
    // leaf kernels too (measured: the final link of that output takes the
    // MEMBAR.SC.VC off them again).
    let mode = if debug || (marked && relocatable) {
        Mode::Debug
    } else if marked {
        Mode::DebugCode
    } else {
        Mode::Plain
    };
    // Fences change in final links without -g, scoreboards in final links.
    let fences = !debug && !relocatable;
    if mode == Mode::Plain && !fences {
        return;
    }
    let rewritten: Vec<Option<Vec<u8>>> = images
        .par_iter()
        .enumerate()
        .map(|(k, image)| {
            // Without barriers to change, only images with a MEMBAR or a
            // stack-pointer scoreboard in their code.
            let scan = scans.get(k).and_then(Option::as_ref);
            if mode == Mode::Plain
                && scan.is_some_and(|s| !s.membar && (s.marked || !s.stack_scoreboard))
            {
                return None;
            }
            let cubin = Cubin::parse(image.bytes()).ok()?;
            // Every kernel: `-G` ones too, whose barriers may be more than a
            // leaf kernel keeps. nvlink does not re-allocate the scoreboards
            // of `-G` code (ptxas' `-O0` ones).
            let kernels: Vec<u32> = kernel_sections(&cubin).collect();
            let scoreboards =
                !relocatable && !scan.map_or_else(|| marked_image(&cubin), |s| s.marked);
            rewrite(&cubin, &kernels, mode, fences, scoreboards)
        })
        .collect();
    for (image, new) in images.iter_mut().zip(rewritten) {
        if let Some(bytes) = new {
            tracing::debug!(image = %image.name, "re-finalized kernels");
            image.bytes = ImageBytes::Owned(bytes);
        }
    }
}

/// Whether an object was built with `-G`: its `.nv.info` (these bytes)
/// says `EIATTR_GEN_ERRBAR_AT_EXIT`.
fn gen_errbar_at_exit(nv_info: &[u8]) -> bool {
    Iter::<EiAttr>::new(nv_info)
        .any(|r| r.is_ok_and(|r| r.attr == EiAttr::EIATTR_GEN_ERRBAR_AT_EXIT))
}

/// Whether an object was built with `-G` ([`gen_errbar_at_exit`] in its
/// `.nv.info`).
fn marked_image(cubin: &Cubin<'_>) -> bool {
    cubin
        .sections
        .iter()
        .filter(|s| s.sh_type == SHT_CUDA_INFO && s.name == ".nv.info")
        .any(|s| gen_errbar_at_exit(s.data))
}

/// What [`quick_scan`] tells about an image.
struct Scan {
    /// [`gen_errbar_at_exit`].
    marked: bool,
    /// Some code section holds a `MEMBAR`.
    membar: bool,
    /// Some code section starts with a stack-pointer scoreboard and neither
    /// calls nor uses local memory: the replay
    /// ([`scoreboards::reallocate`]) may drop it.
    stack_scoreboard: bool,
}

/// [`Scan`] read straight from the section headers of an ELF64 image;
/// `None` when they are not plainly there (extended section numbering,
/// anything out of bounds): then the caller parses the image.
fn quick_scan(b: &[u8]) -> Option<Scan> {
    const SHDR: usize = 64;
    const SHF_EXECINSTR: u64 = 4;
    let shoff = usize::try_from(le::u64(b, 0x28)?).ok()?;
    let shnum = usize::from(le::u16(b, 0x3c)?);
    let shstrndx = usize::from(le::u16(b, 0x3e)?);
    if b.get(4) != Some(&2) || usize::from(le::u16(b, 0x3a)?) != SHDR || shnum == 0 {
        return None;
    }
    // The whole header table in the file: every header field below is.
    if shoff.checked_add(shnum.checked_mul(SHDR)?)? > b.len() {
        return None;
    }
    let header = |i: usize| shoff.checked_add(i.checked_mul(SHDR)?);
    let range = |h: usize| -> Option<std::ops::Range<usize>> {
        let off = usize::try_from(le::u64(b, h + 0x18)?).ok()?;
        let size = usize::try_from(le::u64(b, h + 0x20)?).ok()?;
        let end = off.checked_add(size)?;
        (end <= b.len()).then_some(off..end)
    };
    let names = range(header(shstrndx)?)?;
    const NAME: &[u8] = b".nv.info\0";
    let mut scan = Scan {
        marked: false,
        membar: false,
        stack_scoreboard: false,
    };
    for i in 0..shnum {
        let h = header(i)?;
        let sh_type = le::u32(b, h + 4)?;
        if sh_type == SHT_CUDA_INFO {
            let name = names.start.checked_add(le::u32(b, h)? as usize)?;
            if b.get(name..name + NAME.len()) == Some(NAME) {
                scan.marked |= gen_errbar_at_exit(&b[range(h)?]);
            }
        } else if sh_type == SHT_PROGBITS && le::u64(b, h + 8)? & SHF_EXECINSTR != 0 {
            // One pass over the code: its fences, and whether it starts
            // with a stack-pointer scoreboard and neither calls nor uses
            // local memory (the replay may change it).
            let code = &b[range(h)?];
            let mut stack = false;
            for w in code.chunks_exact(SLOT as usize) {
                let op = u64::from(u16::from_le_bytes([w[0], w[1]])) & OPCODE;
                scan.membar |= op == OP_MEMBAR;
                stack |= scoreboards::uses_stack(op);
            }
            scan.stack_scoreboard |= code.len() >= SLOT as usize
                && !stack
                && scoreboards::stack_pointer_scoreboard(words(code, 0));
        }
    }
    Some(scan)
}

/// The text sections of the kernels `cubin` defines.
fn kernel_sections<'a>(cubin: &'a Cubin<'_>) -> impl Iterator<Item = u32> + 'a {
    cubin
        .symbols
        .iter()
        .filter(|s| s.ty() == STT_FUNC && s.other & STO_CUDA_ENTRY != 0)
        .filter_map(|s| s.section())
}

/// One change to a kernel's text, at an old offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edit {
    /// `bytes` of new instructions in front of the instruction at `at`.
    Insert { at: u64, bytes: u64 },
    /// The `bytes` of instructions from `at` dropped.
    Remove { at: u64, bytes: u64 },
}

impl Edit {
    fn at(self) -> u64 {
        match self {
            Edit::Insert { at, .. } | Edit::Remove { at, .. } => at,
        }
    }
}

/// Where offsets into a kernel's text go once its edits (ascending, not
/// overlapping) are made.
struct Moves {
    edits: Vec<Edit>,
    old_size: u64,
    new_size: u64,
}

impl Moves {
    fn map(&self, o: u64, label: bool) -> u64 {
        if o >= self.old_size {
            return (o - self.old_size).saturating_add(self.new_size);
        }
        let mut shift: i64 = 0;
        for &e in &self.edits {
            match e {
                Edit::Insert { at, bytes } => {
                    if at < o || (at == o && !label) {
                        shift += bytes as i64;
                    } else {
                        break;
                    }
                }
                Edit::Remove { at, bytes } => {
                    if o >= at + bytes {
                        shift -= bytes as i64;
                    } else if o >= at {
                        // Inside what was dropped: where it was.
                        return at.wrapping_add_signed(shift);
                    } else {
                        break;
                    }
                }
            }
        }
        o.wrapping_add_signed(shift)
    }
    /// The new offset of the instruction at `o` (an `EXIT` moves behind its
    /// barriers).
    fn inst(&self, o: u64) -> u64 {
        self.map(o, false)
    }
    /// The new offset of a label at `o` (a branch target, a return address,
    /// a line-table row): a label on an `EXIT` names its first barrier.
    fn label(&self, o: u64) -> u64 {
        self.map(o, true)
    }
}

fn words(text: &[u8], at: usize) -> (u64, u64) {
    (
        le::u64(text, at).unwrap_or(0),
        le::u64(text, at + 8).unwrap_or(0),
    )
}

/// The PC-relative target field of an instruction: `Split` is
/// `R_CUDA_ABS55_16_34`'s layout (bits 16–23 and 34–81 of the offset
/// divided by 4), `High` bits 34–63 (`BSSY`, whose bit 73 is
/// `.RECONVERGENT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Split,
    High,
}

/// The control-flow opcode family: bits 0–8 in 0x141..=0x15f (bits 9–11
/// are the operand form: `BRA` 0x947, `BRA.U` 0x547).
fn is_control(op: u64) -> bool {
    (0x141..=0x15f).contains(&(op & 0x1ff))
}

/// The PC-relative field of an instruction of the control family, `None`
/// when it has none; an error for a control instruction not measured
/// (its kernel keeps ptxas' code). Checked against nvdisasm 13.2.86's
/// targets on every branch of the fixtures and a CUB/Thrust program
/// (about 4500 at sm_100 and sm_120); the forms without a target were
/// listed from nvdisasm's reading of every opcode of the family (`LEPC`
/// with an offset is PC-relative, `JMP`/`JMX`, `RET` and the immediate
/// `RPCMOV`/`BMOV` forms are not measured).
fn target_field(w0: u64, w1: u64) -> Result<Option<Field>, Skip> {
    let op = w0 & OPCODE;
    if !is_control(op) {
        return Ok(None);
    }
    Ok(match op {
        OP_BRA | OP_BRA_UNIFORM | OP_BRX | OP_BRXU | OP_CALL_REL => Some(Field::Split),
        OP_WARPSYNC | OP_WARPSYNC_REGISTER if w1 & WARPSYNC_TARGET_BIT != 0 => Some(Field::Split),
        OP_BSSY => Some(Field::High),
        OP_WARPSYNC
        | OP_WARPSYNC_REGISTER
        | OP_BSYNC
        | OP_CALL_ABS
        | OP_CALL_INDIRECT
        | OP_YIELD
        | OP_EXIT
        | OP_BMOV_CLEAR
        | OP_BMOV
        | OP_BPT
        | OP_BREAK
        | OP_KILL
        | OP_NANOSLEEP
        | OP_NANOSLEEP_REGISTER
        | OP_RPCMOV_TO
        | OP_RPCMOV_FROM => None,
        _ => return Err("a control instruction not measured"),
    })
}

fn sign_extend(v: u128, bits: u32) -> i64 {
    ((v << (128 - bits)) as i128 >> (128 - bits)) as i64
}

/// The byte offset (from the next instruction) an instruction's field holds.
fn decode(field: Field, w0: u64, w1: u64) -> i64 {
    let v = u128::from(w0) | u128::from(w1) << 64;
    let units = match field {
        Field::Split => sign_extend((v >> 16) & 0xff | ((v >> 34) & ((1 << 48) - 1)) << 8, 56),
        Field::High => sign_extend((v >> 34) & ((1 << 30) - 1), 30),
    };
    units * 4
}

/// The words with the field set to `offset`, or `None` when it does not fit.
fn encode(field: Field, w0: u64, w1: u64, offset: i64) -> Option<(u64, u64)> {
    if offset % 4 != 0 {
        return None;
    }
    let units = offset / 4;
    let mut v = u128::from(w0) | u128::from(w1) << 64;
    match field {
        Field::Split => {
            if sign_extend(units as u128 & ((1 << 56) - 1), 56) != units {
                return None;
            }
            let u = units as u128;
            v &= !(0xff << 16) & !(((1u128 << 48) - 1) << 34);
            v |= (u & 0xff) << 16 | ((u >> 8) & ((1 << 48) - 1)) << 34;
        }
        Field::High => {
            if sign_extend(units as u128 & ((1 << 30) - 1), 30) != units {
                return None;
            }
            v &= !(((1u128 << 30) - 1) << 34);
            v |= (units as u128 & ((1 << 30) - 1)) << 34;
        }
    }
    Some((v as u64, (v >> 64) as u64))
}

/// Whether the instruction at `at` is `EXIT` in the only form measured
/// (guard and second predicate operand, no other bit).
fn plain_exit(w0: u64, w1: u64) -> bool {
    w0 & !GUARD == OP_EXIT && w1 & BELOW_CONTROL & !(0xf << EXIT_OPERAND_SHIFT) == 0
}

/// A capsule predicate byte: register (PT is 31) times 8.
fn capsule_predicate(reg: u64) -> u8 {
    let reg = reg & 7;
    (if reg == 7 { 31 } else { reg as u8 }) << 3
}

/// The capsule item of an `EXIT` behind its barriers (span prefix
/// included): `01 11 00 0a G 00 N 00 00 00 00 O 00 00 00 00`, `G` the guard
/// (register × 8 + negation), `O` the second operand's register × 8, `N`
/// its negation (measured with every guard and operand form nvlink takes).
fn capsule_item(kind: Kind, w0: u64, w1: u64) -> Vec<u8> {
    let guard = (w0 >> GUARD_SHIFT) & 0xf;
    let operand = (w1 >> EXIT_OPERAND_SHIFT) & 0xf;
    let mut item = capsule::span_prefix(kind.barriers().len() as u8 + 1).to_vec();
    item.extend_from_slice(&CAPSULE_EXIT_ITEM);
    item.extend_from_slice(&[
        capsule_predicate(guard) | (guard >> 3) as u8,
        0,
        (operand >> 3) as u8,
        0,
        0,
        0,
        0,
        capsule_predicate(operand),
        0,
        0,
        0,
        0,
    ]);
    item
}

/// The new text of one kernel and where its offsets go.
struct KernelText {
    text: Vec<u8>,
    moves: Moves,
    /// The capsule's changes, by the (old) SASS instruction they start at.
    capsule: Vec<(u32, capsule::Change)>,
    /// The trailer's new count: the final `BRA` and the padding after it.
    trailer: u32,
}

/// `@!PT LDS RZ, [RZ]`, the filler ptxas puts in front of a fence in
/// `-rdc` code (any scheduling control).
fn is_filler((w0, w1): (u64, u64)) -> bool {
    w0 == FILLER && w1 & BELOW_CONTROL == FILLER_HIGH
}

/// A `MEMBAR`'s semantics and scope (bits 76–79): bit 3 `.ALL` (else
/// `.SC`), bits 0–2 the scope (0 CTA, 2 GPU, 3 SYS, 5 VC).
fn membar_scope(w1: u64) -> u64 {
    (w1 >> 12) & 0xf
}

/// The barriers in front of the `EXIT` in slot `i`: those of `kind` whose
/// words (opcode, guard) are there.
fn barriers_before(at: &dyn Fn(usize) -> (u64, u64), i: usize, kind: Kind) -> bool {
    let b = kind.barriers();
    let guard = at(i).0 & GUARD;
    i >= b.len()
        && b.iter().enumerate().all(|(k, w)| {
            let (p0, _) = at(i - b.len() + k);
            p0 & OPCODE == w.0 & OPCODE && p0 & GUARD == guard
        })
}

/// The calls, every form.
const CALLS: [u64; 3] = [OP_CALL_ABS, OP_CALL_REL, OP_CALL_INDIRECT];

/// Whether a kernel's code calls ([`CALLS`]).
fn calls(text: &[u8]) -> bool {
    text.chunks_exact(SLOT as usize)
        .any(|w| CALLS.contains(&(words(w, 0).0 & OPCODE)))
}

/// The kernel text `old` (which `calls`: [`calls`]) with the barriers
/// `mode` asks for in front of each `EXIT` and, with `fences`, a leaf
/// kernel's fence padding gone; `Ok(None)` when nothing changes.
fn new_text(old: &[u8], calls: bool, mode: Mode, fences: bool) -> Result<Option<KernelText>, Skip> {
    if old.is_empty() || !(old.len() as u64).is_multiple_of(SLOT) {
        return Err("text is not whole instructions");
    }
    let slots = old.len() / SLOT as usize;
    let at = |i: usize| words(old, i * SLOT as usize);
    let kind = match mode {
        Mode::Plain => None,
        Mode::Debug => Some(Kind::Full),
        Mode::DebugCode if calls => Some(Kind::Full),
        Mode::DebugCode => Some(Kind::Errbar),
    };
    let mut edits = Vec::new();
    // (slot, what is inserted before it) and (slot, change) for the capsule.
    let mut inserts: Vec<(usize, &[(u64, u64)])> = Vec::new();
    let mut removed: Vec<usize> = Vec::new();
    let mut capsule = Vec::new();
    for i in 0..slots {
        let (w0, w1) = at(i);
        match w0 & OPCODE {
            OP_RET => return Err("kernel with a RET"),
            OP_EXIT => {
                let Some(kind) = kind else { continue };
                if !plain_exit(w0, w1) {
                    return Err("an EXIT form not measured");
                }
                let has = if barriers_before(&at, i, Kind::Full) {
                    Some(Kind::Full)
                } else if barriers_before(&at, i, Kind::Errbar) {
                    Some(Kind::Errbar)
                } else {
                    None
                };
                match (has, kind) {
                    (Some(h), k) if h == k => {}
                    (None, k) => {
                        let b = k.barriers();
                        edits.push(Edit::Insert {
                            at: i as u64 * SLOT,
                            bytes: b.len() as u64 * SLOT,
                        });
                        inserts.push((i, b));
                        capsule.push((i as u32, capsule::Change::Item(capsule_item(k, w0, w1))));
                    }
                    // ptxas -g wrote the three; a leaf kernel keeps two
                    // (nvlink drops the MEMBAR.SC.VC; measured on nvcc -G
                    // kernels linked without -g).
                    (Some(Kind::Full), Kind::Errbar) => {
                        let first = i - BARRIERS.len();
                        edits.push(Edit::Remove {
                            at: first as u64 * SLOT,
                            bytes: SLOT,
                        });
                        removed.push(first);
                        capsule.push((first as u32, capsule::Change::Drop));
                    }
                    (Some(_), _) => {
                        // Two where three are due: MEMBAR.SC.VC before the
                        // ERRBAR.
                        let first = i - Kind::Errbar.barriers().len();
                        edits.push(Edit::Insert {
                            at: first as u64 * SLOT,
                            bytes: SLOT,
                        });
                        inserts.push((first, &BARRIERS[..1]));
                        capsule.push((first as u32, capsule::Change::Grow));
                    }
                }
            }
            _ => {}
        }
    }
    // Fences of kernels that do not call, in final links without -g: the
    // fillers and the CTA-wide MEMBAR ptxas writes for -rdc code go (what
    // whole-program ptxas writes; measured on __threadfence(),
    // __threadfence_system(), __threadfence_block(), fence.acq_rel.gpu/.sys,
    // fence.sc.cta, fence.proxy.async and release reductions).
    if fences && !calls {
        let membar = |i: usize| i < slots && at(i).0 & OPCODE == OP_MEMBAR;
        let mut i = 0;
        while i < slots {
            if is_filler(at(i)) {
                let run = (i..slots).take_while(|&k| is_filler(at(k))).count();
                if membar(i + run) {
                    edits.push(Edit::Remove {
                        at: i as u64 * SLOT,
                        bytes: run as u64 * SLOT,
                    });
                    removed.extend(i..i + run);
                    capsule.extend((i..i + run).map(|k| (k as u32, capsule::Change::Drop)));
                }
                i += run;
                continue;
            }
            let (w0, w1) = at(i);
            if membar(i) && membar_scope(w1) == MEMBAR_ALL_CTA && membar(i + 1) {
                let (n0, n1) = at(i + 1);
                if n0 & GUARD == w0 & GUARD && matches!(membar_scope(n1) & 7, 2 | 3) {
                    edits.push(Edit::Remove {
                        at: i as u64 * SLOT,
                        bytes: SLOT,
                    });
                    removed.push(i);
                    capsule.push((i as u32, capsule::Change::Drop));
                }
            }
            i += 1;
        }
    }
    if edits.is_empty() {
        return Ok(None);
    }
    // The final BRA (to itself), then NOPs only.
    let last = (0..slots)
        .rev()
        .find(|&i| at(i).0 & OPCODE != OP_NOP)
        .ok_or("no final BRA")?;
    let (b0, b1) = at(last);
    if b0 & OPCODE != OP_BRA || decode(Field::Split, b0, b1) != -(SLOT as i64) {
        return Err("no final BRA");
    }
    let bra = last as u64 * SLOT;
    let old_size = old.len() as u64;
    if old_size != (bra + SLOT + PAD).next_multiple_of(PAD) {
        return Err("padding not ptxas'");
    }
    edits.sort_by_key(|e| e.at());
    capsule.sort_by_key(|c| c.0);
    inserts.sort_by_key(|(s, _)| *s);
    removed.sort_unstable();
    let mut moves = Moves {
        edits,
        old_size,
        new_size: 0,
    };
    let new_bra = moves.inst(bra);
    moves.new_size = (new_bra + SLOT + PAD).next_multiple_of(PAD);
    let mut text = Vec::with_capacity(moves.new_size as usize);
    let push = |text: &mut Vec<u8>, w: (u64, u64)| {
        text.extend_from_slice(&w.0.to_le_bytes());
        text.extend_from_slice(&w.1.to_le_bytes());
    };
    for i in 0..=last {
        let o = i as u64 * SLOT;
        let (mut w0, mut w1) = at(i);
        if let Ok(k) = inserts.binary_search_by_key(&i, |(s, _)| *s) {
            let words = inserts[k].1;
            // The guard of the EXIT the barriers stand before.
            let exit = (i..slots)
                .find(|&k| at(k).0 & OPCODE == OP_EXIT)
                .map_or(0, |k| at(k).0);
            for b in words.iter() {
                push(&mut text, (b.0 | (exit & GUARD), b.1));
            }
        }
        if removed.binary_search(&i).is_ok() {
            continue;
        }
        if let Some(field) = target_field(w0, w1)? {
            let target = o as i64 + SLOT as i64 + decode(field, w0, w1);
            if target < 0 || target as u64 > old_size {
                return Err("a branch target outside the function");
            }
            let new_target = moves.label(target as u64) as i64;
            let offset = new_target - (moves.inst(o) + SLOT) as i64;
            (w0, w1) = encode(field, w0, w1, offset).ok_or("a branch offset that does not fit")?;
        }
        push(&mut text, (w0, w1));
    }
    while (text.len() as u64) < moves.new_size {
        push(&mut text, NOP);
    }
    let trailer = ((moves.new_size - new_bra) / SLOT) as u32;
    Ok(Some(KernelText {
        text,
        moves,
        capsule,
        trailer,
    }))
}

/// The sections of one image being rewritten: new contents by index, those
/// of the kernel being edited apart until it is done (all or nothing).
struct Work<'a, 'd> {
    cubin: &'a Cubin<'d>,
    new: HashMap<u32, Vec<u8>>,
    pending: HashMap<u32, Vec<u8>>,
}

impl Work<'_, '_> {
    fn data(&self, i: u32) -> &[u8] {
        match self.pending.get(&i).or_else(|| self.new.get(&i)) {
            Some(d) => d,
            None => self.cubin.sections[i as usize].data,
        }
    }
    fn data_mut(&mut self, i: u32) -> &mut Vec<u8> {
        if !self.pending.contains_key(&i) {
            let copy = self.data(i).to_vec();
            self.pending.insert(i, copy);
        }
        self.pending.entry(i).or_default()
    }
    /// Keeps the edits of the kernel just done.
    fn commit(&mut self) {
        self.new.extend(self.pending.drain());
    }
}

/// The new bytes of `cubin` with the kernels of `kernels` (text section
/// indices) re-finalized (`scoreboards`: their scoreboards re-allocated
/// too), or `None` when no kernel changes.
fn rewrite(
    cubin: &Cubin<'_>,
    kernels: &[u32],
    mode: Mode,
    fences: bool,
    scoreboards: bool,
) -> Option<Vec<u8>> {
    let mut work = Work {
        cubin,
        new: HashMap::default(),
        pending: HashMap::default(),
    };
    let mut changed = false;
    let mut done: HashSet<u32> = HashSet::default();
    for &t in kernels {
        let is_text = cubin
            .sections
            .get(t as usize)
            .is_some_and(|s| s.sh_type == SHT_PROGBITS);
        if !is_text || !done.insert(t) {
            continue;
        }
        let name = cubin.sections.get(t as usize).map_or("", |s| s.name);
        // Edits neither add nor remove calls.
        let calls = calls(work.data(t));
        match new_text(work.data(t), calls, mode, fences) {
            Ok(Some(text)) => match edit_kernel(&mut work, t, text) {
                Ok(()) => {
                    work.commit();
                    changed = true;
                }
                Err(why) => {
                    tracing::debug!(section = name, why, "kernel kept as ptxas wrote it");
                    work.pending.clear();
                }
            },
            Ok(None) => {}
            Err(why) => tracing::debug!(section = name, why, "kernel kept as ptxas wrote it"),
        }
        // Then the scoreboards of the (edited) code: kernels with exit
        // barriers in front of their EXITs wait there for the stack
        // pointer, the others drop it.
        if scoreboards {
            let barriers = match mode {
                Mode::Plain => false,
                Mode::Debug => true,
                Mode::DebugCode => calls,
            };
            let policy = if barriers {
                scoreboards::Policy::WaitAtExit
            } else {
                scoreboards::Policy::Drop
            };
            let tables: Vec<u32> = if scoreboards::indirect(work.data(t)) {
                branch_target_lists(&work, t)
                    .into_iter()
                    .flatten()
                    .collect()
            } else {
                Vec::new()
            };
            match scoreboards::reallocate(work.data(t), policy, &tables) {
                Ok(Some(text)) => {
                    *work.data_mut(t) = text;
                    work.commit();
                    changed = true;
                }
                Ok(None) => {}
                Err(why) => {
                    tracing::debug!(section = name, why, "scoreboards kept as ptxas wrote them");
                }
            }
        }
    }
    changed.then(|| write_image(cubin, &work.new))
}

/// Moves everything in the image that points into text section `t`.
fn edit_kernel(work: &mut Work<'_, '_>, t: u32, k: KernelText) -> Result<(), Skip> {
    let cubin = work.cubin;
    let moves = &k.moves;
    // The symbols naming the kernel's text: its section symbol and those
    // defined in it.
    let in_text: HashSet<u32> = cubin
        .symbols
        .iter()
        .enumerate()
        .filter(|(_, s)| s.section() == Some(t))
        .map(|(i, _)| i as u32)
        .collect();
    // The capsule first: it is the step most likely to refuse.
    if let Some(cap) = cubin
        .sections
        .iter()
        .find(|s| s.sh_type == SHT_CUDA_CAPMERC_TEXT && le::u32(s.data, 0) == Some(t))
    {
        let new = capsule::edit(work.data(cap.index), &k.capsule, k.trailer)
            .map_err(|_| "capsule not understood")?;
        *work.data_mut(cap.index) = new;
    }
    // Symbols: values inside the text move as labels, the kernel's size.
    if let Some(symtab) = cubin.symtab {
        let entsize = 24usize;
        for &i in &in_text {
            let s = &cubin.symbols[i as usize];
            if s.ty() == STT_SECTION {
                continue;
            }
            let at = i as usize * entsize;
            let data = work.data_mut(symtab);
            let value = le::u64(data, at + 8).ok_or("symbol table")?;
            let size = le::u64(data, at + 16).ok_or("symbol table")?;
            let start = moves.label(value);
            let end = moves.label(value.saturating_add(size));
            data[at + 8..at + 16].copy_from_slice(&start.to_le_bytes());
            data[at + 16..at + 24].copy_from_slice(&end.saturating_sub(start).to_le_bytes());
        }
    }
    // Relocations: offsets in the text move with their instruction; addends
    // against the text move as labels.
    for rs in cubin
        .sections
        .iter()
        .filter(|s| s.sh_type == SHT_RELA || s.sh_type == SHT_REL)
    {
        let rela = rs.sh_type == SHT_RELA;
        let ent = if rela { 24 } else { 16 };
        let into_text = rs.info == t;
        let n = work.data(rs.index).len() / ent;
        for e in 0..n {
            let at = e * ent;
            let data = work.data(rs.index);
            let offset = le::u64(data, at).ok_or("relocation")?;
            let sym = (le::u64(data, at + 8).ok_or("relocation")? >> 32) as u32;
            let addend = if rela {
                le::u64(data, at + 16).ok_or("relocation")? as i64
            } else {
                0
            };
            let new_offset = if into_text {
                moves.inst(offset)
            } else {
                offset
            };
            let new_addend = if rela && in_text.contains(&sym) && addend >= 0 {
                moves.label(addend as u64) as i64
            } else {
                addend
            };
            if new_offset != offset || new_addend != addend {
                let data = work.data_mut(rs.index);
                data[at..at + 8].copy_from_slice(&new_offset.to_le_bytes());
                if rela {
                    data[at + 16..at + 24].copy_from_slice(&new_addend.to_le_bytes());
                }
            }
        }
    }
    // Jump tables: the kernel's `.nv.constant2.<k>` holds each `BRX`'s
    // targets as offsets into the text, one `<k>.const_opt.<from>.<to>`
    // range per table, the same lists as EIATTR_INDIRECT_BRANCH_TARGETS.
    let tables = branch_target_lists(work, t);
    if !tables.is_empty() {
        jump_tables(work, t, &tables, moves)?;
    }
    // Attributes of the kernel.
    for info in cubin
        .sections
        .iter()
        .filter(|s| s.sh_type == SHT_CUDA_INFO && s.info == t)
    {
        let mut data = work.data(info.index).to_vec();
        let records: Vec<(usize, EiAttr, usize)> = Iter::<EiAttr>::new(&data)
            .filter_map(|r| r.ok())
            .filter(|r| r.format == EiFormat::SVAL)
            .map(|r| (r.offset + 4, r.attr, r.payload().map_or(0, <[u8]>::len)))
            .collect();
        for (start, attr, len) in records {
            let payload = &mut data[start..start + len];
            // Offsets alone, or (offset, value) pairs: each entry's first
            // `u32` moves.
            let entry = if OFFSET_LISTS.contains(&attr) {
                4
            } else if OFFSET_PAIRS.contains(&attr) {
                8
            } else {
                0
            };
            if entry != 0 {
                for w in payload.chunks_exact_mut(entry) {
                    let o = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                    let n = u32::try_from(moves.inst(u64::from(o))).map_err(|_| "offset")?;
                    w[..4].copy_from_slice(&n.to_le_bytes());
                }
            } else if attr == EiAttr::EIATTR_INDIRECT_BRANCH_TARGETS {
                indirect_targets(payload, moves)?;
            } else if OFFSETS_NOT_MEASURED.contains(&attr) {
                return Err("an attribute with code offsets not measured");
            }
        }
        *work.data_mut(info.index) = data;
    }
    // nvcc -G's register ranges by code offset.
    if let Some(regs) = cubin.section_by_name(".nv_debug_info_reg_sass") {
        let kernel = cubin.sections[t as usize]
            .name
            .strip_prefix(".text.")
            .unwrap_or_default();
        let mut data = work.data(regs.index).to_vec();
        register_ranges(&mut data, kernel, moves)?;
        *work.data_mut(regs.index) = data;
    }
    // Frames and line tables.
    if let Some(frame) = cubin.section_by_name(".debug_frame") {
        let relocs = relocs_of(work, frame.index);
        let mut data = work.data(frame.index).to_vec();
        frames(&mut data, &relocs, &in_text, moves)?;
        *work.data_mut(frame.index) = data;
    }
    for name in LINE_SECTIONS {
        if let Some(line) = cubin.section_by_name(name) {
            let relocs = relocs_of(work, line.index);
            let (data, pieces) = lines(work.data(line.index), &relocs, &in_text, moves)?;
            *work.data_mut(line.index) = data;
            // The relocations after a rewritten sequence move with it.
            for rs in cubin
                .sections
                .iter()
                .filter(|s| s.sh_type == SHT_RELA && s.info == line.index)
            {
                let data = work.data_mut(rs.index);
                for e in data.chunks_exact_mut(24) {
                    let o = u64::from_le_bytes(e[..8].try_into().unwrap_or_default());
                    e[..8].copy_from_slice(&moved_in_lines(&pieces, o).to_le_bytes());
                }
            }
        }
    }
    *work.data_mut(t) = k.text;
    Ok(())
}

/// `.nv_debug_info_reg_sass` (ptxas -g): per function its name, a `u32`
/// count, then entries of `u32`, register name, 4 bytes, `u32` start and
/// end offset; the kernel's ranges move as labels (measured: an end on an
/// `EXIT` whose `MEMBAR.SC.VC` nvlink drops moves back with it).
fn register_ranges(data: &mut [u8], kernel: &str, moves: &Moves) -> Result<(), Skip> {
    let cstr_end = |d: &[u8], at: usize| -> Result<usize, Skip> {
        d.get(at..)
            .and_then(|r| r.iter().position(|&b| b == 0))
            .map(|n| at + n + 1)
            .ok_or("register ranges")
    };
    let mut at = 0;
    while at < data.len() {
        let name_end = cstr_end(data, at)?;
        let ours = &data[at..name_end - 1] == kernel.as_bytes();
        let count = le::u32(data, name_end).ok_or("register ranges")?;
        at = name_end + 4;
        for _ in 0..count {
            at = cstr_end(data, at + 4)? + 4;
            for field in [at, at + 4] {
                let o = le::u32(data, field).ok_or("register ranges")?;
                if ours {
                    let n =
                        u32::try_from(moves.label(u64::from(o))).map_err(|_| "register ranges")?;
                    data[field..field + 4].copy_from_slice(&n.to_le_bytes());
                }
            }
            at += 8;
        }
    }
    Ok(())
}

/// (offset, symbol, addend) of the RELA relocations applying to section `i`.
fn relocs_of(work: &Work<'_, '_>, i: u32) -> Vec<(u64, u32, i64)> {
    work.cubin
        .sections
        .iter()
        .filter(|s| s.sh_type == SHT_RELA && s.info == i)
        .flat_map(|s| {
            work.data(s.index)
                .chunks_exact(24)
                .map(|e| {
                    (
                        le::u64(e, 0).unwrap_or(0),
                        (le::u64(e, 8).unwrap_or(0) >> 32) as u32,
                        le::u64(e, 16).unwrap_or(0) as i64,
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The target lists of the kernel's `EIATTR_INDIRECT_BRANCH_TARGETS`
/// (old offsets).
fn branch_target_lists(work: &Work<'_, '_>, t: u32) -> Vec<Vec<u32>> {
    let mut lists = Vec::new();
    for info in work
        .cubin
        .sections
        .iter()
        .filter(|s| s.sh_type == SHT_CUDA_INFO && s.info == t)
    {
        for r in Iter::<EiAttr>::new(work.data(info.index)).filter_map(|r| r.ok()) {
            if r.attr != EiAttr::EIATTR_INDIRECT_BRANCH_TARGETS {
                continue;
            }
            let Some(p) = r.payload() else { continue };
            let mut at = 0;
            while let Some(count) = le::u32(p, at + 8) {
                let list: Option<Vec<u32>> = (0..count as usize)
                    .map(|k| le::u32(p, at + 12 + 4 * k))
                    .collect();
                let Some(list) = list else { break };
                at += 12 + 4 * list.len();
                lists.push(list);
            }
        }
    }
    lists
}

/// The jump tables of the kernel in text section `t`: the
/// `<k>.const_opt.<from>.<to>` ranges of `.nv.constant2.<k>` whose words are
/// one of the kernel's branch target lists move as labels.
fn jump_tables(
    work: &mut Work<'_, '_>,
    t: u32,
    tables: &[Vec<u32>],
    moves: &Moves,
) -> Result<(), Skip> {
    let cubin = work.cubin;
    let Some(kernel) = cubin.sections[t as usize].name.strip_prefix(".text.") else {
        return Ok(());
    };
    let bank = format!(".nv.constant2.{kernel}");
    let Some(bank) = cubin.section_by_name(&bank) else {
        return Ok(());
    };
    let prefix = format!("{kernel}.const_opt.");
    for sym in cubin
        .symbols
        .iter()
        .filter(|s| s.section() == Some(bank.index) && s.name.starts_with(&prefix))
    {
        let (start, len) = (sym.value as usize, sym.size as usize);
        let data = work.data(bank.index);
        let Some(words) = start
            .checked_add(len)
            .and_then(|end| data.get(start..end))
            .filter(|_| len % 4 == 0)
        else {
            continue;
        };
        let list: Vec<u32> = words
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        if !tables.contains(&list) {
            continue;
        }
        let data = work.data_mut(bank.index);
        for (k, o) in list.iter().enumerate() {
            let n = u32::try_from(moves.label(u64::from(*o))).map_err(|_| "jump table")?;
            let at = start + 4 * k;
            data[at..at + 4].copy_from_slice(&n.to_le_bytes());
        }
    }
    Ok(())
}

/// `EIATTR_INDIRECT_BRANCH_TARGETS`: entries of `u32` branch offset, two
/// `u16`, `u32` count, count `u32` targets.
fn indirect_targets(payload: &mut [u8], moves: &Moves) -> Result<(), Skip> {
    let mut at = 0;
    let put = |p: &mut [u8], at: usize, label: bool| -> Result<(), Skip> {
        let o = u64::from(le::u32(p, at).ok_or("indirect branch targets")?);
        let n = if label { moves.label(o) } else { moves.inst(o) };
        let n = u32::try_from(n).map_err(|_| "indirect branch targets")?;
        p[at..at + 4].copy_from_slice(&n.to_le_bytes());
        Ok(())
    };
    while at < payload.len() {
        put(payload, at, false)?;
        let count = le::u32(payload, at + 8).ok_or("indirect branch targets")? as usize;
        at += 12;
        for _ in 0..count {
            put(payload, at, true)?;
            at += 4;
        }
    }
    Ok(())
}

/// The FDEs of `.debug_frame` (64-bit DWARF, as ptxas writes it) whose
/// initial location is relocated against the kernel: address range and
/// location advances.
fn frames(
    data: &mut [u8],
    relocs: &[(u64, u32, i64)],
    in_text: &HashSet<u32>,
    moves: &Moves,
) -> Result<(), Skip> {
    let mut at = 0usize;
    // The code alignment factor of the last CIE (ptxas writes each
    // function's CIE right before its FDE): advances count in its units.
    let mut code_align = 1u64;
    while at + 12 <= data.len() {
        if le::u32(data, at) != Some(u32::MAX) {
            return Err("32-bit DWARF frame");
        }
        let len = le::u64(data, at + 4).ok_or("frame")? as usize;
        let body = at + 12;
        let end = body
            .checked_add(len)
            .filter(|&e| e <= data.len())
            .ok_or("frame")?;
        let is_cie = le::u64(data, body) == Some(u64::MAX);
        let loc_at = body + 8;
        if !is_cie && loc_at + 16 > end {
            return Err("frame");
        }
        if is_cie {
            let mut p = body + 9;
            let version = *data.get(body + 8).ok_or("frame")?;
            p += data
                .get(p..end)
                .and_then(|a| a.iter().position(|&b| b == 0))
                .ok_or("frame")?
                + 1;
            if version >= 4 {
                p += 2;
            }
            code_align = read_uleb(data, &mut p)?.max(1);
        }
        let ours = !is_cie
            && relocs
                .iter()
                .any(|&(o, s, a)| o == loc_at as u64 && in_text.contains(&s) && a == 0);
        if ours {
            let range = le::u64(data, loc_at + 8).ok_or("frame")?;
            let new_range = moves.label(range);
            data[loc_at + 8..loc_at + 16].copy_from_slice(&new_range.to_le_bytes());
            frame_advances(&mut data[loc_at + 16..end], code_align, moves)?;
        }
        at = end;
    }
    Ok(())
}

/// The location advances of an FDE's call frame instructions.
fn frame_advances(ins: &mut [u8], code_align: u64, moves: &Moves) -> Result<(), Skip> {
    use crate::cubin::frame::{instruction, Cfa};
    let mut loc = 0u64;
    let mut at = 0usize;
    while at < ins.len() {
        let (width, units) = match instruction(ins, at).ok_or("a frame instruction not known")? {
            Cfa::Advance { width, units } => (width, units),
            Cfa::Other { end } => {
                at = end;
                continue;
            }
        };
        let delta = units.checked_mul(code_align).ok_or("frame advance")?;
        let next = loc.checked_add(delta).ok_or("frame advance")?;
        let new = moves.label(next).saturating_sub(moves.label(loc));
        loc = next;
        if !new.is_multiple_of(code_align) {
            return Err("a frame advance off the code alignment");
        }
        let new = new / code_align;
        match width {
            0 if new < 0x40 => ins[at] = 0x40 | new as u8,
            1 if new <= 0xff => ins[at + 1] = new as u8,
            2 if new <= 0xffff => ins[at + 1..at + 3].copy_from_slice(&(new as u16).to_le_bytes()),
            4 if new <= 0xffff_ffff => {
                ins[at + 1..at + 5].copy_from_slice(&(new as u32).to_le_bytes())
            }
            _ => return Err("a frame advance that no longer fits"),
        }
        at += 1 + width;
    }
    Ok(())
}

fn read_uleb(d: &[u8], at: &mut usize) -> Result<u64, Skip> {
    crate::cubin::frame::uleb(d, at).ok_or("LEB128 past the end")
}

fn read_sleb(d: &[u8], at: &mut usize) -> Result<i64, Skip> {
    let mut v = 0i64;
    let mut shift = 0;
    loop {
        let b = *d.get(*at).ok_or("LEB128 past the end")?;
        *at += 1;
        if shift < 64 {
            v |= i64::from(b & 0x7f) << shift;
        }
        shift += 7;
        if b & 0x80 == 0 {
            if shift < 64 && b & 0x40 != 0 {
                v |= -1 << shift;
            }
            return Ok(v);
        }
    }
}

/// Writes `v` as an SLEB128. nvlink writes the address advances it makes
/// so, unsigned as they are (`DW_LNS_advance_pc` 0x40 is `c0 00`).
fn write_sleb(out: &mut Vec<u8>, mut v: i64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if (v == 0 && b & 0x40 == 0) || (v == -1 && b & 0x40 != 0) {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

const DW_LNS_COPY: u8 = 1;
const DW_LNS_ADVANCE_PC: u8 = 2;
const DW_LNS_ADVANCE_LINE: u8 = 3;
const DW_LNS_CONST_ADD_PC: u8 = 8;
const DW_LNS_FIXED_ADVANCE_PC: u8 = 9;
const DW_LNE_END_SEQUENCE: u8 = 1;
const DW_LNE_SET_ADDRESS: u8 = 2;

/// (old offset, new offset) of the pieces of a line table copied unchanged,
/// ascending.
type Pieces = Vec<(u64, u64)>;

/// A line table with the sequences of the kernel (their `DW_LNE_set_address`
/// relocated against it) re-addressed: each row at its label's new place.
/// Returns the new bytes and, for the relocations, the (old, new) offsets
/// of every piece copied unchanged, ascending.
fn lines(
    old: &[u8],
    relocs: &[(u64, u32, i64)],
    in_text: &HashSet<u32>,
    moves: &Moves,
) -> Result<(Vec<u8>, Pieces), Skip> {
    let mut out = Vec::with_capacity(old.len() + 16);
    let mut pieces = Vec::new();
    let mut at = 0usize;
    while at < old.len() {
        let unit_len = le::u32(old, at).ok_or("line table")? as usize;
        let end = (at + 4)
            .checked_add(unit_len)
            .filter(|&e| e <= old.len() && unit_len < 0xffff_fff0)
            .ok_or("line table")?;
        let version = le::u16(old, at + 4).ok_or("line table")?;
        let header_len = le::u32(old, at + 6).ok_or("line table")? as usize;
        let program = at + 10 + header_len;
        let field = |k: usize| old.get(at + k).copied().ok_or("line table");
        let min_len = u64::from(field(10)?);
        let line_base = i64::from(field(12)? as i8);
        let line_range = u64::from(field(13)?);
        let opcode_base = field(14)?;
        if !(2..=3).contains(&version) || min_len == 0 || line_range == 0 || program > end {
            return Err("line table header");
        }
        let header = LineHeader {
            min_len,
            line_base,
            line_range,
            opcode_base,
        };
        let unit_out = out.len();
        pieces.push((at as u64, out.len() as u64));
        out.extend_from_slice(&old[at..program]);
        let mut p = program;
        // Whether the sequence being read is the kernel's, and the old
        // address (from its start) reached.
        let mut ours = false;
        let mut addr = 0u64;
        while p < end {
            let op_at = p;
            let op = old[p];
            p += 1;
            // A row written as `DW_LNS_advance_line; DW_LNS_advance_pc;
            // DW_LNS_copy` (no special opcode could say it): nvlink writes
            // it again as ptxas would for its new advance, a special opcode
            // when one fits (measured: fence padding gone from a -lineinfo
            // CUB kernel).
            if ours && op == DW_LNS_ADVANCE_LINE {
                let mut q = p;
                let line = read_sleb(old, &mut q)?;
                if old.get(q) == Some(&DW_LNS_ADVANCE_PC) {
                    let mut r = q + 1;
                    let v = read_uleb(old, &mut r)?;
                    if r < end && old[r] == DW_LNS_COPY {
                        let delta = v.checked_mul(min_len).ok_or("line advance")?;
                        let next = addr.checked_add(delta).ok_or("line advance")?;
                        let new = moves.label(next).saturating_sub(moves.label(addr));
                        addr = next;
                        p = r + 1;
                        if new == delta {
                            out.extend_from_slice(&old[op_at..p]);
                        } else {
                            write_row(&mut out, header, line, new);
                        }
                        continue;
                    }
                }
            }
            // The old advance of an address-moving opcode.
            let mut advance = None;
            let mut special_line = None;
            if op >= opcode_base {
                let adj = u64::from(op - opcode_base);
                advance = Some(adj / line_range * min_len);
                special_line = Some(line_base + (adj % line_range) as i64);
            } else {
                match op {
                    0 => {
                        let len = read_uleb(old, &mut p)? as usize;
                        let sub_at = p;
                        p = p
                            .checked_add(len)
                            .filter(|&e| e <= end)
                            .ok_or("line table")?;
                        match old.get(sub_at) {
                            Some(&DW_LNE_SET_ADDRESS) => {
                                let operand = (sub_at + 1) as u64;
                                ours = relocs.iter().any(|&(o, s, a)| {
                                    o == operand && in_text.contains(&s) && a == 0
                                });
                                addr = 0;
                            }
                            Some(&DW_LNE_END_SEQUENCE) => ours = false,
                            _ => {}
                        }
                    }
                    DW_LNS_ADVANCE_PC => {
                        let v = read_uleb(old, &mut p)?;
                        advance = Some(v.checked_mul(min_len).ok_or("line advance")?);
                    }
                    DW_LNS_CONST_ADD_PC => {
                        advance = Some((255 - u64::from(opcode_base)) / line_range * min_len)
                    }
                    DW_LNS_FIXED_ADVANCE_PC => {
                        advance = Some(u64::from(le::u16(old, p).ok_or("line table")?));
                        p += 2;
                    }
                    DW_LNS_ADVANCE_LINE => {
                        read_sleb(old, &mut p)?;
                    }
                    _ => {
                        // Standard opcodes with as many ULEB128 operands as
                        // the header's table says.
                        let count = field(15 + usize::from(op) - 1)?;
                        for _ in 0..count {
                            read_uleb(old, &mut p)?;
                        }
                    }
                }
            }
            match advance {
                Some(delta) if ours => {
                    let next = addr.checked_add(delta).ok_or("line advance")?;
                    let new = moves.label(next).saturating_sub(moves.label(addr));
                    addr = next;
                    let units = new / min_len;
                    if new == delta {
                        out.extend_from_slice(&old[op_at..p]);
                    } else if let Some(line) = special_line {
                        write_row(&mut out, header, line, new);
                    } else if op == DW_LNS_FIXED_ADVANCE_PC {
                        out.push(op);
                        let new = u16::try_from(new).map_err(|_| "line advance")?;
                        out.extend_from_slice(&new.to_le_bytes());
                    } else {
                        out.push(DW_LNS_ADVANCE_PC);
                        write_sleb(&mut out, units as i64);
                    }
                }
                _ => {
                    if let Some(delta) = advance {
                        addr = addr.checked_add(delta).ok_or("line advance")?;
                    }
                    pieces.push((op_at as u64, out.len() as u64));
                    out.extend_from_slice(&old[op_at..p]);
                }
            }
        }
        let new_len = u32::try_from(out.len() - unit_out - 4).map_err(|_| "line table")?;
        out[unit_out..unit_out + 4].copy_from_slice(&new_len.to_le_bytes());
        at = end;
    }
    Ok((out, pieces))
}

/// What re-encoding a line-table row needs of its unit's header.
#[derive(Clone, Copy)]
struct LineHeader {
    min_len: u64,
    line_base: i64,
    line_range: u64,
    opcode_base: u8,
}

/// A row `line` lines and `advance` bytes on, as ptxas and nvlink write
/// one: a special opcode only for a one-instruction advance (16 bytes) and
/// a line step the opcode can say, else `DW_LNS_advance_line;
/// DW_LNS_advance_pc; DW_LNS_copy` (the advance as nvlink writes it, an
/// SLEB128). Measured: every special opcode of ptxas' SASS line tables
/// advances 16 bytes (a 0x50 advance with a line step of 5 is a triple);
/// nvlink turns a triple whose advance becomes 16 into a special opcode and
/// a special opcode whose advance grows into a triple.
fn write_row(out: &mut Vec<u8>, h: LineHeader, line: i64, advance: u64) {
    let units = advance / h.min_len;
    let code = (line - h.line_base)
        .try_into()
        .ok()
        .filter(|&l: &u64| l < h.line_range && advance == SLOT && SLOT.is_multiple_of(h.min_len))
        .and_then(|l| h.line_range.checked_mul(units)?.checked_add(l))
        .and_then(|c| c.checked_add(u64::from(h.opcode_base)))
        .filter(|&c| c <= 255);
    match code {
        Some(c) => out.push(c as u8),
        None => {
            out.push(DW_LNS_ADVANCE_LINE);
            write_sleb(out, line);
            out.push(DW_LNS_ADVANCE_PC);
            write_sleb(out, units as i64);
            out.push(DW_LNS_COPY);
        }
    }
}

/// Where byte `o` of a line table went, given the copied pieces of
/// [`lines`].
fn moved_in_lines(pieces: &[(u64, u64)], o: u64) -> u64 {
    match pieces.partition_point(|&(from, _)| from <= o) {
        0 => o,
        i => {
            let (from, to) = pieces[i - 1];
            to + (o - from)
        }
    }
}

/// `cubin`'s bytes with the sections of `new` replaced: contents of the
/// same size in place, others appended after the file, their section
/// headers pointed there.
fn write_image(cubin: &Cubin<'_>, new: &HashMap<u32, Vec<u8>>) -> Vec<u8> {
    let mut out = cubin.data.to_vec();
    let shoff = cubin.header.e_shoff as usize;
    let shentsize = usize::from(cubin.header.e_shentsize);
    let mut order: Vec<&u32> = new.keys().collect();
    order.sort();
    for &i in order {
        let s = &cubin.sections[i as usize];
        let data = &new[&i];
        if data.len() as u64 == s.size {
            let at = s.offset as usize;
            out[at..at + data.len()].copy_from_slice(data);
            continue;
        }
        let align = s.addralign.max(1) as usize;
        out.resize(out.len().next_multiple_of(align), 0);
        let at = out.len();
        out.extend_from_slice(data);
        let h = shoff + i as usize * shentsize;
        out[h + 0x18..h + 0x20].copy_from_slice(&(at as u64).to_le_bytes());
        out[h + 0x20..h + 0x28].copy_from_slice(&(data.len() as u64).to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mutated copies of real objects (every byte of code and of what this
    /// phase reads may be anything): the rewrite never panics, and what it
    /// writes parses.
    #[test]
    fn mutated_objects_never_panic() {
        let objects: [&[u8]; 6] = [
            include_bytes!("../../../../tests/link/g_exit_lineinfo/a.sm_100.o"),
            include_bytes!("../../../../tests/link/g_exit_lineinfo/b.sm_120.o"),
            include_bytes!("../../../../tests/link/g_exit_mixed/b.sm_100.o"),
            include_bytes!("../../../../tests/link/fence_refinalize/a.sm_120.o"),
            include_bytes!("../../../../tests/link/sb_realloc/a.sm_100.o"),
            include_bytes!("../../../../tests/link/sb_realloc/a.sm_120.o"),
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut rewritten = 0;
        for round in 0..3000 {
            let original = objects[round % objects.len()];
            let cubin = Cubin::parse(original).expect("fixture parses");
            // The data of a section other than the tables the reader checks.
            let targets: Vec<_> = cubin
                .sections
                .iter()
                .filter(|s| {
                    !s.data.is_empty()
                        && !matches!(s.name, ".symtab" | ".strtab" | ".shstrtab")
                        && !s.is_reloc()
                })
                .map(|s| (s.offset as usize, s.data.len()))
                .collect();
            let mut bytes = original.to_vec();
            for _ in 0..1 + next() % 4 {
                let (off, len) = targets[next() as usize % targets.len()];
                let at = off + next() as usize % len;
                bytes[at] = next() as u8;
            }
            let Ok(cubin) = Cubin::parse(&bytes) else {
                continue;
            };
            let kernels: Vec<u32> = kernel_sections(&cubin).collect();
            for (mode, fences) in [
                (Mode::Debug, false),
                (Mode::DebugCode, true),
                (Mode::Plain, true),
            ] {
                if let Some(out) = rewrite(&cubin, &kernels, mode, fences, true) {
                    rewritten += 1;
                    Cubin::parse(&out).expect("a rewritten image parses");
                }
            }
        }
        assert!(rewritten > 1000, "too few rewrites exercised: {rewritten}");
    }

    #[test]
    fn branch_fields_round_trip() {
        // `BRA` to itself (ptxas' final BRA), `@!P0 BRA` back 0x30, `BSSY`
        // 0x40 ahead with `.RECONVERGENT`, `BRX R2` to the function start
        // from 0x130 (nvdisasm 13.2.86 on ptxas 13.0.88 sm_100 code).
        let cases = [
            (0xffff_fffc_00fc_7947u64, 0x000f_c000_0383_ffffu64, -0x10i64),
            (0xffff_fffc_00f4_8947, 0x000f_ea00_0383_ffff, -0x30),
            (0x0000_0000_0024_0947, 0x000f_ea00_0380_0000, 0x90),
            (0x0000_0040_0000_7945, 0x000f_ec00_0380_0200, 0x40),
            (0xffff_fffc_02b0_7949, 0x0010_0000_0383_ffff, -0x140),
            (0x0000_0000_0014_7948, 0x000f_ea00_03c0_0000, 0x50),
            // `BRA.U !UP0` 0xc40 ahead (bit 32 is its negation), CUB's
            // `WARPSYNC.COLLECTIVE R46` 0x20 ahead.
            (0x0000_000d_0810_7547, 0x000f_ea00_0b80_0000, 0xc40),
            (0x0000_0000_2e08_7348, 0x000f_ea00_03c0_0000, 0x20),
        ];
        for (w0, w1, off) in cases {
            let field = target_field(w0, w1).expect("known").expect("has a target");
            assert_eq!(decode(field, w0, w1), off, "{w0:#x}");
            assert_eq!(encode(field, w0, w1, off), Some((w0, w1)));
            let (n0, n1) = encode(field, w0, w1, off + 0x60).expect("fits");
            assert_eq!(decode(field, n0, n1), off + 0x60);
            assert_eq!(n0 & 0xffff, w0 & 0xffff);
        }
        // Plain WARPSYNC has no target.
        assert_eq!(target_field(0x7948, 0x000f_ea00_0380_0000), Ok(None));
        // `BRA.U !UP0` and `WARPSYNC.COLLECTIVE R46` have targets too;
        // `BREAK`, `NANOSLEEP` and `RPCMOV` by register have none; `LEPC`
        // with an offset and `JMP` are not measured.
        assert!(matches!(target_field(0x547, 0x0380_0000), Ok(Some(_))));
        assert!(matches!(target_field(0x348, 0x03c0_0000), Ok(Some(_))));
        for op in [0x7942, 0x795d, 0x735d, 0x7352, 0x7353] {
            assert_eq!(target_field(op, 0), Ok(None));
        }
        assert!(target_field(0x794e, 0).is_err());
        assert!(target_field(0x794a, 0).is_err());
    }

    #[test]
    fn capsule_items_name_the_predicates() {
        // Measured items (nvlink 13.0.88, sm_100): `@P0 EXIT`, `EXIT`,
        // `@!P0 EXIT P1`, `@P3 EXIT !P2`, `@!P5 EXIT P6`, `@!PT EXIT`.
        let cases: [(u64, u64, [u8; 16]); 6] = [
            (
                0x094d,
                0x0380_0000,
                [1, 0x11, 0, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0xf8, 0, 0, 0, 0],
            ),
            (
                0x794d,
                0x0380_0000,
                [1, 0x11, 0, 0x0a, 0xf8, 0, 0, 0, 0, 0, 0, 0xf8, 0, 0, 0, 0],
            ),
            (
                0x894d,
                0x0080_0000,
                [1, 0x11, 0, 0x0a, 0x01, 0, 0, 0, 0, 0, 0, 0x08, 0, 0, 0, 0],
            ),
            (
                0x394d,
                0x0500_0000,
                [1, 0x11, 0, 0x0a, 0x18, 0, 1, 0, 0, 0, 0, 0x10, 0, 0, 0, 0],
            ),
            (
                0xd94d,
                0x0300_0000,
                [1, 0x11, 0, 0x0a, 0x29, 0, 0, 0, 0, 0, 0, 0x30, 0, 0, 0, 0],
            ),
            (
                0xf94d,
                0x0380_0000,
                [1, 0x11, 0, 0x0a, 0xf9, 0, 0, 0, 0, 0, 0, 0xf8, 0, 0, 0, 0],
            ),
        ];
        for (w0, w1, item) in cases {
            assert!(plain_exit(w0, w1 | 0x000f_ea00_0000_0000));
            let got = capsule_item(Kind::Full, w0, w1);
            assert_eq!(got[..2], [0x51, 0x02]);
            assert_eq!(got[2..], item, "{w0:#x}");
            let got = capsule_item(Kind::Errbar, w0, w1);
            assert_eq!(got[..2], [0xd1, 0x01]);
            assert_eq!(got[2..], item, "{w0:#x}");
        }
    }

    #[test]
    fn labels_and_instructions_move_apart_at_an_exit() {
        let m = Moves {
            edits: vec![
                Edit::Insert {
                    at: 0x70,
                    bytes: 0x30,
                },
                Edit::Insert {
                    at: 0x140,
                    bytes: 0x30,
                },
            ],
            old_size: 0x200,
            new_size: 0x280,
        };
        assert_eq!(m.inst(0x70), 0xa0);
        assert_eq!(m.label(0x70), 0x70);
        assert_eq!(m.inst(0x80), 0xb0);
        assert_eq!(m.label(0x140), 0x170);
        assert_eq!(m.inst(0x140), 0x1a0);
        assert_eq!(m.label(0x200), 0x280);
        // A dropped MEMBAR.SC.VC at 0x40 (ERRBAR, CGAERRBAR, EXIT behind):
        // a label on it names the ERRBAR's new place.
        let r = Moves {
            edits: vec![Edit::Remove {
                at: 0x40,
                bytes: 0x10,
            }],
            old_size: 0x200,
            new_size: 0x180,
        };
        assert_eq!(r.label(0x40), 0x40);
        assert_eq!(r.inst(0x50), 0x40);
        assert_eq!(r.inst(0x30), 0x30);
        assert_eq!(r.label(0x200), 0x180);
    }
}
