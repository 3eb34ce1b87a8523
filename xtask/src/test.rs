//! `cargo xtask test`: the NVIDIA tools, then `cargo test --workspace`.
//!
//! Under `CI=true` a failure to get the tools is fatal (the oracle tests would
//! otherwise be skipped silently); elsewhere it is a warning and the tests that
//! need the tools skip themselves. Extra arguments go to `cargo test`. Under
//! `CI=true` a passing test run is followed by a bounded fuzz pass
//! (`cargo xtask fuzz --engine stable --secs 30`).

use crate::util::{is_ci, show, tools_dir, workspace_root};
use std::process::Command;

/// Seconds per fuzz target of the bounded pass `cargo xtask test` runs under `CI=true`.
const CI_FUZZ_SECS: u64 = 30;

/// `cargo xtask test [ARGS...]`.
pub fn run(args: &[String]) -> Result<(), String> {
    let tools = if std::env::var_os("CULINK_NV_TOOLS").is_some_and(|d| !d.is_empty()) {
        // Absolute, so the tests (run from each crate's directory) find it too.
        let dir = tools_dir();
        println!("xtask test: using CULINK_NV_TOOLS={}", dir.display());
        Some(dir)
    } else {
        match crate::nv_tools::ensure() {
            Ok(bin) => Some(bin),
            Err(e) if is_ci() => {
                return Err(format!("CI=true and the NVIDIA tools are unavailable: {e}"))
            }
            Err(e) => {
                eprintln!(
                    "xtask test: warning: NVIDIA tools unavailable, oracle tests will skip: {e}"
                );
                None
            }
        }
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace_root())
        .args(["test", "--workspace"])
        .args(args);
    if let Some(dir) = tools {
        cmd.env("CULINK_NV_TOOLS", dir);
    }
    println!("xtask test: {}", show(&cmd));
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run `{}`: {e}", show(&cmd)))?;
    match status.code() {
        // Under CI, a short bounded fuzz pass (stable engine: no nightly needed).
        Some(0) if is_ci() => crate::fuzz::run(&[
            "--engine".into(),
            "stable".into(),
            "--secs".into(),
            CI_FUZZ_SECS.to_string(),
        ]),
        Some(0) => Ok(()),
        Some(code) => {
            eprintln!("xtask test: cargo test failed (exit {code})");
            std::process::exit(code)
        }
        None => Err(format!("cargo test was killed ({status})")),
    }
}
