//! Phase 4: the output sections and where every input section lands.
//!
//! Per-function sections (`.text.<fn>`, `.nv.constant0.<fn>`,
//! `.nv.shared.<fn>`, anything else whose `sh_info` links to a function) are
//! copied one to one, so two local functions of the same name in two inputs
//! give two output sections of that name — except that nvlink keys a
//! kernel's parameter bank (before Blackwell) and shared window by name: the
//! copies of a local kernel name share the first copy's `.nv.constant0.<k>`
//! (later banks appended, each copy's `EIATTR_PARAM_CBANK` keeping its own
//! offset) and `.nv.shared.<k>` (`sh_info`: the first copy's text), see
//! `Live::same_name_leaders`. Module sections (`.nv.constant3`,
//! `.nv.global.init`, `.nv.global`, `.debug_frame`, ...) are concatenated by
//! name in input order, each contribution aligned to its own `sh_addralign`;
//! the output alignment is the maximum. CUDA section types become what the
//! driver expects of a final image (constant banks and `.nv.global.init` →
//! `PROGBITS`, `.nv.global` and `.nv.shared.*` → `NOBITS`). Metadata sections
//! (`.nv.info*`, `.nv.compat`, `.nv.callgraph`, `.nv.prototype`, notes,
//! symbol/string tables, relocations) are rebuilt by later phases.
//!
//! After this phase every kept input section has its output section and
//! offset: symbol values and relocation targets can be computed.

use super::live::Live;
use super::symbols::SymbolDb;
use super::{FileId, InputFile, OutSecId};
use crate::arch::SmArch;
use crate::cubin::Section;
use crate::elf::*;
use crate::fxhash::{HashMap, HashSet};
use std::collections::BTreeMap;

/// A resolved relocation to apply while copying an input section.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Patch {
    /// Offset inside the input section.
    pub offset: u64,
    /// R_CUDA type (selects the bit actions).
    pub rtype: u32,
    /// The value (address, offset or slot) to insert.
    pub value: u64,
    /// The constant bank number (0..=17), for constant-bank relocations.
    pub bank: Option<u8>,
}

/// One input file's patches, by input section: only the sections that have
/// any are listed (a list per section of every input was 2.9 MB at N = 2000).
#[derive(Debug, Default)]
pub(crate) struct FilePatches(Vec<(u32, Vec<Patch>)>);

impl FilePatches {
    /// The patches of input section `sec`, to add to.
    pub(crate) fn list(&mut self, sec: u32) -> &mut Vec<Patch> {
        let i = match self.0.iter().position(|e| e.0 == sec) {
            Some(i) => i,
            None => {
                self.0.push((sec, Vec::new()));
                self.0.len() - 1
            }
        };
        &mut self.0[i].1
    }
    /// The patches of input section `sec`.
    pub(crate) fn get(&self, sec: u32) -> &[Patch] {
        self.0
            .iter()
            .find(|e| e.0 == sec)
            .map_or(&[], |e| e.1.as_slice())
    }
    /// Frees the lists' growth slack (they live until the write).
    pub(crate) fn shrink(&mut self) {
        self.0.shrink_to_fit();
        for (_, l) in &mut self.0 {
            l.shrink_to_fit();
        }
    }
}

/// One input section's bytes inside an output section.
#[derive(Debug, Clone)]
pub(crate) struct Piece {
    pub file: FileId,
    pub section: u32,
    /// Offset in the output section.
    pub offset: u64,
}

/// An output section's input pieces, in offset order: one is kept inline
/// (most output sections are one function's text, info or constants: a heap
/// block each was 2.5 MB of an N = 2000 link), more on the heap.
#[derive(Debug, Clone)]
pub(crate) enum Pieces {
    One(Piece),
    Many(Vec<Piece>),
}

impl Default for Pieces {
    fn default() -> Self {
        Pieces::Many(Vec::new())
    }
}

impl Pieces {
    /// Appends a piece.
    pub(crate) fn push(&mut self, p: Piece) {
        match self {
            Pieces::Many(v) if v.is_empty() => *self = Pieces::One(p),
            Pieces::Many(v) => v.push(p),
            Pieces::One(first) => *self = Pieces::Many(vec![first.clone(), p]),
        }
    }

    /// Puts a piece first (an overlay at offset 0, written before the rest).
    pub(crate) fn push_front(&mut self, p: Piece) {
        self.insert(0, p);
    }

    /// Puts a piece at position `at` of the list (an overlay, written after
    /// the pieces before it); `at` past the end appends.
    pub(crate) fn insert(&mut self, at: usize, p: Piece) {
        let mut v = match std::mem::take(self) {
            Pieces::One(first) => vec![first],
            Pieces::Many(v) => v,
        };
        v.insert(at.min(v.len()), p);
        *self = if v.len() == 1 {
            Pieces::One(v.remove(0))
        } else {
            Pieces::Many(v)
        };
    }
}

impl std::ops::Deref for Pieces {
    type Target = [Piece];
    fn deref(&self) -> &[Piece] {
        match self {
            Pieces::One(p) => std::slice::from_ref(p),
            Pieces::Many(v) => v,
        }
    }
}

impl<'a> IntoIterator for &'a Pieces {
    type Item = &'a Piece;
    type IntoIter = std::slice::Iter<'a, Piece>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Where an output section's bytes come from.
#[derive(Debug, Clone)]
pub(crate) enum Body {
    /// Built by the linker.
    Bytes(Vec<u8>),
    /// Copied (and patched) from inputs; gaps are zero.
    Pieces(Pieces),
    /// No file contents.
    NoBits,
    /// The same file bytes as another output section (Blackwell's
    /// `.nv.merc.nv.global.init` shares `.nv.global.init`'s offset).
    Alias(OutSecId),
}

impl Body {
    /// The whole of input section `s` of input `file`, at offset 0.
    pub(crate) fn whole(file: FileId, s: &Section<'_>) -> Body {
        Body::Pieces(Pieces::One(Piece {
            file,
            section: s.index,
            offset: 0,
        }))
    }
}

/// `-r`: where a winner's section of one kind goes (the slot of the first
/// copy it replaced) and the sections of the copies it replaced.
type ReplacedSlot = (u32, Vec<(FileId, u32)>);

/// What an output section is for; decides its place in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Role {
    Null,
    ShStrTab,
    StrTab,
    SymTab,
    SymTabShndx,
    Debug,
    TkInfo,
    CuInfo,
    NvInfo,
    Compat,
    NvInfoFn,
    CallGraph,
    Prototype,
    RelAction,
    Reloc,
    /// Module constant banks (`.nv.constant3`, ...) and a function's banks
    /// other than its parameters (`.nv.constant2.<fn>`).
    ConstBank,
    /// A function's parameter bank (`.nv.constant0.<fn>`).
    Const0,
    Text,
    Data,
    NoBits,
    /// A section of the Blackwell Mercury family (`.nv.capmerc.*`, `.nv.merc.*`),
    /// placed after everything else; the number orders the family's own groups
    /// (see `mercury.rs`).
    Mercury(u8),
}

/// `sh_link` of an output section, symbolically.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LinkTo {
    Zero,
    SymTab,
    Section(OutSecId),
}

/// `sh_info` of an output section, symbolically.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InfoTo {
    Raw(u32),
    Section(OutSecId),
    /// The output symbol index of a function, with extra bits kept above bit 24
    /// (sm_75..89 keep the register count in the top byte).
    FuncSym {
        func: u32,
        high: u32,
    },
}

/// One output section.
#[derive(Debug, Clone)]
pub(crate) struct OutSection {
    pub name: String,
    pub sh_type: u32,
    pub flags: u64,
    pub align: u64,
    pub entsize: u64,
    pub link: LinkTo,
    pub info: InfoTo,
    pub size: u64,
    pub body: Body,
    pub role: Role,
    /// The function (live index) owning it, for per-function sections.
    pub func: Option<u32>,
    /// Whether the output gets a section symbol for it.
    pub section_symbol: bool,
    /// `-r`: the number of output sections planned when the first copy this
    /// function's definition replaced was read; the section goes there in
    /// its role's order, as nvlink -r puts it ([`OutSection::order_key`]).
    pub slot: Option<u32>,
}

impl OutSection {
    pub(crate) fn new(name: impl Into<String>, sh_type: u32, role: Role) -> Self {
        OutSection {
            name: name.into(),
            sh_type,
            flags: 0,
            align: 1,
            entsize: 0,
            link: LinkTo::Zero,
            info: InfoTo::Raw(0),
            size: 0,
            body: Body::Bytes(Vec::new()),
            role,
            func: None,
            section_symbol: false,
            slot: None,
        }
    }
}

/// Where a kept input section landed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Placement {
    pub out: OutSecId,
    pub offset: u64,
}

/// The output plan: sections, placements, and the state later phases fill in.
pub(crate) struct Plan {
    pub sections: Vec<OutSection>,
    /// Per file, per input section: where it landed (None: not copied).
    pub placement: Vec<Vec<Option<Placement>>>,
    /// Every kernel's shared-memory window.
    pub shared: super::shared::SharedLayout,
    /// Per file, per input section: resolved relocations to apply when copying it.
    pub patches: Vec<FilePatches>,
    /// Relocations kept for the driver (serialized by `relocate::finish`).
    pub kept: super::relocate::KeptList,
    /// Texture/sampler/surface handles and their slots (`texslots.rs`).
    pub tex: super::texslots::TexSlots,
    /// Where each merged `.common` variable was allocated.
    pub common: HashMap<super::GlobalId, Placement>,
    /// Final order (filled by `finalize_order`): position → section.
    pub order: Vec<OutSecId>,
    /// Final section index of each section (by `OutSecId`).
    pub index_of: Vec<u32>,
    /// Name → merged module section.
    pub merged: HashMap<String, OutSecId>,
    /// The architecture linked for.
    pub arch: SmArch,
    /// `-r`: the output is a relocatable object (see `rmode.rs`).
    pub relocatable: bool,
    /// `--preserve-relocs`: the relocations resolved by the linker, listed in
    /// `.nv.resolvedrela.*` (see `preserve.rs`).
    pub resolved: Option<super::preserve::Preserved>,
    /// `-g`: a device-debug link (nothing dead-stripped).
    pub device_debug: bool,
    /// Merged `.nv.shared.reserved.<n>` sections and the offset their first
    /// variable starts at (see [`place_reserved_shared`]).
    pub reserved_base: Vec<(OutSecId, u64)>,
    /// `-r`: a replaced weak copy's section (text, bank 2) → the winner's
    /// output section of that kind, which takes the copy's place in the
    /// order ([`OutSection::slot`]; the Mercury twins follow it).
    pub replaced_by: HashMap<(FileId, u32), OutSecId>,
    /// Per live function: the first live kernel of its name
    /// ([`Live::same_name_leaders`]; itself for other functions and in `-r`).
    pub kernel_leader: Vec<u32>,
    /// Input sections written as other bytes than their own (Blackwell: the
    /// jump tables of weak copies that lost, `place_bank2`, and their Mercury
    /// twins): zeros, or [`loser_table_bytes`] when some entries are not
    /// zero; shorter than the input when nvlink clips a replaced copy's
    /// table to the winner's (its relocations past the end dropped).
    pub overlaid: HashMap<(FileId, u32), Vec<u8>>,
    /// The value nvlink leaves in the null symbol (`symtab[0]`, both
    /// tables): the bank offset of the last appended table of a weak copy
    /// that lost when read, when the winner has a table of its own (an
    /// artifact of its bookkeeping, measured; 0 otherwise).
    pub null_value: u64,
}

