//! PTX inputs: compiled to a relocatable cubin by an external `ptxas`
//! (`ptxas [options] -arch=sm_XX -m64 -c culink-jit.ptx -o elf.o`, the
//! options nvlink's built-in ptxas records), found as `LinkOptions::ptxas`,
//! else `ptxas` on `PATH`. nvlink compiles PTX with a built-in ptxas; culink
//! has none.
//!
//! ptxas records its options in the object's `.note.nv.tkinfo` in a canonical
//! form and order (`-maxrregcount 32 -O 1 -arch sm_80 -m 64 -c`), as nvlink's
//! built-in one does; with `-g` (and `-G` PTX) it also records the input and
//! output file names (`culink-jit.ptx -g  -o elf.o -arch ...`), which
//! nvlink's has none of: [`compile`] takes them out of the note again.

use crate::arch::SmArch;
use crate::error::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Whether `data` looks like PTX: text (a terminating NUL, or NUL padding,
/// allowed) that starts with a directive or a comment and whose first 4 KiB
/// hold both `.version` and `.target`.
pub fn looks_like_ptx(data: &[u8]) -> bool {
    let head = &data[..data.len().min(4096)];
    let head = match head.iter().position(|&b| b == 0) {
        Some(p) if data[p..].iter().all(|&b| b == 0) => &head[..p],
        Some(_) => return false,
        None => head,
    };
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        // The 4 KiB cut may split a UTF-8 sequence: judge the valid prefix.
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return false,
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
        ErrorKind::Compile,
        "PTX input needs ptxas, which culink runs as an external tool: none found on PATH; give one with --ptxas PATH",
    ))
}

/// The names the PTX and the object have in ptxas' temporary directory. With
/// `-g` ptxas records the object's name in the tkinfo note's object field;
/// nvlink's built-in ptxas records `elf.o` there (measured).
const JIT_PTX: &str = "culink-jit.ptx";
const JIT_OBJ: &str = "elf.o";

/// A cubin compiled from PTX, with what ptxas printed.
#[derive(Debug)]
pub struct Compiled {
    /// The relocatable cubin.
    pub image: Vec<u8>,
    /// ptxas' warnings (`ptxas warning : ...` lines, without that prefix).
    pub warnings: Vec<String>,
}

/// Compiles `ptx` for `arch` with `ptxas` into a relocatable cubin, with the
/// ptxas `options` first (e.g. `-g`, `--generate-line-info`, `-O1`).
///
/// The PTX is written to a private temporary directory, which is removed
/// afterwards. `name` names the input in errors.
pub fn compile(
    ptx: &[u8],
    name: &str,
    arch: SmArch,
    ptxas: &Path,
    options: &[String],
) -> Result<Compiled> {
    run(ptx, name, arch, ptxas, options, true)
}

/// Compiles `ptx` as a whole program (`ptxas` without `-c`): the executable
/// cubin nvlink writes for a link-time optimized program that needs nothing
/// else (see [`compile`] for the rest).
pub fn compile_program(
    ptx: &[u8],
    name: &str,
    arch: SmArch,
    ptxas: &Path,
    options: &[String],
) -> Result<Compiled> {
    run(ptx, name, arch, ptxas, options, false)
}

