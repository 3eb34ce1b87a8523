//! Every input kind links like nvlink: fatbinaries (one image, several archs with
//! PTX, compressed with Zstandard and LZ4), host objects from `nvcc -dc`, archives
//! (regular, thin, by path and by `-l`), PTX compiled by ptxas, `-lcudadevrt`'s
//! rule, lazy archives, host objects without device code.
//!
//! The inputs are built here with the pinned NVIDIA tools (`fatbinary`, `nvcc`,
//! `ptxas`) and `ar` under `target/inputs-tests/` (never committed); nvlink links
//! the same inputs and is the oracle (`diff::diff` must be empty). Without the
//! tools the tests skip, except under `CI=true` (see `common::nv_tool`).

mod common;

use common::{nv_tool, nvcc_host_compiler, workspace_root};
use linker_core::diff::diff;
use linker_core::{
    link, virtual_target_modules, Cubin, InputSource, Library, LinkOptions, Severity, SmArch,
};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The inputs built once per test process.
struct Kit {
    dir: PathBuf,
    nvlink: PathBuf,
    ptxas: PathBuf,
    /// `<tools>/../lib`, where libcudadevrt.a lives.
    cuda_lib: PathBuf,
}

fn run(cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

fn have_ar() -> bool {
    let ok = Command::new("ar").arg("--version").output().is_ok();
    if !ok && common::is_ci() {
        panic!("CI=true but `ar` is missing");
    }
    ok
}

/// Builds every input once: cubins and PTX of `call_extern` (a calls b), host
/// objects of `cu_call_extern`, fatbinaries, archives. `None` when tools are missing.
fn kit() -> Option<&'static Kit> {
    static KIT: OnceLock<Option<Kit>> = OnceLock::new();
    KIT.get_or_init(|| {
        let tools = ["nvlink", "ptxas", "fatbinary", "nvcc"].map(|t| {
            nv_tool(t)
                .ok_or(t)
                .map_err(|t| eprintln!("skipping: no {t}"))
        });
        let [Ok(nvlink), Ok(ptxas), Ok(fatbinary), Ok(nvcc)] = tools else {
            return None;
        };
        if !have_ar() {
            eprintln!("skipping: no ar");
            return None;
        }
        let dir = workspace_root().join("target/inputs-tests");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let fixtures = workspace_root().join("tests/link");
        // Device code: PTX per arch and ptxas cubins.
        for stem in ["a", "b"] {
            let ptx = std::fs::read_to_string(fixtures.join(format!("call_extern/{stem}.ptx")))
                .expect("call_extern fixture PTX");
            for sm in [80, 90] {
                let p = dir.join(format!("{stem}.sm_{sm}.ptx"));
                std::fs::write(&p, ptx.replace("SMXX", &format!("sm_{sm}"))).unwrap();
                run(Command::new(&ptxas)
                    .current_dir(&dir)
                    .arg(format!("-arch=sm_{sm}"))
                    .args(["-m64", "-c", &format!("{stem}.sm_{sm}.ptx")])
                    .args(["-o", &format!("{stem}.sm_{sm}.o")]));
            }
        }
        // A member no one needs: an extra kernel.
        std::fs::write(
            dir.join("x.cu"),
            "__global__ void xkern(int *p) { p[0] = 3; }\n",
        )
        .unwrap();
        let fat = |out: &str, extra: &[&str], images: &[&str]| {
            let mut c = Command::new(&fatbinary);
            c.current_dir(&dir)
                .arg(format!("--create={out}"))
                .args(extra);
            for i in images {
                c.arg(format!("--image3={i}"));
            }
            run(&mut c);
        };
        fat("b.fatbin", &[], &["kind=elf,sm=90,file=b.sm_90.o"]);
        fat(
            "b.multi.fatbin",
            &[],
            &[
                "kind=elf,sm=80,file=b.sm_80.o",
                "kind=elf,sm=90,file=b.sm_90.o",
                "kind=ptx,sm=90,file=b.sm_90.ptx",
            ],
        );
        fat(
            "b.zstd.fatbin",
            &["--compress-all"],
            &["kind=elf,sm=90,file=b.sm_90.o"],
        );
        fat(
            "b.lz4.fatbin",
            &["--compress-all", "--compress-mode=speed"],
            &["kind=elf,sm=90,file=b.sm_90.o"],
        );
        fat(
            "b.ptxonly.fatbin",
            &[],
            &["kind=ptx,sm=80,file=b.sm_80.ptx"],
        );
        // nvcc's host compiler.
        let cc = nvcc_host_compiler();
        // Host objects (the CUDA C++ version of call_extern).
        for stem in ["a", "b", "x"] {
            if stem == "x" {
                run(Command::new(&nvcc)
                    .current_dir(&dir)
                    .args(["-ccbin", &cc, "-arch=sm_90", "-rdc=true", "-dc", "x.cu"])
                    .args(["-o", "x.host90.o"]));
                continue;
            }
            std::fs::copy(
                fixtures.join(format!("cu_call_extern/{stem}.cu")),
                dir.join(format!("{stem}.cu")),
            )
            .unwrap();
            for sm in [80, 90] {
                let mut c = Command::new(&nvcc);
                c.current_dir(&dir);
                c.args(["-ccbin", &cc])
                    .arg(format!("-arch=sm_{sm}"))
                    .args(["-rdc=true", "-dc", &format!("{stem}.cu")])
                    .args(["-o", &format!("{stem}.host{sm}.o")]);
                run(&mut c);
            }
        }
        // PTX-only host objects (`code=compute_80`), plain, -G and -lineinfo:
        // the linker compiles them, with the options nvcc recorded.
        for (stem, flag, tag) in [
            ("a", "", "ptx"),
            ("a", "-G", "ptxG"),
            ("b", "", "ptx"),
            ("b", "-lineinfo", "ptxL"),
        ] {
            let mut c = Command::new(&nvcc);
            c.current_dir(&dir)
                .args(["-ccbin", &cc, "-gencode", "arch=compute_80,code=compute_80"])
                .args(["-rdc=true", "-dc"])
                .args(Some(flag).filter(|f| !f.is_empty()))
                .arg(format!("{stem}.cu"))
                .args(["-o", &format!("{stem}.{tag}.o")]);
            run(&mut c);
        }
        // A host object without device code.
        std::fs::write(dir.join("plain.c"), "int plain(void) { return 1; }\n").unwrap();
        run(Command::new("gcc")
            .current_dir(&dir)
            .args(["-c", "plain.c", "-o", "plain.o"]));
        // Archives.
        std::fs::copy(dir.join("b.host90.o"), dir.join("sub/b.host90.o")).unwrap();
        run(Command::new("ar")
            .current_dir(&dir)
            .args(["rcs", "libb.a", "b.host90.o"]));
        run(Command::new("ar")
            .current_dir(&dir)
            .args(["rcsT", "libbthin.a", "b.host90.o"]));
        // nvlink 13.0.88 fails ("Memory allocation failure") on a thin member in
        // a subdirectory; culink reads it (checked against the regular archive).
        run(Command::new("ar")
            .current_dir(&dir)
            .args(["rcsT", "libbthinsub.a", "sub/b.host90.o"]));
        run(Command::new("ar").current_dir(&dir).args([
            "rcs",
            "libbx.a",
            "b.host90.o",
            "x.host90.o",
        ]));
        let cuda_lib = nvlink
            .parent()
            .unwrap()
            .join("../lib")
            .canonicalize()
            .unwrap_or_default();
        Some(Kit {
            dir,
            nvlink,
            ptxas,
            cuda_lib,
        })
    })
    .as_ref()
}

