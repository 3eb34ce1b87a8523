//! `cargo xtask fixtures [--check] [CASE...]`: the link fixtures in `tests/link/`.
//!
//! A case is a directory `tests/link/<case>/` with a `case.txt`:
//!
//! ```text
//! # comment
//! description: one line saying what the case exercises
//! archs: 75 80 86 89 90
//! inputs: a b@80          # source stems in link order; `@NN` pins one arch
//! expect: ok              # or: error
//! options: -foo           # optional extra nvlink options, before the inputs
//! build: -G                # optional extra ptxas/nvcc options for the inputs
//! build.b: -G              # optional extra options for input `b` only (after `build`)
//! variant: a              # optional: every arch as `sm_NNa` (or `f`)
//! ```
//!
//! Sources are `<stem>.ptx` (with the literal `.target SMXX`, replaced per arch)
//! or `<stem>.cu` (built with `nvcc -arch=sm_NN -rdc=true -dc --cubin`, the
//! source's path given to cicc as its bare name).
//! Generated files, committed as test data:
//! * `<stem>.sm_NN.o` — `ptxas -arch=sm_NN -c` (or nvcc) output, ET_REL;
//! * `nvlink.sm_NN.cubin` — `nvlink -arch=sm_NN <options> <inputs> -o nvlink.sm_NN.cubin`,
//!   run in a scratch dir holding the objects, inputs given by bare file name;
//! * `nvlink.sm_NN.err` — instead of the cubin when nvlink fails: `exit: N`, then
//!   nvlink's stderr verbatim.
//!
//! Every tool runs in a scratch directory on bare file names, so nothing in the
//! outputs depends on where the repository lives (`--check` verifies this: it
//! regenerates elsewhere and byte-compares).

use crate::util::{io_err, output, show, tools_dir, workspace_root, TempDir};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// A parsed `case.txt`.
#[derive(Debug, Clone)]
pub struct Case {
    /// Directory name under `tests/link`.
    pub name: String,
    /// The case directory.
    pub dir: PathBuf,
    /// Archs the case is built and linked for.
    pub archs: Vec<u32>,
    /// Link inputs in order: (source stem, pinned arch).
    pub inputs: Vec<(String, Option<u32>)>,
    /// Whether nvlink is expected to succeed.
    pub expect_ok: bool,
    /// Extra nvlink options, placed before the inputs.
    pub options: Vec<String>,
    /// Extra compiler options for building the inputs (`build: -G`), passed
    /// to ptxas or nvcc.
    pub build: Vec<String>,
    /// Extra compiler options for one input (`build.b: -G`), after `build`.
    pub build_one: BTreeMap<String, Vec<String>>,
    /// Arch variant suffix of every target and object (`variant: a`: sm_100a).
    pub variant: String,
}

impl Case {
    /// The arch name of `sm` for this case (`sm_100`, or `sm_100a` with `variant: a`).
    pub fn sm(&self, sm: u32) -> String {
        format!("sm_{sm}{}", self.variant)
    }
}

/// How a source stem is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SourceKind {
    Ptx,
    Cu,
}

fn parse_sm(s: &str, what: &str) -> Result<u32, String> {
    let s = s.strip_prefix("sm_").unwrap_or(s);
    s.parse::<u32>()
        .ok()
        .filter(|n| (10..1000).contains(n))
        .ok_or_else(|| format!("bad arch `{s}` in {what}"))
}

