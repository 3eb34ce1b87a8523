//! Scoreboard re-allocation around the stack-pointer load, as nvlink's
//! finalizer does it (docs/blackwell.md §8).
//!
//! ptxas compiles an `-rdc` kernel not knowing whether it will use the
//! stack, so its first instruction `LDC R1, c[0x0][0x37c]` (the stack
//! pointer) gets a scoreboard that some later instruction waits on, or
//! none. A kernel that never reads `R1` does not need it: nvlink's finalizer
//! takes the scoreboard and its waits away ([`Policy::Drop`]); where it puts
//! exit barriers, an `EXIT` before the first branch reached with the load
//! pending waits for it ([`Policy::WaitAtExit`]). Then it allocates the scoreboards again, which
//! gives the labels whole-program ptxas writes. The producers, the waits
//! that release them and every other bit stay; only the labels change.
//!
//! The allocation is replayed in program order: every group of producers
//! sharing a scoreboard up to the wait that releases it keeps its members,
//! and takes ptxas' own label where the scoreboards taken are the ones
//! ptxas saw taken (the allocator then decides as ptxas did), else the
//! lowest free scoreboard at or above its class's first one
//! ([`FIRST_SCOREBOARD`], measured; 5 for a memory group that lives across
//! a join, [`ACROSS_JOIN_FIRST`]; a load that finds its class full joins
//! the group waited for last). Taken are the scoreboards of the groups
//! pending there, of those earlier code brings by other paths into the new
//! group's range (from its producer to the waits for it; a group no wait
//! drains has none if its instruction has a result, and the rest of the
//! code if it is a store's), and of drained groups ptxas' code waits for
//! again before their label is reused (an `ENDCOLLECTIVE` after its
//! `WARPSYNC.COLLECTIVE`). A producer joining a group stays in it.
//! A branch brings its pending groups to its target: a forward one within
//! the pass, a backward one (a loop's wait at the top for a group of the
//! bottom) to the next pass, until they settle (`BRX`/`BRXU` go to every
//! target of the kernel's jump tables; a `BRA` with a condition operand,
//! `BRA.DIV` too, falls through); code only branches reach starts with
//! what they bring. Where paths bring different groups
//! under one label, a wait for it waits for all of them; a wait for a group
//! an earlier wait drained waits on that group's scoreboard again, unless
//! another group took it since. A
//! producer ptxas put on the dropped stack pointer's scoreboard starts a
//! group of its own. What the replay cannot vouch for keeps ptxas' fields:
//! labels that do not settle, a group shared with the kept stack pointer's,
//! a producer joining a label the paths put on different scoreboards,
//! `DEPBAR`, `JMX`. Relabelling keeps the code valid: every wait still
//! drains the groups it drained (a merge only waits longer).

use super::{is_control, words, Skip, CALLS, OPCODE, OP_BRA, OP_BRA_UNIFORM};
use super::{GUARD, GUARD_SHIFT, OP_EXIT, OP_NOP, OP_RET, SLOT};
use super::{OP_BRX, OP_BRXU, OP_WARPSYNC, OP_WARPSYNC_REGISTER, WARPSYNC_TARGET_BIT};

/// Where a `BRA`'s condition operands start in its second word: a
/// predicate (3 bits, `PT` 7), its negation, and whether a uniform
/// register decides (`BRA.DIV`).
const BRANCH_CONDITION_SHIFT: u32 = 23;

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
const USES_STACK: [u64; 6] = [CALLS[0], CALLS[1], CALLS[2], OP_RET, 0x983, 0x387];
/// `ATOMG`, a global atomic.
const OP_ATOMG: u64 = 0x9a8;
/// Opcodes the replay does not handle: `DEPBAR` (names a scoreboard in its
/// operands), `LDGDEPBAR`, `JMX`, `JMP`, `LEPC`.
const NOT_REPLAYED: [u64; 6] = [0x91a, 0x9af, 0x94c, 0x94a, 0x94e, 0x34e];
/// Branches through a jump table.
const INDIRECT: [u64; 2] = [OP_BRX, OP_BRXU];

/// The first scoreboard a producer class takes when it may choose
/// (opcode, read scoreboard, first), measured on the labels of ptxas
/// 13.0.88 in 1,540 sm_100/sm_120 functions (the fixtures, `libcudadevrt`,
/// a corpus of common kernels); other producers take the lowest free one
/// (an `ATOMG`'s read group too: of those opened where the lowest free
/// scoreboard is below 2, ptxas' labels take it 226 times and the lowest
/// from 2 53 times, nvlink's 428 and 102 times).
const FIRST_SCOREBOARD: [(u64, bool, u8); 20] = [
    (0x38b, false, 2), // ATOM
    (0x3a9, false, 2), // ATOMG
    (0x3b5, true, 2),
    (0x5b2, true, 1), // SYNCS
    (0x5b4, true, 1),
    (0x980, false, 2), // LD
    (0x981, false, 2), // LDG
    (0x983, false, 2), // LDL
    (0x984, true, 1),  // LDS
    (0x985, true, 1),  // ST
    (0x98a, true, 2),  // ATOM
    (0x98a, false, 2), // ATOM
    (0x9a7, true, 1),
    (OP_ATOMG, false, 2),
    (0xb1d, true, 1),  // BAR
    (0xf66, false, 5), // TLD
    (0xf6f, false, 5), // TXQ
    (0xf8c, true, 1),  // ATOMS
    (0xf99, false, 5), // SULD
    (0xfae, true, 1),  // LDGSTS
];

/// The first scoreboard of the memory classes: loads and atomics
/// ([`FIRST_SCOREBOARD`]).
const MEMORY_FIRST: u8 = 2;

/// The first scoreboard of a memory class ([`MEMORY_FIRST`]: `LD`, `LDG`,
/// `LDL`, atomics) whose group lives across a join: its first wait,
/// in program order, lies at or past a branch target, or is a `CALL`'s.
/// Measured on nvlink's labels (fixtures, common kernels, CUB/Thrust; sm_100
/// to sm_121): 1,000 of 1,010 such `LDG`, `LD`, `LDL` and `ATOMG` groups
/// take 5, against 7,500 of 8,200 that stay within one block and take the
/// lowest free from 2.
const ACROSS_JOIN_FIRST: u8 = 5;

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

/// FP64 arithmetic (`DMUL`, `DADD`, `DFMA`: bits 0–8), which takes a
/// scoreboard where FP64 is slow (sm_103, sm_120, sm_121).
fn fp64(op: u64) -> bool {
    matches!(op & 0x1ff, 0x028 | 0x029 | 0x02b)
}

/// The scoreboard a new group of `op` takes with `busy` taken, `released`
/// the ones the instruction's own wait released of groups without a memory
/// producer, `across` whether the group is of the memory class and lives
/// across a join ([`ACROSS_JOIN_FIRST`]). FP64 arithmetic takes the lowest
/// of those released, else the lowest free one (measured on nvlink's labels
/// at sm_103/120/121, where the two differ: 311 of 318 FP64 groups take the
/// released scoreboard of arithmetic (FP64, `MUFU`) producers; of 64 whose
/// released group held a global load, 36 take the lowest free one and 4
/// that group's).
fn choose(busy: u8, released: u8, op: u64, read: bool, across: bool) -> Option<u8> {
    let free = |s: &u8| busy & (1 << s) == 0;
    if fp64(op) {
        return (0..COUNT)
            .find(|s| released & (1 << s) != 0 && free(s))
            .or_else(|| (0..COUNT).find(free));
    }
    // (Never seen taken there; else as any group of the class.)
    if across && free(&ACROSS_JOIN_FIRST) {
        return Some(ACROSS_JOIN_FIRST);
    }
    let first = first_scoreboard(op, read);
    (first..COUNT).find(free).or_else(|| (0..COUNT).find(free))
}

/// The first scoreboard of `op`'s write (or read) groups.
fn first_scoreboard(op: u64, read: bool) -> u8 {
    FIRST_SCOREBOARD
        .iter()
        .find(|&&(o, r, _)| o == op && r == read)
        .map_or(0, |&(_, _, f)| f)
}

/// Whether a new group of `op`'s write (or read) field is of the memory
/// class that [`ACROSS_JOIN_FIRST`] applies to.
fn joins_matter(op: u64, read: bool) -> bool {
    !read && first_scoreboard(op, read) == MEMORY_FIRST
}

