//! `culink`: the command-line CUDA device linker (nvlink compatible), plus the
//! `culink dump`, `culink diff` and `culink nvcc-shim` tools. Invoked as
//! `nvlink` (a shadow toolkit's `bin/nvlink`, see `shim`) it is the nvlink
//! command line only.
//!
//! Exit status: link: 0 success, 1 usage error or failed link; dump: 0, or 2 on
//! unreadable/malformed input; diff: 0 equivalent, 1 different, 2 unreadable
//! input; nvcc-shim: 0, or 1 on any problem.

mod args;
mod host_script;
mod output;
mod shim;

use args::{Command, LinkCommand};
use linker_core::{Cubin, Diagnostic, LinkFailure, LinkOptions, OutputSink, Severity};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    fixed_mmap_threshold();
    init_tracing();
    let argv0 = std::env::args_os().next();
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let as_nvlink = shim::invoked_as_nvlink(argv0.as_deref());
    if !as_nvlink && argv.first().map(String::as_str) == Some("nvcc-shim") {
        return nvcc_shim(&argv[1..]);
    }
    let parsed = if as_nvlink {
        args::parse_link_only(argv)
    } else {
        args::parse(argv)
    };
    let cmd = match parsed {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };
    match cmd {
        Command::Help => {
            print!("{}", args::USAGE);
            ExitCode::SUCCESS
        }
        Command::Version => {
            println!(
                "culink: CUDA device linker (nvlink compatible), version {}",
                env!("CARGO_PKG_VERSION")
            );
            ExitCode::SUCCESS
        }
        Command::Dump(file) => dump(&file),
        Command::Diff {
            ours,
            reference,
            phdrs,
        } => diff(&ours, &reference, phdrs),
        Command::Link(cmd) => link(*cmd),
        Command::HostLinkerScript {
            absolute,
            output,
            host_compiler,
        } => match host_script::write(absolute, &output, &host_compiler) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("culink: fatal: {e}");
                ExitCode::from(1)
            }
        },
    }
}

fn nvcc_shim(args: &[String]) -> ExitCode {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{}", shim::USAGE);
        return ExitCode::SUCCESS;
    }
    let result = shim::parse_args(args).and_then(|a| {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find culink itself: {e}"))?;
        shim::create(&a, &exe).map(|root| (a, root))
    });
    match result {
        Ok((a, root)) => {
            println!(
                "culink: shadow toolkit of {} in {}; use {}/bin/nvcc (nvlink is culink)",
                root.display(),
                a.into.display(),
                a.into.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("culink: fatal: nvcc-shim: {e}");
            ExitCode::from(1)
        }
    }
}

fn init_tracing() {
    use tracing_subscriber::fmt::format::FmtSpan;
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("CULINK_LOG").unwrap_or_else(|_| EnvFilter::new("off"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_span_events(FmtSpan::CLOSE)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .try_init();
}

/// Reads `path` (errors name the file).
fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("culink: error: {}: {e}", path.display()))
}

/// Parses `data` read from `path` (errors name the file).
fn parse<'d>(path: &Path, data: &'d [u8]) -> Result<Cubin<'d>, String> {
    Cubin::parse(data)
        .map_err(|e| format!("culink: error: {}", e.in_file(path.display().to_string())))
}

/// Writes `text` to stdout; a closed pipe is not an error.
fn print_out(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
}

