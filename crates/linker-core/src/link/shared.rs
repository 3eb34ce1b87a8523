//! Shared-memory windows, one per kernel (part of phase 4).
//!
//! What goes into a kernel's window (measured against nvlink 13.0.88):
//! - its own static `.shared` variables (ptxas puts them in `.nv.shared.<k>`;
//!   relocatable objects store each variable's alignment in `st_value`);
//! - every module-scope `.shared` variable (input section `.nv_debug.shared`,
//!   reached by name also through `.extern .shared` declarations with a size)
//!   that the kernel or any function it calls uses;
//! - the dynamic window (`extern .shared x[]`, undefined in every input) when
//!   the kernel or any function it calls uses one.
//!
//! Placement (measured, fixture `shared_common_order`):
//! 1. nvlink lists every module-scope variable of the link (input, then symbol
//!    order) and merge-sorts the list by decreasing size (`listsort.rs`).
//! 2. The module-scope variables code refers to that are not one kernel's
//!    alone (several kernels use them, or none) get one offset in every
//!    window, in list order: 0 when the variable fits below everything its
//!    kernels hold so far, else after all of that and after the variables no
//!    kernel uses.
//! 3. Each kernel's own variables and the module-scope ones only it uses
//!    follow, by decreasing alignment, then increasing size.
//!
//! The dynamic window starts at the static end aligned to 16 and then the
//! section is aligned to 16. From sm_90 every window grows by 0x400 bytes (the
//! driver's reserve). A kernel that uses only module-scope or dynamic shared
//! memory gets a `.nv.shared.<k>` section of its own.
//!
//! Local kernels of one name in several inputs share one window (nvlink keys
//! it by name; see [`layout`]).
//!
//! A device function reached from several kernels must see one dynamic base:
//! every kernel reaching it gets the largest of their bases (culink's rule;
//! nvlink's choice in that situation is unmeasured). With `-g` the kernels
//! using one `extern __shared__` name share one base too (measured, see
//! [`layout`]).

use super::live::Live;
use super::symbols::{SymRef, SymbolDb};
use super::{GlobalId, InputFile};
use crate::arch::SmArch;
use crate::elf::*;
use crate::fxhash::HashMap;
use rayon::prelude::*;
use std::collections::BTreeSet;

/// Bytes nvlink (and ptxas) add to every kernel's shared window on sm_90+.
pub(crate) const SM90_SHARED_RESERVE: u64 = 0x400;
/// Alignment of the dynamic (`extern .shared`) window.
pub(crate) const DYNAMIC_SHARED_ALIGN: u64 = 16;

/// The shared-memory reserve in front of every window at `arch`
/// ([`SM90_SHARED_RESERVE`] on sm_90+, none before).
pub(crate) fn reserve(arch: SmArch) -> u64 {
    if arch.is_sm90_or_later() {
        SM90_SHARED_RESERVE
    } else {
        0
    }
}

/// One kernel's window.
#[derive(Debug, Clone, Default)]
pub(crate) struct KernelWindow {
    /// Offsets of the variables placed in it (own static and module-scope), by definition.
    pub offsets: HashMap<SymRef, u64>,
    /// Whether the kernel's call tree uses dynamic shared memory.
    pub dynamic: bool,
    /// Start of the dynamic window.
    pub dyn_offset: u64,
    /// End of the static variables.
    pub static_end: u64,
    /// Section alignment.
    pub align: u64,
}

impl KernelWindow {
    /// The output section size, reserve included.
    pub(crate) fn size(&self, arch: SmArch) -> u64 {
        let reserve = if arch.is_sm90_or_later() {
            SM90_SHARED_RESERVE
        } else {
            0
        };
        (if self.dynamic {
            self.dyn_offset
        } else {
            self.static_end
        }) + reserve
    }
}

/// The most static shared memory a kernel may use (48 KiB; the sm_90+
/// reserve not counted), as nvlink 13.0.88 checks it at every arch.
pub(crate) const MAX_STATIC_SHARED: u64 = 0xc000;

