//! `gpu-check check BUNDLE [--out FILE] [--deadline SECS] [--jobs N] [--no-self-check] [CASE...]`:
//! every case of a bundle, both cubins, compared; a results table in Markdown
//! (rewritten after every case, so a killed run still leaves its results so
//! far). After `--deadline` seconds the remaining cases are reported NOT RUN;
//! `--jobs` cases (default 4) run at a time. Unless `--no-self-check`, nvlink's
//! cubin runs twice and must agree with itself (else the case is BROKEN:
//! nondeterministic, not culink's fault).
//!
//! A bundle (built by `cargo xtask gpu-check --bundle-only`) is a directory:
//!
//! ```text
//! BUNDLE/gpu-check                 this program
//! BUNDLE/run.sh                    runs it on the device machine
//! BUNDLE/manifest.txt              `key: value` lines: commit, built, cases
//! BUNDLE/cases/<case>/launch.txt   what to run
//! BUNDLE/cases/<case>/culink.cubin culink's link of the case's sm_90 objects
//! BUNDLE/cases/<case>/nvlink.cubin nvlink's (the committed fixture reference)
//! ```
//!
//! Every (case, linker) runs in a child process `gpu-check exec`: nvlink's cubin,
//! culink's, then nvlink's again (the self-check).
//! A case passes when both runs complete every launch and their printf output,
//! buffers and globals (before and after the launches) agree.

use crate::dump::{compare, compare_printf, Dump};
use crate::exec::{open_driver, ExecError, EXIT_NO_DRIVER};
use crate::launch::{LaunchFile, PrintfMode};
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The two linkers, in run order.
pub const LINKERS: [&str; 2] = ["nvlink", "culink"];

/// One case's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Identical results.
    Pass,
    /// culink's cubin differs from nvlink's or fails where nvlink's works.
    Fail(Vec<String>),
    /// nvlink's own run failed: the case (not culink) is broken.
    Broken(String),
    /// Not run (the `--deadline` was reached first).
    NotRun(String),
}

/// A case's row in the results table.
#[derive(Debug, Clone)]
pub struct CaseResult {
    /// Case name.
    pub name: String,
    /// Outcome.
    pub verdict: Verdict,
    /// Launches per run.
    pub launches: usize,
    /// Bytes compared (regions of nvlink's run).
    pub bytes: usize,
    /// printf lines compared.
    pub printf_lines: usize,
    /// Wall time of both runs.
    pub secs: f64,
}

/// What one child run gave.
struct RunOutput {
    dump: Result<Dump, String>,
    stdout: String,
}

/// Runs `exe exec cubin launch dump` with a timeout; captures stdout (printf).
fn run_child(exe: &Path, cubin: &Path, launch: &Path, dump: &Path, timeout: Duration) -> RunOutput {
    let _ = std::fs::remove_file(dump);
    let mut cmd = Command::new(exe);
    cmd.arg("exec")
        .arg(cubin)
        .arg(launch)
        .arg(dump)
        // Load (and so check) every function at cuModuleLoadData, not lazily.
        .env("CUDA_MODULE_LOADING", "EAGER")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return RunOutput {
                dump: Err(format!("cannot start {}: {e}", exe.display())),
                stdout: String::new(),
            }
        }
    };
    let mut out_pipe = child.stdout.take();
    let mut err_pipe = child.stderr.take();
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(p) = out_pipe.as_mut() {
            let _ = p.read_to_end(&mut v);
        }
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(p) = err_pipe.as_mut() {
            let _ = p.read_to_end(&mut v);
        }
        v
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Ok(s),
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break Err(format!("timed out after {} s (killed)", timeout.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => break Err(format!("wait failed: {e}")),
        }
    };
    let stdout = String::from_utf8_lossy(&t_out.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&t_err.join().unwrap_or_default()).into_owned();
    let stderr = stderr.trim();
    let dump = match status {
        Err(e) => Err(e),
        Ok(s) if s.success() => std::fs::read(dump)
            .map_err(|e| format!("no dump: {e}"))
            .and_then(|b| Dump::decode(&b)),
        Ok(s) => Err(format!(
            "exited with {s}{}{}",
            if stderr.is_empty() { "" } else { ": " },
            stderr
        )),
    };
    RunOutput { dump, stdout }
}