impl Plan {
    pub(crate) fn add(&mut self, s: OutSection) -> OutSecId {
        self.sections.push(s);
        OutSecId(self.sections.len() as u32 - 1)
    }
    pub(crate) fn sec(&self, id: OutSecId) -> &OutSection {
        &self.sections[id.0 as usize]
    }
    pub(crate) fn sec_mut(&mut self, id: OutSecId) -> &mut OutSection {
        &mut self.sections[id.0 as usize]
    }
    pub(crate) fn find_role(&self, role: Role) -> Option<OutSecId> {
        self.sections
            .iter()
            .position(|s| s.role == role)
            .map(|i| OutSecId(i as u32))
    }

    /// Sorts sections into their file order and fixes section indices.
    pub(crate) fn finalize_order(&mut self) {
        let six = self.arch.is_sm90_or_later();
        let rank = |r: Role| -> u8 {
            match r {
                Role::Null => 0,
                Role::ShStrTab => 1,
                Role::StrTab => 2,
                Role::SymTab => 3,
                Role::SymTabShndx => 3,
                Role::Debug => 4,
                Role::TkInfo => 5,
                Role::CuInfo => 6,
                Role::NvInfo => 7,
                Role::Compat => 8,
                Role::NvInfoFn => 9,
                Role::CallGraph => 10,
                Role::Prototype => 11,
                Role::RelAction => 12,
                Role::Reloc => 13,
                Role::ConstBank => 15,
                // ptxas' final-cubin layout (sm_90+) puts the parameter banks last.
                Role::Const0 if six => 21,
                Role::Const0 => 16,
                Role::Text => 17,
                Role::Data => 18,
                Role::NoBits => 19,
                Role::Mercury(k) => 30 + k,
            }
        };
        // Keys computed once, then sorted (ids are unique: the sort is total).
        let mut keys: Vec<(u8, (u32, u32))> = self
            .sections
            .iter()
            .enumerate()
            .map(|(i, s)| (rank(s.role), s.order_key(i as u32)))
            .collect();
        keys.sort_unstable();
        let order: Vec<OutSecId> = keys.into_iter().map(|(_, (_, i))| OutSecId(i)).collect();
        let mut index_of = vec![0u32; self.sections.len()];
        for (pos, id) in order.iter().enumerate() {
            index_of[id.0 as usize] = pos as u32;
        }
        self.order = order;
        self.index_of = index_of;
    }

    /// Whether nothing is dead-stripped (`-r`, `--preserve-relocs` and `-g`, as nvlink).
    pub(crate) fn keeps_everything(&self) -> bool {
        self.relocatable || self.resolved.is_some() || self.device_debug
    }

    /// Final section index of an output section.
    pub(crate) fn index(&self, id: OutSecId) -> u32 {
        self.index_of[id.0 as usize]
    }
}

/// The most module constant data (`.nv.constant3`) an image may hold.
pub(crate) const MAX_MODULE_CONSTANTS: u64 = 0x1_0000;

/// nvlink's check of the merged module constants: "File uses too much global
/// constant data (0x10004 bytes, 0x10000 max)" (measured at sm_75/90/100:
/// 0x8000 + 0x8000 bytes in two inputs link, 0x8000 + 0x8004 fail; fixture
/// `const_too_much`).
pub(crate) fn check_limits(plan: &Plan, diags: &mut super::Diags) {
    for s in plan.sections.iter().filter(|s| s.name == ".nv.constant3") {
        if s.size > MAX_MODULE_CONSTANTS {
            diags.error(crate::error::Error::new(
                crate::error::ErrorKind::Overflow,
                format!(
                    "File uses too much global constant data ({:#x} bytes, {MAX_MODULE_CONSTANTS:#x} max)",
                    s.size
                ),
            ));
        }
    }
}

/// Places one input's `.nv.shared.reserved.<n>` (shared memory inside the
/// kernels' reserved window; sm_110 objects carry one with a weak
/// `__nv_reservedSMEM_gb10b_war_var` of 0x80 bytes each). As nvlink 13.0.88
/// lays them out in a final link: each variable once, whatever the number of
/// objects defining it (a contribution whose variables are all placed
/// already lands on the earlier copy), the first from the reserved offset
/// the input's `.nv.reservedSmem.offset0` gives (0x40: the section is 0xc0,
/// the variable at 0x40, for one to three objects). The variables' `st_value`
/// is their alignment, as for `.nv.shared.*`. nvlink -r keeps each variable
/// once too, from offset 0 (measured: two sm_100a objects with tcgen05 code,
/// each defining the weak `__nv_reservedSMEM_tcgen05_partition`, give a
/// 0x20-byte section; fixture `tcgen05_callee_r`).
fn place_reserved_shared<'d>(
    plan: &mut Plan,
    f: &'d InputFile<'d>,
    s: &Section<'d>,
    (out_type, role): (u32, Role),
    section_symbol: bool,
    seen: &mut HashMap<&'d str, Placement>,
) {
    let fid = f.id.0 as usize;
    let names: Vec<&'d str> = f
        .cubin
        .symbols
        .iter()
        .filter(|y| y.section() == Some(s.index) && y.ty() != STT_SECTION && !y.name.is_empty())
        .map(|y| y.name)
        .collect();
    if let Some(&p) = names.first().and_then(|n| seen.get(n)) {
        if names.iter().all(|n| seen.contains_key(n)) {
            plan.placement[fid][s.index as usize] = Some(p);
            return;
        }
    }
    let id = match plan.merged.get(s.name) {
        Some(&id) => id,
        None => {
            let mut o = OutSection::new(s.name, out_type, role);
            o.flags = s.flags;
            o.entsize = s.entsize;
            o.body = Body::NoBits;
            let id = plan.add(o);
            plan.merged.insert(s.name.to_string(), id);
            let base = f
                .cubin
                .symbols
                .iter()
                .find(|y| y.shndx == SHN_UNDEF && y.name == ".nv.reservedSmem.offset0")
                .filter(|_| !plan.relocatable)
                .map_or(0, |y| y.value);
            plan.sec_mut(id).size = base;
            plan.reserved_base.push((id, base));
            id
        }
    };
    let o = plan.sec_mut(id);
    o.section_symbol |= section_symbol;
    let a = s.addralign.max(1);
    o.align = o.align.max(a);
    let offset = align_up(o.size, a);
    o.size = offset + s.size;
    let p = Placement { out: id, offset };
    plan.placement[fid][s.index as usize] = Some(p);
    for n in names {
        seen.entry(n).or_insert(p);
    }
}

impl OutSection {
    /// Appends input section `s` of file `file` at its alignment (raising
    /// the section's) and returns its offset; a copied section records the
    /// piece, a NOBITS one only grows.
    fn append(&mut self, file: FileId, s: &Section<'_>) -> u64 {
        let a = s.addralign.max(1);
        self.align = self.align.max(a);
        let offset = align_up(self.size, a);
        self.size = offset + s.size;
        if let Body::Pieces(p) = &mut self.body {
            p.push(Piece {
                file,
                section: s.index,
                offset,
            });
        }
        offset
    }

    /// Where the section created `i`-th goes among its role's: in creation
    /// order, but a section with a [`OutSection::slot`] goes right before the
    /// one created `slot`-th (ties: creation order). Second: `i`.
    fn order_key(&self, i: u32) -> (u32, u32) {
        match self.slot {
            Some(at) => (2 * at, i),
            None => (2 * i + 1, i),
        }
    }
}

fn align_up(v: u64, a: u64) -> u64 {
    if a <= 1 {
        v
    } else {
        v.div_ceil(a) * a
    }
}

/// Whether an input section is rebuilt by a later phase rather than copied.
fn is_rebuilt(s: &Section<'_>) -> bool {
    matches!(
        s.sh_type,
        SHT_NULL
            | SHT_STRTAB
            | SHT_SYMTAB
            | SHT_SYMTAB_SHNDX
            | SHT_REL
            | SHT_RELA
            | SHT_NOTE
            | SHT_CUDA_INFO
            | SHT_CUDA_COMPAT
            | SHT_CUDA_CALLGRAPH
            | SHT_CUDA_PROTOTYPE
            | SHT_CUDA_RELOCINFO
            | SHT_CUDA_MERC_RELA
            | SHT_CUDA_MERC_INFO
            | SHT_CUDA_MERC_SYMTAB
            | SHT_CUDA_CAPMERC_TEXT
    ) || s.name.starts_with(".nv.merc.")
        || s.name.starts_with(".nv.capmerc.")
}

/// The output type of an input section type.
fn output_type(t: u32) -> u32 {
    match t {
        SHT_CUDA_GLOBAL | SHT_CUDA_SHARED | SHT_CUDA_LOCAL | SHT_CUDA_SHARED_RESERVED => SHT_NOBITS,
        SHT_CUDA_GLOBAL_INIT => SHT_PROGBITS,
        t if (SHT_CUDA_CONSTANT0..=SHT_CUDA_CONSTANT17).contains(&t) => SHT_PROGBITS,
        t => t,
    }
}

fn role_of(s: &Section<'_>, owned: bool) -> Role {
    if s.flags & SHF_EXECINSTR != 0 {
        Role::Text
    } else if (SHT_CUDA_CONSTANT0..=SHT_CUDA_CONSTANT17).contains(&s.sh_type) {
        // A function's parameter bank; its other banks (bank 2: jump tables,
        // constants) are laid out as the module's banks, before the code
        // (nvlink's order and segments; nvlink crashes reading a Blackwell
        // `-r` object whose banks 2 are not contiguous).
        if owned && s.sh_type == SHT_CUDA_CONSTANT0 {
            Role::Const0
        } else {
            Role::ConstBank
        }
    } else if output_type(s.sh_type) == SHT_NOBITS {
        Role::NoBits
    } else if s.name == ".debug_frame" || s.flags & SHF_ALLOC == 0 {
        Role::Debug
    } else {
        Role::Data
    }
}

