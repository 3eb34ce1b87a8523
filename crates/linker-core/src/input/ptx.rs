//! PTX inputs: compiled to a relocatable cubin by an external `ptxas`
//! (`ptxas -arch=sm_XX -m64 -c in.ptx -o out.o`, the options nvlink's built-in
//! ptxas records), found as `LinkOptions::ptxas`, else
//! `ptxas` on `PATH`. nvlink compiles PTX with a built-in ptxas; culink has none.

use crate::arch::SmArch;
use crate::error::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Whether `data` looks like PTX: text (no NUL in the first 4 KiB, apart from
/// trailing padding) holding both `.version` and `.target`.
pub fn looks_like_ptx(data: &[u8]) -> bool {
    let head = &data[..data.len().min(4096)];
    let text_end = head.iter().position(|&b| b == 0).unwrap_or(head.len());
    if head[text_end..].iter().any(|&b| b != 0) {
        return false;
    }
    let Ok(text) = std::str::from_utf8(&head[..text_end]) else {
        return false;
    };
    let first = text.trim_start();
    (first.starts_with("//") || first.starts_with("/*") || first.starts_with('.'))
        && text.contains(".version")
        && text.contains(".target")
}

/// The ptxas to run: `explicit`, else the first `ptxas` on `PATH`.
pub fn find_ptxas(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let cand = dir.join("ptxas");
            if cand.is_file() {
                return Ok(cand);
            }
        }
    }
    Err(Error::new(
        ErrorKind::Unsupported,
        "PTX input needs ptxas, which culink runs as an external tool: none found on PATH; give one with --ptxas PATH",
    ))
}

/// Compiles `ptx` for `arch` with `ptxas` into a relocatable cubin.
///
/// The PTX is written to a private temporary directory, which is removed
/// afterwards. `name` names the input in errors.
pub fn compile(ptx: &[u8], name: &str, arch: SmArch, ptxas: &Path) -> Result<Vec<u8>> {
    let _span = tracing::info_span!("ptxas", input = name, arch = %arch).entered();
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "culink-ptx-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let io = |what: &str, e: std::io::Error| {
        Error::new(ErrorKind::Io, format!("{what}: {e}")).in_file(name.to_string())
    };
    std::fs::create_dir_all(&dir).map_err(|e| io("cannot create a temporary directory", e))?;
    let result = (|| {
        let src = dir.join("in.ptx");
        let out = dir.join("out.o");
        let end = ptx.iter().position(|&b| b == 0).unwrap_or(ptx.len());
        std::fs::write(&src, &ptx[..end]).map_err(|e| io("cannot write PTX for ptxas", e))?;
        let run = std::process::Command::new(ptxas)
            .arg(format!("-arch={arch}"))
            .arg("-m64")
            .arg("-c")
            .arg(&src)
            .arg("-o")
            .arg(&out)
            .output()
            .map_err(|e| io(&format!("cannot run ptxas '{}'", ptxas.display()), e))?;
        if !run.status.success() {
            let msg = String::from_utf8_lossy(&run.stderr);
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!(
                    "ptxas '{}' failed to compile the PTX for {arch} ({}): {}",
                    ptxas.display(),
                    run.status,
                    msg.trim()
                ),
            )
            .in_file(name.to_string()));
        }
        std::fs::read(&out).map_err(|e| io("cannot read ptxas output", e))
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_detection() {
        assert!(looks_like_ptx(b".version 9.0\n.target sm_90\n\0\0\0"));
        assert!(looks_like_ptx(b"//\n// x\n.version 9.0\n.target sm_90\n"));
        assert!(!looks_like_ptx(b".version 9.0\n"));
        assert!(!looks_like_ptx(b".version 9.0\n.target\0x"));
        assert!(!looks_like_ptx(b"hello .version .target"));
        assert!(!looks_like_ptx(b"\xff\xfe.version .target"));
    }

    #[test]
    fn missing_ptxas_is_a_clear_error() {
        let e = compile(
            b".version 9.0\n.target sm_90\n",
            "x.ptx",
            SmArch::new(90),
            Path::new("/nonexistent/ptxas"),
        )
        .unwrap_err();
        assert_eq!(e.file.as_deref(), Some("x.ptx"));
        assert!(e.message.contains("cannot run ptxas"), "{e}");
    }
}
