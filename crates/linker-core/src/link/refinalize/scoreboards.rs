//! Scoreboard re-allocation of leaf kernels, as nvlink's finalizer does it
//! (docs/blackwell.md §8).
//!
//! ptxas compiles an `-rdc` kernel not knowing whether it will use the
//! stack, so its first instruction `LDC R1, c[0x0][0x37c]` (the stack
//! pointer) gets a scoreboard that some later instruction waits on. A kernel
//! that never reads `R1` does not need it: nvlink's finalizer takes the
//! scoreboard and its wait away and allocates the scoreboards again, which
//! gives the labels whole-program ptxas writes. The producers, the waits
//! that release them and every other bit stay; only the labels change.
//!
//! The allocation is replayed in program order: every group of producers
//! sharing a scoreboard up to the wait that releases it keeps its members,
//! and takes ptxas' own label where the scoreboards busy at that point are
//! the ones ptxas saw (the allocator then decides as ptxas did), else the
//! lowest free scoreboard at or above its class's first one
//! ([`FIRST_SCOREBOARD`], measured). What the replay cannot vouch for keeps
//! ptxas' fields: a wait on a group that a branch, not program order,
//! brings; a branch whose groups would be labelled differently at its
//! target; `DEPBAR`, indirect branches.

use super::{
    is_control, words, Skip, OPCODE, OP_BRA, OP_BRA_UNIFORM, OP_CALL_ABS, OP_CALL_INDIRECT,
};
use super::{GUARD, GUARD_SHIFT, OP_CALL_REL, OP_EXIT, OP_NOP, OP_RET, SLOT};

/// `LDC R1, c[0x0][0x37c]` (first word) and its second word below the
/// control field: the stack-pointer load ptxas puts first in every `-rdc`
/// function.
const STACK_POINTER_LOAD: (u64, u64) = (0x0000_df00_ff01_7b82, 0x800);
/// The second word's bits below the scheduling control field (bit 105).
const BELOW_CONTROL: u64 = (1 << 41) - 1;
/// Control-field positions in the second word (instruction bits 110, 113,
/// 116): write scoreboard, read scoreboard (3 bits, [`NONE`] = none), wait
/// mask (6 bits).
const WRITE_SHIFT: u32 = 46;
const READ_SHIFT: u32 = 49;
const WAIT_SHIFT: u32 = 52;
/// "No scoreboard".
const NONE: u8 = 7;
/// Scoreboards per warp.
const COUNT: u8 = 6;

/// Opcodes of a kernel that uses the stack (calls, returns, local memory:
/// `LDL`, `STL`); nvlink keeps their stack-pointer scoreboard.
const USES_STACK: [u64; 6] = [
    OP_CALL_ABS,
    OP_CALL_REL,
    OP_CALL_INDIRECT,
    OP_RET,
    0x983,
    0x387,
];
/// Opcodes the replay does not handle: `DEPBAR` (names a scoreboard in its
/// operands), `LDGDEPBAR`, `BRX`, `JMX`, `JMP`, `LEPC`, `WARPSYNC` by
/// register (a `.COLLECTIVE` target).
const NOT_REPLAYED: [u64; 8] = [0x91a, 0x9af, 0x949, 0x94c, 0x94a, 0x94e, 0x34e, 0x348];

/// The first scoreboard a producer class takes when it may choose
/// (opcode, read scoreboard, first), measured on the labels of ptxas
/// 13.0.88 in 1,540 sm_100/sm_120 functions (fixtures, a CUB/Thrust program,
/// `libcudadevrt`, a device-feature corpus); other producers take the
/// lowest free one.
const FIRST_SCOREBOARD: [(u64, bool, u8); 26] = [
    (0x228, false, 1), // DMUL
    (0x229, true, 1),  // DADD
    (0x22b, false, 1), // DFMA
    (0x38b, false, 2), // ATOM
    (0x3a9, false, 2), // ATOMG
    (0x3b5, true, 2),
    (0x429, false, 1), // DADD
    (0x42b, false, 1), // DFMA
    (0x5b2, true, 1),  // SYNCS
    (0x5b4, true, 1),
    (0x981, false, 2), // LDG
    (0x983, false, 2), // LDL
    (0x984, true, 1),  // LDS
    (0x985, true, 1),  // ST
    (0x98a, true, 2),  // ATOM
    (0x98a, false, 2), // ATOM
    (0x9a7, true, 1),
    (0x9a8, false, 2), // ATOMG
    (0x9a8, true, 2),  // ATOMG
    (0xb1d, true, 1),  // BAR
    (0xe2b, false, 1), // DFMA
    (0xf66, false, 5), // TLD
    (0xf6f, false, 5), // TXQ
    (0xf8c, true, 1),  // ATOMS
    (0xf99, false, 5), // SULD
    (0xfae, true, 1),  // LDGSTS
];

