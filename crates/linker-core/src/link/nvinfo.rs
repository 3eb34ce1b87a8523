//! Phase 7: CUDA metadata of the output.
//!
//! - `.nv.info` (module): every input's records with symbol indices renumbered;
//!   records of dropped functions removed; `EIATTR_MAX_STACK_SIZE` dropped;
//!   each kernel's `EIATTR_REGCOUNT` raised to the maximum over its call tree;
//!   an `EIATTR_MIN_STACK_SIZE` added per kernel (its frame plus the deepest
//!   chain of callee frames). Recursion or calls through a pointer make that
//!   unknowable: one warning per kernel (at most [`MAX_STACK_WARNINGS`], then a
//!   summary line).
//! - `.nv.info.<fn>`: renumbered; a kernel's `EIATTR_NUM_BARRIERS` raised to
//!   its call tree's maximum (added when only callees use barriers), its
//!   `EIATTR_NUM_MBARRIERS` set to the sum over the distinct functions of its
//!   call tree (see [`kernel_mbarriers`]), the flags of [`TREE_FLAGS`] its call
//!   tree has added.
//! - `.nv.compat`: the inputs' attributes merged (first-seen order, maximum
//!   value per code); `CAN_FASTPATH_FINALIZE` dropped below sm_100, as nvlink
//!   does, and on Blackwell computed from the inputs with live code.
//! - `.nv.callgraph` and `.nv.prototype`: rebuilt from the inputs' entries
//!   with symbols (and prototype signature strings) renumbered.
//! - `.note.nv.tkinfo`: culink's own entry, then every input's notes in order;
//!   `.note.nv.cuinfo`: the first input's note, once.
//! - `.nv.rel.action`: the relocation action table nvlink writes into every
//!   final cubin.

use super::live::Live;
use super::sections::{Body, InfoTo, LinkTo, OutSection, Plan, Role};
use super::symbols::{SymRef, SymbolDb};
use super::symtab::SymTable;
use super::{Diags, InputFile, OutSecId};
use crate::arch::SmArch;
use crate::config::LinkOptions;
use crate::cubin::callgraph::{encode_prototypes, CallEdge, CallGraph, PrototypeEntry};
use crate::cubin::compat::{self, EiCompat};
use crate::cubin::eiattr::{self, EiAttr, EiFormat, OwnedRecord, OwnedValue, SymFields};
use crate::cubin::notes::{parse_notes, TkInfo};
use crate::elf::*;
use crate::error::{Error, ErrorKind, Result};
use crate::fxhash::{HashMap, HashSet};
use rayon::prelude::*;

/// Individual stack-size warnings before they are summarized.
pub const MAX_STACK_WARNINGS: usize = 8;

/// The bytes of `.nv.rel.action` in every nvlink 13.0 final cubin (all arches):
/// one action describing `R_CUDA_CONST_FIELD22_37` for the driver.
pub const REL_ACTION: [u8; 16] = [
    0x73, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x00, 0x00, 0x11, 0x25, 0x00, 0x05, 0x36,
];

/// Tool name culink records in its `.note.nv.tkinfo` entry.
pub const TOOL_NAME: &str = "culink";

/// Ids of the metadata sections created before the symbol table.
#[derive(Debug, Clone, Default)]
pub(crate) struct MetaSections<'d> {
    pub tkinfo: Option<OutSecId>,
    pub cuinfo: Option<OutSecId>,
    pub nv_info: Option<OutSecId>,
    pub compat: Option<OutSecId>,
    pub callgraph: Option<OutSecId>,
    pub prototype: Option<OutSecId>,
    /// Per live function index: its `.nv.info.<fn>`.
    pub fn_info: HashMap<u32, OutSecId>,
    /// [`called_names`], computed once (it was 2 × 2.4% of a 2000-object link).
    pub called: HashSet<&'d str>,
}

fn first_with_type<'a>(
    f: &'a InputFile<'_>,
    ty: u32,
    name: &str,
) -> Option<&'a crate::cubin::Section<'a>> {
    f.cubin
        .sections
        .iter()
        .find(|s| s.sh_type == ty && s.name == name)
}