/// Parses `dir/case.txt`.
pub fn parse_case(dir: &Path) -> Result<Case, String> {
    let path = dir.join("case.txt");
    let text = std::fs::read_to_string(&path).map_err(|e| io_err("read", &path, e))?;
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| format!("bad case directory name {}", dir.display()))?
        .to_string();
    let mut fields: BTreeMap<String, String> = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (k, v) = line
            .split_once(':')
            .ok_or_else(|| format!("{}:{}: expected `key: value`", path.display(), i + 1))?;
        let k = k.trim();
        let per_input = k.strip_prefix("build.").is_some_and(|s| !s.is_empty());
        if !per_input
            && !matches!(
                k,
                "archs" | "inputs" | "expect" | "options" | "build" | "description" | "variant"
            )
        {
            return Err(format!("{}:{}: unknown key `{k}`", path.display(), i + 1));
        }
        if fields.insert(k.to_string(), v.trim().to_string()).is_some() {
            return Err(format!("{}:{}: duplicate key `{k}`", path.display(), i + 1));
        }
    }
    let get = |k: &str| {
        fields
            .get(k)
            .cloned()
            .ok_or_else(|| format!("{}: missing `{k}:`", path.display()))
    };
    let what = path.display().to_string();
    let archs = get("archs")?
        .split_whitespace()
        .map(|a| parse_sm(a, &what))
        .collect::<Result<Vec<_>, _>>()?;
    let inputs = get("inputs")?
        .split_whitespace()
        .map(|t| match t.split_once('@') {
            Some((s, a)) => Ok((s.to_string(), Some(parse_sm(a, &what)?))),
            None => Ok((t.to_string(), None)),
        })
        .collect::<Result<Vec<_>, String>>()?;
    let expect_ok = match get("expect")?.as_str() {
        "ok" => true,
        "error" => false,
        other => {
            return Err(format!(
                "{what}: expect must be `ok` or `error`, not `{other}`"
            ))
        }
    };
    let options = fields
        .get("options")
        .map(|o| o.split_whitespace().map(String::from).collect())
        .unwrap_or_default();
    let build = fields
        .get("build")
        .map(|o| o.split_whitespace().map(String::from).collect())
        .unwrap_or_default();
    let build_one: BTreeMap<String, Vec<String>> = fields
        .iter()
        .filter_map(|(k, v)| {
            let stem = k.strip_prefix("build.")?;
            Some((
                stem.to_string(),
                v.split_whitespace().map(String::from).collect(),
            ))
        })
        .collect();
    let variant = fields.get("variant").cloned().unwrap_or_default();
    if !matches!(variant.as_str(), "" | "a" | "f") {
        return Err(format!(
            "{what}: variant must be `a` or `f`, not `{variant}`"
        ));
    }
    if get("description")?.is_empty() {
        return Err(format!("{what}: empty `description:`"));
    }
    if archs.is_empty() || inputs.is_empty() {
        return Err(format!("{what}: `archs` and `inputs` must not be empty"));
    }
    if let Some(stem) = build_one
        .keys()
        .find(|s| !inputs.iter().any(|(i, _)| i == *s))
    {
        return Err(format!("{what}: `build.{stem}` names no input"));
    }
    for (stem, _) in &inputs {
        if stem.is_empty() || !stem.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("{what}: bad input stem `{stem}`"));
        }
    }
    Ok(Case {
        name,
        dir: dir.to_path_buf(),
        archs,
        inputs,
        expect_ok,
        options,
        build,
        build_one,
        variant,
    })
}

/// `tests/link`.
pub fn link_dir() -> PathBuf {
    workspace_root().join("tests/link")
}

/// All case directories, sorted by name.
pub fn case_dirs() -> Result<Vec<PathBuf>, String> {
    let dir = link_dir();
    let rd = std::fs::read_dir(&dir).map_err(|e| io_err("read", &dir, e))?;
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    Ok(v)
}

/// What a file in a case directory is.
#[derive(Debug, PartialEq, Eq)]
enum FileClass {
    Source,
    Generated,
    /// Not expected in a case directory (e.g. a per-arch `.ptx` copy).
    Stray,
}

/// `x.sm_NN` (or `x.sm_NNa`, `x.sm_NNf`) → true.
fn has_sm_suffix(base: &str) -> bool {
    base.rsplit_once(".sm_").is_some_and(|(_, n)| {
        let digits = n.strip_suffix(['a', 'f']).unwrap_or(n);
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
    })
}

fn classify(name: &str) -> FileClass {
    if name == "case.txt" {
        return FileClass::Source;
    }
    let Some((base, ext)) = name.rsplit_once('.') else {
        return FileClass::Stray;
    };
    match ext {
        "ptx" | "cu" if !has_sm_suffix(base) => FileClass::Source,
        "o" if has_sm_suffix(base) => FileClass::Generated,
        "cubin" | "err" if base.starts_with("nvlink.") && has_sm_suffix(base) => {
            FileClass::Generated
        }
        _ => FileClass::Stray,
    }
}

