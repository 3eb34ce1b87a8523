//! The link pipeline, one phase per module.
//!
//! ```text
//! load      read (mmap) every input and -l library, expand fatbinaries, host
//!           objects, archives and PTX into device images, parse them in
//!           parallel, check the arch, select archive members
//! symbols   one global symbol table in command-line order: strong beats weak,
//!           duplicate and size-mismatch errors collected, then stop
//! live      functions reachable from kernels (by calls or by address); the rest is dead
//! sections  output sections: per-function sections copied, module sections
//!           concatenated with each contribution aligned; fixes every in-section offset
//! relocate  every input relocation: resolved by the linker (patch recorded) or
//!           kept for the driver (renumbered later); undefined references found here
//! symtab    output symbols: section symbols, locals, globals; input→output index maps
//! nvinfo    .nv.info / .nv.info.<fn> rewritten, REGCOUNT / barriers / stack over the
//!           call graph, .nv.callgraph and .nv.prototype rebuilt, notes, compat
//! layout    file offsets and program headers; sizes are final before this
//! write     one output buffer, disjoint slices, parallel copy + patch
//! ```
//! Each phase only reads the results of earlier ones and runs inside a
//! `tracing` span named after it (`-v` prints their timings).

pub(crate) mod blackwell;
mod capsule;
mod debugline;
mod frame_merge;
mod hints;
mod inmap;
mod layout;
mod listsort;
mod live;
mod load;
mod mercury;
mod nvinfo;
mod preserve;
mod refinalize;
mod relocate;
mod report;
mod rmode;
mod sections;
mod shared;
mod symbols;
mod symtab;
mod texslots;
mod write;

use crate::arch::SmArch;
use crate::config::{Diagnostic, LinkFailure, LinkOptions, LinkOutput, OutputSink, Severity};
use crate::error::{Error, ErrorKind};
use std::time::Instant;

/// Index of an input file, in command-line order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct FileId(pub u32);

/// Index of an output section in creation order (not the final section index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct OutSecId(pub u32);

/// Index of a global symbol in the symbol database (first-mention order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct GlobalId(pub u32);

/// Collects the diagnostics of one link.
#[derive(Debug, Default)]
pub(crate) struct Diags {
    list: Vec<Diagnostic>,
    /// How many of the errors are undefined references.
    undefined: usize,
    no_warnings: bool,
    werror: bool,
}

impl Diags {
    pub(crate) fn error(&mut self, error: Error) {
        self.list.push(Diagnostic {
            severity: Severity::Error,
            error,
        });
    }
    /// An undefined reference: an error after which the link still goes on
    /// to the checks nvlink makes later (see [`Diags::only_undefined`]).
    pub(crate) fn undefined(&mut self, error: Error) {
        self.undefined += 1;
        self.error(error);
    }
    /// Whether every error so far is an undefined reference. nvlink reports
    /// them and goes on to its call-tree checks, reporting those errors too
    /// (a kernel's register limit below a callee's count: difftest seed
    /// 460111), before it fails.
    pub(crate) fn only_undefined(&self) -> bool {
        self.undefined
            == self
                .list
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .count()
    }
    /// `e` as the link's failure, or, when errors were recorded (undefined
    /// references the link went on after), those: a later phase's own
    /// failure then follows from them.
    pub(crate) fn pending(&mut self, e: impl Into<LinkFailure>) -> LinkFailure {
        match self.checkpoint() {
            Err(f) => f,
            Ok(()) => e.into(),
        }
    }
    pub(crate) fn warning(&mut self, error: Error) {
        if self.werror {
            self.error(error);
        } else if !self.no_warnings {
            self.list.push(Diagnostic {
                severity: Severity::Warning,
                error,
            });
        }
    }
    pub(crate) fn info(&mut self, message: String) {
        self.list.push(Diagnostic {
            severity: Severity::Info,
            error: Error::new(ErrorKind::Usage, message),
        });
    }
    pub(crate) fn has_errors(&self) -> bool {
        self.list.iter().any(|d| d.severity == Severity::Error)
    }
    /// Stops the link if any error was recorded.
    pub(crate) fn checkpoint(&mut self) -> Result<(), LinkFailure> {
        if self.has_errors() {
            Err(LinkFailure {
                diagnostics: std::mem::take(&mut self.list),
                registered_modules: None,
            })
        } else {
            Ok(())
        }
    }
    fn fail(mut self, error: Error) -> LinkFailure {
        self.error(error);
        LinkFailure {
            diagnostics: self.list,
            registered_modules: None,
        }
    }
}