/// Whether, in program order, a producer joins the stack-pointer load's
/// scoreboard before the first wait for it.
fn stack_pointer_joined(code: &[(u64, u64)]) -> bool {
    let s = field(code[0].1, WRITE_SHIFT);
    for &(_, w1) in &code[1..] {
        if wait_mask(w1) & (1 << s) != 0 {
            return false;
        }
        if field(w1, WRITE_SHIFT) == s || field(w1, READ_SHIFT) == s {
            return true;
        }
    }
    false
}

/// Instructions marked in one walk; a new walk clears them in constant time.
struct Marks {
    stamp: Vec<u32>,
    now: u32,
}

impl Marks {
    fn new(n: usize) -> Marks {
        Marks {
            stamp: vec![0; n],
            now: 0,
        }
    }

    /// Starts a walk: nothing marked.
    fn start(&mut self) {
        self.now = self.now.wrapping_add(1);
        if self.now == 0 {
            self.stamp.fill(0);
            self.now = 1;
        }
    }

    /// Marks `j`; whether it was not marked yet.
    fn mark(&mut self, j: usize) -> bool {
        std::mem::replace(&mut self.stamp[j], self.now) != self.now
    }

    /// Whether `j` is marked in this walk.
    fn has(&self, j: usize) -> bool {
        self.stamp[j] == self.now
    }
}

/// A kernel's control flow, for the walks that ask where a group lives.
/// Each walk goes only where a wait for its label lies ahead ([`Paths::ahead`]),
/// so it costs what the group's life is long, not the kernel.
struct Paths<'a> {
    code: &'a [(u64, u64)],
    succs: &'a [Vec<usize>],
    preds: &'a [Vec<usize>],
    /// For each instruction, the input labels a wait for which some path
    /// after it reaches.
    ahead: Vec<u8>,
    marks: Marks,
}

impl<'a> Paths<'a> {
    fn new(code: &'a [(u64, u64)], succs: &'a [Vec<usize>], preds: &'a [Vec<usize>]) -> Self {
        let mut ahead = vec![0u8; code.len()];
        let mut changed = true;
        while changed {
            changed = false;
            for j in (0..code.len()).rev() {
                let a = succs[j]
                    .iter()
                    .fold(0, |m, &k| m | wait_mask(code[k].1) | ahead[k]);
                if a != ahead[j] {
                    ahead[j] = a;
                    changed = true;
                }
            }
        }
        Paths {
            code,
            succs,
            preds,
            ahead,
            marks: Marks::new(2 * code.len()),
        }
    }

    fn waits(&self, k: usize, s: u8) -> bool {
        wait_mask(self.code[k].1) & (1 << s) != 0
    }

    /// Whether the group instruction `i` opens on input label `s` lives
    /// across a join: on some path from `i`, its first wait lies at or past
    /// a branch target (`joins`: a loop's top too, for a group a loop
    /// carries back), or is a call's (a call waits for every group it
    /// needs). (A load whose value both a warp-divergent slow path and the
    /// fast path wait for takes 5: `cooperative_groups` tile shuffles.)
    fn across_join(&mut self, joins: &[bool], i: usize, s: u8) -> bool {
        // (instruction, crossed a join on the way) pairs, each once.
        self.marks.start();
        let mut stack: Vec<(usize, bool)> = self.succs[i].iter().map(|&j| (j, false)).collect();
        while let Some((j, crossed)) = stack.pop() {
            let crossed = crossed || joins[j];
            if !self.marks.mark(2 * j + usize::from(crossed)) {
                continue;
            }
            if self.waits(j, s) {
                if crossed || CALLS.contains(&(self.code[j].0 & OPCODE)) {
                    return true;
                }
                continue;
            }
            if self.ahead[j] & (1 << s) != 0 {
                stack.extend(self.succs[j].iter().map(|&k| (k, crossed)));
            }
        }
        false
    }

    /// Whether, on some path after instruction `i`, which waits for input
    /// label `s`, another wait for `s` comes before a producer opens it
    /// again: ptxas' code waits again for the group `i` drained (as an
    /// `ENDCOLLECTIVE` for what its `WARPSYNC.COLLECTIVE` waited for), and
    /// the allocator holds its scoreboard until then.
    fn waited_again(&mut self, pending_after: &[u8], i: usize, s: u8) -> bool {
        let w1 = self.code[i].1;
        if field(w1, WRITE_SHIFT) == s || field(w1, READ_SHIFT) == s {
            return false;
        }
        self.marks.start();
        let mut stack: Vec<usize> = self.succs[i].iter().copied().filter(|&k| k > i).collect();
        while let Some(j) = stack.pop() {
            if !self.marks.mark(j) {
                continue;
            }
            // (A wait for what another path brings is no second wait.)
            if self.preds[j]
                .iter()
                .any(|&p| p != i && pending_after[p] & (1 << s) != 0)
            {
                continue;
            }
            let w1 = self.code[j].1;
            if wait_mask(w1) & (1 << s) != 0 {
                return true;
            }
            if field(w1, WRITE_SHIFT) == s || field(w1, READ_SHIFT) == s {
                continue;
            }
            if self.ahead[j] & (1 << s) != 0 {
                stack.extend(self.succs[j].iter().filter(|&&k| k > j));
            }
        }
        false
    }

    /// Where groups from other paths come into the range of the group
    /// instruction `i` opens on input label `s` (the instructions after
    /// which it is pending on some path, up to the waits for it, where a
    /// wait lies ahead; and those waits, where what comes in meets it
    /// before the wait): the predecessors before `i`, outside the range, of
    /// an instruction in it. A group no path waits for: a read group of an
    /// instruction with a result is done with it (a shuffle's: nvlink
    /// shares its scoreboard with a group that comes in), a store's holds
    /// its scoreboard to the end (ptxas' labels avoid what comes in at the
    /// joins after it; CUB's exclusive sums). (A wait a loop carries it
    /// back to is the loop-carried avoid set's.)
    fn entries(&mut self, i: usize, s: u8) -> Vec<usize> {
        let dead = self.ahead[i] & (1 << s) == 0;
        if dead && field(self.code[i].1, WRITE_SHIFT) < COUNT {
            return Vec::new();
        }
        self.marks.start();
        self.marks.mark(i);
        let mut range = vec![i];
        let mut at = 0;
        while let Some(&j) = range.get(at) {
            at += 1;
            for &k in &self.succs[j] {
                if !self.waits(k, s)
                    && (dead || self.ahead[k] & (1 << s) != 0)
                    && self.marks.mark(k)
                {
                    range.push(k);
                }
            }
        }
        let mut from = Vec::new();
        for &j in &range {
            if j != i {
                from.extend(
                    self.preds[j]
                        .iter()
                        .filter(|&&q| q < i && !self.marks.has(q)),
                );
            }
            for &k in self.succs[j].iter().filter(|&&k| k > i && self.waits(k, s)) {
                from.extend(
                    self.preds[k]
                        .iter()
                        .filter(|&&q| q < i && !self.marks.has(q)),
                );
            }
        }
        from.sort_unstable();
        from.dedup();
        from
    }
}

/// The scoreboard from `first` whose groups (`live`) the code waits for
/// last after instruction `i` (`waits`: where each input label is waited
/// for, in program order): where none of a memory class is free, nvlink's
/// allocator puts a new load there rather than below its class (measured on
/// CUB's radix-sort single-tile kernels: twelve loads in flight).
fn shared(live: &Labels, waits: &[Vec<usize>], i: usize, first: u8) -> Option<u8> {
    (first..COUNT)
        .filter_map(|o| {
            // The wait that drains the scoreboard: the first for any group on it.
            let drained = live
                .iter()
                .enumerate()
                .filter(|(_, l)| l.is_some_and(|l| l.mask() & (1 << o) != 0))
                .map(|(t, _)| {
                    let at = waits[t].partition_point(|&j| j <= i);
                    waits[t].get(at).copied().unwrap_or(usize::MAX)
                })
                .min()?;
            Some((drained, o))
        })
        .max()
        .map(|(_, o)| o)
}

/// Ends the hold on the scoreboard of label `s`'s drained group
/// ([`Paths::waited_again`]): it is free unless a live group or another hold is on
/// it.
fn unhold(lingering: &mut [Option<u8>; COUNT as usize], s: u8, live: &Labels, busy: &mut u8) {
    let Some(held) = lingering[s as usize].take() else {
        return;
    };
    let kept = live.iter().flatten().fold(0, |m, l| m | l.mask())
        | lingering.iter().flatten().fold(0, |m, h| m | h);
    *busy &= !(held & !kept);
}