fn field(w1: u64, shift: u32) -> u8 {
    ((w1 >> shift) & 7) as u8
}
fn wait_mask(w1: u64) -> u8 {
    ((w1 >> WAIT_SHIFT) & 0x3f) as u8
}

/// Whether any instruction after the first may read or write `R1`: a
/// register field (bits 16–23, 24–31, 32–39, 64–71) holding 1. Bits 32–39
/// are part of an immediate, a constant address or a uniform register in
/// the ALU operand forms 2, 4, 5 and 6 (bits 9–11, opcodes below the memory
/// ones: `MOV R8, 0x1` is `0x..0001_0000_7802`); every other field counts,
/// register or not (over-approximate: a kernel in doubt keeps its
/// scoreboard).
fn may_touch_r1(code: &[(u64, u64)]) -> bool {
    code.iter().skip(1).any(|&(w0, w1)| {
        let op = w0 & OPCODE;
        if op == OP_NOP || is_control(op) {
            return false;
        }
        let form = (op >> 9) & 7;
        let b_is_register = op >= 0x980 || !matches!(form, 2 | 4..=6);
        (w0 >> 16) & 0xff == 1
            || (w0 >> 24) & 0xff == 1
            || (b_is_register && (w0 >> 32) & 0xff == 1)
            || w1 & 0xff == 1
    })
}

/// The scoreboard a new group of `op` takes with `busy` taken.
fn choose(busy: u8, op: u64, read: bool) -> Option<u8> {
    let first = FIRST_SCOREBOARD
        .iter()
        .find(|&&(o, r, _)| o == op && r == read)
        .map_or(0, |&(_, _, f)| f);
    let free = |s: &u8| busy & (1 << s) == 0;
    (first..COUNT).find(free).or_else(|| (0..COUNT).find(free))
}

/// The instructions after slot `i` in control flow; `None` for a branch
/// target outside the text.
fn successors(code: &[(u64, u64)], i: usize) -> Option<Vec<usize>> {
    let (w0, w1) = code[i];
    let op = w0 & OPCODE;
    let always = (w0 & GUARD) >> GUARD_SHIFT == 7;
    let next = (i + 1 < code.len()).then_some(i + 1);
    if op == OP_BRA || op == OP_BRA_UNIFORM {
        let offset = super::decode(super::Field::Split, w0, w1);
        let target = (i as i64 + 1) * SLOT as i64 + offset;
        if target < 0 || target % SLOT as i64 != 0 || target / SLOT as i64 >= code.len() as i64 {
            return None;
        }
        let mut s = vec![(target / SLOT as i64) as usize];
        // `BRA.U` has a uniform predicate operand: it may fall through.
        if !(always && op == OP_BRA) {
            s.extend(next);
        }
        return Some(s);
    }
    if op == OP_EXIT && always {
        return Some(Vec::new());
    }
    Some(next.into_iter().collect())
}

/// What an input scoreboard label stands for during the replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Label {
    /// The stack-pointer load's group: no scoreboard any more.
    StackPointer,
    /// A group, now on this scoreboard.
    Now(u8),
}

/// Whether an instruction is the stack-pointer load on a scoreboard.
pub(super) fn stack_pointer_scoreboard((w0, w1): (u64, u64)) -> bool {
    (w0, w1 & BELOW_CONTROL) == STACK_POINTER_LOAD && field(w1, WRITE_SHIFT) != NONE
}

/// Whether a function's code may be re-allocated: it starts with the
/// stack-pointer load on a scoreboard and neither calls nor uses local
/// memory (a quick look; [`reallocate`] decides).
pub(super) fn candidate(code: &[u8]) -> bool {
    code.len() >= SLOT as usize
        && stack_pointer_scoreboard(words(code, 0))
        && !code
            .chunks_exact(SLOT as usize)
            .any(|w| USES_STACK.contains(&(u64::from(u16::from_le_bytes([w[0], w[1]])) & OPCODE)))
}