impl Kit {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// nvlink's output for `args` (run in the kit directory), read back.
    fn nvlink(&self, sm: u32, args: &[&str], out: &str) -> Vec<u8> {
        let o = Command::new(&self.nvlink)
            .current_dir(&self.dir)
            .arg(format!("-arch=sm_{sm}"))
            .args(args)
            .args(["-o", out])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "nvlink {args:?} failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        std::fs::read(self.path(out)).unwrap()
    }

    fn options(&self, sm: u32, inputs: &[&str]) -> LinkOptions {
        LinkOptions {
            arch: Some(SmArch::new(sm)),
            inputs: inputs
                .iter()
                .map(|i| InputSource::File(self.path(i)))
                .collect(),
            ptxas: Some(self.ptxas.clone()),
            ..LinkOptions::default()
        }
    }
}

/// Links `opts` with culink and checks the output against `reference`.
fn assert_like(opts: &LinkOptions, reference: &[u8], what: &str) -> linker_core::LinkOutput {
    let out = link(opts).unwrap_or_else(|f| {
        let msgs: Vec<String> = f.diagnostics.iter().map(|d| d.error.to_string()).collect();
        panic!("{what}: culink failed:\n{}", msgs.join("\n"))
    });
    let ours = Cubin::parse(&out.cubin).unwrap();
    let theirs = Cubin::parse(reference).unwrap();
    let d = diff(&ours, &theirs);
    assert!(
        d.is_empty(),
        "{what}: {} difference(s) from nvlink:\n{}",
        d.len(),
        d.iter()
            .map(|x| format!("  {x}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    out
}

#[test]
fn fatbin_with_one_cubin_links_like_the_cubin() {
    let Some(k) = kit() else { return };
    let nv = k.nvlink(90, &["a.sm_90.o", "b.fatbin"], "nv.fat.cubin");
    // nvlink: identical bytes to linking b.sm_90.o directly.
    assert_eq!(nv, k.nvlink(90, &["a.sm_90.o", "b.sm_90.o"], "nv.ab.cubin"));
    let ours = assert_like(&k.options(90, &["a.sm_90.o", "b.fatbin"]), &nv, "fatbin").cubin;
    let direct = link(&k.options(90, &["a.sm_90.o", "b.sm_90.o"])).unwrap();
    assert_eq!(ours, direct.cubin, "a fatbin of b.o must link like b.o");
}

#[test]
fn multi_arch_fatbin_picks_the_target_elf() {
    let Some(k) = kit() else { return };
    for (sm, a) in [(90, "a.sm_90.o"), (80, "a.sm_80.o")] {
        let nv = k.nvlink(sm, &[a, "b.multi.fatbin"], &format!("nv.multi{sm}.cubin"));
        assert_like(
            &k.options(sm, &[a, "b.multi.fatbin"]),
            &nv,
            &format!("multi sm_{sm}"),
        );
    }
    // sm_86: the sm_80 image is compatible (same family, older).
    let nv = k.nvlink(86, &["a.sm_80.o", "b.multi.fatbin"], "nv.multi86.cubin");
    assert_like(
        &k.options(86, &["a.sm_80.o", "b.multi.fatbin"]),
        &nv,
        "multi sm_86",
    );
}

#[test]
fn compressed_fatbins() {
    let Some(k) = kit() else { return };
    for f in ["b.zstd.fatbin", "b.lz4.fatbin"] {
        let nv = k.nvlink(90, &["a.sm_90.o", f], &format!("nv.{f}.cubin"));
        assert_like(&k.options(90, &["a.sm_90.o", f]), &nv, f);
    }
}

#[test]
fn ptx_only_fatbin_and_ptx_text_are_compiled_by_ptxas() {
    let Some(k) = kit() else { return };
    let nv = k.nvlink(90, &["a.sm_90.o", "b.ptxonly.fatbin"], "nv.ptxonly.cubin");
    assert_like(
        &k.options(90, &["a.sm_90.o", "b.ptxonly.fatbin"]),
        &nv,
        "PTX-only fatbin",
    );
    // PTX text: nvlink does not read it; the reference is the ptxas cubin.
    let nv = k.nvlink(90, &["a.sm_90.o", "b.sm_90.o"], "nv.ptxtext.cubin");
    assert_like(
        &k.options(90, &["a.sm_90.o", "b.sm_90.ptx"]),
        &nv,
        "PTX text",
    );
    // No ptxas: a clear error naming the input.
    let mut o = k.options(90, &["a.sm_90.o", "b.sm_90.ptx"]);
    o.ptxas = Some(PathBuf::from("/nonexistent/ptxas"));
    let f = link(&o).unwrap_err();
    let e = f.errors().next().unwrap();
    assert!(e.to_string().contains("b.sm_90.ptx"), "{e}");
}

/// nvlink compiles a fatbinary's PTX with the ptxas options nvcc recorded in
/// its entry (`-lineinfo`; `-G`: `-g --dont-merge-basicblocks
/// --return-at-end`), the link's `-Xptxas`, `-maxrregcount` and `-g`: the code,
/// debug sections and the objects' tkinfo notes show them.
#[test]
fn ptx_is_compiled_with_the_options_nvlink_gives_its_ptxas() {
    let Some(k) = kit() else { return };
    type Case<'a> = (&'a str, &'a [&'a str], &'a [&'a str], bool, &'a [&'a str]);
    let cases: &[Case] = &[
        ("plain", &["a.ptx.o", "b.ptx.o"], &[], false, &[]),
        ("-g", &["a.ptx.o", "b.ptx.o"], &["-g"], true, &[]),
        ("-G object", &["a.ptxG.o", "b.ptx.o"], &[], false, &[]),
        (
            "-lineinfo object, -Xptxas, -maxrregcount",
            &["a.ptx.o", "b.ptxL.o"],
            &["-Xptxas", "-O1", "-maxrregcount=32"],
            false,
            &["-O1", "-maxrregcount=32"],
        ),
    ];
    for (i, &(what, inputs, nv_args, debug, ptxas_options)) in cases.iter().enumerate() {
        let args: Vec<&str> = nv_args.iter().chain(inputs).copied().collect();
        let nv = k.nvlink(80, &args, &format!("nv.ptxopts{i}.cubin"));
        let mut o = k.options(80, inputs);
        o.device_debug = debug;
        o.ptxas_options = ptxas_options.iter().map(|s| s.to_string()).collect();
        // ptxas' warnings are the link's (nvlink prints them too): with
        // -g, two per input without DWARF.
        let warnings = assert_like(&o, &nv, what)
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .filter(|d| d.error.to_string().contains("section not found"))
            .count();
        assert_eq!(warnings, if debug { 4 } else { 0 }, "{what}");
    }
}