/// `-g` (nvcc -G -dlink) at sm_90: nvlink sizes `.nv_debug.shared` like the
/// reserved window (0x400) and gives it a section symbol (measured, fixture
/// `cu_debug_shared_g`; Blackwell sizes it so in every link, sm_75-89 leave it
/// empty).
///
/// When the link's module-scope region holds a variable (one several kernels
/// use, or only dead or unreached code: a device function's `static
/// __shared__`, a file-scope `__shared__`), `-g` keeps the region there, as
/// the debugger's view of it, at every arch: the section spans the reserve
/// and the region, gets a section symbol, and the region's variables keep
/// their symbols in it (`symtab.rs`; measured at sm_75/90/100/120, fixture
/// `cu_debug_fn_static_shared`). `--preserve-relocs` sizes it the same way
/// (`preserve::create_sections`, fixture `preserve_relocs_shared`).
pub(crate) fn debug_dynamic_shared(plan: &mut Plan) {
    let region_end = plan
        .shared
        .region
        .values()
        .map(|&(off, size)| off + size)
        .max();
    let sm90 = plan.arch.is_sm90_or_later() && !plan.arch.is_blackwell_or_later();
    if !sm90 && region_end.is_none() {
        return;
    }
    let reserve = super::shared::reserve(plan.arch);
    if let Some(i) = plan
        .sections
        .iter()
        .position(|s| s.name == ".nv_debug.shared" && s.role == Role::NoBits)
    {
        let o = plan.sec_mut(OutSecId(i as u32));
        o.size = o.size.max(reserve + region_end.unwrap_or(0));
        o.section_symbol = true;
    }
}

