//! Linker features beyond the plain link: `-r`, `--preserve-relocs`,
//! `--dump-callgraph[-dot]`, the link map, `--why-live`, `-time`, and the
//! diagnostics nvlink lacks.

mod common;

use common::*;
use linker_core::elf::{ET_REL, SHT_CUDA_CONSTANT0, SHT_CUDA_RESOLVED_RELA};
use linker_core::Cubin;

#[test]
fn relocatable_link_then_final_link() {
    let dir = scratch("r");
    let r = dir.join("r.o");
    let a = fixture("call_extern", "a.sm_90.o");
    let b = fixture("call_extern", "b.sm_90.o");
    ok(&culink(&[
        "-arch=sm_90",
        "-r",
        &a,
        &b,
        "-o",
        r.to_str().unwrap(),
    ]));
    let bytes = std::fs::read(&r).unwrap();
    let c = Cubin::parse(&bytes).unwrap();
    assert_eq!(c.header.e_type, ET_REL);
    assert_eq!(c.header.e_phnum, 0);
    assert!(c.section_by_name(".nv.rel.action").is_none());
    let c0 = c.section_by_name(".nv.constant0.kern_a").unwrap();
    assert_eq!(c0.sh_type, SHT_CUDA_CONSTANT0);
    // Linked again, it equals the direct link (but for the tkinfo notes).
    let once = dir.join("once.cubin");
    let direct = dir.join("direct.cubin");
    ok(&culink(&[
        "-arch=sm_90",
        r.to_str().unwrap(),
        "-o",
        once.to_str().unwrap(),
    ]));
    ok(&culink(&[
        "-arch=sm_90",
        &a,
        &b,
        "-o",
        direct.to_str().unwrap(),
    ]));
    let d = culink(&["diff", once.to_str().unwrap(), direct.to_str().unwrap()]);
    for line in text(&d.stdout).lines() {
        assert!(
            line.contains("tkinfo") || line.ends_with("differences"),
            "relinked -r output differs: {line}"
        );
    }
}

