//! The C ABI from outside Rust: `tests/c/link_test.c` compiled with gcc against
//! `include/culink.h` and linked with the cdylib and with the staticlib that this
//! `cargo test` just built, then run; and the Python `ctypes` example of
//! `docs/library.md`, run with python3 when it is present.
//!
//! The C program links `tests/link/call_extern/{a,b}.sm_90.o`; this test checks
//! the cubin it wrote is equivalent to nvlink's (`linker_core::diff`) and
//! byte-identical to a `linker_core::link` of the same inputs.

use linker_core::{Cubin, InputSource, LinkOptions, SmArch};
use std::path::{Path, PathBuf};
use std::process::Command;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixtures() -> PathBuf {
    crate_dir().join("../../tests/link").canonicalize().unwrap()
}

fn scratch(tag: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("capi-{tag}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The directory holding `libculink.so` / `libculink.a` of this build
/// (`target/<profile>`, next to the `deps` directory this test runs from).
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    for dir in [deps.parent().unwrap(), deps] {
        if dir.join("libculink.so").exists() && dir.join("libculink.a").exists() {
            return dir.to_path_buf();
        }
    }
    panic!(
        "libculink.so / libculink.a not found next to {}; build with `cargo test -p linker-capi`",
        exe.display()
    );
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The call_extern link done by `linker_core` directly.
fn reference_link() -> Vec<u8> {
    let dir = fixtures().join("call_extern");
    let opts = LinkOptions {
        arch: Some(SmArch::new(90)),
        inputs: ["a.sm_90.o", "b.sm_90.o"]
            .iter()
            .map(|f| InputSource::File(dir.join(f)))
            .collect(),
        recorded_args: Some("-arch sm_90 ".into()),
        ..LinkOptions::default()
    };
    linker_core::link(&opts).expect("core link").cubin
}

/// Checks `ours` against nvlink's cubin and the direct library link.
fn check_cubin(ours: &[u8]) {
    let nvlink = std::fs::read(fixtures().join("call_extern/nvlink.sm_90.cubin")).unwrap();
    let (a, b) = (Cubin::parse(ours).unwrap(), Cubin::parse(&nvlink).unwrap());
    assert!(
        linker_core::diff::equivalent(&a, &b),
        "C ABI output differs from nvlink's: {:#?}",
        linker_core::diff::diff(&a, &b)
    );
    assert!(
        ours == reference_link().as_slice(),
        "C ABI output differs from linker_core::link's"
    );
}

/// Compiles link_test.c with `link_args`, runs it, and checks its cubin.
fn build_and_run(tag: &str, link_args: &[String]) {
    if !have("gcc") {
        eprintln!("skipped: gcc not found");
        return;
    }
    let dir = scratch(tag);
    let exe = dir.join("link_test");
    let src = crate_dir().join("tests/c/link_test.c");
    let include = crate_dir().join("include");
    let out = Command::new("gcc")
        .args([
            "-std=c11",
            "-pedantic",
            "-D_POSIX_C_SOURCE=200809L",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-g",
        ])
        .arg("-I")
        .arg(&include)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .args(link_args)
        .output()
        .expect("run gcc");
    assert!(
        out.status.success(),
        "gcc failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cubin_path = dir.join("call_extern.cubin");
    let run = Command::new(&exe)
        .arg(fixtures())
        .arg(&cubin_path)
        .output()
        .expect("run link_test");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "link_test failed ({}):\n{stdout}\n{stderr}",
        run.status
    );
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
    check_cubin(&std::fs::read(&cubin_path).unwrap());
}

#[test]
fn c_program_with_the_shared_library() {
    let lib = lib_dir();
    build_and_run(
        "dynamic",
        &[
            format!("-L{}", lib.display()),
            "-lculink".into(),
            format!("-Wl,-rpath,{}", lib.display()),
        ],
    );
}

#[test]
fn c_program_with_the_static_library() {
    let lib = lib_dir().join("libculink.a");
    let mut args = vec![lib.display().to_string()];
    // What Rust's std needs from the system on Linux (`--print native-static-libs`).
    args.extend(
        [
            "-lgcc_s",
            "-lutil",
            "-lrt",
            "-lpthread",
            "-lm",
            "-ldl",
            "-lc",
        ]
        .map(String::from),
    );
    build_and_run("static", &args);
}

/// The first ```python block of docs/library.md.
fn python_example() -> String {
    let doc = std::fs::read_to_string(crate_dir().join("../../docs/library.md")).unwrap();
    let start = doc
        .find("```python\n")
        .expect("a ```python block in docs/library.md")
        + 10;
    let len = doc[start..].find("```").expect("closed python block");
    doc[start..start + len].to_string()
}

#[test]
fn python_ctypes_example_from_the_docs() {
    let script = python_example();
    if !have("python3") {
        eprintln!("skipped: python3 not found");
        return;
    }
    let dir = scratch("python");
    let path = dir.join("example.py");
    std::fs::write(&path, script).unwrap();
    let cubin = dir.join("out.cubin");
    let out = Command::new("python3")
        .arg(&path)
        .arg(fixtures().join("call_extern/a.sm_90.o"))
        .arg(fixtures().join("call_extern/b.sm_90.o"))
        .arg(&cubin)
        .env("CULINK_LIBRARY", lib_dir().join("libculink.so"))
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "python example failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    check_cubin(&std::fs::read(&cubin).unwrap());
}

/// Every exported function appears in the header with its exact name (cbindgen
/// generates it; this also catches a header regenerated from stale sources).
#[test]
fn every_export_is_in_the_header() {
    let src = std::fs::read_to_string(crate_dir().join("src/lib.rs")).unwrap();
    let header = std::fs::read_to_string(crate_dir().join("include/culink.h")).unwrap();
    let mut lines = src.lines().map(str::trim);
    let mut count = 0;
    while let Some(l) = lines.next() {
        if l != "#[no_mangle]" {
            continue;
        }
        let sig = lines.next().unwrap();
        let name = sig
            .split("fn ")
            .nth(1)
            .and_then(|r| r.split('(').next())
            .unwrap_or_else(|| panic!("no fn after #[no_mangle]: {sig}"));
        let declared = header.match_indices(&format!("{name}(")).any(|(i, _)| {
            header[..i]
                .chars()
                .last()
                .is_some_and(|c| c == ' ' || c == '*')
        });
        assert!(
            declared,
            "{name} is exported but missing from include/culink.h"
        );
        count += 1;
    }
    assert!(count >= 13, "only {count} exports found");
}

/// The header also serves C++ (`extern "C"`, no C-only constructs), and takes
/// nvJitLink-style calls unchanged.
#[test]
fn header_compiles_as_cpp() {
    if !have("g++") {
        eprintln!("skipped: g++ not found");
        return;
    }
    let dir = scratch("cpp");
    let src = dir.join("use.cpp");
    std::fs::write(
        &src,
        "#include \"culink.h\"\n\
         int main() {\n\
           culinkHandle h = nullptr;\n\
           const char *opts[] = {\"-arch=sm_90\"};\n\
           culinkResult r = culinkCreate(&h, 1, opts);\n\
           r = culinkAddData(h, CULINK_INPUT_ANY, \"x\", 1, \"x\");\n\
           return r == CULINK_SUCCESS ? 0 : 1;\n\
         }\n",
    )
    .unwrap();
    let out = Command::new("g++")
        .args([
            "-std=c++17",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fsyntax-only",
            "-I",
        ])
        .arg(crate_dir().join("include"))
        .arg(&src)
        .output()
        .expect("run g++");
    assert!(
        out.status.success(),
        "g++ failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
