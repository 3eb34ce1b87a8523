//! The `culink` link command under bad command lines, bad files and signals:
//! every failure is a message and exit status 1, no output appears, an existing
//! output is unchanged and no temporary file is left behind. Also determinism:
//! no timestamps and no paths in the output, and `--no-tool-args`.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// A scratch directory holding copies of `a.o` and `b.o` (call_extern, sm_90).
fn scratch_with_inputs(tag: &str) -> PathBuf {
    let d = scratch(tag);
    std::fs::copy(fixture("call_extern", "a.sm_90.o"), d.join("a.o")).unwrap();
    std::fs::copy(fixture("call_extern", "b.sm_90.o"), d.join("b.o")).unwrap();
    d
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[track_caller]
fn fails_with(o: &Output, words: &str) {
    assert_eq!(o.status.code(), Some(1), "stderr: {}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains(words),
        "expected {words:?} in: {}",
        text(&o.stderr)
    );
}

#[test]
fn links_in_a_scratch_directory() {
    let d = scratch_with_inputs("ok");
    let o = culink_in(&d, &["-arch=sm_90", "a.o", "b.o", "-o", "out.cubin"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(names(&d), ["a.o", "b.o", "out.cubin"]);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn duplicate_and_missing_output_and_arch() {
    let d = scratch_with_inputs("dup");
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "-arch=sm_90",
                "a.o",
                "b.o",
                "-o",
                "x.cubin",
                "-o",
                "y.cubin",
            ],
            "given twice",
        ),
        (
            &["-arch=sm_90", "-arch=sm_80", "a.o", "b.o", "-o", "x.cubin"],
            "given twice",
        ),
        (&["-arch=sm_90", "a.o", "b.o"], "Must specify output file"),
        (&["a.o", "b.o", "-o", "x.cubin"], "Unknown arch name"),
        (&["-arch=sm_90", "a.o", "b.o", "-o"], "requires a value"),
        (
            &["-arch", "a.o", "b.o", "-o", "x.cubin"],
            "Value 'a.o' is not defined for option 'arch'",
        ),
        (
            &["-arch=sm_bogus", "a.o", "-o", "x.cubin"],
            "Value 'sm_bogus' is not defined for option 'arch'",
        ),
        (
            &["-arch=sm_101", "a.o", "-o", "x.cubin"],
            "Value 'sm_101' is not defined for option 'arch'",
        ),
    ];
    for (args, want) in cases {
        fails_with(&culink_in(&d, args), want);
        assert_eq!(names(&d), ["a.o", "b.o"], "{args:?}");
    }
    // Response files: missing, endless, nested without end.
    std::fs::write(d.join("self.rsp"), "@self.rsp").unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["@missing.rsp"],
            "Could not open options file 'missing.rsp'",
        ),
        (&["@/dev/zero"], "larger than"),
        (&["@self.rsp"], "nested too deeply"),
    ];
    for (args, want) in cases {
        fails_with(&culink_in(&d, args), want);
    }
    std::fs::remove_file(d.join("self.rsp")).unwrap();
    // The same value twice is harmless.
    let o = culink_in(
        &d,
        &[
            "-arch=sm_90",
            "-arch",
            "sm_90",
            "a.o",
            "b.o",
            "-o",
            "x.cubin",
            "-ox.cubin",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn unreadable_inputs() {
    let d = scratch_with_inputs("unread");
    std::fs::create_dir(d.join("dir.o")).unwrap();
    std::fs::write(d.join("out.cubin"), b"previous").unwrap();
    for (input, want) in [
        ("missing.o", "missing.o: cannot open input file"),
        ("dir.o", "dir.o: input is a directory"),
    ] {
        let o = culink_in(&d, &["-arch=sm_90", "a.o", input, "-o", "out.cubin"]);
        fails_with(&o, want);
        assert_eq!(std::fs::read(d.join("out.cubin")).unwrap(), b"previous");
    }
    // Of several missing files, the first named is reported, every time
    // (the files are opened in parallel).
    let mut args = vec!["-arch=sm_90".to_string(), "a.o".to_string()];
    args.extend((0..64).map(|i| format!("gone{i}.o")));
    args.extend(["-o".to_string(), "out.cubin".to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    for _ in 0..4 {
        fails_with(
            &culink_in(&d, &args),
            "culink: error: gone0.o: cannot open input file",
        );
    }
    assert_eq!(names(&d), ["a.o", "b.o", "dir.o", "out.cubin"]);
    std::fs::remove_dir_all(&d).unwrap();
}

/// nvlink 13.0.88 skips an empty input file (exit 0); culink links without
/// it too, with a warning naming it.
#[test]
fn empty_input_file_is_skipped_with_a_warning() {
    let d = scratch_with_inputs("empty");
    std::fs::write(d.join("empty.o"), b"").unwrap();
    let o = culink_in(
        &d,
        &["-arch=sm_90", "a.o", "empty.o", "b.o", "-o", "with.cubin"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("warning: empty.o: empty input file; ignored"),
        "{}",
        text(&o.stderr)
    );
    let o = culink_in(&d, &["-arch=sm_90", "a.o", "b.o", "-o", "without.cubin"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        std::fs::read(d.join("with.cubin")).unwrap(),
        std::fs::read(d.join("without.cubin")).unwrap()
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn bad_output_paths() {
    let d = scratch_with_inputs("outpath");
    std::fs::create_dir(d.join("sub")).unwrap();
    // A directory.
    fails_with(
        &culink_in(&d, &["-arch=sm_90", "a.o", "b.o", "-o", "sub"]),
        "is a directory",
    );
    assert!(d.join("sub").is_dir());
    // In a directory that does not exist.
    fails_with(
        &culink_in(&d, &["-arch=sm_90", "a.o", "b.o", "-o", "nope/x.cubin"]),
        "nope/x.cubin",
    );
    // A file in place of the directory.
    fails_with(
        &culink_in(&d, &["-arch=sm_90", "a.o", "b.o", "-o", "a.o/x.cubin"]),
        "a.o/x.cubin",
    );
    // Equal to an input, also through another spelling of the path.
    for out in ["a.o", "./a.o", "sub/../b.o"] {
        fails_with(
            &culink_in(&d, &["-arch=sm_90", "a.o", "b.o", "-o", out]),
            "also an input",
        );
    }
    // A hard link to an input.
    std::fs::hard_link(d.join("b.o"), d.join("sub/hard.o")).unwrap();
    fails_with(
        &culink_in(&d, &["-arch=sm_90", "a.o", "b.o", "-o", "sub/hard.o"]),
        "also an input",
    );
    std::fs::remove_file(d.join("sub/hard.o")).unwrap();
    assert_eq!(
        std::fs::read(d.join("a.o")).unwrap(),
        std::fs::read(fixture("call_extern", "a.sm_90.o")).unwrap()
    );
    assert_eq!(names(&d), ["a.o", "b.o", "sub"]);
    assert!(names(&d.join("sub")).is_empty());
    std::fs::remove_dir_all(&d).unwrap();
}

#[cfg(unix)]
#[test]
fn unwritable_output_directory() {
    use std::os::unix::fs::PermissionsExt;
    let d = scratch_with_inputs("ro");
    let ro = d.join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::write(ro.join("out.cubin"), b"previous").unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    // root ignores directory permissions: then there is nothing to test.
    let writable = std::fs::write(ro.join("probe"), b"").is_ok();
    if !writable {
        fails_with(
            &culink_in(&d, &["-arch=sm_90", "a.o", "b.o", "-o", "ro/out.cubin"]),
            "ro/out.cubin",
        );
        assert_eq!(std::fs::read(ro.join("out.cubin")).unwrap(), b"previous");
        assert_eq!(names(&ro), ["out.cubin"]);
    }
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn failed_links_write_nothing() {
    let d = scratch_with_inputs("fail");
    std::fs::write(d.join("out.cubin"), b"previous").unwrap();
    let mut bad = std::fs::read(d.join("a.o")).unwrap();
    bad.truncate(bad.len() / 2);
    std::fs::write(d.join("bad.o"), &bad).unwrap();
    // Malformed input; undefined symbol (a alone); duplicate definitions.
    for args in [
        &["-arch=sm_90", "bad.o", "b.o", "-o", "out.cubin"][..],
        &["-arch=sm_90", "a.o", "-o", "out.cubin"],
        &["-arch=sm_90", "a.o", "a.o", "b.o", "-o", "out.cubin"],
        &["-arch=sm_90", "a.o", "b.o", "-o", "new.cubin", "-Wbogus"],
    ] {
        let o = culink_in(&d, args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o.stderr));
        assert_eq!(std::fs::read(d.join("out.cubin")).unwrap(), b"previous");
        assert_eq!(names(&d), ["a.o", "b.o", "bad.o", "out.cubin"], "{args:?}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// Starts a link that stalls with its temporary file written, sends `sig`,
/// and checks that neither the output nor the temporary file remains.
#[cfg(unix)]
fn interrupted(sig: i32, tag: &str) {
    let d = scratch_with_inputs(tag);
    std::fs::write(d.join("out.cubin"), b"previous").unwrap();
    let mut child = Command::new(culink_exe())
        .args(["-arch=sm_90", "a.o", "b.o", "-o", "out.cubin"])
        .current_dir(&d)
        .env("CULINK_TEST_STALL_OUTPUT_MS", "20000")
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the temporary file exists.
    let mut seen = false;
    for _ in 0..2000 {
        if names(&d).iter().any(|n| n.ends_with(".tmp")) {
            seen = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(seen, "the temporary file never appeared: {:?}", names(&d));
    let pid = child.id().to_string();
    let sig = format!("-{sig}");
    let killed = Command::new("kill").args([&sig, &pid]).status().unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert_eq!(std::fs::read(d.join("out.cubin")).unwrap(), b"previous");
    assert_eq!(names(&d), ["a.o", "b.o", "out.cubin"]);
    std::fs::remove_dir_all(&d).unwrap();
}

#[cfg(unix)]
#[test]
fn sigint_leaves_no_temporary_file() {
    interrupted(2, "sigint");
}

#[cfg(unix)]
#[test]
fn sigterm_leaves_no_temporary_file() {
    interrupted(15, "sigterm");
}

/// Links in two different directories (relative and absolute paths), a
/// second apart: the outputs are identical and hold neither path nor time.
#[test]
fn output_has_no_paths_or_timestamps() {
    let d1 = scratch_with_inputs("det1");
    let d2 = scratch_with_inputs("det2-longer-name");
    let o = culink_in(&d1, &["-arch=sm_90", "a.o", "b.o", "-o", "out.cubin"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    std::thread::sleep(Duration::from_millis(1100));
    let a = d2.join("a.o");
    let b = d2.join("b.o");
    let out = d2.join("out.cubin");
    let o = culink_in(
        Path::new("/"),
        &[
            "-arch=sm_90",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let c1 = std::fs::read(d1.join("out.cubin")).unwrap();
    let c2 = std::fs::read(&out).unwrap();
    assert_eq!(c1, c2, "output depends on paths or time");
    let has = |needle: &str| c2.windows(needle.len()).any(|w| w == needle.as_bytes());
    for needle in [
        d2.to_str().unwrap(),
        "det2-longer-name",
        "culink-rob",
        "a.o",
        "b.o",
        "out.cubin",
    ] {
        assert!(!has(needle), "output contains {needle:?}");
    }
    std::fs::remove_dir_all(&d1).unwrap();
    std::fs::remove_dir_all(&d2).unwrap();
}

#[test]
fn tool_args_recorded_or_omitted() {
    let d = scratch_with_inputs("args");
    let o = culink_in(&d, &["-arch=sm_90", "a.o", "b.o", "-o", "with.cubin"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = culink_in(
        &d,
        &[
            "-arch=sm_90",
            "--no-tool-args",
            "a.o",
            "b.o",
            "-o",
            "without.cubin",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // culink's own tkinfo entry (the inputs' ptxas entries are copied as they are).
    let own = |f: &str| {
        text(&culink_in(&d, &["dump", f]).stdout)
            .lines()
            .find(|l| l.contains("tool \"culink\""))
            .map(str::to_string)
            .unwrap_or_default()
    };
    let with = own("with.cubin");
    let without = own("without.cubin");
    assert!(with.ends_with("args \"-arch sm_90 \""), "{with}");
    assert!(without.ends_with("args \"\""), "{without}");
    // Nothing else changes.
    let o = culink_in(&d, &["diff", "with.cubin", "without.cubin"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    std::fs::remove_dir_all(&d).unwrap();
}

/// `--threads N` runs the link on N threads (said under `-v`), with the same
/// output for any N; 0 and non-numbers are usage errors.
#[test]
fn threads_option() {
    let d = scratch_with_inputs("threads");
    let mut outputs = Vec::new();
    for n in ["1", "3"] {
        let out = format!("t{n}.cubin");
        let o = culink_in(
            &d,
            &[
                "-arch=sm_90",
                "-v",
                "--threads",
                n,
                "a.o",
                "b.o",
                "-o",
                &out,
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains(&format!("ms on {n} threads")),
            "{}",
            text(&o.stderr)
        );
        outputs.push(std::fs::read(d.join(&out)).unwrap());
    }
    assert_eq!(outputs[0], outputs[1]);
    for bad in ["0", "x"] {
        let o = culink_in(
            &d,
            &[
                "-arch=sm_90",
                &format!("--threads={bad}"),
                "a.o",
                "-o",
                "x.cubin",
            ],
        );
        fails_with(&o, "Option '--threads' takes a positive number");
    }
    std::fs::remove_dir_all(&d).unwrap();
}
