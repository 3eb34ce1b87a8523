//! Texture, sampler and surface handle slots in kernels' parameter banks
//! (used by the relocate phase).
//!
//! A `.texref`/`.samplerref`/`.surfref` is an undefined symbol of CUDA type
//! 10/11/12 in every input. nvlink gives each handle of the link one 4-byte
//! slot, numbered link-wide from the end of the largest parameter bank
//! (`.nv.constant0.<k>`) of the link, aligned to 4 (16 on Blackwell): a handle
//! has the same offset in every kernel, and the code referencing it (kernel or
//! callee) reads that offset. Every live kernel whose call tree references at
//! least one handle gets a slot for *every* handle of the link, used or not:
//! its parameter bank grows to cover them all. Kernels whose call tree
//! references none get nothing, except a lone live kernel: it counts as
//! reaching every function of the link that won its name, dead ones included
//! (an uncalled function, kernels dropped by `-kernels-used`), but not a weak
//! definition beaten by another input's.
//!
//! Which slots get an `R_CUDA_{TEX,SAMP,SURF}_HEADER_INDEX` (and on Blackwell
//! an `R_MERCURY_*_HEADER_INDEX` in the kernel's header-index table) for the
//! driver depends on the kinds of handle the kernel's call tree references
//! ([`Kinds`]; measured at sm_80/90/100 with kernels referencing every
//! combination of the three kinds, directly or through a callee, over one or
//! several objects; difftest seeds 30054, 30075, 30094, 40014, 50127, 50133):
//! surface slots always; texture slots when it references a texture or a
//! surface; sampler slots when it references a sampler or a surface. Each
//! kind goes all or nothing: a kernel reading one sampler gets the relocation
//! of every sampler of the link, referenced anywhere or not.
//!
//! Local kernels of one name in several inputs (`.entry sk` without
//! `.visible`): nvlink decides by name, from the first copy in input order.
//! When its call tree references a handle, its bank gets the slots (before
//! Blackwell the one bank all copies share, `sections.rs`); the other copies
//! never get any, even when their own code reads a handle (measured at
//! sm_86/90/100 with two and three copies in several orders: a later copy
//! reading a texture next to a first that does not gets no slot and no
//! header-index relocation — the driver leaves that slot unset; difftest
//! seeds 30147, 40050). Two copies still count as two kernels for the lone
//! kernel rule. The slot base counts the shared bank at its merged size.
//!
//! The slot order (measured with 1..20 handles, names of every length and
//! character, mixed kinds, one to three objects, several kernels; names,
//! declaration order and use order do not change it, only each handle's
//! position in the list below):
//!
//! 1. the handles by first mention (inputs in command-line order, each input's
//!    symbols in `.symtab` order), grouped stably by kind: surfaces, then
//!    samplers, then textures;
//! 2. that list is shuffled by a fixed permutation that depends only on its
//!    length ([`shuffle`]): what a linked-list merge sort produces when every
//!    key compares equal and the list was built by prepending.

use super::live::Live;
use super::relocate::{is_texture_kind, KeptReloc, SymTarget, STT_CUDA_SAMPLER, STT_CUDA_SURFACE};
use super::sections::{Plan, Role};
use super::symbols::SymRef;
use super::{Diags, InputFile, OutSecId};
use crate::elf::SHT_CUDA_CONSTANT0;
use crate::error::{Error, ErrorKind};
use crate::fxhash::{HashMap, HashSet};
use crate::reloc::table::RelocType;

/// One texture/sampler/surface handle of the link.
#[derive(Debug, Clone)]
pub(crate) struct Handle {
    pub name: String,
    /// CUDA symbol type (10 texture, 11 sampler, 12 surface).
    pub ty: u8,
    /// Its first mention (the symbol the driver relocations name).
    pub sym: SymRef,
}

/// The kinds of handle some code references, as a bit set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Kinds(u8);

impl Kinds {
    /// No handle referenced.
    pub(crate) const NONE: Kinds = Kinds(0);
    const TEXTURE: u8 = 1;
    const SAMPLER: u8 = 2;
    const SURFACE: u8 = 4;

    /// The kind of a handle of CUDA symbol type `ty`.
    fn of(ty: u8) -> Kinds {
        Kinds(match ty {
            STT_CUDA_SURFACE => Self::SURFACE,
            STT_CUDA_SAMPLER => Self::SAMPLER,
            _ => Self::TEXTURE,
        })
    }

    fn is_empty(self) -> bool {
        self.0 == 0
    }

    fn union(self, other: Kinds) -> Kinds {
        Kinds(self.0 | other.0)
    }

