//! The command line: `culink dump`, `culink diff` and the nvlink-compatible link
//! command line (including the options `nvcc -dlink` passes).
//!
//! Spellings accepted for every option with a value: `-arch=sm_90`, `-arch sm_90`,
//! `--arch=sm_90`, `--arch sm_90`; the one-letter options `-o`, `-L`, `-l` also
//! glued (`-oout.cubin`, `-L/dir`, `-lcudadevrt`). Response files (`@file`,
//! `--options-file F[,G...]`, `-optf F`) hold whitespace-separated arguments; single
//! and double quotes group words and a backslash escapes the next character.

use linker_core::{InputSource, Library, LinkOptions, SmArch};
use std::fmt;
use std::path::PathBuf;

/// A command-line problem: the message and whether nvlink treats it as fatal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError {
    /// `fatal` (nvlink's "fatal" class) or `error`.
    pub fatal: bool,
    /// The message, without the `culink: fatal: ` prefix.
    pub message: String,
}

impl UsageError {
    fn fatal(message: impl Into<String>) -> Self {
        UsageError {
            fatal: true,
            message: message.into(),
        }
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = if self.fatal { "fatal" } else { "error" };
        write!(f, "culink: {sev}: {}", self.message)
    }
}

/// The options `nvcc -dlink` passes to nvlink, as given (for the recorded
/// option string; `-L`/`-l` are also copied into `LinkOptions`; the
/// register-link file is later work).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DriverOptions {
    /// `-m64` (`-m 64`): 64-bit host (the only kind supported).
    pub machine: Option<String>,
    /// `--register-link-binaries=F`: where to write the `DEFINE_REGISTER_FUNC` file.
    pub register_link_binaries: Option<PathBuf>,
    /// `-L DIR` / `-LDIR` / `--library-path DIR`, in order.
    pub library_paths: Vec<String>,
    /// `-l NAME` / `-lNAME` / `--library NAME`, in order.
    pub libraries: Vec<String>,
    /// `-cpu-arch=X86_64`.
    pub cpu_arch: Option<String>,
    /// `--host-ccbin gcc`.
    pub host_ccbin: Option<String>,
    /// `-report-arch` (nvcc passes it when linking several archs): messages end
    /// with ` (target: sm_XX)` and the option is recorded in the tkinfo note.
    pub report_arch: bool,
    /// `--shared` (CMake's `-shared` through nvcc): no effect on the device link.
    pub shared: bool,
}

/// A parsed link command line.
#[derive(Debug, Clone, Default)]
pub struct LinkCommand {
    /// The options for `linker_core::link`.
    pub options: LinkOptions,
    /// `-o` / `--output-file`.
    pub output: Option<PathBuf>,
    /// The `nvcc -dlink` driver options.
    pub driver: DriverOptions,
    /// `--dump-callgraph-dot FILE`: where to write the DOT call graph.
    pub callgraph_dot_file: Option<PathBuf>,
    /// `-Map=FILE` / `--Map FILE`: where to write the link map.
    pub map_file: Option<PathBuf>,
    /// `--print-map`: print the link map on stdout.
    pub print_map: bool,
    /// `-time FILE` / `--time FILE`: append phase times as CSV (`-`: stdout).
    pub time_file: Option<PathBuf>,
    /// `-disable-infos`: no info messages, even with `-v`.
    pub disable_infos: bool,
    /// `-lto` / `-dlto`: link-time optimization (also in
    /// `options.link_time_opt`).
    pub link_time_opt: bool,
    /// `-arch=compute_XX`: a virtual target; only the register-link file is
    /// written (see `linker_core::virtual_target_modules`).
    pub virtual_target: bool,
    /// `--threads N` (culink only): link on N threads. The output does not
    /// depend on it, and it is not recorded in the tkinfo note.
    pub threads: Option<usize>,
}

/// What the user asked for.
#[derive(Debug, Clone)]
pub enum Command {
    /// `culink dump FILE`.
    Dump(PathBuf),
    /// `culink diff [--phdrs] OURS REF`.
    Diff {
        /// Our output.
        ours: PathBuf,
        /// The reference (nvlink's output).
        reference: PathBuf,
        /// Also check OURS's program headers against the layout rule.
        phdrs: bool,
    },
    /// A link.
    Link(Box<LinkCommand>),
    /// `-ghls=lcs-aug|lcs-abs -o FILE`: write a host linker script that keeps
    /// the fatbinary sections (nvlink's `--gen-host-linker-script`).
    HostLinkerScript {
        /// `lcs-abs`: the host linker's whole default script plus the
        /// sections; `lcs-aug`: the sections only (an augmenting script).
        absolute: bool,
        /// `-o`.
        output: PathBuf,
        /// `--host-ccbin` (default `gcc`): whose link options select the
        /// default script.
        host_compiler: String,
    },
    /// `--help`.
    Help,
    /// `--version`.
    Version,
}

/// The usage text printed by `--help`.
pub const USAGE: &str = "\
Usage:
  culink -arch=sm_XX [options] INPUT... -o OUTPUT   link device objects (nvlink compatible)
  culink dump FILE                                  print a readable dump of a cubin
  culink diff [--phdrs] OURS REFERENCE              semantic comparison of two cubins
                                                    (exit 0 equivalent, 1 different, 2 unreadable)
  culink nvcc-shim --cuda CUDA --into DIR           make DIR a shadow CUDA toolkit whose
                                                    nvcc device-links with culink
                                                    (invoked as nvlink, culink is nvlink)

