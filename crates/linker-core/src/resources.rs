//! The resource usage report of a linked cubin: what `nvlink -v` (and so
//! `nvcc --resource-usage` with `-rdc`) prints after a link, read back from
//! the output.
//!
//! Measured on nvlink 13.0.88 (sm_75 … sm_120; nvcc-built and hand-written
//! objects, see `docs/cli.md`):
//!
//! ```text
//! N bytes gmem[, M bytes cmem[3]]
//! Function properties for 'k':
//! used R registers, used B barriers, S stack, X bytes smem[, Y bytes cmem[0]], Z bytes lmem
//! ```
//!
//! * `gmem`: the sizes of `.nv.global` and `.nv.global.init`; `cmem[N]`:
//!   the size of each module-level constant bank `.nv.constantN` (module
//!   `__constant__` data: bank 3).
//! * One entry per kernel (entry function), in reverse symbol-table order.
//!   `R`: its `EIATTR_REGCOUNT`; `B`: the `EIATTR_NUM_BARRIERS` of its
//!   `.nv.info.<k>`; `S`: its `EIATTR_MIN_STACK_SIZE`, 0 when unknown
//!   (recursion: 0xffffffff); `X`: the size of `.nv.shared.<k>` (sm_90
//!   counts the driver's 0x400-byte reserve, sm_100 and later do not);
//!   `Y`: the size of its parameter bank `.nv.constant0.<k>`, followed by
//!   its other banks (`.nv.constant2.<k>`: sm_75–89 function constants) as
//!   `, n bytes cmem[2]`; `Z`: the size of `.nv.local.<k>` (0 in every
//!   measured link); then `, n textures, n surfaces, n samplers` for the
//!   header-index relocations of its parameter bank (each kind only when
//!   present).
//! * From sm_100 on, the `cmem` figures and the header slots are not printed.

use crate::cubin::eiattr::{EiAttr, Iter};
use crate::cubin::Cubin;
use crate::elf::{SHT_CUDA_INFO, STO_CUDA_ENTRY, STT_FUNC};
use crate::reloc::table::RelocType;

/// Bytes of the per-kernel shared-memory reserve sm_90+ windows include.
const SHARED_RESERVE: u64 = 0x400;

/// One kernel's resources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelResources {
    /// The kernel's symbol name.
    pub name: String,
    /// Registers per thread (`EIATTR_REGCOUNT`).
    pub registers: u32,
    /// Named barriers (`EIATTR_NUM_BARRIERS`).
    pub barriers: u32,
    /// Stack bytes of its call tree (`EIATTR_MIN_STACK_SIZE`; 0 when unknown).
    pub stack: u32,
    /// Static shared memory bytes, as nvlink counts them.
    pub shared: u64,
    /// Bytes of its constant banks (`.nv.constant<N>.<k>`), by bank number:
    /// the parameter bank 0 first (also when it is empty).
    pub constants: Vec<(u32, u64)>,
    /// Local memory bytes (`.nv.local.<k>`).
    pub local: u64,
    /// Texture, surface and sampler header slots of its parameter bank.
    pub textures: u32,
    /// See [`KernelResources::textures`].
    pub surfaces: u32,
    /// See [`KernelResources::textures`].
    pub samplers: u32,
}

/// A cubin's resource usage (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceUsage {
    /// Global memory bytes (`.nv.global` + `.nv.global.init`).
    pub global: u64,
    /// Module-level constant banks (`.nv.constant3`: `__constant__` data), by
    /// bank number.
    pub constants: Vec<(u32, u64)>,
    /// Whether the constant banks are reported (before sm_100).
    pub reports_constants: bool,
    /// The kernels, in nvlink's order (reverse symbol-table order).
    pub kernels: Vec<KernelResources>,
}

impl ResourceUsage {
    /// The report as nvlink prints it, one message per line (without the
    /// tool's prefix).
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(1 + 2 * self.kernels.len());
        let banks = |b: &[(u32, u64)]| -> String {
            if !self.reports_constants {
                return String::new();
            }
            b.iter()
                .map(|(n, size)| format!(", {size} bytes cmem[{n}]"))
                .collect()
        };
        out.push(format!(
            "{} bytes gmem{}",
            self.global,
            banks(&self.constants)
        ));
        for k in &self.kernels {
            out.push(format!("Function properties for '{}':", k.name));
            let mut line = format!(
                "used {} registers, used {} barriers, {} stack, {} bytes smem{}, {} bytes lmem",
                k.registers,
                k.barriers,
                k.stack,
                k.shared,
                banks(&k.constants),
                k.local
            );
            for (n, what) in [
                (k.textures, "textures"),
                (k.surfaces, "surfaces"),
                (k.samplers, "samplers"),
            ] {
                if n > 0 && self.reports_constants {
                    line.push_str(&format!(", {n} {what}"));
                }
            }
            out.push(line);
        }
        out
    }
}

