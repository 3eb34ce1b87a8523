//! Shared support for the `culink` binary's integration tests (`mod common;`):
//! running the binary, finding the fixtures, scratch directories and the
//! assertions every test file makes.

// Each test file uses only part of this module.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The path of the `culink` binary under test.
pub fn culink_exe() -> &'static str {
    env!("CARGO_BIN_EXE_culink")
}

/// A `culink` command without the environment variables that change what it
/// prints or how it writes (`CULINK_LOG`, `CULINK_TEST_STALL_OUTPUT_MS`).
pub fn culink_command() -> Command {
    let mut cmd = Command::new(culink_exe());
    cmd.env_remove("CULINK_LOG")
        .env_remove("CULINK_TEST_STALL_OUTPUT_MS");
    cmd
}

/// Runs `culink args...` in the current directory.
pub fn culink<S: AsRef<OsStr>>(args: &[S]) -> Output {
    culink_command().args(args).output().expect("run culink")
}

/// Runs `culink args...` in `dir`.
pub fn culink_in<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Output {
    culink_command()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run culink")
}

/// `<workspace>/tests/link/<case>/<file>`.
pub fn fixture(case: &str, file: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/link")
        .join(case)
        .join(file)
        .display()
        .to_string()
}

/// `crates/linker-core/tests/data/<name>`.
pub fn data(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../linker-core/tests/data")
        .join(name)
        .display()
        .to_string()
}

/// Command output as text (lossy UTF-8).
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The name of the test binary this module is compiled into (`cli`,
/// `robustness`, ...).
fn test_binary() -> &'static str {
    module_path!().split("::").next().unwrap_or("test")
}

/// A fresh, empty temporary directory for `tag`:
/// `culink-<test binary>-<tag>-<pid>`, so that test binaries and the tests of
/// one binary (which use different tags) never share one.
pub fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "culink-{}-{tag}-{}",
        test_binary(),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Panics unless `o` exited with status 0 (showing its stderr).
#[track_caller]
pub fn ok(o: &Output) {
    assert_eq!(o.status.code(), Some(0), "stderr:\n{}", text(&o.stderr));
}

/// Panics unless `culink diff --phdrs ours reference` says they are
/// equivalent: `linker_core::diff` finds no difference and `ours` follows the
/// program-header rule.
#[track_caller]
pub fn assert_equivalent(ours: &Path, reference: &Path, what: &str) {
    let o = culink(&[
        OsStr::new("diff"),
        OsStr::new("--phdrs"),
        ours.as_os_str(),
        reference.as_os_str(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{what}: culink diff --phdrs {} {}:\n{}{}",
        ours.display(),
        reference.display(),
        text(&o.stdout),
        text(&o.stderr)
    );
}
