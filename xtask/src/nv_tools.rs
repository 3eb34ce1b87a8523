//! `cargo xtask nv-tools`: the pinned NVIDIA tools, from PyPI wheels.
//!
//! Layout under `target/nv-tools/`:
//! * `wheels/` — the downloaded `.whl` files (the download cache: a wheel that is
//!   present is never downloaded again, so this works offline once cached);
//! * `root/` — every wheel unpacked; the toolkit is `root/nvidia/cu13/` with
//!   `bin/`, `include/`, `lib/` (+ the `lib64 -> lib` link nvcc's `-L` needs) and
//!   `nvvm/bin/cicc`;
//! * `bin` — a symlink to `root/nvidia/cu13/bin`. It is a *directory* symlink on
//!   purpose: nvcc locates `nvcc.profile`, `cicc` and the headers relative to the
//!   directory it was invoked from (`_HERE_/..`), which breaks with per-file symlinks
//!   but works through a directory link because the kernel resolves `bin/..`
//!   physically;
//! * `stamp` — written last; when it matches the pinned list nothing is done.
//!
//! nvcc needs nothing else from the wheels' layout: the wheel's `nvcc.profile`
//! already points at `$(TOP)/nvvm/bin` and `$(TOP)/include`, with `gcc` (12) from
//! `PATH` as host compiler (`CULINK_NVCC_CCBIN` overrides it, passed as `-ccbin`).

use crate::util::{io_err, output, run_ok, show, workspace_root, TempDir};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Pinned wheels: (PyPI name, version). nvcc/ptxas/nvlink/fatbinary are the
/// oracle (13.0.88); cuobjdump/nvdisasm are the newer readers (13.2.86); the rest
/// is what `nvcc -rdc=true -dc` needs (cicc, CUDA 13.0 headers) and
/// libnvJitLink, which culink loads for `-dlto` links (`lib/libnvJitLink.so.13`).
pub const WHEELS: &[(&str, &str)] = &[
    ("nvidia-cuda-nvcc", "13.0.88"),
    ("nvidia-cuda-cuobjdump", "13.2.86"),
    ("nvidia-cuda-nvdisasm", "13.2.86"),
    ("nvidia-nvvm", "13.0.88"),
    ("nvidia-cuda-runtime", "13.0.96"),
    ("nvidia-cuda-crt", "13.0.88"),
    ("nvidia-cuda-cccl", "13.0.85"),
    ("nvidia-nvjitlink", "13.0.88"),
];

/// Tools that must be present in the tools dir, with the version string
/// `--version` must print.
pub const TOOLS: &[(&str, &str)] = &[
    ("ptxas", "V13.0.88"),
    ("nvlink", "V13.0.88"),
    ("fatbinary", "V13.0.88"),
    ("nvcc", "V13.0.88"),
    ("cuobjdump", "V13.2.86"),
    ("nvdisasm", "V13.2.86"),
];

/// Bump when the unpacked layout changes, so stale trees are rebuilt.
const LAYOUT_VERSION: u32 = 1;

fn base() -> PathBuf {
    workspace_root().join("target/nv-tools")
}

fn stamp_text() -> String {
    let mut s = format!("culink nv-tools layout {LAYOUT_VERSION}\n");
    for (n, v) in WHEELS {
        s.push_str(&format!("{n}=={v}\n"));
    }
    s
}

/// `cargo xtask nv-tools`.
pub fn run(args: &[String]) -> Result<(), String> {
    if let Some(a) = args.first() {
        return Err(format!(
            "unexpected argument `{a}` (usage: cargo xtask nv-tools)"
        ));
    }
    let bin = ensure()?;
    println!("nv-tools: ready in {}", bin.display());
    Ok(())
}

/// Makes sure the pinned tools are unpacked and working; returns the `bin` dir.
pub fn ensure() -> Result<PathBuf, String> {
    let base = base();
    let bin = base.join("bin");
    let stamp = base.join("stamp");
    let up_to_date = std::fs::read_to_string(&stamp).is_ok_and(|s| s == stamp_text())
        && TOOLS.iter().all(|(t, _)| bin.join(t).is_file());
    if up_to_date {
        println!("nv-tools: up to date ({})", stamp.display());
        return Ok(bin);
    }
    let _ = std::fs::remove_file(&stamp);
    let wheels = fetch_wheels(&base.join("wheels"))?;
    unpack(&base, &wheels)?;
    check_versions(&bin)?;
    check_nvcc(&bin)?;
    std::fs::write(&stamp, stamp_text()).map_err(|e| io_err("write", &stamp, e))?;
    Ok(bin)
}

/// The wheel file for `name==version` in `dir`, if downloaded.
fn find_wheel(dir: &Path, name: &str, version: &str) -> Option<PathBuf> {
    let prefix = format!("{}-{version}-", name.replace('-', "_"));
    let rd = std::fs::read_dir(dir).ok()?;
    let mut found: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|f| f.to_str())
                .is_some_and(|f| f.starts_with(&prefix) && f.ends_with(".whl"))
        })
        .collect();
    found.sort();
    found.pop()
}

fn fetch_wheels(dir: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| io_err("create", dir, e))?;
    let missing: Vec<String> = WHEELS
        .iter()
        .filter(|(n, v)| find_wheel(dir, n, v).is_none())
        .map(|(n, v)| format!("{n}=={v}"))
        .collect();
    if !missing.is_empty() {
        println!("nv-tools: downloading {}", missing.join(" "));
        let mut cmd = Command::new("python3");
        cmd.args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:"])
            .arg("-d")
            .arg(dir)
            .args(&missing);
        let st = cmd
            .status()
            .map_err(|e| format!("cannot run `{}`: {e}", show(&cmd)))?;
        if !st.success() {
            return Err(format!("`{}` failed ({st})", show(&cmd)));
        }
    }
    WHEELS
        .iter()
        .map(|(n, v)| {
            find_wheel(dir, n, v).ok_or_else(|| {
                format!(
                    "wheel {n}=={v} not found in {} after download",
                    dir.display()
                )
            })
        })
        .collect()
}

