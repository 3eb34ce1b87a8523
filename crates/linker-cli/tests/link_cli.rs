//! `culink` links end to end: every spelling of `-arch` and a response file give
//! output equivalent to nvlink's (checked with `culink diff --phdrs`), a failed link exits
//! non-zero naming the undefined symbol and leaves the output alone, `-v` prints the
//! phase timings.

mod common;

use common::*;
use std::path::Path;

#[test]
fn arch_spellings_and_response_file_link_like_nvlink() {
    let dir = scratch("arch");
    let a = fixture("call_extern", "a.sm_90.o");
    let b = fixture("call_extern", "b.sm_90.o");
    let reference = fixture("call_extern", "nvlink.sm_90.cubin");
    let out = |n: &str| dir.join(n).display().to_string();

    let rsp = dir.join("args.rsp");
    std::fs::write(
        &rsp,
        format!(
            "-arch=sm_90\n\"{a}\" \"{b}\"\n-o \"{}\"\n",
            out("rsp.cubin")
        ),
    )
    .unwrap();
    let runs: Vec<(&str, Vec<String>)> = vec![
        (
            "eq.cubin",
            vec![
                "-arch=sm_90".into(),
                a.clone(),
                b.clone(),
                "-o".into(),
                out("eq.cubin"),
            ],
        ),
        (
            "sep.cubin",
            vec![
                "-arch".into(),
                "sm_90".into(),
                a.clone(),
                b.clone(),
                "-o".into(),
                out("sep.cubin"),
            ],
        ),
        (
            "long.cubin",
            vec![
                "--arch=sm_90".into(),
                a.clone(),
                b.clone(),
                "-o".into(),
                out("long.cubin"),
            ],
        ),
        ("rsp.cubin", vec![format!("@{}", rsp.display())]),
    ];
    let mut outputs = Vec::new();
    for (name, args) in &runs {
        let o = culink(args);
        assert_eq!(
            o.status.code(),
            Some(0),
            "culink {args:?}:\n{}",
            text(&o.stderr)
        );
        let path = dir.join(name);
        assert!(path.is_file(), "culink {args:?} wrote no {name}");
        assert_equivalent(&path, Path::new(&reference), &format!("culink {args:?}"));
        outputs.push(std::fs::read(&path).unwrap());
    }
    // The spelling does not reach the output (the recorded arguments are normalised).
    for (o, (name, _)) in outputs.iter().zip(&runs) {
        assert!(o == &outputs[0], "{name} differs from eq.cubin");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn undefined_reference_fails_and_keeps_output() {
    let dir = scratch("undef");
    let a = fixture("undefined", "a.sm_90.o");

    // No output file before: none after.
    let out = dir.join("new.cubin");
    let o = culink(&["-arch=sm_90", &a, "-o", out.to_str().unwrap()]);
    let stderr = text(&o.stderr);
    assert!(
        o.status.code().is_some_and(|c| c != 0),
        "exit {:?}",
        o.status
    );
    assert!(
        stderr.contains("undefined reference to 'add_one'"),
        "stderr: {stderr}"
    );
    assert!(
        stderr.contains("'gcounter'"),
        "both undefined symbols are reported: {stderr}"
    );
    assert!(!out.exists(), "a failed link created {}", out.display());

    // A pre-existing output file stays byte-identical.
    let out = dir.join("old.cubin");
    let before = std::fs::read(fixture("call_extern", "nvlink.sm_90.cubin")).unwrap();
    std::fs::write(&out, &before).unwrap();
    let o = culink(&["-arch=sm_90", &a, "-o", out.to_str().unwrap()]);
    assert!(o.status.code().is_some_and(|c| c != 0));
    assert!(text(&o.stderr).contains("undefined reference to 'add_one'"));
    assert_eq!(std::fs::read(&out).unwrap(), before);
    // And no temporary file is left next to it.
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["old.cubin"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn verbose_prints_phase_timings() {
    let dir = scratch("verbose");
    let out = dir.join("v.cubin");
    let o = culink(&[
        "-v",
        "-arch=sm_90",
        &fixture("call_extern", "a.sm_90.o"),
        &fixture("call_extern", "b.sm_90.o"),
        "-o",
        out.to_str().unwrap(),
    ]);
    let stderr = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    for phase in [
        "load", "symbols", "live", "sections", "relocate", "symtab", "nvinfo", "layout", "write",
    ] {
        assert!(
            stderr.lines().any(
                |l| l.contains(&format!("phase {phase} ")) && l.contains(" ms")
                    // Linux: the resident memory at the phase's end.
                    && (!cfg!(target_os = "linux") || l.contains(" MB (heap "))
            ),
            "no timing for phase {phase} in:\n{stderr}"
        );
    }
    assert!(stderr.contains("2 inputs"), "{stderr}");
    assert_equivalent(
        &out,
        Path::new(&fixture("call_extern", "nvlink.sm_90.cubin")),
        "-v",
    );

    // Without -v: nothing on stderr.
    let o = culink(&[
        "-arch=sm_90",
        &fixture("call_extern", "a.sm_90.o"),
        &fixture("call_extern", "b.sm_90.o"),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stderr.is_empty(), "{}", text(&o.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}
