//! `culink nvcc-shim --cuda PATH --into DIR`: a shadow CUDA toolkit whose
//! `nvcc -dlink` device-links with culink.
//!
//! nvcc runs the `nvlink` in its own `bin/` directory (not the first one on
//! `PATH`) and finds everything else relative to the directory it was invoked
//! from (`_HERE_/..` in `nvcc.profile`). So `DIR` gets a symlink to every entry
//! of the real toolkit except `bin/`, and `DIR/bin/` a symlink to every entry of
//! the real `bin/` except `nvlink` (a symlink to this culink binary, which
//! behaves as nvlink when invoked under that name) and `nvcc.profile` (a copy).
//! `DIR/bin/nvcc` (or CMake's `CMAKE_CUDA_COMPILER=DIR/bin/nvcc`) then works
//! as the real nvcc, with culink as the device linker.

use std::io;
use std::path::{Path, PathBuf};

/// The file that marks a directory as a shadow toolkit culink made (so that
/// running the command again may replace it).
pub const MARKER: &str = ".culink-nvcc-shim";

/// The usage line of the subcommand.
pub const USAGE: &str = "usage: culink nvcc-shim --cuda CUDA_TOOLKIT_DIR --into NEW_DIR";

/// Parsed `nvcc-shim` arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShimArgs {
    /// The real toolkit (the directory holding `bin/nvcc`).
    pub cuda: PathBuf,
    /// Where the shadow toolkit is created.
    pub into: PathBuf,
}

/// Parses `--cuda PATH --into DIR` (also `--cuda=PATH`, `--into=DIR`).
pub fn parse_args(args: &[String]) -> Result<ShimArgs, String> {
    let mut cuda = None;
    let mut into = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (a.as_str(), None),
        };
        let slot = match name {
            "--cuda" | "-cuda" => &mut cuda,
            "--into" | "-into" => &mut into,
            _ => return Err(format!("unknown argument '{a}'; {USAGE}")),
        };
        let v = match inline {
            Some(v) => v,
            None => it
                .next()
                .cloned()
                .ok_or_else(|| format!("'{a}' needs a value; {USAGE}"))?,
        };
        *slot = Some(PathBuf::from(v));
    }
    match (cuda, into) {
        (Some(cuda), Some(into)) => Ok(ShimArgs { cuda, into }),
        _ => Err(USAGE.to_string()),
    }
}

fn ctx(what: impl std::fmt::Display) -> impl FnOnce(io::Error) -> String {
    move |e| format!("{what}: {e}")
}

/// Creates the shadow toolkit; `culink` is the binary `bin/nvlink` points to.
/// Returns the real toolkit root used.
pub fn create(args: &ShimArgs, culink: &Path) -> Result<PathBuf, String> {
    // The real bin directory (target/nv-tools/bin may itself be a link to a
    // directory); the toolkit root is its parent.
    let bin = std::fs::canonicalize(args.cuda.join("bin"))
        .map_err(ctx(format!("{}: no bin/ directory", args.cuda.display())))?;
    if !bin.join("nvcc").is_file() {
        return Err(format!(
            "{}: not a CUDA toolkit (no bin/nvcc)",
            args.cuda.display()
        ));
    }
    let root = bin
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| format!("{}: bin/ has no parent", bin.display()))?;
    let culink = std::fs::canonicalize(culink).map_err(ctx(culink.display()))?;
    let into = &args.into;
    if into.exists() {
        let empty = std::fs::read_dir(into)
            .map_err(ctx(into.display()))?
            .next()
            .is_none();
        if !empty && !into.join(MARKER).is_file() {
            return Err(format!(
                "{}: exists and is not a shadow toolkit made by culink; not touched",
                into.display()
            ));
        }
        std::fs::remove_dir_all(into).map_err(ctx(into.display()))?;
    }
    let into_bin = into.join("bin");
    std::fs::create_dir_all(&into_bin).map_err(ctx(into_bin.display()))?;
    for entry in std::fs::read_dir(&root).map_err(ctx(root.display()))? {
        let entry = entry.map_err(ctx(root.display()))?;
        if entry.file_name() == "bin" {
            continue;
        }
        symlink(&entry.path(), &into.join(entry.file_name()))?;
    }
    for entry in std::fs::read_dir(&bin).map_err(ctx(bin.display()))? {
        let entry = entry.map_err(ctx(bin.display()))?;
        let name = entry.file_name();
        let dest = into_bin.join(&name);
        if name == "nvlink" {
            continue;
        } else if name == "nvcc.profile" {
            std::fs::copy(entry.path(), &dest).map_err(ctx(dest.display()))?;
        } else {
            symlink(&entry.path(), &dest)?;
        }
    }
    symlink(&culink, &into_bin.join("nvlink"))?;
    std::fs::write(
        into.join(MARKER),
        format!(
            "shadow CUDA toolkit made by culink nvcc-shim\ntoolkit: {}\nnvlink: {}\n",
            root.display(),
            culink.display()
        ),
    )
    .map_err(ctx(into.join(MARKER).display()))?;
    Ok(root)
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> Result<(), String> {
    std::os::unix::fs::symlink(target, link).map_err(ctx(format!(
        "cannot link {} -> {}",
        link.display(),
        target.display()
    )))
}

