//! `--preserve-relocs`: the relocations the linker resolved, kept for tools
//! (called from the relocate phase when [`crate::LinkOptions::preserve_relocs`]
//! is set).
//!
//! As nvlink 13.0 does: one `.nv.resolvedrela.<sec>` section per section that
//! had a resolved relocation (`sh_type` 0x70000003 `SHT_CUDA_RESOLVED_RELA`,
//! RELA entries of 24 bytes, `SHF_INFO_LINK`, `sh_link` the symbol table,
//! `sh_info` the target section), each entry with the input relocation's type
//! and addend at its output offset. Constant-bank and static shared-memory
//! references name their variable (so shared-memory symbols such as
//! `$__sh1__13` stay in the symbol table, valued at their window offset plus
//! the sm_90 reserve, `st_other` 1, as nvlink writes them); `.debug_frame` CIE
//! pointers name the `.debug_frame` section symbol with the contribution's
//! offset added to the addend. Shared-memory symbols go where
//! [`SharedHomes`] says. Dynamic (`extern .shared`) references (but those of
//! code no kernel reaches on sm_90, when the name has a symbol) and the
//! cleared ranges of dead functions' FDEs are not listed, nor are a device
//! function's references to its jump table (bank 2, which lies in every
//! reaching kernel's bank at offsets of their own), whose `<fn>.const_opt.*`
//! symbols go as in a link without the option (a kernel's own table keeps
//! both; fixture `preserve_relocs_tables`). On sm_90+ nvlink
//! also sizes `.nv_debug.shared` to the 0x400-byte reserve and gives it a
//! section symbol; culink does the same.

use super::relocate::{KeptReloc, SymTarget};
use super::sections::{Body, InfoTo, LinkTo, OutSection, Plan, Role};
use super::symbols::SymRef;
use super::symtab::SymTable;
use super::OutSecId;
use crate::elf::*;
use std::collections::{BTreeMap, HashMap};

/// What `--preserve-relocs` collects during the link.
#[derive(Debug, Default)]
pub(crate) struct Preserved {
    /// The resolved relocations, at their output offsets.
    pub entries: Vec<KeptReloc>,
    /// Shared-memory variables named by an entry: their output `st_value`.
    pub shared_values: HashMap<SymRef, u64>,
}

/// Records one resolved relocation (no-op without `--preserve-relocs`).
pub(crate) fn record(
    plan: &mut Plan,
    target: OutSecId,
    offset: u64,
    rtype: u32,
    sym: SymTarget,
    addend: i64,
) {
    if let Some(p) = plan.resolved.as_mut() {
        p.entries.push(KeptReloc {
            target,
            rela: true,
            offset,
            rtype,
            sym,
            addend,
        });
    }
}

/// Records a shared-memory variable's window offset (it keeps its symbol).
pub(crate) fn record_shared(plan: &mut Plan, var: SymRef, window_offset: u64) {
    let reserve = super::shared::reserve(plan.arch);
    if let Some(p) = plan.resolved.as_mut() {
        p.shared_values
            .entry(var)
            .or_insert(window_offset.saturating_add(reserve));
    }
}

/// The output `st_value` of a shared-memory symbol kept for an entry.
pub(crate) fn shared_value(plan: &Plan, var: SymRef) -> Option<u64> {
    plan.resolved.as_ref()?.shared_values.get(&var).copied()
}

/// Creates the `.nv.resolvedrela.*` sections (after the relocation sections).
pub(crate) fn create_sections(plan: &mut Plan) {
    let Some(p) = plan.resolved.as_ref() else {
        return;
    };
    let mut targets: Vec<u32> = Vec::new();
    for e in &p.entries {
        if !targets.contains(&e.target.0) {
            targets.push(e.target.0);
        }
    }
    for t in targets {
        let tname = plan.sections[t as usize].name.clone();
        let mut o = OutSection::new(
            format!(".nv.resolvedrela{tname}"),
            SHT_CUDA_RESOLVED_RELA,
            Role::Reloc,
        );
        o.flags = SHF_INFO_LINK;
        o.align = 8;
        o.entsize = 24;
        o.link = LinkTo::SymTab;
        o.info = InfoTo::Section(OutSecId(t));
        o.body = Body::Bytes(Vec::new());
        plan.add(o);
    }
    // The region of module-scope variables several kernels use, whose
    // symbols go there (`SharedHomes`): `.nv_debug.shared` grows as for `-g`.
    super::sections::debug_dynamic_shared(plan);
}