#[test]
fn host_objects_and_host_code_fallback_to_ptx() {
    let Some(k) = kit() else { return };
    let nv = k.nvlink(90, &["a.host90.o", "b.host90.o"], "nv.host.cubin");
    assert_like(
        &k.options(90, &["a.host90.o", "b.host90.o"]),
        &nv,
        "host objects",
    );
    // b.host80.o has sm_80 ELF + PTX: at sm_90 the PTX is compiled.
    let nv = k.nvlink(90, &["a.host90.o", "b.host80.o"], "nv.host80.cubin");
    assert_like(
        &k.options(90, &["a.host90.o", "b.host80.o"]),
        &nv,
        "host object PTX fallback",
    );
    // A gcc object without device code is skipped (reported under -v).
    let nv = k.nvlink(
        90,
        &["a.host90.o", "b.host90.o", "plain.o"],
        "nv.plain.cubin",
    );
    let mut o = k.options(90, &["a.host90.o", "b.host90.o", "plain.o"]);
    o.verbose = true;
    let out = assert_like(&o, &nv, "plain host object");
    assert!(out
        .diagnostics
        .iter()
        .any(|d| d.severity == Severity::Info && d.error.message.contains("plain.o")));
}

#[test]
fn host_object_without_code_for_the_target_is_a_warning() {
    let Some(k) = kit() else { return };
    // An sm_80-only fatbin at sm_90: warning, the rest links.
    let mut o2 = k.options(90, &["a.sm_90.o", "b.sm_90.o"]);
    let sm80 = k.dir.join("b80only.fatbin");
    run(Command::new(nv_tool("fatbinary").unwrap())
        .current_dir(&k.dir)
        .args([
            "--create=b80only.fatbin",
            "--image3=kind=elf,sm=80,file=b.sm_80.o",
        ]));
    o2.inputs.push(InputSource::File(sm80));
    let out = link(&o2).unwrap();
    let w: Vec<String> = out
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .map(|d| d.error.message.clone())
        .collect();
    assert_eq!(
        w,
        vec![format!(
            "SM Arch ('sm_90') not found in '{}'",
            k.dir.join("b80only.fatbin").display()
        )]
    );
}