/// The instructions after slot `i` in control flow (`tables`: the byte
/// offsets every jump table of the kernel may branch to, all of them
/// successors of each indirect branch: more edges only check more);
/// `None` for a branch target outside the text.
fn successors(code: &[(u64, u64)], i: usize, tables: &[u32]) -> Option<Vec<usize>> {
    let (w0, w1) = code[i];
    let op = w0 & OPCODE;
    let always = (w0 & GUARD) >> GUARD_SHIFT == 7;
    let next = (i + 1 < code.len()).then_some(i + 1);
    let collective =
        matches!(op, OP_WARPSYNC | OP_WARPSYNC_REGISTER) && w1 & WARPSYNC_TARGET_BIT != 0;
    if op == OP_BRA || op == OP_BRA_UNIFORM || collective {
        let offset = super::decode(super::Field::Split, w0, w1);
        let target = (i as i64 + 1) * SLOT as i64 + offset;
        if target < 0 || target % SLOT as i64 != 0 || target / SLOT as i64 >= code.len() as i64 {
            return None;
        }
        let mut s = vec![(target / SLOT as i64) as usize];
        // `BRA P1` has a predicate operand (bits 87–90, `PT` 7), `BRA.DIV`
        // and `BRA.U` a uniform one (bit 91), `WARPSYNC.COLLECTIVE` goes on
        // when the warp is converged: they may fall through.
        if !(always && op == OP_BRA && (w1 >> BRANCH_CONDITION_SHIFT) & 0x1f == 7) {
            s.extend(next);
        }
        return Some(s);
    }
    if INDIRECT.contains(&op) {
        if tables.is_empty() {
            return None;
        }
        let mut s = Vec::with_capacity(tables.len() + 1);
        for &t in tables {
            let t = t as usize;
            if !t.is_multiple_of(SLOT as usize) || t / SLOT as usize >= code.len() {
                return None;
            }
            s.push(t / SLOT as usize);
        }
        if !always {
            s.extend(next);
        }
        s.sort_unstable();
        s.dedup();
        return Some(s);
    }
    // (An `EXIT` with another condition operand than `PT`, never seen, may
    // fall through as a `BRA` with one does.)
    if op == OP_EXIT && always && (w1 >> BRANCH_CONDITION_SHIFT) & 0x1f == 7 {
        return Some(Vec::new());
    }
    Some(next.into_iter().collect())
}

/// What an input scoreboard label stands for during the replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Label {
    /// The stack-pointer load's group, dropped ([`Policy::Drop`]).
    Dropped,
    /// The stack-pointer load's group on this scoreboard, waited at the
    /// next `EXIT` ([`Policy::WaitAtExit`]).
    Stack(u8),
    /// A group, now on these scoreboards (a mask: one scoreboard, or one
    /// for each path that brings the label to a join).
    Now(u8),
}

impl Label {
    /// The label as a branch brings it: the stack pointer's group as any.
    fn settled(self) -> Label {
        match self {
            Label::Stack(o) => Label::Now(1 << o),
            l => l,
        }
    }

    /// The scoreboards the group is on.
    fn mask(self) -> u8 {
        match self {
            Label::Dropped => 0,
            Label::Stack(o) => 1 << o,
            Label::Now(m) => m,
        }
    }
}

/// One input label where paths meet: the groups each brings, together (a
/// wait for the label waits for all of them, as nvlink's waits do).
fn merge(a: Option<Label>, b: Option<Label>) -> Option<Label> {
    let (Some(x), Some(y)) = (a, b) else {
        return a.or(b);
    };
    let m = x.mask() | y.mask();
    Some(match (x, y) {
        (Label::Stack(o), _) | (_, Label::Stack(o)) if m == 1 << o => Label::Stack(o),
        _ if m == 0 => Label::Dropped,
        _ => Label::Now(m),
    })
}

/// Takes into the replay's state (labels, where each group opened, output
/// and input scoreboards taken) the groups a branch brings.
fn absorb(from: &Labels, (live, opened, busy, input_busy): &mut (Labels, Opened, u8, u8)) {
    for (s, brought) in from.iter().enumerate() {
        let Some(brought) = brought else { continue };
        let merged = merge(live[s], Some(*brought));
        if merged != live[s] {
            live[s] = merged;
            opened[s] = None;
            *input_busy |= 1 << s;
            *busy |= brought.mask();
        }
    }
}

/// What nvlink's finalizer does with a kernel's stack-pointer scoreboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Policy {
    /// A final link without `-g`: a kernel that never reads `R1` loses it.
    Drop,
    /// Exit barriers in front of the `EXIT`s (`-g` links; kernels that call,
    /// in links with a `-G` object): an `EXIT` before the kernel's first
    /// branch reached while the stack-pointer load is pending waits for it
    /// (measured: ptxas leaves it pending past an early `EXIT`; nvlink adds
    /// the wait there and allocates the later groups again), whatever the
    /// kernel does.
    WaitAtExit,
}

/// Whether a kernel's code branches through a jump table.
pub(super) fn indirect(text: &[u8]) -> bool {
    text.chunks_exact(SLOT as usize)
        .any(|w| INDIRECT.contains(&(words(w, 0).0 & OPCODE)))
}

/// A text's instructions, both words of each.
fn instructions(text: &[u8]) -> Vec<(u64, u64)> {
    text.chunks_exact(SLOT as usize)
        .map(|w| words(w, 0))
        .collect()
}

/// Whether an instruction is the stack-pointer load on a scoreboard.
pub(super) fn stack_pointer_scoreboard((w0, w1): (u64, u64)) -> bool {
    (w0, w1 & BELOW_CONTROL) == STACK_POINTER_LOAD && field(w1, WRITE_SHIFT) != NONE
}

/// Whether an opcode is one of a kernel that uses the stack
/// ([`USES_STACK`]).
pub(super) fn uses_stack(op: u64) -> bool {
    USES_STACK.contains(&op)
}

