//! `nvcc -dlink` with culink as the device linker, end to end.
//!
//! Three CUDA files of our own (templates + printf + a `__device__` variable;
//! a kernel launching a kernel through the device runtime, which pulls in
//! libcudadevrt; host code only) are built with `nvcc -dc`. Then:
//!
//! * `culink nvcc-shim` makes a shadow toolkit; `nvcc -dlink -dryrun` through
//!   it shows the nvlink command line nvcc runs;
//! * that exact command line is run with NVIDIA's nvlink and with culink
//!   (invoked as `nvlink` from the shadow toolkit): the cubins must be
//!   equivalent (`culink diff --phdrs`: `linker_core::diff`, also the
//!   program-header rule) and the `--register-link-binaries` files
//!   byte-identical (host-reference pruning removes the kernels host code
//!   never launches in both);
//! * the real `nvcc -dlink` through the shadow toolkit (culink's output goes
//!   through fatbinary and `crt/link.stub`), then `g++` links an executable,
//!   which runs (its `main` touches no GPU);
//! * an object without code for the target: a warning, exit 0, an empty cubin
//!   equivalent to nvlink's and the same register file;
//! * two `-gencode` archs (nvcc runs the linker twice with `-report-arch`; CDP
//!   at sm_80 and sm_90) and a plain cubin input (nvcc wraps it into a host
//!   object without host information: no pruning): each toolkit's own
//!   `nvcc -dlink -keep`, kept cubins equivalent, register files identical;
//! * CMake's device-link command (`-shared`, `-lcudadevrt -lcudart_static -lrt
//!   -lpthread -ldl`): equivalent to nvlink's, silent, same register file.
//!
//! Needs the pinned NVIDIA tools (`cargo xtask nv-tools`, or `CULINK_NV_TOOLS`)
//! and a host compiler (`gcc`/`g++`, or `CULINK_NVCC_CCBIN`); skips without
//! them, except under `CI=true`, where a missing tool fails the test.

mod common;

use common::*;
use linker_core::Cubin;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const A_CU: &str = r#"#include <cstdio>
__device__ int counter;
__device__ float scale(float x) { return 2.0f * x; }
template <typename T>
__global__ void saxpy(int n, T a, const T* x, T* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
  if (i == 0) { printf("saxpy n=%d\n", n); atomicAdd(&counter, 1); }
}
__global__ void unused_a(int* p) { *p = 42; }
void run_a(int n, float* x, float* y) {
  saxpy<float><<<1, 32>>>(n, 1.5f, x, y);
  saxpy<double><<<1, 32>>>(n, 1.5, (double*)x, (double*)y);
}
"#;

const B_CU: &str = r#"#include <cstdio>
extern __device__ float scale(float x);
extern __device__ int counter;
__global__ void child(float* p, int n) {
  int i = threadIdx.x;
  if (i < n) p[i] = scale(p[i]);
}
__global__ void parent(float* p, int n) {
  child<<<1, n>>>(p, n);
  printf("parent launched child, counter=%d\n", counter);
}
__global__ void unused_b(float* p) { p[0] = scale(1.0f); }
void run_b(float* p, int n) { parent<<<1, 1>>>(p, n); }
"#;

const MAIN_CU: &str = r#"#include <cstdio>
void run_a(int n, float* x, float* y);
void run_b(float* p, int n);
int main(int argc, char**) {
  printf("host only\n");
  if (argc > 100) { run_a(0, nullptr, nullptr); run_b(nullptr, 0); }
  return 0;
}
"#;

const NOARCH_CU: &str = "__global__ void k_noarch(int* p) { *p = 3; }\n";

/// Dynamic shared memory only (no device runtime call), built for sm_90 and
/// sm_90a (real-code sweep, docs/nvcc.md).
const DYN_CU: &str = r#"extern __shared__ float dyn[];
__global__ void k_dyn(float *o) {
    dyn[threadIdx.x] = o[0];
    __syncthreads();
    o[threadIdx.x] = dyn[threadIdx.x ^ 1];
}
"#;

fn is_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Skips (returns `None`) or, under CI, fails.
fn missing<T>(what: &str) -> Option<T> {
    assert!(
        !is_ci(),
        "CI=true but {what} is missing (run `cargo xtask nv-tools` or set CULINK_NV_TOOLS)"
    );
    eprintln!("skipping nvcc -dlink test: {what} is missing");
    None
}

struct Kit {
    /// The real toolkit root (parent of the real `bin/`).
    root: PathBuf,
    cc: String,
    dir: PathBuf,
}

fn run(cmd: &mut Command, what: &str) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({:?}):\n{}{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

fn kit(tag: &str) -> Option<Kit> {
    let tools = match std::env::var_os("CULINK_NV_TOOLS") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/nv-tools/bin"),
    };
    let Ok(bin) = std::fs::canonicalize(&tools) else {
        return missing(&format!("{}", tools.display()));
    };
    for t in ["nvcc", "nvlink", "fatbinary", "ptxas"] {
        if !bin.join(t).is_file() {
            return missing(&format!("{}", bin.join(t).display()));
        }
    }
    let root = bin.parent()?.to_path_buf();
    if !root.join("lib64/libcudadevrt.a").is_file() {
        return missing("libcudadevrt.a (lib64/ of the toolkit)");
    }
    let cc = std::env::var("CULINK_NVCC_CCBIN")
        .ok()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "gcc".into());
    for c in [cc.as_str(), "g++"] {
        if Command::new(c).arg("--version").output().is_err() {
            return missing(&format!("host compiler {c}"));
        }
    }
    Some(Kit {
        root,
        cc,
        dir: scratch(tag),
    })
}

impl Kit {
    fn nvcc_dc(&self, nvcc: &Path, stem: &str, source: &str, arch: &[&str]) {
        std::fs::write(self.dir.join(format!("{stem}.cu")), source).unwrap();
        run(
            Command::new(nvcc)
                .current_dir(&self.dir)
                .args(["-ccbin", &self.cc])
                .args(arch)
                .args(["-dc", &format!("{stem}.cu"), "-o", &format!("{stem}.o")]),
            &format!("nvcc -dc {stem}.cu"),
        );
    }