/// Whether an input function symbol survives into the output.
fn func_survives(files: &[InputFile<'_>], db: &SymbolDb<'_>, plan: &Plan, r: SymRef) -> bool {
    match db.resolve(r) {
        Some(def) => {
            let sym = &files[def.file.0 as usize].cubin.symbols[def.index as usize];
            sym.section()
                .is_some_and(|s| plan.placement[def.file.0 as usize][s as usize].is_some())
        }
        None => {
            let sym = &files[r.file.0 as usize].cubin.symbols[r.index as usize];
            super::relocate::stays_undefined(sym.name)
        }
    }
}

/// Whether the `.nv.prototype` entry of symbol `sym` of `f` is kept: nvlink
/// keeps the prototypes of functions live code calls directly, except
/// address-taken ones (their prototype travels with the call graph's
/// address-taken list); `-r`, `--preserve-relocs` and `-g` keep every one
/// but those of address-taken functions (measured: f called, g called and
/// taken, t taken, u unused keep f and u; fixture `proto_taken_keep_all`).
fn keeps_prototype(
    files: &[InputFile<'_>],
    db: &SymbolDb<'_>,
    live: &Live,
    plan: &Plan,
    called: &HashSet<&str>,
    f: &InputFile<'_>,
    sym: u32,
) -> bool {
    let Some(s) = f.cubin.symbols.get(sym as usize) else {
        return false;
    };
    let r = SymRef {
        file: f.id,
        index: sym,
    };
    let address_taken = live
        .func_of_symbol(files, db, r)
        .filter(|&fi| live.funcs[fi as usize].address_taken)
        .is_some_and(|fi| {
            // A function with `.alias` names: taken is per name (nvlink keeps
            // `f`'s prototype when only its aliases are taken; fixture
            // `alias_function`).
            !live.aliases.contains_key(&fi) || name_taken(files, s.name)
        });
    !address_taken && (plan.keeps_everything() || called.contains(s.name))
}

/// Whether an input's call graph lists `name` as address-taken.
fn name_taken(files: &[InputFile<'_>], name: &str) -> bool {
    files.iter().any(|f| {
        f.cubin
            .sections
            .iter()
            .filter(|s| s.sh_type == SHT_CUDA_CALLGRAPH)
            .filter_map(|s| crate::cubin::callgraph::CallGraph::parse(s.data).ok())
            .any(|g| {
                g.address_taken.iter().any(|&(sym, _)| {
                    f.cubin
                        .symbols
                        .get(sym as usize)
                        .is_some_and(|y| y.name == name)
                })
            })
    })
}

/// Names of functions (defined or not) that a live function calls directly,
/// by call relocation or by the inputs' call-graph list of direct calls (a
/// list entry of a weak copy that lost to a later input's definition counts
/// for the winner, one of a copy that lost to an earlier input's does not).
fn called_names<'d>(files: &[InputFile<'d>], db: &SymbolDb<'d>, live: &Live) -> HashSet<&'d str> {
    let mut out = HashSet::default();
    for f in files {
        let fid = f.id.0 as usize;
        let live_text = |text: u32| {
            live.func_of_text[fid]
                .get(text as usize)
                .copied()
                .flatten()
                .is_some_and(|fi| live.live[fi as usize])
        };
        // The code of a definition that held its name when its input was
        // read and was replaced later still counts (measured at sm_75-120: a
        // weak copy calling `g`, replaced by a later strong one, keeps `g`'s
        // prototype; fixture `frame_weak_replaced`).
        let replaced_text = |text: u32| {
            f.func_sym.get(text as usize).is_some_and(|&i| {
                i != 0
                    && db.replaced.contains(&SymRef {
                        file: f.id,
                        index: i,
                    })
            })
        };
        for s in &f.cubin.sections {
            if s.is_reloc() && (live_text(s.info) || replaced_text(s.info)) {
                for r in f.cubin.relocs(s) {
                    if super::live::is_call_reloc(r.rtype) {
                        if let Some(sym) = f.cubin.symbols.get(r.sym as usize) {
                            out.insert(sym.name);
                        }
                    }
                }
            } else if s.sh_type == SHT_CUDA_CALLGRAPH {
                let Ok(g) = CallGraph::parse(s.data) else {
                    continue;
                };
                for e in g.calls {
                    let Some(callee) = f.cubin.symbols.get(e.callee as usize) else {
                        continue;
                    };
                    // The caller's node: the winning definition, into which
                    // a copy beaten by a later input's was merged (seed 30015).
                    let caller_live = !super::live::lost_to_earlier(db, f, e.caller)
                        && live
                            .func_of_symbol(
                                files,
                                db,
                                SymRef {
                                    file: f.id,
                                    index: e.caller,
                                },
                            )
                            .is_some_and(|fi| live.live[fi as usize]);
                    if caller_live {
                        out.insert(callee.name);
                    }
                }
            }
        }
    }
    out
}

/// Live functions with callees (`tree`, from [`Live::call_tree`]) before callers
/// (back edges of cycles ignored).
fn post_order(live: &Live, tree: &[Vec<u32>]) -> Vec<u32> {
    let n = live.funcs.len();
    let mut state = vec![0u8; n];
    let mut order = Vec::with_capacity(n);
    let mut stack: Vec<(u32, usize)> = Vec::new();
    for root in 0..n as u32 {
        if state[root as usize] != 0 || !live.live[root as usize] {
            continue;
        }
        state[root as usize] = 1;
        stack.push((root, 0));
        while let Some(top) = stack.last_mut() {
            let (f, next) = *top;
            let callees = &tree[f as usize];
            if next < callees.len() {
                top.1 += 1;
                let c = callees[next];
                if state[c as usize] == 0 {
                    state[c as usize] = 1;
                    stack.push((c, 0));
                }
            } else {
                state[f as usize] = 2;
                order.push(f);
                stack.pop();
            }
        }
    }
    order
}

/// A kernel's `EIATTR_NUM_MBARRIERS` after the link: the sum of the
/// `EIATTR_NUM_MBARRIERS` of the distinct functions of its call tree (`tree`,
/// itself included; each function once however often and by however many
/// paths it is called). A lone live kernel (`lone`) sums every live function
/// with a count instead, reached or not (as for `EIATTR_NUM_BARRIERS`).
/// Measured with nvlink 13.0.88 (fixture `cu_mbarriers`): f1 = 1, f2 = 2; a
/// kernel calling both gives 3, one with its own 1 calling f1 gives 2, one
/// calling f1 twice and through two helpers f1 and f2 gives 3; callers that
/// are not kernels keep their own values. `None` when no function of the
/// tree has the record; a record of 0 counts (a kernel reaching tcgen05 code
/// whose `EIATTR_NUM_MBARRIERS` is 0 gets 0: fixture `tcgen05_callee`).
fn kernel_mbarriers(
    kernel: u32,
    tree: &[Vec<u32>],
    counts: &HashMap<u32, u16>,
    lone: bool,
) -> Option<u16> {
    if lone {
        return (!counts.is_empty())
            .then(|| counts.values().fold(0u16, |s, &v| s.saturating_add(v)));
    }
    reached(kernel, tree)
        .into_iter()
        .filter_map(|f| counts.get(&f).copied())
        .fold(None, |sum, v| Some(sum.unwrap_or(0u16).saturating_add(v)))
}

/// Every function `tree` reaches from `root` (itself included).
fn reached(root: u32, tree: &[Vec<u32>]) -> Vec<u32> {
    let mut seen: HashSet<u32> = HashSet::default();
    let mut stack = vec![root];
    let mut out = Vec::new();
    while let Some(f) = stack.pop() {
        if !seen.insert(f) {
            continue;
        }
        out.push(f);
        stack.extend(
            tree[f as usize]
                .iter()
                .copied()
                .filter(|c| !seen.contains(c)),
        );
    }
    out
}

/// What one function's own `.nv.info.<fn>` says that the call tree combines
/// (read for every live function in parallel by `build`).
#[derive(Debug, Default)]
struct FnFacts {
    /// The live function.
    fi: u32,
    /// `EIATTR_NUM_BARRIERS`, else the count in its text's `sh_flags`
    /// (objects from CUDA 12.8 and earlier, [`crate::cubin::Section::flag_barriers`]).
    barriers: Option<u8>,
    /// Whether `barriers` came from the text's `sh_flags` (the output gets
    /// a record for it, as nvlink writes one).
    flag_barriers: bool,
    /// `EIATTR_NUM_MBARRIERS`.
    mbarriers: Option<u16>,
    /// Its [`TREE_FLAGS`].
    flags: u8,
    /// `EIATTR_AT_ENTRY_FRAGMENTS`, or-ed.
    fragments: u32,
    /// `EIATTR_VRC_CTA_INIT_COUNT`.
    vrc: Option<u32>,
    /// `EIATTR_MAXREG_COUNT` (kernels).
    maxreg: Option<u32>,
    /// `EIATTR_SPARSE_MMA_MASK`, or-ed (`None`: no record).
    sparse: Option<u16>,
    /// `EIATTR_EXTERNS`: the output symbols it keeps, and those of them
    /// that are defined.
    externs: Option<(Vec<u32>, Vec<u32>)>,
}

/// Why a recursive call tree's stack is unknowable.
const RECURSIVE: &str = "is recursive";

/// The `.nv.info.<fn>` flags (no value) nvlink adds to every kernel whose
/// call tree reaches a function that has one (measured, fixtures
/// `ctaidz_callee`, `ctaidz_lone`, `reserved_smem_callee`): ptxas writes
/// `EIATTR_CTAIDZ_USED` for a `%ctaid.z` read (before sm_90) and
/// `EIATTR_RESERVED_SMEM_USED` for a `%reserved_smem_*` read (and tcgen05
/// code), `EIATTR_TCGEN05_1CTA_USED` / `_2CTA_USED` for `tcgen05.*` of
/// `cta_group::1` / `::2` (sm_100a). Not propagated (measured):
/// `EIATTR_WMMA_USED`. Bit `i` of [`Reach::flags`] is entry `i`.
pub(crate) const TREE_FLAGS: [EiAttr; 4] = [
    EiAttr::EIATTR_CTAIDZ_USED,
    EiAttr::EIATTR_RESERVED_SMEM_USED,
    EiAttr::EIATTR_TCGEN05_1CTA_USED,
    EiAttr::EIATTR_TCGEN05_2CTA_USED,
];

/// The [`TREE_FLAGS`] bit of `attr`, if it is one.
fn tree_flag(attr: EiAttr) -> Option<u8> {
    TREE_FLAGS.iter().position(|&a| a == attr).map(|i| 1 << i)
}

/// What a function and everything it reaches use: the most registers and
/// barriers, and the [`TREE_FLAGS`] any of them has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Reach {
    regs: u32,
    barriers: u8,
    flags: u8,
    /// `EIATTR_AT_ENTRY_FRAGMENTS` (tcgen05 code at sm_100a: 6 for
    /// `cta_group::1`, 7 for `::2`), or-ed.
    fragments: u32,
    /// `EIATTR_VRC_CTA_INIT_COUNT` (0x80 with tcgen05 code), the maximum.
    vrc: u32,
    /// `EIATTR_SPARSE_MMA_MASK` (with a `.alias`'s [`SPARSE_UNKNOWN`]), or-ed.
    sparse: u16,
}

impl Reach {
    /// Both together: the maxima, the union of the flags.
    fn join(self, o: Reach) -> Reach {
        Reach {
            regs: self.regs.max(o.regs),
            barriers: self.barriers.max(o.barriers),
            flags: self.flags | o.flags,
            fragments: self.fragments | o.fragments,
            vrc: self.vrc.max(o.vrc),
            sparse: self.sparse | o.sparse,
        }
    }
}

/// The `EIATTR_SPARSE_MMA_MASK` nvlink 13.0.88 gives a PTX `.alias` of a
/// function: it appends a record of this value per alias to the function's
/// `.nv.info.<fn>`, and in a link holding such a record every kernel's mask
/// becomes the union of its call tree's (measured at sm_90/100/120 with one
/// and two aliases, a kernel calling the alias, one calling the function,
/// one calling neither; without an alias nvlink leaves kernels' masks as
/// ptxas wrote them, as `mma.sp` in a device function shows; fixture
/// `alias_function`). A function without the record (sm_75) gets none.
const SPARSE_UNKNOWN: u16 = 0x8000;

/// Bit of `EIATTR_TCGEN05_1CTA_USED` / `_2CTA_USED` in [`Reach::flags`].
const TCGEN05_1CTA: u8 = 1 << 2;
const TCGEN05_2CTA: u8 = 1 << 3;

/// What a function's call tree implies: deepest stack, what it reaches uses
/// ([`Reach`]), and why the stack size is unknowable (if it is).
#[derive(Debug, Clone, Copy, Default)]
struct TreeFacts {
    depth: u64,
    reach: Reach,
    why: Option<&'static str>,
}

/// Computes [`TreeFacts`] for every live function from the call graph's
/// post-order (`order`, from [`post_order`]: linear in functions + call edges,
/// no recursion). `own(f)` gives a function's frame size and its own
/// [`Reach`]. A callee not yet finished when its caller is (a back edge of
/// the walk) is recursion. A call through a register reaches the address-taken
/// functions of its prototype (`tree`) and is otherwise no reason for a warning.
fn call_tree_facts(
    live: &Live,
    tree: &[Vec<u32>],
    order: &[u32],
    own: impl Fn(u32) -> (u64, Reach),
) -> Vec<TreeFacts> {
    let n = live.funcs.len();
    let mut facts = vec![TreeFacts::default(); n];
    let mut done = vec![false; n];
    for &f in order {
        let (frame, reach) = own(f);
        let mut t = TreeFacts {
            depth: 0,
            reach,
            why: None,
        };
        for &c in &tree[f as usize] {
            if done[c as usize] {
                let ct = facts[c as usize];
                t.depth = t.depth.max(ct.depth);
                t.reach = t.reach.join(ct.reach);
                t.why = t.why.or(ct.why);
            } else {
                t.why = Some(RECURSIVE);
            }
        }
        t.depth += frame;
        facts[f as usize] = t;
        done[f as usize] = true;
    }
    // What a function reaches is over everything it reaches, cycles
    // included (the walk above misses what lies behind a back edge: difftest
    // 40080, 20071; fixture `recursive_barriers`).
    if facts.iter().any(|t| t.why == Some(RECURSIVE)) {
        for (f, reach) in reachable_max(live, tree, |f| own(f).1) {
            facts[f as usize].reach = reach;
        }
    }
    facts
}

/// For every live function, the [`Reach`] of the functions it reaches
/// through `tree` (itself included): Tarjan's strongly
/// connected components, iteratively, each component's value the maximum of
/// its members' own and of the components it calls (which Tarjan finishes
/// first). Linear in functions + edges.
fn reachable_max(live: &Live, tree: &[Vec<u32>], own: impl Fn(u32) -> Reach) -> Vec<(u32, Reach)> {
    const UNSEEN: u32 = u32::MAX;
    let n = live.funcs.len();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut comp = vec![UNSEEN; n];
    let mut comp_val: Vec<Reach> = Vec::new();
    let mut scc: Vec<u32> = Vec::new();
    let mut walk: Vec<(u32, usize)> = Vec::new();
    let mut next = 0u32;
    let mut out = Vec::new();
    for root in 0..n as u32 {
        if index[root as usize] != UNSEEN || !live.live[root as usize] {
            continue;
        }
        walk.push((root, 0));
        while let Some(top) = walk.last_mut() {
            let (v, i) = *top;
            if index[v as usize] == UNSEEN {
                // First visit (pushed unseen, handled here once).
                index[v as usize] = next;
                low[v as usize] = next;
                next += 1;
                scc.push(v);
                on_stack[v as usize] = true;
            }
            if let Some(&w) = tree[v as usize].get(i) {
                top.1 += 1;
                if index[w as usize] == UNSEEN {
                    walk.push((w, 0));
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(index[w as usize]);
                }
                continue;
            }
            walk.pop();
            if let Some(&(p, _)) = walk.last() {
                low[p as usize] = low[p as usize].min(low[v as usize]);
            }
            if low[v as usize] != index[v as usize] {
                continue;
            }
            // `v` roots a component: its members are on `scc` above it.
            let id = comp_val.len() as u32;
            let start = scc.iter().rposition(|&m| m == v).unwrap_or(0);
            let members = scc.split_off(start);
            for &m in &members {
                on_stack[m as usize] = false;
                comp[m as usize] = id;
            }
            let mut val = Reach::default();
            for &m in &members {
                val = val.join(own(m));
                for &c in &tree[m as usize] {
                    let cc = comp[c as usize];
                    if cc != id && cc != UNSEEN {
                        val = val.join(comp_val[cc as usize]);
                    }
                }
            }
            comp_val.push(val);
            out.extend(members.iter().map(|&m| (m, val)));
        }
    }
    out
}

/// Whether input symbol `idx` of `f` is a definition that lost to another input's.
fn lost_definition(db: &SymbolDb<'_>, f: &InputFile<'_>, idx: u32) -> bool {
    let Some(sym) = f.cubin.symbols.get(idx as usize) else {
        return false;
    };
    let r = SymRef {
        file: f.id,
        index: idx,
    };
    !sym.is_undefined() && sym.ty() != STT_SECTION && !db.is_winner(r)
}

/// Whether a `.debug_frame` / `.nv.merc.debug_frame` relocation against
/// input symbol `idx` of `f` is dropped because that symbol is a losing
/// definition (nvlink 13.0.88, measured at sm_75/90/100, fixture
/// `frame_weak_replaced`; `docs/differences.md`); line tables follow the same
/// rule ([`follows_frame_rule`]; measured with `-lineinfo` at sm_90/100/120:
/// a replaced weak copy calling a function loses its line relocations, one
/// without calls keeps them, pointing at the winner; fixture
/// `lineinfo_weak_replaced`):
///
/// * a definition that lost when its input was read
///   ([`super::live::lost_to_earlier`]):
///   every relocation of its FDE goes (range kept, no address);
/// * a definition that held the name and was replaced by a later input's:
///   its `RELA` relocations go when its code has relocations of its own
///   (calls, variable, constant or shared-memory references) — or the code
///   of another copy of the name that held it and was replaced has (a weak
///   copy replaced by a later weak one with fewer registers, then by a
///   strong one: both lose them when either calls or references; the
///   final winner's code and copies that lost when read do not count;
///   difftest seed 500022, fixture `frame_weak_chain`) — its `REL` ones
///   (the address words at sm_75-89) stay; what stays is resolved against the
///   winner (the address kept when the winner is live, the range cleared when
///   it is dead).
///
/// `rela`: the relocation comes from a `SHT_RELA`-like section.
pub(crate) fn frame_reloc_dropped(
    db: &SymbolDb<'_>,
    f: &InputFile<'_>,
    idx: u32,
    rela: bool,
) -> bool {
    if !lost_definition(db, f, idx) {
        return false;
    }
    let chain_relocs = || {
        db.global_of[f.id.0 as usize]
            .get(idx as usize)
            .copied()
            .flatten()
            .is_some_and(|g| db.replaced_with_relocs.contains(&g))
    };
    super::live::lost_to_earlier(db, f, idx)
        || (rela && (code_has_relocations(f, idx) || chain_relocs()))
}

/// Whether a line-table relocation against symbol `idx` of `f` stays while
/// the code it describes is not in the output: a definition replaced by a
/// later input's whose entry [`frame_reloc_dropped`] keeps, pointing at the
/// winner. On sm_100+ nvlink keeps its sequence too (`debugline.rs`).
pub(crate) fn line_kept_for_winner(
    db: &SymbolDb<'_>,
    f: &InputFile<'_>,
    idx: u32,
    rela: bool,
) -> bool {
    lost_definition(db, f, idx) && !frame_reloc_dropped(db, f, idx, rela)
}

/// Whether relocations into section `name` follow [`frame_reloc_dropped`]:
/// the frames and the line tables (SASS or Mercury).
pub(crate) fn follows_frame_rule(name: &str) -> bool {
    name.strip_prefix(".nv.merc").unwrap_or(name) == ".debug_frame" || is_line_table(name)
}

/// Whether relocations into debug section `name` keep a losing definition's
/// entries, pointing at the winner: `.debug_info` and `.debug_loc` (SASS or
/// Mercury; nvcc -G's entries of a weak twin that lost to an earlier one,
/// fixtures `cu_debug_shared`, `cu_debug_shared_g`, `cu_debug_weak_kernel_r`),
/// where the frames and line tables drop them.
pub(crate) fn keeps_losers_entries(name: &str) -> bool {
    matches!(
        name.strip_prefix(".nv.merc").unwrap_or(name),
        ".debug_info" | ".debug_loc"
    )
}

/// Whether a line table is named `name` (SASS or Mercury).
pub(crate) fn is_line_table(name: &str) -> bool {
    matches!(
        name.strip_prefix(".nv.merc").unwrap_or(name),
        ".debug_line" | ".nv_debug_line_sass"
    )
}

/// Whether the section defining symbol `idx` of `f` (a function's text) is
/// the target of at least one relocation.
pub(crate) fn code_has_relocations(f: &InputFile<'_>, idx: u32) -> bool {
    let Some(text) = f.cubin.symbols.get(idx as usize).and_then(|s| s.section()) else {
        return false;
    };
    f.cubin
        .sections
        .iter()
        .any(|s| s.is_reloc() && s.info == text && s.size > 0)
}

/// Creates the metadata sections (empty) so that they get section indices and symbols.
/// Per file, per section index: the first `.nv.info.<fn>` section
/// (`SHF_INFO_LINK`) whose `sh_info` is that section, 0 when none. Replaces a
/// scan of every section per function (29% of `build`'s samples at N = 2000).
fn fn_info_index(files: &[InputFile<'_>]) -> Vec<Vec<u32>> {
    files
        .iter()
        .map(|f| {
            let mut v = vec![0u32; f.cubin.sections.len()];
            for s in f.cubin.sections.iter().rev() {
                if let Some(t) = s.info_section().filter(|_| s.sh_type == SHT_CUDA_INFO) {
                    if let Some(slot) = v.get_mut(t as usize) {
                        *slot = s.index;
                    }
                }
            }
            v
        })
        .collect()
}

/// The `.nv.info.<fn>` input section of `text` in file `f` (see [`fn_info_index`]).
fn fn_info_section<'a, 'd>(
    index: &[Vec<u32>],
    f: &'a InputFile<'d>,
    text: u32,
) -> Option<&'a crate::cubin::Section<'d>> {
    match index[f.id.0 as usize].get(text as usize) {
        Some(&i) if i != 0 => f.cubin.sections.get(i as usize),
        _ => None,
    }
}

/// Whether any input has a section of type `ty`.
fn any_section_of_type(files: &[InputFile<'_>], ty: u32) -> bool {
    files
        .iter()
        .any(|f| f.cubin.sections.iter().any(|s| s.sh_type == ty))
}

pub(crate) fn create_sections<'d>(
    files: &[InputFile<'d>],
    db: &SymbolDb<'d>,
    live: &Live,
    plan: &mut Plan,
) -> Result<MetaSections<'d>> {
    let mut m = MetaSections::default();
    // The cuinfo note of the input with the lowest virtual SM (nvlink keeps
    // sm_80's note in an sm_86 image built from sm_86 and sm_80 objects).
    let first = files
        .iter()
        .filter_map(|f| {
            let s = f.cubin.section_by_name(".note.nv.cuinfo")?;
            let vsm = parse_notes(s.data)
                .ok()
                .and_then(|n| n.first().and_then(|n| n.cuinfo()).and_then(|c| c.ok()))
                .map(|c| c.virtual_sm)
                .unwrap_or(u16::MAX);
            Some((vsm, f.id, f))
        })
        .min_by_key(|(v, id, _)| (*v, *id))
        .map(|(_, _, f)| f)
        .or(files.first());
    // No input has code for the target (nvlink: warnings, exit 0): nvlink's
    // empty cubin still has a cuinfo note (synthesized below), .nv.compat and
    // an empty call graph.
    let empty = files.is_empty();
    // Notes.
    let mut tk = OutSection::new(".note.nv.tkinfo", SHT_NOTE, Role::TkInfo);
    tk.flags = SHF_CUDA_NOTE_TKINFO;
    tk.align = 4;
    tk.section_symbol = true;
    let tk_id = plan.add(tk);
    m.tkinfo = Some(tk_id);
    if let Some(cu) = first.and_then(|f| f.cubin.section_by_name(".note.nv.cuinfo")) {
        let mut o = OutSection::new(".note.nv.cuinfo", SHT_NOTE, Role::CuInfo);
        o.flags = cu.flags;
        o.align = cu.addralign.max(1);
        o.link = LinkTo::Section(tk_id);
        // sh_info names the .nv.compat section (0 without one, as on sm_75).
        o.info = InfoTo::Raw(cu.info);
        o.section_symbol = true;
        o.size = cu.size;
        o.body = Body::Bytes(cu.data.to_vec());
        m.cuinfo = Some(plan.add(o));
    } else if let Some(mut o) = super::blackwell::synthesized_cuinfo(files, plan.arch) {
        // No input has one (CUDA 12 objects carry `.note.nv.cuver`): nvlink writes its own.
        o.link = LinkTo::Section(tk_id);
        m.cuinfo = Some(plan.add(o));
    }
    let any = |name: &str| {
        files
            .iter()
            .any(|f| f.cubin.section_by_name(name).is_some())
    };
    // nvlink omits `.nv.info` when nothing is left in it: no function survives
    // (`-variables-used`) and no input record is a module-wide one (one
    // without a symbol, e.g. the `EIATTR_MERCURY_ISA_VERSION` ptxas writes
    // even into objects with data only: such a link keeps it, fixture
    // `fastpath_data_only`).
    let module_wide_record = || {
        files.iter().any(|f| {
            first_with_type(f, SHT_CUDA_INFO, ".nv.info").is_some_and(|s| {
                eiattr::Iter::<EiAttr>::new(s.data)
                    .any(|r| r.is_ok_and(|r| r.sym_value().is_none()))
            })
        })
    };
    if any(".nv.info") && (live.live.iter().any(|&l| l) || module_wide_record()) {
        let mut o = OutSection::new(".nv.info", SHT_CUDA_INFO, Role::NvInfo);
        o.align = 4;
        o.link = LinkTo::SymTab;
        m.nv_info = Some(plan.add(o));
    }
    if any_section_of_type(files, SHT_CUDA_COMPAT) || plan.arch.is_sm90_or_later() {
        // sm_90+ images always have one (CUDA 12 inputs have none); an
        // empty sm_75-89 cubin has none (measured at sm_75 and sm_80).
        let mut o = OutSection::new(".nv.compat", SHT_CUDA_COMPAT, Role::Compat);
        o.align = 4;
        m.compat = Some(plan.add(o));
    }
    // Per-function .nv.info.<fn> of live functions.
    let info_index = fn_info_index(files);
    for (fi, func) in live.funcs.iter().enumerate() {
        if !live.live[fi] {
            continue;
        }
        let f = &files[func.key.file.0 as usize];
        if let Some(s) = fn_info_section(&info_index, f, func.key.text) {
            let text_out = plan.placement[func.key.file.0 as usize][func.key.text as usize]
                .expect("live function text is placed")
                .out;
            let mut o = OutSection::new(s.name, SHT_CUDA_INFO, Role::NvInfoFn);
            // CUDA 11.8-12.2 objects lack the flag (`Section::info_section`).
            o.flags = s.flags | crate::elf::SHF_INFO_LINK;
            o.align = 4;
            o.link = LinkTo::SymTab;
            o.info = InfoTo::Section(text_out);
            o.func = Some(fi as u32);
            m.fn_info.insert(fi as u32, plan.add(o));
        }
    }
    if empty || any_section_of_type(files, SHT_CUDA_CALLGRAPH) {
        let mut o = OutSection::new(".nv.callgraph", SHT_CUDA_CALLGRAPH, Role::CallGraph);
        o.align = 4;
        o.entsize = 8;
        o.link = LinkTo::SymTab;
        o.section_symbol = true;
        m.callgraph = Some(plan.add(o));
    }
    // .nv.prototype exists only when an entry survives: nvlink keeps the
    // prototypes of functions something live calls directly.
    let called = called_names(files, db, live);
    let keep_proto = |f: &InputFile<'_>, sym: u32| -> bool {
        keeps_prototype(files, db, live, plan, &called, f, sym)
            && func_survives(
                files,
                db,
                plan,
                SymRef {
                    file: f.id,
                    index: sym,
                },
            )
    };
    let mut any_proto = false;
    for f in files {
        for s in f
            .cubin
            .sections
            .iter()
            .filter(|s| s.sh_type == SHT_CUDA_PROTOTYPE)
        {
            let entries = crate::cubin::callgraph::parse_prototypes(s.data)
                .map_err(|e| e.in_file(f.name).in_section(s.name))?;
            any_proto |= entries.iter().any(|e| keep_proto(f, e.symbol));
        }
    }
    if any_proto {
        let mut o = OutSection::new(".nv.prototype", SHT_CUDA_PROTOTYPE, Role::Prototype);
        o.align = 4;
        o.entsize = 8;
        o.link = LinkTo::SymTab;
        o.section_symbol = true;
        m.prototype = Some(plan.add(o));
    }
    if let (Some(cu), Some(compat)) = (m.cuinfo, m.compat) {
        let cu = plan.sec_mut(cu);
        cu.info = InfoTo::Section(compat);
        cu.flags |= crate::elf::SHF_INFO_LINK;
    }
    // Not in `-r` output (nvlink writes it only into final images), nor in
    // Blackwell images.
    if !plan.relocatable && !plan.arch.is_blackwell_or_later() {
        let mut ra = OutSection::new(".nv.rel.action", SHT_CUDA_RELOCINFO, Role::RelAction);
        ra.align = 8;
        ra.entsize = 8;
        ra.section_symbol = true;
        ra.size = REL_ACTION.len() as u64;
        ra.body = Body::Bytes(REL_ACTION.to_vec());
        plan.add(ra);
    }
    m.called = called;
    Ok(m)
}

fn set_bytes(plan: &mut Plan, id: OutSecId, bytes: Vec<u8>) {
    let s = plan.sec_mut(id);
    s.size = bytes.len() as u64;
    s.body = Body::Bytes(bytes);
}

/// Renumbers the symbol fields of one record; `None` when a referenced symbol was dropped.
/// List attributes (`EIATTR_EXTERNS`) keep only the symbols that are still
/// external after the link (`still_external`).
pub(crate) fn renumber(
    rec: &eiattr::Record<'_>,
    map: &impl Fn(u32) -> Option<u32>,
    still_external: &impl Fn(u32) -> bool,
) -> Result<Option<OwnedRecord>> {
    match rec.symbol_fields() {
        SymFields::None => Ok(Some(rec.to_owned_record())),
        SymFields::All => {
            let words = rec.words().unwrap_or_default();
            let kept: Vec<u32> = words
                .iter()
                .filter(|&&w| rec.attr != EiAttr::EIATTR_EXTERNS || still_external(w))
                .filter_map(|&w| map(w))
                .collect();
            if kept.is_empty() {
                Ok(None)
            } else {
                Ok(Some(OwnedRecord::words(rec.attr, &kept)))
            }
        }
        _ => {
            let all_ok = rec.symbol_indices()?.iter().all(|&i| map(i).is_some());
            if !all_ok {
                return Ok(None);
            }
            eiattr::rewrite_symbols(rec, map).map(Some)
        }
    }
}

/// [`renumber`], appended to `out` in wire form; `false` when the record is
/// dropped. A record whose only symbol is its first word (REGCOUNT,
/// FRAME_SIZE, ..., a few per function) is copied and patched in place: no
/// owned copy (two heap blocks per record before: 112,000 at N = 2000).
pub(crate) fn renumber_into(
    rec: &eiattr::Record<'_>,
    map: &impl Fn(u32) -> Option<u32>,
    still_external: &impl Fn(u32) -> bool,
    out: &mut Vec<u8>,
) -> Result<bool> {
    if rec.symbol_fields() == SymFields::First {
        let old = rec
            .payload()
            .and_then(|p| p.get(..4))
            .map_or(0, |w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
        let Some(new) = map(old) else {
            return Ok(false);
        };
        let start = out.len();
        rec.encode(out)?;
        // The payload follows the 4-byte record header.
        out[start + 4..start + 8].copy_from_slice(&new.to_le_bytes());
        return Ok(true);
    }
    match renumber(rec, map, still_external)? {
        Some(owned) => {
            owned.encode(out)?;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// A parallel pass's per-item result; the error is boxed so that the
/// collected vector's elements stay small (an `Error` is 120 bytes).
type Boxed<T> = std::result::Result<T, Box<Error>>;

/// Fills every metadata section (after the symbol table is final).
#[allow(clippy::too_many_arguments)]
pub(crate) fn build(
    files: &[InputFile<'_>],
    db: &SymbolDb<'_>,
    live: &Live,
    syms: &SymTable,
    plan: &mut Plan,
    meta: &MetaSections,
    arch: SmArch,
    opts: &LinkOptions,
    diags: &mut Diags,
) -> Result<()> {
    let _span = tracing::info_span!("nvinfo").entered();
    let mut results: Vec<(OutSecId, Vec<u8>)> = Vec::new();
    let out_of = |file: &InputFile<'_>, idx: u32| -> Option<u32> {
        if idx == 0 || idx as usize >= file.cubin.symbols.len() {
            return None;
        }
        let r = SymRef {
            file: file.id,
            index: idx,
        };
        let sym = &file.cubin.symbols[idx as usize];
        let o = if sym.ty() == STT_SECTION {
            let sec = sym.section()?;
            let p = plan.placement[file.id.0 as usize][sec as usize]?;
            syms.section_symbol(p.out)
        } else {
            syms.output_index(r)
        };
        (o != 0).then_some(o)
    };
    let external = |file: &InputFile<'_>, idx: u32| -> bool {
        (idx as usize) < file.cubin.symbols.len()
            && db
                .resolve(SymRef {
                    file: file.id,
                    index: idx,
                })
                .is_none()
    };
    // An EXTERNS entry naming a defined kernel stays (a kernel launched from
    // device code; nvlink keeps libcudadevrt's memcpy/memset kernels listed by
    // cnprtCnpv2TranslateError); other defined functions go, called or only
    // address-taken (fixture fnptr_code), a called one replaced by the
    // externals of its call tree.
    let defined_kernel = |file: &InputFile<'_>, idx: u32| -> bool {
        (idx as usize) < file.cubin.symbols.len()
            && live
                .func_of_symbol(
                    files,
                    db,
                    SymRef {
                        file: file.id,
                        index: idx,
                    },
                )
                .is_some_and(|fi| live.live[fi as usize] && live.funcs[fi as usize].is_kernel)
    };
    // Function facts by output symbol index.
    let live_funcs: Vec<u32> = (0..live.funcs.len() as u32)
        .filter(|&i| live.live[i as usize])
        .collect();
    let func_by_sym: HashMap<u32, u32> = live_funcs
        .iter()
        .map(|&fi| (syms.func_index[fi as usize], fi))
        .collect();

    // Module .nv.info: every input's records, renumbered per file in parallel,
    // concatenated in file order (the first error in file order wins).
    let module_of = |f: &InputFile<'_>| -> Result<Vec<OwnedRecord>> {
        let Some(s) = first_with_type(f, SHT_CUDA_INFO, ".nv.info") else {
            return Ok(Vec::new());
        };
        let at = |e: Error| e.in_file(f.name).in_section(s.name);
        let mut out = Vec::new();
        for rec in eiattr::Iter::<EiAttr>::new(s.data) {
            let rec = rec.map_err(at)?;
            if rec.attr == EiAttr::EIATTR_MAX_STACK_SIZE && !plan.relocatable {
                continue;
            }
            // Attributes of a discarded definition (another input's won) go with it.
            if rec
                .sym_value()
                .is_some_and(|(i, _)| lost_definition(db, f, i))
            {
                continue;
            }
            if let Some(owned) =
                renumber(&rec, &|i| out_of(f, i), &|i| external(f, i)).map_err(at)?
            {
                out.push(owned);
            }
        }
        Ok(out)
    };
    let per_file: Vec<Result<Vec<OwnedRecord>>> =
        files.par_iter().with_min_len(64).map(module_of).collect();
    let mut module: Vec<OwnedRecord> = Vec::with_capacity(
        per_file
            .iter()
            .map(|r| r.as_ref().map_or(0, Vec::len))
            .sum(),
    );
    for r in per_file {
        module.extend(r?);
    }
    let mut regcount: HashMap<u32, u32> = HashMap::default();
    let mut frame: HashMap<u32, u32> = HashMap::default();
    for owned in &module {
        if let Some((sym, v)) = owned.as_record().sym_value() {
            if owned.attr == EiAttr::EIATTR_REGCOUNT {
                regcount.insert(sym, v);
            } else if owned.attr == EiAttr::EIATTR_FRAME_SIZE {
                frame.insert(sym, v);
            }
        }
    }
    // Call-tree facts of each function's own .nv.info.<fn> (in parallel, in
    // function order): barriers, and the EXTERNS entries that stay.
    let info_index = fn_info_index(files);
    let mut fn_ids: Vec<(&u32, &OutSecId)> = meta.fn_info.iter().collect();
    fn_ids.sort();
    let facts_of = |(&fi, &id): (&u32, &OutSecId)| -> Result<FnFacts> {
        let func = &live.funcs[fi as usize];
        let f = &files[func.key.file.0 as usize];
        let mut facts = FnFacts {
            fi,
            ..FnFacts::default()
        };
        let mut externs = None;
        // Defined entries of every EXTERNS record (a later record replaces
        // the function's own list, as a map insert would).
        let mut defined: Vec<u32> = Vec::new();
        if let Some(s) = fn_info_section(&info_index, f, func.key.text) {
            let name = plan.sec(id).name.as_str();
            for rec in eiattr::Iter::<EiAttr>::new(s.data) {
                let rec = rec.map_err(|e| e.in_file(f.name).in_section(name))?;
                if rec.attr == EiAttr::EIATTR_NUM_BARRIERS {
                    if let Some(v) = rec.int_value() {
                        facts.barriers = Some(v as u8);
                    }
                } else if rec.attr == EiAttr::EIATTR_NUM_MBARRIERS {
                    if let Some(v) = rec.int_value() {
                        facts.mbarriers = Some(u16::try_from(v).unwrap_or(u16::MAX));
                    }
                } else if let Some(bit) = tree_flag(rec.attr) {
                    facts.flags |= bit;
                } else if rec.attr == EiAttr::EIATTR_AT_ENTRY_FRAGMENTS {
                    facts.fragments |= rec.int_value().unwrap_or(0);
                } else if rec.attr == EiAttr::EIATTR_VRC_CTA_INIT_COUNT {
                    facts.vrc = rec.int_value();
                } else if rec.attr == EiAttr::EIATTR_MAXREG_COUNT {
                    facts.maxreg = rec.int_value();
                } else if rec.attr == EiAttr::EIATTR_SPARSE_MMA_MASK {
                    let v = u16::try_from(rec.int_value().unwrap_or(0)).unwrap_or(u16::MAX);
                    facts.sparse = Some(facts.sparse.unwrap_or(0) | v);
                } else if rec.attr == EiAttr::EIATTR_EXTERNS {
                    let mut own: Vec<u32> = Vec::new();
                    for w in rec.words().unwrap_or_default() {
                        let undefined = external(f, w);
                        if !undefined && !defined_kernel(f, w) {
                            continue;
                        }
                        if let Some(o) = out_of(f, w) {
                            own.push(o);
                            if !undefined {
                                defined.push(o);
                            }
                        }
                    }
                    externs = Some(own);
                }
            }
        }
        if facts.barriers.is_none() && !plan.relocatable {
            let n = f
                .cubin
                .sections
                .get(func.key.text as usize)
                .map_or(0, |t| t.flag_barriers());
            if n > 0 {
                facts.barriers = Some(n);
                facts.flag_barriers = true;
            }
        }
        facts.externs = externs.map(|own| (own, defined));
        Ok(facts)
    };
    let fn_facts: Vec<Boxed<FnFacts>> = fn_ids
        .par_iter()
        .copied()
        .with_min_len(256)
        .map(|x| facts_of(x).map_err(Box::new))
        .collect();
    let mut fn_barriers: HashMap<u32, u8> = HashMap::default();
    // Functions whose barrier count was in their text's flags: the count
    // their record gets unless the call tree raises it.
    let mut record_barriers: HashMap<u32, u8> = HashMap::default();
    let mut fn_mbarriers: HashMap<u32, u16> = HashMap::default();
    let mut fn_flags: HashMap<u32, u8> = HashMap::default();
    let mut fn_fragments: HashMap<u32, u32> = HashMap::default();
    let mut fn_vrc: HashMap<u32, u32> = HashMap::default();
    let mut fn_maxreg: HashMap<u32, u32> = HashMap::default();
    let mut fn_sparse: HashMap<u32, u16> = HashMap::default();
    // Whether some function with a SPARSE_MMA_MASK record has an alias.
    let mut any_alias = false;
    let fn_aliases = &live.aliases;
    let mut own_externs: HashMap<u32, Vec<u32>> = HashMap::default();
    // Output symbols kept in EXTERNS lists although defined (see `defined_kernel`).
    let mut defined_externs: HashSet<u32> = HashSet::default();
    for r in fn_facts {
        let FnFacts {
            fi,
            barriers,
            flag_barriers,
            mbarriers,
            flags,
            fragments,
            vrc,
            maxreg,
            sparse,
            externs,
        } = r.map_err(|e| *e)?;
        if let Some(v) = sparse {
            let aliases = fn_aliases.get(&fi).copied().unwrap_or(0);
            if aliases > 0 {
                any_alias = true;
            }
            fn_sparse.insert(fi, if aliases > 0 { v | SPARSE_UNKNOWN } else { v });
        }
        if let Some(m) = maxreg {
            fn_maxreg.insert(fi, m);
        }
        if let Some(v) = vrc {
            fn_vrc.insert(fi, v);
        }
        if flags != 0 {
            fn_flags.insert(fi, flags);
        }
        if fragments != 0 {
            fn_fragments.insert(fi, fragments);
        }
        if let Some(v) = barriers {
            fn_barriers.insert(fi, v);
            if flag_barriers {
                record_barriers.insert(fi, v);
            }
        }
        if let Some(v) = mbarriers {
            fn_mbarriers.insert(fi, v);
        }
        if let Some((own, defined)) = externs {
            defined_externs.extend(defined);
            own_externs.insert(fi, own);
        }
    }
    // EIATTR_EXTERNS after the link: a kernel lists the still-undefined
    // symbols of its whole call tree, callees' first (as nvlink lists them),
    // and the defined kernels its tree lists; a non-kernel function keeps only
    // its own entries (measured: fixture `cu_externs_chain`, k -> f -> g ->
    // printf gives f no EXTERNS; libcudadevrt's __cudaCDP2LaunchDeviceV2 does
    // not inherit the kernels cnprtCnpv2TranslateError lists; nvcc -G's
    // non-inlined cudaLaunchDeviceV2 wrappers list nothing).
    let mut externs: HashMap<u32, Vec<u32>> = HashMap::default();
    let tree = live.call_tree(files, db);
    let order = post_order(live, &tree);
    for &fi in &order {
        let mut list: Vec<u32> = Vec::new();
        for c in &tree[fi as usize] {
            if let Some(ce) = externs.get(c) {
                for &w in ce {
                    if !list.contains(&w) {
                        list.push(w);
                    }
                }
            }
        }
        for &w in own_externs.get(&fi).map(|v| v.as_slice()).unwrap_or(&[]) {
            if !list.contains(&w) {
                list.push(w);
            }
        }
        // Absent means empty (most functions list nothing).
        if !list.is_empty() {
            externs.insert(fi, list);
        }
    }
    for (fi, list) in externs.iter_mut() {
        if !live.funcs[*fi as usize].is_kernel {
            let own = own_externs.get(fi).map(|v| v.as_slice()).unwrap_or(&[]);
            list.retain(|w| own.contains(w));
        }
    }
    let mut stack_warnings: Vec<String> = Vec::new();
    let mut min_stack: Vec<(u32, u32)> = Vec::new();
    let mut raised_regs: HashMap<u32, u32> = HashMap::default();
    let mut kernel_barriers: HashMap<u32, u8> = HashMap::default();
    let mut kernel_mbars: HashMap<u32, u16> = HashMap::default();
    let mut recursive_kernels: HashSet<u32> = HashSet::default();
    // The TREE_FLAGS a kernel lacks itself but reaches (libnvshmem_device's
    // sm_75-89 kernels get EIATTR_CTAIDZ_USED so).
    let mut kernel_flags: HashMap<u32, u8> = HashMap::default();
    // A kernel's `EIATTR_AT_ENTRY_FRAGMENTS`: those of its whole call tree,
    // which nvlink moves there from the device functions (measured, fixture
    // `tcgen05_callee`).
    let mut kernel_fragments: HashMap<u32, u32> = HashMap::default();
    // A kernel's `EIATTR_VRC_CTA_INIT_COUNT` raised to its call tree's
    // maximum, but only in a link of two or more kernels: a lone kernel
    // keeps its own (measured, fixture `tcgen05_callee` and `tcgen05_lone`).
    let mut kernel_vrc: HashMap<u32, u32> = HashMap::default();
    // A kernel's `EIATTR_SPARSE_MMA_MASK` in a link with aliases
    // ([`SPARSE_UNKNOWN`]): its call tree's union.
    let mut kernel_sparse: HashMap<u32, u16> = HashMap::default();
    // Live kernels, counted up to two: a link of one ("lone") and of several
    // follow different rules below.
    let kernels = live_funcs
        .iter()
        .filter(|&&fi| live.funcs[fi as usize].is_kernel)
        .take(2)
        .count();
    let several_kernels = kernels >= 2;
    let own_reach = |fi: u32| Reach {
        regs: regcount
            .get(&syms.func_index[fi as usize])
            .copied()
            .unwrap_or(0),
        barriers: fn_barriers.get(&fi).copied().unwrap_or(0),
        flags: fn_flags.get(&fi).copied().unwrap_or(0),
        fragments: fn_fragments.get(&fi).copied().unwrap_or(0),
        vrc: fn_vrc.get(&fi).copied().unwrap_or(0),
        sparse: fn_sparse.get(&fi).copied().unwrap_or(0),
    };
    let facts = call_tree_facts(live, &tree, &order, |fi| {
        let sym = syms.func_index[fi as usize];
        (
            u64::from(frame.get(&sym).copied().unwrap_or(0)),
            own_reach(fi),
        )
    });
    // A lone live kernel also takes the barriers, flags and entry fragments
    // of the functions no kernel reaches (kept because their address is
    // taken): measured, fixtures `shared_unreached_lone`, `ctaidz_lone` (with
    // two kernels neither does: `ctaidz_callee`). Its registers and VRC count
    // do not (only `barriers`, `flags`, `fragments` of this are read).
    // Barrier counts an older object keeps in its text's flags do not count
    // here (measured with CUDA 12.6 objects of `shared_unreached_lone`).
    let lone = if kernels == 1 {
        live_funcs.iter().fold(Reach::default(), |acc, &fi| {
            let mut own = own_reach(fi);
            if record_barriers.contains_key(&fi) {
                own.barriers = 0;
            }
            acc.join(own)
        })
    } else {
        Reach::default()
    };
    let (lone_barriers, lone_flags, lone_fragments) = (lone.barriers, lone.flags, lone.fragments);
    // A lone live kernel lists the still-undefined symbols of every live
    // function too, reached or not (kept because their address is taken, or
    // by -g): measured, a kernel calling nothing and a function calling
    // `vprintf` whose address a dead function takes (or only data holds, or
    // kept by -g) — nvlink lists `vprintf` in the kernel's EXTERNS; with two
    // kernels neither does (difftest 1201333; fixture `externs_lone`).
    if kernels == 1 && !plan.relocatable {
        if let Some(&k) = live_funcs
            .iter()
            .find(|&&fi| live.funcs[fi as usize].is_kernel)
        {
            let mut list = externs.get(&k).cloned().unwrap_or_default();
            for fi in live_funcs.iter().filter(|&&fi| fi != k) {
                for &w in own_externs.get(fi).map(|v| v.as_slice()).unwrap_or(&[]) {
                    if !list.contains(&w) {
                        list.push(w);
                    }
                }
            }
            if !list.is_empty() {
                externs.insert(k, list);
            }
        }
    }
    // `EIATTR_NUM_MBARRIERS` sums every live function when there is at most
    // one kernel (see [`kernel_mbarriers`]).
    let lone_kernel = kernels < 2;
    // Register-limit errors, reported in nvlink's order: the reverse of the
    // functions' (as its `.nv.info` records; measured with kernels in three
    // objects in three orders).
    let mut regcount_errors = Vec::new();
    // `-r`: no call-tree propagation (the final link does it).
    for &fi in live_funcs.iter().filter(|_| !plan.relocatable) {
        let func = &live.funcs[fi as usize];
        if !func.is_kernel {
            continue;
        }
        let ksym = syms.func_index[fi as usize];
        let t = facts[fi as usize];
        let mut depth = t.depth;
        if let Some(why) = t.why {
            stack_warnings.push(format!(
                "Stack size for entry function '{}' cannot be statically determined (its call tree {why})",
                files[func.key.file.0 as usize].cubin.symbols[func.sym as usize].name
            ));
            if why == RECURSIVE {
                // nvlink records "unknown" as the largest value, also as the
                // kernel's CRS stack size.
                depth = u64::from(u32::MAX);
                recursive_kernels.insert(fi);
            }
        }
        if any_alias {
            kernel_sparse.insert(fi, t.reach.sparse);
        }
        if regcount.contains_key(&ksym) {
            raised_regs.insert(ksym, t.reach.regs);
        }
        if let Some(&max) = fn_maxreg.get(&fi).filter(|&&m| t.reach.regs > m) {
            // nvlink's check (measured, fixture `maxreg_callee`): the function
            // named is the one with the most registers (of several, the first
            // in input order: swapping the inputs swaps the name, swapping
            // the calls does not).
            let regs_of = |f: u32| {
                regcount
                    .get(&syms.func_index[f as usize])
                    .copied()
                    .unwrap_or(0)
            };
            let culprit = reached(fi, &tree)
                .into_iter()
                .filter(|&f| f != fi && regs_of(f) == t.reach.regs)
                .min_by_key(|&f| live.funcs[f as usize].key);
            if let Some(c) = culprit {
                let name = |f: u32| {
                    let func = &live.funcs[f as usize];
                    files[func.key.file.0 as usize].cubin.symbols[func.sym as usize].name
                };
                regcount_errors.push(Error::new(
                    ErrorKind::Overflow,
                    format!(
                        "entry function '{}' with max regcount of {max} calls function '{}' with regcount of {}",
                        name(fi),
                        name(c),
                        t.reach.regs
                    ),
                ));
            }
        }
        let own_flags = fn_flags.get(&fi).copied().unwrap_or(0);
        let all_flags = t.reach.flags | lone_flags;
        let added = all_flags & !own_flags;
        if added != 0 {
            kernel_flags.insert(fi, added);
        }
        if all_flags & (TCGEN05_1CTA | TCGEN05_2CTA) == TCGEN05_1CTA | TCGEN05_2CTA {
            // nvlink's check, on the kernel's call tree (measured).
            diags.error(Error::new(
                ErrorKind::Unsupported,
                format!(
                    "Function '{}' uses single CTA(.cta_group::1) and CTA pair granularity(.cta_group::2) and that is not allowed.",
                    files[func.key.file.0 as usize].cubin.symbols[func.sym as usize].name
                ),
            ));
        }
        let fragments = t.reach.fragments | lone_fragments;
        if fragments != 0 {
            kernel_fragments.insert(fi, fragments);
        }
        if several_kernels {
            if let Some(&own) = fn_vrc.get(&fi) {
                if t.reach.vrc > own {
                    kernel_vrc.insert(fi, t.reach.vrc);
                }
            }
        }
        let barriers = t.reach.barriers.max(lone_barriers);
        if barriers > fn_barriers.get(&fi).copied().unwrap_or(0) {
            kernel_barriers.insert(fi, barriers);
        }
        if !fn_mbarriers.is_empty() {
            let mbars = kernel_mbarriers(fi, &tree, &fn_mbarriers, lone_kernel);
            if let Some(m) = mbars.filter(|&m| fn_mbarriers.get(&fi) != Some(&m)) {
                kernel_mbars.insert(fi, m);
            }
        }
        if !live.host_unused.get(fi as usize).copied().unwrap_or(false) {
            min_stack.push((ksym, u32::try_from(depth).unwrap_or(u32::MAX)));
        }
    }
    for e in regcount_errors.into_iter().rev() {
        diags.error(e);
    }
    if opts.suppress_stack_size_warning {
        stack_warnings.clear();
    }
    let nwarn = stack_warnings.len();
    for w in stack_warnings.iter().take(MAX_STACK_WARNINGS) {
        diags.warning(Error::new(ErrorKind::Usage, w.clone()));
    }
    if nwarn > MAX_STACK_WARNINGS {
        diags.warning(Error::new(
            ErrorKind::Usage,
            format!(
                "stack size cannot be statically determined for {} more kernels ({nwarn} in all)",
                nwarn - MAX_STACK_WARNINGS
            ),
        ));
    }
    // Apply raised register counts and add MIN_STACK_SIZE.
    for rec in &mut module {
        if rec.attr == EiAttr::EIATTR_REGCOUNT {
            if let Some((sym, _)) = rec.as_record().sym_value() {
                if let Some(&v) = raised_regs.get(&sym) {
                    *rec = OwnedRecord::words(EiAttr::EIATTR_REGCOUNT, &[sym, v]);
                }
            }
        }
    }
    for (ksym, v) in &min_stack {
        module.push(OwnedRecord::words(
            EiAttr::EIATTR_MIN_STACK_SIZE,
            &[*ksym, *v],
        ));
    }
    if let Some(id) = meta.nv_info {
        let mut bytes = Vec::new();
        eiattr::encode_owned(&module, &mut bytes)?;
        results.push((id, bytes));
    }
    // What the per-function records below do not read goes first: its
    // memory is reused by them (-4 MB at the link's peak, N = 2000).
    drop((
        module,
        tree,
        order,
        facts,
        own_externs,
        regcount,
        frame,
        min_stack,
    ));
    // Per-function .nv.info.<fn>: independent per function, so in parallel
    // (collected in function order; the bytes do not depend on the threads).
    // Written straight into the section bytes: records without symbol fields
    // are re-encoded from the borrowed input record (no owned copy), which
    // halved this loop's time at N = 2000 (it allocated per SVAL record).
    let per_fn = |(&fi, &id): (&u32, &OutSecId)| -> Result<(OutSecId, Vec<u8>)> {
        let func = &live.funcs[fi as usize];
        let f = &files[func.key.file.0 as usize];
        let s = fn_info_section(&info_index, f, func.key.text).expect("created from this section");
        let at = |e: Error| e.in_file(f.name).in_section(s.name);
        let mut bytes = Vec::with_capacity(s.data.len() + 32);
        let mut has_bar = false;
        let mut has_mbar = false;
        let mut has_isa = false;
        let mut has_fragments = false;
        let fragments = kernel_fragments.get(&fi).copied();
        let recursive = recursive_kernels.contains(&fi);
        for rec in eiattr::Iter::<EiAttr>::new(s.data) {
            let rec = rec.map_err(at)?;
            match rec.attr {
                // Rebuilt below from the call tree.
                EiAttr::EIATTR_EXTERNS => continue,
                // Replaced below.
                EiAttr::EIATTR_CRS_STACK_SIZE if recursive => continue,
                EiAttr::EIATTR_NUM_BARRIERS => has_bar = true,
                EiAttr::EIATTR_NUM_MBARRIERS => has_mbar = true,
                EiAttr::EIATTR_MERCURY_ISA_VERSION => has_isa = true,
                // Moved to the kernels reaching the function (final links).
                EiAttr::EIATTR_AT_ENTRY_FRAGMENTS if !plan.relocatable => {
                    if let Some(v) = fragments.filter(|_| !has_fragments) {
                        has_fragments = true;
                        OwnedRecord::words(EiAttr::EIATTR_AT_ENTRY_FRAGMENTS, &[v])
                            .encode(&mut bytes)
                            .map_err(at)?;
                    }
                    continue;
                }
                _ => {}
            }
            if rec.attr == EiAttr::EIATTR_SPARSE_MMA_MASK {
                if let Some(&v) = kernel_sparse.get(&fi) {
                    OwnedRecord::hval(EiAttr::EIATTR_SPARSE_MMA_MASK, v)
                        .encode(&mut bytes)
                        .map_err(at)?;
                    continue;
                }
            }
            if rec.attr == EiAttr::EIATTR_VRC_CTA_INIT_COUNT {
                if let Some(&v) = kernel_vrc.get(&fi) {
                    let mut owned = rec.to_owned_record();
                    owned.value = match owned.value {
                        OwnedValue::Byte(_) => OwnedValue::Byte(u8::try_from(v).unwrap_or(u8::MAX)),
                        OwnedValue::Half(_) => {
                            OwnedValue::Half(u16::try_from(v).unwrap_or(u16::MAX))
                        }
                        _ => OwnedValue::Bytes(v.to_le_bytes().to_vec()),
                    };
                    owned.encode(&mut bytes).map_err(at)?;
                    continue;
                }
            }
            match rec.symbol_fields() {
                SymFields::None => match kernel_barriers.get(&fi) {
                    Some(&v) if rec.attr == EiAttr::EIATTR_NUM_BARRIERS => {
                        let mut owned = rec.to_owned_record();
                        owned.value = OwnedValue::Byte(v);
                        owned.encode(&mut bytes).map_err(at)?;
                    }
                    _ => match kernel_mbars.get(&fi) {
                        Some(&v) if rec.attr == EiAttr::EIATTR_NUM_MBARRIERS => {
                            let mut owned = rec.to_owned_record();
                            owned.value = OwnedValue::Half(v);
                            owned.encode(&mut bytes).map_err(at)?;
                        }
                        _ => rec.encode(&mut bytes).map_err(at)?,
                    },
                },
                _ => {
                    renumber_into(&rec, &|i| out_of(f, i), &|i| external(f, i), &mut bytes)
                        .map_err(at)?;
                }
            }
        }
        let mut tail: Vec<OwnedRecord> = Vec::new();
        if !has_bar {
            if let Some(&v) = kernel_barriers
                .get(&fi)
                .or_else(|| record_barriers.get(&fi))
            {
                tail.push(OwnedRecord::bval(EiAttr::EIATTR_NUM_BARRIERS, v));
            }
        }
        if !has_mbar {
            if let Some(&v) = kernel_mbars.get(&fi) {
                tail.push(OwnedRecord::hval(EiAttr::EIATTR_NUM_MBARRIERS, v));
            }
        }
        if let Some(list) = externs.get(&fi).filter(|l| !l.is_empty()) {
            tail.push(OwnedRecord::words(EiAttr::EIATTR_EXTERNS, list));
        }
        if let Some(v) = fragments.filter(|_| !has_fragments) {
            tail.push(OwnedRecord::words(EiAttr::EIATTR_AT_ENTRY_FRAGMENTS, &[v]));
        }
        let added = kernel_flags.get(&fi).copied().unwrap_or(0);
        for (i, &attr) in TREE_FLAGS.iter().enumerate() {
            if added & (1 << i) != 0 {
                tail.push(OwnedRecord::nval(attr));
            }
        }
        tail.extend(super::blackwell::bindless_bank_records(plan, func));
        // (Not in `-r`: the final link adds them.)
        if fn_sparse.contains_key(&fi) && !plan.relocatable {
            for _ in 0..fn_aliases.get(&fi).copied().unwrap_or(0) {
                tail.push(OwnedRecord::hval(
                    EiAttr::EIATTR_SPARSE_MMA_MASK,
                    SPARSE_UNKNOWN,
                ));
            }
        }
        if !has_isa {
            super::blackwell::add_default_isa_version(arch, &mut tail);
        }
        if recursive {
            tail.push(OwnedRecord::words(
                EiAttr::EIATTR_CRS_STACK_SIZE,
                &[u32::MAX],
            ));
        }
        eiattr::encode_owned(&tail, &mut bytes)?;
        Ok((id, bytes))
    };
    // Errors boxed: an unboxed `Error` made each element 120 bytes, the
    // vector 2 MB of the link's peak at N = 2000.
    let fn_results: Vec<Boxed<(OutSecId, Vec<u8>)>> = fn_ids
        .into_par_iter()
        .with_min_len(256)
        .map(|x| per_fn(x).map_err(Box::new))
        .collect();
    // The first error in function order, as a sequential loop would report.
    results.reserve(fn_results.len());
    for r in fn_results {
        results.push(r.map_err(|e| *e)?);
    }
    let _ = func_by_sym;
    // .nv.compat.
    if let Some(id) = meta.compat {
        let mut merged: Vec<OwnedRecord<EiCompat>> = Vec::new();
        for f in files {
            for s in f
                .cubin
                .sections
                .iter()
                .filter(|s| s.sh_type == SHT_CUDA_COMPAT)
            {
                for rec in
                    compat::parse(s.data).map_err(|e| e.in_file(f.name).in_section(s.name))?
                {
                    if rec.attr == EiCompat::EICOMPAT_ATTR_CAN_FASTPATH_FINALIZE
                        && !arch.is_blackwell_or_later()
                    {
                        continue;
                    }
                    // (Blackwell's CAN_FASTPATH_FINALIZE value is computed
                    // below from the inputs with live code.)
                    let owned = rec.to_owned_record();
                    match merged.iter_mut().find(|m| m.attr == owned.attr) {
                        None => merged.push(owned),
                        Some(m) => {
                            let new_v = owned.as_record().int_value();
                            let old_v = m.as_record().int_value();
                            if let (Some(n), Some(o)) = (new_v, old_v) {
                                if n > o && owned.format != EiFormat::SVAL {
                                    *m = owned;
                                }
                            }
                        }
                    }
                }
            }
        }
        if files.is_empty() {
            // nvlink's empty cubin: CUDA_ACCELERATOR_TARGET 0.
            merged.extend(
                compat::parse(&[2, 9, 0, 0])?
                    .iter()
                    .map(|r| r.to_owned_record()),
            );
        }
        // CAN_FASTPATH_FINALIZE: from the inputs that contribute live code
        // and, for the sm_103 bit, from their functions' code.
        let fastpath = super::blackwell::output_fastpath_value(
            arch,
            files.iter().filter_map(|f| {
                let funcs = &live.func_of_text[f.id.0 as usize];
                if !funcs.iter().flatten().any(|&fi| live.live[fi as usize]) {
                    return None;
                }
                let value = f
                    .cubin
                    .sections
                    .iter()
                    .filter(|s| s.sh_type == SHT_CUDA_COMPAT)
                    .filter_map(|s| compat::parse(s.data).ok())
                    .flatten()
                    .find(|r| r.attr == EiCompat::EICOMPAT_ATTR_CAN_FASTPATH_FINALIZE)
                    .and_then(|r| r.payload());
                let mut input = super::blackwell::FastpathInput {
                    value,
                    live_code: Vec::new(),
                    other_code: Vec::new(),
                };
                // The code is only read where the value alone does not decide.
                if super::blackwell::fastpath_needs_code(arch, value) {
                    for s in f
                        .cubin
                        .sections
                        .iter()
                        .filter(|s| s.flags & crate::elf::SHF_EXECINSTR != 0)
                    {
                        match funcs[s.index as usize] {
                            Some(fi) if live.live[fi as usize] => input.live_code.push(s.data),
                            _ => input.other_code.push(s.data),
                        }
                    }
                }
                Some(input)
            }),
        );
        super::blackwell::adjust_compat(&mut merged, arch, fastpath);
        if files.is_empty() {
            // nvlink's empty Blackwell cubin has no Mercury ISA version
            // (measured at sm_100): it describes no Mercury code.
            merged.retain(|r| r.attr != EiCompat::EICOMPAT_ATTR_MERCURY_ISA_MAJOR_MINOR_VERSION);
        }
        let mut bytes = Vec::new();
        eiattr::encode_owned(&merged, &mut bytes)?;
        results.push((id, bytes));
    }
    // .nv.callgraph and .nv.prototype.
    if let Some(id) = meta.callgraph {
        let mut g = CallGraph::default();
        let mut taken_at: HashMap<u32, usize> = HashMap::default();
        for f in files {
            for s in f
                .cubin
                .sections
                .iter()
                .filter(|s| s.sh_type == SHT_CUDA_CALLGRAPH)
            {
                let cg =
                    CallGraph::parse(s.data).map_err(|e| e.in_file(f.name).in_section(s.name))?;
                // CALLS and ADDRESS_REFS entries are copied as they are, repeats
                // included: a weak copy replaced by a later input's definition
                // and the winner both list `f -> g` (measured at sm_80 and
                // sm_103; difftest seeds 30073, 70117; fixture
                // `weak_replaced_graph_twice`), and so does a `-r` output that
                // kept both copies' entries (seed 270006: nvlink keeps the two
                // `fn5 -> fn3` of one input).
                // Lists 2 and 3 carry prototypes as `.strtab` offsets of signatures.
                let sig = |o: u32| syms.signature(f.id, o).unwrap_or(o);
                // A copy that lost to an earlier input's definition brings no
                // entries of its own (`live::lost_to_earlier`).
                let lost = |a: u32| super::live::lost_to_earlier(db, f, a);
                for e in &cg.calls {
                    if lost(e.caller) {
                        continue;
                    }
                    if let (Some(a), Some(b)) = (out_of(f, e.caller), out_of(f, e.callee)) {
                        g.calls.push(CallEdge {
                            caller: a,
                            callee: b,
                        });
                    }
                }
                for &(a, p) in &cg.address_taken {
                    if !super::live::address_taken_counts(db, f, &cg, a) {
                        continue;
                    }
                    // One entry per function: a later input's prototype
                    // replaces an earlier one (nvlink keeps the last).
                    if let Some(a) = out_of(f, a) {
                        match taken_at.get(&a) {
                            Some(&i) => g.address_taken[i].1 = sig(p),
                            None => {
                                taken_at.insert(a, g.address_taken.len());
                                g.address_taken.push((a, sig(p)));
                            }
                        }
                    }
                }
                // One entry per indirect call site, repeats included (as nvlink).
                for &(a, p) in &cg.indirect_calls {
                    if lost(a) {
                        continue;
                    }
                    if let Some(a) = out_of(f, a) {
                        g.indirect_calls.push((a, sig(p)));
                    }
                }
                for &(a, b) in &cg.address_refs {
                    if lost(a) {
                        continue;
                    }
                    if let (Some(a), Some(b)) = (out_of(f, a), out_of(f, b)) {
                        g.address_refs.push((a, b));
                    }
                }
            }
        }
        let mut bytes = Vec::new();
        g.encode(&mut bytes);
        results.push((id, bytes));
    }
    if let Some(id) = meta.prototype {
        let called = &meta.called;
        let keep_proto = |f: &InputFile<'_>, sym: u32| -> bool {
            keeps_prototype(files, db, live, plan, called, f, sym)
        };
        let mut entries: Vec<PrototypeEntry> = Vec::new();
        // One entry per function, at its first place: a later input's
        // signature replaces an earlier one (nvlink keeps the last; seen
        // with `vprintf`, whose signature CUDA 12.6 and 13.0 objects write
        // differently).
        let mut proto_at: HashMap<u32, usize> = HashMap::default();
        for f in files {
            for s in f
                .cubin
                .sections
                .iter()
                .filter(|s| s.sh_type == SHT_CUDA_PROTOTYPE)
            {
                for e in crate::cubin::callgraph::parse_prototypes(s.data)
                    .map_err(|e| e.in_file(f.name).in_section(s.name))?
                {
                    if !keep_proto(f, e.symbol) {
                        continue;
                    }
                    if let Some(sym) = out_of(f, e.symbol) {
                        let ne = PrototypeEntry {
                            symbol: sym,
                            signature: syms.signature(f.id, e.signature).unwrap_or(e.signature),
                        };
                        match proto_at.get(&sym) {
                            Some(&i) => entries[i] = ne,
                            None => {
                                proto_at.insert(sym, entries.len());
                                entries.push(ne);
                            }
                        }
                    }
                }
            }
        }
        let mut bytes = Vec::new();
        encode_prototypes(&entries, &mut bytes);
        results.push((id, bytes));
    }
    // Notes: culink's tkinfo entry first, then the inputs' notes.
    if let Some(id) = meta.tkinfo {
        let args = opts.recorded_args.clone().unwrap_or_else(|| {
            let r = if plan.relocatable { "-r " } else { "" };
            format!("-arch {arch} {r}")
        });
        let version = format!("culink {}", env!("CARGO_PKG_VERSION"));
        let own = TkInfo {
            version: 2,
            object_file: b"",
            tool_name: TOOL_NAME.as_bytes(),
            tool_version: version.as_bytes(),
            tool_branch: b"",
            tool_args: args.as_bytes(),
        };
        let mut bytes = Vec::new();
        own.encode_note(&mut bytes)?;
        // `-r` output holds only the linker's own entry (as nvlink -r).
        for f in files.iter().filter(|_| !plan.relocatable) {
            for s in f
                .cubin
                .sections
                .iter()
                .filter(|s| s.sh_type == SHT_NOTE && s.name == ".note.nv.tkinfo")
            {
                // Validate, then copy verbatim.
                parse_notes(s.data).map_err(|e| e.in_file(f.name).in_section(s.name))?;
                bytes.extend_from_slice(s.data);
            }
        }
        results.push((id, bytes));
    }
    let _ = db;
    for (id, bytes) in results {
        set_bytes(plan, id, bytes);
    }
    Ok(())
}