/// The kernel text with its scoreboards allocated as nvlink's finalizer
/// does under `policy` (`Ok(None)`: nothing changes: no stack-pointer
/// scoreboard, or, to drop it, a kernel that uses the stack); `tables` the
/// targets of its jump tables (`EIATTR_INDIRECT_BRANCH_TARGETS`).
pub(super) fn reallocate(
    text: &[u8],
    policy: Policy,
    tables: &[u32],
) -> Result<Option<Vec<u8>>, Skip> {
    let code = instructions(text);
    let Some(&(w0, w1)) = code.first() else {
        return Ok(None);
    };
    if !stack_pointer_scoreboard((w0, w1)) {
        return Ok(None);
    }
    if policy == Policy::Drop
        && (code.iter().any(|&(w0, _)| uses_stack(w0 & OPCODE)) || may_touch_r1(&code))
    {
        return Ok(None);
    }
    if policy == Policy::WaitAtExit && stack_pointer_joined(&code) {
        // (Measured on CUB's radix-sort histogram kernel in `-g` links:
        // nvlink adds no wait at the early `EXIT` and keeps ptxas' labels.)
        return Err("a group shared with the stack pointer");
    }
    if code
        .iter()
        .any(|&(w0, _)| NOT_REPLAYED.contains(&(w0 & OPCODE)))
    {
        return Err("an instruction the scoreboard replay does not handle");
    }
    let n = code.len();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut succs: Vec<Vec<usize>> = Vec::with_capacity(n);
    for i in 0..n {
        let next = successors(&code, i, tables).ok_or("a branch out of the kernel")?;
        for &j in &next {
            preds[j].push(i);
        }
        succs.push(next);
    }
    // Branch targets: where groups from elsewhere may join.
    let joins: Vec<bool> = preds
        .iter()
        .enumerate()
        .map(|(j, ps)| ps.iter().any(|&p| p + 1 != j))
        .collect();
    let mut paths = Paths::new(&code, &succs, &preds);
    // What the rounds ask of each producer, found once: whether its write
    // is of the memory class, and whether that group lives across a join.
    let classes: Vec<Class> = code
        .iter()
        .enumerate()
        .map(|(i, &(w0, w1))| {
            let memory = joins_matter(w0 & OPCODE, false);
            let s = field(w1, WRITE_SHIFT);
            Class {
                memory,
                across: memory && s < COUNT && paths.across_join(&joins, i, s),
            }
        })
        .collect();
    // Where other paths' groups come into each new group's range.
    let any_join = joins.iter().any(|&j| j);
    let comes_in: Vec<[Vec<usize>; 2]> = code
        .iter()
        .enumerate()
        .map(|(i, &(_, w1))| {
            [WRITE_SHIFT, READ_SHIFT].map(|shift| {
                let s = field(w1, shift);
                if any_join && s < COUNT {
                    paths.entries(i, s)
                } else {
                    Vec::new()
                }
            })
        })
        .collect();
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
    // The labels each wait drains that a later wait drains again.
    let waits_again: Vec<u8> = code
        .iter()
        .enumerate()
        .map(|(i, &(_, w1))| {
            (0..COUNT)
                .filter(|&s| {
                    wait_mask(w1) & (1 << s) != 0 && paths.waited_again(&pending_after, i, s)
                })
                .fold(0, |m, s| m | 1 << s)
        })
        .collect();
    let waits: Vec<Vec<usize>> = (0..COUNT)
        .map(|s| {
            (0..n)
                .filter(|&j| wait_mask(code[j].1) & (1 << s) != 0)
                .collect()
        })
        .collect();
    let flow = Flow {
        waits: &waits,
        waits_again: &waits_again,
        preds: &preds,
        succs: &succs,
        pending_after: &pending_after,
    };
    // The replay, seeded at branch targets with the groups their branches
    // bring (loops: a wait at the top for a group of the bottom), until the
    // seeds settle.
    let mut seeds: Vec<Labels> = vec![[None; COUNT as usize]; n];
    let mut avoid: Vec<[u8; 2]> = vec![[0; 2]; n];
    let mut ahead: Vec<[Ahead; 2]> = vec![[Ahead::default(); 2]; n];
    for _ in 0..MAX_ROUNDS {
        let replay = replay(&code, &classes, &flow, &seeds, &avoid, &ahead, policy);
        // The groups other paths bring into each new group's range, as
        // this pass labelled them.
        let next_ahead: Vec<[Ahead; 2]> = comes_in
            .iter()
            .zip(&code)
            .map(|(from, &(_, w1))| {
                [0, 1].map(|k| {
                    let s = field(w1, [WRITE_SHIFT, READ_SHIFT][k]);
                    Ahead::brought(&replay.after, &pending_after, &from[k], s)
                })
            })
            .collect();
        let mut next: Vec<Labels> = vec![[None; COUNT as usize]; n];
        let mut next_avoid: Vec<[u8; 2]> = vec![[0; 2]; n];
        for (j, ps) in preds.iter().enumerate() {
            // (Forward branches seed their targets within the pass.)
            for &p in ps.iter().filter(|&&p| p + 1 != j && j <= p) {
                let (Some(after), Some(opened)) = (replay.after.get(p), replay.opened.get(p))
                else {
                    continue;
                };
                for s in 0..COUNT as usize {
                    if pending_after[p] & (1 << s) == 0 || after[s].is_none() {
                        continue;
                    }
                    next[j][s] = merge(next[j][s], after[s].map(Label::settled));
                    // A group carried back to the top of a loop must not
                    // take a scoreboard another group holds there (as
                    // nvlink's allocator: measured on a copy loop).
                    // (Not an atomic's: a histogram loop's `ATOMG` read group
                    // takes the lowest free scoreboard, held there or not.)
                    let carried = after[s].is_some_and(|l| l.mask() != 0)
                        && opened[s].is_some_and(|(i, _)| code[i].0 & OPCODE != OP_ATOMG);
                    if let (true, Some((i, k)), Some(top)) =
                        (carried, opened[s], replay.entry.get(j))
                    {
                        for (t, label) in top.iter().enumerate() {
                            if let (true, Some(label)) = (t != s, label) {
                                next_avoid[i][k] |= label.mask();
                            }
                        }
                    }
                }
            }
        }
        let settled = next == seeds && next_avoid == avoid && next_ahead == ahead;
        avoid = next_avoid;
        ahead = next_ahead;
        seeds = next;
        let out = match replay.out {
            Ok(out) => out,
            // A wait a later round's seeds may explain.
            Err(why) if why == UNREACHED && !settled => continue,
            Err(why) => return Err(why),
        };
        if !settled {
            continue;
        }
        // Every branch must find its groups under the label it brings them.
        for (j, ps) in preds.iter().enumerate() {
            for &p in ps.iter().filter(|&&p| p + 1 != j) {
                for s in 0..COUNT as usize {
                    let (brought, there) = (replay.after[p][s], replay.before[j][s]);
                    if pending_after[p] & (1 << s) != 0
                        && match (brought, there) {
                            (Some(b), Some(t)) => b.mask() & !t.mask() != 0,
                            _ => true,
                        }
                    {
                        return Err("a branch whose scoreboards the replay labels differently");
                    }
                }
            }
        }
        return Ok((out != text).then_some(out));
    }
    Err("scoreboard labels that do not settle along the branches")
}

/// The input labels' meaning at one point (index: input label).
type Labels = [Option<Label>; COUNT as usize];

/// Rounds of seeding before the replay gives up.
const MAX_ROUNDS: usize = 8;

/// Why a replay stops at a wait on a label it has no group for.
const UNREACHED: Skip = "a scoreboard wait the replay does not reach";

/// One replay: the new text, and the label maps before and after each
/// instruction it got to.
struct Replay {
    out: Result<Vec<u8>, Skip>,
    before: Vec<Labels>,
    /// The labels before each instruction from program order and forward
    /// branches only (without what backward branches bring).
    entry: Vec<Labels>,
    after: Vec<Labels>,
    /// After each instruction, which instruction and field (0 write, 1
    /// read) opened each input label's group.
    opened: Vec<Opened>,
}

/// Where each input label's group was opened (instruction, field).
type Opened = [Option<(usize, usize)>; COUNT as usize];

/// The groups other paths bring into a new group's range ([`Paths::entries`]):
/// their scoreboards and their input labels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Ahead {
    /// The scoreboards they are on.
    output: u8,
    /// Their input labels.
    input: u8,
}

impl Ahead {
    /// What the predecessors `from` bring pending on labels other than `s`,
    /// as a pass labelled them (`after`: the labels after each instruction
    /// it got to).
    fn brought(after: &[Labels], pending_after: &[u8], from: &[usize], s: u8) -> Ahead {
        let mut a = Ahead::default();
        for &q in from {
            let Some(labels) = after.get(q) else { continue };
            for (t, label) in labels.iter().enumerate() {
                if let (true, Some(label)) =
                    (t != s as usize && pending_after[q] & (1 << t) != 0, label)
                {
                    a.output |= label.mask();
                    a.input |= 1 << t;
                }
            }
        }
        a
    }
}

/// An instruction's write field as the allocator classes it.
#[derive(Debug, Clone, Copy)]
struct Class {
    /// Of the memory class ([`MEMORY_FIRST`]).
    memory: bool,
    /// A memory group that lives across a join ([`ACROSS_JOIN_FIRST`]).
    across: bool,
}

/// A kernel's control flow as the replay follows it.
struct Flow<'a> {
    /// Each instruction's predecessors, in program order.
    preds: &'a [Vec<usize>],
    /// Each instruction's successors.
    succs: &'a [Vec<usize>],
    /// Input labels possibly pending after each instruction, on any path.
    pending_after: &'a [u8],
    /// The labels each instruction's wait drains that a later wait drains
    /// again ([`Paths::waited_again`]).
    waits_again: &'a [u8],
    /// Where each input label is waited for, in program order.
    waits: &'a [Vec<usize>],
}