/// Runs ptxas on `ptx`, with `-c` when `relocatable`.
fn run(
    ptx: &[u8],
    name: &str,
    arch: SmArch,
    ptxas: &Path,
    options: &[String],
    relocatable: bool,
) -> Result<Compiled> {
    let _span = tracing::info_span!("ptxas", input = name, arch = %arch, relocatable).entered();
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
        let src = dir.join(JIT_PTX);
        let out = dir.join(JIT_OBJ);
        let end = ptx.iter().position(|&b| b == 0).unwrap_or(ptx.len());
        std::fs::write(&src, &ptx[..end]).map_err(|e| io("cannot write PTX for ptxas", e))?;
        let run = std::process::Command::new(ptxas)
            .args(options)
            .arg(format!("-arch={arch}"))
            .arg("-m64")
            .args(relocatable.then_some("-c"))
            .arg(&src)
            .arg("-o")
            .arg(&out)
            .output()
            .map_err(|e| {
                Error::new(
                    ErrorKind::Compile,
                    format!("cannot run ptxas '{}': {e}", ptxas.display()),
                )
                .in_file(name.to_string())
            })?;
        if !run.status.success() {
            let msg = String::from_utf8_lossy(&run.stderr);
            return Err(Error::new(
                ErrorKind::Compile,
                format!(
                    "ptxas '{}' failed to compile the PTX for {arch} ({}): {}",
                    ptxas.display(),
                    run.status,
                    msg.trim()
                ),
            )
            .in_file(name.to_string()));
        }
        let mut image = std::fs::read(&out).map_err(|e| io("cannot read ptxas output", e))?;
        forget_file_names(&mut image);
        let warnings = String::from_utf8_lossy(&run.stderr)
            .lines()
            .filter_map(|l| l.strip_prefix("ptxas warning :"))
            .map(|w| w.trim().to_string())
            .collect();
        Ok(Compiled { image, warnings })
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Takes ptxas' record of the temporary file names out of the arguments of
/// its `.note.nv.tkinfo` entry in `image` (`culink-jit.ptx -g  -o elf.o
/// -arch sm_80 ...` becomes `-g  -arch sm_80 ...`, what nvlink's
/// built-in ptxas records), in place: the shorter string is NUL-padded to the
/// old one's length, so no offset in the file moves.
fn forget_file_names(image: &mut [u8]) {
    let Some(at) = tkinfo_args_span(image) else {
        return;
    };
    let old = image[at.clone()].to_vec();
    let Ok(text) = std::str::from_utf8(&old) else {
        return;
    };
    let lead = format!("{JIT_PTX} ");
    let out = format!("-o {JIT_OBJ} ");
    let new = text
        .strip_prefix(&lead)
        .unwrap_or(text)
        .replacen(&out, "", 1);
    if new.len() == text.len() {
        return;
    }
    let dst = &mut image[at];
    dst.fill(0);
    dst[..new.len()].copy_from_slice(new.as_bytes());
}

/// The file range of the arguments string of the ptxas entry of the
/// `.note.nv.tkinfo` section of `image`.
fn tkinfo_args_span(image: &[u8]) -> Option<std::ops::Range<usize>> {
    let c = crate::cubin::Cubin::parse(image).ok()?;
    let s = c
        .sections
        .iter()
        .find(|s| s.sh_type == crate::elf::SHT_NOTE && s.name == ".note.nv.tkinfo")?;
    let base = usize::try_from(s.offset).ok()?;
    for n in crate::cubin::notes::parse_notes(s.data).ok()? {
        let Some(Ok(tk)) = n.tkinfo() else { continue };
        if tk.tool_name != b"ptxas" {
            continue;
        }
        // The string's position in the section (it borrows from it).
        let args = tk.tool_args.as_ptr() as usize - s.data.as_ptr() as usize;
        return Some(base + args..base + args + tk.tool_args.len());
    }
    None
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
        // The 4 KiB cut falls inside a two-byte character of a comment.
        let mut long = b".version 9.0\n.target sm_90\n//".to_vec();
        long.resize(4095, b'x');
        long.extend_from_slice("\u{e9}\n".as_bytes());
        assert!(looks_like_ptx(&long));
    }

    #[test]
    fn missing_ptxas_is_a_clear_error() {
        let e = compile(
            b".version 9.0\n.target sm_90\n",
            "x.ptx",
            SmArch::new(90),
            Path::new("/nonexistent/ptxas"),
            &[],
        )
        .unwrap_err();
        assert_eq!(e.file.as_deref(), Some("x.ptx"));
        assert_eq!(e.kind, ErrorKind::Compile);
        assert!(e.message.contains("cannot run ptxas"), "{e}");
    }
}
