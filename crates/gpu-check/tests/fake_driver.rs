//! The whole `gpu-check check` pipeline (child processes, argument marshalling,
//! printf capture, dumps, pointer-aware comparison, verdicts, results table)
//! against a fake CUDA driver (`tests/fake/libcuda.c`, built with the system C
//! compiler; the test is skipped with a message when there is none, and fails
//! under `CI=true`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

fn scratch() -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpu-check-fake-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Builds the fake driver once; `None` (skip) without a C compiler.
fn fake_lib() -> Option<&'static PathBuf> {
    static LIB: OnceLock<Option<PathBuf>> = OnceLock::new();
    LIB.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake/libcuda.c");
        let out = scratch().join("libcuda-fake.so");
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
        let ok = Command::new(&cc)
            .args(["-shared", "-fPIC", "-O1", "-o"])
            .arg(&out)
            .arg(&src)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            assert!(
                std::env::var("CI").map_or(true, |v| v != "true"),
                "CI: cannot build the fake driver with {cc}"
            );
            eprintln!("skipping: cannot build the fake CUDA driver with `{cc}`");
            return None;
        }
        Some(out)
    })
    .as_ref()
}

fn bundle() -> PathBuf {
    let d = scratch().join("bundle");
    let _ = std::fs::remove_dir_all(&d);
    let cubin = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/link/data_ptr_init/nvlink.sm_90.cubin");
    let case = |name: &str, launch: &str, culink: Option<&[u8]>| {
        let c = d.join("cases").join(name);
        std::fs::create_dir_all(&c).unwrap();
        std::fs::write(c.join("launch.txt"), launch).unwrap();
        std::fs::copy(&cubin, c.join("nvlink.cubin")).unwrap();
        match culink {
            Some(b) => std::fs::write(c.join("culink.cubin"), b).unwrap(),
            None => {
                std::fs::copy(&cubin, c.join("culink.cubin")).unwrap();
            }
        }
    };
    case(
        "good",
        "buffer out 64\nbuffer two 32 u32:1,2\n\
         launch k grid 2 block 32 args out\n\
         launch k_s grid 1 block 64 shared 1024 args two+8 u32:9\n",
        None,
    );
    case("fault", "buffer out 64\nlaunch fault args out\n", None);
    case("flaky", "buffer out 64\nlaunch flaky args out\n", None);
    case(
        "badimage",
        "buffer out 64\nlaunch k args out\n",
        Some(b"not an ELF"),
    );
    std::fs::write(d.join("manifest.txt"), "commit: fake\n").unwrap();
    d
}

fn check(lib: &Path, b: &Path, env: &[(&str, &str)], cases: &[&str]) -> (Output, String) {
    let out = b.join(format!("results-{}.md", cases.join("-")));
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpu-check"));
    c.arg("check")
        .arg(b)
        .arg("--out")
        .arg(&out)
        .args(cases)
        .env("CULINK_GPU_CHECK_LIBCUDA", lib)
        .env_remove("FAKE_CORRUPT")
        .env_remove("FAKE_CC_MAJOR")
        .env_remove("FAKE_NO_DEVICE")
        .env_remove("FAKE_FLAKY");
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    let md = std::fs::read_to_string(&out).unwrap_or_default();
    (o, md)
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn fake_driver_end_to_end() {
    let Some(lib) = fake_lib() else { return };
    let b = bundle();

    // Identical runs (at different host addresses: the globals' self-pointers
    // differ as bytes and match as (global, offset)).
    let (o, md) = check(lib, &b, &[], &["good"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        md.contains("| Fake GPU (1 device(s)) | 9.0 | 13000 (CUDA 13.0) |"),
        "{md}"
    );
    assert!(md.contains("**1 of 1 cases pass**"), "{md}");
    assert!(md.contains("| good | PASS | 2 | "), "{md}");
    // Two printf lines captured per run.
    assert!(md.contains(" | 2 | "), "{md}");

    // culink's run writes a different byte and prints a different line.
    let (o, md) = check(lib, &b, &[("FAKE_CORRUPT", "1")], &["good"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let t = text(&o);
    // The first launch (`k`) already differs; launch 2's differences are counted.
    assert!(
        t.contains(
            "launch 1 `k`: buffer out: first difference at byte 0 (0x0): 0x03 (culink) vs 0x02 (nvlink)"
        ),
        "{t}"
    );
    assert!(t.contains("more difference(s) after later launches"), "{t}");
    let (o, _) = check(lib, &b, &[("FAKE_CORRUPT", "1")], &["good"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(t.contains("printf output differs"), "{t}");
    assert!(md.contains("| good | FAIL |"), "{md}");

    // nvlink's own run faults: the case is broken, not culink.
    let (o, md) = check(lib, &b, &[], &["fault"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(md.contains("| fault | BROKEN |"), "{md}");
    assert!(md.contains("CUDA_ERROR_FAKE_700"), "{md}");

    // A case whose reference run does not reproduce itself is BROKEN, not FAIL.
    let (o, md) = check(lib, &b, &[("FAKE_FLAKY", "1")], &["flaky"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(md.contains("| flaky | BROKEN | 1 |"), "{md}");
    assert!(md.contains("does not reproduce its own results"), "{md}");
    let (o, _) = check(lib, &b, &[], &["flaky"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    // culink's cubin does not load.
    let (o, md) = check(lib, &b, &[], &["badimage"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(md.contains("| badimage | FAIL |"), "{md}");
    assert!(md.contains("culink's cubin"), "{md}");

    // Not an sm_90 device: nothing runs, exit 3.
    let (o, md) = check(lib, &b, &[("FAKE_CC_MAJOR", "8")], &[]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("device 0 is sm_80"), "{}", text(&o));
    assert!(md.contains("NOT RUN"), "{md}");

    // The driver loads but cuInit fails: no driver either, exit 3.
    let (o, md) = check(lib, &b, &[("FAKE_NO_DEVICE", "1")], &[]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("no CUDA driver: cuInit failed: CUDA_ERROR_FAKE_100 (100)"),
        "{}",
        text(&o)
    );
    assert!(md.contains("NOT RUN: no CUDA driver"), "{md}");

    // Past the deadline, cases are NOT RUN (and never a pass).
    let out = b.join("deadline.md");
    let o = Command::new(env!("CARGO_BIN_EXE_gpu-check"))
        .arg("check")
        .arg(&b)
        .args(["--deadline", "0", "--out"])
        .arg(&out)
        .env("CULINK_GPU_CHECK_LIBCUDA", lib)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let md = std::fs::read_to_string(&out).unwrap();
    assert!(md.contains("**0 of 4 cases pass**"), "{md}");
    assert!(md.contains("| good | NOT RUN |"), "{md}");

    // probe works with a driver.
    let o = Command::new(env!("CARGO_BIN_EXE_gpu-check"))
        .arg("probe")
        .env("CULINK_GPU_CHECK_LIBCUDA", lib)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o).contains("Fake GPU (sm_90, 1 device(s)), driver 13000"));
    let _ = std::fs::remove_dir_all(&b);
}