/// Stops the link with `error` after the diagnostics collected so far.
fn diags_fail(diags: &mut Diags, error: Error) -> LinkFailure {
    std::mem::take(diags).fail(error)
}

/// Links the inputs of `opts` into a final `ET_EXEC` cubin (or, with
/// [`LinkOptions::relocatable`], an `ET_REL` object to link again).
///
/// Returns the cubin bytes and the warnings of the link, or every error found.
/// Nothing is written to disk; the CLI does that atomically. Both results carry
/// the register-link ids of the loaded modules once they are known
/// ([`crate::LinkReports::registered_modules`], [`LinkFailure::registered_modules`]).
pub fn link(opts: &LinkOptions) -> Result<LinkOutput, LinkFailure> {
    let mut cubin = Vec::new();
    let (diagnostics, reports) = link_to(opts, &mut cubin)?;
    Ok(LinkOutput {
        cubin,
        diagnostics,
        reports,
    })
}

/// Links like [`link`], but writes the cubin into `sink` (for example a
/// memory-mapped output file) instead of returning a `Vec`, which saves a copy
/// of the whole output. Returns the diagnostics and the reports (see
/// [`LinkOutput`]) of a successful link.
///
/// `sink` is only used once every check has passed, but the write itself can
/// still fail (a relocation value that does not fit its field): on `Err` the
/// sink may hold a partial cubin, which the caller discards.
pub fn link_to(
    opts: &LinkOptions,
    sink: &mut dyn OutputSink,
) -> Result<(Vec<Diagnostic>, crate::config::LinkReports), LinkFailure> {
    let _span = tracing::info_span!("link").entered();
    let mut registered = None;
    link_inner(opts, sink, &mut registered).map_err(|mut f| {
        f.registered_modules = registered;
        f
    })
}

/// The register-link ids of a link for a *virtual* target
/// (`-arch=compute_XX`, what `nvcc -dlink` runs for a PTX-only build): as
/// nvlink 13.0.88, nothing is linked and no cubin is written (the driver
/// JIT-links the PTX); the modules of every input and every library
/// (archives and libcudadevrt whole, needed or not) are listed, in
/// command-line order, libraries last. Returns them and the warnings.
pub fn virtual_target_modules(
    opts: &LinkOptions,
) -> Result<(Vec<String>, Vec<Diagnostic>), LinkFailure> {
    let _span = tracing::info_span!("virtual_target").entered();
    let mut diags = Diags {
        no_warnings: opts.no_warnings,
        werror: opts.warnings_as_errors,
        ..Diags::default()
    };
    let Some(arch) = opts.arch else {
        return Err(diags.fail(Error::usage(
            "no target architecture given; use -arch=compute_XX",
        )));
    };
    if !arch.is_known_target() {
        return Err(diags.fail(unknown_target(arch)));
    }
    let blobs = load::read_all(opts, &mut diags).map_err(|e| diags_fail(&mut diags, e))?;
    let (images, modules, _) = load::expand_all(&blobs, opts, arch, true, &mut diags)?;
    load::check_virtual_target(&images, arch).map_err(|e| diags_fail(&mut diags, e))?;
    let ids = modules.into_iter().filter_map(|m| m.info.reg_id).collect();
    diags.checkpoint()?;
    Ok((ids, diags.list))
}

/// The error for a target nvlink 13.0.88 does not link for (the CLI
/// refuses it earlier, with nvlink's words).
fn unknown_target(arch: SmArch) -> Error {
    Error::usage(format!(
        "{arch} is not a target nvlink 13.0.88 links for (sm_75, sm_80, sm_86, sm_87, sm_88, sm_89, sm_90, sm_90a, and sm_100, sm_103, sm_110, sm_120, sm_121 with their a and f variants)"
    ))
}