/// nvlink's check of each kernel's static window (its own variables and the
/// module-scope ones of its call tree), in kernel order: "Entry function 'k'
/// uses too much shared data (0xc001 bytes, 0xc000 max)" (measured at
/// sm_75/90/100: 0x6000 + 0x6000 bytes links, 0x6000 + 0x6001 fails; fixture
/// `shared_too_much`).
pub(crate) fn check_limits(
    files: &[InputFile<'_>],
    live: &Live,
    layout: &SharedLayout,
    diags: &mut super::Diags,
) {
    let mut over: Vec<(u32, u64)> = layout
        .kernels
        .iter()
        .filter(|(_, w)| w.static_end > MAX_STATIC_SHARED)
        .map(|(&k, w)| (k, w.static_end))
        .collect();
    over.sort_unstable();
    for (k, size) in over {
        let func = &live.funcs[k as usize];
        let name = files[func.key.file.0 as usize].cubin.symbols[func.sym as usize].name;
        diags.error(crate::error::Error::new(
            crate::error::ErrorKind::Overflow,
            format!(
                "Entry function '{name}' uses too much shared data ({size:#x} bytes, {MAX_STATIC_SHARED:#x} max)"
            ),
        ));
    }
}

/// Every window and what each function's relocations resolve to.
#[derive(Debug, Default)]
pub(crate) struct SharedLayout {
    /// By live kernel index.
    pub kernels: HashMap<u32, KernelWindow>,
    /// (function, module-scope variable) → offset to patch in that function's code.
    pub module_offsets: HashMap<(u32, SymRef), u64>,
    /// Function → dynamic base to patch in its code.
    pub dyn_base: HashMap<u32, u64>,
    /// Where code no kernel reaches sees each module-scope variable that a
    /// kernel's window holds: its offset there (one kernel's alone, or the
    /// link-wide region's, the same in every window). A variable no window
    /// holds is at 0.
    pub unreached: HashMap<SymRef, u64>,
    /// `-g`: each `extern __shared__` name's one dynamic base (see
    /// [`layout`]), for the names some live function uses.
    pub debug_dyn: HashMap<GlobalId, u64>,
    /// Input module-scope shared sections (not copied): (file, section).
    pub module_sections: BTreeSet<(u32, u32)>,
    /// The link's module-scope region: variables several kernels (or none)
    /// use, at their offset there (the same in every window) and their size.
    pub region: HashMap<SymRef, (u64, u64)>,
    /// Module-scope variables exactly one kernel uses: that kernel.
    pub sole_user: HashMap<SymRef, u32>,
    /// Alignment of the module-scope region (the largest input module-scope
    /// section's, as every window gets once the region holds a variable).
    pub region_align: u64,
}

fn align_up(v: u64, a: u64) -> u64 {
    if a <= 1 {
        v
    } else {
        v.div_ceil(a) * a
    }
}

/// What a shared-memory symbol reference means.
#[derive(Clone, Copy)]
pub(crate) enum SharedRef {
    /// A variable defined in a kernel's own `.nv.shared.<k>` or module-scope section.
    Var(SymRef),
    /// The dynamic window.
    Dynamic,
}

/// Classifies a reference to input symbol `r` if it is shared memory.
pub(crate) fn classify(files: &[InputFile<'_>], db: &SymbolDb<'_>, r: SymRef) -> Option<SharedRef> {
    let f = &files[r.file.0 as usize];
    let sym = f.cubin.symbols.get(r.index as usize)?;
    let in_shared_section = |d: SymRef| {
        let df = &files[d.file.0 as usize];
        let ds = &df.cubin.symbols[d.index as usize];
        ds.section()
            .and_then(|s| df.cubin.sections.get(s as usize))
            .is_some_and(|s| s.sh_type == SHT_CUDA_SHARED)
    };
    if sym.is_undefined() {
        if sym.other & STO_CUDA_SHARED == 0 {
            return None;
        }
        return Some(match db.resolve(r) {
            Some(def) if in_shared_section(def) => SharedRef::Var(def),
            _ => SharedRef::Dynamic,
        });
    }
    let def = db.resolve(r)?;
    in_shared_section(def).then_some(SharedRef::Var(def))
}

/// Lays out every kernel's window.
///
/// With `-g` (`device_debug`) nvlink makes each `extern __shared__` name one
/// object in `.nv_debug.shared` (the debug information's view of it), and
/// every kernel whose call tree uses that name gets the same dynamic base:
/// the largest of theirs (measured at sm_90 and sm_100, with and without
/// `-G` objects: two kernels with static windows of 0xa0 and 0x20 bytes
/// using one `extern __shared__` array both get 0xa0; with two names, one
/// per kernel, each keeps its own base). Without `-g` each kernel keeps its
/// own base.
///
/// `leader` ([`Live::same_name_leaders`]): local kernels of one name in
/// several inputs share one window (nvlink keys it by name). Each copy is a
/// kernel of its own for the module-scope region (a variable two copies use
/// is shared by two kernels), but the window holds every copy's own
/// variables and the module-scope ones only one copy uses, laid out as one
/// kernel's, after the end of the *first* copy's module-scope region only
/// (a later copy's shared variables may overlap it: nvlink's layout, followed
/// because the driver sees it). Measured at sm_86/90/100 with two static
/// `sk` (own arrays of 0x258 and 0x3e8 bytes) calling or not a function
/// using a module variable that another kernel uses or not; difftest seed
/// 40074.
pub(crate) fn layout(
    files: &[InputFile<'_>],
    db: &SymbolDb<'_>,
    live: &Live,
    device_debug: bool,
    leader: &[u32],
) -> SharedLayout {
    let _span = tracing::info_span!("shared_windows").entered();
    let mut out = SharedLayout::default();
    for f in files {
        for s in &f.cubin.sections {
            if s.sh_type == SHT_CUDA_SHARED && f.owner[s.index as usize].is_none() {
                out.module_sections.insert((f.id.0, s.index));
            }
        }
    }
    // What each live function's own code uses: module-scope variables, dynamic.
    // Each file's relocations are scanned in parallel (a function's code is in
    // one file, so merging the files' results keeps first-use order).
    // (module-scope variables, dynamic window used, `extern __shared__` names).
    type Uses = (Vec<SymRef>, bool, Vec<GlobalId>);
    let scan = |f: &InputFile<'_>| -> Vec<(u32, Uses)> {
        let fid = f.id.0 as usize;
        let mut found: Vec<(u32, Uses)> = Vec::new();
        for rs in f.cubin.sections.iter().filter(|s| s.is_reloc()) {
            let Some(fi) = live.func_of_text[fid]
                .get(rs.info as usize)
                .copied()
                .flatten()
            else {
                continue;
            };
            if !live.live[fi as usize] {
                continue;
            }
            for r in f.cubin.relocs(rs) {
                let sr = SymRef {
                    file: f.id,
                    index: r.sym,
                };
                let entry = |found: &mut Vec<(u32, Uses)>| -> usize {
                    match found.iter().position(|(g, _)| *g == fi) {
                        Some(i) => i,
                        None => {
                            found.push((fi, Uses::default()));
                            found.len() - 1
                        }
                    }
                };
                match classify(files, db, sr) {
                    Some(SharedRef::Dynamic) => {
                        let i = entry(&mut found);
                        found[i].1 .1 = true;
                        if let Some(g) = db.global_of[fid].get(r.sym as usize).copied().flatten() {
                            if !found[i].1 .2.contains(&g) {
                                found[i].1 .2.push(g);
                            }
                        }
                    }
                    Some(SharedRef::Var(def))
                        if files[def.file.0 as usize].cubin.symbols[def.index as usize]
                            .section()
                            .is_some_and(|s| out.module_sections.contains(&(def.file.0, s))) =>
                    {
                        let i = entry(&mut found);
                        let vars = &mut found[i].1 .0;
                        if !vars.contains(&def) {
                            vars.push(def);
                        }
                    }
                    _ => {}
                }
            }
        }
        found
    };
    let per_file: Vec<Vec<(u32, Uses)>> = files.par_iter().with_min_len(32).map(scan).collect();
    let mut uses: HashMap<u32, Uses> = HashMap::default();
    for (fi, (vars, dynamic, names)) in per_file.into_iter().flatten() {
        let e = uses.entry(fi).or_default();
        for v in vars {
            if !e.0.contains(&v) {
                e.0.push(v);
            }
        }
        e.1 |= dynamic;
        for g in names {
            if !e.2.contains(&g) {
                e.2.push(g);
            }
        }
    }
    // Which kernels reach each user function (reverse walk over callers:
    // calls and indirect calls, not address references — a kernel taking a
    // function's address without calling it gets none of its shared memory;
    // measured, fixture `shared_fn_taken_by_kernel`).
    let n = live.funcs.len();
    let mut callers: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (fi, func) in live.funcs.iter().enumerate() {
        if live.live[fi] {
            for &c in func.calls.iter().chain(&func.indirect_callees) {
                callers[c as usize].push(fi as u32);
            }
        }
    }
    let mut user_fns: Vec<u32> = uses.keys().copied().collect();
    user_fns.sort_unstable();
    let mut reaching: HashMap<u32, Vec<u32>> = HashMap::default(); // user fn → kernels
    let mut kernel_uses: HashMap<u32, (Vec<SymRef>, bool)> = HashMap::default();
    for &u in &user_fns {
        let mut seen = vec![false; n];
        let mut stack = vec![u];
        seen[u as usize] = true;
        let mut ks = Vec::new();
        while let Some(x) = stack.pop() {
            if live.funcs[x as usize].is_kernel {
                ks.push(x);
            }
            for &c in &callers[x as usize] {
                if !std::mem::replace(&mut seen[c as usize], true) {
                    stack.push(c);
                }
            }
        }
        ks.sort_unstable();
        let (vars, dynamic, _) = &uses[&u];
        for &k in &ks {
            let e = kernel_uses.entry(k).or_default();
            for v in vars {
                if !e.0.contains(v) {
                    e.0.push(*v);
                }
            }
            e.1 |= *dynamic;
        }
        reaching.insert(u, ks);
    }
    // nvlink's link-wide list of module-scope variables: every definition, in
    // input then symbol order, merge-sorted by decreasing size (a tie takes
    // the later half: `listsort.rs`). Measured at sm_80 with 2..6 variables of
    // equal size in several declaration and use orders, names changed, and
    // with a variable only dead code uses (it still counts): fixture
    // `shared_common_order`.
    let mut module_vars: Vec<(SymRef, u64, u64)> = Vec::new();
    for f in files {
        for (i, s) in f.cubin.symbols.iter().enumerate() {
            let r = SymRef {
                file: f.id,
                index: i as u32,
            };
            if s.ty() != STT_SECTION
                && s.other & STO_CUDA_SHARED != 0
                && s.section()
                    .is_some_and(|sec| out.module_sections.contains(&(f.id.0, sec)))
                && db.is_winner(r)
            {
                module_vars.push((r, s.value.max(1), s.size));
            }
        }
    }
    let module_vars =
        super::listsort::merge_sort(module_vars, &|a: &(SymRef, u64, u64), b| a.2 > b.2);
    // The kernels using each module-scope variable.
    let mut users: HashMap<SymRef, Vec<u32>> = HashMap::default();
    let mut kernel_list: Vec<u32> = kernel_uses.keys().copied().collect();
    kernel_list.sort_unstable();
    for &k in &kernel_list {
        for v in &kernel_uses[&k].0 {
            users.entry(*v).or_default().push(k);
        }
    }
    // The module-scope variables code refers to, dead code included.
    let per_file: Vec<Vec<SymRef>> = files
        .par_iter()
        .with_min_len(32)
        .map(|f| {
            let mut refs = Vec::new();
            for rs in f.cubin.sections.iter().filter(|rs| {
                rs.is_reloc()
                    && f.cubin
                        .sections
                        .get(rs.info as usize)
                        .is_some_and(|t| t.flags & SHF_EXECINSTR != 0)
                    // Not the code of a weak copy that lost when its input
                    // was read (measured: difftest 120114, fixture
                    // `shared_weak_loser`): nvlink never saw its uses.
                    && f.func_sym
                        .get(rs.info as usize)
                        .is_none_or(|&sym| sym == 0 || !super::live::lost_to_earlier(db, f, sym))
            }) {
                for r in f.cubin.relocs(rs) {
                    let sr = SymRef {
                        file: f.id,
                        index: r.sym,
                    };
                    if let Some(SharedRef::Var(def)) = classify(files, db, sr) {
                        refs.push(def);
                    }
                }
            }
            refs
        })
        .collect();
    let referenced: crate::fxhash::HashSet<SymRef> = per_file.into_iter().flatten().collect();
    // The link's module-scope shared region: the variables code refers to
    // (dead code included) that are not one kernel's alone: used by several
    // kernels, or by none. In list order, each goes at 0 when it fits below
    // everything its kernels hold so far (a variable no kernel uses always
    // does), else after everything its kernels hold and after every variable
    // no kernel uses (holes and alignment padding are not filled). Each
    // kernel's other variables follow the end of its shared ones. Measured
    // at sm_80: two kernels sharing one variable and two others another place
    // both at 0; a third variable shared by one kernel of each pair follows
    // the larger; a 1-byte variable goes below its kernels' variables at
    // 0x40, but not below another kernel's or into a hole; a variable that
    // must move up goes past a 64-byte one only dead code uses (not past an
    // unreferenced one). Fixture `shared_common_order`.
    let mut placed: HashMap<u32, Vec<(u64, u64)>> = HashMap::default();
    let mut common: HashMap<SymRef, u64> = HashMap::default();
    let mut dead_end = 0u64;
    for &(v, a, size) in &module_vars {
        let ks = users.get(&v).map_or(&[][..], Vec::as_slice);
        if let [k] = ks {
            out.sole_user.insert(v, *k);
        }
        if ks.len() == 1 || !referenced.contains(&v) {
            continue;
        }
        let held = ks.iter().filter_map(|k| placed.get(k)).flatten();
        let lowest = held.clone().map(|&(start, _)| start).min();
        let off = match lowest {
            Some(lo) if size > lo => {
                let end = held.map(|&(_, end)| end).max().unwrap_or(0);
                align_up(end.max(dead_end), a)
            }
            _ => 0,
        };
        if ks.is_empty() {
            dead_end = dead_end.max(size);
        }
        for &k in ks {
            placed.entry(k).or_default().push((off, off + size));
        }
        common.insert(v, off);
        out.region.insert(v, (off, size));
    }
    let cursor: HashMap<u32, u64> = placed
        .iter()
        .map(|(&k, iv)| (k, iv.iter().map(|&(_, e)| e).max().unwrap_or(0)))
        .collect();
    // Every window's alignment is at least that of each input module-scope
    // section as soon as the region above holds a variable. Measured at
    // sm_75-sm_120 on random links: a kernel whose only variable is 2-aligned
    // gets 8 (16) when a variable only dead code uses, or one two kernels
    // share, exists and some module section (even one no code refers to) is
    // 8- (16-) aligned; it keeps 2 when every variable code refers to is one
    // kernel's alone, or no code refers to any.
    let global_align = if common.is_empty() {
        1
    } else {
        out.module_sections
            .iter()
            .filter_map(|&(f, sec)| files[f as usize].cubin.sections.get(sec as usize))
            .map(|s| s.addralign.max(1))
            .max()
            .unwrap_or(1)
    };
    out.region_align = global_align;
    // The own `.shared` sections of every definition of each kernel, in input
    // order: a weak kernel that lost keeps its variables in the winner's
    // window (measured at sm_80/90/100, strong and weak winners in both
    // orders, three copies: the window holds all their variables, sorted as
    // one kernel's; difftest seeds 20103, 30060, 30141; fixture
    // `shared_weak_entry`).
    let mut own_sections: HashMap<u32, Vec<(usize, u32)>> = HashMap::default();
    for f in files {
        for s in &f.cubin.sections {
            let Some(text) = f.owner[s.index as usize] else {
                continue;
            };
            if s.sh_type != SHT_CUDA_SHARED {
                continue;
            }
            let sym = f.func_sym.get(text as usize).copied().unwrap_or(0);
            let r = SymRef {
                file: f.id,
                index: sym,
            };
            let winner = live.func_of_text[f.id.0 as usize]
                .get(text as usize)
                .copied()
                .flatten()
                .or_else(|| {
                    (sym != 0)
                        .then(|| live.func_of_symbol(files, db, r))
                        .flatten()
                });
            if let Some(fi) = winner.filter(|&fi| live.funcs[fi as usize].is_kernel) {
                own_sections
                    .entry(leader[fi as usize])
                    .or_default()
                    .push((f.id.0 as usize, s.index));
            }
        }
    }
    // The copies of each kernel name, by first copy (see `leader`).
    let mut members: HashMap<u32, Vec<u32>> = HashMap::default();
    for (ki, &l) in leader.iter().enumerate() {
        if l != ki as u32 {
            members.entry(l).or_insert_with(|| vec![l]).push(ki as u32);
        }
    }
    // Measured (sm_75/90/100, hand-written links and nvcc objects; fixtures
    // `shared_dead_var_windows`, `cu_shared_every_kernel`): when that
    // alignment reaches 16 (the region holds a variable and some input
    // module-scope section is 16-aligned) and some input declares an
    // `extern .shared` array (used or not), every kernel gets a window: an
    // empty one (the reserve only, at that alignment) when it uses no shared
    // memory. Not with 8-aligned sections (fixture `shared_unreached_two`).
    let every_kernel = global_align >= DYNAMIC_SHARED_ALIGN
        && files.iter().any(|f| {
            f.cubin
                .symbols
                .iter()
                .any(|s| s.is_undefined() && s.other & STO_CUDA_SHARED != 0)
        });
    // Each kernel's window (one per kernel name).
    for (ki, func) in live.funcs.iter().enumerate() {
        let ki = ki as u32;
        if !func.is_kernel || !live.live[ki as usize] || leader[ki as usize] != ki {
            continue;
        }
        let own = own_sections.get(&ki).map_or(&[][..], Vec::as_slice);
        // What the copies of the kernel's name use, together.
        let (mut used, mut dynamic) = (Vec::new(), false);
        for c in members.get(&ki).map_or(&[ki][..], Vec::as_slice) {
            if let Some((vars, d)) = kernel_uses.get(c) {
                used.extend(vars.iter().copied());
                dynamic |= *d;
            }
        }
        if own.is_empty() && used.is_empty() && !dynamic && !every_kernel {
            continue;
        }
        let mut w = KernelWindow::default();
        let mut align = global_align;
        // The kernel's own variables in symbol order, then the module-scope
        // ones only it uses in list order; merge-sorted by decreasing
        // alignment, then increasing size (a tie takes the earlier half).
        // Measured at sm_80: own variables of equal alignment and size in 2..6
        // (their order [3, 1, 2] for three), mixed with module-scope ones.
        let mut items: Vec<(SymRef, u64, u64)> = Vec::new();
        for &(fid, sec) in own {
            let f = &files[fid];
            for (i, s) in f.cubin.symbols.iter().enumerate() {
                if s.section() == Some(sec)
                    && s.ty() != STT_SECTION
                    && s.other & STO_CUDA_SHARED != 0
                {
                    let r = SymRef {
                        file: f.id,
                        index: i as u32,
                    };
                    items.push((r, s.value.max(1), s.size));
                }
            }
        }
        for &(v, a, size) in &module_vars {
            if !used.contains(&v) {
                continue;
            }
            match common.get(&v) {
                Some(&off) => {
                    w.offsets.insert(v, off);
                    align = align.max(a);
                }
                None => items.push((v, a, size)),
            }
        }
        let items = super::listsort::merge_sort(items, &|a: &(SymRef, u64, u64), b| {
            a.1 > b.1 || (a.1 == b.1 && a.2 <= b.2)
        });
        let mut end = cursor.get(&ki).copied().unwrap_or(0);
        for (r, a, size) in items {
            let off = align_up(end, a);
            w.offsets.insert(r, off);
            end = off + size;
            align = align.max(a);
        }
        w.static_end = end;
        w.dynamic = dynamic;
        w.dyn_offset = align_up(end, DYNAMIC_SHARED_ALIGN);
        w.align = if dynamic {
            align.max(DYNAMIC_SHARED_ALIGN)
        } else {
            align
        };
        out.kernels.insert(ki, w);
    }
    // Groups of kernels that must see one dynamic base: those reaching a
    // device function that uses it, and with `-g` those using one
    // `extern __shared__` name (in name order: deterministic).
    // (Copies of a kernel name count as their one window's first copy.)
    let to_leaders = |ks: &[u32]| -> Vec<u32> {
        let mut v: Vec<u32> = ks.iter().map(|&k| leader[k as usize]).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let mut groups: Vec<Vec<u32>> = user_fns
        .iter()
        .filter(|u| uses[u].1)
        .map(|u| to_leaders(&reaching[u]))
        .collect();
    let mut name_kernels: std::collections::BTreeMap<GlobalId, Vec<u32>> = Default::default();
    if device_debug {
        for u in &user_fns {
            for g in &uses[u].2 {
                let ks = name_kernels.entry(*g).or_default();
                for k in to_leaders(&reaching[u]) {
                    if !ks.contains(&k) {
                        ks.push(k);
                    }
                }
            }
        }
        groups.extend(name_kernels.values().cloned());
    }
    // One dynamic base per group: raise its kernels to the largest.
    loop {
        let mut changed = false;
        for ks in &groups {
            let m = ks
                .iter()
                .filter_map(|k| out.kernels.get(k).map(|w| w.dyn_offset))
                .max()
                .unwrap_or(0);
            for k in ks {
                if let Some(w) = out.kernels.get_mut(k) {
                    if w.dyn_offset < m {
                        w.dyn_offset = m;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    for (g, ks) in &name_kernels {
        if let Some(m) = ks
            .iter()
            .filter_map(|k| out.kernels.get(k).map(|w| w.dyn_offset))
            .max()
        {
            out.debug_dyn.insert(*g, m);
        }
    }
    // The other copies of a kernel name see the first copy's window.
    for (ki, &l) in leader.iter().enumerate() {
        if l != ki as u32 {
            if let Some(w) = out.kernels.get(&l).cloned() {
                out.kernels.insert(ki as u32, w);
            }
        }
    }
    for (&u, ks) in &reaching {
        let (vars, dynamic, _) = &uses[&u];
        if *dynamic && !ks.is_empty() {
            let base = ks
                .iter()
                .filter_map(|k| out.kernels.get(k).map(|w| w.dyn_offset))
                .max()
                .unwrap_or(0);
            out.dyn_base.insert(u, base);
        }
        for v in vars {
            if let Some(off) = ks
                .iter()
                .find_map(|k| out.kernels.get(k)?.offsets.get(v).copied())
            {
                out.module_offsets.insert((u, *v), off);
            }
        }
    }
    // Variables of functions no kernel reaches (measured: such code sees a
    // variable one kernel uses at that kernel's offset; difftest seed 80016,
    // fixture `shared_unreached_user`).
    let mut wanted: BTreeSet<SymRef> = reaching
        .iter()
        .filter(|(_, ks)| ks.is_empty())
        .flat_map(|(u, _)| uses[u].0.iter().copied())
        .collect();
    if !wanted.is_empty() {
        let mut kernels: Vec<&u32> = out.kernels.keys().collect();
        kernels.sort_unstable();
        for k in kernels {
            let w = &out.kernels[k];
            wanted.retain(|v| match w.offsets.get(v) {
                Some(&off) => {
                    out.unreached.insert(*v, off);
                    false
                }
                None => true,
            });
        }
    }
    out
}

/// The output value of shared variable `var` (in input section `section` of
/// `f`) in a `-g` link: its offset in the window of the kernel owning the
/// section, after the sm_90+ reserve (measured: libcudadevrt's
/// `memcpy_3d_device` `shared_data` at 0x400 in an nvcc `-G` link).
pub(crate) fn debug_shared_value(
    plan: &super::sections::Plan,
    live: &super::live::Live,
    f: &super::InputFile<'_>,
    section: Option<u32>,
    var: super::symbols::SymRef,
) -> Option<u64> {
    let sec = section?;
    if f.cubin.sections.get(sec as usize)?.sh_type != SHT_CUDA_SHARED {
        return None;
    }
    let text = f.owner.get(sec as usize).copied().flatten()?;
    let fi = live.func_of_text[f.id.0 as usize]
        .get(text as usize)
        .copied()
        .flatten()?;
    let offset = *plan.shared.kernels.get(&fi)?.offsets.get(&var)?;
    Some(offset + reserve(plan.arch))
}

/// The dynamic window's base as `-g` debug information sees it, for the
/// `extern __shared__` name `name`: the one base of the kernels using that
/// name ([`layout`]); for a name no live function uses (or none given), the
/// highest base of any function using the dynamic window. `None` when no
/// function uses it.
pub(crate) fn debug_dynamic_base(
    plan: &super::sections::Plan,
    name: Option<GlobalId>,
) -> Option<u64> {
    name.and_then(|g| plan.shared.debug_dyn.get(&g).copied())
        .or_else(|| plan.shared.dyn_base.values().copied().max())
}

/// The value (before the addend) of a shared-memory reference from debug
/// information outside any function (nvcc `-G`'s `.debug_info` and its
/// Mercury twin, fixtures `cu_debug_shared`, `cu_debug_shared_g`): a
/// variable is its offset in the window holding it (the lowest-numbered
/// kernel's) or in the module-scope region, -1 when nothing holds it; the `extern __shared__` window (named `name`) is -1 without
/// `-g` and [`debug_dynamic_base`] with it.
pub(crate) fn debug_location(
    plan: &super::sections::Plan,
    sr: &SharedRef,
    name: Option<GlobalId>,
) -> Option<u64> {
    match sr {
        SharedRef::Dynamic if !plan.device_debug => Some(u64::MAX),
        SharedRef::Dynamic => debug_dynamic_base(plan, name),
        SharedRef::Var(def) => {
            let mut ks: Vec<_> = plan.shared.kernels.iter().collect();
            ks.sort_unstable_by_key(|(k, _)| **k);
            ks.iter()
                .find_map(|(_, w)| w.offsets.get(def).copied())
                .or_else(|| {
                    let mut m: Vec<_> = plan
                        .shared
                        .module_offsets
                        .iter()
                        .filter(|((_, d), _)| d == def)
                        .map(|((k, _), &v)| (*k, v))
                        .collect();
                    m.sort_unstable();
                    m.first().map(|&(_, v)| v)
                })
                // A variable no kernel uses (only dead or unreached code
                // refers to it): its offset in the link's module-scope
                // region; one no code refers to, -1 like the dynamic window
                // (the DWARF of a -G object locates every module-scope
                // variable; measured at sm_75/90/100/120 with and without
                // -g, fixture `cu_debug_fn_static_shared`).
                .or_else(|| plan.shared.region.get(def).map(|&(off, _)| off))
                .or(Some(u64::MAX))
        }
    }
}