    /// Whether a kernel whose call tree references these kinds gets a
    /// header-index relocation for its slot of a handle of type `ty` (see
    /// the module documentation): surfaces always, textures with a texture
    /// or surface, samplers with a sampler or surface.
    pub(crate) fn header_index_for(self, ty: u8) -> bool {
        let needs = match ty {
            STT_CUDA_SURFACE => Self::TEXTURE | Self::SAMPLER | Self::SURFACE,
            STT_CUDA_SAMPLER => Self::SAMPLER | Self::SURFACE,
            _ => Self::TEXTURE | Self::SURFACE,
        };
        self.0 & needs != 0
    }
}

/// The link's handles in slot order, and which functions reference them.
#[derive(Debug, Default)]
pub(crate) struct TexSlots {
    /// Handles in slot order: handle `i` lives at `base + 4 * i`.
    pub handles: Vec<Handle>,
    /// Name → position in `handles`.
    index: HashMap<String, u32>,
    /// Offset of the first slot.
    pub base: u64,
    /// Per function of [`Live::funcs`] (live or dead): the kinds of handle
    /// its own code references.
    uses: Vec<Kinds>,
    /// Per kernel given slots (its output text section): the kinds of handle
    /// its call tree references (never empty).
    slotted: HashMap<OutSecId, Kinds>,
}

/// Rank of a kind in the list nvlink shuffles: surfaces, samplers, textures.
fn kind_rank(ty: u8) -> u8 {
    match ty {
        STT_CUDA_SURFACE => 0,
        STT_CUDA_SAMPLER => 1,
        _ => 2,
    }
}

/// The fixed permutation nvlink applies to the handle list (see the module
/// documentation): its list merge sort (`listsort.rs`) over the list built by
/// prepending (so reversed), every key equal and a tie taking the first half.
/// Reproduces every measured order, e.g. for `[1, 2, 3]`: `[1, 3, 2]`; for
/// `[1, .., 5]`: `[5, 1, 3, 2, 4]`.
pub(crate) fn shuffle<T>(list: Vec<T>) -> Vec<T> {
    let mut reversed = list;
    reversed.reverse();
    super::listsort::merge_sort(reversed, &|_, _| true)
}

