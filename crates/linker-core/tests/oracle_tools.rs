//! The fixtures of `tests/link` are well-formed and the NVIDIA readers accept the
//! nvlink references: `cuobjdump -elf -sass` and `nvdisasm` read every
//! `nvlink.sm_NN.cubin` (and cuobjdump every input object) with exit 0 and no
//! error or warning. Tool checks skip when the tools are absent, except under
//! `CI=true` (see `common::nv_tool`).

mod common;

use common::{cases, nv_tool, Reference};
use std::path::Path;
use std::process::Command;

/// ELF header fields the fixture checks look at: (e_type, SM number from e_flags).
fn elf_kind(path: &Path) -> (u16, u32) {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    assert!(
        b.len() >= 64 && &b[..4] == b"\x7fELF" && b[4] == 2 && b[5] == 1,
        "{}: not a 64-bit little-endian ELF",
        path.display()
    );
    let e_type = u16::from_le_bytes([b[16], b[17]]);
    let e_machine = u16::from_le_bytes([b[18], b[19]]);
    assert_eq!(
        e_machine,
        190,
        "{}: e_machine is not EM_CUDA",
        path.display()
    );
    let e_flags = u32::from_le_bytes([b[48], b[49], b[50], b[51]]);
    (e_type, (e_flags >> 8) & 0xff)
}

#[test]
fn cases_parse_and_have_generated_files() {
    let cases = cases();
    assert!(!cases.is_empty(), "no cases in tests/link");
    for case in &cases {
        for (stem, _) in &case.inputs {
            let ptx = case.dir.join(format!("{stem}.ptx"));
            let cu = case.dir.join(format!("{stem}.cu"));
            assert!(
                ptx.is_file() != cu.is_file(),
                "case {}: need exactly one of {stem}.ptx / {stem}.cu",
                case.name
            );
        }
        for &sm in &case.archs {
            for (input, (_, pin)) in case.input_paths(sm).iter().zip(&case.inputs) {
                assert!(
                    input.is_file(),
                    "case {}: missing {}; run `cargo xtask fixtures`",
                    case.name,
                    input.display()
                );
                let (e_type, arch) = elf_kind(input);
                assert_eq!(e_type, 1, "{}: inputs must be ET_REL", input.display());
                assert_eq!(
                    arch,
                    pin.unwrap_or(sm),
                    "{}: wrong arch in e_flags",
                    input.display()
                );
            }
            match case.reference(sm) {
                Reference::Cubin(path) => {
                    assert!(
                        case.expect_ok,
                        "case {}: expect: error but {} exists",
                        case.name,
                        path.display()
                    );
                    let (e_type, arch) = elf_kind(&path);
                    // `-r` cases: nvlink -r writes ET_REL.
                    let want = if case.options.iter().any(|o| o == "-r") {
                        1
                    } else {
                        2
                    };
                    assert_eq!(
                        e_type,
                        want,
                        "{}: nvlink output must be ET_EXEC (ET_REL with -r)",
                        path.display()
                    );
                    assert_eq!(arch, sm, "{}: wrong arch in e_flags", path.display());
                }
                Reference::Error { exit, stderr } => {
                    assert!(
                        !case.expect_ok,
                        "case {}: expect: ok but sm_{sm} has an .err reference",
                        case.name
                    );
                    assert_ne!(
                        exit, 0,
                        "case {} sm_{sm}: error reference with exit 0",
                        case.name
                    );
                    assert!(
                        stderr.starts_with("nvlink "),
                        "case {} sm_{sm}: unexpected nvlink stderr {stderr:?}",
                        case.name
                    );
                }
            }
        }
    }
}

/// Runs `tool args... file`; panics unless it exits 0 with no error/warning on stderr.
fn read_clean(tool: &Path, args: &[&str], file: &Path) {
    let out = Command::new(tool)
        .args(args)
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", tool.display()));
    let stderr = String::from_utf8_lossy(&out.stderr).to_lowercase();
    assert!(
        out.status.success() && !stderr.contains("error") && !stderr.contains("warning"),
        "`{} {} {}` failed ({}): {stderr}",
        tool.display(),
        args.join(" "),
        file.display(),
        out.status
    );
    assert!(
        !out.stdout.is_empty(),
        "`{} {}` printed nothing",
        tool.display(),
        file.display()
    );
}

#[test]
fn nvlink_references_read_by_cuobjdump_and_nvdisasm() {
    let (Some(cuobjdump), Some(nvdisasm)) = (nv_tool("cuobjdump"), nv_tool("nvdisasm")) else {
        eprintln!("skipped: cuobjdump/nvdisasm not found (run `cargo xtask nv-tools` or set CULINK_NV_TOOLS)");
        return;
    };
    // nvlink outputs cuobjdump 13.0.88 itself rejects ("Checked Data was
    // Invalid"; nvdisasm reads them): -G objects whose `.debug_loc` names a
    // label ptxas left undefined, linked with -g at sm_90+.
    const CUOBJDUMP_REJECTS: &[(&str, &[u32])] = &[("cu_debug_loc_undef_label", &[90, 100, 120])];
    let cubins: Vec<_> = cases()
        .iter()
        .flat_map(|case| {
            case.archs.iter().map(move |&sm| {
                let rejected = CUOBJDUMP_REJECTS
                    .iter()
                    .any(|(name, archs)| *name == case.name && archs.contains(&sm));
                (case.reference(sm), rejected)
            })
        })
        .filter_map(|(r, rejected)| match r {
            Reference::Cubin(path) => Some((path, rejected)),
            Reference::Error { .. } => None,
        })
        .collect();
    let n = cubins.len();
    // Each call costs ~0.3 s of tool start-up: spread them over the cores.
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((path, rejected)) = cubins.get(i) else {
                        break;
                    };
                    if !rejected {
                        read_clean(&cuobjdump, &["-elf", "-sass"], path);
                    }
                    read_clean(&nvdisasm, &[], path);
                })
            })
            .collect();
        for h in handles {
            if let Err(e) = h.join() {
                std::panic::resume_unwind(e);
            }
        }
    });
    assert!(n > 0, "no nvlink.sm_NN.cubin references found");
}

#[test]
fn input_objects_read_by_cuobjdump() {
    let Some(cuobjdump) = nv_tool("cuobjdump") else {
        eprintln!(
            "skipped: cuobjdump not found (run `cargo xtask nv-tools` or set CULINK_NV_TOOLS)"
        );
        return;
    };
    for case in cases() {
        for &sm in &case.archs {
            for input in case.input_paths(sm) {
                read_clean(&cuobjdump, &["-elf"], &input);
            }
        }
    }
}
