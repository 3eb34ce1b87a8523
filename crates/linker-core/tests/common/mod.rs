//! Shared support for linker-core's integration tests (`mod common;`).
//!
//! * the link fixtures of `tests/link/<case>/` (format: see `xtask/src/fixtures.rs`);
//! * the NVIDIA tools (`CULINK_NV_TOOLS` or `<workspace>/target/nv-tools/bin`, filled by
//!   `cargo xtask nv-tools`). A missing tool makes a test skip — except under
//!   `CI=true`, where it panics so CI fails instead of silently skipping.

// Each test file uses only part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The workspace root (two levels above this crate's manifest).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root must exist")
}

/// Whether we run under CI (`CI=true` or `CI=1`).
pub fn is_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// The host compiler nvcc is given (`-ccbin`): `CULINK_NVCC_CCBIN`, else `gcc`.
pub fn nvcc_host_compiler() -> String {
    std::env::var("CULINK_NVCC_CCBIN")
        .ok()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "gcc".into())
}

/// The directory the NVIDIA tools are looked up in.
pub fn nv_tools_dir() -> PathBuf {
    match std::env::var_os("CULINK_NV_TOOLS") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => workspace_root().join("target/nv-tools/bin"),
    }
}

/// The path of NVIDIA tool `name` (`ptxas`, `nvlink`, `fatbinary`, `nvcc`, `cuobjdump`,
/// `nvdisasm`), or `None` when it is absent.
///
/// # Panics
/// When the tool is absent and `CI=true`: CI must fail, not skip.
pub fn nv_tool(name: &str) -> Option<PathBuf> {
    let dir = nv_tools_dir();
    let path = dir.join(name);
    if path.is_file() {
        return Some(path);
    }
    if is_ci() {
        panic!(
            "CI=true but NVIDIA tool `{name}` is missing from {} (set CULINK_NV_TOOLS or run `cargo xtask nv-tools`)",
            dir.display()
        );
    }
    None
}

/// What nvlink produced for one case and arch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reference {
    /// nvlink succeeded; its output (`nvlink.sm_NN.cubin`).
    Cubin(PathBuf),
    /// nvlink failed (`nvlink.sm_NN.err`).
    Error {
        /// nvlink's exit status.
        exit: i32,
        /// nvlink's stderr, verbatim.
        stderr: String,
    },
}

/// One link fixture: `tests/link/<name>/case.txt` and its files.
#[derive(Debug, Clone)]
pub struct Case {
    /// Directory name under `tests/link`.
    pub name: String,
    /// The case directory.
    pub dir: PathBuf,
    /// Archs the case is built and linked for (`75`, `80`, ...).
    pub archs: Vec<u32>,
    /// Link inputs in command-line order: (source stem, arch it is pinned to).
    pub inputs: Vec<(String, Option<u32>)>,
    /// Whether nvlink succeeds (`expect: ok`).
    pub expect_ok: bool,
    /// Extra nvlink options, placed before the inputs.
    pub options: Vec<String>,
    /// One line saying what the case exercises.
    pub description: String,
    /// Arch variant of every target and object (`variant: a`: `sm_100a`).
    pub variant: String,
}

impl Case {
    /// The arch name of `sm` in this case (`sm_100`, or `sm_100a` with `variant: a`).
    pub fn sm(&self, sm: u32) -> String {
        format!("sm_{sm}{}", self.variant)
    }

    /// The input objects of the link for `sm`, in command-line order
    /// (`<stem>.sm_NN.o`, NN being the pinned arch when there is one).
    pub fn input_paths(&self, sm: u32) -> Vec<PathBuf> {
        self.inputs
            .iter()
            .map(|(stem, pin)| {
                self.dir
                    .join(format!("{stem}.{}.o", self.sm(pin.unwrap_or(sm))))
            })
            .collect()
    }

    /// The nvlink arguments after `-arch=sm_NN` for `sm`, as nvlink was run in the
    /// case directory: options, bare input file names (no `-o`).
    pub fn nvlink_args(&self, sm: u32) -> Vec<String> {
        let mut v = self.options.clone();
        v.extend(
            self.inputs
                .iter()
                .map(|(stem, pin)| format!("{stem}.{}.o", self.sm(pin.unwrap_or(sm)))),
        );
        v
    }

