//! The `gpu-check` binary without a GPU: the no-driver path must exit 3 with a
//! clear message and never look like a pass; usage errors exit 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gpu-check"))
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpu-check-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("cases/one")).unwrap();
    std::fs::write(
        d.join("cases/one/launch.txt"),
        "buffer out 64\nlaunch k grid 1 block 16 args out u32:3\n",
    )
    .unwrap();
    std::fs::write(d.join("cases/one/culink.cubin"), b"not a cubin").unwrap();
    std::fs::write(d.join("cases/one/nvlink.cubin"), b"not a cubin").unwrap();
    std::fs::write(d.join("manifest.txt"), "commit: abc123\n").unwrap();
    d
}

fn run(cmd: &mut Command, lib: &str) -> Output {
    cmd.env("CULINK_GPU_CHECK_LIBCUDA", lib).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Libraries that are not a usable driver: a missing file, and a real library
/// without `cuInit` (the C library).
const NOT_DRIVERS: &[&str] = &["/nonexistent/libcuda.so.1", "libc.so.6"];

#[test]
fn check_without_driver_exits_3_and_says_nothing_ran() {
    for lib in NOT_DRIVERS {
        let d = scratch("check");
        let out = d.join("results.md");
        let o = run(bin().arg("check").arg(&d).arg("--out").arg(&out), lib);
        assert_eq!(o.status.code(), Some(3), "{lib}: {o:?}");
        let e = stderr(&o);
        assert!(e.contains("no CUDA driver"), "{lib}: {e}");
        assert!(e.contains("this is not a pass"), "{lib}: {e}");
        let md = std::fs::read_to_string(&out).unwrap();
        assert!(md.contains("NOT RUN: no CUDA driver"), "{md}");
        assert!(md.contains("**0 of 0 cases pass**"), "{md}");
        assert!(md.contains("abc123"), "{md}");
        assert!(!md.contains("PASS"), "{md}");
        let _ = std::fs::remove_dir_all(&d);
    }
}

#[test]
fn probe_and_exec_without_driver_exit_3() {
    let d = scratch("exec");
    for lib in NOT_DRIVERS {
        let o = run(bin().arg("probe"), lib);
        assert_eq!(o.status.code(), Some(3), "{o:?}");
        assert!(stderr(&o).contains("no CUDA driver"));
        // exec reads its inputs first: use a parsable launch file and any bytes
        // as the cubin (the globals scan needs an ELF: use a fixture cubin).
        let cubin = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/link/data_ptr_init/nvlink.sm_90.cubin");
        let o = run(
            bin()
                .arg("exec")
                .arg(&cubin)
                .arg(d.join("cases/one/launch.txt"))
                .arg(d.join("dump")),
            lib,
        );
        assert_eq!(o.status.code(), Some(3), "{o:?}");
        assert!(stderr(&o).contains("no CUDA driver"));
        assert!(!d.join("dump").exists());
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn usage_and_bundle_errors_exit_2() {
    let o = bin().output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("usage:"));
    let o = bin().args(["check"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = bin()
        .args(["check", "/nonexistent-bundle"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is not a gpu-check bundle"),
        "{}",
        stderr(&o)
    );
    let d = scratch("names");
    let o = bin().arg("check").arg(&d).arg("nope").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no case `nope`"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn globals_of_a_fixture_cubin() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/link");
    let img = std::fs::read(root.join("data_ptr_init/nvlink.sm_90.cubin")).unwrap();
    let g = gpu_check::cubin::globals(&img).unwrap();
    assert!(!g.is_empty(), "no globals found");
    let img = std::fs::read(root.join("const_three/nvlink.sm_90.cubin")).unwrap();
    let g2 = gpu_check::cubin::globals(&img).unwrap();
    assert!(!g2.is_empty());
    assert!(gpu_check::cubin::globals(b"nope").is_err());
    // `$str` is defined by three objects: ambiguous, left out.
    let img = std::fs::read(root.join("cu_printf/nvlink.sm_90.cubin")).unwrap();
    let g3 = gpu_check::cubin::globals(&img).unwrap();
    assert!(!g3.iter().any(|g| g == "$str"), "{g3:?}");
    let img = std::fs::read(root.join("gpu_fnptr_tables/nvlink.sm_90.cubin")).unwrap();
    assert_eq!(
        gpu_check::cubin::globals(&img).unwrap(),
        vec!["op_table", "weight_ptrs", "weights"]
    );
    assert_eq!(gpu_check::cubin::kernels(&img).unwrap(), vec!["_Z4kopsPi"]);
}

#[test]
fn kernel_parameter_sizes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/link");
    let p = |case: &str, k: &str| {
        let img = std::fs::read(root.join(case).join("nvlink.sm_90.cubin")).unwrap();
        gpu_check::cubin::kernel_params(&img, k).unwrap()
    };
    assert_eq!(p("fnptr_table_data", "ktable"), Some(vec![8, 4]));
    assert_eq!(p("gpu_deep_stack", "_Z5kdeepPii"), Some(vec![8, 4]));
    assert_eq!(p("fnptr_code", "kset"), Some(vec![]));
    assert_eq!(p("call_extern", "kern_a"), Some(vec![8]));
    assert_eq!(p("call_extern", "nope"), None);
}