fn source_of(case: &Case, stem: &str) -> Result<(PathBuf, SourceKind), String> {
    let ptx = case.dir.join(format!("{stem}.ptx"));
    let cu = case.dir.join(format!("{stem}.cu"));
    match (ptx.is_file(), cu.is_file()) {
        (true, false) => Ok((ptx, SourceKind::Ptx)),
        (false, true) => Ok((cu, SourceKind::Cu)),
        (true, true) => Err(format!(
            "case {}: both {stem}.ptx and {stem}.cu exist",
            case.name
        )),
        (false, false) => Err(format!("case {}: no {stem}.ptx or {stem}.cu", case.name)),
    }
}

/// Object file name of `stem` built for `sm` (`sm_NN`, no variant).
pub fn object_name(stem: &str, sm: u32) -> String {
    format!("{stem}.sm_{sm}.o")
}

/// Builds every object and runs nvlink for every arch; writes the generated files
/// into `out` and returns their names.
fn generate(case: &Case, tools: &Path, out: &Path) -> Result<Vec<String>, String> {
    let work = TempDir::new(&format!("fx-{}", case.name))?;
    let w = work.path();
    let mut produced = Vec::new();
    let builds: BTreeSet<(String, u32)> = case
        .archs
        .iter()
        .flat_map(|&sm| {
            case.inputs
                .iter()
                .map(move |(s, pin)| (s.clone(), pin.unwrap_or(sm)))
        })
        .collect();
    for (stem, sm) in &builds {
        let (src, kind) = source_of(case, stem)?;
        let arch = case.sm(*sm);
        let obj = format!("{stem}.{arch}.o");
        let text = std::fs::read_to_string(&src).map_err(|e| io_err("read", &src, e))?;
        let extra = case.build_one.get(stem).into_iter().flatten();
        let mut cmd = match kind {
            SourceKind::Ptx => {
                if !text.contains(".target SMXX") {
                    return Err(format!("{}: missing `.target SMXX`", src.display()));
                }
                let ptx = format!("{stem}.{arch}.ptx");
                let body = text.replace(".target SMXX", &format!(".target {arch}"));
                std::fs::write(w.join(&ptx), body)
                    .map_err(|e| io_err("write", &w.join(&ptx), e))?;
                let mut c = Command::new(tools.join("ptxas"));
                c.arg(format!("-arch={arch}"))
                    .args(&case.build)
                    .args(extra)
                    .arg("-c")
                    .arg(&ptx);
                c
            }
            SourceKind::Cu => {
                let cu = format!("{stem}.cu");
                std::fs::write(w.join(&cu), &text).map_err(|e| io_err("write", &w.join(&cu), e))?;
                let mut c = crate::nv_tools::nvcc_command(tools, format!("{sm}{}", case.variant));
                // cicc derives the names of internal-linkage entities
                // (`_INTERNAL_<hash>_...`, e.g. libcu++'s customization
                // point objects in any CUB source) from the source's
                // absolute path: the bare name keeps them independent of
                // the scratch directory.
                c.args(["-Xcicc", &format!("--orig_src_path_name,{cu}")]);
                c.args(&case.build).args(extra).arg(&cu);
                c
            }
        };
        cmd.current_dir(w).arg("-o").arg(&obj);
        let o = output(&mut cmd)?;
        if !o.status.success() || !o.stderr.is_empty() {
            return Err(format!(
                "case {}: `{}` ({}):\n{}",
                case.name,
                show(&cmd),
                o.status,
                String::from_utf8_lossy(&o.stderr)
            ));
        }
        copy(&w.join(&obj), &out.join(&obj))?;
        produced.push(obj);
    }
    let mut outcomes = Vec::new();
    for &sm in &case.archs {
        let arch = case.sm(sm);
        let cubin = format!("nvlink.{arch}.cubin");
        let mut cmd = Command::new(tools.join("nvlink"));
        cmd.current_dir(w)
            .arg(format!("-arch={arch}"))
            .args(&case.options);
        for (stem, pin) in &case.inputs {
            cmd.arg(format!("{stem}.{}.o", case.sm(pin.unwrap_or(sm))));
        }
        cmd.arg("-o").arg(&cubin);
        let o = output(&mut cmd)?;
        let code = o
            .status
            .code()
            .ok_or_else(|| format!("case {}: `{}` killed ({})", case.name, show(&cmd), o.status))?;
        let stderr = String::from_utf8_lossy(&o.stderr);
        if code == 0 {
            if !o.stderr.is_empty() {
                eprintln!(
                    "fixtures: note: case {} sm_{sm}: nvlink succeeded with stderr:\n{stderr}",
                    case.name
                );
            }
            copy(&w.join(&cubin), &out.join(&cubin))?;
            produced.push(cubin);
        } else {
            let err = format!("nvlink.{arch}.err");
            let text = format!("exit: {code}\n{stderr}");
            std::fs::write(out.join(&err), text)
                .map_err(|e| io_err("write", &out.join(&err), e))?;
            produced.push(err);
        }
        outcomes.push((sm, code));
    }
    let wrong: Vec<String> = outcomes
        .iter()
        .filter(|(_, code)| (*code == 0) != case.expect_ok)
        .map(|(sm, code)| format!("sm_{sm} exit {code}"))
        .collect();
    if !wrong.is_empty() {
        return Err(format!(
            "case {}: case.txt says `expect: {}` but nvlink disagrees: {}",
            case.name,
            if case.expect_ok { "ok" } else { "error" },
            wrong.join(", ")
        ));
    }
    produced.sort();
    Ok(produced)
}

