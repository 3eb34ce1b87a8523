//! Link-time optimization (`-dlto`): the LTO IR of `nvcc -dlto` objects,
//! optimized together by NVIDIA's libnvJitLink into one PTX program.
//!
//! nvlink 13.0.88 runs libnvvm through a private entry point; the same
//! optimizer is public in libnvJitLink (`nvJitLinkCreate` with `-lto -ptx`),
//! whose PTX for the same inputs is what nvlink compiles (measured: nvlink's
//! output equals whole-program ptxas on it, or, in a partial link, a link of
//! `ptxas -c` of it; `docs/inputs.md`). libnvJitLink is loaded at run time:
//! [`LinkOptions::nvjitlink`](crate::LinkOptions::nvjitlink), else next to
//! nvlink's `-nvvmpath` (`<cuda>/nvvm` → `<cuda>/lib64`, `<cuda>/lib`),
//! else the system loader's `libnvJitLink.so.13`.

use crate::arch::SmArch;
use crate::error::{Error, ErrorKind, Result};
use std::ffi::{c_char, c_int, c_void, CString};
use std::path::{Path, PathBuf};

/// The file names libnvJitLink has (CUDA 13), most specific first.
const LIB_NAMES: &[&str] = &["libnvJitLink.so.13", "libnvJitLink.so"];

/// `NVJITLINK_INPUT_FATBIN`: nvJitLink picks the LTO IR out of a fatbinary
/// itself, with the compile options nvcc recorded in the entry's header.
const INPUT_FATBIN: c_int = 4;

/// `NVJITLINK_INPUT_LTOIR`: LTO IR as NVRTC writes it.
const INPUT_LTOIR: c_int = 3;

/// The first word of NVVM LTO IR (bytes `ed 43 4e 7f`).
pub const LTO_IR_MAGIC: u32 = 0x7F4E_43ED;

/// Whether `data` is LTO IR: NVVM's (magic [`LTO_IR_MAGIC`]), or LLVM
/// bitcode (`BC C0DE`, or its wrapper `0x0B17C0DE`).
pub fn is_lto_ir(data: &[u8]) -> bool {
    data.starts_with(&LTO_IR_MAGIC.to_le_bytes())
        || data.starts_with(b"BC\xc0\xde")
        || data.starts_with(&0x0B17_C0DEu32.to_le_bytes())
}

/// Where to look for libnvJitLink, in order: `explicit`, then the library
/// directories of the CUDA toolkit whose `nvvm` directory is `nvvm_path`,
/// then the bare name (the system loader's search path).
pub fn candidates(explicit: Option<&Path>, nvvm_path: Option<&Path>) -> Vec<PathBuf> {
    if let Some(p) = explicit {
        return vec![p.to_path_buf()];
    }
    let mut out = Vec::new();
    if let Some(root) = nvvm_path.and_then(Path::parent) {
        for dir in ["lib64", "lib"] {
            for name in LIB_NAMES {
                let p = root.join(dir).join(name);
                if p.is_file() {
                    out.push(p);
                }
            }
        }
    }
    out.extend(LIB_NAMES.iter().map(PathBuf::from));
    out
}

/// `nvJitLinkHandle`.
type Handle = *mut c_void;
type CreateFn = unsafe extern "C" fn(*mut Handle, u32, *const *const c_char) -> c_int;
type DestroyFn = unsafe extern "C" fn(*mut Handle) -> c_int;
type AddDataFn = unsafe extern "C" fn(Handle, c_int, *const c_void, usize, *const c_char) -> c_int;
type CompleteFn = unsafe extern "C" fn(Handle) -> c_int;
type SizeFn = unsafe extern "C" fn(Handle, *mut usize) -> c_int;
type GetFn = unsafe extern "C" fn(Handle, *mut c_char) -> c_int;

