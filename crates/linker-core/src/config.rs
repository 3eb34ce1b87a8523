//! Link options and results: the library's public face for toolchain drivers.
//!
//! A [`LinkOptions`] holds everything a link needs; [`crate::link()`] turns it into a
//! [`LinkOutput`] (the cubin bytes plus structured diagnostics) or a
//! [`LinkFailure`] (every error found, with the diagnostics that came before).
//! There is no global state: several links may run on several threads at once.

use crate::arch::SmArch;
use crate::error::Error;
use std::path::PathBuf;
use std::sync::Arc;

/// Where an input's bytes come from.
#[derive(Debug, Clone)]
pub enum InputSource {
    /// A file on disk, memory-mapped when read.
    File(PathBuf),
    /// Bytes already in memory (e.g. from a JIT), with a name for diagnostics.
    Bytes {
        /// The name diagnostics use for this input.
        name: String,
        /// The input's contents.
        data: Arc<[u8]>,
    },
}

impl InputSource {
    /// The name used in diagnostics: the path as given, or the in-memory name.
    pub fn display_name(&self) -> String {
        match self {
            InputSource::File(p) => p.display().to_string(),
            InputSource::Bytes { name, .. } => name.clone(),
        }
    }
}

/// Everything that controls one link.
#[derive(Debug, Clone, Default)]
pub struct LinkOptions {
    /// The target architecture (`-arch`). Required.
    pub arch: Option<SmArch>,
    /// The inputs, in command-line order.
    pub inputs: Vec<InputSource>,
    /// Print phase timings and statistics (`-v`).
    pub verbose: bool,
    /// Suppress warnings (`-w`).
    pub no_warnings: bool,
    /// Treat warnings as errors (`-Werror`).
    pub warnings_as_errors: bool,
    /// `-kernels-used`: when set, only kernels whose name contains one of
    /// these strings are kept (with what they reach); other kernels are dead.
    pub kernels_used: Option<Vec<String>>,
    /// `-variables-used`: nvlink 13.0 semantics, measured: variables are never
    /// removed whatever the list says, but when the option is given without
    /// [`LinkOptions::kernels_used`] every kernel counts as unused (and is
    /// removed with what only it reaches). With `kernels_used` it has no effect.
    pub variables_used: Option<Vec<String>>,
    /// The argument string recorded in culink's own `.note.nv.tkinfo` entry
    /// (nvlink records its normalised options there, e.g. `-arch sm_90 `).
    /// `None` records an empty string.
    pub recorded_args: Option<String>,
    /// Directories searched for [`LinkOptions::libraries`] (`-L DIR`), in order;
    /// the directories of the `LIBRARY_PATH` environment variable come after them.
    pub library_paths: Vec<PathBuf>,
    /// Libraries (`-l NAME` finds `libNAME.a`), in order. They are loaded after
    /// every entry of [`LinkOptions::inputs`], wherever they were given (as nvlink
    /// does). `cudadevrt` is special: it is loaded only when undefined symbols
    /// remain after everything else, and then last.
    pub libraries: Vec<Library>,
    /// Lazy archives (`--lazy-archives`, culink only): load an archive member only
    /// when it defines a symbol that is still undefined (ld style, to a fixpoint).
    /// `false` (nvlink's behaviour): every member of every archive is loaded.
    pub lazy_archives: bool,
    /// Indices into [`LinkOptions::inputs`] of archives loaded whole even when
    /// [`LinkOptions::lazy_archives`] is set (`--whole-archive` ... `--no-whole-archive`).
    pub whole_archive_inputs: Vec<usize>,
    /// The ptxas that compiles PTX inputs (`--ptxas PATH`); `None`: `ptxas` on `PATH`.
    pub ptxas: Option<PathBuf>,
    /// `-dlto` / `-lto`: the LTO IR of `nvcc -dlto` objects is optimized
    /// together by libnvJitLink into PTX, which ptxas compiles (the whole
    /// program when nothing else is linked, as nvlink does); without it an
    /// object whose only code for the target is LTO IR is an error.
    pub link_time_opt: bool,
    /// The libnvJitLink to load for [`LinkOptions::link_time_opt`]
    /// (`--nvjitlink PATH`); `None`: next to [`LinkOptions::nvvm_path`], else
    /// the system loader's `libnvJitLink.so.13`.
    pub nvjitlink: Option<PathBuf>,
    /// nvlink's `-nvvmpath` (`<cuda>/nvvm`): libnvJitLink is looked for in
    /// `<cuda>/lib64` and `<cuda>/lib`.
    pub nvvm_path: Option<PathBuf>,
    /// Options for the ptxas that compiles PTX inputs, as nvlink passes them
    /// to its built-in one: the `-Xptxas` options, then `-maxrregcount=N`,
    /// `-device-stack-protector=B`, `-split-compile=N` (the CLI fills it).
    /// A fatbinary's PTX is compiled with the options nvcc recorded in its
    /// entry (`-lineinfo`, `-G`'s) first, and `-g` when
    /// [`LinkOptions::device_debug`] is set (without `-suppress-debug-info`).
    pub ptxas_options: Vec<String>,
    /// A library of [`LinkOptions::libraries`] that is not found is only
    /// reported under `-v` (nvlink's behaviour; culink invoked as `nvlink` by
    /// nvcc, which also passes host libraries such as `-lrt`). `false`: a warning.
    pub quiet_missing_libraries: bool,
    /// `-r`: a relocatable link. The output is an `ET_REL` object that can be
    /// linked again (no program headers, CUDA section and symbol types kept, no
    /// dead-code removal, relocations kept for the final link); see `docs/cli.md`.
    pub relocatable: bool,
    /// `--preserve-relocs`: also list every relocation the linker resolved in
    /// `.nv.resolvedrela.<section>` sections (`SHT_CUDA_RESOLVED_RELA`).
    pub preserve_relocs: bool,
    /// `-g` (the device link of `nvcc -G` builds): nothing is dead-stripped,
    /// so every function keeps its code and debug information (nvlink 13.0.88
    /// does the same; without `-g` it strips as usual, DWARF included).
    pub device_debug: bool,
    /// `-suppress-stack-size-warning`: no warning when a kernel's stack size
    /// cannot be determined statically (recursion, calls through pointers).
    pub suppress_stack_size_warning: bool,
    /// `-suppress-arch-warning`: no warning for an input that has no code for
    /// the target (`SM Arch ('sm_90') not found in 'x.o'`).
    pub suppress_arch_warning: bool,
    /// `-ignore-host-info`: no host-reference pruning; kernels no host object
    /// references are kept (nvlink removes them when every input carries host
    /// information, see `docs/nvcc.md`).
    pub ignore_host_info: bool,
    /// `-suppress-debug-info` (with `-g`): as nvlink 13.0.88, the output keeps
    /// its debug information; only kernels host-reference pruning would
    /// remove lose their `EIATTR_MIN_STACK_SIZE` (their code stays, as in
    /// every `-g` link).
    pub suppress_debug_info: bool,
    /// `-keep-system-libraries`: libcudadevrt (`-lcudadevrt`) is linked even
    /// when no undefined symbol needs it (nvlink then keeps its code too).
    pub keep_system_libraries: bool,
    /// Reports to produce alongside the cubin (see [`LinkReports`]).
    pub reports: ReportOptions,
}