Link options:
  -arch, --arch sm_XX          target architecture (required)
  -o, --output-file FILE       output cubin (required)
  -v, --verbose                print phase timings and statistics
  -w, --disable-warnings       suppress warnings
  -Werror                      treat warnings as errors
  --no-tool-args               record an empty option string in the output's tkinfo note
  @FILE, --options-file FILE   read more arguments from FILE
  -L, --library-path DIR       directory searched for -l libraries (then LIBRARY_PATH)
  -l, --library NAME           link libNAME.a (after all inputs; -lcudadevrt only when
                               undefined symbols remain)
  --lazy-archives              load archive members only when they define a needed
                               symbol (culink only; default: whole archives, as nvlink)
  --whole-archive, --no-whole-archive
                               load the archives that follow whole even with --lazy-archives
  --ptxas PATH                 ptxas that compiles PTX inputs (default: ptxas on PATH)
  --nvjitlink PATH             libnvJitLink for -dlto (default: next to -nvvmpath,
                               else libnvJitLink.so.13 from the loader's path)
  -r, --relocatable-link       write a relocatable (ET_REL) object to link again
  --preserve-relocs            list resolved relocations in .nv.resolvedrela.<sec>
  --dump-callgraph             print the call graph (nvlink's format) on stderr
  --dump-callgraph-dot FILE    write the call graph as Graphviz DOT
  --print-map, -Map=FILE       print / write the link map (sections, contributions, symbols)
  -kernels-used K,...          keep only the kernels whose names contain one of K (and
                               what they reach); wins over host-reference pruning
  -variables-used V,...        accepted as nvlink 13.0 (variables are kept; without
                               -kernels-used, no kernel counts as used)
  --why-live NAME              explain why function NAME is kept (repeatable)
  --threads N                  link on N threads (default: RAYON_NUM_THREADS or one
                               per CPU; the output is the same for any N)
  -time FILE                   append phase times as CSV to FILE ('-': stdout)
  --register-link-binaries=F   write the DEFINE_REGISTER_FUNC file crt/link.stub includes
  -report-arch                 messages end with (target: sm_XX)
  -m64, -cpu-arch=X, --host-ccbin C, --shared
                               accepted as nvcc -dlink passes them
  -suppress-stack-size-warning, -suppress-arch-warning
                               no warning for an unknowable stack size / an input
                               without code for the target
  -ignore-host-info            keep kernels no host object launches (no pruning)
  -keep-system-libraries       link libcudadevrt even when nothing needs it
  -disable-infos               no info messages (even with -v)
  -use-host-info, -extrawarn, -g -suppress-debug-info, -device-stack-protector=B
                               accepted as nvlink (no effect on the output)
  -dlto, -lto, -nvvmpath P    link-time optimization: the LTO IR of nvcc -dlto
                               objects optimized together by libnvJitLink (found
                               next to -nvvmpath's toolkit, or --nvjitlink PATH),
                               then compiled by ptxas
  -Xptxas O, -maxrregcount N, -split-compile N
                               for the ptxas that compiles PTX and LTO code
  -Xnvvm O, -emit-ptx, -Ofc L, -split-compile-extended N, -uidx F
                               nvlink's other LTO options: accepted
  -ghls=lcs-aug|lcs-abs -o F   write nvlink's host linker script (no inputs)
Inputs (judged by content): relocatable cubins, fatbinaries, host objects from
nvcc -dc, archives (also thin) of those, PTX, LTO IR (with -dlto).
  --version, --help
Environment: CULINK_LOG=<filter> enables tracing output (e.g. CULINK_LOG=debug).
";

/// Splits the contents of a response file into arguments.
pub fn split_response_file(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') | (None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
                in_word = true;
            }
            (Some(_), c) => cur.push(c),
            (None, '"') | (None, '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err("unterminated quote".into());
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

/// The largest response file read (a bound, so `@/dev/zero` fails instead of
/// exhausting memory).
pub const MAX_RESPONSE_FILE: u64 = 16 << 20;

/// Reads a response file of at most [`MAX_RESPONSE_FILE`] bytes as UTF-8.
fn read_response_file(path: &str) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_RESPONSE_FILE + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_RESPONSE_FILE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {MAX_RESPONSE_FILE} bytes"),
        ));
    }
    Ok(text)
}