    /// Runs nvlink and culink on the same arguments (`args(cubin, reg)`:
    /// nvlink writes `nv.cubin`/`nv.reg.c`, culink `cu.*`), requires culink to
    /// succeed with an equivalent cubin and the same register-link file, and
    /// returns culink's output. nvlink leaves an existing register-link file
    /// as it is, so the previous one is removed first.
    fn link_files_both(&self, args: impl Fn(&str, &str) -> Vec<String>, what: &str) -> Output {
        let _ = std::fs::remove_file(self.dir.join("nv.reg.c"));
        run(
            Command::new(self.root.join("bin/nvlink"))
                .current_dir(&self.dir)
                .args(args("nv.cubin", "nv.reg.c")),
            &format!("nvlink ({what})"),
        );
        let cu = culink_in(&self.dir, &args("cu.cubin", "cu.reg.c"));
        assert!(cu.status.success(), "{what}: {}", text(&cu.stderr));
        assert_equivalent(&self.dir.join("cu.cubin"), &self.dir.join("nv.cubin"), what);
        assert_eq!(
            std::fs::read_to_string(self.dir.join("cu.reg.c")).unwrap(),
            std::fs::read_to_string(self.dir.join("nv.reg.c")).unwrap(),
            "{what}"
        );
        cu
    }

    /// Runs nvcc's nvlink command line `line` with nvlink (output `nv.cubin`,
    /// `nv.reg.c`) and with culink as the shadow toolkit's nvlink (`cu.*`),
    /// and checks the cubins are equivalent.
    fn link_both(&self, shadow: &Path, line: &[String], what: &str) {
        run(
            Command::new(self.root.join("bin/nvlink"))
                .current_dir(&self.dir)
                .args(retarget(line, "nv.cubin", "nv.reg.c")),
            &format!("nvlink ({what})"),
        );
        run(
            Command::new(shadow.join("bin/nvlink"))
                .current_dir(&self.dir)
                .args(retarget(line, "cu.cubin", "cu.reg.c"))
                .env_remove("CULINK_LOG"),
            &format!("culink as nvlink ({what})"),
        );
        assert_equivalent(&self.dir.join("cu.cubin"), &self.dir.join("nv.cubin"), what);
    }

    fn shadow(&self) -> PathBuf {
        let shadow = self.dir.join("shadow");
        run(
            Command::new(culink_exe())
                .arg("nvcc-shim")
                .arg("--cuda")
                .arg(&self.root)
                .arg("--into")
                .arg(&shadow),
            "culink nvcc-shim",
        );
        shadow
    }
}

/// The arguments of the `#$ nvlink ...` line of `nvcc -dryrun` output.
fn nvlink_line(dryrun: &str) -> Vec<String> {
    let line = dryrun
        .lines()
        .find_map(|l| l.strip_prefix("#$ nvlink "))
        .unwrap_or_else(|| panic!("no nvlink line in nvcc -dryrun output:\n{dryrun}"));
    // nvcc quotes with double quotes and no escapes.
    let mut args = Vec::new();
    let mut cur = String::new();
    let (mut in_word, mut quoted) = (false, false);
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                in_word = true;
            }
            c if c.is_whitespace() && !quoted => {
                if in_word {
                    args.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        args.push(cur);
    }
    args
}

/// `args` with the output file and the register-link file replaced.
fn retarget(args: &[String], cubin: &str, reg: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "-o" {
            it.next();
            out.push("-o".into());
            out.push(cubin.into());
        } else if a.starts_with("--register-link-binaries=") {
            out.push(format!("--register-link-binaries={reg}"));
        } else {
            out.push(a.clone());
        }
    }
    out
}

fn symbol_names(path: &Path) -> Vec<String> {
    let data = std::fs::read(path).unwrap();
    let c = Cubin::parse(&data).unwrap();
    c.symbols.iter().map(|s| s.name.to_string()).collect()
}

#[test]
fn nvcc_dlink_through_the_shadow_toolkit_matches_nvlink() {
    let Some(k) = kit("e2e") else { return };
    let real_nvcc = k.root.join("bin/nvcc");
    for (stem, src) in [("a", A_CU), ("b", B_CU), ("main", MAIN_CU)] {
        k.nvcc_dc(&real_nvcc, stem, src, &["-arch=sm_90"]);
    }
    let shadow = k.shadow();
    assert!(
        std::fs::read_link(shadow.join("bin/nvlink")).is_ok(),
        "bin/nvlink must be a link to culink"
    );
    let nvcc = shadow.join("bin/nvcc");
    let dlink = [
        "-arch=sm_90",
        "-dlink",
        "a.o",
        "b.o",
        "main.o",
        "-o",
        "dlink.o",
    ];

    // 1. The command line nvcc runs.
    let dry = run(
        Command::new(&nvcc)
            .current_dir(&k.dir)
            .args(["-ccbin", &k.cc])
            .args(dlink)
            .arg("-dryrun"),
        "nvcc -dlink -dryrun",
    );
    let line = nvlink_line(&text(&dry.stderr));
    for want in [
        "-m64",
        "--arch=sm_90",
        "-cpu-arch=X86_64",
        "-lcudadevrt",
        "--host-ccbin",
    ] {
        assert!(line.iter().any(|a| a == want), "{want} not in {line:?}");
    }
    assert!(line
        .iter()
        .any(|a| a.starts_with("--register-link-binaries=")));
    assert!(line
        .iter()
        .any(|a| a.starts_with("-L") && a.ends_with("lib64/stubs")));

    // 2. That command line, with nvlink and with culink as nvlink.
    k.link_both(&shadow, &line, "CDP link");
    let reg_nv = std::fs::read_to_string(k.dir.join("nv.reg.c")).unwrap();
    let reg_cu = std::fs::read_to_string(k.dir.join("cu.reg.c")).unwrap();
    assert_eq!(reg_cu, reg_nv, "register-link files");
    assert!(
        reg_cu.starts_with("#define NUM_PRELINKED_OBJECTS 4\n"),
        "{reg_cu}"
    );
    assert!(reg_cu.contains("cuda_device_runtime"), "{reg_cu}");
    // Host-reference pruning: kernels host code never launches are gone,
    // `child` (launched by `parent` on the device) stays.
    let names = symbol_names(&k.dir.join("cu.cubin"));
    assert!(!names.iter().any(|n| n.contains("unused_")), "{names:?}");
    assert!(names.iter().any(|n| n == "_Z5childPfi"));
    assert!(names.iter().any(|n| n == "counter"));

    // 3. The whole nvcc -dlink, then the host link.
    let keep = k.dir.join("keep");
    std::fs::create_dir_all(&keep).unwrap();
    run(
        Command::new(&nvcc)
            .current_dir(&k.dir)
            .args(["-ccbin", &k.cc])
            .args(dlink)
            .args(["-keep", "-keep-dir", "keep"]),
        "nvcc -dlink through the shadow toolkit",
    );
    let kept = std::fs::read(keep.join("dlink.sm_90.cubin")).unwrap();
    assert!(
        kept.windows(6).any(|w| w == b"culink"),
        "the kept cubin was not linked by culink"
    );
    assert_equivalent(
        &keep.join("dlink.sm_90.cubin"),
        &k.dir.join("nv.cubin"),
        "nvcc -dlink",
    );
    assert_eq!(
        std::fs::read_to_string(keep.join("dlink.reg.c")).unwrap(),
        reg_nv
    );
    let lib = k.root.join("lib64");
    run(
        Command::new("g++")
            .current_dir(&k.dir)
            .args(["main.o", "a.o", "b.o", "dlink.o", "-o", "app"])
            .arg(format!("-L{}", lib.display()))
            .args([
                "-lcudadevrt",
                "-lcudart_static",
                "-lpthread",
                "-ldl",
                "-lrt",
            ]),
        "g++ host link",
    );
    let app = run(&mut Command::new(k.dir.join("app")), "the linked program");
    assert_eq!(text(&app.stdout), "host only\n");
    let _ = std::fs::remove_dir_all(&k.dir);
}