#[cfg(not(unix))]
fn symlink(_target: &Path, link: &Path) -> Result<(), String> {
    Err(format!(
        "{}: the shadow toolkit needs symbolic links (Unix only)",
        link.display()
    ))
}

/// Whether the program was invoked under the name `nvlink` (a shadow
/// toolkit's `bin/nvlink`), where it behaves as the nvlink command line.
pub fn invoked_as_nvlink(argv0: Option<&std::ffi::OsStr>) -> bool {
    argv0
        .map(Path::new)
        .and_then(Path::file_stem)
        .is_some_and(|n| n == "nvlink")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn args() {
        let want = ShimArgs {
            cuda: "/c".into(),
            into: "/d".into(),
        };
        assert_eq!(
            parse_args(&v(&["--cuda", "/c", "--into", "/d"])),
            Ok(want.clone())
        );
        assert_eq!(parse_args(&v(&["--into=/d", "--cuda=/c"])), Ok(want));
        assert!(parse_args(&v(&["--cuda", "/c"])).is_err());
        assert!(parse_args(&v(&["--cuda"])).is_err());
        assert!(parse_args(&v(&["--frob", "x"])).is_err());
    }

    #[test]
    fn argv0() {
        use std::ffi::OsStr;
        assert!(invoked_as_nvlink(Some(OsStr::new("/x/bin/nvlink"))));
        assert!(invoked_as_nvlink(Some(OsStr::new("nvlink"))));
        assert!(!invoked_as_nvlink(Some(OsStr::new("/x/culink"))));
        assert!(!invoked_as_nvlink(None));
    }

    #[cfg(unix)]
    #[test]
    fn builds_a_shadow_tree() {
        let base = std::env::temp_dir().join(format!("culink-shim-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let real = base.join("real");
        std::fs::create_dir_all(real.join("bin")).unwrap();
        std::fs::create_dir_all(real.join("include")).unwrap();
        for f in ["nvcc", "nvlink", "ptxas", "nvcc.profile"] {
            std::fs::write(real.join("bin").join(f), f).unwrap();
        }
        let exe = base.join("culink-bin");
        std::fs::write(&exe, "exe").unwrap();
        let into = base.join("shadow");
        let args = ShimArgs {
            cuda: real.clone(),
            into: into.clone(),
        };
        create(&args, &exe).unwrap();
        let link = |p: &str| std::fs::read_link(into.join(p)).unwrap();
        assert_eq!(link("bin/nvlink"), std::fs::canonicalize(&exe).unwrap());
        assert_eq!(
            link("bin/nvcc"),
            std::fs::canonicalize(&real).unwrap().join("bin/nvcc")
        );
        assert!(link("include").ends_with("include"));
        let profile = into.join("bin/nvcc.profile");
        assert!(std::fs::symlink_metadata(&profile).unwrap().is_file());
        // Again: replaces its own tree.
        create(&args, &exe).unwrap();
        // A foreign non-empty directory is refused.
        let foreign = base.join("foreign");
        std::fs::create_dir_all(&foreign).unwrap();
        std::fs::write(foreign.join("keep"), "x").unwrap();
        let e = create(
            &ShimArgs {
                cuda: real,
                into: foreign.clone(),
            },
            &exe,
        )
        .unwrap_err();
        assert!(e.contains("not touched"), "{e}");
        assert!(foreign.join("keep").is_file());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