/// Runs one case directory of a bundle. With `self_check`, nvlink's cubin runs a
/// second time (after culink's) and must reproduce its first run; otherwise the
/// case is nondeterministic and reported BROKEN rather than blaming culink.
pub fn run_case(exe: &Path, dir: &Path, scratch: &Path, self_check: bool) -> CaseResult {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut res = CaseResult {
        name: name.clone(),
        verdict: Verdict::Pass,
        launches: 0,
        bytes: 0,
        printf_lines: 0,
        secs: 0.0,
    };
    let launch = dir.join("launch.txt");
    let lf = match std::fs::read_to_string(&launch)
        .map_err(|e| format!("cannot read {}: {e}", launch.display()))
        .and_then(|t| LaunchFile::parse(&t, &launch.display().to_string()))
    {
        Ok(l) => l,
        Err(e) => {
            res.verdict = Verdict::Broken(e);
            return res;
        }
    };
    res.launches = lf.launches.len();
    let t = Instant::now();
    let timeout = Duration::from_secs(lf.timeout_s);
    let run = |l: &str, tag: &str| {
        run_child(
            exe,
            &dir.join(format!("{l}.cubin")),
            &launch,
            &scratch.join(format!("{name}.{tag}.dump")),
            timeout,
        )
    };
    let mut runs: Vec<RunOutput> = LINKERS.iter().map(|l| run(l, l)).collect();
    if self_check && runs[0].dump.as_ref().is_ok_and(|d| d.error.is_none()) {
        runs.push(run(LINKERS[0], "nvlink-again"));
    }
    res.secs = t.elapsed().as_secs_f64();
    if let Some(again) = runs.get(2) {
        let labels = ("nvlink", "nvlink again");
        let mut d = match (&runs[0].dump, &again.dump) {
            (Ok(a), Ok(b)) => compare(a, b, labels, &lf.code_pointers),
            (_, Err(e)) => vec![format!("second run: {e}")],
            (Err(e), _) => vec![e.clone()],
        };
        d.extend(compare_printf(
            &runs[0].stdout,
            &again.stdout,
            lf.printf == PrintfMode::Sorted,
            labels,
        ));
        if !d.is_empty() {
            res.verdict = Verdict::Broken(format!(
                "nvlink's cubin does not reproduce its own results (nondeterministic case): {}",
                d.join("; ")
            ));
            return res;
        }
    }
    let (nv, cu) = (&runs[0], &runs[1]);
    let nv_dump = match &nv.dump {
        Ok(d) if d.error.is_none() => d,
        Ok(d) => {
            res.verdict = Verdict::Broken(format!(
                "nvlink's cubin: {}",
                d.error.clone().unwrap_or_default()
            ));
            return res;
        }
        Err(e) => {
            res.verdict = Verdict::Broken(format!("nvlink's cubin: {e}"));
            return res;
        }
    };
    res.bytes = nv_dump.bytes();
    res.printf_lines = nv.stdout.lines().count();
    let cu_dump = match &cu.dump {
        Ok(d) => d,
        Err(e) => {
            res.verdict = Verdict::Fail(vec![format!("culink's cubin: {e}")]);
            return res;
        }
    };
    let labels = ("culink", "nvlink");
    let mut diffs = compare(cu_dump, nv_dump, labels, &lf.code_pointers);
    if let Some(d) = compare_printf(
        &cu.stdout,
        &nv.stdout,
        lf.printf == PrintfMode::Sorted,
        labels,
    ) {
        diffs.push(d);
    }
    if !diffs.is_empty() {
        res.verdict = Verdict::Fail(diffs);
    }
    res
}

/// `YYYY-MM-DD HH:MM UTC` of now.
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = (secs / 86400) as i64;
    let (y, m, d) = civil_from_days(days);
    let rem = secs % 86400;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60
    )
}

/// Days since 1970-01-01 to (year, month, day) (H. Hinnant's algorithm).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `manifest.txt` value of `key`.
fn manifest(bundle: &Path, key: &str) -> Option<String> {
    let t = std::fs::read_to_string(bundle.join("manifest.txt")).ok()?;
    t.lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim() == key)
        .map(|(_, v)| v.trim().to_string())
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', "<br>")
}