/// A virtual target (`compute_XX`, nvcc's device link of a PTX-only build)
/// links nothing but still checks as nvlink 13.0.88 does: a cubin for a later
/// SM fails ("Input file 'b.sm_90.o' arch does not match target
/// 'compute_80'"; any earlier SM passes, unlike an `sm_XX` link), and an
/// input without PTX for the target gets "SM Arch ('compute_80') not found"
/// (SASS does not count). Each verdict is nvlink's on the same command line.
#[test]
fn virtual_targets_check_inputs_as_nvlink() {
    let Some(k) = kit() else { return };
    for (sm, input, fails, warns) in [
        (80, "b.sm_90.o", true, false),
        (90, "b.sm_80.o", false, false),
        (80, "b.ptxonly.fatbin", false, false),
        (75, "b.ptxonly.fatbin", false, true),
        (90, "b.fatbin", false, true),
        (80, "b.multi.fatbin", false, true),
        (90, "b.multi.fatbin", false, false),
    ] {
        let nv = Command::new(&k.nvlink)
            .current_dir(&k.dir)
            .arg(format!("-arch=compute_{sm}"))
            .arg(input)
            .output()
            .unwrap();
        let nv_err = String::from_utf8_lossy(&nv.stderr);
        assert_eq!(
            !nv.status.success(),
            fails,
            "nvlink compute_{sm} {input}: {nv_err}"
        );
        assert_eq!(
            nv_err.contains("not found in"),
            warns,
            "nvlink compute_{sm} {input}: {nv_err}"
        );
        let what = format!("culink compute_{sm} {input}");
        match virtual_target_modules(&k.options(sm, &[input])) {
            Ok((_, diags)) => {
                assert!(!fails, "{what} linked");
                let w = diags.iter().any(|d| {
                    d.error.message
                        == format!(
                            "SM Arch ('compute_{sm}') not found in '{}'",
                            k.path(input).display()
                        )
                });
                assert_eq!(w, warns, "{what}: {diags:?}");
            }
            Err(f) => {
                assert!(fails, "{what}: {f:?}");
                assert!(
                    f.diagnostics.iter().any(|d| d
                        .error
                        .message
                        .contains("does not match the target compute_80")),
                    "{what}: {f:?}"
                );
            }
        }
    }
}