#[test]
fn preserve_relocs_lists_resolved_relocations() {
    let dir = scratch("pr");
    let out = dir.join("p.cubin");
    let ins: Vec<String> = ["a", "b", "c1", "c2"]
        .iter()
        .map(|s| fixture("preserve_relocs", &format!("{s}.sm_90.o")))
        .collect();
    let mut args = vec![
        "-arch=sm_90",
        "--preserve-relocs",
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend(ins.iter().map(String::as_str));
    ok(&culink(&args));
    let bytes = std::fs::read(&out).unwrap();
    let c = Cubin::parse(&bytes).unwrap();
    let s = c.section_by_name(".nv.resolvedrela.text.k1").unwrap();
    assert_eq!(s.sh_type, SHT_CUDA_RESOLVED_RELA);
    assert_eq!(s.entsize, 24);
    assert!(c.symbols.iter().any(|s| s.name == "$__sh1__13"));
}

/// nvlink 13.0.88 warns that `--preserve-relocs` is "not fully implemented"
/// from sm_90 on (its words, spelling included; measured at sm_89: nothing;
/// sm_90 to sm_121: this line, also with `-r`); `-Werror` makes it an error
/// and no output is written.
#[test]
fn preserve_relocs_warns_from_sm_90_on() {
    let dir = scratch("prwarn");
    let run = |sm: u32, extra: &[&str]| {
        let out = dir.join(format!("p{sm}{}.cubin", extra.len()));
        let _ = std::fs::remove_file(&out);
        let ins: Vec<String> = ["a", "b", "c1", "c2"]
            .iter()
            .map(|s| fixture("preserve_relocs", &format!("{s}.sm_{sm}.o")))
            .collect();
        let mut args: Vec<String> = vec![format!("-arch=sm_{sm}"), "--preserve-relocs".into()];
        args.extend(extra.iter().map(|s| s.to_string()));
        args.extend(ins);
        args.extend(["-o".into(), out.display().to_string()]);
        (culink(&args), out.exists())
    };
    let warning = "Option '--preserve-relocs' is not fully implemented for gpu archtecture 'sm_90' and may not work as expected";
    let (o, written) = run(90, &[]);
    assert!(o.status.success() && written);
    assert_eq!(
        text(&o.stderr).matches(warning).count(),
        1,
        "{}",
        text(&o.stderr)
    );
    let (o, written) = run(90, &["-r"]);
    assert!(o.status.success() && written);
    assert!(text(&o.stderr).contains(warning), "{}", text(&o.stderr));
    let (o, written) = run(89, &[]);
    assert!(o.status.success() && written);
    assert!(
        !text(&o.stderr).contains("--preserve-relocs"),
        "{}",
        text(&o.stderr)
    );
    let (o, written) = run(90, &["-Werror"]);
    assert!(!o.status.success() && !written);
    assert!(
        text(&o.stderr).contains(&format!("error: {warning}")),
        "{}",
        text(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

const CHAIN_CALLGRAPH: &str = "callgraph for sm_90:
# A: s -> B // s (number A) potentially calls B
# s [N]     // s uses N registers
# ^s        // s is entry point
# &s        // s has address taken
1: ^kchain [24] -> 2
2: f1 [24] -> 3
3: f2 [254] ->
regcount 254 for f2 propagated to entry kchain
";

fn chain_inputs() -> Vec<String> {
    ["a", "b", "c"]
        .iter()
        .map(|s| fixture("call_chain3", &format!("{s}.sm_90.o")))
        .collect()
}

#[test]
fn dump_callgraph_as_nvlink_and_dot() {
    let dir = scratch("cg");
    let out = dir.join("o.cubin");
    let dot = dir.join("cg.dot");
    let ins = chain_inputs();
    let mut args = vec![
        "-arch=sm_90",
        "--dump-callgraph",
        "--dump-callgraph-dot",
        dot.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend(ins.iter().map(String::as_str));
    let o = culink(&args);
    ok(&o);
    // Byte for byte what nvlink 13.0.88 prints (on stderr) for this link.
    assert_eq!(text(&o.stderr), CHAIN_CALLGRAPH);
    let d = std::fs::read_to_string(&dot).unwrap();
    assert!(d.starts_with("digraph callgraph {"), "{d}");
    assert!(d.contains("f0 -> f1;") && d.contains("f1 -> f2;"), "{d}");
    assert!(d.contains("label=\"f2\\n254 regs\""), "{d}");
}

#[test]
fn link_map_and_why_live() {
    let dir = scratch("map");
    let out = dir.join("o.cubin");
    let map = dir.join("o.map");
    let map_arg = format!("-Map={}", map.display());
    let ins = chain_inputs();
    let mut args = vec![
        "-arch=sm_90",
        &map_arg,
        "--why-live",
        "f2",
        "--why-live",
        "kchain",
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend(ins.iter().map(String::as_str));
    let o = culink(&args);
    ok(&o);
    let why = text(&o.stdout);
    assert!(
        why.contains("f2 (") && why.contains("kept: kernel kchain calls f1, calls f2"),
        "{why}"
    );
    assert!(
        why.contains("kchain (") && why.contains("it is a kernel"),
        "{why}"
    );
    let m = std::fs::read_to_string(&map).unwrap();
    assert!(m.contains(".text.f2"), "{m}");
    assert!(m.contains("c.sm_90.o:.text.f2"), "{m}");
    assert!(m.contains("b.sm_90.o:.debug_frame"), "{m}");
    assert!(
        m.lines()
            .any(|l| l.contains("kchain") && l.contains("global")),
        "{m}"
    );
    // --print-map: the same text on stdout; deterministic.
    let mut args2 = vec!["-arch=sm_90", "--print-map", "-o", out.to_str().unwrap()];
    args2.extend(ins.iter().map(String::as_str));
    let p = culink(&args2);
    ok(&p);
    assert_eq!(text(&p.stdout), m);
}

#[test]
fn time_csv_header_once_then_rows() {
    let dir = scratch("time");
    let out = dir.join("o.cubin");
    let csv = dir.join("t.csv");
    let ins = chain_inputs();
    for _ in 0..2 {
        let mut args = vec![
            "-arch=sm_90",
            "-time",
            csv.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ];
        args.extend(ins.iter().map(String::as_str));
        ok(&culink(&args));
    }
    let t = std::fs::read_to_string(&csv).unwrap();
    let header = "source file name , phase name , phase input files , phase output file , arch , tool, metric , unit";
    assert_eq!(t.matches(header).count(), 1, "{t}");
    assert!(t.starts_with(header));
    assert_eq!(
        t.lines().filter(|l| l.contains(" , load , ")).count(),
        2,
        "{t}"
    );
    assert!(t.lines().skip(1).all(|l| l.ends_with(" , ms")), "{t}");
}

/// A GNU `ar` archive of `(name, bytes)` members.
fn ar(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = b"!<arch>\n".to_vec();
    for (name, data) in members {
        let header = format!(
            "{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n",
            format!("{name}/"),
            0,
            0,
            0,
            644,
            data.len()
        );
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        if data.len() % 2 == 1 {
            out.push(b'\n');
        }
    }
    out
}

#[test]
fn undefined_reference_hints() {
    let dir = scratch("hints");
    let a = fixture("call_extern", "a.sm_90.o");
    let b = std::fs::read(fixture("call_extern", "b.sm_90.o")).unwrap();
    let out = dir.join("o.cubin");
    let out_s = out.to_str().unwrap();
    // A library on the search path that is not named with -l.
    let libdir = dir.join("lib");
    std::fs::create_dir_all(&libdir).unwrap();
    std::fs::write(libdir.join("libadd.a"), ar(&[("b.o", &b)])).unwrap();
    let l = format!("-L{}", libdir.display());
    let o = culink(&["-arch=sm_90", &a, &l, "-o", out_s]);
    assert_eq!(o.status.code(), Some(1));
    let e = text(&o.stderr);
    assert!(
        e.contains("undefined reference to 'add_one'")
            && e.contains("libadd.a(b.o)' on the library search path: add -ladd"),
        "{e}"
    );
    // With -ladd it links.
    ok(&culink(&["-arch=sm_90", &a, &l, "-ladd", "-o", out_s]));
    // A near-miss name: b's `add_one` renamed `add_onf` (same length).
    let pos = b
        .windows(9)
        .position(|w| w == b"\0add_one\0")
        .expect("symbol name in .strtab");
    let mut b2 = b.clone();
    b2[pos + 7] = b'f';
    let b2p = dir.join("b2.o");
    std::fs::write(&b2p, &b2).unwrap();
    std::fs::remove_file(&out).unwrap();
    let o = culink(&["-arch=sm_90", &a, b2p.to_str().unwrap(), "-o", out_s]);
    assert_eq!(o.status.code(), Some(1));
    let e = text(&o.stderr);
    assert!(
        e.contains("undefined reference to 'add_one'")
            && e.contains("did you mean 'add_onf' (in '"),
        "{e}"
    );
    assert!(!out.exists());
}

#[test]
fn multiple_definition_names_both_archive_members() {
    let dir = scratch("dup");
    let a = fixture("call_extern", "a.sm_90.o");
    let b = std::fs::read(fixture("call_extern", "b.sm_90.o")).unwrap();
    let lib = dir.join("libdup.a");
    std::fs::write(&lib, ar(&[("one.o", &b), ("two.o", &b)])).unwrap();
    let out = dir.join("o.cubin");
    let o = culink(&[
        "-arch=sm_90",
        &a,
        lib.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let e = text(&o.stderr);
    assert!(
        e.contains("multiple definition of 'add_one'")
            && e.contains("libdup.a(one.o)")
            && e.contains("libdup.a(two.o)"),
        "{e}"
    );
}

/// `-suppress-stack-size-warning` (nvlink's, users pass it with `-Xnvlink`):
/// the recursion warning goes, and with it `-Werror`'s failure; the output is
/// the same.
#[test]
fn suppress_stack_size_warning() {
    let dir = scratch("stackwarn");
    let inputs = [
        fixture("mutual_recursion", "a.sm_90.o"),
        fixture("mutual_recursion", "b.sm_90.o"),
        fixture("mutual_recursion", "c.sm_90.o"),
    ];
    let run = |extra: &[&str], out: &str| {
        let mut args: Vec<String> = vec!["-arch=sm_90".into()];
        args.extend(extra.iter().map(|s| s.to_string()));
        args.extend(inputs.iter().cloned());
        args.extend(["-o".into(), dir.join(out).display().to_string()]);
        culink(&args)
    };
    let warned = run(&[], "a.cubin");
    assert!(warned.status.success());
    assert!(text(&warned.stderr).contains("cannot be statically determined"));
    assert!(!run(&["-Werror"], "b.cubin").status.success());
    let quiet = run(&["-suppress-stack-size-warning", "-Werror"], "c.cubin");
    assert!(quiet.status.success(), "{}", text(&quiet.stderr));
    assert_eq!(text(&quiet.stderr), "");
    assert_eq!(
        std::fs::read(dir.join("a.cubin")).unwrap(),
        std::fs::read(dir.join("c.cubin")).unwrap()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