/// The libnvJitLink 13 entry points culink uses (the versioned names its
/// header maps the API to).
struct Api {
    create: CreateFn,
    destroy: DestroyFn,
    add_data: AddDataFn,
    complete: CompleteFn,
    ptx_size: SizeFn,
    ptx: GetFn,
    error_log_size: SizeFn,
    error_log: GetFn,
}

impl Api {
    fn open(path: &Path) -> std::result::Result<Api, String> {
        // SAFETY: loading libnvJitLink runs its initializers, which have no
        // preconditions; the symbols are looked up with the signatures of
        // nvJitLink.h (CUDA 13.0).
        unsafe {
            let lib = libloading::Library::new(path).map_err(|e| e.to_string())?;
            fn sym<T: Copy>(
                lib: &libloading::Library,
                name: &str,
            ) -> std::result::Result<T, String> {
                // SAFETY: `T` is the symbol's C signature (see the callers).
                unsafe { lib.get::<T>(name.as_bytes()) }
                    .map(|s| *s)
                    .map_err(|e| format!("{name}: {e} (not a CUDA 13 libnvJitLink?)"))
            }
            let api = Api {
                create: sym(&lib, "__nvJitLinkCreate_13_0")?,
                destroy: sym(&lib, "__nvJitLinkDestroy_13_0")?,
                add_data: sym(&lib, "__nvJitLinkAddData_13_0")?,
                complete: sym(&lib, "__nvJitLinkComplete_13_0")?,
                ptx_size: sym(&lib, "__nvJitLinkGetLinkedPtxSize_13_0")?,
                ptx: sym(&lib, "__nvJitLinkGetLinkedPtx_13_0")?,
                error_log_size: sym(&lib, "__nvJitLinkGetErrorLogSize_13_0")?,
                error_log: sym(&lib, "__nvJitLinkGetErrorLog_13_0")?,
            };
            // Never unloaded (the function pointers stay valid for the
            // process): NVIDIA's libraries keep global state and exit
            // handlers, and are not made to be unloaded.
            std::mem::forget(lib);
            Ok(api)
        }
    }
}

/// One nvJitLink handle, destroyed on drop.
struct Session<'a> {
    api: &'a Api,
    h: Handle,
}

impl Session<'_> {
    /// A NUL-terminated string from a (size, get) pair of the API.
    fn text(&self, size: SizeFn, get: GetFn) -> Option<Vec<u8>> {
        let mut n = 0usize;
        // SAFETY: `self.h` is a live handle and `n` a live local.
        if unsafe { size(self.h, &mut n) } != 0 || n == 0 {
            return None;
        }
        let mut buf = vec![0u8; n];
        // SAFETY: `buf` holds the `n` bytes the API said it writes.
        if unsafe { get(self.h, buf.as_mut_ptr().cast()) } != 0 {
            return None;
        }
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        buf.truncate(end);
        Some(buf)
    }

    fn error_log(&self) -> String {
        self.text(self.api.error_log_size, self.api.error_log)
            .map(|b| String::from_utf8_lossy(&b).trim().to_string())
            .unwrap_or_default()
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        // SAFETY: `self.h` was made by `create` and is destroyed once.
        unsafe { (self.api.destroy)(&mut self.h) };
    }
}