#[test]
fn no_code_for_the_target_gives_nvlinks_empty_cubin() {
    let Some(k) = kit() else { return };
    // An sm_80-only fatbin: no code for sm_75, sm_90 or Blackwell. nvlink
    // writes an empty cubin (warning, exit 0) whose metadata depends on the
    // arch: no `.nv.compat` below sm_90; on Blackwell the format nibble 2,
    // no Mercury ISA version, a `.nv.merc.symtab` mirroring `.symtab`.
    run(Command::new(nv_tool("fatbinary").unwrap())
        .current_dir(&k.dir)
        .args([
            "--create=empty80.fatbin",
            "--image3=kind=elf,sm=80,file=b.sm_80.o",
        ]));
    for sm in [75, 90, 100, 120] {
        let nv = k.nvlink(sm, &["empty80.fatbin"], &format!("nv.empty{sm}.cubin"));
        assert_like(
            &k.options(sm, &["empty80.fatbin"]),
            &nv,
            &format!("empty link at sm_{sm}"),
        );
    }
}

#[test]
fn archives_by_path_thin_and_by_name() {
    let Some(k) = kit() else { return };
    // By path: loaded where it stands.
    let nv = k.nvlink(90, &["libb.a", "a.host90.o"], "nv.ar.cubin");
    assert_like(&k.options(90, &["libb.a", "a.host90.o"]), &nv, "archive");
    let nv = k.nvlink(90, &["a.host90.o", "libbthin.a"], "nv.thin.cubin");
    assert_like(
        &k.options(90, &["a.host90.o", "libbthin.a"]),
        &nv,
        "thin archive",
    );
    let nv = k.nvlink(90, &["a.host90.o", "libb.a"], "nv.ar2.cubin");
    assert_like(
        &k.options(90, &["a.host90.o", "libbthinsub.a"]),
        &nv,
        "thin archive, member in a subdirectory",
    );
    // -l: after every input, wherever given.
    let nv = k.nvlink(90, &["-L.", "-lb", "a.host90.o"], "nv.lb.cubin");
    let mut o = k.options(90, &["a.host90.o"]);
    o.library_paths = vec![k.dir.clone()];
    o.libraries = vec![Library::new("b")];
    assert_like(&o, &nv, "-lb");
    // Missing library: a warning from culink (nvlink says nothing).
    o.libraries.push(Library::new("nosuch"));
    let out = link(&o).unwrap();
    assert!(out
        .diagnostics
        .iter()
        .any(|d| d.severity == Severity::Warning && d.error.message.contains("-lnosuch")));
}

