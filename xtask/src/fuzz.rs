//! `cargo xtask fuzz`: run culink's fuzz targets (`fuzz/`, see docs/reliability.md).
//!
//! ```text
//! cargo xtask fuzz [--secs N] [--target cubin_reader|link_mutated]...
//!                  [--engine auto|libfuzzer|stable] [--seed S]
//! ```
//!
//! Engines: `libfuzzer` is cargo-fuzz (coverage-guided; needs the nightly
//! toolchain and `cargo install cargo-fuzz`); `stable` is `fuzz-stable`, the
//! in-tree structure-aware mutation driver (seeded PRNG, reproducible, stable
//! Rust). `auto` (the default) takes libFuzzer when both nightly and cargo-fuzz
//! are installed, else the stable driver. Seeds are the objects and cubins under
//! `tests/link` plus synthetic archives and fatbinaries of them. Every target runs `--secs` seconds (default 600); crashes land
//! in `fuzz/artifacts/<target>/`. The summary line counts executions and crashes;
//! any crash makes the command fail.

use crate::util::{show, workspace_root};
use std::path::Path;
use std::process::Command;

/// Both targets, in run order.
const TARGETS: &[&str] = &["cubin_reader", "link_mutated"];

/// What one target's run did.
struct Outcome {
    execs: u64,
    crashes: u64,
}

/// `cargo xtask fuzz [ARGS...]`.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut secs = 600u64;
    let mut targets: Vec<String> = Vec::new();
    let mut engine = String::from("auto");
    let mut seed = 1u64;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--secs" => secs = val()?.parse().map_err(|_| "--secs takes seconds")?,
            "--target" => targets.push(val()?.clone()),
            "--engine" => engine = val()?.clone(),
            "--seed" => seed = val()?.parse().map_err(|_| "--seed takes a number")?,
            _ => return Err(format!("unknown argument {a}")),
        }
    }
    if targets.is_empty() {
        targets = TARGETS.iter().map(|t| t.to_string()).collect();
    }
    if let Some(t) = targets.iter().find(|t| !TARGETS.contains(&t.as_str())) {
        return Err(format!("unknown target {t} (have {TARGETS:?})"));
    }
    let engine = match engine.as_str() {
        "auto" if libfuzzer_available() => "libfuzzer",
        "auto" => "stable",
        "libfuzzer" | "stable" => engine.as_str(),
        e => return Err(format!("unknown engine {e} (auto, libfuzzer, stable)")),
    }
    .to_string();
    println!("xtask fuzz: engine {engine}, {secs} s per target, targets {targets:?}");
    let root = workspace_root();
    let mut total = Outcome {
        execs: 0,
        crashes: 0,
    };
    for t in &targets {
        let o = if engine == "libfuzzer" {
            run_libfuzzer(&root, t, secs)?
        } else {
            run_stable(&root, t, secs, seed)?
        };
        println!(
            "xtask fuzz: {t}: {} executions, {} crashes",
            o.execs, o.crashes
        );
        total.execs += o.execs;
        total.crashes += o.crashes;
    }
    println!(
        "xtask fuzz: total {} executions, {} crashes ({engine})",
        total.execs, total.crashes
    );
    if total.crashes > 0 {
        return Err(format!(
            "{} crashes; inputs in fuzz/artifacts/ (replay: fuzz-stable --replay FILE, \
             or cargo +nightly fuzz run TARGET FILE)",
            total.crashes
        ));
    }
    Ok(())
}

fn libfuzzer_available() -> bool {
    let ok = |cmd: &mut Command| cmd.output().is_ok_and(|o| o.status.success());
    ok(Command::new("rustup").args(["run", "nightly", "rustc", "--version"]))
        && ok(Command::new("cargo").args(["fuzz", "--version"]))
}