/// Expands `@file`, `--options-file F` and `-optf F` (recursively, at most 16 deep).
pub fn expand_response_files(args: Vec<String>) -> Result<Vec<String>, UsageError> {
    fn go(args: Vec<String>, depth: usize, out: &mut Vec<String>) -> Result<(), UsageError> {
        let mut it = args.into_iter();
        while let Some(a) = it.next() {
            // `--options-file` takes a comma-separated list, as nvlink's
            // (`--options-file a.txt,b.txt`); `@file` one file.
            let files: Option<Vec<String>> = if let Some(f) = a.strip_prefix('@') {
                Some(vec![f.to_string()])
            } else if let Some(f) = ["--options-file", "-options-file", "-optf", "--optf"]
                .iter()
                .find_map(|p| a.strip_prefix(p).and_then(|r| r.strip_prefix('=')))
            {
                Some(f.split(',').map(String::from).collect())
            } else if ["--options-file", "-options-file", "-optf", "--optf"].contains(&a.as_str()) {
                let list = it.next().ok_or_else(|| {
                    UsageError::fatal(format!("Option '{a}' requires a file name"))
                })?;
                Some(list.split(',').map(String::from).collect())
            } else {
                None
            };
            let Some(files) = files else {
                out.push(a);
                continue;
            };
            for f in files {
                if depth >= 16 {
                    return Err(UsageError::fatal(format!(
                        "Options file '{f}' nested too deeply"
                    )));
                }
                let text = read_response_file(&f).map_err(|e| {
                    UsageError::fatal(format!("Could not open options file '{f}': {e}"))
                })?;
                let inner = split_response_file(&text)
                    .map_err(|e| UsageError::fatal(format!("Options file '{f}': {e}")))?;
                go(inner, depth + 1, out)?;
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    go(args, 0, &mut out)?;
    Ok(out)
}

/// Options that take a value: (canonical name, spellings without leading dashes).
const VALUE_OPTS: &[(&str, &[&str])] = &[
    ("arch", &["arch", "gpu-architecture"]),
    ("o", &["o", "output-file"]),
    ("L", &["L", "library-path"]),
    ("l", &["l", "library"]),
    ("m", &["m", "machine"]),
    ("register-link-binaries", &["register-link-binaries"]),
    ("cpu-arch", &["cpu-arch"]),
    ("host-ccbin", &["host-ccbin"]),
    ("kernels-used", &["kernels-used"]),
    ("variables-used", &["variables-used"]),
    ("ptxas", &["ptxas"]),
    ("nvjitlink", &["nvjitlink"]),
    ("dump-callgraph-dot", &["dump-callgraph-dot"]),
    ("Map", &["Map", "map"]),
    ("why-live", &["why-live"]),
    ("threads", &["threads"]),
    ("time", &["time"]),
    (
        "gen-host-linker-script",
        &["gen-host-linker-script", "ghls"],
    ),
    ("device-stack-protector", &["device-stack-protector"]),
    ("uidx-file", &["uidx-file", "uidx"]),
    ("Ofast-compile", &["Ofast-compile", "Ofc"]),
    // Options of nvlink's link-time optimization and of its built-in ptxas.
    ("Xnvvm", &["Xnvvm"]),
    ("Xptxas", &["Xptxas"]),
    ("maxrregcount", &["maxrregcount"]),
    ("nvvmpath", &["nvvmpath"]),
    ("split-compile", &["split-compile"]),
    ("split-compile-extended", &["split-compile-extended"]),
];

/// Flag options: (canonical name, spellings without leading dashes).
const FLAG_OPTS: &[(&str, &[&str])] = &[
    ("v", &["v", "verbose"]),
    ("w", &["w", "disable-warnings"]),
    ("Werror", &["Werror", "warning-as-error"]),
    ("version", &["version", "V"]),
    ("help", &["help", "h"]),
    ("m64", &["m64"]),
    ("no-tool-args", &["no-tool-args"]),
    ("lazy-archives", &["lazy-archives"]),
    ("whole-archive", &["whole-archive"]),
    ("no-whole-archive", &["no-whole-archive"]),
    ("report-arch", &["report-arch"]),
    ("shared", &["shared"]),
    ("g", &["g", "debug"]),
    ("r", &["r", "relocatable-link"]),
    ("preserve-relocs", &["preserve-relocs"]),
    (
        "dump-callgraph",
        &["dump-callgraph", "dump-callgraph-no-demangle"],
    ),
    ("print-map", &["print-map"]),
    (
        "suppress-stack-size-warning",
        &["suppress-stack-size-warning"],
    ),
    ("suppress-arch-warning", &["suppress-arch-warning"]),
    ("suppress-debug-info", &["suppress-debug-info"]),
    ("disable-infos", &["disable-infos"]),
    ("extra-warnings", &["extra-warnings", "extrawarn"]),
    ("ignore-host-info", &["ignore-host-info"]),
    ("use-host-info", &["use-host-info"]),
    ("keep-system-libraries", &["keep-system-libraries"]),
    ("lto", &["link-time-opt", "lto", "dlto"]),
    ("emit-ptx", &["emit-ptx"]),
];

/// Parses the arguments after the program name (response files not yet expanded).
pub fn parse(args: Vec<String>) -> Result<Command, UsageError> {
    match args.first().map(String::as_str) {
        Some("dump") => return parse_dump(&args[1..]),
        Some("diff") => return parse_diff(&args[1..]),
        _ => {}
    }
    let args = expand_response_files(args)?;
    parse_link(args)
}

/// Parses an nvlink command line (no `dump`/`diff` subcommands): culink
/// invoked as `nvlink`. As nvlink, a `-l` library that is not found is not
/// reported (nvcc passes host libraries such as `-lrt` to the device link too).
pub fn parse_link_only(args: Vec<String>) -> Result<Command, UsageError> {
    let args = expand_response_files(args)?;
    let mut cmd = parse_link(args)?;
    if let Command::Link(link) = &mut cmd {
        link.options.quiet_missing_libraries = true;
    }
    Ok(cmd)
}

fn parse_dump(args: &[String]) -> Result<Command, UsageError> {
    match args {
        [f] if !f.starts_with('-') || f == "-" => Ok(Command::Dump(PathBuf::from(f))),
        [h] if h == "--help" || h == "-h" => Ok(Command::Help),
        _ => Err(UsageError::fatal("usage: culink dump FILE")),
    }
}

fn parse_diff(args: &[String]) -> Result<Command, UsageError> {
    let mut phdrs = false;
    let mut files = Vec::new();
    for a in args {
        match a.as_str() {
            "--phdrs" | "-phdrs" => phdrs = true,
            "--help" | "-h" => return Ok(Command::Help),
            s if s.starts_with('-') && s.len() > 1 => {
                return Err(UsageError::fatal(format!("Unknown option '{s}' for diff")))
            }
            s => files.push(PathBuf::from(s)),
        }
    }
    match <[PathBuf; 2]>::try_from(files) {
        Ok([ours, reference]) => Ok(Command::Diff {
            ours,
            reference,
            phdrs,
        }),
        Err(_) => Err(UsageError::fatal(
            "usage: culink diff [--phdrs] OURS REFERENCE",
        )),
    }
}

fn lookup(
    table: &'static [(&'static str, &'static [&'static str])],
    name: &str,
) -> Option<&'static str> {
    table
        .iter()
        .find(|(_, spellings)| spellings.contains(&name))
        .map(|(c, _)| *c)
}