#[test]
fn cudadevrt_only_when_needed() {
    let Some((k, lib)) = kit_with_devrt() else {
        return;
    };
    let nv = k.nvlink(
        90,
        &[
            "a.host90.o",
            "b.host90.o",
            &format!("-L{lib}"),
            "-lcudadevrt",
        ],
        "nv.devrt.cubin",
    );
    let mut o = k.options(90, &["a.host90.o", "b.host90.o"]);
    o.library_paths = vec![k.cuda_lib.clone()];
    o.libraries = vec![Library::new("cudadevrt")];
    assert_like(&o, &nv, "-lcudadevrt with nothing undefined");
    // With an undefined symbol left, cudadevrt is loaded (and the error stays).
    let mut o = k.options(90, &["a.host90.o"]);
    o.library_paths = vec![k.cuda_lib.clone()];
    o.libraries = vec![Library::new("cudadevrt")];
    o.verbose = true;
    let f = link(&o).unwrap_err();
    assert!(f
        .errors()
        .any(|e| e.message.contains("_Z7add_onei") || e.symbol.as_deref() == Some("_Z7add_onei")));
    // A texture, sampler or surface reference (PTX `.texref`, `.samplerref`,
    // `.surfref`: undefined symbols the driver binds by name) needs no
    // definition: nvlink loads no libcudadevrt for it (found by the real-code
    // sweep, docs/nvcc.md; culink loaded it: 975 differences).
    let ptx = "\
.version 9.0
.target sm_90, texmode_independent
.address_size 64
.global .texref tt;
.global .samplerref ss;
.global .surfref uu;
.visible .entry ks(.param .u64 o) {
 .reg .f32 %f<5>; .reg .u64 %rd<2>; .reg .s32 %r<3>;
 ld.param.u64 %rd1, [o];
 mov.u32 %r1, %tid.x;
 tex.1d.v4.f32.s32 {%f1,%f2,%f3,%f4}, [tt, ss, {%r1}];
 st.global.f32 [%rd1], %f1;
 suld.b.1d.b32.trap {%r2}, [uu, {%r1}];
 st.global.u32 [%rd1+4], %r2;
 ret;
}
";
    std::fs::write(k.dir.join("texref.ptx"), ptx).unwrap();
    run(Command::new(&k.ptxas).current_dir(&k.dir).args([
        "-arch=sm_90",
        "-m64",
        "-c",
        "texref.ptx",
        "-o",
        "texref.o",
    ]));
    let nv = k.nvlink(
        90,
        &["texref.o", &format!("-L{lib}"), "-lcudadevrt"],
        "nv.texref.cubin",
    );
    let mut o = k.options(90, &["texref.o"]);
    o.library_paths = vec![k.cuda_lib.clone()];
    o.libraries = vec![Library::new("cudadevrt")];
    assert_like(
        &o,
        &nv,
        "-lcudadevrt with texture references left undefined",
    );
}