fn copy(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
}

fn list_files(dir: &Path) -> Result<Vec<String>, String> {
    let rd = std::fs::read_dir(dir).map_err(|e| io_err("read", dir, e))?;
    let mut v = Vec::new();
    for e in rd {
        let e = e.map_err(|e| io_err("read", dir, e))?;
        v.push(e.file_name().to_string_lossy().into_owned());
    }
    v.sort();
    Ok(v)
}

/// Regenerates one case in place.
fn regenerate(case: &Case, tools: &Path) -> Result<String, String> {
    let out = TempDir::new(&format!("fx-out-{}", case.name))?;
    let produced = generate(case, tools, out.path())?;
    let mut removed = 0;
    for name in list_files(&case.dir)? {
        if classify(&name) != FileClass::Source {
            let p = case.dir.join(&name);
            std::fs::remove_file(&p).map_err(|e| io_err("remove", &p, e))?;
            removed += 1;
        }
    }
    for name in &produced {
        copy(&out.path().join(name), &case.dir.join(name))?;
    }
    Ok(format!(
        "{} files written ({removed} old removed)",
        produced.len()
    ))
}

/// Regenerates one case elsewhere and lists the differences with the committed files.
fn check(case: &Case, tools: &Path) -> Result<Vec<String>, String> {
    let out = TempDir::new(&format!("fx-check-{}", case.name))?;
    let produced = generate(case, tools, out.path())?;
    let mut problems = Vec::new();
    let rel = |name: &str| format!("tests/link/{}/{name}", case.name);
    let committed = list_files(&case.dir)?;
    for name in &committed {
        match classify(name) {
            FileClass::Source => {}
            FileClass::Stray => problems.push(format!(
                "extra (not a source or generated file): {}",
                rel(name)
            )),
            FileClass::Generated if !produced.contains(name) => {
                problems.push(format!("extra (no longer generated): {}", rel(name)));
            }
            FileClass::Generated => {
                let a = std::fs::read(case.dir.join(name))
                    .map_err(|e| io_err("read", &case.dir.join(name), e))?;
                let b = std::fs::read(out.path().join(name))
                    .map_err(|e| io_err("read", &out.path().join(name), e))?;
                if a != b {
                    problems.push(format!("stale: {}", rel(name)));
                }
            }
        }
    }
    for name in &produced {
        if !committed.contains(name) {
            problems.push(format!("missing: {}", rel(name)));
        }
    }
    Ok(problems)
}