fn parse_link(args: Vec<String>) -> Result<Command, UsageError> {
    let mut cmd = LinkCommand::default();
    let mut arch_text: Option<String> = None;
    let mut no_tool_args = false;
    let mut whole_archive = false;
    let mut suppress_debug_info = false;
    let mut lto = false;
    let mut emit_ptx = false;
    let mut fast_compile = false;
    let mut nvvm_path = false;
    let mut host_script: Option<String> = None;
    // ptxas options for PTX inputs, assembled in nvlink's order below.
    let mut xptxas: Vec<String> = Vec::new();
    let (mut maxrregcount, mut stack_protector, mut split_compile) = (None, None, None);
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        if a == "-" || !a.starts_with('-') {
            if whole_archive {
                cmd.options
                    .whole_archive_inputs
                    .push(cmd.options.inputs.len());
            }
            cmd.options
                .inputs
                .push(InputSource::File(PathBuf::from(&a)));
            continue;
        }
        let body = a.strip_prefix("--").unwrap_or(&a[1..]);
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        if let Some(flag) = lookup(FLAG_OPTS, name) {
            if inline.is_some() {
                return Err(UsageError::fatal(format!("Option '{name}' takes no value")));
            }
            match flag {
                "v" => cmd.options.verbose = true,
                "w" => cmd.options.no_warnings = true,
                "Werror" => cmd.options.warnings_as_errors = true,
                "version" => return Ok(Command::Version),
                "help" => return Ok(Command::Help),
                "no-tool-args" => no_tool_args = true,
                "lazy-archives" => cmd.options.lazy_archives = true,
                "whole-archive" => whole_archive = true,
                "no-whole-archive" => whole_archive = false,
                "report-arch" => cmd.driver.report_arch = true,
                "shared" => cmd.driver.shared = true,
                "g" => cmd.options.device_debug = true,
                "r" => cmd.options.relocatable = true,
                "preserve-relocs" => cmd.options.preserve_relocs = true,
                "dump-callgraph" => cmd.options.reports.callgraph = true,
                "print-map" => {
                    cmd.print_map = true;
                    cmd.options.reports.map = true;
                }
                "suppress-stack-size-warning" => cmd.options.suppress_stack_size_warning = true,
                "suppress-arch-warning" => cmd.options.suppress_arch_warning = true,
                // nvlink 13.0.88 keeps the debug information anyway (measured
                // with -G objects); see `LinkOptions::suppress_debug_info`.
                "suppress-debug-info" => {
                    suppress_debug_info = true;
                    cmd.options.suppress_debug_info = true;
                }
                "disable-infos" => cmd.disable_infos = true,
                // nvlink prints no extra warning culink knows of.
                "extra-warnings" => {}
                // Host-reference pruning is the default already (docs/nvcc.md).
                "use-host-info" => {}
                "ignore-host-info" => cmd.options.ignore_host_info = true,
                "keep-system-libraries" => cmd.options.keep_system_libraries = true,
                "lto" => lto = true,
                "emit-ptx" => emit_ptx = true,
                _ => cmd.driver.machine = Some("64".into()),
            }
            continue;
        }
        let (canon, value) = if let Some(canon) = lookup(VALUE_OPTS, name) {
            let v = match inline {
                Some(v) => v,
                None => it
                    .next()
                    .ok_or_else(|| UsageError::fatal(format!("Option '{a}' requires a value")))?,
            };
            (canon, v)
        } else if let Some((canon, glued)) = glued_short(&a) {
            (canon, glued)
        } else {
            return Err(UsageError::fatal(format!(
                "Unknown option '{a}'; use option --help for more information"
            )));
        };
        // A repeated -arch / -o must agree with itself: last-wins would link for
        // an architecture or write a file the user did not mean.
        let previous = match canon {
            "arch" => arch_text.as_deref(),
            "o" => cmd.output.as_deref().and_then(|p| p.to_str()),
            _ => None,
        };
        if let Some(prev) = previous.filter(|p| *p != value) {
            return Err(UsageError::fatal(format!(
                "Option '-{canon}' given twice with different values ('{prev}' and '{value}')"
            )));
        }
        match canon {
            "arch" => {
                // nvlink checks the value as it reads the option (before
                // other usage errors, after those of earlier options).
                if !is_arch_value(&value) {
                    return Err(UsageError::fatal(format!(
                        "Value '{value}' is not defined for option 'arch'"
                    )));
                }
                arch_text = Some(value)
            }
            "o" => cmd.output = Some(PathBuf::from(value)),
            // Both take comma-separated lists, as nvlink's
            // (`--library-path <library-path>,...`, `--library <library>,...`).
            "L" => {
                for dir in value.split(',').filter(|d| !d.is_empty()) {
                    cmd.options.library_paths.push(PathBuf::from(dir));
                    cmd.driver.library_paths.push(dir.to_string());
                }
            }
            "l" => {
                for name in value.split(',').filter(|n| !n.is_empty()) {
                    cmd.options.libraries.push(Library {
                        name: name.to_string(),
                        whole_archive,
                    });
                    cmd.driver.libraries.push(name.to_string());
                }
            }
            "ptxas" => cmd.options.ptxas = Some(PathBuf::from(value)),
            "nvjitlink" => cmd.options.nvjitlink = Some(PathBuf::from(value)),
            "dump-callgraph-dot" => {
                cmd.options.reports.callgraph_dot = true;
                cmd.callgraph_dot_file = Some(PathBuf::from(value));
            }
            "Map" => {
                cmd.options.reports.map = true;
                cmd.map_file = Some(PathBuf::from(value));
            }
            "why-live" => cmd.options.reports.why_live.push(value),
            "threads" => match value.parse::<usize>() {
                Ok(n) if n > 0 => cmd.threads = Some(n),
                _ => {
                    return Err(UsageError::fatal(format!(
                        "Option '--threads' takes a positive number, not '{value}'"
                    )))
                }
            },
            "variables-used" => cmd
                .options
                .variables_used
                .get_or_insert_with(Vec::new)
                .extend(value.split(',').map(String::from)),
            "time" => cmd.time_file = Some(PathBuf::from(value)),
            "m" => {
                // A number (as nvlink reads numbers), and 64 the only one.
                if nvlink_int(&value)? != 64 {
                    return Err(UsageError::fatal(format!(
                        "Value '{value}' is not defined for option 'machine'"
                    )));
                }
                cmd.driver.machine = Some("64".into());
            }
            "register-link-binaries" => cmd.driver.register_link_binaries = Some(value.into()),
            "cpu-arch" => {
                if !CPU_ARCHS.contains(&value.as_str()) {
                    return Err(UsageError::fatal(format!(
                        "Value '{value}' is not defined for option 'cpu-arch'"
                    )));
                }
                cmd.driver.cpu_arch = Some(value)
            }
            "kernels-used" => cmd
                .options
                .kernels_used
                .get_or_insert_with(Vec::new)
                .extend(value.split(',').filter(|k| !k.is_empty()).map(String::from)),
            "gen-host-linker-script" => {
                if value != "lcs-aug" && value != "lcs-abs" {
                    return Err(UsageError::fatal(format!(
                        "Value '{value}' is not defined for option 'gen-host-linker-script' (lcs-aug or lcs-abs)"
                    )));
                }
                host_script = Some(value);
            }
            "device-stack-protector" => {
                // Stack protectors are compiler work: no effect on a link of
                // compiled code (nvlink: equivalent outputs either way), but
                // PTX inputs are compiled with it.
                if value != "true" && value != "false" {
                    return Err(UsageError::fatal(format!(
                        "'{value}': expected true or false"
                    )));
                }
                stack_protector = Some(format!("-device-stack-protector={value}"));
            }
            "uidx-file" => {
                // nvlink reads it for link-time optimization; culink links
                // compiled code only, but a file it cannot read is an error
                // as in nvlink.
                if std::fs::metadata(&value).map_or(true, |m| !m.is_file()) {
                    return Err(UsageError::fatal(format!("Could not read file '{value}'")));
                }
            }
            "Ofast-compile" => fast_compile = true,
            "nvvmpath" => {
                nvvm_path = true;
                cmd.options.nvvm_path = Some(PathBuf::from(value));
            }
            // For the ptxas that compiles PTX inputs (nvlink's built-in
            // one takes them; measured from its tkinfo notes).
            "Xptxas" => xptxas.extend(value.split(',').filter(|o| !o.is_empty()).map(String::from)),
            "maxrregcount" => maxrregcount = Some(format!("-maxrregcount={}", nvlink_int(&value)?)),
            "split-compile" => {
                split_compile = Some(format!("-split-compile={}", nvlink_int(&value)?))
            }
            "split-compile-extended" => {
                nvlink_int(&value)?;
            }
            "Xnvvm" => {}
            _ => cmd.driver.host_ccbin = Some(value),
        }
    }
    // -ghls writes a host linker script instead of linking.
    if let Some(kind) = host_script {
        if !cmd.options.inputs.is_empty() {
            return Err(UsageError::fatal(
                "Input files are not allowed with -ghls option; use --help for more information",
            ));
        }
        let output = cmd
            .output
            .ok_or_else(|| UsageError::fatal("Must specify output file with -o option"))?;
        return Ok(Command::HostLinkerScript {
            absolute: kind == "lcs-abs",
            output,
            host_compiler: cmd.driver.host_ccbin.unwrap_or_else(|| "gcc".into()),
        });
    }
    // nvlink passes -Xptxas first (a later -maxrregcount wins over one
    // given with -Xptxas: ptxas warns "incompatible redefinition").
    cmd.options.ptxas_options = xptxas
        .into_iter()
        .chain(
            [maxrregcount, stack_protector, split_compile]
                .into_iter()
                .flatten(),
        )
        .collect();
    // nvlink's option conflicts.
    if suppress_debug_info && !cmd.options.device_debug {
        return Err(UsageError::fatal(
            "Conflicting options '-suppress-debug-info' and 'no -g'",
        ));
    }
    if emit_ptx && !lto {
        return Err(UsageError::fatal(
            "Conflicting options '-emit-ptx' and 'no -dlto'",
        ));
    }
    if fast_compile && !lto {
        return Err(UsageError::fatal(
            "Conflicting options '--Ofast-compile' and 'no -dlto'",
        ));
    }
    if lto && !nvvm_path {
        return Err(UsageError::fatal("-nvvmpath should be specified with -lto"));
    }
    cmd.link_time_opt = lto;
    cmd.options.link_time_opt = lto;
    // nvlink's usage checks, in its order.
    if cmd.options.inputs.is_empty() {
        return Err(UsageError::fatal(
            "No input files specified; use option --help for more information",
        ));
    }
    // A virtual target (`compute_XX`, what nvcc -dlink passes for a PTX-only
    // build, without -o): nothing is linked, only the register-link file
    // written (nvlink 13.0.88). `lto_XX` is refused as nvlink refuses it.
    if let Some(t) = arch_text.as_deref() {
        if t.starts_with("lto_") {
            return Err(UsageError::fatal(format!(
                "Link target of '{t}' is virtual target that is not JIT-able; use 'sm_' target instead"
            )));
        }
        cmd.virtual_target = t.starts_with("compute_");
    }
    if cmd.output.is_none() && !cmd.virtual_target {
        return Err(UsageError::fatal("Must specify output file with -o option"));
    }
    let arch = match &arch_text {
        None => return Err(UsageError::fatal("Unknown arch name '(null)'")),
        Some(t) => {
            SmArch::parse(t).map_err(|_| UsageError::fatal(format!("Unknown arch name '{t}'")))?
        }
    };
    cmd.options.arch = Some(arch);
    cmd.options.recorded_args = Some(if no_tool_args {
        String::new()
    } else {
        let mut recorded = recorded_args(arch, &cmd.driver);
        if cmd.options.relocatable {
            recorded.push_str("-r ");
        }
        recorded
    });
    Ok(Command::Link(Box::new(cmd)))
}