    /// nvlink's result for `sm`.
    ///
    /// # Panics
    /// When neither `nvlink.sm_NN.cubin` nor a well-formed `nvlink.sm_NN.err` exists
    /// (run `cargo xtask fixtures`).
    pub fn reference(&self, sm: u32) -> Reference {
        let cubin = self.dir.join(format!("nvlink.{}.cubin", self.sm(sm)));
        let err = self.dir.join(format!("nvlink.{}.err", self.sm(sm)));
        if cubin.is_file() {
            return Reference::Cubin(cubin);
        }
        let text = std::fs::read_to_string(&err).unwrap_or_else(|e| {
            panic!(
                "case {}: no {} and no readable {} ({e}); run `cargo xtask fixtures`",
                self.name,
                cubin.display(),
                err.display()
            )
        });
        let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
        let exit = first
            .strip_prefix("exit: ")
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("{}: first line must be `exit: N`", err.display()));
        Reference::Error {
            exit,
            stderr: rest.to_string(),
        }
    }
}

fn parse_sm(s: &str) -> Result<u32, String> {
    let n = s.strip_prefix("sm_").unwrap_or(s);
    n.parse::<u32>()
        .ok()
        .filter(|n| (10..1000).contains(n))
        .ok_or_else(|| format!("bad arch `{s}`"))
}

/// Parses `dir/case.txt`.
pub fn parse_case(dir: &Path) -> Result<Case, String> {
    let path = dir.join("case.txt");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| format!("bad case directory {}", dir.display()))?
        .to_string();
    let mut case = Case {
        name,
        dir: dir.to_path_buf(),
        archs: Vec::new(),
        inputs: Vec::new(),
        expect_ok: true,
        options: Vec::new(),
        description: String::new(),
        variant: String::new(),
    };
    let mut seen: Vec<String> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = |m: String| format!("{}:{}: {m}", path.display(), i + 1);
        let (k, v) = line
            .split_once(':')
            .ok_or_else(|| at("expected `key: value`".into()))?;
        let (k, v) = (k.trim(), v.trim());
        if seen.iter().any(|s| s == k) {
            return Err(at(format!("duplicate key `{k}`")));
        }
        seen.push(k.to_string());
        match k {
            "archs" => {
                case.archs = v
                    .split_whitespace()
                    .map(parse_sm)
                    .collect::<Result<_, _>>()
                    .map_err(at)?;
            }
            "inputs" => {
                for t in v.split_whitespace() {
                    let (stem, pin) = match t.split_once('@') {
                        Some((s, a)) => (s, Some(parse_sm(a).map_err(at)?)),
                        None => (t, None),
                    };
                    case.inputs.push((stem.to_string(), pin));
                }
            }
            "expect" => {
                case.expect_ok = match v {
                    "ok" => true,
                    "error" => false,
                    _ => return Err(at(format!("expect must be `ok` or `error`, not `{v}`"))),
                }
            }
            "options" => case.options = v.split_whitespace().map(String::from).collect(),
            // How the inputs were built (xtask fixtures); the objects are committed.
            "build" => {}
            k if k.strip_prefix("build.").is_some_and(|s| !s.is_empty()) => {}
            "description" => case.description = v.to_string(),
            "variant" => {
                if !matches!(v, "a" | "f") {
                    return Err(at(format!("variant must be `a` or `f`, not `{v}`")));
                }
                case.variant = v.to_string();
            }
            _ => return Err(at(format!("unknown key `{k}`"))),
        }
    }
    for required in ["archs", "inputs", "expect", "description"] {
        if !seen.iter().any(|s| s == required) {
            return Err(format!("{}: missing `{required}:`", path.display()));
        }
    }
    if case.archs.is_empty() || case.inputs.is_empty() || case.description.is_empty() {
        return Err(format!(
            "{}: archs, inputs and description must not be empty",
            path.display()
        ));
    }
    Ok(case)
}

/// The case names `CULINK_FIXTURES=a,b` chooses; `None` (every case) when
/// unset or empty.
pub fn chosen_cases() -> Option<Vec<String>> {
    std::env::var("CULINK_FIXTURES")
        .ok()
        .filter(|v| !v.is_empty())
        .map(|v| v.split(',').map(str::to_string).collect())
}

/// `<workspace>/tests/link`.
pub fn link_dir() -> PathBuf {
    workspace_root().join("tests/link")
}

/// Every case of `tests/link`, sorted by name.
///
/// # Panics
/// When `tests/link` cannot be read or a `case.txt` does not parse.
///
/// `CULINK_FIXTURES=a,b` limits them to the named cases (a developer's
/// shortcut; unset, as in CI, every case runs).
pub fn cases() -> Vec<Case> {
    let only = chosen_cases();
    let dir = link_dir();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .filter(|p| {
            only.as_ref().is_none_or(|names| {
                p.file_name()
                    .is_some_and(|n| names.iter().any(|x| n == x.as_str()))
            })
        })
        .collect();
    dirs.sort();
    dirs.iter()
        .map(|d| parse_case(d).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}