/// Where `--preserve-relocs` puts the symbols of module-scope shared
/// variables (measured at sm_75/90, difftest seeds 230014, 230017, 230026
/// and hand-written links; fixture `preserve_relocs_shared`): a variable one
/// kernel uses in that kernel's `.nv.shared.<k>` at its window offset, one
/// several kernels use (the link's module-scope region) in `.nv_debug.shared`
/// at its region offset, both after the sm_90+ reserve and with `st_other`
/// 1; `.nv_debug.shared` then grows to hold the region, and on sm_90 (not
/// Blackwell) each `extern .shared` name gets a `GLOBAL` symbol there, valued
/// one below the reserve ([`dynamic_named`]).
///
/// A `-g` link puts them in the same places (with the input's `st_other`,
/// its `GLOBAL` variables too: measured at sm_75/90/100/120, fixture
/// `cu_debug_fn_static_shared`; `sections::debug_dynamic_shared`).
pub(crate) struct SharedHomes {
    /// Output `.nv_debug.shared`, when there is one and the link preserves.
    pub debug_shared: Option<OutSecId>,
    /// Kernel → its output `.nv.shared.<k>`.
    windows: HashMap<u32, OutSecId>,
    active: bool,
}

impl SharedHomes {
    pub(crate) fn new(plan: &Plan, relocatable: bool) -> Self {
        let active = (plan.resolved.is_some() || plan.device_debug) && !relocatable;
        let mut homes = SharedHomes {
            debug_shared: None,
            windows: HashMap::new(),
            active,
        };
        if !active {
            return homes;
        }
        for (i, s) in plan.sections.iter().enumerate() {
            if s.sh_type != SHT_NOBITS {
                continue;
            }
            if s.name == ".nv_debug.shared" {
                homes.debug_shared = Some(OutSecId(i as u32));
            } else if let Some(k) = s.func.filter(|_| s.name.starts_with(".nv.shared.")) {
                homes.windows.entry(k).or_insert(OutSecId(i as u32));
            }
        }
        homes
    }

    /// The output section and value of module-scope shared variable `var`
    /// (defined in input section `sec` of `f`).
    pub(crate) fn module_symbol(
        &self,
        plan: &Plan,
        f: &super::InputFile<'_>,
        sec: u32,
        var: SymRef,
    ) -> Option<(OutSecId, u64)> {
        if !self.active || !plan.shared.module_sections.contains(&(f.id.0, sec)) {
            return None;
        }
        let reserve = super::shared::reserve(plan.arch);
        if let Some(&(off, _)) = plan.shared.region.get(&var) {
            return Some((self.debug_shared?, off + reserve));
        }
        let k = *plan.shared.sole_user.get(&var)?;
        let off = *plan.shared.kernels.get(&k)?.offsets.get(&var)?;
        Some((*self.windows.get(&k)?, off + reserve))
    }

    /// The value of an `extern .shared` name's symbol, when it gets one.
    pub(crate) fn dynamic_value(&self, plan: &Plan) -> Option<u64> {
        (self.active && self.debug_shared.is_some() && dynamic_named(plan))
            .then(|| super::shared::reserve(plan.arch) - 1)
    }
}

/// Whether `--preserve-relocs` gives the `extern .shared` names a symbol
/// (sm_90 only: not at sm_75-89 nor on Blackwell, measured) — when the
/// link's module-scope region holds a variable.
pub(crate) fn dynamic_named(plan: &Plan) -> bool {
    plan.resolved.is_some()
        && plan.arch.is_sm90_or_later()
        && !plan.arch.is_blackwell_or_later()
        && !plan.shared.region.is_empty()
}

/// Serializes the entries with final symbol indices, ascending offsets.
pub(crate) fn finish(syms: &SymTable, plan: &mut Plan) {
    let Some(p) = plan.resolved.as_ref() else {
        return;
    };
    let mut by_target: BTreeMap<u32, Vec<(u64, u32, u32, i64)>> = BTreeMap::new();
    for k in &p.entries {
        let sym = match k.sym {
            SymTarget::Input(r) => syms.output_index(r),
            SymTarget::Section(s) => syms.section_symbol(s),
        };
        by_target
            .entry(k.target.0)
            .or_default()
            .push((k.offset, k.rtype, sym, k.addend));
    }
    for s in plan.sections.iter_mut() {
        if s.sh_type != SHT_CUDA_RESOLVED_RELA {
            continue;
        }
        let InfoTo::Section(t) = s.info else { continue };
        let mut entries = by_target.remove(&t.0).unwrap_or_default();
        let bytes = super::relocate::encode_entries(&mut entries, true);
        s.size = bytes.len() as u64;
        s.body = Body::Bytes(bytes);
    }
}
