//! Phase 3: which functions survive.
//!
//! Roots are the kernels (`st_other & STO_CUDA_ENTRY`) and every function an
//! input lists as address-taken ([`address_taken_counts`]). A relocation in
//! a data section (a function-pointer table in `.nv.global.init`) is no root
//! of its own: ptxas lists every function whose address its data holds, and
//! an `-r` output that dropped the entry of a copy that lost when read keeps
//! the relocation, which nvlink's relink then leaves unresolved (difftest
//! seed 610017, fixture `data_ref_lost_taker_r`; no other fixture link
//! changes without data roots). From the roots, every
//! function referenced by a relocation in a live function's text is live (a
//! call or an address taken in code). `.debug_frame` references do not keep a
//! function alive: nvlink keeps the FDE of a dead function and clears its
//! range instead. A function whose global name was won by another input's
//! definition (a weak definition beaten by a strong one) is discarded.

use super::symbols::{SymRef, SymbolDb};
use super::{FileId, InputFile};
use crate::elf::{STO_CUDA_ENTRY, STT_SECTION};
use crate::fxhash::HashMap;
use crate::input::host::PatternSet;
use crate::reloc::table::RelocType;
use rayon::prelude::*;

/// A function: the file and its `.text.<fn>` section index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct FuncKey {
    pub file: FileId,
    pub text: u32,
}

/// One defined function.
#[derive(Debug, Clone)]
pub(crate) struct Func {
    pub key: FuncKey,
    /// Its symbol index in its file.
    pub sym: u32,
    pub is_kernel: bool,
    /// Direct callees (function indices), deduplicated, in first-reference order.
    pub callees: Vec<u32>,
    /// The callees reached by a call (call relocations and the input call
    /// graphs' CALLS lists), not by an address reference: the edges of the
    /// call tree that register counts, stack sizes and EXTERNS follow.
    pub calls: Vec<u32>,
    /// Whether the function calls through a register (unknown callee).
    pub indirect_call: bool,
    /// Whether its address is taken (data reference, non-call code reference
    /// or an input's `ADDRESS_TAKEN` entry that counts:
    /// [`address_taken_counts`]); such a function has no `.nv.prototype`
    /// entry.
    pub address_taken: bool,
    /// Prototype signatures (`#ii`, ...) of its indirect call sites (input
    /// call graph list INDIRECT_CALLS).
    pub indirect_protos: Vec<String>,
    /// Prototype signatures it is address-taken under (list ADDRESS_TAKEN).
    pub taken_protos: Vec<String>,
    /// The live address-taken functions its indirect calls may reach: those
    /// whose prototype matches one of [`Func::indirect_protos`] (nvlink's
    /// call-graph rule; they count for stack size, registers and recursion).
    pub indirect_callees: Vec<u32>,
}

/// The liveness result.
pub(crate) struct Live {
    /// All functions that are their name's winning definition (or local), in
    /// file order then section order.
    pub funcs: Vec<Func>,
    /// Per function: live.
    pub live: Vec<bool>,
    /// Per file, per section: the function index of a `.text` section.
    pub func_of_text: Vec<Vec<Option<u32>>>,
    /// Per file, per section: whether the section is kept in the output.
    pub section_kept: Vec<Vec<bool>>,
    /// Functions undefined in the whole link that an input lists as
    /// address-taken (even from dead code): nvlink reports them as undefined
    /// references (difftest seeds 20024, 20080, 20144; fixture
    /// `undefined_fn_address_dead`).
    pub taken_undefined: Vec<String>,
    /// Per function (empty: none): a kernel host-reference pruning would
    /// remove, kept by a `-g -suppress-debug-info` link, which gives it no
    /// `EIATTR_MIN_STACK_SIZE` (nvlink 13.0.88, measured).
    pub host_unused: Vec<bool>,
    /// Per function with PTX `.alias` symbols of it
    /// ([`InputFile::alias_target`]): how many (most links: empty).
    pub aliases: HashMap<u32, u32>,
}