/// The tools directory, unpacking the pinned tools first when the default is used.
fn tools() -> Result<PathBuf, String> {
    if std::env::var_os("CULINK_NV_TOOLS").is_some_and(|d| !d.is_empty()) {
        return Ok(tools_dir());
    }
    crate::nv_tools::ensure()
}

/// `cargo xtask fixtures [--check] [CASE...]`.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut check_only = false;
    let mut names = Vec::new();
    for a in args {
        match a.as_str() {
            "--check" => check_only = true,
            s if s.starts_with('-') => {
                return Err(format!(
                    "unknown option `{s}` (usage: cargo xtask fixtures [--check] [CASE...])"
                ))
            }
            s => names.push(s.to_string()),
        }
    }
    let all = case_dirs()?;
    let dirs: Vec<PathBuf> = if names.is_empty() {
        all
    } else {
        names
            .iter()
            .map(|n| {
                all.iter()
                    .find(|d| d.file_name().is_some_and(|f| f == n.as_str()))
                    .cloned()
                    .ok_or_else(|| format!("no case `{n}` in {}", link_dir().display()))
            })
            .collect::<Result<_, _>>()?
    };
    let cases = dirs
        .iter()
        .map(|d| parse_case(d))
        .collect::<Result<Vec<_>, _>>()?;
    let tools = tools()?;
    println!(
        "fixtures: {} {} case(s) with tools from {}",
        if check_only {
            "checking"
        } else {
            "regenerating"
        },
        cases.len(),
        tools.display()
    );

    // One case per worker; results are reported in case order.
    type CaseResult = Result<Vec<String>, String>;
    let results: Mutex<Vec<Option<CaseResult>>> = Mutex::new(vec![None; cases.len()]);
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(cases.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(case) = cases.get(i) else { break };
                let r = if check_only {
                    check(case, &tools)
                } else {
                    regenerate(case, &tools).map(|s| vec![s])
                };
                if let Ok(mut v) = results.lock() {
                    v[i] = Some(r);
                }
            });
        }
    });
    let results = results
        .into_inner()
        .map_err(|_| "worker panicked".to_string())?;
    let mut errors = Vec::new();
    let mut problems = Vec::new();
    for (case, r) in cases.iter().zip(results) {
        match r {
            Some(Ok(v)) if check_only => {
                println!(
                    "  {:<24} {}",
                    case.name,
                    if v.is_empty() { "ok" } else { "DIFFERS" }
                );
                problems.extend(v);
            }
            Some(Ok(v)) => println!("  {:<24} {}", case.name, v.join(" ")),
            Some(Err(e)) => {
                println!("  {:<24} FAILED", case.name);
                errors.push(e);
            }
            None => errors.push(format!("case {}: not processed", case.name)),
        }
    }
    for p in &problems {
        println!("{p}");
    }
    if !errors.is_empty() {
        return Err(errors.join("\n"));
    }
    if !problems.is_empty() {
        return Err(format!(
            "{} fixture file(s) differ from a fresh generation; run `cargo xtask fixtures`",
            problems.len()
        ));
    }
    println!(
        "fixtures: {}",
        if check_only { "all up to date" } else { "done" }
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_files() {
        assert_eq!(classify("case.txt"), FileClass::Source);
        assert_eq!(classify("a.ptx"), FileClass::Source);
        assert_eq!(classify("a.cu"), FileClass::Source);
        assert_eq!(classify("a.sm_90.o"), FileClass::Generated);
        assert_eq!(classify("a.sm_100a.o"), FileClass::Generated);
        assert_eq!(classify("nvlink.sm_100a.cubin"), FileClass::Generated);
        assert_eq!(classify("nvlink.sm_90.cubin"), FileClass::Generated);
        assert_eq!(classify("nvlink.sm_75.err"), FileClass::Generated);
        assert_eq!(classify("a.sm_90.ptx"), FileClass::Stray);
        assert_eq!(classify("a.o"), FileClass::Stray);
        assert_eq!(classify("README"), FileClass::Stray);
    }
}
