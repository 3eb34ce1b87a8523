//! The option strings of `culinkCreate`, parsed into [`LinkOptions`].
//!
//! The CLI's parser lives in the `culink` binary crate (it also handles `-o`,
//! response files and `nvcc -dlink`'s driver options, none of which mean
//! anything in-process), so the C ABI has this small parser of its own. It takes
//! the CLI's spellings of the options both have, plus nvJitLink's spellings:
//!
//! | option | effect |
//! |---|---|
//! | `-arch=sm_XX`, `-arch sm_XX` (one string or two), `--arch=...`, `-gpu-architecture=...` | target architecture (required) |
//! | `-v`, `-verbose`, `--verbose`, `-time` | phase timings and statistics in the info log, then the output's resource report (registers, barriers, stack, shared and constant memory per kernel; `linker_core::resources`) |
//! | `-w`, `--disable-warnings` | no warnings in the info log |
//! | `-Werror`, `--warning-as-error` | warnings are errors |
//! | `-kernels-used=K[,K...]`, `-kernels-used K` (repeatable) | keep only kernels whose name contains one of these (as nvlink's) |
//! | `-variables-used=V[,V...]`, `-variables-used V` (repeatable) | keep these variables (as nvlink's `-variables-used`; measured: nvJitLink 13.0.88's output equals nvlink's) |
//! | `-g` | a debug link, as nvlink's `-g` (measured: nvJitLink 13.0.88's `-g` output equals nvlink's on `-G` objects, and differs from its output without) |
//! | `-lineinfo`, `-O0`..`-O3`, `-maxrregcount=N`, `-Xptxas=OPT` | for the ptxas that compiles PTX inputs (PTX added directly, or a fatbinary's PTX entry when it has no code for the target): `-lineinfo`, `-O<n>`, `-maxrregcount=N` and `OPT` (one ptxas argument per `-Xptxas`), in the order given, so that the last of two conflicting ones wins. Measured with libnvJitLink 13.0.88: its ptxas records exactly these (`-maxrregcount 40 -O 1 -arch sm_80 -c`), in that order; the compile options below it does not pass on. No effect on compiled inputs |
//! | `-ptxas=PATH`, `--ptxas=PATH` | culink's own: the ptxas that compiles PTX inputs (as the CLI's `--ptxas`); without it, `ptxas` on `PATH` |
//! | `-lto` | link-time optimization: LTO-IR inputs (and fatbinaries' LTO IR) optimized together by NVIDIA's libnvJitLink, loaded at run time, then compiled by ptxas (the CLI's `-dlto`; docs/inputs.md) |
//! | `-nvjitlink=PATH` | culink's own: the libnvJitLink for `-lto` (as the CLI's `--nvjitlink`); without it, `libnvJitLink.so.13` from the loader's path |
//! | `-ftz=B`, `-prec-div=B`, `-prec-sqrt=B`, `-fma=B`, `-optimize-unused-variables`, `-split-compile=N`, `-split-compile-extended=N`, `-jump-table-density=N`, `-no-cache` | accepted and ignored: they steer nvJitLink's LTO-IR compilation (measured: none of them reaches its ptxas for PTX inputs), and the C ABI does no link-time optimization (LTO-IR inputs are refused) |
//!
//! Anything else (including `-ptx`: culink produces cubins only) is
//! [`OptionErrorKind::Unrecognized`]. When `-arch` is given more than once the
//! last one wins, as on the command line.

use linker_core::{LinkOptions, SmArch};
use std::fmt;

/// Why an option list was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionErrorKind {
    /// An option culink does not know (or a flag given a value).
    Unrecognized,
    /// No `-arch` option.
    MissingArch,
    /// `-arch` names no architecture (`-arch=bogus`).
    UnrecognizedArch,
    /// `-arch` names an architecture culink does not link for.
    UnsupportedArch,
}

/// A rejected option list: what kind of problem, and a message naming the option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionError {
    /// The kind of problem (it picks the C ABI's result code).
    pub kind: OptionErrorKind,
    /// A message for people, naming the offending option.
    pub message: String,
}