/// Reads the resource usage of a linked cubin.
pub fn resource_usage(cubin: &Cubin<'_>) -> ResourceUsage {
    let blackwell = cubin.arch().is_blackwell_or_later();
    // A relocatable (`-r`) output's windows hold no reserve yet.
    let reserve = if blackwell && cubin.header.e_type == crate::elf::ET_EXEC {
        SHARED_RESERVE
    } else {
        0
    };
    let section_size = |name: &str| {
        cubin
            .sections
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.size)
    };
    let global =
        section_size(".nv.global").unwrap_or(0) + section_size(".nv.global.init").unwrap_or(0);
    // Module-level records: by symbol index.
    let mut regs = std::collections::HashMap::new();
    let mut stack = std::collections::HashMap::new();
    for s in cubin
        .sections
        .iter()
        .filter(|s| s.sh_type == SHT_CUDA_INFO && s.name == ".nv.info")
    {
        for rec in Iter::<EiAttr>::new(s.data).flatten() {
            if let Some((sym, v)) = rec.sym_value() {
                if rec.attr == EiAttr::EIATTR_REGCOUNT {
                    regs.insert(sym, v);
                } else if rec.attr == EiAttr::EIATTR_MIN_STACK_SIZE {
                    stack.insert(sym, if v == u32::MAX { 0 } else { v });
                }
            }
        }
    }
    // Per-function sections by the section index their sh_info names (one
    // pass: a scan per kernel was quadratic, seconds at 8,000 kernels).
    let mut by_info: std::collections::HashMap<u32, Vec<&crate::cubin::Section<'_>>> =
        std::collections::HashMap::new();
    for s in &cubin.sections {
        if s.info != 0 {
            by_info.entry(s.info).or_default().push(s);
        }
    }
    let mut kernels = Vec::new();
    for (i, sym) in cubin.symbols.iter().enumerate().rev() {
        if sym.ty() != STT_FUNC || sym.other & STO_CUDA_ENTRY == 0 {
            continue;
        }
        let Some(text) = sym.section() else { continue };
        // Per-kernel sections point at the kernel's text with sh_info.
        let own: &[&crate::cubin::Section<'_>] = by_info.get(&text).map_or(&[], Vec::as_slice);
        let of_kernel = |prefix: &str| own.iter().copied().find(|s| s.name.starts_with(prefix));
        let barriers = of_kernel(".nv.info.")
            .filter(|s| s.sh_type == SHT_CUDA_INFO)
            .and_then(|s| {
                Iter::<EiAttr>::new(s.data)
                    .flatten()
                    .find(|r| r.attr == EiAttr::EIATTR_NUM_BARRIERS)
                    .and_then(|r| r.int_value())
            })
            .unwrap_or(0);
        let shared = of_kernel(".nv.shared.").map_or(0, |s| s.size.saturating_sub(reserve));
        let mut constants: Vec<(u32, u64)> = own
            .iter()
            .filter_map(|s| Some((constant_bank(s.name)?, s.size)))
            .collect();
        constants.sort_unstable();
        if constants.first().is_none_or(|c| c.0 != 0) {
            constants.insert(0, (0, 0));
        }
        let (mut textures, mut surfaces, mut samplers) = (0, 0, 0);
        if let Some(bank) = of_kernel(".nv.constant0.") {
            let relocs = by_info.get(&bank.index).map_or(&[][..], Vec::as_slice);
            for rs in relocs.iter().filter(|s| s.is_reloc()) {
                for r in cubin.relocs(rs) {
                    match RelocType(r.rtype) {
                        RelocType::R_CUDA_TEX_HEADER_INDEX => textures += 1,
                        RelocType::R_CUDA_SURF_HEADER_INDEX => surfaces += 1,
                        RelocType::R_CUDA_SAMP_HEADER_INDEX => samplers += 1,
                        _ => {}
                    }
                }
            }
        }
        let index = i as u32;
        kernels.push(KernelResources {
            name: sym.name.to_string(),
            registers: regs.get(&index).copied().unwrap_or(0),
            barriers,
            stack: stack.get(&index).copied().unwrap_or(0),
            shared,
            constants,
            local: of_kernel(".nv.local.").map_or(0, |s| s.size),
            textures,
            surfaces,
            samplers,
        });
    }
    let mut constants: Vec<(u32, u64)> = cubin
        .sections
        .iter()
        .filter(|s| s.info == 0)
        .filter_map(|s| Some((constant_bank(s.name)?, s.size)))
        .collect();
    constants.sort_unstable();
    ResourceUsage {
        global,
        constants,
        reports_constants: !blackwell,
        kernels,
    }
}

/// The bank number of a constant-bank section (`.nv.constant<N>` or
/// `.nv.constant<N>.<function>`; linked cubins give them `SHT_PROGBITS`).
fn constant_bank(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(".nv.constant")?;
    let digits = rest.split('.').next()?;
    let n: u32 = digits.parse().ok()?;
    (n <= 17).then_some(n)
}