/// The live function (a kernel too) that replaced `f`'s definition of the function
/// whose text is section `text`: `Some` when that definition held its name
/// when its input was read and a later input's definition won (weak, then
/// strong or a weak copy with fewer registers).
fn replacing_winner(
    files: &[InputFile<'_>],
    db: &SymbolDb<'_>,
    live: &Live,
    f: &InputFile<'_>,
    text: u32,
) -> Option<u32> {
    let r = super::symbols::SymRef {
        file: f.id,
        index: *f.func_sym.get(text as usize)?,
    };
    if !db.replaced.contains(&r) {
        return None;
    }
    final_winner(files, db, live, r)
}

/// The live function (a kernel too) that finally defines the name of `r`.
fn final_winner(
    files: &[InputFile<'_>],
    db: &SymbolDb<'_>,
    live: &Live,
    r: super::symbols::SymRef,
) -> Option<u32> {
    let w = db.resolve(r).filter(|&w| w != r)?;
    let wsec = files[w.file.0 as usize].cubin.symbols[w.index as usize].section()?;
    let fi = live.func_of_text[w.file.0 as usize]
        .get(wsec as usize)
        .copied()
        .flatten()?;
    live.live[fi as usize].then_some(fi)
}

/// For each live non-kernel function with a constant bank 2 section, the live
/// kernels whose call tree ([`Live::call_tree`]) reaches it (none listed:
/// not reached by a kernel).
fn bank2_kernels(
    files: &[InputFile<'_>],
    db: &SymbolDb<'_>,
    live: &Live,
) -> HashMap<u32, Vec<u32>> {
    let mut has_bank2 = vec![false; live.funcs.len()];
    let mut any = false;
    for f in files {
        for s in f
            .cubin
            .sections
            .iter()
            .filter(|s| s.sh_type == SHT_CUDA_CONSTANT2)
        {
            let func = f.owner[s.index as usize]
                .and_then(|t| live.func_of_text[f.id.0 as usize][t as usize]);
            if let Some(fi) = func.filter(|&fi| !live.funcs[fi as usize].is_kernel) {
                has_bank2[fi as usize] = true;
                any = true;
            }
            // A replaced copy's table: its alignment goes to the banks of the
            // kernels reaching the winner (`place_bank2`).
            let winner = f.owner[s.index as usize]
                .and_then(|t| replacing_winner(files, db, live, f, t))
                .filter(|&w| !live.funcs[w as usize].is_kernel);
            if let Some(w) = winner {
                has_bank2[w as usize] = true;
                any = true;
            }
        }
    }
    let mut reach: HashMap<u32, Vec<u32>> = HashMap::default();
    if !any {
        return reach;
    }
    let tree = live.call_tree(files, db);
    let mut seen = vec![u32::MAX; live.funcs.len()];
    for (k, func) in live.funcs.iter().enumerate() {
        if !func.is_kernel || !live.live[k] {
            continue;
        }
        let k = k as u32;
        let mut stack = vec![k];
        seen[k as usize] = k;
        while let Some(f) = stack.pop() {
            if has_bank2[f as usize] {
                reach.entry(f).or_default().push(k);
            }
            for &c in &tree[f as usize] {
                if seen[c as usize] != k {
                    seen[c as usize] = k;
                    stack.push(c);
                }
            }
        }
    }
    reach
}

/// The order [`place_bank2`] lays the deferred tables out in: nvlink's,
/// the functions in reverse input order. One input's several tables of one
/// function (a `-r` output's winner's table, then the tables of copies that
/// lost to it) are one block in their section order, like a table and its
/// losing copies' in a direct link: each entry is the first table and the
/// sections of the others (measured at sm_89 on a relink of culink's `-r`
/// output holding winner `f`, loser `f`, `g`: nvlink lays out `g`, winner,
/// loser, and its null symbol keeps the loser's offset; difftest
/// --relocatable seed 290025, fixture `bank2_relink_order`).
/// (An empty block, `empty`, stays an entry of its own.)
fn deferred_order(
    deferred: &[(FileId, u32, u32)],
    empty: &HashSet<(FileId, u32)>,
) -> Vec<((FileId, u32, u32), Vec<u32>)> {
    let mut groups: Vec<((FileId, u32, u32), Vec<u32>)> = Vec::new();
    let mut at: HashMap<(FileId, u32), usize> = HashMap::default();
    for &d in deferred {
        if empty.contains(&(d.0, d.1)) {
            groups.push((d, Vec::new()));
            continue;
        }
        match at.get(&(d.0, d.2)) {
            Some(&g) => groups[g].1.push(d.1),
            None => {
                at.insert((d.0, d.2), groups.len());
                groups.push((d, Vec::new()));
            }
        }
    }
    groups.reverse();
    groups
}

/// The bank 2 (jump tables) of the function whose text is section `text`
/// of `f`: its first `.nv.constant2.<fn>`.
pub(crate) fn function_table<'a, 'd>(f: &'a InputFile<'d>, text: u32) -> Option<&'a Section<'d>> {
    f.cubin
        .sections
        .iter()
        .find(|b| b.sh_type == SHT_CUDA_CONSTANT2 && b.info == text && !orphan_table(f, b.index))
}

/// Whether jump table `sec` of `f` holds no symbol but its section symbol:
/// a `-r` output's table of a weak copy that lost when read, which nvlink -r
/// (and culink -r) keeps attached to the winner's text without the copy's
/// `<fn>.const_opt.*` symbol. ptxas names every table it writes (all 578 of
/// the fixtures' objects), so such a table is not the function's own: a
/// final link places it as a direct link places the losing copy's table
/// (fixture `bank2_orphan_table_r`).
fn orphan_table(f: &InputFile<'_>, sec: u32) -> bool {
    f.named_tables.binary_search(&sec).is_err()
}

/// Whether a kernel's shared window `w` gets a section symbol: nvlink gives
/// one when it holds variables or its dynamic window starts past 0 (raised
/// for a function shared with another kernel: difftest seeds 20071, 20072,
/// 20131 at sm_80/103/121, fixture `shared_dyn_raised_symbol`), and at sm_90
/// also when it holds only the dynamic window at 0 (measured; not at
/// sm_100/120: an nvcc kernel with only `extern __shared__`).
fn window_section_symbol(w: &super::shared::KernelWindow, arch: SmArch) -> bool {
    !w.offsets.is_empty()
        || w.dyn_offset > 0
        || (arch.is_sm90_or_later() && !arch.is_blackwell_or_later())
}

/// What `plan` gathers for [`place_bank2`] while it walks the inputs.
#[derive(Default)]
struct Bank2 {
    /// The live kernels reaching each non-kernel function with a table
    /// ([`bank2_kernels`]).
    reach: HashMap<u32, Vec<u32>>,
    /// Tables to place (file, section, function), in input order: the
    /// functions' own, replaced copies' slots and empty blocks.
    deferred: Vec<(FileId, u32, u32)>,
    /// Kernels' own banks, by kernel.
    kernels: HashMap<u32, OutSecId>,
    /// Tables of weak copies that lost when read, by winning function.
    losers: BTreeMap<u32, Vec<(FileId, u32)>>,
    /// Tables of copies replaced by a later definition, by winning device
    /// function (when it has a table of its own).
    replaced: BTreeMap<u32, Vec<(FileId, u32)>>,
    /// Replaced copies' tables placed as empty blocks (the winner has none).
    empty: HashSet<(FileId, u32)>,
    /// Own tables of weak kernels replaced by a later definition, by winner.
    kernel_replaced: BTreeMap<u32, Vec<(FileId, u32)>>,
    /// Winner → the replaced copy's table whose place its table takes.
    slot: HashMap<u32, (FileId, u32)>,
    /// Tables of copies that lost when read to one replaced later, by
    /// winning device function with a table: their alignment only.
    align_only: BTreeMap<u32, Vec<(FileId, u32)>>,
}

/// `-r`: the winning definition of the kernel whose losing weak copy owned
/// input section `sec` of `f` (its own `.nv.shared.<k>`).
fn relocatable_loser_kernel(
    db: &SymbolDb<'_>,
    f: &InputFile<'_>,
    sec: usize,
) -> Option<super::symbols::SymRef> {
    let text = f.owner[sec]?;
    let here = super::symbols::SymRef {
        file: f.id,
        index: f.func_sym[text as usize],
    };
    if f.cubin.symbols.get(here.index as usize)?.other & STO_CUDA_ENTRY == 0 {
        return None;
    }
    db.resolve(here).filter(|w| *w != here)
}

/// Output `sh_flags` of a function's own input section: its flags (a text's
/// without the barrier bits of CUDA 12 objects), with `SHF_INFO_LINK` added
/// to a `.nv.shared.<fn>` tied to its text without it (CUDA 11.8-12.2
/// objects, [`Section::info_section`]); nvlink adds it there and keeps the
/// flags of a `.nv.constant0.<fn>` or `.nv.constant2.<fn>` it copies
/// (measured at sm_80).
fn per_function_flags(s: &Section<'_>, relocatable: bool) -> u64 {
    if s.flags & SHF_EXECINSTR != 0 && !relocatable {
        // The barrier count of an older object's text becomes an
        // `EIATTR_NUM_BARRIERS` record (`nvinfo`), as nvlink writes it in
        // a final link (nvlink -r keeps the bits and adds no record).
        return s.flags & !crate::cubin::TEXT_BARRIERS_MASK;
    }
    let adds_link = s.sh_type == SHT_CUDA_SHARED && s.info_section().is_some();
    if adds_link {
        s.flags | SHF_INFO_LINK
    } else {
        s.flags
    }
}

/// `-r`: an input section of a losing weak copy kept in the output, as a
/// section of its own attached (`sh_info`) to the winner's text `t`.
fn add_loser_section(
    plan: &mut Plan,
    f: &InputFile<'_>,
    s: &Section<'_>,
    section_symbol: bool,
    t: OutSecId,
) -> OutSecId {
    let mut o = OutSection::new(s.name, s.sh_type, role_of(s, true));
    o.flags = s.flags;
    o.align = s.addralign.max(1);
    o.entsize = s.entsize;
    o.section_symbol = section_symbol;
    o.size = s.size;
    o.info = InfoTo::Section(t);
    o.link = LinkTo::Zero;
    o.body = if s.is_nobits() {
        Body::NoBits
    } else {
        Body::whole(f.id, s)
    };
    let id = plan.add(o);
    plan.placement[f.id.0 as usize][s.index as usize] = Some(Placement { out: id, offset: 0 });
    id
}

/// `-r`: the output text of the function whose weak copy owned input section
/// `sec` of `f` (a table), when that copy lost as its input was read to the
/// final winner, read before it; the winner's text.
fn relocatable_loser_table_owner(
    files: &[InputFile<'_>],
    db: &SymbolDb<'_>,
    f: &InputFile<'_>,
    sec: usize,
    text_out: &[HashMap<u32, OutSecId>],
) -> Option<OutSecId> {
    let text = f.owner[sec]?;
    let (w, wtext) = winner_text(files, db, f, text)?;
    if w.file.0 >= f.id.0 || !super::live::lost_to_earlier(db, f, f.func_sym[text as usize]) {
        return None;
    }
    text_out[w.file.0 as usize].get(&wtext).copied()
}

/// The definition that won the name of the function whose text is section
/// `text` of `f` (possibly `f`'s own), and that definition's text section.
pub(crate) fn winner_text(
    files: &[InputFile<'_>],
    db: &SymbolDb<'_>,
    f: &InputFile<'_>,
    text: u32,
) -> Option<(super::symbols::SymRef, u32)> {
    let w = db.resolve(super::symbols::SymRef {
        file: f.id,
        index: *f.func_sym.get(text as usize)?,
    })?;
    let wtext = files[w.file.0 as usize].cubin.symbols[w.index as usize].section()?;
    Some((w, wtext))
}

/// `-r`, Blackwell: [`loser_table_bytes`] of table `sec` of `f`, a weak
/// copy's that lost when read, against the winner's own table.
fn relocatable_loser_table_bytes(
    files: &[InputFile<'_>],
    db: &SymbolDb<'_>,
    f: &InputFile<'_>,
    sec: usize,
) -> Option<Vec<u8>> {
    let (w, wtext) = winner_text(files, db, f, f.owner[sec]?)?;
    let winner = &files[w.file.0 as usize];
    let wbank = function_table(winner, wtext)?;
    loser_table_bytes(winner, wbank, f, sec as u32)
}

/// Places the constant bank 2 of non-kernel functions (sm_75-89) in the bank
/// of every kernel reaching them, as nvlink 13.0.88 does (measured, fixture
/// `cu_bank2`): a kernel's own bank 2 stays at offset 0; the functions'
/// sections are taken in reverse input order (last file, last section first),
/// each at one offset valid in every kernel that reaches it: the highest end of
/// what those kernels hold so far, aligned. A kernel without a bank of its own
/// gets `.nv.constant2.<kernel>`, zero where other kernels' data lie. The
/// function keeps no `.nv.constant2.<fn>` (the driver loads bank 2 per kernel;
/// culink used to keep it, so the function read the kernel's bank at offsets
/// meant for its own).
///
/// `losers`: the banks of weak copies that lost when their input was read,
/// by winning function. nvlink appends them to the winner's bank (measured
/// at sm_100 with jump tables, fixture `bank2_weak_copies`): a kernel's own
/// bank grows by them (or is created holding them); a device function's
/// table travels with them into the kernels' banks; a device function with
/// no table of its own gets a `.nv.constant2.<fn>` of its own holding them,
/// which no kernel's bank takes. Copies replaced by a later definition keep
/// nothing.
#[allow(clippy::too_many_arguments)]
fn place_bank2(
    files: &[InputFile<'_>],
    live: &Live,
    plan: &mut Plan,
    text_out: &[HashMap<u32, OutSecId>],
    b2: Bank2,
    leader: &[u32],
) {
    let Bank2 {
        ref reach,
        ref deferred,
        kernels: mut kernel_bank2,
        ref losers,
        ref replaced,
        ref empty,
        ref kernel_replaced,
        ref slot,
        ref align_only,
    } = b2;
    // Same-named local kernels of several inputs share one bank (measured,
    // difftest 60106, fixture `bank2_static_twins`: one `.nv.constant2.sk`
    // for two `sk`, at every arch). Each copy still adds its tables: the
    // same bytes at the same offset, and on Blackwell each copy's Mercury
    // relocations (nvlink lists them twice).
    let key = |k: u32| leader[k as usize];
    let sec_of = |file: FileId, sec: u32| &files[file.0 as usize].cubin.sections[sec as usize];
    // The largest alignment of the tables `list` names.
    let replaced_align = |list: &[(FileId, u32)]| {
        list.iter()
            .map(|&(f, s)| sec_of(f, s).addralign.max(1))
            .max()
            .unwrap_or(1)
    };
    // A bank named after function `fi` (its `.text` as sh_info), empty.
    let new_bank = |plan: &mut Plan, fi: u32, like: &Section<'_>| -> OutSecId {
        let kf = &live.funcs[fi as usize];
        let kfile = &files[kf.key.file.0 as usize];
        let name = kfile.cubin.symbols[kf.sym as usize].name;
        let mut o = OutSection::new(
            format!(".nv.constant2.{name}"),
            output_type(like.sh_type),
            role_of(like, true),
        );
        // A bank the link creates has `SHF_INFO_LINK` (nvlink's, with CUDA
        // 11.8 objects whose tables lack it); a table copied as it is keeps
        // its input's flags.
        o.flags = like.flags | SHF_INFO_LINK;
        o.align = 1;
        o.entsize = like.entsize;
        o.func = Some(fi);
        o.section_symbol = true;
        o.info = match text_out[kf.key.file.0 as usize].get(&kf.key.text) {
            Some(&t) => InfoTo::Section(t),
            None => InfoTo::Raw(0),
        };
        o.link = LinkTo::Zero;
        o.body = Body::Pieces(Pieces::default());
        plan.add(o)
    };
    // Appends `(file, sec)` to output section `id` at its alignment; records
    // the input's placement.
    let append = |plan: &mut Plan, id: OutSecId, file: FileId, sec: u32| {
        let input = sec_of(file, sec);
        let offset = plan.sec_mut(id).append(file, input);
        plan.placement[file.0 as usize][sec as usize] = Some(Placement { out: id, offset });
    };
    // The kernel's bank, created when it has none; a new one takes the
    // alignment an earlier empty block left for it (`pending`).
    let bank_for = |plan: &mut Plan,
                    banks: &mut HashMap<u32, OutSecId>,
                    pending: &mut HashMap<u32, u64>,
                    k: u32,
                    like: &Section<'_>|
     -> OutSecId {
        *banks.entry(k).or_insert_with(|| {
            let id = new_bank(plan, k, like);
            if let Some(p) = pending.remove(&k) {
                plan.sec_mut(id).align = p;
            }
            id
        })
    };
    // Where a block of alignment `block_align` goes in the banks of
    // `kernels`: one offset valid in all, the highest end they hold so far,
    // aligned to the block's and the banks' alignment (measured: an align-4
    // table after a kernel's own align-8 bank of 0x24 bytes goes at 0x28;
    // fixture `bank2_layout`). Returns (alignment, offset).
    let block_offset = |plan: &Plan,
                        banks: &HashMap<u32, OutSecId>,
                        high: &HashMap<u32, u64>,
                        kernels: &[u32],
                        block_align: u64|
     -> (u64, u64) {
        let a = kernels
            .iter()
            .filter_map(|k| banks.get(k))
            .map(|&id| plan.sec(id).align)
            .fold(block_align, u64::max);
        let start = kernels
            .iter()
            .map(|k| high.get(k).copied().unwrap_or(0))
            .max()
            .unwrap_or(0);
        (a, align_up(start, a))
    };
    let mut grown: std::collections::BTreeSet<OutSecId> = std::collections::BTreeSet::new();
    // On Blackwell their bytes are zeros (the Mercury twin keeps their
    // relocations; measured at sm_100, `bank2_weak_copies`), but for entries
    // whose target is one of the winning copy's own table targets.
    if plan.arch.is_blackwell_or_later() {
        for (&fi, list) in losers {
            for &k in list {
                let size = sec_of(k.0, k.1).size as usize;
                plan.overlaid.entry(k).or_insert_with(|| vec![0; size]);
            }
            let key = live.funcs[fi as usize].key;
            let winner = &files[key.file.0 as usize];
            if let Some(wbank) = function_table(winner, key.text) {
                for &(lf, ls) in list {
                    if let Some(bytes) = loser_table_bytes(winner, wbank, &files[lf.0 as usize], ls)
                    {
                        plan.overlaid.insert((lf, ls), bytes);
                    }
                }
            }
        }
    }
    // Kernels' own banks grow by their losing copies' first.
    for (&fi, list) in losers {
        if !live.funcs[fi as usize].is_kernel {
            continue;
        }
        let id = match kernel_bank2.get(&fi) {
            Some(&id) => id,
            None => {
                let (file, sec) = list[0];
                let id = new_bank(plan, fi, sec_of(file, sec));
                kernel_bank2.insert(fi, id);
                id
            }
        };
        for &(file, sec) in list {
            append(plan, id, file, sec);
        }
        // Not padded to its alignment for that (a 0x1c-byte table aligned
        // to 8 leaves the bank 0x1c bytes; difftest 170008).
    }
    // Device functions with no table of their own: a bank of their own.
    // (One whose own table was dropped, no kernel reaching it, keeps
    // nothing: difftest 140135.)
    let placed: HashSet<u32> = deferred
        .iter()
        .filter(|d| !empty.contains(&(d.0, d.1)))
        .map(|d| d.2)
        .collect();
    for (&fi, list) in losers {
        let func = &live.funcs[fi as usize];
        let own_table = function_table(&files[func.key.file.0 as usize], func.key.text).is_some();
        if func.is_kernel || placed.contains(&fi) || own_table {
            continue;
        }
        let (file, sec) = list[0];
        let id = new_bank(plan, fi, sec_of(file, sec));
        for &(file, sec) in list {
            append(plan, id, file, sec);
        }
    }
    let mut high: HashMap<u32, u64> = kernel_bank2
        .iter()
        .map(|(&k, &id)| (k, plan.sec(id).size))
        .collect();
    // Alignments of empty blocks for kernels that had no bank yet.
    let mut pending_align: HashMap<u32, u64> = HashMap::default();
    for (&k, list) in kernel_replaced {
        let a = replaced_align(list);
        match kernel_bank2.get(&key(k)) {
            Some(&id) => {
                let o = plan.sec_mut(id);
                o.align = o.align.max(a);
            }
            None => {
                let p = pending_align.entry(key(k)).or_insert(1);
                *p = (*p).max(a);
            }
        }
    }
    for ((file, sec, fi), extra) in deferred_order(deferred, empty) {
        let extra: Vec<(FileId, u32)> = extra.iter().map(|&s| (file, s)).collect();
        // A replaced copy's table whose winner has none: an empty block,
        // aligned like the table, that the reaching kernels' banks grow to
        // (none is created; measured: difftest 180149, fixture
        // `bank2_replaced_align`).
        if empty.contains(&(file, sec)) {
            let kernels: Vec<u32> = reach[&fi].iter().map(|&k| key(k)).collect();
            let like = sec_of(file, sec);
            // Copies that lost when read to the replaced one add their
            // alignment (as to a winner's block, below).
            let align = like.addralign.max(1).max(replaced_align(
                align_only.get(&fi).map_or(&[], Vec::as_slice),
            ));
            let (a, offset) = block_offset(plan, &kernel_bank2, &high, &kernels, align);
            for &k in &kernels {
                high.insert(k, offset);
                // A kernel without a bank gets one up to the block (zeros;
                // difftest 180033, 130103), unless the block is at 0: an
                // empty bank is none, and a bank created later takes the
                // alignment (difftest 110120).
                if offset == 0 && !kernel_bank2.contains_key(&k) {
                    let p = pending_align.entry(k).or_insert(1);
                    *p = (*p).max(a);
                    continue;
                }
                let id = bank_for(plan, &mut kernel_bank2, &mut pending_align, k, like);
                let o = plan.sec_mut(id);
                o.align = o.align.max(a);
                o.size = o.size.max(offset);
                grown.insert(id);
            }
            continue;
        }
        // At a replaced copy's slot: the winner's own table.
        let (file, sec) = if slot.get(&fi) == Some(&(file, sec)) {
            let wf = &live.funcs[fi as usize];
            match function_table(&files[wf.key.file.0 as usize], wf.key.text) {
                Some(b) => (wf.key.file, b.index),
                None => continue,
            }
        } else {
            (file, sec)
        };
        // The function's table, then its losing copies', as one block.
        let mut members: Vec<(FileId, u32, u64)> = vec![(file, sec, 0)];
        let input_size = sec_of(file, sec).size;
        let mut end = input_size;
        let mut block_align = sec_of(file, sec).addralign.max(1);
        let losing: Vec<(FileId, u32)> = extra
            .iter()
            .chain(losers.get(&fi).map(Vec::as_slice).unwrap_or(&[]))
            .copied()
            .collect();
        for &(lf, ls) in &losing {
            let l = sec_of(lf, ls);
            let at = align_up(end, l.addralign.max(1));
            members.push((lf, ls, at));
            end = at + l.size;
            block_align = block_align.max(l.addralign.max(1));
        }
        // A replaced copy's table adds no bytes, only its alignment, as an
        // empty member at the block's end; on Blackwell it also lies over the
        // winner's table (with its Mercury relocations), written after the
        // winner's bytes.
        let replaced_here = replaced.get(&fi).map(Vec::as_slice).unwrap_or(&[]);
        let align_here = align_only.get(&fi).map(Vec::as_slice).unwrap_or(&[]);
        if !replaced_here.is_empty() || !align_here.is_empty() {
            let ra = replaced_align(replaced_here).max(replaced_align(align_here));
            end = align_up(end, ra);
            block_align = block_align.max(ra);
            if plan.arch.is_blackwell_or_later() {
                // Over the winner's bytes (after them), with a losing copy's
                // bytes: its entries whose target the winner's table shares
                // get the winner's offsets, the others zeros (measured at
                // sm_100-121: copies of the winner's shape show the winner's
                // bytes, which looked like a shorter copy lying under them at
                // sm_120/121, difftest 110055; 310062 shows zeros over a
                // shorter copy's other entries). A longer copy is clipped to
                // the winner's table, its relocations past it dropped (a
                // three-entry copy over a two-entry winner, 300067). Fixture
                // `bank2_replaced_longer`.
                for &r in replaced_here {
                    let len = sec_of(r.0, r.1).size.min(input_size) as usize;
                    let mut bytes = loser_table_bytes(
                        &files[file.0 as usize],
                        sec_of(file, sec),
                        &files[r.0 .0 as usize],
                        r.1,
                    )
                    .unwrap_or_default();
                    bytes.resize(len, 0);
                    plan.overlaid.entry(r).or_insert(bytes);
                    members.push((r.0, r.1, 0));
                }
            }
        }
        let input = sec_of(file, sec);
        let kernels: Vec<u32> = reach[&fi].iter().map(|&k| key(k)).collect();
        let (a, offset) = block_offset(plan, &kernel_bank2, &high, &kernels, block_align);
        let mut first = None;
        for &k in &kernels {
            let id = bank_for(plan, &mut kernel_bank2, &mut pending_align, k, input);
            let o = plan.sec_mut(id);
            o.align = o.align.max(a);
            o.size = o.size.max(offset + end);
            if let Body::Pieces(p) = &mut o.body {
                for &(mf, ms, at) in &members {
                    p.push(Piece {
                        file: mf,
                        section: ms,
                        offset: offset + at,
                    });
                }
            }
            high.insert(k, offset + end);
            first.get_or_insert(id);
            grown.insert(id);
        }
        if let Some(out) = first {
            // nvlink's null symbol keeps the last appended loser's offset.
            if let Some(&(_, _, at)) = members.iter().rev().find(|m| losing.contains(&(m.0, m.1))) {
                plan.null_value = offset + at;
            }
            for &(mf, ms, at) in &members {
                plan.placement[mf.0 as usize][ms as usize] = Some(Placement {
                    out,
                    offset: offset + at,
                });
            }
        }
    }
    // On Blackwell a replaced kernel's own table also lies over the winner's
    // bank from offset 0 (its Mercury relocations copied), when the bank
    // holds it: its entries whose target the winner's own table shares get
    // the winner's offsets, the others zeros, as a losing copy's
    // (`loser_table_bytes`; measured at sm_100 and sm_120, fixture
    // `bank2_replaced_longer`; difftest 300058). Without a table of the
    // winner's it lies under the bank (zeros; `bank2_replaced_align`).
    if plan.arch.is_blackwell_or_later() {
        for (&k, list) in kernel_replaced {
            let Some(&id) = kernel_bank2.get(&key(k)) else {
                continue;
            };
            let wkey = live.funcs[key(k) as usize].key;
            let winner = &files[wkey.file.0 as usize];
            let wbank = function_table(winner, wkey.text);
            let size = plan.sec(id).size;
            for &(rf, rs) in list.iter().rev() {
                if sec_of(rf, rs).size > size {
                    continue;
                }
                let len = sec_of(rf, rs).size as usize;
                let mut bytes = wbank
                    .and_then(|w| loser_table_bytes(winner, w, &files[rf.0 as usize], rs))
                    .unwrap_or_default();
                bytes.resize(len, 0);
                plan.overlaid.entry((rf, rs)).or_insert(bytes);
                plan.placement[rf.0 as usize][rs as usize] = Some(Placement { out: id, offset: 0 });
                let piece = Piece {
                    file: rf,
                    section: rs,
                    offset: 0,
                };
                if let Body::Pieces(p) = &mut plan.sec_mut(id).body {
                    // Over the winner's own table (its first piece).
                    let own = wbank.is_some_and(|w| {
                        p.iter()
                            .next()
                            .is_some_and(|f| f.file == wkey.file && f.section == w.index)
                    });
                    if own {
                        p.insert(1, piece);
                    } else {
                        p.push_front(piece);
                    }
                }
            }
        }
    }
    // A bank that received functions' tables ends at its alignment
    // (measured: a created bank holding 0x8 bytes at 0x18 and 0x14 at 0x20,
    // align 8, is 0x38 bytes; fixture `bank2_layout`).
    for id in grown {
        let o = plan.sec_mut(id);
        o.size = align_up(o.size, o.align);
    }
}

/// Builds the output section list and places every kept input section.
pub(crate) fn plan(
    files: &[InputFile<'_>],
    db: &SymbolDb<'_>,
    live: &Live,
    arch: SmArch,
    relocatable: bool,
    device_debug: bool,
) -> Plan {
    let _span = tracing::info_span!("sections").entered();
    // Local kernels of one name in several inputs share their parameter bank
    // (before Blackwell) and shared window (see `same_name_leaders`); a
    // relocatable link keeps them apart (the final link merges them).
    let leader: Vec<u32> = if relocatable {
        (0..live.funcs.len() as u32).collect()
    } else {
        live.same_name_leaders(files)
    };
    // A relocatable link lays out no shared-memory windows: the final link does.
    let shared = if relocatable {
        super::shared::SharedLayout::default()
    } else {
        super::shared::layout(files, db, live, device_debug, &leader)
    };
    let mut plan = Plan {
        sections: Vec::new(),
        placement: files
            .iter()
            .map(|f| vec![None; f.cubin.sections.len()])
            .collect(),
        shared,
        patches: files.iter().map(|_| FilePatches::default()).collect(),
        kept: Default::default(),
        tex: Default::default(),
        common: HashMap::default(),
        order: Vec::new(),
        index_of: Vec::new(),
        merged: HashMap::default(),
        arch,
        relocatable,
        resolved: None,
        device_debug,
        reserved_base: Vec::new(),
        replaced_by: HashMap::default(),
        kernel_leader: Vec::new(),
        overlaid: HashMap::default(),
        null_value: 0,
    };
    let mut reserved_seen: HashMap<&str, Placement> = HashMap::default();
    plan.add(OutSection::new("", SHT_NULL, Role::Null));
    let mut s = OutSection::new(".shstrtab", SHT_STRTAB, Role::ShStrTab);
    s.align = 1;
    plan.add(s);
    let mut s = OutSection::new(".strtab", SHT_STRTAB, Role::StrTab);
    s.align = 1;
    plan.add(s);
    let mut s = OutSection::new(".symtab", SHT_SYMTAB, Role::SymTab);
    s.align = 8;
    s.entsize = 24;
    plan.add(s);

    // Text sections of each file first so that owned sections can link to them.
    let mut text_out: Vec<HashMap<u32, OutSecId>> =
        files.iter().map(|_| HashMap::default()).collect();
    let mut any_dynamic_shared = false;
    // `-r`: losing weak kernel copies' own shared sections, and their winners.
    let mut loser_windows: Vec<(FileId, u32, super::symbols::SymRef)> = Vec::new();
    // `-r`, Blackwell: tables of copies a later definition replaced.
    let mut replaced_tables: Vec<(FileId, u32)> = Vec::new();
    // Parameter banks of kernels whose (weak) definition lost to another input's.
    let mut overridden_banks: Vec<(FileId, u32, super::symbols::SymRef)> = Vec::new();
    // Constant bank 2 (sm_75-89): the kernels reaching each non-kernel function
    // that has one, its deferred sections, and the kernels' own banks.
    let mut b2 = Bank2 {
        reach: if relocatable {
            HashMap::default()
        } else {
            bank2_kernels(files, db, live)
        },
        ..Bank2::default()
    };
    // (first kernel of a name, section type) → the output section its
    // copies share: parameter banks before Blackwell, shared windows.
    let mut grouped: HashMap<(u32, u32), OutSecId> = HashMap::default();
    // Kernel names (their first copy) whose bank 2 holds a copy's own table.
    let mut own_table: HashSet<u32> = HashSet::default();
    // `-r`: (winner, role, type) → the slot of the first copy it replaced,
    // and the sections of the copies it replaced.
    let mut replaced_slot: HashMap<(u32, Role, u32), ReplacedSlot> = HashMap::default();
    for f in files {
        let fid = f.id.0 as usize;
        let kept = &live.section_kept[fid];
        let section_symbols: Vec<bool> = {
            let mut v = vec![false; f.cubin.sections.len()];
            for sym in &f.cubin.symbols {
                if sym.ty() == STT_SECTION {
                    if let Some(i) = sym.section() {
                        v[i as usize] = true;
                    }
                }
            }
            v
        };
        // Text sections first: owned sections link to them.
        let text_first = f
            .cubin
            .sections
            .iter()
            .filter(|s| s.flags & SHF_EXECINSTR != 0)
            .chain(
                f.cubin
                    .sections
                    .iter()
                    .filter(|s| s.flags & SHF_EXECINSTR == 0),
            );
        for s in text_first {
            let i = s.index as usize;
            if relocatable && !kept[i] {
                // `-r`: the first copy a later definition replaced keeps the
                // winner's sections its place (nvlink -r's order, which the
                // final link's bank-2 layout follows: difftest -r pipeline
                // 1200307, fixture `bank2_replaced_slot_r`).
                let text = if s.flags & SHF_EXECINSTR != 0 {
                    Some(s.index)
                } else {
                    f.owner[i]
                };
                if let Some(w) = text.and_then(|t| replacing_winner(files, db, live, f, t)) {
                    let at = plan.sections.len() as u32;
                    replaced_slot
                        .entry((w, role_of(s, true), s.sh_type))
                        .or_insert((at, Vec::new()))
                        .1
                        .push((f.id, s.index));
                }
            }
            if !kept[i] && s.sh_type == SHT_CUDA_CONSTANT0 {
                if let Some(text) = f.owner[i] {
                    let sym = f.func_sym[text as usize];
                    let r = super::symbols::SymRef {
                        file: f.id,
                        index: sym,
                    };
                    // Only a strong winner takes the bank along: of two weak
                    // kernels (a template kernel instantiated in two objects:
                    // Thrust, CUB) the first stays as it is (measured); nor
                    // does a copy that lost to a weak one when read (weak,
                    // weak, strong: the first weak copy's bank alone; weak,
                    // strong, weak and strong, weak, weak: both; measured at
                    // sm_80/90).
                    let strong = |w: &super::symbols::SymRef| {
                        files[w.file.0 as usize].cubin.symbols[w.index as usize].bind()
                            == STB_GLOBAL
                    };
                    let counts = !db.lost_to_weak(r);
                    if let Some(winner) = db.resolve(r).filter(|w| *w != r && strong(w) && counts) {
                        overridden_banks.push((f.id, s.index, winner));
                    }
                }
            }
            if s.sh_type == SHT_CUDA_CONSTANT2 && !relocatable && !kept[i] {
                // A weak copy's table: kept when the copy lost when read
                // (`place_bank2`).
                if let Some(text) = f.owner[i] {
                    let sym = f.func_sym[text as usize];
                    let r = super::symbols::SymRef {
                        file: f.id,
                        index: sym,
                    };
                    // Only when the copy it lost to is the final winner, i.e.
                    // the winner was read before it (weak, weak, strong: the
                    // second copy's table is dropped too, difftest 140114;
                    // weak, strong, weak: the third's is kept, 210122).
                    let winner_before = db.resolve(r).is_some_and(|w| w.file.0 < f.id.0);
                    if super::live::lost_to_earlier(db, f, sym) && winner_before {
                        let winner = db.resolve(r).and_then(|w| {
                            let wsec = files[w.file.0 as usize].cubin.symbols[w.index as usize]
                                .section()?;
                            live.func_of_text[w.file.0 as usize]
                                .get(wsec as usize)
                                .copied()
                                .flatten()
                        });
                        if let Some(w) = winner.filter(|&w| live.live[w as usize]) {
                            b2.losers.entry(w).or_default().push((f.id, s.index));
                        }
                    } else if let Some((w, replaced)) = replacing_winner(files, db, live, f, text)
                        .map(|w| (w, true))
                        .or_else(|| {
                            // A copy that lost when read to one a later input
                            // then replaced (weak, weak, strong): its table
                            // counts with its alignment only (difftest 330026:
                            // the second copy's 8-aligned table aligns the
                            // bank; no Blackwell overlay; fixture
                            // `bank2_lost_then_replaced`).
                            let later = db.resolve(r).is_some_and(|w| w.file.0 > f.id.0);
                            (super::live::lost_to_earlier(db, f, sym) && later)
                                .then(|| final_winner(files, db, live, r))
                                .flatten()
                                .filter(|&w| !live.funcs[w as usize].is_kernel)
                                .map(|w| (w, false))
                        })
                    {
                        let wf = &live.funcs[w as usize];
                        let winner_table = || {
                            function_table(&files[wf.key.file.0 as usize], wf.key.text).is_some()
                        };
                        if wf.is_kernel {
                            // A weak kernel's own table, replaced: its
                            // alignment goes to the winner's bank (measured:
                            // difftest 120014, fixture `bank2_replaced_align`).
                            b2.kernel_replaced
                                .entry(w)
                                .or_default()
                                .push((f.id, s.index));
                        } else if !replaced {
                            // (With a winner without a table, the alignment
                            // joins the replaced copy's empty block instead:
                            // difftest 430045, fixture
                            // `bank2_lost_then_replaced_untabled`.)
                            b2.align_only.entry(w).or_default().push((f.id, s.index));
                        } else if winner_table() {
                            // Replaced by a later input's copy with a table
                            // (`place_bank2`): a member of the winner's
                            // block, which takes the first replaced copy's
                            // place in the input order (measured: difftest
                            // 190010).
                            b2.replaced.entry(w).or_default().push((f.id, s.index));
                            if b2.reach.contains_key(&w) && !b2.slot.contains_key(&w) {
                                b2.slot.insert(w, (f.id, s.index));
                                b2.deferred.push((f.id, s.index, w));
                            }
                        } else if b2.reach.contains_key(&w) {
                            // The winner has no table: an empty block of its
                            // own, placed in input order like a table.
                            b2.deferred.push((f.id, s.index, w));
                            b2.empty.insert((f.id, s.index));
                        }
                    }
                }
                continue;
            }
            if s.sh_type == SHT_CUDA_SHARED && relocatable && !kept[i] {
                // `-r`: a losing weak kernel copy's own shared variables stay
                // (nvlink -r keeps them), attached to the winner's text, so
                // that the final link puts them in the winner's window as a
                // direct link does (`shared.rs`; difftest -r pipeline, seed
                // 260046). Placed once every text is (the winner may come
                // later).
                if let Some(w) = relocatable_loser_kernel(db, f, i) {
                    loser_windows.push((f.id, s.index, w));
                }
                continue;
            }
            if s.sh_type == SHT_CUDA_CONSTANT2 && relocatable && !kept[i] {
                // `-r`: a weak copy's table, kept (as nvlink -r keeps it)
                // when the copy lost when read to the final winner read
                // before it, as a table of the winner (`sh_info` its text):
                // the final link keeps it, as a direct link keeps the
                // losing copy's table (difftest -r pipeline, seed 240000).
                // On Blackwell the table of a copy a later definition replaced
                // lies over the winner's, as in a final link (below).
                let replaced = f.owner[i].and_then(|t| replacing_winner(files, db, live, f, t));
                if arch.is_blackwell_or_later() && replaced.is_some() {
                    replaced_tables.push((f.id, s.index));
                }
                if let Some(t) = relocatable_loser_table_owner(files, db, f, i, &text_out) {
                    let _ = add_loser_section(&mut plan, f, s, section_symbols[i], t);
                    // On Blackwell its bytes are zeros but for the entries
                    // whose target the winner's tables share, as in a final
                    // link (`place_bank2`; measured with nvlink -r, fixtures
                    // `bank2_weak_copies_r`, `bank2_relink_order` at sm_120).
                    if arch.is_blackwell_or_later() {
                        let bytes = relocatable_loser_table_bytes(files, db, f, i)
                            .unwrap_or_else(|| vec![0; s.size as usize]);
                        plan.overlaid.insert((f.id, s.index), bytes);
                    }
                }
                continue;
            }
            if !kept[i] || is_rebuilt(s) {
                continue;
            }
            if plan.shared.module_sections.contains(&(f.id.0, s.index)) {
                continue; // module-scope .shared: placed in each kernel's window
            }
            let owner = f.owner[i];
            let owner_func = owner.and_then(|t| live.func_of_text[fid][t as usize]);
            if s.sh_type == SHT_CUDA_CONSTANT2 && !relocatable {
                if let Some(fi) = owner_func {
                    let kernel = live.funcs[fi as usize].is_kernel;
                    // A `-r` output's read-time loser's table: placed as the
                    // direct link places the losing copy's (`place_bank2`):
                    // appended to a kernel's bank (difftest -r pipeline
                    // 860012; fixture `bank2_kernel_loser_table_r`), a bank
                    // of its own for a function without a table
                    // (`bank2_orphan_table_r`); with the function's own
                    // table, one block with it (below, `bank2_relink_order`).
                    let text = owner.unwrap_or(0);
                    if orphan_table(f, s.index) && (kernel || function_table(f, text).is_none()) {
                        if live.live[fi as usize] {
                            b2.losers.entry(fi).or_default().push((f.id, s.index));
                        }
                        continue;
                    }
                    if !kernel {
                        // (At a replaced copy's slot when there is one.)
                        if b2.reach.contains_key(&fi) && !b2.slot.contains_key(&fi) {
                            b2.deferred.push((f.id, s.index, fi));
                        }
                        // A function no kernel reaches: nvlink drops its bank
                        // (the driver loads bank 2 per kernel), its code's
                        // references resolved as if at offset 0 (`relocate`;
                        // measured, fixture `bank2_unreached`).
                        continue;
                    }
                }
            }
            let role = role_of(s, owner.is_some());
            let nobits = output_type(s.sh_type) == SHT_NOBITS;
            // `-r` keeps the CUDA section types (nvlink -r does).
            let out_type = if relocatable {
                s.sh_type
            } else {
                output_type(s.sh_type)
            };
            if let Some(text) = owner {
                let func = live.func_of_text[fid][text as usize];
                // A later copy of a local kernel name: its parameter bank
                // (before Blackwell) and shared window go into the first
                // copy's section of that name.
                let shares = match func.map(|fi| (fi, leader[fi as usize])) {
                    Some((fi, l)) if !relocatable && role != Role::Text => {
                        let bank = s.sh_type == SHT_CUDA_CONSTANT0
                            && l != fi
                            && !arch.is_blackwell_or_later();
                        let window = s.sh_type == SHT_CUDA_SHARED;
                        // A kernel's own jump table: one bank 2 per name
                        // too, at every arch (`place_bank2`; difftest 240011:
                        // the later copy's table, the first copy reaching a
                        // function with one) — unless a copy's own table is
                        // there already: then a bank of its own, holding only
                        // that table (measured: a third copy, fixture
                        // `bank2_static_twins_own`; two copies' constants at
                        // sm_75, docs/differences.md).
                        let table = s.sh_type == SHT_CUDA_CONSTANT2
                            && live.funcs[fi as usize].is_kernel
                            && !own_table.contains(&l);
                        (bank || window || table).then_some((l, s.sh_type))
                    }
                    _ => None,
                };
                if let Some(&id) = shares.as_ref().and_then(|k| grouped.get(k)) {
                    let o = plan.sec_mut(id);
                    let offset = if nobits { 0 } else { o.append(f.id, s) };
                    o.section_symbol |= section_symbols[i];
                    plan.placement[fid][i] = Some(Placement { out: id, offset });
                    continue;
                }
                // A kernel's `.nv.shared.<k>` holding no variable, in a window
                // with none and no dynamic part: no window (nvlink -r writes
                // one of 0x10 bytes for every kernel of an object with weak
                // shared variables, e.g. Thrust's; nvlink's final link of it
                // has none; measured at sm_90, fixture `relink_nvlink_r_shared`).
                let empty_window = s.sh_type == SHT_CUDA_SHARED
                    && !relocatable
                    && func
                        .and_then(|fi| plan.shared.kernels.get(&fi))
                        .is_some_and(|w| w.offsets.is_empty() && !w.dynamic);
                if empty_window {
                    continue;
                }
                let mut o = OutSection::new(s.name, out_type, role);
                let replaced = func.and_then(|fi| replaced_slot.get(&(fi, role, s.sh_type)));
                o.slot = replaced.map(|r| r.0);
                o.flags = per_function_flags(s, relocatable);
                o.align = s.addralign.max(1);
                o.entsize = s.entsize;
                o.func = shares.map(|(l, _)| l).or(func);
                o.section_symbol = section_symbols[i];
                o.size = s.size;
                if role == Role::Text {
                    o.link = LinkTo::SymTab;
                    o.info = InfoTo::FuncSym {
                        func: func.unwrap_or(0),
                        high: s.info & 0xff00_0000,
                    };
                } else {
                    let mut t = *text_out[fid].get(&text).expect("text sections come first");
                    // A shared window made for several copies names the
                    // first copy's text (measured: also when only a later
                    // copy has `.shared` variables of its own).
                    if let Some((l, _)) = shares {
                        let lf = &live.funcs[l as usize];
                        if let Some(&lt) = text_out[lf.key.file.0 as usize].get(&lf.key.text) {
                            t = lt;
                        }
                    }
                    o.info = InfoTo::Section(t);
                    o.link = if s.link != 0 {
                        LinkTo::SymTab
                    } else {
                        LinkTo::Zero
                    };
                }
                if s.sh_type == SHT_CUDA_SHARED {
                    if let Some(w) = func.and_then(|fi| plan.shared.kernels.get(&fi)) {
                        o.size = w.size(arch);
                        o.align = w.align;
                        // A section symbol by the rule of windows made from
                        // nothing (below), also where the input section has
                        // none (nvlink -r's windows: fixture
                        // `relink_nvlink_r_shared`).
                        o.section_symbol |= window_section_symbol(w, arch);
                    }
                }
                o.body = if nobits {
                    Body::NoBits
                } else {
                    Body::whole(f.id, s)
                };
                let id = plan.add(o);
                for &copy in replaced.map_or(&[][..], |r| &r.1) {
                    plan.replaced_by.insert(copy, id);
                }
                if role == Role::Text {
                    text_out[fid].insert(s.index, id);
                }
                if let Some(k) = shares {
                    grouped.insert(k, id);
                } else if let Some(fi) = func.filter(|_| s.sh_type == SHT_CUDA_CONSTANT0) {
                    grouped.insert((fi, SHT_CUDA_CONSTANT0), id);
                }
                if s.sh_type == SHT_CUDA_CONSTANT2 {
                    if let Some(fi) = func.filter(|&fi| live.funcs[fi as usize].is_kernel) {
                        b2.kernels.entry(leader[fi as usize]).or_insert(id);
                        own_table.insert(leader[fi as usize]);
                    }
                }
                plan.placement[fid][i] = Some(Placement { out: id, offset: 0 });
            } else if s.sh_type == SHT_CUDA_SHARED_RESERVED && s.size == 0 && !plan.relocatable {
                // An empty one (`nvcc -ewp` objects at sm_75-100, with a weak
                // `__nv_reservedSMEM_offset_0_alias` in it): nvlink 13.0.88
                // writes neither section nor symbol.
            } else if s.sh_type == SHT_CUDA_SHARED_RESERVED {
                place_reserved_shared(
                    &mut plan,
                    f,
                    s,
                    (out_type, role),
                    section_symbols[i],
                    &mut reserved_seen,
                );
            } else if nobits && s.name == ".nv.global" && only_losers(f, s.index, db) {
                // An input's bss holding nothing but definitions that lost
                // as their input was read takes no space (a definition that
                // held the name and was beaten by a later input's keeps its
                // hole; so does a strong one merged into `.common`
                // variables): `global_weak_loser_bss`, `global_weak_three_bss`.
                // Also in a `-r` output, as nvlink -r drops it, so that the
                // relink lays out bss as the direct link (difftest seed
                // 290043, fixture `global_weak_loser_bss_r`).
                continue;
            } else {
                let id = match plan.merged.get(s.name) {
                    Some(&id) => id,
                    None => {
                        let mut o = OutSection::new(s.name, out_type, role);
                        o.flags = per_function_flags(s, relocatable);
                        o.entsize = s.entsize;
                        o.body = if nobits {
                            Body::NoBits
                        } else {
                            Body::Pieces(Pieces::default())
                        };
                        let id = plan.add(o);
                        plan.merged.insert(s.name.to_string(), id);
                        id
                    }
                };
                let o = plan.sec_mut(id);
                o.section_symbol |= section_symbols[i];
                let offset = o.append(f.id, s);
                plan.placement[fid][i] = Some(Placement { out: id, offset });
            }
        }
    }
    // `-r`, Blackwell: a replaced copy's table lies over the winner's from
    // offset 0 (its bytes: the winner's where the entries' targets agree,
    // else zeros; its Mercury twin's relocations join the winner's twin), as
    // nvlink -r writes it and as a final link lays the two out
    // (`place_bank2`): the final link of the output then equals the direct
    // link (difftest -r pipeline 1200307, fixture `bank2_replaced_slot_r`).
    for (rf, rs) in replaced_tables {
        let Some(&out) = plan.replaced_by.get(&(rf, rs)) else {
            continue;
        };
        let Body::Pieces(p) = &plan.sec(out).body else {
            continue;
        };
        let Some(w) = p.iter().next().map(|w| (w.file, w.section)) else {
            continue;
        };
        let (wfile, rfile) = (&files[w.0 .0 as usize], &files[rf.0 as usize]);
        let wsec = &wfile.cubin.sections[w.1 as usize];
        let len = rfile.cubin.sections[rs as usize].size.min(wsec.size) as usize;
        let mut bytes = loser_table_bytes(wfile, wsec, rfile, rs).unwrap_or_default();
        bytes.resize(len, 0);
        plan.overlaid.entry((rf, rs)).or_insert(bytes);
        if let Body::Pieces(p) = &mut plan.sec_mut(out).body {
            p.push(Piece {
                file: rf,
                section: rs,
                offset: 0,
            });
        }
        plan.placement[rf.0 as usize][rs as usize] = Some(Placement { out, offset: 0 });
    }
    // One `.nv.shared.<k>` per winning text: the copies' own sections in
    // input order (nvlink -r: 0x2c + 0x1c = 0x48; relocatable shared symbols
    // hold their alignment, not an offset, so only the size and alignment
    // matter; fixture `shared_weak_entry_r`: two sections of one name made
    // nvdisasm hang).
    let mut windows: HashMap<OutSecId, Vec<(FileId, u32)>> = HashMap::default();
    // Winning text → its `.nv.shared.<k>` (built once, only when needed).
    let mut window_of: HashMap<OutSecId, OutSecId> = HashMap::default();
    if !loser_windows.is_empty() {
        for (i, o) in plan.sections.iter().enumerate() {
            if let (SHT_CUDA_SHARED, InfoTo::Section(t)) = (o.sh_type, &o.info) {
                window_of.entry(*t).or_insert(OutSecId(i as u32));
            }
        }
    }
    for (fid, sec, w) in loser_windows {
        let f = &files[fid.0 as usize];
        let s = &f.cubin.sections[sec as usize];
        let wfile = &files[w.file.0 as usize];
        let wtext = wfile.cubin.symbols[w.index as usize].section();
        let Some(&t) = wtext.and_then(|t| text_out[w.file.0 as usize].get(&t)) else {
            continue;
        };
        let Some(&ws) = window_of.get(&t) else {
            let section_symbol = f
                .cubin
                .symbols
                .iter()
                .any(|y| y.ty() == STT_SECTION && y.section() == Some(sec));
            let id = add_loser_section(&mut plan, f, s, section_symbol, t);
            windows.insert(id, vec![(fid, sec)]);
            window_of.insert(t, id);
            continue;
        };
        let parts = windows.entry(ws).or_insert_with(|| {
            // The winner's own section first in the list (sorted below).
            wtext
                .and_then(|wt| {
                    wfile.cubin.sections.iter().find(|x| {
                        x.sh_type == SHT_CUDA_SHARED && wfile.owner[x.index as usize] == Some(wt)
                    })
                })
                .map(|x| vec![(w.file, x.index)])
                .unwrap_or_default()
        });
        parts.push((fid, sec));
    }
    for (ws, mut parts) in windows {
        parts.sort_unstable();
        let (mut end, mut align) = (0u64, 1u64);
        for &(fid, sec) in &parts {
            let x = &files[fid.0 as usize].cubin.sections[sec as usize];
            let a = x.addralign.max(1);
            let offset = align_up(end, a);
            plan.placement[fid.0 as usize][sec as usize] = Some(Placement { out: ws, offset });
            end = offset + x.size;
            align = align.max(a);
        }
        let o = plan.sec_mut(ws);
        o.size = end;
        o.align = o.align.max(align);
    }
    place_bank2(files, live, &mut plan, &text_out, b2, &leader);
    // nvlink appends the parameter bank of a weak kernel overridden by a
    // strong one to the winner's bank of the same name (0x218 + 0x218 on
    // sm_90); not when the winner is weak too (fixture `cu_weak_kernels`),
    // and never on sm_100+ (measured at sm_100/103/120, both input orders:
    // the winner's 0x388 bytes only; fixture `weak_entry`).
    if arch.is_blackwell_or_later() {
        overridden_banks.clear();
    }
    for (fid, sec, winner) in overridden_banks {
        let wf = &files[winner.file.0 as usize];
        let wsym = &wf.cubin.symbols[winner.index as usize];
        let Some(wtext) = wsym.section() else {
            continue;
        };
        let Some(wbank) = wf
            .cubin
            .sections
            .iter()
            .find(|b| b.sh_type == SHT_CUDA_CONSTANT0 && b.info_section() == Some(wtext))
        else {
            continue;
        };
        let Some(p) = plan.placement[winner.file.0 as usize][wbank.index as usize] else {
            continue;
        };
        let input = &files[fid.0 as usize].cubin.sections[sec as usize];
        let o = plan.sec_mut(p.out);
        let offset = align_up(o.size, input.addralign.max(1));
        o.size = offset + input.size;
        if let Body::Pieces(pieces) = &mut o.body {
            pieces.push(Piece {
                file: fid,
                section: sec,
                offset,
            });
        }
        plan.placement[fid.0 as usize][sec as usize] = Some(Placement { out: p.out, offset });
    }
    // `.common` variables: allocated after the bss contributions of
    // `.nv.global`, in reverse order of their first `.common` declaration
    // (input, then symbol index; an earlier `extern` mention does not count:
    // fixture `common_order_extern`), as nvlink does, each at its first
    // declaration's alignment with the largest size declared.
    let mut commons: Vec<(super::GlobalId, super::symbols::Common, (u32, u32))> = db
        .globals
        .values()
        .enumerate()
        .filter_map(|(i, g)| {
            let first = g.def.map_or((0, 0), |d| (d.file.0, d.index));
            g.common.map(|c| (super::GlobalId(i as u32), c, first))
        })
        .collect();
    commons.sort_by_key(|c| c.2);
    // `-r`: they stay `.common` (`symtab.rs`), to merge in the final link
    // with the declarations and definitions of later objects, as a direct
    // link merges them (nvlink -r allocates them: its output then clashes
    // with a later object's larger `.common` or initialized definition).
    if !commons.is_empty() && !plan.relocatable {
        let id = match plan.merged.get(".nv.global") {
            Some(&id) => id,
            None => {
                let mut o = OutSection::new(".nv.global", SHT_NOBITS, Role::NoBits);
                o.flags = SHF_WRITE | SHF_ALLOC;
                o.body = Body::NoBits;
                let id = plan.add(o);
                plan.merged.insert(".nv.global".to_string(), id);
                id
            }
        };
        for (gid, c, _) in commons.iter().rev() {
            let o = plan.sec_mut(id);
            o.section_symbol = true;
            o.align = o.align.max(c.align);
            let offset = align_up(o.size, c.align);
            o.size = offset + c.size;
            plan.common.insert(*gid, Placement { out: id, offset });
        }
    }
    // Kernels whose window holds only module-scope or dynamic shared memory
    // get a `.nv.shared.<k>` section of their own.
    let mut ks: Vec<u32> = plan.shared.kernels.keys().copied().collect();
    ks.sort_unstable();
    for ki in ks {
        let func = &live.funcs[ki as usize];
        let fid = func.key.file.0 as usize;
        let f = &files[fid];
        let has_own = f.cubin.sections.iter().any(|s| {
            s.sh_type == SHT_CUDA_SHARED && f.owner[s.index as usize] == Some(func.key.text)
        });
        let w = &plan.shared.kernels[&ki];
        any_dynamic_shared |= w.dynamic;
        // One section per kernel name: the first copy's, which a later
        // copy's own `.nv.shared.<k>` may have made already.
        let l = leader.get(ki as usize).copied().unwrap_or(ki);
        if has_own || l != ki || grouped.contains_key(&(ki, SHT_CUDA_SHARED)) {
            continue;
        }
        let (size, align) = (w.size(arch), w.align);
        let Some(text) = plan.placement[fid][func.key.text as usize] else {
            continue;
        };
        let name = format!(".nv.shared.{}", f.cubin.symbols[func.sym as usize].name);
        let mut o = OutSection::new(name, SHT_NOBITS, Role::NoBits);
        o.flags = SHF_WRITE | SHF_ALLOC | SHF_INFO_LINK;
        o.align = align;
        o.size = size;
        o.info = InfoTo::Section(text.out);
        o.func = Some(ki);
        o.section_symbol = window_section_symbol(w, arch);
        o.body = Body::NoBits;
        plan.add(o);
    }
    // nvlink writes the section whenever an input refers to a dynamic
    // (`extern .shared`, undefined) window, even from code it drops (found by
    // difftest; fixture dyn_shared_dead_user).
    // Only a window nothing defines counts (a sized `.extern .shared` of a
    // variable defined elsewhere does not: fixture shared_visible_extern).
    any_dynamic_shared |= files.iter().any(|f| {
        f.cubin.symbols.iter().enumerate().any(|(i, s)| {
            s.is_undefined()
                && s.other & STO_CUDA_SHARED != 0
                && db
                    .resolve(super::symbols::SymRef {
                        file: f.id,
                        index: i as u32,
                    })
                    .is_none()
        })
    });
    // A relocatable input (culink's or nvlink's `-r` output) may bring its
    // own `.nv_debug.shared` (the `externsharedinstance` definitions), with
    // a leftover undefined window symbol: one section, not two.
    let have_debug_shared = plan.sections.iter().any(|s| s.name == ".nv_debug.shared");
    // `-g` also writes it for the link's module-scope region (the variables
    // several kernels or none use: `debug_dynamic_shared`).
    let debug_region = device_debug && !relocatable && !plan.shared.region.is_empty();
    // A module-scope region aligned past the dynamic window's 16: nvlink
    // 13.0.88 then writes no section for the windows (measured at sm_75, 90,
    // 100 with a 32- and a 128-aligned `static __shared__` array of a device
    // function two kernels call, the `extern __shared__` user either kernel or
    // a third; 16 or less, or one kernel's alone: written; real-code sweep),
    // and with -g aligns it as the region.
    let region_align = if plan.shared.region.is_empty() {
        1
    } else {
        plan.shared.region_align
    };
    let over_aligned = region_align > super::shared::DYNAMIC_SHARED_ALIGN;
    let dynamic_only = any_dynamic_shared && !(over_aligned && !device_debug && !relocatable);
    if (dynamic_only || debug_region) && !have_debug_shared {
        let mut o = OutSection::new(".nv_debug.shared", SHT_NOBITS, Role::NoBits);
        o.flags = SHF_WRITE | SHF_ALLOC;
        // Created for the region alone: the region's alignment (measured:
        // 1, 4, 8 with a char, float, double the largest).
        o.align = if any_dynamic_shared {
            super::shared::DYNAMIC_SHARED_ALIGN.max(region_align)
        } else {
            plan.shared.region_align
        };
        o.body = Body::NoBits;
        // Blackwell images size it like a kernel's reserved shared window.
        if arch.is_blackwell_or_later() {
            o.size = super::shared::SM90_SHARED_RESERVE;
        }
        plan.add(o);
    }
    plan.kernel_leader = leader;
    plan
}

/// Whether every symbol defined in section `sec` of `f` is a definition that
/// lost as its input was read (nvlink allocates a variable as its input is
/// read: a definition that already lost then is given no space, whichever
/// definition wins in the end; difftest seeds 30048, 40094).
fn only_losers(f: &InputFile<'_>, sec: u32, db: &super::symbols::SymbolDb<'_>) -> bool {
    let mut any = false;
    for (i, sym) in f.cubin.symbols.iter().enumerate() {
        if sym.section() != Some(sec) || sym.ty() == STT_SECTION {
            continue;
        }
        if !super::live::lost_to_earlier(db, f, i as u32) {
            return false;
        }
        any = true;
    }
    any
}

/// The (entry offset, Mercury target) pairs of bank 2 `bank`'s jump tables
/// in `f`: the relocations of its Mercury twin
/// (`.nv.merc.nv.constant.optimizer.<fn>`, one `R_MERCURY_PROG_REL32` per
/// entry against the function, the addend the target's offset in its code).
fn table_targets<'a>(
    f: &'a InputFile<'_>,
    bank: &Section<'_>,
) -> impl Iterator<Item = (u64, i64)> + 'a {
    let twin = f.cubin.sections.iter().find(|t| {
        t.sh_type == SHT_CUDA_MERC_CONST_OPT
            && super::mercury::twin_bank(f, t).is_some_and(|b| b.index == bank.index)
    });
    let rels = twin.and_then(|t| {
        f.cubin
            .sections
            .iter()
            .find(|r| r.sh_type == SHT_CUDA_MERC_RELA && r.info == t.index)
    });
    rels.into_iter()
        .flat_map(|r| super::mercury::rela_entries(r.data).map(|(off, _, _, addend)| (off, addend)))
}

/// Blackwell: the bytes nvlink writes for the jump tables of a weak copy
/// that lost when read (bank 2 `lsec` of `lfile`), appended to the winner's
/// (`place_bank2`): an entry whose target (its Mercury twin's addend) is also
/// a target of the winning copy's own tables (bank `wbank` of `winner`) gets
/// the winner's SASS offset of it, every other entry is 0 (measured at
/// sm_100 and sm_120: a losing copy whose first switch is the winner's,
/// fixture `bank2_loser_shared_targets`; difftest 270028). `None` when no
/// entry maps (all zeros).
fn loser_table_bytes(
    winner: &InputFile<'_>,
    wbank: &Section<'_>,
    lfile: &InputFile<'_>,
    lsec: u32,
) -> Option<Vec<u8>> {
    let sass: HashMap<i64, [u8; 4]> = table_targets(winner, wbank)
        .filter_map(|(off, target)| {
            let at = usize::try_from(off).ok()?;
            let v: [u8; 4] = wbank.data.get(at..at.checked_add(4)?)?.try_into().ok()?;
            Some((target, v))
        })
        .collect();
    if sass.is_empty() {
        return None;
    }
    let lbank = lfile.cubin.sections.get(lsec as usize)?;
    let mut bytes = vec![0u8; lbank.data.len()];
    let mut any = false;
    for (off, target) in table_targets(lfile, lbank) {
        let (Some(v), Ok(at)) = (sass.get(&target), usize::try_from(off)) else {
            continue;
        };
        if let Some(dst) = at.checked_add(4).and_then(|end| bytes.get_mut(at..end)) {
            dst.copy_from_slice(v);
            any = true;
        }
    }
    any.then_some(bytes)
}