/// The kit and its libcudadevrt directory, when the toolkit has the library
/// (under `CI=true` it must).
fn kit_with_devrt() -> Option<(&'static Kit, String)> {
    let k = kit()?;
    if !k.cuda_lib.join("libcudadevrt.a").is_file() {
        assert!(!common::is_ci(), "CI=true but libcudadevrt.a is missing");
        return None;
    }
    let lib = k.cuda_lib.display().to_string();
    Some((k, lib))
}

/// A `-r` output holds the names the linker and the driver resolve
/// (`__UFT*`, `__UDT*`, `.nv.reservedSmem.offset0`) as GLOBAL undefined
/// symbols (sm_90+); relinked with -lcudadevrt (as nvcc -dlink passes it),
/// nvlink loads no libcudadevrt for them. culink loaded it whole (found by
/// the real-code sweep: 971 differences for one kernel).
#[test]
fn relocatable_output_needs_no_device_runtime() {
    let Some((k, lib)) = kit_with_devrt() else {
        return;
    };
    k.nvlink(90, &["-r", "a.host90.o", "b.host90.o"], "ab.r90.o");
    let nv = k.nvlink(
        90,
        &["ab.r90.o", &format!("-L{lib}"), "-lcudadevrt"],
        "nv.r90.devrt.cubin",
    );
    let mut o = k.options(90, &["ab.r90.o"]);
    o.library_paths = vec![k.cuda_lib.clone()];
    o.libraries = vec![Library::new("cudadevrt")];
    assert_like(&o, &nv, "-r output relinked with -lcudadevrt");
}

#[test]
fn lazy_archives_extract_only_needed_members() {
    let Some(k) = kit() else { return };
    // Whole (nvlink): xkern comes along.
    let nv = k.nvlink(90, &["a.host90.o", "libbx.a"], "nv.bx.cubin");
    assert_like(
        &k.options(90, &["a.host90.o", "libbx.a"]),
        &nv,
        "whole archive",
    );
    // Lazy: only b's member, like linking a + b.
    let nv_ab = k.nvlink(90, &["a.host90.o", "b.host90.o"], "nv.ab2.cubin");
    let mut o = k.options(90, &["a.host90.o", "libbx.a"]);
    o.lazy_archives = true;
    assert_like(&o, &nv_ab, "lazy archive");
    // --whole-archive around it: whole again.
    o.whole_archive_inputs = vec![1];
    assert_like(&o, &nv, "lazy + --whole-archive");
}

#[test]
fn malformed_inputs_are_errors_naming_the_file() {
    let Some(k) = kit() else { return };
    let fat = std::fs::read(k.path("b.fatbin")).unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "junk.o",
            b"\x01\x02\x03 random bytes".to_vec(),
            "not a recognised",
        ),
        (
            "trunc.fatbin",
            fat[..fat.len() / 2].to_vec(),
            "runs past the end",
        ),
        (
            "trunc.a",
            std::fs::read(k.path("libb.a")).unwrap()[..200].to_vec(),
            "runs past the end",
        ),
    ];
    for (name, bytes, msg) in cases {
        let p = k.path(name);
        std::fs::write(&p, &bytes).unwrap();
        let f = link(&k.options(90, &["a.sm_90.o", name])).unwrap_err();
        let e = f.errors().next().unwrap();
        let text = e.to_string();
        assert!(
            text.contains(&p.display().to_string()) && text.contains(msg),
            "{name}: {text}"
        );
    }
}

#[test]
fn kit_paths_exist() {
    let Some(k) = kit() else { return };
    for f in ["b.fatbin", "libb.a", "libbthin.a", "a.host90.o"] {
        assert!(Path::new(&k.path(f)).is_file(), "{f}");
    }
}
