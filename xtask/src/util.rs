//! Small helpers shared by the subcommands: paths, temp dirs, running tools.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

/// The workspace root (the parent of the `xtask` crate).
pub fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// Whether we run under CI (`CI=true`): missing tools are then fatal.
pub fn is_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// The directory holding the NVIDIA tools: `$CULINK_NV_TOOLS` or
/// `<workspace>/target/nv-tools/bin`, made absolute when it exists (tools are run
/// from scratch directories).
pub fn tools_dir() -> PathBuf {
    let dir = match std::env::var_os("CULINK_NV_TOOLS") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => workspace_root().join("target/nv-tools/bin"),
    };
    dir.canonicalize().unwrap_or(dir)
}

/// A fresh, empty scratch directory under `target/xtask-tmp`, removed on drop.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// Creates `target/xtask-tmp/<tag>-<pid>-<n>`.
    pub fn new(tag: &str) -> Result<Self, String> {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = workspace_root()
            .join("target/xtask-tmp")
            .join(format!("{tag}-{}-{n}", std::process::id()));
        if path.exists() {
            std::fs::remove_dir_all(&path).map_err(|e| io_err("remove", &path, e))?;
        }
        std::fs::create_dir_all(&path).map_err(|e| io_err("create", &path, e))?;
        Ok(Self { path })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Formats an I/O error with the operation and path.
pub fn io_err(op: &str, path: &Path, e: std::io::Error) -> String {
    format!("cannot {op} {}: {e}", path.display())
}

/// Renders a command line for messages.
pub fn show(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// Runs `cmd` capturing stdout/stderr; an error only if it could not be started.
pub fn output(cmd: &mut Command) -> Result<Output, String> {
    cmd.output()
        .map_err(|e| format!("cannot run `{}`: {e}", show(cmd)))
}

/// Runs `cmd` capturing output and fails (with its stderr) unless it exits 0.
pub fn run_ok(cmd: &mut Command) -> Result<Output, String> {
    let out = output(cmd)?;
    if !out.status.success() {
        return Err(format!(
            "`{}` failed ({}):\n{}{}",
            show(cmd),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(out)
}