/// Which reports a link produces (none by default); they come back in
/// [`LinkOutput::reports`]. The CLI prints or writes them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportOptions {
    /// `--dump-callgraph`: the call graph as nvlink prints it.
    pub callgraph: bool,
    /// `--dump-callgraph-dot FILE`: the call graph in Graphviz DOT.
    pub callgraph_dot: bool,
    /// `--print-map` / `-Map=FILE`: the link map.
    pub map: bool,
    /// `--why-live SYMBOL` (repeatable): why each named function was kept.
    pub why_live: Vec<String>,
}

/// The reports asked for in [`LinkOptions::reports`], as text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LinkReports {
    /// The call graph in nvlink's `--dump-callgraph` format.
    pub callgraph: Option<String>,
    /// The call graph in Graphviz DOT.
    pub callgraph_dot: Option<String>,
    /// The link map: output sections with their input contributions, and
    /// every symbol's final place.
    pub map: Option<String>,
    /// One explanation per `--why-live` name.
    pub why_live: Option<String>,
    /// Milliseconds spent in each phase, in pipeline order (always filled).
    pub phase_times: Vec<(String, f64)>,
    /// The register-link ids of the loaded modules, in load order (always
    /// filled; see [`register_link_source`]): a host object's
    /// `__nv_module_id`; for a cubin, fatbinary or PTX file its absolute path
    /// (working directory joined with the path as given), for an in-memory
    /// input its name, every byte that is not an ASCII letter or digit turned
    /// into `_`.
    pub registered_modules: Vec<String>,
}

/// A library named with `-l`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Library {
    /// The name: `-l foo` is `foo`, found as `libfoo.a`.
    pub name: String,
    /// Load it whole even with [`LinkOptions::lazy_archives`] (`--whole-archive`).
    pub whole_archive: bool,
}