impl TexSlots {
    /// Collects the link's handles and fixes their slots. `plan` must hold
    /// every parameter bank at its final size (before any slot is added).
    pub(crate) fn collect(files: &[InputFile<'_>], live: &Live, plan: &Plan) -> TexSlots {
        let mut seen: HashSet<&str> = HashSet::default();
        let mut list: Vec<Handle> = Vec::new();
        for f in files {
            for (i, s) in f.cubin.symbols.iter().enumerate() {
                if s.is_undefined() && is_texture_kind(s.ty()) && seen.insert(s.name) {
                    list.push(Handle {
                        name: s.name.to_string(),
                        ty: s.ty(),
                        sym: SymRef {
                            file: f.id,
                            index: i as u32,
                        },
                    });
                }
            }
        }
        // The kinds each winning function's code references, live or dead
        // (a beaten weak definition's code, lost to an earlier strong or
        // weak definition or replaced by a later strong one, has no function
        // and counts for nothing: measured at sm_80/100, difftest seeds
        // 30133, 50017; fixtures `tex_weak_loser`, `tex_sampler_weak_loser`).
        let mut uses = vec![Kinds::NONE; live.funcs.len()];
        if !list.is_empty() {
            for f in files {
                let fid = f.id.0 as usize;
                for rs in f.cubin.sections.iter().filter(|s| s.is_reloc()) {
                    let Some(Some(fi)) = live.func_of_text[fid].get(rs.info as usize) else {
                        continue;
                    };
                    for r in f.cubin.relocs(rs) {
                        if r.sym == 0 {
                            continue;
                        }
                        if let Some(s) = f.cubin.symbols.get(r.sym as usize) {
                            if s.is_undefined() && is_texture_kind(s.ty()) {
                                uses[*fi as usize] = uses[*fi as usize].union(Kinds::of(s.ty()));
                            }
                        }
                    }
                }
            }
        }
        list.sort_by_key(|h| kind_rank(h.ty)); // stable: first mention within a kind
        let handles = shuffle(list);
        let index = handles
            .iter()
            .enumerate()
            .map(|(i, h)| (h.name.clone(), i as u32))
            .collect();
        let largest = plan
            .sections
            .iter()
            .filter(|s| s.role == Role::Const0)
            .map(|s| s.size)
            .max()
            .unwrap_or(0);
        let a = super::blackwell::handle_slot_align(plan.arch);
        TexSlots {
            handles,
            index,
            base: largest.div_ceil(a) * a,
            uses,
            slotted: HashMap::default(),
        }
    }

    /// The slot offset of handle `name` (`None` for a name that is no handle).
    pub(crate) fn slot(&self, name: &str) -> Option<u64> {
        self.index.get(name).map(|&i| self.base + 4 * u64::from(i))
    }

    /// Whether the kernel whose output text section is `text` got the slots.
    pub(crate) fn has_slots(&self, text: OutSecId) -> bool {
        self.slotted.contains_key(&text)
    }

    /// The kinds of handle the call tree of the kernel whose output text
    /// section is `text` references ([`Kinds::NONE`] for a kernel without slots).
    pub(crate) fn kinds(&self, text: OutSecId) -> Kinds {
        self.slotted.get(&text).copied().unwrap_or_default()
    }

    /// End of the slots (the size of a parameter bank that has them).
    fn end(&self) -> u64 {
        self.base + 4 * self.handles.len() as u64
    }
}

/// The driver relocation nvlink emits for a handle slot of this symbol type
/// (samplers: `R_CUDA_SAMP_HEADER_INDEX_0` on Blackwell, measured at sm_100/120).
fn header_index_type(ty: u8, blackwell: bool) -> u32 {
    match ty {
        STT_CUDA_SURFACE => RelocType::R_CUDA_SURF_HEADER_INDEX.0,
        STT_CUDA_SAMPLER if blackwell => RelocType::R_CUDA_SAMP_HEADER_INDEX_0.0,
        STT_CUDA_SAMPLER => RelocType::R_CUDA_SAMP_HEADER_INDEX.0,
        _ => RelocType::R_CUDA_TEX_HEADER_INDEX.0,
    }
}

/// Gives every live kernel whose call tree references a handle (or the lone
/// live kernel, see the module documentation) a slot for every handle: grows
/// its parameter bank and records the header-index relocations its
/// referenced kinds call for.
pub(crate) fn assign(files: &[InputFile<'_>], live: &Live, plan: &mut Plan, diags: &mut Diags) {
    let _span = tracing::debug_span!("texslots").entered();
    if plan.tex.handles.is_empty() {
        return;
    }
    let kernels: Vec<usize> = (0..live.funcs.len())
        .filter(|&i| live.funcs[i].is_kernel && live.live[i])
        .collect();
    // The kinds each live function's call tree references: the live
    // functions' own, joined upwards along the call edges (to a fixed point:
    // call trees may be recursive).
    let n = live.funcs.len();
    let mut callers: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (i, f) in live.funcs.iter().enumerate() {
        for &c in f.callees.iter().chain(&f.indirect_callees) {
            if let Some(v) = callers.get_mut(c as usize) {
                v.push(i as u32);
            }
        }
    }
    let mut reach: Vec<Kinds> = (0..n)
        .map(|i| match (live.live.get(i), plan.tex.uses.get(i)) {
            (Some(true), Some(&k)) => k,
            _ => Kinds::NONE,
        })
        .collect();
    let mut stack: Vec<u32> = (0..n as u32)
        .filter(|&i| !reach[i as usize].is_empty())
        .collect();
    while let Some(i) = stack.pop() {
        let k = reach[i as usize];
        for &c in &callers[i as usize] {
            let joined = reach[c as usize].union(k);
            if joined != reach[c as usize] {
                reach[c as usize] = joined;
                stack.push(c);
            }
        }
    }
    // A lone live kernel reaches every function of the link (measured:
    // `-kernels-used` of a kernel using none; one kernel next to an uncalled
    // function reading a texture, or only a sampler).
    let everything = plan.tex.uses.iter().fold(Kinds::NONE, |a, &k| a.union(k));
    let lone = kernels.len() == 1;
    let end = plan.tex.end();
    // Blackwell images carry them as RELA.
    let blackwell = plan.arch.is_blackwell_or_later();
    for &i in &kernels {
        let kinds = if lone { everything } else { reach[i] };
        if kinds.is_empty() {
            continue;
        }
        // Of local kernels sharing a name only the first copy (whose call
        // tree decides) gets slots, in the bank it shares with the others
        // before Blackwell (see the module documentation).
        if plan.kernel_leader.get(i).is_some_and(|&l| l as usize != i) {
            continue;
        }
        let func = &live.funcs[i];
        let f = &files[func.key.file.0 as usize];
        let bank = f
            .cubin
            .sections
            .iter()
            .find(|s| s.sh_type == SHT_CUDA_CONSTANT0 && s.info_section() == Some(func.key.text))
            .and_then(|s| plan.placement[f.id.0 as usize][s.index as usize]);
        let Some(bank) = bank else {
            let name = f.cubin.symbols[func.sym as usize].name;
            diags.error(
                Error::new(
                    ErrorKind::Unsupported,
                    format!(
                        "kernel '{name}' needs texture/surface handle slots but has no parameter bank"
                    ),
                )
                .in_file(f.name),
            );
            continue;
        };
        let out = bank.out;
        let sec = plan.sec_mut(out);
        sec.size = sec.size.max(end);
        for (slot, h) in plan.tex.handles.iter().enumerate() {
            if !kinds.header_index_for(h.ty) {
                continue;
            }
            plan.kept.push(KeptReloc {
                target: out,
                rela: blackwell,
                offset: plan.tex.base + 4 * slot as u64,
                rtype: header_index_type(h.ty, blackwell),
                sym: SymTarget::Input(h.sym),
                addend: 0,
            });
        }
        if let Some(t) = plan.placement[f.id.0 as usize][func.key.text as usize] {
            plan.tex.slotted.insert(t.out, kinds);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{shuffle, Kinds};
    use crate::link::relocate::{STT_CUDA_SAMPLER, STT_CUDA_SURFACE, STT_CUDA_TEXTURE};

    /// Which slots get a header-index relocation for each combination of the
    /// kinds a kernel reaches (measured at sm_80/90/100, `tex_header_kinds`).
    #[test]
    fn header_index_by_kinds() {
        let t = Kinds::of(STT_CUDA_TEXTURE);
        let s = Kinds::of(STT_CUDA_SAMPLER);
        let f = Kinds::of(STT_CUDA_SURFACE);
        // (kinds reached, [texture, sampler, surface] slots relocated)
        let cases = [
            (t, [true, false, true]),
            (s, [false, true, true]),
            (f, [true, true, true]),
            (t.union(s), [true, true, true]),
            (t.union(f), [true, true, true]),
            (s.union(f), [true, true, true]),
            (Kinds::NONE, [false, false, false]),
        ];
        for (k, want) in cases {
            let got = [STT_CUDA_TEXTURE, STT_CUDA_SAMPLER, STT_CUDA_SURFACE]
                .map(|ty| k.header_index_for(ty));
            assert_eq!(got, want, "{k:?}");
        }
    }

    /// nvlink 13.0.88's slot order for handles 1..=n in list order (measured).
    #[test]
    fn shuffle_matches_measured_orders() {
        let measured: &[&[u32]] = &[
            &[1],
            &[2, 1],
            &[1, 3, 2],
            &[2, 4, 1, 3],
            &[5, 1, 3, 2, 4],
            &[6, 2, 4, 5, 1, 3],
            &[5, 1, 7, 3, 6, 2, 4],
            &[6, 2, 8, 4, 5, 1, 7, 3],
            &[1, 9, 5, 7, 3, 6, 2, 8, 4],
            &[2, 10, 6, 8, 4, 1, 9, 5, 7, 3],
            &[1, 9, 5, 3, 11, 7, 2, 10, 6, 8, 4],
            &[2, 10, 6, 4, 12, 8, 1, 9, 5, 3, 11, 7],
            &[5, 13, 1, 9, 3, 11, 7, 2, 10, 6, 4, 12, 8],
            &[6, 14, 2, 10, 4, 12, 8, 5, 13, 1, 9, 3, 11, 7],
            &[5, 13, 1, 9, 7, 15, 3, 11, 6, 14, 2, 10, 4, 12, 8],
            &[6, 14, 2, 10, 8, 16, 4, 12, 5, 13, 1, 9, 7, 15, 3, 11],
            &[17, 1, 9, 5, 13, 7, 15, 3, 11, 6, 14, 2, 10, 8, 16, 4, 12],
            &[
                18, 2, 10, 6, 14, 8, 16, 4, 12, 17, 1, 9, 5, 13, 7, 15, 3, 11,
            ],
            &[
                17, 1, 9, 5, 13, 19, 3, 11, 7, 15, 18, 2, 10, 6, 14, 8, 16, 4, 12,
            ],
            &[
                18, 2, 10, 6, 14, 20, 4, 12, 8, 16, 17, 1, 9, 5, 13, 19, 3, 11, 7, 15,
            ],
        ];
        for want in measured {
            let n = want.len() as u32;
            assert_eq!(shuffle((1..=n).collect()), *want, "n = {n}");
        }
        assert!(shuffle(Vec::<u32>::new()).is_empty());
    }
}
