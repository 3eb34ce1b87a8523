//! Every link fixture of `tests/link`, at every arch, through the C ABI: the
//! result must be exactly what `linker_core::link` gives for the same inputs and
//! options (the same cubin bytes, or a failure with the same errors). How that
//! result compares with nvlink is `linker-core`'s `link_fixtures` test; this one
//! proves the C ABI adds nothing and loses nothing.

#[path = "../../linker-core/tests/common/mod.rs"]
mod common;

use culink::*;
use linker_core::{InputSource, SmArch};
use std::ffi::{c_char, CStr, CString};

/// The log behind `size_fn`/`get_fn`, as a string.
fn log(
    h: culinkHandle,
    size_fn: unsafe extern "C" fn(culinkHandle, *mut usize) -> culinkResult,
    get_fn: unsafe extern "C" fn(culinkHandle, *mut c_char) -> culinkResult,
) -> String {
    let mut n = 0usize;
    // SAFETY: `n` is a live local.
    assert_eq!(unsafe { size_fn(h, &mut n) }, culinkResult::CULINK_SUCCESS);
    let mut buf = vec![0 as c_char; n];
    // SAFETY: `buf` holds the log's size.
    assert_eq!(
        unsafe { get_fn(h, buf.as_mut_ptr()) },
        culinkResult::CULINK_SUCCESS
    );
    // SAFETY: the log was written NUL-terminated into `buf`.
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// Links through the C ABI: the cubin, or the error log.
fn capi_link(options: &[String], inputs: &[String]) -> Result<Vec<u8>, String> {
    let opts: Vec<CString> = options
        .iter()
        .map(|o| CString::new(o.as_str()).unwrap())
        .collect();
    let mut ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
    let mut h: culinkHandle = std::ptr::null_mut();
    // SAFETY: `h`, `ptrs` and the strings behind them are live locals.
    let r = unsafe { culinkCreate(&mut h, ptrs.len() as u32, ptrs.as_mut_ptr()) };
    assert_eq!(r, culinkResult::CULINK_SUCCESS, "{options:?}");
    for i in inputs {
        let path = CString::new(i.as_str()).unwrap();
        // SAFETY: `path` is NUL-terminated and outlives the call.
        let r = unsafe { culinkAddFile(h, CULINK_INPUT_ANY, path.as_ptr()) };
        assert_eq!(r, culinkResult::CULINK_SUCCESS, "{i}");
    }
    let result = if culinkComplete(h) == culinkResult::CULINK_SUCCESS {
        let mut size = 0usize;
        // SAFETY: `size` is a live local.
        assert_eq!(
            unsafe { culinkGetLinkedCubinSize(h, &mut size) },
            culinkResult::CULINK_SUCCESS
        );
        let mut cubin = vec![0u8; size];
        // SAFETY: `cubin` holds the cubin's size.
        assert_eq!(
            unsafe { culinkGetLinkedCubin(h, cubin.as_mut_ptr().cast()) },
            culinkResult::CULINK_SUCCESS
        );
        Ok(cubin)
    } else {
        Err(log(h, culinkGetErrorLogSize, culinkGetErrorLog))
    };
    // SAFETY: `h` is a live local.
    assert_eq!(
        unsafe { culinkDestroy(&mut h) },
        culinkResult::CULINK_SUCCESS
    );
    result
}

#[test]
fn every_fixture_links_the_same_through_the_c_abi() {
    let mut checked = 0;
    let mut fails = Vec::new();
    for case in common::cases() {
        // Options the C ABI does not take (e.g. --preserve-relocs, -r) skip the case.
        let mut options = Vec::new();
        let mut it = case.options.iter();
        while let Some(o) = it.next() {
            match o.trim_start_matches('-') {
                "kernels-used" | "variables-used" => {
                    options.push(o.clone());
                    options.extend(it.next().cloned());
                }
                n if n.starts_with("kernels-used=") || n.starts_with("variables-used=") => {
                    options.push(o.clone())
                }
                "g" => options.push(o.clone()),
                _ => {
                    options.clear();
                    break;
                }
            }
        }
        if options.is_empty() && !case.options.is_empty() {
            continue;
        }
        for &sm in &case.archs {
            let mut args = vec![format!("-arch=sm_{sm}")];
            args.extend(options.iter().cloned());
            let paths = case.input_paths(sm);
            let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            let mut opts = culink::options::parse_options(&args).unwrap();
            assert_eq!(opts.arch, Some(SmArch::new(sm)));
            opts.inputs = paths.into_iter().map(InputSource::File).collect();
            let direct = linker_core::link(&opts).map(|o| o.cubin).map_err(|f| {
                f.errors()
                    .map(|e| format!("error: {e}\n"))
                    .collect::<String>()
            });
            let capi = capi_link(&args, &names);
            if capi != direct {
                fails.push(format!(
                    "{} sm_{sm}: C ABI {:?} vs linker_core {:?}",
                    case.name,
                    capi.as_ref().map(Vec::len),
                    direct.as_ref().map(Vec::len)
                ));
            }
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} links checked");
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

/// PTX added through the C ABI is compiled with nvJitLink's ptxas options, in
/// the order given (measured with libnvJitLink 13.0.88: its ptxas records
/// `-lineinfo`, `-O<n>`, `-maxrregcount` and each `-Xptxas` value, the last of
/// two conflicting ones winning): the link equals a link of the objects
/// NVIDIA's ptxas makes with those options, and differs from one without.
#[test]
fn ptx_is_compiled_with_nvjitlinks_ptxas_options() {
    let Some(ptxas) = common::nv_tool("ptxas") else {
        eprintln!("skipped: no ptxas (run `cargo xtask nv-tools`)");
        return;
    };
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let ptx: Vec<String> = ["regs_k.ptx", "regs_g.ptx"]
        .iter()
        .map(|f| data.join(f).display().to_string())
        .collect();
    let tmp = std::env::temp_dir().join(format!("culink-capi-ptx-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    // What ptxas itself makes of the PTX with `ptxas_args`, linked.
    let reference = |ptxas_args: &[&str]| {
        let objects: Vec<_> = ptx
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let o = tmp.join(format!("{i}.o"));
                let run = std::process::Command::new(&ptxas)
                    .args(ptxas_args)
                    .args(["-arch=sm_80", "-m64", "-c", p, "-o"])
                    .arg(&o)
                    .output()
                    .unwrap();
                assert!(run.status.success(), "{run:?}");
                InputSource::File(o)
            })
            .collect();
        let mut opts = culink::options::parse_options(&["-arch=sm_80"]).unwrap();
        opts.inputs = objects;
        linker_core::link(&opts).unwrap().cubin
    };
    let ptxas_opt = format!("-ptxas={}", ptxas.display());
    let ours = |extra: &[&str]| {
        let mut args = vec!["-arch=sm_80".to_string(), ptxas_opt.clone()];
        args.extend(extra.iter().map(|s| s.to_string()));
        capi_link(&args, &ptx).unwrap()
    };
    let differences = |a: &[u8], b: &[u8]| {
        linker_core::diff::diff(
            &linker_core::Cubin::parse(a).unwrap(),
            &linker_core::Cubin::parse(b).unwrap(),
        )
    };
    let with = ours(&[
        "-lineinfo",
        "-maxrregcount=64",
        "-Xptxas=-maxrregcount=32",
        "-O3",
        "-ftz=true",
    ]);
    let expected = reference(&["-lineinfo", "-maxrregcount=64", "-maxrregcount=32", "-O3"]);
    let d = differences(&with, &expected);
    assert!(d.is_empty(), "{d:?}");
    // The options change the code (a register limit of 32, line tables).
    let plain = ours(&[]);
    assert!(differences(&plain, &reference(&[])).is_empty());
    let d = differences(&plain, &with);
    assert!(
        d.iter().any(|x| x.to_string().contains(".text."))
            && d.iter()
                .any(|x| x.to_string().contains(".nv_debug_line_sass")),
        "{d:?}"
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

/// `-lto`: LTO IR (`nvcc -dlto --keep`'s `.ltoir`, what NVRTC's `-dlto`
/// gives) and a cubin built without `-dlto`, linked through the C ABI,
/// equal nvlink's `-dlto` link of the same code as host objects.
#[test]
fn lto_ir_links_like_nvlink_dlto() {
    let (Some(nvcc), Some(nvlink)) = (common::nv_tool("nvcc"), common::nv_tool("nvlink")) else {
        eprintln!("skipped: no nvcc/nvlink (run `cargo xtask nv-tools`)");
        return;
    };
    // The tools directory may be a link to the toolkit's bin/.
    let nvcc = std::fs::canonicalize(nvcc).unwrap();
    let toolkit = nvcc
        .parent()
        .and_then(|b| b.parent())
        .unwrap()
        .to_path_buf();
    let nvjitlink = toolkit.join("lib/libnvJitLink.so.13");
    if !nvjitlink.is_file() {
        assert!(
            !common::is_ci(),
            "CI=true but {} is missing",
            nvjitlink.display()
        );
        eprintln!("skipped: no libnvJitLink");
        return;
    }
    let cc = common::nvcc_host_compiler();
    let dir = std::env::temp_dir().join(format!("culink-capi-lto-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("nvvm/lib64")).unwrap();
    std::fs::write(
        dir.join("calls.cu"),
        "__device__ float callee(float x);\n__global__ void caller(float* a, int n) {\n  for (int i = 0; i < n; i++) a[threadIdx.x] = callee(a[threadIdx.x]) + 1.0f;\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("callee.cu"),
        "__device__ float callee(float x) { return x * x - 2.0f; }\n",
    )
    .unwrap();
    let run = |cmd: &mut std::process::Command| {
        let out = cmd.current_dir(&dir).output().unwrap();
        assert!(
            out.status.success(),
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let nvcc_dc = |extra: &[&str], src: &str, out: &str| {
        run(std::process::Command::new(&nvcc)
            .args(["-ccbin", &cc, "-arch=sm_90", "-dc"])
            .args(extra)
            .args([src, "-o", out]));
    };
    nvcc_dc(&["-dlto", "--keep"], "calls.cu", "calls.o");
    nvcc_dc(&[], "callee.cu", "callee.o");
    // nvlink wants <nvvmpath>/lib64/libnvvm.so.
    std::os::unix::fs::symlink(
        toolkit.join("lib/libnvvm.so.4"),
        dir.join("nvvm/lib64/libnvvm.so"),
    )
    .unwrap();
    run(std::process::Command::new(&nvlink).args([
        "-arch=sm_90",
        "-dlto",
        &format!("-nvvmpath={}", dir.join("nvvm").display()),
        "calls.o",
        "callee.o",
        "-o",
        "nv.cubin",
    ]));
    let path = |f: &str| dir.join(f).display().to_string();
    let ours = capi_link(
        &[
            "-arch=sm_90".into(),
            "-lto".into(),
            format!("-nvjitlink={}", nvjitlink.display()),
            format!("-ptxas={}", toolkit.join("bin/ptxas").display()),
        ],
        &[path("calls.ltoir"), path("callee.o")],
    )
    .unwrap();
    let reference = std::fs::read(dir.join("nv.cubin")).unwrap();
    let d = linker_core::diff::diff(
        &linker_core::Cubin::parse(&ours).unwrap(),
        &linker_core::Cubin::parse(&reference).unwrap(),
    );
    assert!(d.is_empty(), "{d:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
