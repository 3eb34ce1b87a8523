//! The `culink` binary: dump, diff exit codes, usage errors, output safety.

mod common;

use common::*;

#[test]
fn dump_of_a_reference() {
    let o = culink(&["dump", &data("loc_90.cubin")]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let s = text(&o.stdout);
    for want in [
        "flags       0x06005a04 (sm_90)",
        ".text.kloc",
        "R_CUDA_ABS55_16_34",
        "EIATTR_REGCOUNT                          kloc 0x18",
        "EICOMPAT_ATTR_ISA_CLASS",
        "tool \"nvlink\"",
        "CALLS: kloc -> lf",
    ] {
        assert!(s.contains(want), "missing {want:?} in dump:\n{s}");
    }
    // Deterministic.
    assert_eq!(culink(&["dump", &data("loc_90.cubin")]).stdout, o.stdout);
}

#[test]
fn dump_errors_name_the_file() {
    let dir = scratch("dump");
    let bad = dir.join("bad.cubin");
    std::fs::write(&bad, b"hello").unwrap();
    let o = culink(&["dump", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o.stderr);
    assert!(
        e.starts_with(&format!("culink: error: {}: ", bad.display())),
        "{e}"
    );
    let o = culink(&["dump", dir.join("missing.cubin").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("missing.cubin"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn diff_exit_codes() {
    let ab = data("ab_90.cubin");
    let o = culink(&["diff", &ab, &ab]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("equivalent"));

    let o = culink(&["diff", &data("ba_90.cubin"), &ab]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stdout).contains(".debug_frame"));

    let dir = scratch("diff");
    let bad = dir.join("bad.cubin");
    std::fs::write(&bad, [0x7f, b'E', b'L', b'F', 2, 1]).unwrap();
    let o = culink(&["diff", bad.to_str().unwrap(), &ab]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("bad.cubin"));
    let o = culink(&["diff", &ab, dir.join("nope").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));

    // A flipped text bit.
    let bytes = std::fs::read(&ab).unwrap();
    let c = linker_core::Cubin::parse(&bytes).unwrap();
    let t = c
        .sections
        .iter()
        .find(|s| s.name == ".text.kern_a")
        .unwrap();
    let mut m = bytes.clone();
    m[t.offset as usize + 0x45] ^= 4;
    let mutated = dir.join("m.cubin");
    std::fs::write(&mutated, &m).unwrap();
    let o = culink(&["diff", mutated.to_str().unwrap(), &ab]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stdout).contains(
            "text of function `kern_a` (.text.kern_a) differs at instruction offset 0x40"
        ),
        "{}",
        text(&o.stdout)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn diff_phdrs_rule() {
    let o = culink(&[
        "diff",
        "--phdrs",
        &data("ab_75.cubin"),
        &data("ab_75.cubin"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    // nvlink's own sm_90 output does not follow the six-segment scheme.
    let o = culink(&[
        "diff",
        "--phdrs",
        &data("ab_90.cubin"),
        &data("ab_90.cubin"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stdout).contains("program header"));
}

#[test]
fn usage_errors() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["-arch=sm_90", "-o", "x.cubin"],
            "culink: fatal: No input files specified; use option --help for more information",
        ),
        (
            &["-arch=sm_90", "a.o"],
            "culink: fatal: Must specify output file with -o option",
        ),
        (
            &["a.o", "-o", "x.cubin"],
            "culink: fatal: Unknown arch name '(null)'",
        ),
        (&["--bogus"], "Unknown option"),
        (&["diff", "one"], "usage: culink diff"),
        (&["dump"], "usage: culink dump"),
    ];
    for (args, want) in cases {
        let o = culink(args);
        assert_ne!(o.status.code(), Some(0), "{args:?}");
        assert!(
            text(&o.stderr).contains(want),
            "{args:?}: {}",
            text(&o.stderr)
        );
    }
    let o = culink::<&str>(&[]);
    assert_ne!(o.status.code(), Some(0));
    let o = culink(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o.stdout).contains("culink dump FILE"));
    let o = culink(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn output_equal_to_input_is_refused() {
    let dir = scratch("same");
    let a = dir.join("a.o");
    std::fs::copy(data("d1_90.o"), &a).unwrap();
    let before = std::fs::read(&a).unwrap();
    let a = a.to_str().unwrap();
    let o = culink(&["-arch=sm_90", a, "-o", a]);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        text(&o.stderr).contains("also an input"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(std::fs::read(a).unwrap(), before);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn failed_link_leaves_existing_output_untouched() {
    let dir = scratch("fail");
    let out = dir.join("out.cubin");
    std::fs::write(&out, b"previous").unwrap();
    // An input that cannot be opened fails the link.
    let o = culink(&[
        "-arch=sm_90",
        dir.join("missing.o").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_ne!(o.status.code(), Some(0));
    assert_eq!(std::fs::read(&out).unwrap(), b"previous");
    // No temporary file left behind.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