impl Library {
    /// A library loaded the default way.
    pub fn new(name: impl Into<String>) -> Self {
        Library {
            name: name.into(),
            whole_archive: false,
        }
    }
}

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Extra information (`-v`).
    Info,
    /// Something suspicious that does not stop the link.
    Warning,
    /// The link cannot produce output.
    Error,
}

/// One message of a link, with its structured context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// How serious it is.
    pub severity: Severity,
    /// The message with its file/section/symbol/offset context.
    pub error: Error,
}

/// A successful link.
#[derive(Debug, Clone)]
pub struct LinkOutput {
    /// The linked `ET_EXEC` cubin.
    pub cubin: Vec<u8>,
    /// Warnings and information produced on the way.
    pub diagnostics: Vec<Diagnostic>,
    /// The reports asked for in [`LinkOptions::reports`], and phase times.
    pub reports: LinkReports,
}

/// Where [`crate::link_to`] writes the cubin.
///
/// The linker calls [`OutputSink::begin`] once with the final size, then asks for
/// the output window by window in increasing, non-overlapping file ranges
/// ([`OutputSink::window`]) and writes every byte of each window (the previous
/// contents do not matter); after a window is complete it calls
/// [`OutputSink::release`] with the same range, which a sink may use to drop the
/// finished pages from memory (e.g. `madvise(MADV_DONTNEED)` on a shared file
/// mapping). Nothing is called after a failure.
pub trait OutputSink {
    /// Prepares room for an output of exactly `size` bytes.
    fn begin(&mut self, size: usize) -> std::io::Result<()>;
    /// The bytes `range` of the output (within the size given to `begin`).
    fn window(&mut self, range: std::ops::Range<usize>) -> &mut [u8];
    /// The bytes `range` (a range previously given to `window`) are final.
    fn release(&mut self, range: std::ops::Range<usize>) {
        let _ = range;
    }
}

/// The simplest [`OutputSink`]: the cubin in memory.
impl OutputSink for Vec<u8> {
    fn begin(&mut self, size: usize) -> std::io::Result<()> {
        self.clear();
        // Fallible: a corrupt input can claim an absurd output size.
        self.try_reserve_exact(size)
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::OutOfMemory))?;
        self.resize(size, 0);
        Ok(())
    }
    fn window(&mut self, range: std::ops::Range<usize>) -> &mut [u8] {
        &mut self[range]
    }
}

/// A failed link: all errors found (a link reports every symbol error at once).
#[derive(Debug, Clone)]
pub struct LinkFailure {
    /// Errors, warnings and information produced before the link stopped.
    pub diagnostics: Vec<Diagnostic>,
    /// The register-link ids of the loaded modules when the link got far enough
    /// to know them (every input read and merged; e.g. a link failing on an
    /// undefined reference). `None` when it stopped earlier (unreadable input,
    /// multiple definitions), where nvlink writes no register-link file either.
    pub registered_modules: Option<Vec<String>>,
}

impl LinkFailure {
    /// The error diagnostics only.
    pub fn errors(&self) -> impl Iterator<Item = &Error> {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| &d.error)
    }
}

impl From<Error> for LinkFailure {
    fn from(error: Error) -> Self {
        LinkFailure {
            diagnostics: vec![Diagnostic {
                severity: Severity::Error,
                error,
            }],
            registered_modules: None,
        }
    }
}

/// The C source nvlink writes for `--register-link-binaries=F` and
/// `crt/link.stub` includes: `#define NUM_PRELINKED_OBJECTS n`, then one
/// `DEFINE_REGISTER_FUNC(<id>)` line per loaded module in load order
/// (command-line objects, archive members, libcudadevrt's module last).
/// Every line ends with a newline, as nvlink's.
pub fn register_link_source(ids: &[String]) -> String {
    let mut s = format!("#define NUM_PRELINKED_OBJECTS {}\n", ids.len());
    for id in ids {
        s.push_str("DEFINE_REGISTER_FUNC(");
        s.push_str(id);
        s.push_str(")\n");
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn register_link_source_format() {
        let ids = vec![
            "_37cfc621_4_a_cu_587774ad".to_string(),
            "_tmp_dl_a_cubin".into(),
        ];
        assert_eq!(
            super::register_link_source(&ids),
            "#define NUM_PRELINKED_OBJECTS 2\nDEFINE_REGISTER_FUNC(_37cfc621_4_a_cu_587774ad)\nDEFINE_REGISTER_FUNC(_tmp_dl_a_cubin)\n"
        );
        assert_eq!(
            super::register_link_source(&[]),
            "#define NUM_PRELINKED_OBJECTS 0\n"
        );
    }
}