/// Unpacks the wheels with Python's zipfile (no `unzip` needed), restoring the
/// permission bits zipfile drops, then builds the links.
const UNPACK_PY: &str = r#"
import os, sys, zipfile
root = sys.argv[1]
for whl in sys.argv[2:]:
    with zipfile.ZipFile(whl) as z:
        for info in z.infolist():
            path = z.extract(info, root)
            mode = (info.external_attr >> 16) & 0o777
            if mode and not info.is_dir():
                os.chmod(path, mode)
"#;

fn unpack(base: &Path, wheels: &[PathBuf]) -> Result<(), String> {
    let root = base.join("root");
    if root.exists() {
        std::fs::remove_dir_all(&root).map_err(|e| io_err("remove", &root, e))?;
    }
    std::fs::create_dir_all(&root).map_err(|e| io_err("create", &root, e))?;
    println!(
        "nv-tools: unpacking {} wheels into {}",
        wheels.len(),
        root.display()
    );
    run_ok(
        Command::new("python3")
            .arg("-c")
            .arg(UNPACK_PY)
            .arg(&root)
            .args(wheels),
    )?;
    let cuda = root.join("nvidia/cu13");
    for d in ["bin", "nvvm/bin"] {
        chmod_x_all(&cuda.join(d))?;
    }
    // nvcc passes -L<top>/lib64; the wheels ship lib/.
    symlink("lib", &cuda.join("lib64"))?;
    let bin = base.join("bin");
    if bin.symlink_metadata().is_ok() {
        if bin.is_dir() && !bin.is_symlink() {
            std::fs::remove_dir_all(&bin).map_err(|e| io_err("remove", &bin, e))?;
        } else {
            std::fs::remove_file(&bin).map_err(|e| io_err("remove", &bin, e))?;
        }
    }
    symlink("root/nvidia/cu13/bin", &bin)
}

fn symlink(target: &str, link: &Path) -> Result<(), String> {
    std::os::unix::fs::symlink(target, link)
        .map_err(|e| format!("cannot link {} -> {target}: {e}", link.display()))
}

fn chmod_x_all(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let rd = std::fs::read_dir(dir).map_err(|e| io_err("read", dir, e))?;
    for e in rd {
        let p = e.map_err(|e| io_err("read", dir, e))?.path();
        if p.is_file() {
            let meta = std::fs::metadata(&p).map_err(|e| io_err("stat", &p, e))?;
            let mut perm = meta.permissions();
            perm.set_mode(perm.mode() | 0o755);
            std::fs::set_permissions(&p, perm).map_err(|e| io_err("chmod", &p, e))?;
        }
    }
    Ok(())
}

/// Runs `TOOL --version` for every tool and checks the pinned version.
pub fn check_versions(bin: &Path) -> Result<(), String> {
    for (tool, want) in TOOLS {
        let out = run_ok(Command::new(bin.join(tool)).arg("--version"))?;
        let text = String::from_utf8_lossy(&out.stdout);
        if !text.contains(want) {
            return Err(format!("{tool} --version does not mention {want}:\n{text}"));
        }
        let line = text.lines().rev().find(|l| l.contains(want)).unwrap_or("");
        println!("nv-tools: {tool:<10} {}", line.trim());
    }
    Ok(())
}

/// The nvcc command producing an ET_REL cubin for `sm` from a `.cu` file.
pub fn nvcc_command(bin: &Path, sm: impl std::fmt::Display) -> Command {
    let mut cmd = Command::new(bin.join("nvcc"));
    if let Some(cc) = std::env::var_os("CULINK_NVCC_CCBIN").filter(|c| !c.is_empty()) {
        cmd.arg("-ccbin").arg(cc);
    }
    cmd.arg(format!("-arch=sm_{sm}"))
        .args(["-rdc=true", "-dc", "--cubin"]);
    cmd
}

/// Checks that `nvcc -rdc=true -dc --cubin` works from the unpacked layout.
fn check_nvcc(bin: &Path) -> Result<(), String> {
    let tmp = TempDir::new("nvcc-check")?;
    let src = tmp.path().join("t.cu");
    std::fs::write(
        &src,
        "extern __device__ int add_one(int);\n__global__ void k(int *o) { o[0] = add_one(threadIdx.x); }\n",
    )
    .map_err(|e| io_err("write", &src, e))?;
    let mut cmd = nvcc_command(bin, 90);
    cmd.current_dir(tmp.path()).args(["t.cu", "-o", "t.o"]);
    let out = output(&mut cmd)?;
    if !out.status.success() {
        return Err(format!(
            "nvcc cannot build device code from the unpacked wheels: `{}` failed ({}):\n{}",
            show(&cmd),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let obj = tmp.path().join("t.o");
    let bytes = std::fs::read(&obj).map_err(|e| io_err("read", &obj, e))?;
    if bytes.len() < 18 || &bytes[..4] != b"\x7fELF" || bytes[16] != 1 || bytes[17] != 0 {
        return Err("nvcc -rdc=true -dc --cubin did not produce an ET_REL ELF".into());
    }
    println!("nv-tools: nvcc -rdc=true -dc --cubin works (sm_90 ET_REL)");
    Ok(())
}