/// The results table (see `docs/gpu-validation.md`).
pub fn render(bundle: &Path, header: &[(&str, String)], results: &[CaseResult]) -> String {
    let mut s = String::from("# culink GPU validation results\n\n");
    s.push_str("| ");
    s.push_str(
        &header
            .iter()
            .map(|(k, _)| *k)
            .collect::<Vec<_>>()
            .join(" | "),
    );
    s.push_str(" |\n|");
    s.push_str(&"---|".repeat(header.len()));
    s.push_str("\n| ");
    s.push_str(
        &header
            .iter()
            .map(|(_, v)| md_cell(v))
            .collect::<Vec<_>>()
            .join(" | "),
    );
    s.push_str(" |\n\n");
    let pass = results
        .iter()
        .filter(|r| r.verdict == Verdict::Pass)
        .count();
    let _ = writeln!(
        s,
        "**{pass} of {} cases pass** (bundle `{}`).\n",
        results.len(),
        bundle.display()
    );
    if !results.is_empty() {
        s.push_str("| case | result | launches | bytes compared | printf lines | seconds | detail |\n|---|---|---|---|---|---|---|\n");
    }
    for r in results {
        let (v, detail) = match &r.verdict {
            Verdict::Pass => ("PASS", String::new()),
            Verdict::Fail(d) => ("FAIL", d.join("; ")),
            Verdict::Broken(e) => ("BROKEN", e.clone()),
            Verdict::NotRun(e) => ("NOT RUN", e.clone()),
        };
        let _ = writeln!(
            s,
            "| {} | {v} | {} | {} | {} | {:.2} | {} |",
            r.name,
            r.launches,
            r.bytes,
            r.printf_lines,
            r.secs,
            md_cell(&detail)
        );
    }
    s
}

/// The case directories of a bundle, sorted; only `names` when given.
pub fn case_dirs(bundle: &Path, names: &[String]) -> Result<Vec<PathBuf>, String> {
    let cases = bundle.join("cases");
    let rd = std::fs::read_dir(&cases)
        .map_err(|e| format!("{} is not a gpu-check bundle: {e}", cases.display()))?;
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("launch.txt").is_file())
        .collect();
    v.sort();
    if !names.is_empty() {
        for n in names {
            if !v
                .iter()
                .any(|p| p.file_name().is_some_and(|f| f == n.as_str()))
            {
                return Err(format!("no case `{n}` in {}", cases.display()));
            }
        }
        v.retain(|p| {
            p.file_name()
                .is_some_and(|f| names.iter().any(|n| f == n.as_str()))
        });
    }
    if v.is_empty() {
        return Err(format!("no cases in {}", cases.display()));
    }
    Ok(v)
}