impl fmt::Display for OptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for OptionError {}

fn err(kind: OptionErrorKind, message: String) -> OptionError {
    OptionError { kind, message }
}

/// Flags that steer LTO-IR compilation only: accepted and ignored.
const IGNORED_FLAGS: &[&str] = &["optimize-unused-variables", "no-cache"];

/// Options with a value that steer LTO-IR compilation only: accepted and ignored.
const IGNORED_VALUED: &[&str] = &[
    "ftz",
    "prec-div",
    "prec-sqrt",
    "fma",
    "split-compile",
    "split-compile-extended",
    "jump-table-density",
];

/// Flags passed to the ptxas that compiles PTX inputs, as written.
const PTXAS_FLAGS: &[&str] = &["lineinfo", "O0", "O1", "O2", "O3"];

/// Parses `culinkCreate`'s option strings into link options (no inputs yet).
///
/// `recorded_args` is set to the normalised `-arch sm_XX ` string the CLI records
/// in the output's `.note.nv.tkinfo`, so a C ABI link and a CLI link of the same
/// inputs produce the same bytes.
pub fn parse_options<S: AsRef<str>>(args: &[S]) -> Result<LinkOptions, OptionError> {
    let mut opts = LinkOptions::default();
    let mut arch_text: Option<String> = None;
    let mut it = args.iter().map(|s| s.as_ref().trim());
    while let Some(a) = it.next() {
        let Some(body) = a.strip_prefix("--").or_else(|| a.strip_prefix('-')) else {
            return Err(err(
                OptionErrorKind::Unrecognized,
                format!(
                    "unrecognized option '{a}' (inputs are added with culinkAddData/culinkAddFile)"
                ),
            ));
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        // `-arch sm_90` given as one string.
        let (name, inline) = match (inline, name.split_once(char::is_whitespace)) {
            (None, Some((n, v))) => (n, Some(v.trim())),
            _ => (name, inline),
        };
        match name {
            "arch" | "gpu-architecture" => {
                let value = match inline {
                    Some(v) => v.to_string(),
                    None => it.next().map(str::to_string).ok_or_else(|| {
                        err(
                            OptionErrorKind::Unrecognized,
                            format!("option '{a}' requires a value"),
                        )
                    })?,
                };
                arch_text = Some(value);
            }
            "v" | "verbose" | "time" | "w" | "disable-warnings" | "Werror" | "warning-as-error" => {
                if inline.is_some() {
                    return Err(err(
                        OptionErrorKind::Unrecognized,
                        format!("option '{a}' takes no value"),
                    ));
                }
                match name {
                    "v" | "verbose" | "time" => opts.verbose = true,
                    "w" | "disable-warnings" => opts.no_warnings = true,
                    _ => opts.warnings_as_errors = true,
                }
            }
            "g" if inline.is_none() => opts.device_debug = true,
            "kernels-used" | "variables-used" => {
                let value = match inline {
                    Some(v) => v,
                    None => it.next().ok_or_else(|| {
                        err(
                            OptionErrorKind::Unrecognized,
                            format!("option '{a}' requires a value"),
                        )
                    })?,
                };
                let list = if name == "kernels-used" {
                    &mut opts.kernels_used
                } else {
                    &mut opts.variables_used
                };
                list.get_or_insert_with(Vec::new)
                    .extend(value.split(',').filter(|k| !k.is_empty()).map(String::from));
            }
            n if PTXAS_FLAGS.contains(&n) && inline.is_none() => {
                opts.ptxas_options.push(format!("-{n}"));
            }
            "lto" if inline.is_none() => opts.link_time_opt = true,
            "maxrregcount" | "Xptxas" | "ptxas" | "nvjitlink" => {
                let Some(v) = inline.filter(|v| !v.is_empty()) else {
                    return Err(err(
                        OptionErrorKind::Unrecognized,
                        format!("option '{a}' requires a value ({name}=...)"),
                    ));
                };
                match name {
                    "maxrregcount" if v.parse::<u32>().is_err() => {
                        return Err(err(
                            OptionErrorKind::Unrecognized,
                            format!("option '{a}': the register count must be a number"),
                        ))
                    }
                    "maxrregcount" => opts.ptxas_options.push(format!("-maxrregcount={v}")),
                    "Xptxas" => opts.ptxas_options.push(v.to_string()),
                    "nvjitlink" => opts.nvjitlink = Some(std::path::PathBuf::from(v)),
                    _ => opts.ptxas = Some(std::path::PathBuf::from(v)),
                }
            }
            n if IGNORED_FLAGS.contains(&n) && inline.is_none() => {}
            n if IGNORED_VALUED.contains(&n) && inline.is_some() => {}
            "ptx" => {
                return Err(err(
                    OptionErrorKind::Unrecognized,
                    "option '-ptx' is not supported: culink produces cubins only".into(),
                ))
            }
            _ => {
                return Err(err(
                    OptionErrorKind::Unrecognized,
                    format!("unrecognized option '{a}'"),
                ))
            }
        }
    }
    let Some(text) = arch_text else {
        return Err(err(
            OptionErrorKind::MissingArch,
            "no target architecture given; use -arch=sm_XX".into(),
        ));
    };
    let arch = SmArch::parse(&text).map_err(|_| {
        err(
            OptionErrorKind::UnrecognizedArch,
            format!("unrecognized architecture '{text}'"),
        )
    })?;
    if !arch.is_known_target() {
        return Err(err(
            OptionErrorKind::UnsupportedArch,
            format!("architecture '{text}' is not supported by culink"),
        ));
    }
    opts.arch = Some(arch);
    opts.recorded_args = Some(format!("-arch {arch} "));
    Ok(opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(args: &[&str]) -> OptionErrorKind {
        parse_options(args).unwrap_err().kind
    }

    #[test]
    fn arch_spellings() {
        for args in [
            &["-arch=sm_90"][..],
            &["-arch", "sm_90"],
            &["-arch sm_90"],
            &["--arch=sm_90"],
            &["--arch", "sm_90"],
            &["-gpu-architecture=sm_90"],
            &["-arch=sm_80", "-arch=sm_90"],
        ] {
            let o = parse_options(args).unwrap();
            assert_eq!(o.arch, Some(SmArch::new(90)), "{args:?}");
            assert_eq!(o.recorded_args.as_deref(), Some("-arch sm_90 "));
            assert!(!o.verbose && !o.no_warnings && !o.warnings_as_errors);
        }
        assert_eq!(
            parse_options(&["-arch=sm_90a"])
                .unwrap()
                .arch
                .unwrap()
                .to_string(),
            "sm_90a"
        );
    }

    #[test]
    fn flags() {
        let o = parse_options(&["-arch=sm_90", "-v", "-w", "-Werror"]).unwrap();
        assert!(o.verbose && o.no_warnings && o.warnings_as_errors);
        let o = parse_options(&["-time", "-arch=sm_90", "--warning-as-error"]).unwrap();
        assert!(o.verbose && o.warnings_as_errors);
        assert_eq!(o.kernels_used, None);
        let o =
            parse_options(&["-arch=sm_90", "-kernels-used=k1,k2", "-kernels-used", "k3"]).unwrap();
        assert_eq!(
            o.kernels_used,
            Some(vec!["k1".into(), "k2".into(), "k3".into()])
        );
        let o = parse_options(&[
            "-arch=sm_90",
            "-variables-used=v1",
            "-variables-used",
            "v2,v3",
            "-g",
        ])
        .unwrap();
        assert_eq!(
            o.variables_used,
            Some(vec!["v1".into(), "v2".into(), "v3".into()])
        );
        assert!(o.device_debug && o.kernels_used.is_none());
        // -lto links with link-time optimization; nvJitLink's other LTO
        // options are accepted and ignored; its ptxas options go to the
        // ptxas that compiles PTX, in the order given.
        let o = parse_options(&[
            "-arch=sm_90",
            "-lto",
            "-O3",
            "-lineinfo",
            "-Xptxas=-maxrregcount=48",
            "-maxrregcount=32",
            "-ftz=true",
            "-Xptxas=-v",
            "-split-compile=0",
            "-no-cache",
            "-ptxas=/opt/ptxas",
        ])
        .unwrap();
        assert!(!o.device_debug && o.link_time_opt);
        assert_eq!(
            o.ptxas_options,
            [
                "-O3",
                "-lineinfo",
                "-maxrregcount=48",
                "-maxrregcount=32",
                "-v"
            ]
        );
        assert_eq!(o.ptxas.as_deref(), Some(std::path::Path::new("/opt/ptxas")));
    }

    /// `-g` and `-variables-used` change the link as nvlink's (and nvJitLink's)
    /// do: the fixtures' nvlink references were linked with them.
    #[test]
    fn debug_and_variables_used_links_match_nvlink() {
        let link = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/link");
        for (case, input, options) in [
            (
                "cu_debug_dyn_bases",
                "a.sm_90.o",
                &["-arch=sm_90", "-g"][..],
            ),
            (
                "variables_used",
                "v.sm_90.o",
                &["-arch=sm_90", "-variables-used=keepme"],
            ),
        ] {
            let dir = link.join(case);
            let mut o = parse_options(options).unwrap();
            o.inputs = vec![linker_core::InputSource::File(dir.join(input))];
            let ours = linker_core::link(&o).unwrap().cubin;
            let reference = std::fs::read(dir.join("nvlink.sm_90.cubin")).unwrap();
            let d = linker_core::diff::diff(
                &linker_core::Cubin::parse(&ours).unwrap(),
                &linker_core::Cubin::parse(&reference).unwrap(),
            );
            assert!(d.is_empty(), "{case}: {d:?}");
        }
    }

    #[test]
    fn errors() {
        assert_eq!(kind(&[]), OptionErrorKind::MissingArch);
        assert_eq!(kind(&["-v"]), OptionErrorKind::MissingArch);
        assert_eq!(kind(&["-arch"]), OptionErrorKind::Unrecognized);
        assert_eq!(kind(&["-arch=bogus"]), OptionErrorKind::UnrecognizedArch);
        assert_eq!(kind(&["-arch=sm_42"]), OptionErrorKind::UnsupportedArch);
        // sm_101 (renamed sm_110 in CUDA 13) and sm_90f: nvlink 13.0.88 has neither.
        assert_eq!(kind(&["-arch=sm_101"]), OptionErrorKind::UnsupportedArch);
        assert_eq!(kind(&["-arch=sm_90f"]), OptionErrorKind::UnsupportedArch);
        assert_ne!(
            kind(&["-arch=sm_88", "-frob"]),
            OptionErrorKind::UnsupportedArch
        );
        assert_eq!(
            kind(&["-arch=sm_90", "-frob"]),
            OptionErrorKind::Unrecognized
        );
        assert_eq!(kind(&["-arch=sm_90", "a.o"]), OptionErrorKind::Unrecognized);
        assert_eq!(
            kind(&["-arch=sm_90", "-ptx"]),
            OptionErrorKind::Unrecognized
        );
        assert_eq!(
            kind(&["-arch=sm_90", "-v=1"]),
            OptionErrorKind::Unrecognized
        );
        assert_eq!(
            kind(&["-arch=sm_90", "-lto=1"]),
            OptionErrorKind::Unrecognized
        );
        for bad in [
            "-maxrregcount",
            "-maxrregcount=x",
            "-Xptxas",
            "-Xptxas=",
            "-ptxas",
        ] {
            assert_eq!(
                kind(&["-arch=sm_90", bad]),
                OptionErrorKind::Unrecognized,
                "{bad}"
            );
        }
        let e = parse_options(&["-arch=sm_90", "-frob"]).unwrap_err();
        assert!(e.to_string().contains("'-frob'"), "{e}");
    }
}
