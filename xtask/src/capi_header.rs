//! `cargo xtask capi-header [--check]`: generate `crates/linker-capi/include/culink.h`
//! from `crates/linker-capi/src/lib.rs` with cbindgen (settings in
//! `crates/linker-capi/cbindgen.toml`). `--check` only compares, and fails when the
//! committed header is out of date; the test below does the same on every
//! `cargo test`.

use crate::util::workspace_root;
use std::path::PathBuf;

/// The committed header's path.
fn header_path() -> PathBuf {
    workspace_root().join("crates/linker-capi/include/culink.h")
}

/// The header cbindgen generates from the current sources.
pub fn generate() -> Result<String, String> {
    let crate_dir = workspace_root().join("crates/linker-capi");
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .map_err(|e| format!("cbindgen.toml: {e}"))?;
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(crate_dir.join("src/lib.rs"))
        .generate()
        .map_err(|e| format!("cbindgen: {e}"))?;
    let mut out = Vec::new();
    bindings.write(&mut out);
    String::from_utf8(out).map_err(|e| format!("cbindgen wrote non-UTF-8: {e}"))
}

/// Entry point.
pub fn run(args: &[String]) -> Result<(), String> {
    let check = match args {
        [] => false,
        [a] if a == "--check" => true,
        _ => return Err("usage: cargo xtask capi-header [--check]".into()),
    };
    let text = generate()?;
    let path = header_path();
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if check {
        if current != text {
            return Err(format!(
                "{} is out of date; run `cargo xtask capi-header`",
                path.display()
            ));
        }
        println!("{} is up to date", path.display());
    } else if current != text {
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("wrote {}", path.display());
    } else {
        println!("{} unchanged", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn committed_header_is_current() {
        let text = super::generate().unwrap();
        let current = std::fs::read_to_string(super::header_path()).unwrap();
        assert!(
            current == text,
            "crates/linker-capi/include/culink.h is out of date; run `cargo xtask capi-header`"
        );
    }
}