/// Optimizes the LTO IR of `fatbins` (name, fatbinary or LTO IR bytes; in link order)
/// together for `arch` with the libnvJitLink at one of `libs` (the first that
/// loads), and returns the PTX of the program (no trailing NUL). `debug`:
/// nvJitLink's `-g`, as nvlink's `-g` link asks its optimizer for (measured:
/// without it the PTX of a `-g -dlto` link differs from nvlink's). `used`:
/// further nvJitLink options naming what the program uses
/// (`-kernels-used=...`, `-variables-used=...`, `-optimize-unused-variables`).
pub fn optimize(
    libs: &[PathBuf],
    arch: SmArch,
    debug: bool,
    used: &[String],
    fatbins: &[(&str, &[u8])],
) -> Result<Vec<u8>> {
    let _span = tracing::info_span!("lto", arch = %arch, modules = fatbins.len()).entered();
    let mut tried = Vec::new();
    let api = libs.iter().find_map(|p| match Api::open(p) {
        Ok(a) => Some(a),
        Err(e) => {
            tried.push(format!("{}: {e}", p.display()));
            None
        }
    });
    let Some(api) = api else {
        return Err(Error::new(
            ErrorKind::Optimize,
            format!(
                "link-time optimization needs NVIDIA's libnvJitLink (CUDA 13), which culink loads at run time; none could be loaded ({}); give one with --nvjitlink PATH",
                tried.join("; ")
            ),
        ));
    };
    let mut options = vec![format!("-arch={arch}"), "-lto".into(), "-ptx".into()];
    if debug {
        options.push("-g".into());
    }
    options.extend(used.iter().cloned());
    let options: Vec<CString> = options
        .into_iter()
        .map(|o| CString::new(o).expect("no NUL in options"))
        .collect();
    let ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
    let mut h: Handle = std::ptr::null_mut();
    // SAFETY: `h` is a live local; `ptrs` points to `options`' live strings.
    let r = unsafe { (api.create)(&mut h, ptrs.len() as u32, ptrs.as_ptr()) };
    if r != 0 || h.is_null() {
        return Err(Error::new(
            ErrorKind::Optimize,
            format!("libnvJitLink refused the options {options:?} (result {r})"),
        ));
    }
    let session = Session { api: &api, h };
    for (name, data) in fatbins {
        let cname = CString::new(name.replace('\0', "")).expect("NULs removed");
        // SAFETY: `data` is live for the call (nvJitLink copies it); `cname`
        // is NUL-terminated.
        let r = unsafe {
            (api.add_data)(
                session.h,
                if is_lto_ir(data) {
                    INPUT_LTOIR
                } else {
                    INPUT_FATBIN
                },
                data.as_ptr().cast(),
                data.len(),
                cname.as_ptr(),
            )
        };
        if r != 0 {
            return Err(Error::new(
                ErrorKind::Optimize,
                format!(
                    "libnvJitLink refused its LTO IR (result {r}): {}",
                    session.error_log()
                ),
            )
            .in_file(name.to_string()));
        }
    }
    // SAFETY: a live handle.
    let r = unsafe { (api.complete)(session.h) };
    if r != 0 {
        return Err(Error::new(
            ErrorKind::Optimize,
            format!(
                "link-time optimization failed (libnvJitLink result {r}): {}",
                session.error_log()
            ),
        ));
    }
    session.text(api.ptx_size, api.ptx).ok_or_else(|| {
        Error::new(
            ErrorKind::Optimize,
            "libnvJitLink gave no PTX for the link-time optimized program",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_search_order() {
        let explicit = Path::new("/opt/x/libnvJitLink.so");
        assert_eq!(candidates(Some(explicit), None), [explicit]);
        // Without a toolkit, only the loader's names.
        assert_eq!(
            candidates(None, None),
            LIB_NAMES.iter().map(PathBuf::from).collect::<Vec<_>>()
        );
        // A toolkit's lib64 and lib directories first, when the library is there.
        let dir = std::env::temp_dir().join(format!("culink-lto-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("lib")).unwrap();
        std::fs::write(dir.join("lib/libnvJitLink.so.13"), b"").unwrap();
        let c = candidates(None, Some(&dir.join("nvvm")));
        assert_eq!(c[0], dir.join("lib/libnvJitLink.so.13"));
        assert_eq!(c.len(), 1 + LIB_NAMES.len());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn missing_library_is_a_clear_error() {
        let e = optimize(
            &[PathBuf::from("/nonexistent/libnvJitLink.so")],
            SmArch::new(90),
            false,
            &[],
            &[],
        )
        .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Optimize);
        assert!(e.message.contains("/nonexistent/libnvJitLink.so"), "{e}");
        assert!(e.message.contains("--nvjitlink"), "{e}");
    }
}