/// The kernel text with its scoreboards allocated as nvlink's finalizer
/// does (`Ok(None)`: nothing changes: the kernel uses the stack or has no
/// stack-pointer scoreboard).
pub(super) fn reallocate(text: &[u8]) -> Result<Option<Vec<u8>>, Skip> {
    let slots = text.len() / SLOT as usize;
    let code: Vec<(u64, u64)> = (0..slots).map(|i| words(text, i * SLOT as usize)).collect();
    let Some(&(w0, w1)) = code.first() else {
        return Ok(None);
    };
    if !stack_pointer_scoreboard((w0, w1)) {
        return Ok(None);
    }
    if code
        .iter()
        .any(|&(w0, _)| USES_STACK.contains(&(w0 & OPCODE)))
        || may_touch_r1(&code)
    {
        return Ok(None);
    }
    if code
        .iter()
        .any(|&(w0, _)| NOT_REPLAYED.contains(&(w0 & OPCODE)))
    {
        return Err("an instruction the scoreboard replay does not handle");
    }
    let n = code.len();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in 0..n {
        for j in successors(&code, i).ok_or("a branch out of the kernel")? {
            preds[j].push(i);
        }
    }
    // Input labels possibly pending after each instruction, on any path.
    let mut pending_after = vec![0u8; n];
    let mut changed = true;
    while changed {
        changed = false;
        for i in 0..n {
            let before = preds[i].iter().fold(0, |m, &p| m | pending_after[p]);
            let w1 = code[i].1;
            let mut after = before & !wait_mask(w1);
            for s in [field(w1, WRITE_SHIFT), field(w1, READ_SHIFT)] {
                if s < COUNT {
                    after |= 1 << s;
                }
            }
            if after != pending_after[i] {
                pending_after[i] = after;
                changed = true;
            }
        }
    }
    // The replay in program order; the label maps before and after each
    // instruction, for the branch check.
    let mut live: [Option<Label>; COUNT as usize] = [None; COUNT as usize];
    let mut busy = 0u8; // output scoreboards taken
    let mut input_busy = 0u8; // input labels taken
    let mut before = Vec::with_capacity(n);
    let mut after = Vec::with_capacity(n);
    let mut out = Vec::with_capacity(text.len());
    for (i, &(w0, w1)) in code.iter().enumerate() {
        before.push(live);
        let mut wait = 0u8;
        for s in 0..COUNT {
            if wait_mask(w1) & (1 << s) == 0 {
                continue;
            }
            input_busy &= !(1 << s);
            match live[s as usize].take() {
                None => return Err("a scoreboard wait the replay does not reach in program order"),
                Some(Label::StackPointer) => {}
                Some(Label::Now(o)) => {
                    busy &= !(1 << o);
                    wait |= 1 << o;
                }
            }
        }
        let mut fields = [NONE; 2];
        for (k, shift) in [WRITE_SHIFT, READ_SHIFT].into_iter().enumerate() {
            let s = field(w1, shift);
            if s >= COUNT {
                continue;
            }
            fields[k] = match live[s as usize] {
                Some(Label::Now(o)) => o,
                Some(Label::StackPointer) => return Err("a group shared with the stack pointer"),
                None if i == 0 => {
                    live[s as usize] = Some(Label::StackPointer);
                    input_busy |= 1 << s;
                    continue;
                }
                None => {
                    let o = if busy == input_busy {
                        s
                    } else {
                        choose(busy, w0 & OPCODE, k == 1).ok_or("no scoreboard free")?
                    };
                    live[s as usize] = Some(Label::Now(o));
                    busy |= 1 << o;
                    input_busy |= 1 << s;
                    o
                }
            };
        }
        after.push(live);
        let control = (u64::from(fields[0]) << WRITE_SHIFT)
            | (u64::from(fields[1]) << READ_SHIFT)
            | (u64::from(wait) << WAIT_SHIFT);
        let mask = (0x7 << WRITE_SHIFT) | (0x7 << READ_SHIFT) | (0x3f << WAIT_SHIFT);
        out.extend_from_slice(&w0.to_le_bytes());
        out.extend_from_slice(&((w1 & !mask) | control).to_le_bytes());
    }
    // Every branch must find its groups where program order put them.
    for (j, ps) in preds.iter().enumerate() {
        for &p in ps.iter().filter(|&&p| p + 1 != j) {
            for s in 0..COUNT as usize {
                if pending_after[p] & (1 << s) != 0
                    && (after[p][s].is_none() || after[p][s] != before[j][s])
                {
                    return Err("a branch whose scoreboards the replay labels differently");
                }
            }
        }
    }
    Ok((out != text).then_some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ptxas 13.0.88's `-rdc` sm_100 code of a leaf kernel (`if (threadIdx.x
    /// & 1) asm("exit;"); p[threadIdx.x] = 2;`), first word, second word, and
    /// nvlink 13.0.88's second word for it.
    const ASM_EXIT: [(u64, u64, u64); 12] = [
        (0x0000df00ff017b82, 0x000e220000000800, 0x000fe20000000800),
        (0x0000000000057919, 0x000e640000002100, 0x000e240000002100),
        (0x0000000105007812, 0x002fc800078ec0ff, 0x001fc800078ec0ff),
        (0x000000010000780c, 0x000fda0003f05070, 0x000fda0003f05070),
        (0x000000000000894d, 0x001fea0003800000, 0x000fea0003800000),
        (0x0000e000ff027b82, 0x000e220000000a00, 0x000e220000000a00),
        (0x00006b00ff0477ac, 0x000e620008000a00, 0x000e620008000a00),
        (0x00000002ff077431, 0x000fe400000001ff, 0x000fe400000001ff),
        (0x0000000405027825, 0x001fca00078e0002, 0x001fca00078e0002),
        (0x0000000702007986, 0x002fe2000c101904, 0x002fe2000c101904),
        (0x000000000000794d, 0x000fea0003800000, 0x000fea0003800000),
        (0xfffffffc00fc7947, 0x000fc0000383ffff, 0x000fc0000383ffff),
    ];

    fn text(words: impl Iterator<Item = (u64, u64)>) -> Vec<u8> {
        words
            .flat_map(|(a, b)| a.to_le_bytes().into_iter().chain(b.to_le_bytes()))
            .collect()
    }

    #[test]
    fn reallocates_as_nvlink() {
        let input = text(ASM_EXIT.iter().map(|&(a, b, _)| (a, b)));
        let nvlink = text(ASM_EXIT.iter().map(|&(a, _, c)| (a, c)));
        assert_eq!(reallocate(&input), Ok(Some(nvlink)));
    }

    #[test]
    fn a_kernel_that_may_read_r1_keeps_its_scoreboards() {
        // The store's data register is R1 (bits 32–39).
        let mut words: Vec<(u64, u64)> = ASM_EXIT.iter().map(|&(a, b, _)| (a, b)).collect();
        words[9].0 = 0x0000_0001_0200_7986;
        assert_eq!(reallocate(&text(words.into_iter())), Ok(None));
        // A kernel that calls.
        let mut words: Vec<(u64, u64)> = ASM_EXIT.iter().map(|&(a, b, _)| (a, b)).collect();
        words[7].0 = 0x0000_0000_0000_7944;
        assert_eq!(reallocate(&text(words.into_iter())), Ok(None));
    }

    #[test]
    fn waits_it_cannot_follow_keep_the_scoreboards() {
        // A wait on scoreboard 4, which nothing before it set.
        let mut words: Vec<(u64, u64)> = ASM_EXIT.iter().map(|&(a, b, _)| (a, b)).collect();
        words[3].1 |= 1 << (WAIT_SHIFT + 4);
        assert!(reallocate(&text(words.into_iter())).is_err());
        // A branch back to the load of R2 while its group (and S2R's) is
        // pending: program order cannot vouch for the labels there.
        let mut words: Vec<(u64, u64)> = ASM_EXIT.iter().map(|&(a, b, _)| (a, b)).collect();
        let back = super::super::encode(
            super::super::Field::Split,
            0x7947,
            0x000f_c000_0380_0000,
            -0x70,
        );
        words[7] = back.unwrap();
        words[7].0 = (words[7].0 & !GUARD) | (1 << GUARD_SHIFT); // @P1
        assert!(reallocate(&text(words.into_iter())).is_err());
    }
}