fn link_inner(
    opts: &LinkOptions,
    sink: &mut dyn OutputSink,
    registered: &mut Option<Vec<String>>,
) -> Result<(Vec<Diagnostic>, crate::config::LinkReports), LinkFailure> {
    let mut diags = Diags {
        no_warnings: opts.no_warnings,
        werror: opts.warnings_as_errors,
        ..Diags::default()
    };
    let arch = match opts.arch {
        Some(a) => a,
        None => {
            return Err(diags.fail(Error::usage(
                "no target architecture given; use -arch=sm_XX",
            )))
        }
    };
    if !arch.is_known_target() {
        return Err(diags.fail(unknown_target(arch)));
    }
    if opts.inputs.is_empty() {
        return Err(diags.fail(Error::usage("no input files")));
    }
    if opts.preserve_relocs && arch.is_sm90_or_later() {
        // nvlink 13.0.88's words (its spelling too), before it reads the
        // inputs, with or without -r (measured at sm_89: none; sm_90, 90a,
        // 100, 100a, 103, 120, 121: this line). nvlink prints it under -w
        // too, as all its warnings (docs/differences.md).
        diags.warning(Error::usage(format!(
            "Option '--preserve-relocs' is not fully implemented for gpu archtecture '{arch}' and may not work as expected"
        )));
    }
    let mut timings: Vec<(&'static str, f64)> = Vec::new();
    // With -v: the process's resident memory at the end of each phase.
    let mut memory: Vec<Option<Resident>> = Vec::new();
    let mut t = Instant::now();
    let mut lap = |name: &'static str, timings: &mut Vec<(&'static str, f64)>| {
        let now = Instant::now();
        timings.push((name, (now - t).as_secs_f64() * 1e3));
        if opts.verbose {
            memory.push(Resident::now());
        }
        t = now;
    };

    // Phase 1: bytes of every input (mmap), then parse + validate in parallel.
    let blobs = load::read_all(opts, &mut diags).map_err(|e| diags_fail(&mut diags, e))?;
    let (mut images, modules, whole_program) =
        load::expand_all(&blobs, opts, arch, false, &mut diags)?;
    // -dlto with nothing to link but the optimized program (decided by
    // `load::lto_step`): nvlink's output is whole-program ptxas of its PTX
    // (measured: equivalent), not a link.
    if let Some(cubin) = whole_program {
        let _span = tracing::info_span!("lto_whole_program").entered();
        diags.info(format!(
            "-dlto: nothing else to link; the output is ptxas' whole-program compile of the optimized code ({} bytes)",
            cubin.len()
        ));
        if opts.reports != crate::config::ReportOptions::default() {
            diags.warning(Error::usage(
                "-dlto: the call graph, map and --why-live reports are not produced: nothing was linked (the output is ptxas' whole-program compile)",
            ));
        }
        // Nothing is parsed or selected: libcudadevrt is not linked (unless
        // kept whole). nvlink registers a whole program's modules in reverse
        // input order (measured with 2–4 modules; a partial link keeps input
        // order).
        let kept: Vec<bool> = images
            .iter()
            .map(|i| opts.keep_system_libraries || !matches!(i.group, load::Group::DevRt { .. }))
            .collect();
        let (register_ids, _) = load::loaded_modules(&modules, &images, &kept);
        let register_ids: Vec<String> = register_ids.into_iter().rev().collect();
        *registered = Some(register_ids.clone());
        diags.checkpoint()?;
        write::copy_to(&cubin, sink).map_err(LinkFailure::from)?;
        lap("lto", &mut timings);
        let reports = crate::config::LinkReports {
            phase_times: timings.iter().map(|(n, t)| (n.to_string(), *t)).collect(),
            registered_modules: register_ids,
            ..Default::default()
        };
        return Ok((diags.list, reports));
    }
    // Blackwell: what nvlink's finalizer changes in the kernels (exit
    // barriers of debug links, fences), written into the images before
    // anything reads them.
    refinalize::apply(&mut images, arch, opts.device_debug, opts.relocatable);
    let mappings = load::Mappings::new(&blobs, &images);
    let load::ParsedInputs {
        files,
        keep: kept,
        pages,
    } = load::parse_all(
        &images,
        arch,
        opts.verbose,
        opts.keep_system_libraries,
        &mappings,
        &mut diags,
    )?;
    let (register_ids, mut host_kernels) = load::loaded_modules(&modules, &images, &kept);
    // An explicit kernel list (`-kernels-used`, or `-variables-used`, which
    // leaves none) wins over the host objects' references: nvlink 13.0.88
    // keeps exactly the listed kernels, host-launched or not (real-code
    // sweep; nvcc_dlink test `nvlink_options_users_pass_match_nvlink`).
    if opts.ignore_host_info || opts.kernels_used.is_some() || opts.variables_used.is_some() {
        host_kernels = None;
    }
    if files.is_empty() {
        // As nvlink: inputs without code for the target were warned about
        // (`SM Arch ('sm_90') not found in 'x.o'`); the output is an empty
        // cubin and the register-link file lists every module.
        diags.info(format!(
            "no input has device code for {arch}; the output has no code"
        ));
    }
    if let Some(p) = &host_kernels {
        diags.info(format!(
            "every input carries host information: kernels no .nvHRK* pattern names are removed ({} patterns)",
            p.len()
        ));
    }
    if opts.relocatable {
        if let Some(e) = rmode::unsupported(&files, arch) {
            return Err(diags_fail(&mut diags, e));
        }
    }
    lap("load", &mut timings);
    // Phase 2: one symbol table; all duplicate/size errors reported at once.
    let db = symbols::resolve(&files, &mut diags)?;
    // From here on nvlink writes the register-link file even when the link fails.
    *registered = Some(register_ids.clone());
    lap("symbols", &mut timings);
    // Phase 3: liveness of functions (kernels and address-taken functions are roots;
    // host-reference pruning and -kernels-used restrict the kernels).
    // `-variables-used` without `-kernels-used` leaves no kernel used (nvlink).
    let kernels_used = opts
        .kernels_used
        .clone()
        .or_else(|| opts.variables_used.as_ref().map(|_| Vec::new()));
    let mut live = live::mark(
        &files,
        &db,
        kernels_used.as_deref(),
        host_kernels.as_deref(),
    );
    if opts.device_debug && opts.suppress_debug_info && host_kernels.is_some() {
        let host_only = live::mark(&files, &db, None, host_kernels.as_deref());
        live.host_unused = (0..live.funcs.len())
            .map(|i| live.funcs[i].is_kernel && !host_only.live[i])
            .collect();
    }
    if opts.relocatable || opts.preserve_relocs || opts.device_debug {
        // nvlink strips nothing in these modes (no host-reference pruning either:
        // `-r` of host objects equals `-r` of the same cubins).
        rmode::keep_all(&files, &mut live);
    }
    lap("live", &mut timings);
    // Phase 4: output sections and every contribution's offset inside them.
    let mut plan = sections::plan(
        &files,
        &db,
        &live,
        arch,
        opts.relocatable,
        opts.device_debug,
    );
    if opts.preserve_relocs {
        plan.resolved = Some(preserve::Preserved::default());
    }
    plan.device_debug = opts.device_debug;
    if opts.device_debug && !opts.relocatable {
        sections::debug_dynamic_shared(&mut plan);
    }
    if !opts.relocatable {
        sections::check_limits(&plan, &mut diags);
        shared::check_limits(&files, &live, &plan.shared, &mut diags);
    }
    let mut merc = mercury::Mercury::plan(&files, &mut plan).map_err(LinkFailure::from)?;
    lap("sections", &mut timings);
    // Phase 5: relocations: patches and kept entries; undefined references.
    if opts.relocatable {
        rmode::classify(&files, &db, &mut plan, &mut diags);
    } else {
        relocate::classify(&files, &db, &live, &mut plan, &mut diags);
    }
    if diags.has_errors() {
        hints::annotate(&mut diags, &files, &db, opts, arch);
    }
    // Undefined references alone do not stop the link yet: nvlink's later
    // call-tree checks report their errors too (phase 7), then it fails.
    if !diags.only_undefined() {
        diags.checkpoint()?;
    }
    blackwell::rebuild_debug_frame(&files, &db, &mut plan).map_err(|e| diags.pending(e))?;
    blackwell::zero_dead_register_ranges(&files, &mut plan);
    relocate::create_sections(&mut plan);
    merc.classify(&files, &db, &mut plan)
        .map_err(|e| diags.pending(e))?;
    preserve::create_sections(&mut plan);
    let meta =
        nvinfo::create_sections(&files, &db, &live, &mut plan).map_err(|e| diags.pending(e))?;
    merc.create_info_sections(&files, &live, &mut plan);
    lap("relocate", &mut timings);
    // Phase 6: the output symbol table (fixes the section order and every symbol index).
    let mut syms = symtab::build(&files, &db, &live, &mut plan);
    merc.build_symtab(&files, &db, &syms, &mut plan)
        .map_err(|e| diags.pending(e))?;
    debugline::rebuild(&files, &db, &mut plan, &|r| syms.output_index(r))
        .map_err(|e| diags.pending(e))?;
    // The kept relocations become section bytes now that symbol indices are
    // known, before `nvinfo` adds its records to the peak (-4 MB at N = 2000).
    relocate::finish(&syms, &mut plan);
    trim_heap();
    // Every output section exists now (later phases fill them in): the
    // vector's doubling slack would stay until the write (-6 MB at N = 2000).
    plan.sections.shrink_to_fit();
    lap("symtab", &mut timings);
    // Phase 7: .nv.info*, call graph, prototypes, notes, compat (need symbol indices).
    nvinfo::build(
        &files, &db, &live, &syms, &mut plan, &meta, arch, opts, &mut diags,
    )
    .map_err(|e| diags.pending(e))?;
    diags.checkpoint()?;
    lap("nvinfo", &mut timings);
    // Phase 8: serialize relocation sections, then fix the file layout.
    merc.build_info(&files, &db, &syms, &mut plan)
        .map_err(LinkFailure::from)?;
    merc.finish(&files, &syms, &mut plan);
    preserve::finish(&syms, &mut plan);
    let mut layout = layout::compute(&plan, arch, &files);
    if opts.relocatable {
        rmode::strip_program_headers(&mut layout, plan.sections.len());
    }
    lap("layout", &mut timings);
    // Reports that read the liveness, before it is freed.
    let r = &opts.reports;
    let callgraph = r
        .callgraph
        .then(|| report::callgraph_text(&files, &live, arch));
    let callgraph_dot = r
        .callgraph_dot
        .then(|| report::callgraph_dot(&files, &live));
    let why_live = (!r.why_live.is_empty()).then(|| report::why_live(&files, &live, &r.why_live));
    // Phase 9: write everything in parallel into the sink. Only the inputs, the
    // plan, the layout and the functions' symbol indices are needed now: the
    // symbol database, liveness and symbol table are freed first, so they do
    // not add to the peak resident memory while the output pages are written.
    let func_index = std::mem::take(&mut syms.func_index);
    drop((syms, meta, live));
    drop(db);
    trim_heap();
    // The inputs are read again only by the write: their pages go after each
    // output window that copied from them (dropping them all before the
    // write as well cost 14 ms at N = 2000 and lowered no peak).
    let mut release = load::Release::new(pages, write::copied_spans(&files, &plan, &layout));
    let mut after_window = |written: u64| release.release_written(written);
    let map = if r.map {
        // The map reads the finished image: write it in memory, then copy it.
        let mut image: Vec<u8> = Vec::new();
        write::write(
            &files,
            &plan,
            &layout,
            &func_index,
            &mut image,
            &mut after_window,
        )
        .map_err(LinkFailure::from)?;
        let map = report::map(&files, &plan, &image);
        write::copy_to(&image, sink).map_err(LinkFailure::from)?;
        Some(map)
    } else {
        write::write(&files, &plan, &layout, &func_index, sink, &mut after_window)
            .map_err(LinkFailure::from)?;
        None
    };
    drop(release);
    lap("write", &mut timings);
    if opts.verbose {
        let total: f64 = timings.iter().map(|t| t.1).sum();
        for (i, (name, ms)) in timings.iter().enumerate() {
            let mem = match memory.get(i).copied().flatten() {
                Some(m) => format!(
                    "   resident {:4} MB (heap {:4} MB, files {:4} MB), peak {:4} MB",
                    m.rss >> 10,
                    m.anon >> 10,
                    m.file >> 10,
                    m.peak >> 10
                ),
                None => String::new(),
            };
            diags.info(format!("phase {name:<9} {ms:9.3} ms{mem}"));
        }
        diags.info(format!(
            "{} inputs, {} output sections, {} bytes written in {total:.3} ms on {} threads",
            files.len(),
            plan.sections.len(),
            layout.file_size,
            rayon::current_num_threads()
        ));
    }
    let reports = crate::config::LinkReports {
        callgraph,
        callgraph_dot,
        map,
        why_live,
        phase_times: timings.iter().map(|(n, t)| (n.to_string(), *t)).collect(),
        registered_modules: register_ids,
    };
    // Freeing the plan (tens of thousands of output sections) and unmapping
    // every input took ~10 ms of a 2000-object link after the output was
    // complete: done on a background thread, so a caller about to exit (the
    // CLI) does not wait for it.
    drop((files, layout, func_index));
    drop((images, modules));
    let _ = std::thread::Builder::new()
        .name("culink-free".into())
        .spawn(move || drop((plan, blobs)));
    Ok((diags.list, reports))
}

pub(crate) use load::InputFile;

/// Returns the free pages inside the C heap to the system (glibc keeps freed
/// memory below its top for reuse): called once the symbol database, liveness
/// and symbol table are freed, before the write adds the output pages.
fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: glibc's malloc_trim only releases free heap pages.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// Resident memory of this process in KiB (Linux `/proc/self/status`:
/// `VmRSS`, `RssAnon`, `RssFile`, `VmHWM`), for `-v`'s phase lines.
#[derive(Debug, Clone, Copy)]
struct Resident {
    rss: u64,
    anon: u64,
    file: u64,
    peak: u64,
}

impl Resident {
    /// `None` where `/proc/self/status` is unavailable (not Linux).
    fn now() -> Option<Resident> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let field = |key: &str| -> Option<u64> {
            let line = status.lines().find(|l| l.starts_with(key))?;
            line[key.len()..]
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .ok()
        };
        Some(Resident {
            rss: field("VmRSS:")?,
            anon: field("RssAnon:")?,
            file: field("RssFile:")?,
            peak: field("VmHWM:")?,
        })
    }
}