#[test]
fn missing_arch_is_a_warning_with_an_empty_cubin() {
    let Some(k) = kit("noarch") else { return };
    let real_nvcc = k.root.join("bin/nvcc");
    k.nvcc_dc(
        &real_nvcc,
        "noarch",
        NOARCH_CU,
        &["-gencode", "arch=compute_80,code=sm_80"],
    );
    let shadow = k.shadow();
    let lib = k.root.join("lib64").display().to_string();
    let args = |out: &str, reg: &str| -> Vec<String> {
        [
            "-m64",
            "--arch=sm_90",
            &format!("--register-link-binaries={reg}"),
            &format!("-L{lib}"),
            "-cpu-arch=X86_64",
            "noarch.o",
            "-lcudadevrt",
            "-o",
            out,
            "--host-ccbin",
            &k.cc,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let nv = run(
        Command::new(k.root.join("bin/nvlink"))
            .current_dir(&k.dir)
            .args(args("nv.cubin", "nv.reg.c")),
        "nvlink",
    );
    let cu = run(
        Command::new(shadow.join("bin/nvlink"))
            .current_dir(&k.dir)
            .args(args("cu.cubin", "cu.reg.c")),
        "culink as nvlink",
    );
    let warning = "SM Arch ('sm_90') not found in 'noarch.o'";
    assert!(text(&nv.stderr).contains(warning), "{}", text(&nv.stderr));
    assert!(text(&cu.stderr).contains(warning), "{}", text(&cu.stderr));
    assert_equivalent(
        &k.dir.join("cu.cubin"),
        &k.dir.join("nv.cubin"),
        "empty link",
    );
    assert_eq!(
        std::fs::read_to_string(k.dir.join("cu.reg.c")).unwrap(),
        std::fs::read_to_string(k.dir.join("nv.reg.c")).unwrap()
    );
    let _ = std::fs::remove_dir_all(&k.dir);
}

/// Found by the real-code sweep: nvcc passes `-lcudadevrt` to every device
/// link; an `extern __shared__` array is an undefined symbol that needs no
/// definition, so nvlink loads no libcudadevrt (culink loaded it: 971
/// differences and a second register entry). The object carries sm_90 and
/// sm_90a code: nvlink links the sm_90a code at `--arch=sm_90` too.
#[test]
fn dynamic_shared_needs_no_device_runtime_and_sm_90a_code_is_linked() {
    let Some(k) = kit("dynshared") else { return };
    let real_nvcc = k.root.join("bin/nvcc");
    k.nvcc_dc(
        &real_nvcc,
        "dyn",
        DYN_CU,
        &[
            "-gencode",
            "arch=compute_90,code=sm_90",
            "-gencode",
            "arch=compute_90a,code=sm_90a",
        ],
    );
    let shadow = k.shadow();
    let lib = k.root.join("lib64").display().to_string();
    let line: Vec<String> = [
        "-m64",
        "--arch=sm_90",
        "--register-link-binaries=REG",
        &format!("-L{lib}"),
        "-cpu-arch=X86_64",
        "dyn.o",
        "-lcudadevrt",
        "-o",
        "OUT",
        "--host-ccbin",
        &k.cc,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    k.link_both(&shadow, &line, "extern __shared__ with -lcudadevrt");
    let reg = std::fs::read_to_string(k.dir.join("cu.reg.c")).unwrap();
    assert_eq!(
        reg,
        std::fs::read_to_string(k.dir.join("nv.reg.c")).unwrap()
    );
    assert!(
        reg.starts_with("#define NUM_PRELINKED_OBJECTS 1\n"),
        "{reg}"
    );
    let _ = std::fs::remove_dir_all(&k.dir);
}

#[test]
fn several_archs_and_a_wrapped_cubin_through_the_shadow_toolkit() {
    let Some(k) = kit("multi") else { return };
    let real_nvcc = k.root.join("bin/nvcc");
    let gencode = [
        "-gencode",
        "arch=compute_80,code=sm_80",
        "-gencode",
        "arch=compute_90,code=sm_90",
    ];
    for (stem, src) in [("a", A_CU), ("b", B_CU), ("main", MAIN_CU)] {
        k.nvcc_dc(&real_nvcc, stem, src, &gencode);
    }
    // a as plain cubins: nvcc wraps each into a host object (crt/prelink.stub)
    // before the device link, which turns host-reference pruning off.
    std::fs::write(k.dir.join("a.cu"), A_CU).unwrap();
    for sm in ["80", "90"] {
        run(
            Command::new(&real_nvcc)
                .current_dir(&k.dir)
                .args(["-ccbin", &k.cc, &format!("-arch=sm_{sm}"), "-dc", "--cubin"])
                .args(["a.cu", "-o", &format!("a{sm}.cubin")]),
            "nvcc -dc --cubin a.cu",
        );
    }
    let shadow = k.shadow();
    // Each toolkit's own nvcc -dlink, files kept; the real one runs nvlink.
    let dlink = |nvcc: &Path, keep: &str| {
        std::fs::create_dir_all(k.dir.join(keep)).unwrap();
        run(
            Command::new(nvcc)
                .current_dir(&k.dir)
                .args(["-ccbin", &k.cc])
                .args(gencode)
                .args(["-dlink", "a.o", "b.o", "main.o", "-o", &format!("{keep}.o")])
                .args(["-keep", "-keep-dir", keep]),
            &format!("nvcc -dlink ({keep})"),
        );
    };
    dlink(&real_nvcc, "nv");
    dlink(&shadow.join("bin/nvcc"), "cu");
    for sm in ["80", "90"] {
        let name = format!("{sm}.cubin");
        let find = |keep: &str| -> PathBuf {
            std::fs::read_dir(k.dir.join(keep))
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| p.to_string_lossy().ends_with(&format!("compute_{name}")))
                .unwrap_or_else(|| panic!("no compute_{name} kept in {keep}"))
        };
        let ours = find("cu");
        assert!(std::fs::read(&ours)
            .unwrap()
            .windows(6)
            .any(|w| w == b"culink"));
        assert_equivalent(&ours, &find("nv"), &format!("sm_{sm}"));
    }
    let reg = |keep: &str| std::fs::read_to_string(k.dir.join(keep).join(format!("{keep}.reg.c")));
    assert_eq!(reg("cu").unwrap(), reg("nv").unwrap());

    // A cubin input: nvcc wraps it; compare nvlink's and culink's outputs.
    let wrapped = |nvcc: &Path, keep: &str| {
        std::fs::create_dir_all(k.dir.join(keep)).unwrap();
        run(
            Command::new(nvcc)
                .current_dir(&k.dir)
                .args([
                    "-ccbin",
                    &k.cc,
                    "-arch=sm_90",
                    "-dlink",
                    "a90.cubin",
                    "b.o",
                    "main.o",
                ])
                .args(["-o", &format!("{keep}.o"), "-keep", "-keep-dir", keep]),
            &format!("nvcc -dlink a90.cubin ({keep})"),
        );
        k.dir.join(keep).join(format!("{keep}.cubin"))
    };
    let nv = wrapped(&real_nvcc, "nvw");
    let cu = wrapped(&shadow.join("bin/nvcc"), "cuw");
    assert_equivalent(&cu, &nv, "wrapped cubin");
    // No pruning: a's never-launched kernel stays.
    assert!(symbol_names(&cu).iter().any(|n| n == "_Z8unused_aPi"));
    let _ = std::fs::remove_dir_all(&k.dir);
}

#[test]
fn cmake_style_device_link_matches_nvcc_with_nvlink() {
    let Some(k) = kit("cmake") else { return };
    let real_nvcc = k.root.join("bin/nvcc");
    for (stem, src) in [("a", A_CU), ("b", B_CU), ("main", MAIN_CU)] {
        k.nvcc_dc(&real_nvcc, stem, src, &["-arch=sm_90"]);
    }
    let shadow = k.shadow();
    // What CMake runs for CUDA_SEPARABLE_COMPILATION: host libraries and a
    // second -lcudadevrt reach the device link (libcudart_static's members,
    // host objects without host information, turn pruning off; libcudadevrt
    // is loaded once; -lrt & co. are not found and not reported, as nvlink).
    let dlink = |nvcc: &Path, keep: &str| -> Output {
        std::fs::create_dir_all(k.dir.join(keep)).unwrap();
        run(
            Command::new(nvcc)
                .current_dir(&k.dir)
                .args([
                    "-ccbin",
                    &k.cc,
                    "-arch=sm_90",
                    "-Xcompiler=-fPIC",
                    "-shared",
                ])
                .args(["-dlink", "a.o", "b.o", "main.o", "-o", &format!("{keep}.o")])
                .args([
                    "-lcudadevrt",
                    "-lcudart_static",
                    "-lrt",
                    "-lpthread",
                    "-ldl",
                ])
                .args(["-keep", "-keep-dir", keep]),
            &format!("nvcc -dlink, CMake style ({keep})"),
        )
    };
    dlink(&real_nvcc, "nv");
    let cu = dlink(&shadow.join("bin/nvcc"), "cu");
    assert!(
        !text(&cu.stderr).contains("culink"),
        "culink said something: {}",
        text(&cu.stderr)
    );
    let kept = |keep: &str, ext: &str| k.dir.join(keep).join(format!("{keep}{ext}"));
    assert_equivalent(
        &kept("cu", ".sm_90.cubin"),
        &kept("nv", ".sm_90.cubin"),
        "CMake-style device link",
    );
    assert_eq!(
        std::fs::read_to_string(kept("cu", ".reg.c")).unwrap(),
        std::fs::read_to_string(kept("nv", ".reg.c")).unwrap()
    );
    // No pruning here (as nvlink): the never-launched kernels stay.
    assert!(symbol_names(&kept("cu", ".sm_90.cubin"))
        .iter()
        .any(|n| n == "_Z8unused_aPi"));
    let _ = std::fs::remove_dir_all(&k.dir);
}

/// A kernel using libcudadevrt's `cudaMemcpyAsync`, `cudaMemsetAsync` and
/// their 2D variants.
const ASYNC_CU: &str = r#"
__global__ void copier(char* dst, const char* src, size_t n) {
  cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, 0);
  cudaMemsetAsync(dst, 0, n, 0);
  cudaMemcpy2DAsync(dst, 64, src, 64, 64, 4, cudaMemcpyDeviceToDevice, 0);
  cudaMemset2DAsync(dst, 64, 1, 64, 4, 0);
}
"#;

/// `__constant__` data of two sizes and alignments.
const CONST_CU: &str = r#"
__constant__ char c1[3];
__constant__ double c2[5];
__global__ void reader(double* p) { p[threadIdx.x] = c2[threadIdx.x] + c1[threadIdx.x]; }
"#;

/// Those libcudadevrt functions load the size of the program's `__constant__`
/// space through the undefined symbol `.nv.ptx.const0.size`: nvlink resolves
/// it (the size of `.nv.constant3`, 0xffffffff without one) and drops the
/// relocation. Links with and without constants must equal nvlink's at sm_90
/// (at sm_100+ the same holds for this value, but nvlink also re-finalizes
/// libcudadevrt's kernels: docs/blackwell.md §8).
#[test]
fn device_memcpy_async_gets_the_constant_space_size() {
    let Some(k) = kit("const0") else { return };
    let real_nvcc = k.root.join("bin/nvcc");
    k.nvcc_dc(&real_nvcc, "m", ASYNC_CU, &["-arch=sm_90"]);
    k.nvcc_dc(&real_nvcc, "c", CONST_CU, &["-arch=sm_90"]);
    let lib = format!("-L{}", k.root.join("lib64").display());
    for (tag, inputs) in [("plain", &["m.o"][..]), ("consts", &["m.o", "c.o"][..])] {
        let (nv, cu) = (format!("nv_{tag}.cubin"), format!("cu_{tag}.cubin"));
        for (exe, out) in [(k.root.join("bin/nvlink"), &nv), (culink_exe().into(), &cu)] {
            run(
                Command::new(exe)
                    .current_dir(&k.dir)
                    .arg("-arch=sm_90")
                    .args(inputs)
                    .args([lib.as_str(), "-lcudadevrt", "-o", out.as_str()]),
                &format!("link {tag}"),
            );
        }
        assert_equivalent(&k.dir.join(&cu), &k.dir.join(&nv), tag);
    }
}

/// `nvcc -G` (device debug): nvcc passes `-g` to the device link; culink
/// accepts it and links like nvlink (every function kept, DWARF, e_flags).
#[test]
fn device_debug_link_through_the_shadow_toolkit_matches_nvlink() {
    let Some(k) = kit("debug") else { return };
    let real_nvcc = k.root.join("bin/nvcc");
    for (stem, src) in [("a", A_CU), ("b", B_CU), ("main", MAIN_CU)] {
        k.nvcc_dc(&real_nvcc, stem, src, &["-arch=sm_90", "-G"]);
    }
    let shadow = k.shadow();
    let dlink = [
        "-arch=sm_90",
        "-G",
        "-dlink",
        "a.o",
        "b.o",
        "main.o",
        "-o",
        "dlink.o",
    ];
    let dry = run(
        Command::new(shadow.join("bin/nvcc"))
            .current_dir(&k.dir)
            .args(["-ccbin", &k.cc])
            .args(dlink)
            .arg("-dryrun"),
        "nvcc -G -dlink -dryrun",
    );
    let line = nvlink_line(&text(&dry.stderr));
    assert!(line.iter().any(|a| a == "-g"), "-g not in {line:?}");
    k.link_both(&shadow, &line, "nvcc -G device link");
    let _ = std::fs::remove_dir_all(&k.dir);
}

/// Kernels the host launches and one it never launches; no device runtime.
const HOSTINFO_CU: &str = r#"
__global__ void used_k(int* p) { p[threadIdx.x] = 1; }
__global__ void unused_k(int* p) { p[threadIdx.x] = 2; }
void launch(int* p) { used_k<<<1, 1>>>(p); }
"#;

/// nvlink's options beyond the ones nvcc passes by default, as users pass
/// them with `-Xnvlink` (CMake projects: `--suppress-stack-size-warning`):
/// each link equals nvlink's with the same options and both print the same
/// kind of message; the option conflicts nvlink refuses are refused; `-ghls`
/// writes the same host linker scripts.
#[test]
fn nvlink_options_users_pass_match_nvlink() {
    let Some(k) = kit("options") else { return };
    let real_nvcc = k.root.join("bin/nvcc");
    k.nvcc_dc(&real_nvcc, "h", HOSTINFO_CU, &["-arch=sm_90"]);
    k.nvcc_dc(
        &real_nvcc,
        "noarch",
        NOARCH_CU,
        &["-gencode", "arch=compute_80,code=sm_80"],
    );
    let lib = format!("-L{}", k.root.join("lib64").display());
    let both = |extra: &[&str], inputs: &[&str]| -> (Output, Output) {
        let args = |out: &str| -> Vec<String> {
            let mut a: Vec<String> = vec!["-arch=sm_90".into(), lib.clone()];
            a.extend(extra.iter().map(|s| s.to_string()));
            a.extend(inputs.iter().map(|s| s.to_string()));
            a.extend(["-lcudadevrt".into(), "-o".into(), out.into()]);
            a
        };
        let _ = std::fs::remove_file(k.dir.join("nv.cubin"));
        let _ = std::fs::remove_file(k.dir.join("cu.cubin"));
        let nv = Command::new(k.root.join("bin/nvlink"))
            .current_dir(&k.dir)
            .args(args("nv.cubin"))
            .output()
            .unwrap();
        let cu = culink_in(&k.dir, &args("cu.cubin"));
        (nv, cu)
    };
    let names = |f: &str| symbol_names(&k.dir.join(f));
    // Accepted, and linking like nvlink: host pruning on by default and
    // with -use-host-info, off with -ignore-host-info; libcudadevrt linked
    // although nothing needs it with -keep-system-libraries; LTO-only and
    // compiler options without effect on compiled code.
    for (extra, unused_kept) in [
        (&[][..], false),
        (
            &["-use-host-info", "-extrawarn", "-disable-infos"][..],
            false,
        ),
        (&["-ignore-host-info"][..], true),
        (&["-keep-system-libraries"][..], false),
        (&["-ignore-host-info", "-keep-system-libraries"][..], true),
        // An explicit kernel list wins over host pruning: the host never
        // launches unused_k, yet nvlink keeps it (culink kept no kernel).
        (&["-kernels-used=unused_k"][..], true),
        (&["-kernels-used=used_k,unused_k"][..], true),
        (
            &[
                "-Xptxas=-v",
                "-Xnvvm=-O3",
                "-maxrregcount=32",
                "-split-compile=2",
                "-split-compile-extended=2",
                "-nvvmpath=/nonexistent",
                "-device-stack-protector=true",
            ][..],
            false,
        ),
    ] {
        let (nv, cu) = both(extra, &["h.o"]);
        let what = format!("options {extra:?}");
        assert!(nv.status.success(), "nvlink {what}: {}", text(&nv.stderr));
        assert!(cu.status.success(), "culink {what}: {}", text(&cu.stderr));
        assert_equivalent(&k.dir.join("cu.cubin"), &k.dir.join("nv.cubin"), &what);
        let kept = names("cu.cubin").iter().any(|n| n == "_Z8unused_kPi");
        assert_eq!(kept, unused_kept, "{what}: unused kernel kept");
    }
    // libcudadevrt's code is there only with -keep-system-libraries.
    let (_, _) = both(&["-keep-system-libraries"], &["h.o"]);
    assert!(names("cu.cubin")
        .iter()
        .any(|n| n.contains("memcpy_3d_device")));
    // -suppress-arch-warning: the warning for an input without sm_90 code goes.
    for (extra, warned) in [(&[][..], true), (&["-suppress-arch-warning"][..], false)] {
        let (nv, cu) = both(extra, &["h.o", "noarch.o"]);
        let warning = "SM Arch ('sm_90') not found in 'noarch.o'";
        assert_eq!(
            text(&nv.stderr).contains(warning),
            warned,
            "nvlink {extra:?}"
        );
        assert_eq!(
            text(&cu.stderr).contains(warning),
            warned,
            "culink {extra:?}"
        );
        assert_equivalent(
            &k.dir.join("cu.cubin"),
            &k.dir.join("nv.cubin"),
            "arch warning",
        );
    }
    // Conflicts nvlink refuses before reading any input: refused, no output.
    for extra in [
        &["-suppress-debug-info"][..],
        &["-emit-ptx"][..],
        &["-Ofc=max"][..],
        &["-lto"][..],
        &["-dlto"][..],
        &["-device-stack-protector=maybe"][..],
    ] {
        let (nv, cu) = both(extra, &["h.o"]);
        assert!(!nv.status.success(), "nvlink accepted {extra:?}");
        assert!(!cu.status.success(), "culink accepted {extra:?}");
        assert!(
            !k.dir.join("cu.cubin").exists(),
            "{extra:?}: output written"
        );
    }
    // -g -suppress-debug-info: accepted, no effect (as nvlink).
    let (nv, cu) = both(&["-g", "-suppress-debug-info"], &["h.o"]);
    assert!(
        nv.status.success() && cu.status.success(),
        "{}",
        text(&cu.stderr)
    );
    assert_equivalent(
        &k.dir.join("cu.cubin"),
        &k.dir.join("nv.cubin"),
        "-g -suppress-debug-info",
    );
    // An object holding only LTO IR (`nvcc -dlto`): nvlink refuses it
    // without -dlto, and so does culink, naming the file (it linked nothing
    // from it, silently, before).
    run(
        Command::new(&real_nvcc)
            .current_dir(&k.dir)
            .args(["-ccbin", &k.cc, "-gencode", "arch=compute_90,code=lto_90"])
            .args(["-dc", "h.cu", "-o", "hlto.o"]),
        "nvcc -dlto",
    );
    let (nv, cu) = both(&[], &["hlto.o"]);
    assert!(!nv.status.success() && text(&nv.stderr).contains("-dlto"));
    assert!(!cu.status.success(), "culink linked an LTO-only object");
    assert!(
        text(&cu.stderr).contains("hlto.o") && text(&cu.stderr).contains("LTO IR"),
        "{}",
        text(&cu.stderr)
    );
    // Host linker scripts, byte for byte.
    for kind in ["lcs-aug", "lcs-abs"] {
        let nv = Command::new(k.root.join("bin/nvlink"))
            .current_dir(&k.dir)
            .args([&format!("-ghls={kind}"), "-o", "nv.ld"])
            .output()
            .unwrap();
        let cu = culink_in(&k.dir, &[&format!("-ghls={kind}"), "-o", "cu.ld"]);
        assert!(
            nv.status.success(),
            "nvlink -ghls={kind}: {}",
            text(&nv.stderr)
        );
        assert!(
            cu.status.success(),
            "culink -ghls={kind}: {}",
            text(&cu.stderr)
        );
        assert_eq!(
            std::fs::read(k.dir.join("cu.ld")).unwrap(),
            std::fs::read(k.dir.join("nv.ld")).unwrap(),
            "-ghls={kind}"
        );
    }
    let _ = std::fs::remove_dir_all(&k.dir);
}

/// A PTX-only build (`-arch=compute_90`): nvcc -dlink runs the device linker
/// with the virtual target and no `-o`; nvlink links nothing and writes only
/// the register-link file, listing every module of the inputs and of
/// libcudadevrt (needed or not). Through the shadow toolkit: the same
/// register file and a host object; `lto_90` is refused as by nvlink. (culink
/// refused the command line for want of `-o` before: every PTX-only nvcc
/// build failed at its device link.)
#[test]
fn virtual_target_device_link_through_the_shadow_toolkit() {
    let Some(k) = kit("virtual") else { return };
    let real_nvcc = k.root.join("bin/nvcc");
    for (stem, src) in [("a", A_CU), ("b", B_CU), ("main", MAIN_CU)] {
        k.nvcc_dc(&real_nvcc, stem, src, &["-arch=compute_90"]);
    }
    let shadow = k.shadow();
    let dlink = |nvcc: &Path, keep: &str| {
        std::fs::create_dir_all(k.dir.join(keep)).unwrap();
        run(
            Command::new(nvcc)
                .current_dir(&k.dir)
                .args(["-ccbin", &k.cc, "-arch=compute_90"])
                .args(["-dlink", "a.o", "b.o", "main.o", "-o", &format!("{keep}.o")])
                .args(["-keep", "-keep-dir", keep]),
            &format!("nvcc -dlink -arch=compute_90 ({keep})"),
        );
    };
    dlink(&real_nvcc, "nv");
    dlink(&shadow.join("bin/nvcc"), "cu");
    let reg = |keep: &str| std::fs::read_to_string(k.dir.join(keep).join(format!("{keep}.reg.c")));
    let ours = reg("cu").unwrap();
    assert_eq!(ours, reg("nv").unwrap());
    assert!(ours.contains("cuda_device_runtime"), "{ours}");
    assert!(k.dir.join("cu.o").is_file());
    let lto = culink_in(&k.dir, &["-arch=lto_90", "a.o", "-o", "x.cubin"]);
    assert!(!lto.status.success());
    assert!(text(&lto.stderr).contains("not JIT-able"));
    let _ = std::fs::remove_dir_all(&k.dir);
}

/// `-v` (what `nvcc --resource-usage` passes): the resource report nvlink
/// prints (gmem and module banks, then per kernel registers, barriers,
/// stack, shared memory, constant banks, local memory, header slots) equals
/// nvlink's line for line (order aside: culink's kernel order follows its
/// own symbol table). Fixtures covering textures and samplers, bank-2
/// constants (sm_75-89), shared windows with the sm_90+ reserve, stack trees,
/// recursion, Blackwell (no cmem) and `-r`. All 503 fixture links were
/// compared the same way when the report was written (docs/cli.md).
#[test]
fn verbose_resource_usage_matches_nvlink() {
    let Some(k) = kit("resources") else { return };
    let pat = |l: &str| {
        l.contains("bytes gmem")
            || l.contains("Function properties for")
            || l.contains("registers, used")
    };
    for (case, arch, extra) in [
        ("all_nine", "80", &[][..]),
        ("all_nine", "90", &[][..]),
        ("all_nine", "100", &[][..]),
        ("cu_bank2", "80", &[][..]),
        ("cu_features", "90", &[][..]),
        ("cu_features", "120", &[][..]),
        ("tex_unused_sampler_surf", "90", &[][..]),
        ("mutual_recursion", "90", &[][..]),
        ("relocatable", "100", &["-r"][..]),
    ] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/link")
            .join(case);
        let text_of = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
        let inputs: Vec<String> = text_of("case.txt")
            .lines()
            .find_map(|l| l.strip_prefix("inputs: "))
            .unwrap()
            .split_whitespace()
            .map(|i| dir.join(format!("{i}.sm_{arch}.o")).display().to_string())
            .collect();
        let args = |out: &str| -> Vec<String> {
            let mut a = vec!["-v".to_string(), format!("-arch=sm_{arch}")];
            a.extend(extra.iter().map(|s| s.to_string()));
            a.extend(inputs.iter().cloned());
            a.extend(["-o".into(), k.dir.join(out).display().to_string()]);
            a
        };
        let lines = |o: &Output, prefix: &str| -> Vec<String> {
            let mut v: Vec<String> = text(&o.stderr)
                .lines()
                .filter(|l| pat(l))
                .map(|l| l.strip_prefix(prefix).unwrap_or(l).to_string())
                .collect();
            v.sort();
            v
        };
        let nv = run(
            Command::new(k.root.join("bin/nvlink")).args(args("nv.cubin")),
            "nvlink -v",
        );
        let cu = culink(&args("cu.cubin"));
        assert!(
            cu.status.success(),
            "{case} sm_{arch}: {}",
            text(&cu.stderr)
        );
        let ours = lines(&cu, "culink: info: ");
        assert!(
            ours.len() >= 3,
            "{case} sm_{arch}: no report: {}",
            text(&cu.stderr)
        );
        assert_eq!(
            ours,
            lines(&nv, "nvlink info    : "),
            "{case} sm_{arch} {extra:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&k.dir);
}

/// Code compiled without `-rdc` (a whole-program, executable cubin: in a
/// host object from `nvcc -c`, a `.cubin`, a `.fatbin`) reaches device links
/// when a build mixes separable and whole-program targets. nvlink leaves it
/// out without a word and does not register it; the host object still
/// counts for host-reference pruning (none here), a cubin or fatbinary file
/// for nothing. culink refused the link ("not a relocatable object") before.
#[test]
fn whole_program_inputs_are_left_out_as_by_nvlink() {
    let Some(k) = kit("nonrdc") else { return };
    let real_nvcc = k.root.join("bin/nvcc");
    k.nvcc_dc(&real_nvcc, "h", HOSTINFO_CU, &["-arch=sm_90"]);
    std::fs::write(k.dir.join("w.cu"), NOARCH_CU).unwrap();
    for (flag, out) in [
        ("-c", "w.o"),
        ("-cubin", "w.cubin"),
        ("-fatbin", "w.fatbin"),
    ] {
        run(
            Command::new(&real_nvcc).current_dir(&k.dir).args([
                "-ccbin",
                &k.cc,
                "-arch=sm_90",
                flag,
                "w.cu",
                "-o",
                out,
            ]),
            &format!("nvcc {flag} w.cu"),
        );
    }
    for inputs in [
        &["w.o", "h.o"][..],
        &["h.o", "w.cubin"][..],
        &["w.fatbin", "h.o"][..],
        &["w.o"][..],
    ] {
        let args = |out: &str, reg: &str| -> Vec<String> {
            let mut a = vec![
                "-arch=sm_90".to_string(),
                format!("--register-link-binaries={reg}"),
            ];
            a.extend(inputs.iter().map(|s| s.to_string()));
            a.extend(["-o".into(), out.into()]);
            a
        };
        k.link_files_both(args, &format!("{inputs:?}"));
    }
    let _ = std::fs::remove_dir_all(&k.dir);
}

/// `nvcc -c -ewp` (`--extensible-whole-program`) objects: their device code
/// has `e_type` 0xff00 (`ET_LOPROC`), and nvlink links it as a relocatable
/// object (nvcc -dlink passes such objects to nvlink). culink refused them
/// ("not a relocatable object"; found by the real-code sweep); their empty
/// `.nv.shared.reserved.0` and its alias symbol are not written, as by nvlink.
#[test]
fn extensible_whole_program_objects_link_as_by_nvlink() {
    let Some(k) = kit("ewp") else { return };
    let real_nvcc = k.root.join("bin/nvcc");
    k.nvcc_dc(&real_nvcc, "h", HOSTINFO_CU, &["-arch=sm_90"]);
    std::fs::write(
        k.dir.join("e.cu"),
        "__global__ void ek(float* o) { o[threadIdx.x] = sinf(o[threadIdx.x]); }\n",
    )
    .unwrap();
    run(
        Command::new(&real_nvcc).current_dir(&k.dir).args([
            "-ccbin",
            &k.cc,
            "-arch=sm_90",
            "-c",
            "-ewp",
            "e.cu",
            "-o",
            "e.o",
        ]),
        "nvcc -c -ewp e.cu",
    );
    let lib = format!("-L{}", k.root.join("lib64").display());
    for inputs in [&["e.o"][..], &["h.o", "e.o"][..]] {
        let args = |out: &str, reg: &str| -> Vec<String> {
            let mut a = vec![
                "-arch=sm_90".to_string(),
                format!("--register-link-binaries={reg}"),
                lib.clone(),
            ];
            a.extend(inputs.iter().map(|s| s.to_string()));
            a.extend(["-lcudadevrt".into(), "-o".into(), out.into()]);
            a
        };
        let cu = k.link_files_both(args, &format!("{inputs:?}"));
        // nvlink's warning for the non-ewp input, and -Werror's failure.
        let warning = "'h.o': -ewp compiled objects should only link with libcudadevrt";
        assert_eq!(
            text(&cu.stderr).contains(warning),
            inputs.contains(&"h.o"),
            "{inputs:?}: {}",
            text(&cu.stderr)
        );
        let mut strict = args("cu2.cubin", "cu2.reg.c");
        strict.push("-Werror".into());
        assert_eq!(
            culink_in(&k.dir, &strict).status.success(),
            !inputs.contains(&"h.o"),
            "{inputs:?} -Werror"
        );
    }
    let _ = std::fs::remove_dir_all(&k.dir);
}

/// A kernel launching another from the device (libcudadevrt).
const LTO_CDP_CU: &str = r#"__global__ void cdp_child(int* p) { p[threadIdx.x] = 1; }
__global__ void cdp_parent(int* p) { cdp_child<<<1, 32>>>(p); }
void run_cdp(int* p) { cdp_parent<<<1, 1>>>(p); }
"#;

/// A kernel calling a device function defined in an object built without -dlto.
const LTO_CALLS_CU: &str = r#"__device__ float lto_callee(float x);
__global__ void lto_caller(float* a, int n) {
  for (int i = 0; i < n; i++) a[threadIdx.x] = lto_callee(a[threadIdx.x]) + 1.0f;
}
void run_caller(float* a, int n) { lto_caller<<<1, 32>>>(a, n); }
"#;

const LTO_CALLEE_CU: &str = "__device__ float lto_callee(float x) { return x * x - 2.0f; }\n";

/// `-dlto`: the LTO IR of `nvcc -dc -dlto` objects is optimized together by
/// libnvJitLink (found from `-nvvmpath`, as a toolkit lays it out) and
/// compiled by ptxas: a whole program when nothing else is linked, else a
/// `ptxas -c` object at the place of the last LTO input, linked with the
/// rest (non-LTO objects, libcudadevrt for device launches). nvlink's output
/// must be matched in every case; nvlink itself wants `<nvvmpath>/lib64/libnvvm.so`.
#[test]
fn link_time_optimization_matches_nvlink() {
    let Some(k) = kit("lto") else { return };
    let nvcc = k.root.join("bin/nvcc");
    if !k.root.join("lib/libnvJitLink.so.13").is_file() {
        missing::<()>("libnvJitLink.so.13 (the nvidia-nvjitlink wheel)");
        return;
    }
    let lto = &["-arch=sm_90", "-dlto"][..];
    k.nvcc_dc(&nvcc, "a", A_CU, lto);
    k.nvcc_dc(&nvcc, "main", MAIN_CU, lto);
    k.nvcc_dc(&nvcc, "b", B_CU, &["-arch=sm_90"]);
    k.nvcc_dc(&nvcc, "cdp", LTO_CDP_CU, lto);
    k.nvcc_dc(&nvcc, "calls", LTO_CALLS_CU, lto);
    k.nvcc_dc(&nvcc, "callee", LTO_CALLEE_CU, lto);
    std::fs::copy(k.dir.join("callee.o"), k.dir.join("callee_lto.o")).unwrap();
    k.nvcc_dc(&nvcc, "callee", LTO_CALLEE_CU, &["-arch=sm_90"]);
    // nvlink's -nvvmpath: a directory with lib64/libnvvm.so.
    let nvvm = k.dir.join("nvvm");
    std::fs::create_dir_all(nvvm.join("lib64")).unwrap();
    let _ = std::fs::remove_file(nvvm.join("lib64/libnvvm.so"));
    std::os::unix::fs::symlink(
        k.root.join("lib/libnvvm.so.4"),
        nvvm.join("lib64/libnvvm.so"),
    )
    .unwrap();
    let lib = format!("-L{}", k.root.join("lib64").display());
    let link = |extra: &[&str], inputs: &[&str], what: &str, culink_nvvm: &Path| -> Output {
        let args = |out: &str, nvvm: &Path| -> Vec<String> {
            let mut a: Vec<String> = vec![
                "-arch=sm_90".into(),
                "-dlto".into(),
                format!("-nvvmpath={}", nvvm.display()),
                format!("--register-link-binaries={out}.reg.c"),
                lib.clone(),
            ];
            a.extend(extra.iter().map(|s| s.to_string()));
            a.extend(inputs.iter().map(|s| s.to_string()));
            a.extend(["-lcudadevrt".into(), "-o".into(), out.into()]);
            a
        };
        // nvlink leaves an existing register-link file as it is.
        let _ = std::fs::remove_file(k.dir.join("nv.cubin.reg.c"));
        let _ = std::fs::remove_file(k.dir.join("cu.cubin"));
        run(
            Command::new(k.root.join("bin/nvlink"))
                .current_dir(&k.dir)
                .args(args("nv.cubin", &nvvm)),
            &format!("nvlink -dlto ({what})"),
        );
        let cu = culink_in(&k.dir, &args("cu.cubin", culink_nvvm));
        assert!(cu.status.success(), "{what}: {}", text(&cu.stderr));
        assert_equivalent(&k.dir.join("cu.cubin"), &k.dir.join("nv.cubin"), what);
        assert_eq!(
            std::fs::read_to_string(k.dir.join("cu.cubin.reg.c")).unwrap(),
            std::fs::read_to_string(k.dir.join("nv.cubin.reg.c")).unwrap(),
            "{what}: register-link file"
        );
        cu
    };
    // culink finds libnvJitLink next to the toolkit's own nvvm directory.
    let toolkit_nvvm = k.root.join("nvvm");
    for (extra, inputs, what) in [
        (&[][..], &["a.o", "main.o"][..], "whole program"),
        (&["-g"][..], &["a.o", "main.o"][..], "whole program, -g"),
        (
            &["-Xptxas", "-O1", "-maxrregcount=32"][..],
            &["a.o", "main.o"],
            "ptxas options",
        ),
        (&[][..], &["cdp.o", "main.o"], "device launch: libcudadevrt"),
        (&[][..], &["calls.o", "callee.o"], "LTO and non-LTO objects"),
        (&[][..], &["callee.o", "calls.o"], "non-LTO object first"),
        (
            &[][..],
            &["calls.o", "callee.o", "cdp.o"],
            "two LTO objects apart",
        ),
        (
            &[][..],
            &["calls.o", "callee_lto.o", "main.o"],
            "three modules, whole",
        ),
    ] {
        link(extra, inputs, what, &toolkit_nvvm);
    }
    // A non-LTO object using what only it uses of the LTO code: libnvJitLink
    // drops it, so the LTO objects are linked without optimization (nvlink's
    // private partial mode keeps it): a warning naming it, a working link.
    let cu = culink_in(
        &k.dir,
        &[
            "-arch=sm_90",
            "-dlto",
            &format!("-nvvmpath={}", toolkit_nvvm.display()),
            &lib,
            "a.o",
            "b.o",
            "main.o",
            "-lcudadevrt",
            "-o",
            "cu.cubin",
        ],
    );
    assert!(cu.status.success(), "{}", text(&cu.stderr));
    assert!(
        text(&cu.stderr).contains("'_Z5scalef' is used by an object built without -dlto"),
        "{}",
        text(&cu.stderr)
    );
    // The whole-program output is ptxas' own: no nvlink note.
    link(&[], &["a.o"], "whole program", &toolkit_nvvm);
    let cubin = std::fs::read(k.dir.join("cu.cubin")).unwrap();
    let dump = linker_core::dump::dump_to_string(&Cubin::parse(&cubin).unwrap());
    assert!(
        dump.contains("tool \"ptxas\"") && !dump.contains("tool \"culink\""),
        "{dump}"
    );
    // A report asked for is not silently missing.
    let cu = culink_in(
        &k.dir,
        &[
            "-arch=sm_90",
            "-dlto",
            &format!("-nvvmpath={}", toolkit_nvvm.display()),
            "a.o",
            "--print-map",
            "-o",
            "cu.cubin",
        ],
    );
    assert!(
        cu.status.success() && text(&cu.stderr).contains("reports are not produced"),
        "{}",
        text(&cu.stderr)
    );
    // Without libnvJitLink: an error saying what is missing, no output.
    std::fs::remove_file(k.dir.join("cu.cubin")).unwrap();
    let cu = culink_in(
        &k.dir,
        &[
            "-arch=sm_90",
            "-dlto",
            "-nvvmpath=/nonexistent/nvvm",
            "--nvjitlink",
            "/nonexistent/libnvJitLink.so",
            "a.o",
            "-o",
            "cu.cubin",
        ],
    );
    assert!(!cu.status.success());
    assert!(
        text(&cu.stderr).contains("libnvJitLink") && !k.dir.join("cu.cubin").exists(),
        "{}",
        text(&cu.stderr)
    );
}