impl Live {
    /// Fixes [`Live::section_kept`] from the liveness: module sections always,
    /// function-owned ones when their function is live.
    pub(crate) fn keep_sections(&mut self, files: &[InputFile<'_>]) {
        self.section_kept = files
            .iter()
            .map(|f| {
                f.owner
                    .iter()
                    .map(|o| match o {
                        None => true,
                        Some(text) => self.func_of_text[f.id.0 as usize][*text as usize]
                            .is_some_and(|fi| self.live[fi as usize]),
                    })
                    .collect()
            })
            .collect();
    }

    /// Per function: the first live kernel (in input order) with the same
    /// name when the function is a live kernel, else the function itself.
    ///
    /// Local (`.entry` without `.visible`) kernels of one name in several
    /// inputs are distinct functions, but nvlink 13.0.88 keys a kernel's
    /// parameter bank, shared window and texture slots by name, so the
    /// copies share them: the first copy "leads" (see `sections.rs`,
    /// `shared.rs`, `texslots.rs`; fixture `static_kernel_twins`).
    pub(crate) fn same_name_leaders(&self, files: &[InputFile<'_>]) -> Vec<u32> {
        let mut first: HashMap<&str, u32> = HashMap::default();
        (0..self.funcs.len() as u32)
            .map(|i| {
                let f = &self.funcs[i as usize];
                if !f.is_kernel || !self.live[i as usize] {
                    return i;
                }
                let name = files[f.key.file.0 as usize].cubin.symbols[f.sym as usize].name;
                *first.entry(name).or_insert(i)
            })
            .collect()
    }

    /// The function defined by (or referenced as) an input symbol, after resolution.
    pub(crate) fn func_of_symbol(
        &self,
        files: &[InputFile<'_>],
        db: &SymbolDb<'_>,
        r: SymRef,
    ) -> Option<u32> {
        // Call-graph entries name symbols by unchecked index (fuzzing: an
        // index past the table panicked in `resolve`).
        if files
            .get(r.file.0 as usize)
            .is_none_or(|f| r.index as usize >= f.cubin.symbols.len())
        {
            return None;
        }
        let def = db.resolve(r)?;
        let f = &files[def.file.0 as usize];
        let sym = &f.cubin.symbols[def.index as usize];
        let sec = sym.section()?;
        let fi = self.func_of_text[def.file.0 as usize]
            .get(sec as usize)
            .copied()
            .flatten()?;
        // The function symbol itself, the text section's section symbol, or
        // a PTX `.alias` of the function.
        (sym.ty() == STT_SECTION
            || self.funcs[fi as usize].sym == def.index
            || f.alias_target(def.index).is_some())
        .then_some(fi)
    }
}

/// Whether `f`'s definition of symbol `idx` lost as soon as its input was
/// read (to the definition an earlier input had established). nvlink drops
/// such a copy's call-graph entries (the calls, indirect call sites and
/// address references it makes) when it reads the copy; a copy that won when
/// read and was beaten by a *later* input's definition has had its entries
/// merged into the function's node already, and they stay (measured at
/// sm_80/90, a weak copy calling a function, taking another's address and
/// calling through a pointer, before and after a strong or a weak winner;
/// with a weak, a weak and a strong copy only the first weak one's stay:
/// difftest seeds 30015, 20055, 30101; fixture `weak_loser_graph_order`).
/// The input's `ADDRESS_TAKEN` entries (about the taken function, not the
/// taker) count either way.
pub(crate) fn lost_to_earlier(db: &SymbolDb<'_>, f: &InputFile<'_>, idx: u32) -> bool {
    let Some(sym) = f.cubin.symbols.get(idx as usize) else {
        return false;
    };
    if sym.is_undefined() {
        return false;
    }
    let Some(gid) = db
        .global_of
        .get(f.id.0 as usize)
        .and_then(|m| m.get(idx as usize).copied().flatten())
    else {
        return false; // a local definition
    };
    let here = SymRef {
        file: f.id,
        index: idx,
    };
    // The definitions that held the name when read: the winner and the ones
    // replaced later.
    db.global(gid).1.def != Some(here) && !db.replaced.contains(&here)
}

/// Whether input `f`'s call-graph entry listing function symbol `fsym` as
/// address-taken counts (for liveness, the output's `ADDRESS_TAKEN` list and
/// `.nv.prototype` alike). nvlink merges one input at a time: a copy that held
/// the name when read (the winner, or one replaced by a later input's
/// definition) has its entries merged into the function's node, so they
/// count as the winner's; when `f`'s definition of the function lost as soon
/// as `f` was read ([`lost_to_earlier`]) the entry counts only through an
/// address reference (`ADDRESS_REFS`) by a function whose `f` copy did not
/// lose when read (not through `f`'s data, whose relocations keep nothing
/// alive).
///
/// Measured at sm_80 (nvlink 13.0.88): a copy that lost when read taking its
/// own address keeps nothing alive and is not listed (difftest seed 40083);
/// one replaced later is kept alive and listed (40005; a dead winner
/// included, no `.nv.prototype` entry), as is the function whose address
/// such a copy takes (replaced-later taker of a lost-when-read or a
/// replaced-later copy; a lost-when-read taker of a replaced-later copy:
/// 50048); a winning (even dead) function taking a losing copy's address
/// keeps it, in both orders; a copy that lost when read taking the address of
/// another such copy does not (30088). Fixtures `weak_loser_graph_order`,
/// `weak_loser_taken`, `weak_loser_taken_later`.
pub(crate) fn address_taken_counts(
    db: &SymbolDb<'_>,
    f: &InputFile<'_>,
    graph: &crate::cubin::callgraph::CallGraph,
    fsym: u32,
) -> bool {
    let lost = |s: u32| lost_to_earlier(db, f, s);
    !lost(fsym)
        || graph
            .address_refs
            .iter()
            .any(|&(a, b)| b == fsym && !lost(a))
}

/// The initialized global data section, where a weak variable that lost to
/// a weak one loses its relocations ([`dropped_init_ranges`]).
pub(crate) const GLOBAL_INIT: &str = ".nv.global.init";

/// The byte ranges (`start..end`, sorted) in input `f`'s
/// [`GLOBAL_INIT`] of its weak variables that lost, when `f` was read, to a
/// weak definition holding the name then ([`SymbolDb::lost_to_weak`]). nvlink
/// keeps their bytes (the hole) but drops every relocation inside them: the
/// pointers they hold stay as written and refer to nothing, so they keep no
/// function alive. A weak copy that lost to a strong definition, or that held
/// the name and was replaced later, keeps its relocations; `.nv.constant3`
/// copies keep theirs in every case. Measured at sm_75/80/90/100 (and the
/// Mercury twin `.nv.merc.nv.global.init` at sm_100) with two and three
/// inputs (weak, weak, weak: only the first keeps them; weak, weak, strong:
/// the second loses them); difftest seeds 20028, 30030, 30038; fixture
/// `weak_loser_data_ref`.
pub(crate) fn dropped_init_ranges(db: &SymbolDb<'_>, f: &InputFile<'_>) -> Vec<(u64, u64)> {
    // Called per input by three phases: the input's own symbols, not the
    // link-wide set (weak template copies make that large).
    let Some(init) = f
        .cubin
        .sections
        .iter()
        .position(|s| s.name == GLOBAL_INIT)
        .filter(|_| !db.lost_to_weak.is_empty())
    else {
        return Vec::new();
    };
    let mut v: Vec<(u64, u64)> = f
        .cubin
        .symbols
        .iter()
        .enumerate()
        .filter(|(i, sym)| {
            sym.section() == Some(init as u32)
                && matches!(
                    sym.ty(),
                    crate::elf::STT_OBJECT | crate::elf::STT_CUDA_OBJECT
                )
                && db.lost_to_weak(SymRef {
                    file: f.id,
                    index: *i as u32,
                })
        })
        .map(|(_, sym)| (sym.value, sym.value.saturating_add(sym.size)))
        .collect();
    v.sort_unstable();
    v
}

/// Whether `offset` lies in one of `ranges` ([`dropped_init_ranges`]).
pub(crate) fn in_ranges(ranges: &[(u64, u64)], offset: u64) -> bool {
    ranges.iter().any(|&(a, b)| (a..b).contains(&offset))
}

/// Relocation types that are a direct call of their symbol.
pub(crate) fn is_call_reloc(rtype: u32) -> bool {
    matches!(
        RelocType(rtype),
        RelocType::R_CUDA_ABS47_34 | RelocType::R_CUDA_ABS55_16_34
    )
}

impl Live {
    /// The call tree's edges per function: its calls (not its address
    /// references), and for a function listed in an input's `INDIRECT_CALLS`
    /// with prototype `P` every live function some input lists as
    /// `ADDRESS_TAKEN` with prototype `P` (the same signature string).
    ///
    /// nvlink 13.0.88, measured on nvcc `-rdc` objects (fixture
    /// `cu_indirect_proto`): a kernel calling through a `#ii` pointer takes the
    /// register count, stack, EXTERNS and (sm_75–89) constant bank 2 data of
    /// every address-taken `#ii` function of the link (not of `#lll` ones), and
    /// no stack-size warning; a kernel that only takes a function's address
    /// (`return k ? g1 : g2;` in a callee) takes nothing from it.
    pub(crate) fn call_tree(&self, files: &[InputFile<'_>], db: &SymbolDb<'_>) -> Vec<Vec<u32>> {
        let mut tree: Vec<Vec<u32>> = self.funcs.iter().map(|f| f.calls.clone()).collect();
        // (prototype, function) of every address-taken function; (caller,
        // prototype) of every indirect call site.
        let mut taken: Vec<(&[u8], u32)> = Vec::new();
        let mut indirect: Vec<(u32, &[u8])> = Vec::new();
        for f in files {
            let Some(st) = f.cubin.symtab else { continue };
            let Some(strtab) = f
                .cubin
                .sections
                .get(f.cubin.sections[st as usize].link as usize)
                .map(|s| s.data)
            else {
                continue;
            };
            let string = |o: u32| {
                let rest = strtab.get(o as usize..)?;
                Some(&rest[..rest.iter().position(|&b| b == 0)?])
            };
            for s in f
                .cubin
                .sections
                .iter()
                .filter(|s| s.sh_type == crate::elf::SHT_CUDA_CALLGRAPH)
            {
                let Ok(g) = crate::cubin::callgraph::CallGraph::parse(s.data) else {
                    continue; // reported when the call graph is rebuilt
                };
                let func = |index: u32| {
                    if index as usize >= f.cubin.symbols.len() {
                        return None;
                    }
                    self.func_of_symbol(files, db, SymRef { file: f.id, index })
                        .filter(|&fi| self.live[fi as usize])
                };
                for &(a, p) in &g.address_taken {
                    if !address_taken_counts(db, f, &g, a) {
                        continue;
                    }
                    if let (Some(fi), Some(p)) = (func(a), string(p)) {
                        taken.push((p, fi));
                    }
                }
                for &(a, p) in &g.indirect_calls {
                    if lost_to_earlier(db, f, a) {
                        continue;
                    }
                    if let (Some(fi), Some(p)) = (func(a), string(p)) {
                        indirect.push((fi, p));
                    }
                }
            }
        }
        if indirect.is_empty() {
            return tree;
        }
        taken.sort_unstable();
        taken.dedup();
        for (caller, p) in indirect {
            let from = taken.partition_point(|&(q, _)| q < p);
            for &(q, callee) in &taken[from..] {
                if q != p {
                    break;
                }
                let edges = &mut tree[caller as usize];
                if !edges.contains(&callee) {
                    edges.push(callee);
                }
            }
        }
        tree
    }
}

/// Relocation types that call through a register (`__UFT_OFFSET`).
pub(crate) fn is_indirect_call_reloc(rtype: u32) -> bool {
    RelocType(rtype) == RelocType::R_CUDA_ABS56_16_34
}

/// Computes the live functions and kept sections.
/// `host_kernels`: host-reference pruning (nvlink's rule when every module is
/// an `nvcc -dc` host object): only kernels matching one of these patterns
/// are roots. Kernels reached otherwise (launched from device code, address
/// taken in data) stay live; undefined functions called only from pruned
/// kernels are therefore not errors.
pub(crate) fn mark(
    files: &[InputFile<'_>],
    db: &SymbolDb<'_>,
    kernels_used: Option<&[String]>,
    host_kernels: Option<&[String]>,
) -> Live {
    let _span = tracing::info_span!("live").entered();
    let mut funcs = Vec::new();
    let mut func_of_text: Vec<Vec<Option<u32>>> = Vec::with_capacity(files.len());
    for f in files {
        let mut map = vec![None; f.cubin.sections.len()];
        for s in &f.cubin.sections {
            let sym_idx = f.func_sym[s.index as usize];
            if sym_idx == 0 {
                continue;
            }
            let r = SymRef {
                file: f.id,
                index: sym_idx,
            };
            if !db.is_winner(r) {
                continue; // a weak definition beaten elsewhere
            }
            let sym = &f.cubin.symbols[sym_idx as usize];
            map[s.index as usize] = Some(funcs.len() as u32);
            funcs.push(Func {
                key: FuncKey {
                    file: f.id,
                    text: s.index,
                },
                sym: sym_idx,
                is_kernel: sym.other & STO_CUDA_ENTRY != 0,
                callees: Vec::new(),
                calls: Vec::new(),
                indirect_call: false,
                address_taken: false,
                indirect_protos: Vec::new(),
                taken_protos: Vec::new(),
                indirect_callees: Vec::new(),
            });
        }
        func_of_text.push(map);
    }
    // Grown by doubling; it lives until the write (-1 MB at N = 2000).
    funcs.shrink_to_fit();
    let mut live = Live {
        live: vec![false; funcs.len()],
        funcs,
        func_of_text,
        section_kept: Vec::new(),
        taken_undefined: Vec::new(),
        host_unused: Vec::new(),
        aliases: HashMap::default(),
    };
    // Edges from every relocation of function code: each file's
    // relocations scanned in parallel (the symbol lookups are the cost), the
    // events applied in file order (callee lists keep first-seen order).
    enum Event {
        Indirect(u32),
        Edge {
            caller: u32,
            callee: u32,
            call: bool,
        },
    }
    let scan = |f: &InputFile<'_>| -> Vec<Event> {
        let mut events = Vec::new();
        for rs in f.cubin.sections.iter().filter(|s| s.is_reloc()) {
            // Only a live-candidate function's code makes uses. Data is no
            // root (see the module documentation): a reference to a losing
            // copy resolves to the winner when that lives for another reason,
            // else stays 0 (`weak_loser_data_ref`). Debug information never
            // is a use. The code of a weak definition beaten elsewhere is
            // dropped and nothing it refers to is used (measured: a losing
            // copy taking its own address or calling another function keeps
            // neither alive; Thrust's temporary_array destructor takes its
            // own address).
            let Some(caller) = live.func_of_text[f.id.0 as usize][rs.info as usize] else {
                continue;
            };
            for r in f.cubin.relocs(rs) {
                if is_indirect_call_reloc(r.rtype) {
                    events.push(Event::Indirect(caller));
                }
                let Some(callee) = live.func_of_symbol(
                    files,
                    db,
                    SymRef {
                        file: f.id,
                        index: r.sym,
                    },
                ) else {
                    continue;
                };
                let call = is_call_reloc(r.rtype);
                if callee != caller || call {
                    events.push(Event::Edge {
                        caller,
                        callee,
                        call,
                    });
                }
            }
        }
        events
    };
    let per_file: Vec<Vec<Event>> = files.par_iter().with_min_len(32).map(scan).collect();
    let mut roots: Vec<u32> = Vec::new();
    for events in per_file {
        for e in events {
            match e {
                Event::Indirect(fi) => live.funcs[fi as usize].indirect_call = true,
                Event::Edge {
                    caller,
                    callee,
                    call,
                } => {
                    let c = &mut live.funcs[caller as usize];
                    if !c.callees.contains(&callee) {
                        c.callees.push(callee);
                    }
                    if call && !c.calls.contains(&callee) {
                        c.calls.push(callee);
                    }
                    if !call {
                        live.funcs[callee as usize].address_taken = true;
                    }
                }
            }
        }
    }
    // Calls ptxas resolved itself (a function calling itself or a neighbour
    // PC-relatively) have no relocation; the input call graph lists them.
    for f in files {
        for s in f
            .cubin
            .sections
            .iter()
            .filter(|s| s.sh_type == crate::elf::SHT_CUDA_CALLGRAPH)
        {
            let Ok(graph) = crate::cubin::callgraph::CallGraph::parse(s.data) else {
                continue; // reported by the nvinfo phase
            };
            let nsyms = f.cubin.symbols.len() as u32;
            let at = |index| SymRef { file: f.id, index };
            // The function an entry about symbol `s` (a caller, an indirect
            // call site) belongs to: the winning definition, unless this
            // input's copy lost to an earlier input's.
            let owner = |s: u32| {
                (s < nsyms && !lost_to_earlier(db, f, s))
                    .then(|| live.func_of_symbol(files, db, at(s)))
                    .flatten()
            };
            // A function the input lists as address-taken (ADDRESS_TAKEN:
            // its address is taken anywhere in the input, dead code and the
            // function itself included) is a root, as in nvlink — unless the
            // input's own definition of it lost and only losing definitions
            // of the input take it (below).
            let mut new_roots: Vec<u32> = Vec::new();
            let mut taken_undefined: Vec<&str> = Vec::new();
            for &(fsym, _) in &graph.address_taken {
                if fsym >= nsyms {
                    continue;
                }
                let Some(t) = live.func_of_symbol(files, db, at(fsym)) else {
                    let sym = &f.cubin.symbols[fsym as usize];
                    if sym.is_undefined() && db.resolve(at(fsym)).is_none() {
                        taken_undefined.push(sym.name);
                    }
                    continue;
                };
                if !address_taken_counts(db, f, &graph, fsym) {
                    continue;
                }
                new_roots.push(t);
            }
            let proto = |off: u32| signature(f, off);
            let indirect: Vec<(u32, String)> = graph
                .indirect_calls
                .iter()
                .filter_map(|&(caller, p)| Some((owner(caller)?, proto(p)?)))
                .collect();
            let taken_protos: Vec<(u32, String)> = graph
                .address_taken
                .iter()
                .filter(|&&(fsym, _)| fsym < nsyms && address_taken_counts(db, f, &graph, fsym))
                .filter_map(|&(fsym, p)| {
                    Some((live.func_of_symbol(files, db, at(fsym))?, proto(p)?))
                })
                .collect();
            let calls: Vec<(u32, u32)> = graph
                .calls
                .iter()
                .filter(|e| e.caller < nsyms && e.callee < nsyms)
                // "alias calls function" marks a PTX `.alias`: no call.
                .filter(|e| f.alias_target(e.caller).is_none())
                .filter_map(|e| {
                    Some((
                        owner(e.caller)?,
                        live.func_of_symbol(files, db, at(e.callee))?,
                    ))
                })
                .collect();
            for name in taken_undefined {
                if !live.taken_undefined.iter().any(|n| n == name) {
                    live.taken_undefined.push(name.to_string());
                }
            }
            for t in new_roots {
                live.funcs[t as usize].address_taken = true;
                roots.push(t);
            }
            for (c, p) in indirect {
                let v = &mut live.funcs[c as usize].indirect_protos;
                if !v.contains(&p) {
                    v.push(p);
                }
            }
            for (t, p) in taken_protos {
                let v = &mut live.funcs[t as usize].taken_protos;
                if !v.contains(&p) {
                    v.push(p);
                }
            }
            for (caller, callee) in calls {
                let c = &mut live.funcs[caller as usize];
                if !c.callees.contains(&callee) {
                    c.callees.push(callee);
                }
                if !c.calls.contains(&callee) {
                    c.calls.push(callee);
                }
            }
        }
    }
    let host_patterns = host_kernels.map(|p| PatternSet::new(p.iter().map(String::as_str)));
    let wanted = |f: &Func| -> bool {
        let name = files[f.key.file.0 as usize].cubin.symbols[f.sym as usize].name;
        kernels_used.is_none_or(|list| list.iter().any(|k| name.contains(k.as_str())))
            && host_patterns.as_ref().is_none_or(|set| set.matches(name))
    };
    // nvlink keeps every address-taken function but walks calls only from
    // kernels and from indirect call sites: a function called only by an
    // address-taken one no kernel or indirect call reaches is removed (its
    // caller's call then stays unpatched: address 0).
    let taken_roots = roots;
    let mut walked = vec![false; live.funcs.len()];
    let mut stack: Vec<u32> = live
        .funcs
        .iter()
        .enumerate()
        .filter(|(_, f)| f.is_kernel && wanted(f))
        .map(|(i, _)| i as u32)
        .collect();
    // A kernel is an entry: kept because its address is taken (launched from
    // device code), it is walked too.
    for &t in &taken_roots {
        live.live[t as usize] = true;
        if live.funcs[t as usize].is_kernel {
            stack.push(t);
        }
    }
    loop {
        while let Some(fi) = stack.pop() {
            live.live[fi as usize] = true;
            if std::mem::replace(&mut walked[fi as usize], true) {
                continue;
            }
            let f = &live.funcs[fi as usize];
            for &c in &f.callees {
                if f.calls.contains(&c) || live.funcs[c as usize].is_kernel {
                    stack.push(c);
                } else {
                    live.live[c as usize] = true;
                }
            }
        }
        // Indirect call sites of walked functions reach the kept
        // address-taken functions of their prototypes.
        let unwalked: Vec<usize> = (0..live.funcs.len())
            .filter(|&t| live.live[t] && !walked[t] && live.funcs[t].address_taken)
            .collect();
        for (f, _) in live.funcs.iter().zip(&walked).filter(|(_, &w)| w) {
            if f.indirect_protos.is_empty() {
                continue;
            }
            for &t in &unwalked {
                if live.funcs[t]
                    .taken_protos
                    .iter()
                    .any(|p| f.indirect_protos.contains(p))
                {
                    stack.push(t as u32);
                }
            }
        }
        if stack.is_empty() {
            break;
        }
    }
    // Indirect call targets: the live address-taken functions of a matching
    // prototype, in function order.
    let taken: Vec<u32> = (0..live.funcs.len() as u32)
        .filter(|&i| live.live[i as usize] && live.funcs[i as usize].address_taken)
        .collect();
    for fi in 0..live.funcs.len() {
        if !live.live[fi] || live.funcs[fi].indirect_protos.is_empty() {
            continue;
        }
        let targets: Vec<u32> = taken
            .iter()
            .copied()
            .filter(|&t| {
                live.funcs[t as usize]
                    .taken_protos
                    .iter()
                    .any(|p| live.funcs[fi].indirect_protos.contains(p))
            })
            .collect();
        live.funcs[fi].indirect_callees = targets;
    }
    live.aliases = alias_counts(files, &live);
    live.keep_sections(files);
    live
}

/// Per function: how many `.alias` symbols its input gives it.
fn alias_counts(files: &[InputFile<'_>], live: &Live) -> HashMap<u32, u32> {
    let mut counts: HashMap<u32, u32> = HashMap::default();
    for f in files {
        for i in 1..f.cubin.symbols.len() as u32 {
            if f.alias_target(i).is_none() {
                continue;
            }
            let text = f.cubin.symbols[i as usize].section().unwrap_or(0);
            let fi = live.func_of_text[f.id.0 as usize]
                .get(text as usize)
                .copied()
                .flatten();
            if let Some(fi) = fi {
                *counts.entry(fi).or_insert(0) += 1;
            }
        }
    }
    counts
}

/// The prototype signature string (`#ii`) at `.strtab` offset `off` of `f`.
fn signature(f: &InputFile<'_>, off: u32) -> Option<String> {
    let st = f.cubin.symtab?;
    let link = f.cubin.sections.get(st as usize)?.link;
    let data = f.cubin.sections.get(link as usize)?.data;
    let rest = data.get(off as usize..)?;
    let end = rest.iter().position(|&b| b == 0)?;
    std::str::from_utf8(&rest[..end]).ok().map(str::to_string)
}