/// `gpu-check check`: returns the exit status (0 all pass, 1 some fail, 2 usage
/// or bundle error, 3 no driver).
pub fn main(args: &[String]) -> i32 {
    let mut bundle = None;
    let mut out = None;
    let mut names = Vec::new();
    let mut deadline = None;
    let mut jobs = 4usize;
    let mut self_check = true;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--no-self-check" => self_check = false,
            "--jobs" => match it.next().and_then(|d| d.parse::<usize>().ok()) {
                Some(j) => jobs = j,
                None => {
                    eprintln!("gpu-check: --jobs needs a number");
                    return 2;
                }
            },
            "--deadline" => match it.next().and_then(|d| d.parse::<u64>().ok()) {
                Some(d) => deadline = Some(Duration::from_secs(d)),
                None => {
                    eprintln!("gpu-check: --deadline needs a number of seconds");
                    return 2;
                }
            },
            "--out" => match it.next() {
                Some(o) => out = Some(PathBuf::from(o)),
                None => {
                    eprintln!("gpu-check: --out needs a file");
                    return 2;
                }
            },
            s if s.starts_with('-') => {
                eprintln!("gpu-check: unknown option `{s}`");
                return 2;
            }
            s if bundle.is_none() => bundle = Some(PathBuf::from(s)),
            s => names.push(s.to_string()),
        }
    }
    let Some(bundle) = bundle else {
        eprintln!(
            "usage: gpu-check check BUNDLE [--out FILE] [--deadline SECS] [--jobs N] [--no-self-check] [CASE...]"
        );
        return 2;
    };
    let dirs = match case_dirs(&bundle, &names) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("gpu-check: {e}");
            return 2;
        }
    };
    let mut header = vec![
        ("date", utc_now()),
        (
            "culink commit",
            manifest(&bundle, "commit").unwrap_or_else(|| "?".into()),
        ),
    ];
    let write_quiet = |text: &str| {
        if let Some(o) = &out {
            if let Err(e) = std::fs::write(o, text) {
                eprintln!("gpu-check: cannot write {}: {e}", o.display());
                return false;
            }
            return true;
        }
        false
    };
    let write_out = |text: &str| {
        if write_quiet(text) {
            if let Some(o) = &out {
                println!("gpu-check: results written to {}", o.display());
            }
        }
    };
    let info = match open_driver() {
        Ok((_, info)) => info,
        Err(ExecError::NoDriver(why)) | Err(ExecError::Failed(why)) => {
            let msg = format!(
                "gpu-check: no CUDA driver: {why}\ngpu-check: NOTHING WAS RUN — this is not a pass (exit status {EXIT_NO_DRIVER})"
            );
            eprintln!("{msg}");
            header.push(("GPU", "none".into()));
            header.push(("result", format!("NOT RUN: no CUDA driver ({why})")));
            write_out(&render(&bundle, &header, &[]));
            return EXIT_NO_DRIVER;
        }
    };
    let driver = format!(
        "{} (CUDA {}.{})",
        info.driver_version,
        info.driver_version / 1000,
        info.driver_version % 1000 / 10
    );
    header.push(("GPU", format!("{} ({} device(s))", info.name, info.count)));
    header.push(("compute capability", format!("{}.{}", info.cc.0, info.cc.1)));
    header.push(("driver", driver));
    println!(
        "gpu-check: {} (sm_{}{}), driver {}, {} case(s)",
        info.name,
        info.cc.0,
        info.cc.1,
        info.driver_version,
        dirs.len()
    );
    if info.cc != (9, 0) {
        let msg = format!(
            "device 0 is sm_{}{}, the bundle's cubins are sm_90 SASS",
            info.cc.0, info.cc.1
        );
        eprintln!("gpu-check: {msg}; NOTHING WAS RUN — this is not a pass");
        header.push(("result", format!("NOT RUN: {msg}")));
        write_out(&render(&bundle, &header, &[]));
        return EXIT_NO_DRIVER;
    }
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("gpu-check: cannot find my own executable: {e}");
            return 2;
        }
    };
    let scratch = std::env::temp_dir().join(format!("gpu-check-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&scratch) {
        eprintln!("gpu-check: cannot create {}: {e}", scratch.display());
        return 2;
    }
    // `jobs` cases at a time: each run is its own process and context, so they
    // share the GPU safely; this mostly hides driver initialization time.
    let start = Instant::now();
    let slots: Mutex<Vec<Option<CaseResult>>> = Mutex::new(vec![None; dirs.len()]);
    let next = AtomicUsize::new(0);
    std::thread::scope(|sc| {
        for _ in 0..jobs.clamp(1, dirs.len()) {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(d) = dirs.get(i) else { break };
                let r = match deadline {
                    Some(dl) if start.elapsed() > dl => CaseResult {
                        name: d
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_default(),
                        verdict: Verdict::NotRun(format!("deadline of {} s reached", dl.as_secs())),
                        launches: 0,
                        bytes: 0,
                        printf_lines: 0,
                        secs: 0.0,
                    },
                    _ => run_case(&exe, d, &scratch, self_check),
                };
                let line = match &r.verdict {
                    Verdict::Pass => "PASS".to_string(),
                    Verdict::Fail(v) => format!("FAIL\n    {}", v.join("\n    ")),
                    Verdict::Broken(e) => format!("BROKEN: {e}"),
                    Verdict::NotRun(e) => format!("NOT RUN: {e}"),
                };
                println!("  {:<28} {line}", r.name);
                if let Ok(mut v) = slots.lock() {
                    v[i] = Some(r);
                    let done: Vec<CaseResult> = v.iter().flatten().cloned().collect();
                    write_quiet(&render(&bundle, &header, &done));
                }
            });
        }
    });
    let results: Vec<CaseResult> = slots
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect();
    let _ = std::fs::remove_dir_all(&scratch);
    let pass = results
        .iter()
        .filter(|r| r.verdict == Verdict::Pass)
        .count();
    println!("gpu-check: {pass} of {} cases pass", results.len());
    write_out(&render(&bundle, &header, &results));
    if pass == results.len() {
        0
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_788), (2026, 12, 1));
    }

    #[test]
    fn renders_a_table() {
        let rows = vec![
            CaseResult {
                name: "a".into(),
                verdict: Verdict::Pass,
                launches: 2,
                bytes: 64,
                printf_lines: 3,
                secs: 0.5,
            },
            CaseResult {
                name: "b".into(),
                verdict: Verdict::Fail(vec!["x|y".into(), "z".into()]),
                launches: 1,
                bytes: 8,
                printf_lines: 0,
                secs: 0.25,
            },
        ];
        let s = render(
            Path::new("B"),
            &[("date", "D".into()), ("GPU", "G".into())],
            &rows,
        );
        assert!(s.contains("| date | GPU |\n|---|---|\n| D | G |\n"), "{s}");
        assert!(s.contains("**1 of 2 cases pass**"));
        assert!(s.contains("| a | PASS | 2 | 64 | 3 | 0.50 |  |\n"));
        assert!(s.contains("| b | FAIL | 1 | 8 | 0 | 0.25 | x\\|y; z |\n"));
    }
}