fn dump(file: &Path) -> ExitCode {
    let _span = tracing::info_span!("dump", file = %file.display()).entered();
    let data = match read(file) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match parse(file, &data) {
        Ok(c) => {
            print_out(&linker_core::dump::dump_to_string(&c));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

fn diff(ours: &Path, reference: &Path, phdrs: bool) -> ExitCode {
    let _span = tracing::info_span!("diff").entered();
    let (a, b) = match (read(ours), read(reference)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let (ca, cb) = match (parse(ours, &a), parse(reference, &b)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let mut diffs = linker_core::diff::diff(&ca, &cb);
    if phdrs {
        diffs.extend(linker_core::diff::check_program_headers(&ca));
    }
    let mut text = String::new();
    for d in &diffs {
        text.push_str(&format!("{}: {d}\n", ours.display()));
    }
    if diffs.is_empty() {
        text.push_str(&format!(
            "{} and {} are equivalent\n",
            ours.display(),
            reference.display()
        ));
    } else {
        text.push_str(&format!("{} differences\n", diffs.len()));
    }
    print_out(&text);
    if diffs.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The one call into the library's link entry point (writing into `sink`),
/// on a pool of `threads` threads when given (`--threads`; else rayon's
/// default: `RAYON_NUM_THREADS` or one per CPU).
fn run_link(
    options: &LinkOptions,
    threads: Option<usize>,
    sink: &mut (dyn OutputSink + Send),
) -> Result<(Vec<Diagnostic>, linker_core::LinkReports), LinkFailure> {
    match threads {
        None => linker_core::link_to(options, sink),
        Some(n) => match rayon::ThreadPoolBuilder::new().num_threads(n).build() {
            Ok(pool) => pool.install(|| linker_core::link_to(options, sink)),
            Err(e) => Err(LinkFailure::from(linker_core::Error::new(
                linker_core::ErrorKind::Io,
                format!("cannot start {n} threads: {e}"),
            ))),
        },
    }
}

/// Whether `a` is the file `b` (`b_meta`: `b`'s metadata, read once for
/// all inputs: a `stat` per input and output pair cost 2000 calls at N = 2000).
fn same_file(a: &Path, b: &Path, b_meta: Option<&std::fs::Metadata>) -> bool {
    // The same inode: also catches hard links and bind mounts.
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Some(y)) = (std::fs::metadata(a), b_meta) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
    }
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

fn link(cmd: LinkCommand) -> ExitCode {
    let _span = tracing::info_span!("link").entered();
    if cmd.virtual_target {
        return virtual_target(&cmd);
    }
    let Some(output) = cmd.output.clone() else {
        eprintln!("culink: fatal: Must specify output file with -o option");
        return ExitCode::from(1);
    };
    if output.is_dir() {
        eprintln!(
            "culink: fatal: Output file '{}' is a directory",
            output.display()
        );
        return ExitCode::from(1);
    }
    let output_meta = std::fs::metadata(&output).ok();
    for input in &cmd.options.inputs {
        if let linker_core::InputSource::File(p) = input {
            // (An output that does not exist yet is no input.)
            if output_meta.is_some() && same_file(p, &output, output_meta.as_ref()) {
                eprintln!(
                    "culink: fatal: Output file '{}' is also an input file",
                    output.display()
                );
                return ExitCode::from(1);
            }
        }
    }
    tracing::debug!(driver = ?cmd.driver, "driver options");
    let target = if cmd.driver.report_arch {
        cmd.options
            .arch
            .map(|a| format!(" (target: {a})"))
            .unwrap_or_default()
    } else {
        String::new()
    };
    let print_diags = |diags: &[linker_core::Diagnostic]| {
        for d in diags {
            let sev = match d.severity {
                Severity::Info => "info",
                Severity::Warning => "warning",
                Severity::Error => "error",
            };
            if d.severity == Severity::Warning && cmd.options.no_warnings {
                continue;
            }
            if d.severity == Severity::Info && (!cmd.options.verbose || cmd.disable_infos) {
                continue;
            }
            eprintln!("culink: {sev}: {}{target}", d.error);
        }
    };
    // `--register-link-binaries=F`: written whenever the modules are known,
    // also for a failed link (as nvlink).
    let register = |ids: Option<&[String]>| -> bool {
        let (Some(path), Some(ids)) = (&cmd.driver.register_link_binaries, ids) else {
            return true;
        };
        let text = linker_core::register_link_source(ids);
        let mut file = output::AtomicOutput::new(path);
        match file.write_all(text.as_bytes()).and_then(|()| file.commit()) {
            Ok(()) => true,
            Err(e) => {
                eprintln!("culink: fatal: {}: {e}", path.display());
                false
            }
        }
    };
    let mut out = output::AtomicOutput::new(&output);
    match run_link(&cmd.options, cmd.threads, &mut out) {
        Ok((diagnostics, reports)) => {
            print_diags(&diagnostics);
            if !register(Some(&reports.registered_modules)) {
                return ExitCode::from(1);
            }
            if let Err(e) = out.commit() {
                eprintln!("culink: fatal: {}: {e}", output.display());
                return ExitCode::from(1);
            }
            if cmd.options.verbose {
                print_resource_usage(&output);
            }
            if let Err(e) = write_reports(&cmd, &reports, &output) {
                eprintln!("culink: fatal: {e}");
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(failure) => {
            if let Some(e) = out.create_error() {
                eprintln!("culink: fatal: {}: {e}", output.display());
                return ExitCode::from(1);
            }
            drop(out);
            print_diags(&failure.diagnostics);
            register(failure.registered_modules.as_deref());
            if failure.errors().next().is_none() {
                eprintln!("culink: fatal: link failed");
            }
            ExitCode::from(1)
        }
    }
}

/// The CSV header nvlink 13.0 writes for `-time` (it adds rows only for LTO links).
const TIME_HEADER: &str =
    "source file name , phase name , phase input files , phase output file , arch , tool, metric , unit";

/// Prints or writes the reports asked for on the command line.
fn write_reports(
    cmd: &LinkCommand,
    reports: &linker_core::LinkReports,
    output: &Path,
) -> Result<(), String> {
    let write = |path: &Path, text: &str| {
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
    };
    if let Some(cg) = &reports.callgraph {
        // nvlink prints it on stderr.
        eprint!("{cg}");
    }
    if let (Some(path), Some(dot)) = (&cmd.callgraph_dot_file, &reports.callgraph_dot) {
        write(path, dot)?;
    }
    if let Some(map) = &reports.map {
        if cmd.print_map {
            print_out(map);
        }
        if let Some(path) = &cmd.map_file {
            write(path, map)?;
        }
    }
    if let Some(why) = &reports.why_live {
        print_out(why);
    }
    if let Some(path) = &cmd.time_file {
        let inputs: Vec<String> = cmd
            .options
            .inputs
            .iter()
            .map(|i| i.display_name())
            .collect();
        let arch = cmd.options.arch.map(|a| a.to_string()).unwrap_or_default();
        let mut text = String::new();
        let stdout = path.as_os_str() == "-";
        let empty = stdout
            || std::fs::metadata(path)
                .map(|m| m.len() == 0)
                .unwrap_or(true);
        if empty {
            text.push_str(TIME_HEADER);
            text.push('\n');
        }
        for (phase, ms) in &reports.phase_times {
            text.push_str(&format!(
                " , {phase} , {} , {} , {arch} , culink , {ms:.3} , ms\n",
                inputs.join(" "),
                output.display()
            ));
        }
        if stdout {
            print_out(&text);
        } else {
            use std::io::Write as _;
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|mut f| f.write_all(text.as_bytes()))
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// Allocations of 64 KiB and more get their own mapping, given back to the
/// system when freed. glibc's default threshold rises with every such free
/// (up to 32 MiB), after which the link's large temporary vectors stay in
/// the heap as free but resident holes: -1.3 MB peak at N = 2000
/// (docs/performance.md). Process-wide, so it is the binary's choice, not
/// the library's.
fn fixed_mmap_threshold() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        const M_MMAP_THRESHOLD: std::ffi::c_int = -3;
        extern "C" {
            fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
        }
        // SAFETY: called first thing in main, before any other thread
        // exists; it only changes an allocation policy.
        unsafe {
            mallopt(M_MMAP_THRESHOLD, 64 << 10);
        }
    }
}

/// `-arch=compute_XX`: no device link (the driver JIT-links the PTX); as
/// nvlink, no cubin is written, even with `-o`, and the register-link file
/// lists every module of the inputs and libraries.
fn virtual_target(cmd: &LinkCommand) -> ExitCode {
    match linker_core::virtual_target_modules(&cmd.options) {
        Ok((ids, diagnostics)) => {
            for d in &diagnostics {
                if d.severity == Severity::Warning && !cmd.options.no_warnings {
                    eprintln!("culink: warning: {}", d.error);
                }
            }
            if let Some(path) = &cmd.driver.register_link_binaries {
                let text = linker_core::register_link_source(&ids);
                let mut file = output::AtomicOutput::new(path);
                if let Err(e) = file.write_all(text.as_bytes()).and_then(|()| file.commit()) {
                    eprintln!("culink: fatal: {}: {e}", path.display());
                    return ExitCode::from(1);
                }
            }
            ExitCode::SUCCESS
        }
        Err(failure) => {
            for d in &failure.diagnostics {
                let sev = match d.severity {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                    Severity::Info => continue,
                };
                eprintln!("culink: {sev}: {}", d.error);
            }
            ExitCode::from(1)
        }
    }
}

/// `-v`: the output's resource usage, as nvlink -v prints it (what `nvcc
/// --resource-usage` shows for an `-rdc` build), read back from the output.
fn print_resource_usage(output: &Path) {
    // Mapped, not read: the report touches only the headers and tables.
    let Ok(file) = std::fs::File::open(output) else {
        return;
    };
    // SAFETY: culink's own output, just written and not changed meanwhile.
    let Ok(bytes) = (unsafe { memmap2::Mmap::map(&file) }) else {
        return;
    };
    if let Ok(cubin) = Cubin::parse(&bytes) {
        for line in linker_core::resources::resource_usage(&cubin).lines() {
            eprintln!("culink: info: {line}");
        }
    }
}