/// The `-cpu-arch` values nvlink 13.0.88 defines (case as written).
const CPU_ARCHS: &[&str] = &["AARCH64", "ARMv7", "PPC64LE", "X86", "X86_64", "unknown"];

/// A numeric option's value read as nvlink 13.0.88 reads it (C `strtol` with
/// base 0: leading blanks, a sign, `0x` hex or `0` octal, nothing after the
/// digits; a 32-bit signed range), with its messages: "'abc': expected a
/// number", "32-bit integer value (N) out of range".
fn nvlink_int(value: &str) -> Result<i32, UsageError> {
    let bad = || UsageError::fatal(format!("'{value}': expected a number"));
    let t = value.trim_start_matches([' ', '\t']);
    let (negative, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (radix, digits) = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (16, h)
    } else if t.len() > 1 && t.starts_with('0') {
        (8, &t[1..])
    } else {
        (10, t)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(bad());
    }
    // (Too many digits for any i128 is out of range too.)
    let magnitude = i128::from_str_radix(digits, radix).unwrap_or(i128::MAX);
    let n = if negative { -magnitude } else { magnitude };
    i32::try_from(n)
        .map_err(|_| UsageError::fatal(format!("32-bit integer value ({n}) out of range")))
}

/// Whether `value` is an `-arch` value nvlink 13.0.88 defines: `sm_`,
/// `compute_` or `lto_` and a target it links for
/// ([`SmArch::is_known_target`]).
fn is_arch_value(value: &str) -> bool {
    ["sm_", "compute_", "lto_"]
        .iter()
        .any(|p| value.starts_with(p))
        && SmArch::parse(value).is_ok_and(SmArch::is_known_target)
}