/// Copies the seed files (`*.o`, `*.cubin` under `tests/link`) into `dir`.
fn seed_corpus(root: &Path, dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let cases = root.join("tests/link");
    let rd = std::fs::read_dir(&cases).map_err(|e| format!("{}: {e}", cases.display()))?;
    for case in rd.flatten() {
        let Ok(files) = std::fs::read_dir(case.path()) else {
            continue;
        };
        for f in files.flatten() {
            let p = f.path();
            if p.extension().is_some_and(|e| e == "o" || e == "cubin") {
                let name = format!(
                    "{}-{}",
                    case.file_name().to_string_lossy(),
                    f.file_name().to_string_lossy()
                );
                let dst = dir.join(name);
                if !dst.exists() {
                    std::fs::copy(&p, &dst).map_err(|e| format!("{}: {e}", p.display()))?;
                }
            }
        }
    }
    Ok(())
}

fn run_libfuzzer(root: &Path, target: &str, secs: u64) -> Result<Outcome, String> {
    let fuzz = root.join("fuzz");
    let corpus = fuzz.join("corpus").join(target);
    seed_corpus(root, &corpus)?;
    // The synthetic archive/fatbinary seeds, written by the stable driver.
    let mut seeds = stable_driver(root);
    seeds.arg("--write-seeds").arg(&corpus);
    crate::util::run_ok(&mut seeds)?;
    let mut cmd = Command::new("cargo");
    cmd.current_dir(&fuzz)
        .args(["+nightly", "fuzz", "run", target])
        .arg(&corpus)
        .args([
            "--",
            &format!("-max_total_time={secs}"),
            "-rss_limit_mb=2048",
            "-malloc_limit_mb=1024",
            "-print_final_stats=1",
        ])
        .env("RAYON_NUM_THREADS", "1");
    println!("xtask fuzz: {}", show(&cmd));
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run `{}`: {e}", show(&cmd)))?;
    let err = String::from_utf8_lossy(&out.stderr);
    // libFuzzer's final stats: `stat::number_of_executed_units: N`.
    let execs = err
        .lines()
        .find_map(|l| l.strip_prefix("stat::number_of_executed_units:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let crashed = !out.status.success();
    if crashed {
        let tail: Vec<&str> = err.lines().rev().take(40).collect();
        eprintln!("{}", tail.into_iter().rev().collect::<Vec<_>>().join("\n"));
    }
    Ok(Outcome {
        execs,
        crashes: u64::from(crashed),
    })
}

/// `cargo run` of the stable driver, arguments to follow.
fn stable_driver(root: &Path) -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root).args([
        "run",
        "--quiet",
        "--release",
        "--manifest-path",
        "fuzz/Cargo.toml",
        "--no-default-features",
        "--bin",
        "fuzz-stable",
        "--",
    ]);
    cmd
}

fn run_stable(root: &Path, target: &str, secs: u64, seed: u64) -> Result<Outcome, String> {
    let mut cmd = stable_driver(root);
    cmd.args(["--target", target])
        .args(["--secs", &secs.to_string(), "--seed", &seed.to_string()])
        // One core: leave the others to the rest of the machine.
        .env("RAYON_NUM_THREADS", "1");
    println!("xtask fuzz: {}", show(&cmd));
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run `{}`: {e}", show(&cmd)))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprint!("{stderr}");
    // `fuzz-stable: target=T execs=N crashes=C unique=U secs=S`
    let field = |k: &str| -> Option<u64> {
        stdout
            .lines()
            .rev()
            .find(|l| l.starts_with("fuzz-stable: target="))?
            .split_whitespace()
            .find_map(|w| w.strip_prefix(k))?
            .parse()
            .ok()
    };
    match (field("execs="), field("crashes=")) {
        (Some(execs), Some(crashes)) => Ok(Outcome { execs, crashes }),
        // Aborted (oversized allocation) or failed to build.
        _ if out.status.success() => Err(format!("no summary from `{}`", show(&cmd))),
        _ => Ok(Outcome {
            execs: 0,
            crashes: 1,
        }),
    }
}
