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
//! its parameter bank grows to cover them all and gets one
//! `R_CUDA_{TEX,SAMP,SURF}_HEADER_INDEX` per slot for the driver. Kernels whose
//! call tree references none get nothing, except a lone live kernel: it gets
//! the slots as soon as any code of the link references a handle, even only
//! dead code (an uncalled function, kernels dropped by `-kernels-used`), but
//! not the code of a weak definition beaten by another input's.
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
use crate::elf::{SHF_INFO_LINK, SHT_CUDA_CONSTANT0};
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
    /// Whether some input's relocation names it.
    pub used: bool,
}

impl Handle {
    /// Whether a kernel's slot for it gets a header-index relocation: not for
    /// a sampler no input's code references, unless the kernel's call tree
    /// references a surface (its slot stays either way). Measured at
    /// sm_75/80/100 with a `texmode_independent` object declaring unused
    /// samplers and a texture, both orders, next to kernels using a texture,
    /// a surface or nothing (difftest seeds 1022, 20042, 20105; fixtures
    /// `tex_unused_sampler`, `tex_unused_sampler_surf`). Unused textures and
    /// surfaces always keep theirs.
    pub(crate) fn gets_header_index(&self, kernel_reaches_surface: bool) -> bool {
        self.used || self.ty != STT_CUDA_SAMPLER || kernel_reaches_surface
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
    /// Per function of [`Live::funcs`]: its code references a handle.
    users: Vec<bool>,
    /// Some code of the link, live or not, references a handle.
    referenced: bool,
    /// Output text sections of the kernels given slots (every handle each).
    slotted: HashSet<OutSecId>,
    /// Those of them whose call tree references a surface.
    surface_kernels: HashSet<OutSecId>,
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

/// The relocation sections of input `f` but those of the code of a weak
/// definition beaten by another input's, however it lost: its handle
/// references do not count (measured at sm_80/100: a handle referenced only
/// by such a copy, lost to an earlier strong or weak definition or replaced
/// by a later strong one, gives a lone kernel no slots; difftest seed 50017;
/// fixture `tex_weak_loser`).
fn kept_relocs<'a, 'd>(
    f: &'a InputFile<'d>,
    live: &'a Live,
) -> impl Iterator<Item = &'a crate::cubin::Section<'d>> + 'a {
    let fid = f.id.0 as usize;
    f.cubin.sections.iter().filter(move |rs| {
        rs.is_reloc()
            && f.owner
                .get(rs.info as usize)
                .copied()
                .flatten()
                .is_none_or(|t| live.func_of_text[fid][t as usize].is_some())
    })
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
                        used: false,
                    });
                }
            }
        }
        // Whether any code, dead code included, references a handle.
        let referenced = !list.is_empty()
            && files.iter().any(|f| {
                kept_relocs(f, live).any(|rs| {
                    f.cubin.relocs(rs).any(|r| {
                        f.cubin.symbols.get(r.sym as usize).is_some_and(|s| {
                            r.sym != 0 && s.is_undefined() && is_texture_kind(s.ty())
                        })
                    })
                })
            });
        let mut used_names: HashSet<&str> = HashSet::default();
        for f in files {
            for rs in kept_relocs(f, live) {
                for r in f.cubin.relocs(rs) {
                    if let Some(s) = f.cubin.symbols.get(r.sym as usize) {
                        if r.sym != 0 && s.is_undefined() && is_texture_kind(s.ty()) {
                            used_names.insert(s.name);
                        }
                    }
                }
            }
        }
        for h in &mut list {
            h.used = used_names.contains(h.name.as_str());
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
            users: vec![false; live.funcs.len()],
            referenced,
            slotted: HashSet::default(),
            surface_kernels: HashSet::default(),
        }
    }

    /// The slot offset of handle `name` (`None` for a name that is no handle).
    pub(crate) fn slot(&self, name: &str) -> Option<u64> {
        self.index.get(name).map(|&i| self.base + 4 * u64::from(i))
    }

    /// Records that function `func` (index into [`Live::funcs`]) references a handle.
    pub(crate) fn mark_user(&mut self, func: u32) {
        if let Some(u) = self.users.get_mut(func as usize) {
            *u = true;
        }
    }

    /// Whether the kernel whose output text section is `text` got the slots.
    pub(crate) fn has_slots(&self, text: OutSecId) -> bool {
        self.slotted.contains(&text)
    }

    /// Whether the kernel whose output text section is `text` reaches a surface.
    pub(crate) fn reaches_surface(&self, text: OutSecId) -> bool {
        self.surface_kernels.contains(&text)
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
/// its parameter bank and records the header-index relocations. Runs after
/// every relocation was classified.
pub(crate) fn assign(files: &[InputFile<'_>], live: &Live, plan: &mut Plan, diags: &mut Diags) {
    if plan.tex.handles.is_empty() || !plan.tex.referenced {
        return;
    }
    let kernels: Vec<usize> = (0..live.funcs.len())
        .filter(|&i| live.funcs[i].is_kernel && live.live[i])
        .collect();
    // Functions reaching a user: walk the call edges backwards from the users.
    let n = live.funcs.len();
    let mut callers: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (i, f) in live.funcs.iter().enumerate() {
        for &c in f.callees.iter().chain(&f.indirect_callees) {
            if let Some(v) = callers.get_mut(c as usize) {
                v.push(i as u32);
            }
        }
    }
    let mut reaches = plan.tex.users.clone();
    reaches.resize(n, false);
    let mut stack: Vec<u32> = (0..n as u32).filter(|&i| reaches[i as usize]).collect();
    while let Some(i) = stack.pop() {
        for &c in &callers[i as usize] {
            if !reaches[c as usize] {
                reaches[c as usize] = true;
                stack.push(c);
            }
        }
    }
    // Functions whose call tree references a surface.
    let mut surf = vec![false; n];
    for f in files {
        let fid = f.id.0 as usize;
        for rs in f.cubin.sections.iter().filter(|s| s.is_reloc()) {
            let Some(Some(fi)) = live.func_of_text[fid].get(rs.info as usize) else {
                continue;
            };
            if f.cubin.relocs(rs).any(|r| {
                r.sym != 0
                    && f.cubin
                        .symbols
                        .get(r.sym as usize)
                        .is_some_and(|s| s.is_undefined() && s.ty() == STT_CUDA_SURFACE)
            }) {
                surf[*fi as usize] = true;
            }
        }
    }
    let mut stack: Vec<u32> = (0..n as u32).filter(|&i| surf[i as usize]).collect();
    while let Some(i) = stack.pop() {
        for &c in &callers[i as usize] {
            if !surf[c as usize] {
                surf[c as usize] = true;
                stack.push(c);
            }
        }
    }
    let end = plan.tex.end();
    // Blackwell images carry them as RELA.
    let blackwell = plan.arch.is_blackwell_or_later();
    // A lone live kernel gets the slots whenever any code references a handle,
    // even only dead code (measured: `-kernels-used` of a kernel using none;
    // one kernel next to an uncalled function reading a texture).
    let lone = kernels.len() == 1;
    for &i in &kernels {
        if !lone && !reaches[i] {
            continue;
        }
        let func = &live.funcs[i];
        let f = &files[func.key.file.0 as usize];
        let bank = f
            .cubin
            .sections
            .iter()
            .find(|s| {
                s.sh_type == SHT_CUDA_CONSTANT0
                    && s.info == func.key.text
                    && s.flags & SHF_INFO_LINK != 0
            })
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
            if !h.gets_header_index(surf[i]) {
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
            plan.tex.slotted.insert(t.out);
            if surf[i] {
                plan.tex.surface_kernels.insert(t.out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::shuffle;

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