/// `-oFILE`, `-LDIR`, `-lNAME` (single dash, value glued on).
fn glued_short(a: &str) -> Option<(&'static str, String)> {
    let rest = a.strip_prefix('-')?;
    if rest.starts_with('-') {
        return None;
    }
    for (c, canon) in [('o', "o"), ('L', "L"), ('l', "l")] {
        if let Some(v) = rest.strip_prefix(c) {
            if !v.is_empty() {
                return Some((canon, v.to_string()));
            }
        }
    }
    None
}

/// The normalised option string nvlink records in its tkinfo note:
/// `-arch sm_90 ` and, with nvcc's options, `-arch sm_90 -m 64 -l cudadevrt -L . -cpu-arch X86_64 `.
pub fn recorded_args(arch: SmArch, d: &DriverOptions) -> String {
    let mut s = format!("-arch {arch} ");
    if let Some(m) = &d.machine {
        s.push_str(&format!("-m {m} "));
    }
    if !d.libraries.is_empty() {
        s.push_str(&format!("-l {} ", d.libraries.join(",")));
    }
    if !d.library_paths.is_empty() {
        s.push_str(&format!("-L {} ", d.library_paths.join(",")));
    }
    if let Some(c) = &d.cpu_arch {
        s.push_str(&format!("-cpu-arch {c} "));
    }
    if d.report_arch {
        // As nvlink 13.0 records it (two spaces).
        s.push_str("-report-arch  ");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    fn link(s: &[&str]) -> LinkCommand {
        match parse(v(s)) {
            Ok(Command::Link(c)) => *c,
            other => panic!("{s:?}: {other:?}"),
        }
    }

    #[test]
    fn nvlink_options_users_pass() {
        // -lto is nvlink's link-time optimization flag, not `-l to`.
        let c = link(&["-arch=sm_90", "-lto", "-nvvmpath=/x", "a.o", "-o", "x"]);
        assert!(c.link_time_opt && c.options.libraries.is_empty());
        let c = link(&[
            "-arch=sm_90",
            "--suppress-stack-size-warning",
            "-suppress-arch-warning",
            "-ignore-host-info",
            "-keep-system-libraries",
            "-disable-infos",
            "-extrawarn",
            "-use-host-info",
            "-Xptxas",
            "-v",
            "-maxrregcount=32",
            "-device-stack-protector",
            "false",
            "a.o",
            "-o",
            "x",
        ]);
        let o = &c.options;
        assert!(o.suppress_stack_size_warning && o.suppress_arch_warning);
        assert!(o.ignore_host_info && o.keep_system_libraries && c.disable_infos);
        assert_eq!(o.inputs.len(), 1, "-Xptxas took its value");
        // The ptxas options for PTX inputs, in nvlink's order: -Xptxas first.
        assert_eq!(
            o.ptxas_options,
            ["-v", "-maxrregcount=32", "-device-stack-protector=false"]
        );
        let c = link(&[
            "-arch=sm_90",
            "-maxrregcount",
            "40",
            "-Xptxas",
            "-O1,-lineinfo",
            "a.o",
            "-o",
            "x",
        ]);
        assert_eq!(
            c.options.ptxas_options,
            ["-O1", "-lineinfo", "-maxrregcount=40"]
        );
        for (args, message) in [
            (&["-suppress-debug-info"][..], "'no -g'"),
            (&["-emit-ptx"][..], "'no -dlto'"),
            (&["-Ofc", "max"][..], "'no -dlto'"),
            (&["-dlto"][..], "-nvvmpath should be specified"),
            (&["-device-stack-protector=1"][..], "expected true or false"),
            (&["-ghls=lcs-aug"][..], "not allowed with -ghls"),
            (
                &["-ghls=other"][..],
                "not defined for option 'gen-host-linker-script'",
            ),
            (&["-maxrregcount=12abc"][..], "expected a number"),
            (
                &["-cpu-arch=x86_64"][..],
                "not defined for option 'cpu-arch'",
            ),
            (&["-m=32"][..], "not defined for option 'machine'"),
        ] {
            let mut v = vec!["-arch=sm_90", "a.o", "-o", "x"];
            v.extend_from_slice(args);
            let e = parse(v.iter().map(|s| s.to_string()).collect()).unwrap_err();
            assert!(e.message.contains(message), "{args:?}: {}", e.message);
        }
        assert!(matches!(
            parse(
                ["-ghls=lcs-abs", "-o", "s.ld"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect()
            ),
            Ok(Command::HostLinkerScript { absolute: true, .. })
        ));
    }

    #[test]
    fn arch_spellings() {
        for args in [
            &["-arch=sm_90", "a.o", "-o", "x"][..],
            &["-arch", "sm_90", "a.o", "-o", "x"],
            &["--arch=sm_90", "a.o", "-ox"],
            &["--arch", "sm_90", "a.o", "--output-file", "x"],
            &["--arch", "sm_90", "a.o", "--output-file=x"],
        ] {
            let c = link(args);
            assert_eq!(c.options.arch, Some(SmArch::new(90)), "{args:?}");
            assert_eq!(c.output, Some(PathBuf::from("x")));
            assert_eq!(c.options.recorded_args.as_deref(), Some("-arch sm_90 "));
            assert_eq!(c.options.inputs.len(), 1);
        }
    }

    #[test]
    fn nvcc_dlink_line() {
        let c = link(&[
            "-m64",
            "--arch=sm_90",
            "--register-link-binaries=r.reg.c",
            "-L/cuda/lib64/stubs",
            "-L",
            "/cuda/lib64",
            "-cpu-arch=X86_64",
            "-report-arch",
            "--shared",
            "x.o",
            "y.o",
            "-lcudadevrt",
            "-o",
            "out.cubin",
            "--host-ccbin",
            "gcc",
            "-v",
            "-w",
            "-Werror",
        ]);
        let d = &c.driver;
        assert_eq!(d.machine.as_deref(), Some("64"));
        assert_eq!(d.register_link_binaries, Some(PathBuf::from("r.reg.c")));
        assert_eq!(d.library_paths, v(&["/cuda/lib64/stubs", "/cuda/lib64"]));
        assert_eq!(d.libraries, v(&["cudadevrt"]));
        assert_eq!(d.cpu_arch.as_deref(), Some("X86_64"));
        assert_eq!(d.host_ccbin.as_deref(), Some("gcc"));
        assert!(d.report_arch && d.shared);
        assert!(c.options.verbose && c.options.no_warnings && c.options.warnings_as_errors);
        assert_eq!(c.options.inputs.len(), 2);
        assert_eq!(
            c.options.recorded_args.as_deref(),
            Some(
                "-arch sm_90 -m 64 -l cudadevrt -L /cuda/lib64/stubs,/cuda/lib64 -cpu-arch X86_64 -report-arch  "
            )
        );
    }

    #[test]
    fn library_and_input_kind_options() {
        let c = link(&[
            "-arch=sm_90",
            "--lazy-archives",
            "a.o",
            "--whole-archive",
            "libw.a",
            "-lw",
            "--no-whole-archive",
            "libl.a",
            "-L",
            "/d",
            "-lcudadevrt",
            "--ptxas=/opt/ptxas",
            "-o",
            "x",
        ]);
        let o = &c.options;
        assert!(o.lazy_archives);
        assert_eq!(o.inputs.len(), 3);
        assert_eq!(o.whole_archive_inputs, vec![1]);
        assert_eq!(
            o.libraries,
            vec![
                Library {
                    name: "w".into(),
                    whole_archive: true
                },
                Library::new("cudadevrt")
            ]
        );
        assert_eq!(o.library_paths, vec![PathBuf::from("/d")]);
        assert_eq!(o.ptxas, Some(PathBuf::from("/opt/ptxas")));
    }

    #[test]
    fn library_options_take_lists() {
        let c = link(&[
            "-arch=sm_90",
            "a.o",
            "-o",
            "x",
            "-L/a,/b",
            "-Lc",
            "-lx,y",
            "--library=z",
        ]);
        assert_eq!(
            c.options.library_paths,
            ["/a", "/b", "c"].map(PathBuf::from).to_vec()
        );
        let names: Vec<&str> = c
            .options
            .libraries
            .iter()
            .map(|l| l.name.as_str())
            .collect();
        assert_eq!(names, ["x", "y", "z"]);
    }

    #[test]
    fn numbers_as_nvlink_reads_them() {
        // nvlink 13.0.88's verdicts on `-maxrregcount=<v>`.
        for (v, n) in [
            ("0", 0),
            ("-1", -1),
            ("+5", 5),
            (" 5", 5),
            ("0x20", 32),
            ("010", 8),
        ] {
            assert_eq!(nvlink_int(v).ok(), Some(n), "{v}");
        }
        assert_eq!(nvlink_int("2147483647").ok(), Some(i32::MAX));
        for v in ["abc", "12abc", "5 ", "1e3", "", "0x"] {
            assert_eq!(
                nvlink_int(v).unwrap_err().to_string(),
                format!("culink: fatal: '{v}': expected a number")
            );
        }
        for v in ["2147483648", "4294967295", "-2147483649"] {
            assert_eq!(
                nvlink_int(v).unwrap_err().to_string(),
                format!("culink: fatal: 32-bit integer value ({v}) out of range")
            );
        }
    }

    #[test]
    fn usage_errors() {
        let e = |s: &[&str]| parse(v(s)).unwrap_err().to_string();
        assert_eq!(
            e(&["-arch=sm_90", "-o", "x"]),
            "culink: fatal: No input files specified; use option --help for more information"
        );
        assert_eq!(
            e(&["-arch=sm_90", "a.o"]),
            "culink: fatal: Must specify output file with -o option"
        );
        assert_eq!(
            e(&["a.o", "-o", "x"]),
            "culink: fatal: Unknown arch name '(null)'"
        );
        // nvlink 13.0.88's words, checked as the option is read.
        for bad in [
            "bogus",
            "sm_101",
            "sm_90f",
            "sm_75a",
            "compute_122",
            "lto_50",
            "90",
        ] {
            assert_eq!(
                e(&[&format!("-arch={bad}"), "-o", "x"]),
                format!("culink: fatal: Value '{bad}' is not defined for option 'arch'")
            );
        }
        assert!(e(&["-arch=sm_101", "--frobnicate"]).contains("not defined for option 'arch'"));
        assert!(e(&["-arch"]).contains("requires a value"));
        assert!(e(&["--frobnicate", "a.o"]).contains("Unknown option"));
        assert!(e(&["@/nonexistent/culink.rsp"]).contains("Could not open options file"));
    }

    #[test]
    fn response_files() {
        assert_eq!(
            split_response_file("-arch sm_90 'a b.o'  \"c\\\"d.o\"\n-o\tx").unwrap(),
            v(&["-arch", "sm_90", "a b.o", "c\"d.o", "-o", "x"])
        );
        assert!(split_response_file("'open").is_err());
        let dir = std::env::temp_dir().join(format!("culink-rsp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let inner = dir.join("inner.rsp");
        std::fs::write(&inner, "-o out.cubin").unwrap();
        let outer = dir.join("outer.rsp");
        std::fs::write(
            &outer,
            format!("-arch=sm_80 \"x y.o\" @{}", inner.display()),
        )
        .unwrap();
        let c = link(&[&format!("@{}", outer.display())]);
        assert_eq!(c.options.arch, Some(SmArch::new(80)));
        assert_eq!(c.output, Some(PathBuf::from("out.cubin")));
        assert_eq!(c.options.inputs[0].display_name(), "x y.o");
        let c = link(&["--options-file", &outer.display().to_string()]);
        assert_eq!(c.output, Some(PathBuf::from("out.cubin")));
        // A list, as nvlink's `--options-file <file>,...` (nvlink 13.0.88
        // links with `--options-file o1.txt,o2.txt`).
        let arch = dir.join("arch.rsp");
        std::fs::write(&arch, "-arch=sm_90 a.o").unwrap();
        let c = link(&[&format!(
            "--options-file={},{}",
            arch.display(),
            inner.display()
        )]);
        assert_eq!(c.options.arch, Some(SmArch::new(90)));
        assert_eq!(c.output, Some(PathBuf::from("out.cubin")));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn subcommands() {
        assert!(matches!(parse(v(&["dump", "a"])), Ok(Command::Dump(_))));
        assert!(matches!(
            parse(v(&["diff", "--phdrs", "a", "b"])),
            Ok(Command::Diff { phdrs: true, .. })
        ));
        assert!(parse(v(&["diff", "a"])).is_err());
        assert!(parse(v(&["dump"])).is_err());
        assert!(matches!(parse(v(&["--version"])), Ok(Command::Version)));
        assert!(matches!(parse(v(&["-h"])), Ok(Command::Help)));
    }
}