/// The allocation replayed in program order, a forward branch bringing its
/// groups to its target within the pass, `seeds` giving the groups a
/// backward branch brought in the previous round, `avoid` the scoreboards
/// a new group of an instruction's field must not take.
fn replay(
    code: &[(u64, u64)],
    classes: &[Class],
    flow: &Flow,
    seeds: &[Labels],
    avoid: &[[u8; 2]],
    ahead: &[[Ahead; 2]],
    policy: Policy,
) -> Replay {
    let mut r = Replay {
        out: Ok(Vec::with_capacity(code.len() * SLOT as usize)),
        before: Vec::with_capacity(code.len()),
        entry: Vec::with_capacity(code.len()),
        after: Vec::with_capacity(code.len()),
        opened: Vec::with_capacity(code.len()),
    };
    let mut live: Labels = [None; COUNT as usize];
    let mut opened: Opened = [None; COUNT as usize];
    // Input labels whose group holds a memory producer ([`MEMORY_FIRST`];
    // a group a branch brings counts as without one).
    let mut memory = 0u8;
    let mut busy = 0u8; // output scoreboards taken
    let mut input_busy = 0u8; // input labels taken
    let mut out = Vec::with_capacity(code.len() * SLOT as usize);
    let mut unreached = false;
    // The scoreboards of each label's last group, once waited for.
    let mut released: [Option<u8>; COUNT as usize] = [None; COUNT as usize];
    // The scoreboards of drained groups ptxas waits for again, held till then.
    let mut lingering: [Option<u8>; COUNT as usize] = [None; COUNT as usize];
    for (i, &(w0, w1)) in code.iter().enumerate() {
        if i > 0 && !flow.succs[i - 1].contains(&i) {
            // Reached by branches only (past an `EXIT` or a `BRA`): nothing
            // pending but what they bring.
            live = [None; COUNT as usize];
            opened = [None; COUNT as usize];
            (memory, busy, input_busy) = (0, 0, 0);
            lingering = [None; COUNT as usize];
        }
        let mut forward: Labels = [None; COUNT as usize];
        for &p in flow.preds[i].iter().filter(|&&p| p + 1 != i && p < i) {
            for (s, label) in r.after[p].iter().enumerate() {
                if flow.pending_after[p] & (1 << s) != 0 {
                    forward[s] = merge(forward[s], *label);
                }
            }
        }
        let mut state = (live, opened, busy, input_busy);
        absorb(&forward, &mut state);
        r.entry.push(state.0);
        absorb(&seeds[i], &mut state);
        (live, opened, busy, input_busy) = state;
        r.before.push(live);
        let mut wait = 0u8;
        // What the wait released of groups without a memory producer.
        let mut released_arithmetic = 0u8;
        let mut waits = wait_mask(w1);
        if w0 & OPCODE == OP_EXIT {
            for (s, label) in live.iter().enumerate() {
                if matches!(label, Some(Label::Stack(_))) {
                    waits |= 1 << s;
                }
            }
        }
        for s in 0..COUNT {
            if waits & (1 << s) == 0 {
                continue;
            }
            if wait_mask(w1) & (1 << s) == 0 {
                // The wait an EXIT gets for the stack pointer: its label
                // stays taken in ptxas' code until ptxas' own wait, which
                // then releases nothing.
                if let Some(Label::Stack(o)) = live[s as usize] {
                    busy &= !(1 << o);
                    wait |= 1 << o;
                    live[s as usize] = Some(Label::Dropped);
                }
                continue;
            }
            input_busy &= !(1 << s);
            opened[s as usize] = None;
            let arithmetic = memory & (1 << s) == 0;
            memory &= !(1 << s);
            match live[s as usize].take() {
                // A wait for a group an earlier wait drained (ptxas waits
                // where the registers ask, pending or not; so does nvlink,
                // on the scoreboards that group got).
                None => match released[s as usize] {
                    Some(m) => {
                        // (Not where another group took it since: nvlink
                        // waits for nothing there.)
                        let held = lingering[s as usize].unwrap_or(0);
                        wait |= m & (!busy | held);
                        unhold(&mut lingering, s, &live, &mut busy);
                    }
                    // Go on: the rest of the replay gives the next round's
                    // seeds.
                    None => unreached = true,
                },
                Some(label) => {
                    let m = label.mask();
                    released[s as usize] = Some(m);
                    if flow.waits_again[i] & (1 << s) != 0 {
                        // Held, scoreboard and input label, until ptxas'
                        // next wait for it.
                        lingering[s as usize] = Some(m);
                        input_busy |= 1 << s;
                    } else {
                        busy &= !m;
                    }
                    wait |= m;
                    if arithmetic {
                        released_arithmetic |= m;
                    }
                    // A scoreboard waited for is drained for every group
                    // on it (another label's, brought by another path).
                    for (t, other) in live.iter_mut().enumerate() {
                        if let Some(Label::Now(mt)) = *other {
                            if mt & m != 0 {
                                *other = (mt & !m != 0).then_some(Label::Now(mt & !m));
                                if other.is_none() {
                                    released[t] = Some(mt);
                                    // (Its input label stays taken: ptxas
                                    // saw it so till its own wait.)
                                }
                            }
                        }
                    }
                }
            }
        }
        let mut fields = [NONE; 2];
        // (0 write, 1 read.) The read scoreboard is allocated first
        // (measured on nvlink's labels of instructions opening both: `F2I`
        // 823 of 841 read below write, `SHFL` 296 of 302, `POPC` 206 of 206;
        // the other order shows only in `-G` code, which is not replayed).
        for (k, shift) in [(1, READ_SHIFT), (0, WRITE_SHIFT)] {
            let s = field(w1, shift);
            if s >= COUNT {
                continue;
            }
            let decided = match live[s as usize] {
                // A producer joining a group stays in it, also where ptxas
                // had all six taken and the replay has one free (the
                // allocator shares deliberately, with scoreboards free, in
                // most of its joins; measured on CUB/Thrust: of 22 kernels
                // the replay gave up on here, 15 now link as nvlink's).
                Some(Label::Now(m)) if m.count_ones() == 1 => Ok(m.trailing_zeros() as u8),
                Some(Label::Now(_)) => Err("a producer joining a group the paths label apart"),
                Some(Label::Stack(_)) => Err("a group shared with the stack pointer"),
                None if i == 0 && policy == Policy::Drop => {
                    live[s as usize] = Some(Label::Dropped);
                    input_busy |= 1 << s;
                    continue;
                }
                // A new group, or one ptxas put on the dropped stack
                // pointer's scoreboard (for want of a free one: measured on
                // CUB kernels, where nvlink gives it a scoreboard of its own).
                None | Some(Label::Dropped) => {
                    unhold(&mut lingering, s, &live, &mut busy);
                    let on_dropped = live[s as usize].is_some();
                    let away = avoid[i][k];
                    let Ahead { output, input } = ahead[i][k];
                    let o = if !on_dropped
                        && busy | output == input_busy | input
                        && away & (1 << s) == 0
                    {
                        Some(s)
                    } else {
                        let (op, read) = (w0 & OPCODE, k == 1);
                        let across = !read && classes[i].across;
                        let released = released_arithmetic;
                        let taken = busy | away | output;
                        let o = choose(taken, released & !taken, op, read, across)
                            .or_else(|| choose(busy | away, released & !away, op, read, across))
                            .or_else(|| choose(busy, released, op, read, across));
                        let first = first_scoreboard(op, read);
                        if first >= MEMORY_FIRST && o.is_none_or(|o| o < first) {
                            // None of its class free: it joins the group of
                            // its class's scoreboards waited for last.
                            shared(&live, flow.waits, i, first).or(o)
                        } else {
                            o
                        }
                    };
                    match o {
                        Some(o) => {
                            live[s as usize] = Some(if i == 0 {
                                Label::Stack(o)
                            } else {
                                Label::Now(1 << o)
                            });
                            opened[s as usize] = Some((i, k));
                            busy |= 1 << o;
                            input_busy |= 1 << s;
                            Ok(o)
                        }
                        None => Err("no scoreboard free"),
                    }
                }
            };
            match decided {
                Ok(o) => {
                    fields[k] = o;
                    if k == 0 && classes[i].memory {
                        memory |= 1 << s;
                    }
                }
                Err(why) => {
                    r.out = Err(why);
                    return r;
                }
            }
        }
        // (A branch: it may go elsewhere than on.)
        if !flow.succs[i].is_empty() && flow.succs[i] != [i + 1] {
            // Only an `EXIT` before the kernel's first branch waits for
            // the stack pointer (measured on `-g` links of the common
            // kernels, CUB/Thrust and libcudadevrt: 6 of 6 such `EXIT`s
            // reached with it pending wait, 0 of 138 past a branch; a branch
            // around the wait ptxas put at a `CALL` adds none either).
            for label in live.iter_mut().flatten() {
                *label = label.settled();
            }
        }
        r.after.push(live);
        r.opened.push(opened);
        let control = (u64::from(fields[0]) << WRITE_SHIFT)
            | (u64::from(fields[1]) << READ_SHIFT)
            | (u64::from(wait) << WAIT_SHIFT);
        let mask = (0x7 << WRITE_SHIFT) | (0x7 << READ_SHIFT) | (0x3f << WAIT_SHIFT);
        out.extend_from_slice(&w0.to_le_bytes());
        out.extend_from_slice(&((w1 & !mask) | control).to_le_bytes());
    }
    r.out = if unreached { Err(UNREACHED) } else { Ok(out) };
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::{Object, ObjectSection};
    use std::path::Path;

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

    /// The same for a grid-stride copy loop (`for (i = threadIdx.x; i < n;
    /// i += blockDim.x) d[i] = s[i];`): the store's read scoreboard is waited
    /// at the top of the loop, a group program order reaches only through
    /// the branch back.
    const COPY_LOOP: [(u64, u64, u64); 25] = [
        (0x0000df00ff017b82, 0x000e220000000800, 0x000fe20000000800),
        (0x0000000000007919, 0x000e620000002100, 0x000e220000002100),
        (0x00007200ff0877ac, 0x000e640008000a00, 0x000e240008000a00),
        (0x0000000800007c0c, 0x002fc8000bf06070, 0x001fc8000bf06070),
        (0x00000009ff007c0c, 0x000fda000bf06100, 0x000fda000bf06100),
        (0x000000000000094d, 0x001fea0003800000, 0x000fea0003800000),
        (0x00000000ff077431, 0x000fe200000001ff, 0x000fe200000001ff),
        (0x00006c00ff0477ac, 0x000e220008000800, 0x000e220008000800),
        (0x00006b00ff0677ac, 0x000e620008000a00, 0x000e620008000a00),
        (0x00007000ff0c77ac, 0x000ea80008000c00, 0x000ea80008000c00),
        (0x0000000400047824, 0x048fe200078e00ff, 0x048fe200078e00ff),
        (0x0000000200057819, 0x000fc80000010207, 0x000fc80000010207),
        (0x0000000e04027c10, 0x004fc8000ff1e0ff, 0x004fc8000ff1e0ff),
        (0x0000000f05037c10, 0x000fcc00087fe4ff, 0x000fcc00087fe4ff),
        (0x0000000602037981, 0x002ea2000c1e1900, 0x002ea2000c1e1900),
        (0x0000000c04047c10, 0x000fc8000ff1e0ff, 0x000fc8000ff1e0ff),
        (0x0000000d05057c10, 0x000fe400087fe4ff, 0x000fe400087fe4ff),
        (0x0000000400007c10, 0x001fca000ff1e0ff, 0x001fca000ff1e0ff),
        (0x000000ffff077224, 0x000fe200000e0607, 0x000fe200000e0607),
        (0x0000000800007c0c, 0x000fc8000bf06070, 0x000fc8000bf06070),
        (0x0000000907007c0c, 0x000fe2000bf06100, 0x000fe2000bf06100),
        (0x0000000304007986, 0x0047d8000c101906, 0x0047d8000c101906),
        (0xfffffffc00cc8947, 0x000fea000383ffff, 0x000fea000383ffff),
        (0x000000000000794d, 0x000fea0003800000, 0x000fea0003800000),
        (0xfffffffc00fc7947, 0x000fc0000383ffff, 0x000fc0000383ffff),
    ];

    /// The same at sm_120 for `if (i < n) a[i] = a[i] * a[i + 1] + 2.0 *
    /// a[i + 2];` (fixture `sb_realloc`'s `dmath`): the `DFMA` waits for a
    /// group of two global loads and the `DADD`, and takes the lowest free
    /// scoreboard, not that group's.
    const DMATH: [(u64, u64, u64); 20] = [
        (0x0000df00ff017b82, 0x000e220000000800, 0x000fe20000000800),
        (0x0000000000057919, 0x000e620000002100, 0x000e220000002100),
        (0x00007100ff0477ac, 0x000e640008000800, 0x000e240008000800),
        (0x0000000405007c0c, 0x002fda000bf06270, 0x001fda000bf06270),
        (0x000000000000094d, 0x000fea0003800000, 0x000fea0003800000),
        (0x0000e000ff027b82, 0x000e620000000a00, 0x000e220000000a00),
        (0x00006b00ff0477ac, 0x000ea20008000a00, 0x000e620008000a00),
        (0x0000000805027825, 0x002fca00078e0002, 0x001fca00078e0002),
        (0x0000100402087981, 0x004ea8000c1e1b00, 0x002ea8000c1e1b00),
        (0x0000000402047981, 0x000ee8000c1e1b00, 0x000ee8000c1e1b00),
        (0x0000080402067981, 0x000ee2000c1e1b00, 0x000ee2000c1e1b00),
        (0x0000000008087229, 0x004ede0000000008, 0x004ede0000000008),
        (0x0000000000007918, 0x000fde0000000000, 0x000fde0000000000),
        (0x0000000000007918, 0x000fde0000000000, 0x000fde0000000000),
        (0x0000000000007918, 0x000fde0000000000, 0x000fde0000000000),
        (0x0000000000007918, 0x000fc80000000000, 0x000fc80000000000),
        (0x000000060404722b, 0x008e640000000008, 0x008e240000000008),
        (0x0000000402007986, 0x002fe2000c101b04, 0x001fe2000c101b04),
        (0x000000000000794d, 0x000fea0003800000, 0x000fea0003800000),
        (0xfffffffc00fc7947, 0x000fc0000383ffff, 0x000fc0000383ffff),
    ];

    /// ptxas 13.0.88's `-rdc` sm_100 code of a stencil kernel (`s[t + 1] =
    /// in[i]; if (t == 0) s[0] = i > 0 ? in[i - 1] : 0; if (t == n - 1) ...;
    /// __syncthreads(); out[i] = s[t] + s[t + 1] + s[t + 2];`), and nvlink's
    /// second words: two paths bring different groups under one label to
    /// the load after the barrier.
    const STENCIL: [(u64, u64, u64); 55] = [
        (0x0000df00ff017b82, 0x000e220000000800, 0x000fe20000000800),
        (0x00000000000f7919, 0x000e6e0000002100, 0x000e2e0000002100),
        (0x00000000000479c3, 0x000e620000002500, 0x000e220000002500),
        (0x00006b00ff0677ac, 0x000eae0008000a00, 0x000e6e0008000a00),
        (0x0000d800ff0d7b82, 0x000e700000000800, 0x000e300000000800),
        (0x0000e000ff047b82, 0x000ee20000000a00, 0x000ea20000000a00),
        (0x000000040d077c24, 0x002fc8000f8e020f, 0x001fc8000f8e020f),
        (0x0000000407027825, 0x008fca00078e0204, 0x004fca00078e0204),
        (0x0000000602007981, 0x004ea2000c1e1900, 0x002ea2000c1e1900),
        (0x0000000000067802, 0x000fe20000000f00, 0x000fe20000000f00),
        (0x0000012000007945, 0x000fe20003800200, 0x000fe20003800200),
        (0x0000040000097802, 0x000fe20000000f00, 0x000fe20000000f00),
        (0x00000000000b7919, 0x000e620000008800, 0x000e220000008800),
        (0x000000ff0f00720c, 0x000fc60003f05270, 0x000fc60003f05270),
        (0x0000000106067824, 0x000fca00078e0209, 0x000fca00078e0209),
        (0x000000060b067211, 0x002fca00078ec0ff, 0x001fca00078ec0ff),
        (0x000000040f097824, 0x000fca00078e0206, 0x000fca00078e0206),
        (0x0000040009007388, 0x0043e20000000800, 0x0041e20000000800),
        (0x0000000000240947, 0x001fea0003800000, 0x000fea0003800000),
        (0x000000010700780c, 0x000fe20003f06270, 0x000fe20003f06270),
        (0x0000006000017945, 0x000fe20003800200, 0x000fe20003800200),
        (0x00000000ff0b7431, 0x000fd600000001ff, 0x000fd600000001ff),
        (0x00000000000c8947, 0x000fea0003800000, 0x000fea0003800000),
        (0xffffffff070b7810, 0x000fca0007ffe0ff, 0x000fca0007ffe0ff),
        (0x000000040b047825, 0x000fca00078e0004, 0x000fca00078e0004),
        (0x00000006040b7981, 0x000164000c1e1900, 0x000364000c1e1900),
        (0x0000000000017941, 0x000fea0003800200, 0x000fea0003800200),
        (0x0000000b06007388, 0x0205e40000000800, 0x0205e40000000800),
        (0x0000000000007941, 0x000fea0003800200, 0x000fea0003800200),
        (0xffffffff0d007810, 0x002fe20007ffe0ff, 0x001fe20007ffe0ff),
        (0x000000d000007945, 0x000fe60003800200, 0x000fe60003800200),
        (0x000000000f00720c, 0x000fda0003f05270, 0x000fda0003f05270),
        (0x0000000000280947, 0x000fea0003800000, 0x000fea0003800000),
        (0x00007200ff0477ac, 0x000e620008000800, 0x000e220008000800),
        (0x0000007000017945, 0x000fe20003800200, 0x000fe20003800200),
        (0x000000040d057824, 0x001fe200078e0206, 0x002fe200078e0206),
        (0x000000ff00007202, 0x000fe20000000f00, 0x000fe20000000f00),
        (0xffffffff04047890, 0x002fcc000fffe0ff, 0x001fcc000fffe0ff),
        (0x0000000407007c0c, 0x000fda000bf06270, 0x000fda000bf06270),
        (0x0000000000040947, 0x000fea0003800000, 0x000fea0003800000),
        (0x0000040602007981, 0x000164000c1e1900, 0x000164000c1e1900),
        (0x0000000000017941, 0x000fea0003800200, 0x000fea0003800200),
        (0x0000040005007388, 0x0203e40000000800, 0x0207e40000000800),
        (0x0000000000007941, 0x000fea0003800200, 0x000fea0003800200),
        (0x0000000000007b1d, 0x000ff00000010000, 0x000ff00000010000),
        (0x0000e200ff027b82, 0x001e220000000a00, 0x001e220000000a00),
        (0x0000000009007984, 0x002fe80000000800, 0x008fe80000000800),
        (0x0000040009057984, 0x000e620000000800, 0x002e620000000800),
        (0x0000000407027825, 0x001fc600078e0202, 0x001fc600078e0202),
        (0x00000800090b7984, 0x004e220000000800, 0x004e220000000800),
        (0x0000000500007221, 0x002fc80000000000, 0x002fc80000000000),
        (0x0000000b000b7221, 0x001fca0000000000, 0x001fca0000000000),
        (0x0000000b02007986, 0x000fe2000c101906, 0x000fe2000c101906),
        (0x000000000000794d, 0x000fea0003800000, 0x000fea0003800000),
        (0xfffffffc00fc7947, 0x000fc0000383ffff, 0x000fc0000383ffff),
    ];

    fn text(words: impl IntoIterator<Item = (u64, u64)>) -> Vec<u8> {
        words
            .into_iter()
            .flat_map(|(a, b)| a.to_le_bytes().into_iter().chain(b.to_le_bytes()))
            .collect()
    }

    /// ptxas' words of a table.
    fn ptxas(table: &[(u64, u64, u64)]) -> Vec<(u64, u64)> {
        table.iter().map(|&(a, b, _)| (a, b)).collect()
    }

    /// nvlink's words of a table.
    fn nvlink(table: &[(u64, u64, u64)]) -> Vec<(u64, u64)> {
        table.iter().map(|&(a, _, c)| (a, c)).collect()
    }

    /// The replay of ptxas' words under [`Policy::Drop`].
    fn replayed(words: Vec<(u64, u64)>) -> Result<Option<Vec<u8>>, Skip> {
        reallocate(&text(words), Policy::Drop, &[])
    }

    /// A producer: instruction and field (0 write, 1 read).
    type Producer = (usize, usize);

    /// The producers possibly pending before each instruction, on any path,
    /// under the labels `label` gives them and the waits `waits` makes.
    fn pending_before(
        next: &[Vec<usize>],
        label: impl Fn(Producer) -> u8,
        waits: impl Fn(usize) -> u8,
    ) -> Vec<std::collections::BTreeSet<Producer>> {
        let n = next.len();
        let mut before = vec![std::collections::BTreeSet::new(); n];
        let mut changed = true;
        while changed {
            changed = false;
            for i in 0..n {
                let mut after: std::collections::BTreeSet<Producer> = before[i]
                    .iter()
                    .filter(|&&q| waits(i) & (1 << label(q)) == 0)
                    .copied()
                    .collect();
                after.extend((0..2).map(|k| (i, k)).filter(|&q| label(q) < COUNT));
                for &j in &next[i] {
                    let len = before[j].len();
                    before[j].extend(after.iter().copied());
                    changed |= before[j].len() != len;
                }
            }
        }
        before
    }

    /// Whether `out` drains, on every path, every producer ptxas' `input`
    /// waits for where `input` waits for it (a producer `out` leaves
    /// without a scoreboard, the dropped stack pointer, excepted): the
    /// replay may relabel and wait longer, never less.
    fn drains_what_ptxas_drains(input: &[(u64, u64)], out: &[(u64, u64)]) -> Result<(), String> {
        let next: Vec<Vec<usize>> = (0..input.len())
            .map(|i| successors(input, i, &[]).unwrap())
            .collect();
        let shift = [WRITE_SHIFT, READ_SHIFT];
        let label_in = |(p, k): Producer| field(input[p].1, shift[k]);
        let label_out = |(p, k): Producer| field(out[p].1, shift[k]);
        let wait_in = |i: usize| wait_mask(input[i].1);
        let wait_out = |i: usize| wait_mask(out[i].1);
        let (pending_in, pending_out) = (
            pending_before(&next, label_in, wait_in),
            pending_before(&next, label_out, wait_out),
        );
        for i in 0..input.len() {
            for &q in &pending_in[i] {
                let needed = wait_in(i) & (1 << label_in(q)) != 0 && label_out(q) < COUNT;
                if needed && pending_out[i].contains(&q) && wait_out(i) & (1 << label_out(q)) == 0 {
                    return Err(format!(
                        "{:#x}: ptxas waits for {:#x} (field {}), the replay does not",
                        i * SLOT as usize,
                        q.0 * SLOT as usize,
                        q.1
                    ));
                }
            }
        }
        Ok(())
    }

    /// Every kernel of the Blackwell fixtures' objects that the replay
    /// relabels, under either policy, keeps every dependency ptxas' labels
    /// enforce (paths that bring different groups under one label to a
    /// join included: the replay waits for all of them there).
    #[test]
    fn replayed_kernels_wait_for_all_ptxas_waits_for() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/link");
        let mut checked = 0;
        for case in std::fs::read_dir(&root).unwrap() {
            for file in std::fs::read_dir(case.unwrap().path()).unwrap() {
                let path = file.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if !(name.contains(".sm_1") && name.ends_with(".o")) {
                    continue;
                }
                let data = std::fs::read(&path).unwrap();
                let elf = object::File::parse(&*data).unwrap();
                for section in elf.sections() {
                    let section_name = section.name().unwrap();
                    if !section_name.starts_with(".text.") {
                        continue;
                    }
                    let bytes = section.data().unwrap();
                    // (Jump-table kernels need their targets, not read here.)
                    if indirect(bytes) {
                        continue;
                    }
                    let input = instructions(bytes);
                    for policy in [Policy::Drop, Policy::WaitAtExit] {
                        if let Ok(Some(out)) = reallocate(bytes, policy, &[]) {
                            let out = instructions(&out);
                            if let Err(e) = drains_what_ptxas_drains(&input, &out) {
                                panic!("{} {section_name} ({policy:?}): {e}", path.display());
                            }
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked >= 100, "only {checked} replayed kernels checked");
    }

    #[test]
    fn paths_labelled_apart_are_waited_for_together() {
        // nvlink waits for each group where its registers are overwritten
        // (4 instructions differ); the replay waits for both at ptxas' wait.
        let out = replayed(ptxas(&STENCIL)).unwrap().unwrap();
        let out = instructions(&out);
        assert_eq!(drains_what_ptxas_drains(&ptxas(&STENCIL), &out), Ok(()));
        let nvlink = nvlink(&STENCIL);
        assert_eq!(out[0], nvlink[0]);
        let differ = out.iter().zip(&nvlink).filter(|(a, b)| a != b).count();
        assert!(differ <= 4, "{differ} instructions differ from nvlink's");
    }

    #[test]
    fn a_wait_for_a_drained_group_waits_on_its_scoreboard() {
        // ptxas waits where the registers ask, also for a group an earlier
        // wait drained (CUB's radix-sort histogram kernel at sm_100: a loop
        // top's wait drains a constant load its first use waits for again;
        // nvlink keeps that wait, on the load's new scoreboard). Here `S2R`
        // (label 1, scoreboard 0 in nvlink's code) is waited for twice.
        let mut words = ptxas(&ASM_EXIT);
        words[3].1 |= 1 << (WAIT_SHIFT + 1);
        let mut expected = nvlink(&ASM_EXIT);
        expected[3].1 |= 1 << WAIT_SHIFT;
        assert_eq!(replayed(words), Ok(Some(text(expected))));
    }

    #[test]
    fn a_group_joining_the_pending_stack_pointer_keeps_ptxas_labels_in_debug_links() {
        // ptxas leaves the stack pointer pending past the early `EXIT` and
        // puts a later load on its scoreboard (CUB's radix-sort histogram
        // kernel at sm_100/103/120/121, whose `-g` links nvlink leaves as
        // ptxas wrote them): here the load of R2 joins it.
        let mut words = ptxas(&ASM_EXIT);
        words[4].1 &= !(0x3f << WAIT_SHIFT);
        let debug = reallocate(&text(words.clone()), Policy::WaitAtExit, &[]);
        assert_eq!(debug, Err("a group shared with the stack pointer"));
    }

    #[test]
    fn reallocates_as_nvlink() {
        assert_eq!(
            replayed(ptxas(&ASM_EXIT)),
            Ok(Some(text(nvlink(&ASM_EXIT))))
        );
    }

    #[test]
    fn register_warpsync_is_no_branch() {
        // `WARPSYNC R0` (no `.COLLECTIVE` target) in place of the HFMA2:
        // the same re-allocation.
        let warpsync = |mut words: Vec<(u64, u64)>| {
            words[7] = (
                0x0000_0000_0000_7348,
                words[7].1 & !WARPSYNC_TARGET_BIT & !0xff,
            );
            words
        };
        assert_eq!(
            replayed(warpsync(ptxas(&ASM_EXIT))),
            Ok(Some(text(warpsync(nvlink(&ASM_EXIT)))))
        );
    }

    #[test]
    fn only_an_unconditional_bra_does_not_fall_through() {
        // Words of ptxas 13.0.88 (sm_100, CUB block scans) as cuobjdump
        // reads them, at slot 2 of a 16-slot text; target 0x40 is slot 4.
        let at = |words: (u64, u64)| {
            let mut code = vec![(OP_NOP, 0); 16];
            code[2] = words;
            let offset = 0x40 - 3 * SLOT as i64;
            let (w0, w1) =
                super::super::encode(super::super::Field::Split, words.0, words.1, offset)
                    .expect("an offset in range");
            code[2] = (w0, w1);
            successors(&code, 2, &[]).expect("a target in the text")
        };
        // `BRA 0x2c0`: the target only.
        assert_eq!(at((0xffff_fffc_0014_7947, 0x000f_ea00_0383_ffff)), [4]);
        // `BRA.DIV UR4, 0x430` (bit 91): the converged path falls through.
        assert_eq!(at((0x0000_0002_0480_7947, 0x000f_ec00_0b80_0000)), [4, 3]);
        // `@P0 BRA P1, 0x1c20` and `BRA` with a predicate operand.
        assert_eq!(at((0x0000_0000_0000_0947, 0x000f_ea00_0083_0000)), [4, 3]);
        assert_eq!(at((0x0000_0000_0000_7947, 0x000f_ea00_0083_0000)), [4, 3]);
    }

    #[test]
    fn a_hold_ends_only_where_no_live_group_is_on_its_scoreboard() {
        let mut lingering = [None; COUNT as usize];
        let mut live: Labels = [None; COUNT as usize];
        // Label 1's drained group held scoreboard 0; label 0's new group is on it.
        lingering[1] = Some(1 << 0);
        live[0] = Some(Label::Now(1 << 0));
        let mut busy = 1 << 0;
        unhold(&mut lingering, 1, &live, &mut busy);
        assert_eq!((busy, lingering[1]), (1 << 0, None));
        lingering[2] = Some(1 << 3);
        busy |= 1 << 3;
        unhold(&mut lingering, 2, &live, &mut busy);
        assert_eq!(busy, 1 << 0);
    }

    #[test]
    fn loop_carried_waits_as_nvlink() {
        assert_eq!(
            replayed(ptxas(&COPY_LOOP)),
            Ok(Some(text(nvlink(&COPY_LOOP))))
        );
    }

    #[test]
    fn a_kernel_that_may_read_r1_keeps_its_scoreboards() {
        // The store's data register is R1 (bits 32–39).
        let mut words = ptxas(&ASM_EXIT);
        words[9].0 = 0x0000_0001_0200_7986;
        assert_eq!(replayed(words), Ok(None));
        // A kernel that calls.
        let mut words = ptxas(&ASM_EXIT);
        words[7].0 = 0x0000_0000_0000_7944;
        assert_eq!(replayed(words), Ok(None));
    }

    #[test]
    fn waits_it_cannot_follow_keep_the_scoreboards() {
        // A wait on scoreboard 4, which nothing before it set.
        let mut words = ptxas(&ASM_EXIT);
        words[3].1 |= 1 << (WAIT_SHIFT + 4);
        assert!(replayed(words).is_err());
    }

    #[test]
    fn a_join_of_paths_labelled_apart_waits_for_each() {
        // A branch back to the load of R2 while its group (and S2R's) is
        // pending: the paths into the load bring different groups under
        // one label, and the waits for it drain both.
        let mut words = ptxas(&ASM_EXIT);
        let back = super::super::encode(
            super::super::Field::Split,
            0x7947,
            0x000f_c000_0380_0000,
            -0x70,
        );
        words[7] = back.unwrap();
        words[7].0 = (words[7].0 & !GUARD) | (1 << GUARD_SHIFT); // @P1
        let out = replayed(words.clone()).unwrap().unwrap();
        let out = instructions(&out);
        assert_eq!(drains_what_ptxas_drains(&words, &out), Ok(()));
        // The stack pointer's scoreboard goes, as without the branch.
        assert_eq!(field(out[0].1, WRITE_SHIFT), NONE);
    }

    #[test]
    fn fp64_takes_a_released_scoreboard_of_arithmetic_only() {
        assert_eq!(replayed(ptxas(&DMATH)), Ok(Some(text(nvlink(&DMATH)))));
        let dfma = 0x22b;
        assert_eq!(choose(0b0, 0b1000, dfma, false, false), Some(3));
        assert_eq!(choose(0b0, 0, dfma, false, false), Some(0));
    }

    #[test]
    fn memory_groups_across_a_join_take_scoreboard_5() {
        // (g_exit_brxu: nvlink gives the LDG whose value the switch's cases
        // wait for 5; a group waited within its block 2.)
        let code = [
            (0x0000_0006_0602_7981, 0x000e_2200_0c1e_1900), // LDG, write scoreboard 0
            (0x0000_0000_0000_7947, 0x000f_c000_0380_0000), // BRA to the next
            (0x0000_0007_0000_7210, 0x001f_ca00_07ff_e0ff), // waits 0 (a join)
        ];
        let preds_of = |succs: &[Vec<usize>]| {
            let mut preds = vec![Vec::new(); succs.len()];
            for (j, ks) in succs.iter().enumerate() {
                for &k in ks {
                    preds[k].push(j);
                }
            }
            preds
        };
        let succs = [vec![1], vec![2], vec![]];
        let preds = preds_of(&succs);
        let mut paths = Paths::new(&code, &succs, &preds);
        let joins = [false, false, true];
        assert!(paths.across_join(&joins, 0, 0));
        assert!(!paths.across_join(&[false; 3], 0, 0));
        // Waited only through a backward branch, at a loop's top.
        let looped = [vec![1], vec![2], vec![0]];
        let preds = preds_of(&looped);
        let top = [true, false, false];
        let wait_at_top = [code[2], code[1], code[0]];
        assert!(Paths::new(&wait_at_top, &looped, &preds).across_join(&top, 2, 0));
        let ldg = 0x981;
        assert_eq!(choose(0b1, 0, ldg, false, true), Some(5));
        assert_eq!(choose(0b1, 0, ldg, false, false), Some(2));
        assert_eq!(choose(0b10_0001, 0, ldg, false, true), Some(2));
        // Generic loads start at 2 too; other classes ignore the join.
        assert_eq!(choose(0b1, 0, 0x980, false, false), Some(2));
        assert!(joins_matter(0x980, false) && joins_matter(ldg, false));
        assert!(!joins_matter(ldg, true) && !joins_matter(0x984, false));
    }
}
