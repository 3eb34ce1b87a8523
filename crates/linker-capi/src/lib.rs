//! `libculink`: culink's C ABI, shaped like NVIDIA's nvJitLink.
//!
//! Toolchain drivers and JITs (numba-cuda, cuda.core, ...) link device code
//! in-process through nvJitLink's handle API; this crate offers the same shape
//! on top of [`linker_core::link()`]:
//!
//! ```c
//! culinkHandle h;
//! const char *opts[] = {"-arch=sm_90"};
//! culinkCreate(&h, 1, opts);
//! culinkAddFile(h, CULINK_INPUT_CUBIN, "a.o");
//! culinkAddData(h, CULINK_INPUT_ANY, bytes, size, "b.o");
//! if (culinkComplete(h) == CULINK_SUCCESS) {
//!     size_t n; culinkGetLinkedCubinSize(h, &n);
//!     void *cubin = malloc(n); culinkGetLinkedCubin(h, cubin);
//! } else {
//!     size_t n; culinkGetErrorLogSize(h, &n);
//!     char *log = malloc(n); culinkGetErrorLog(h, log);
//! }
//! culinkDestroy(&h);
//! ```
//!
//! The header is `include/culink.h`, generated from this file by
//! `cargo xtask capi-header` (cbindgen); a test keeps it current.
//!
//! Guarantees of every entry point:
//! - **No panic crosses the boundary**: each entry point runs under
//!   `catch_unwind`; a panic becomes [`culinkResult::CULINK_ERROR_INTERNAL`] (with the
//!   panic message in the handle's error log when there is a handle).
//! - **Null pointers are checked** and answered with
//!   [`culinkResult::CULINK_ERROR_NULL_INPUT`].
//! - **Handles are thread-safe**: a handle may be used from any thread; concurrent
//!   calls on one handle are serialized by the handle's mutex, and different
//!   handles link in parallel. A handle is an opaque token looked up in a
//!   registry, not a pointer to memory: a destroyed, stale or made-up handle is
//!   answered with [`culinkResult::CULINK_ERROR_INVALID_INPUT`], never undefined
//!   behaviour, even when another thread destroys it mid-call.
//!
//! Inputs: every input is copied (or read, for `culinkAddFile`) when it is
//! added, checked against its declared type by its first bytes, and passed to
//! `linker_core` as bytes; `linker_core` decides by content what it can link.
//! PTX is compiled by `culinkComplete` with an external ptxas (`-ptxas=PATH`,
//! else `ptxas` on `PATH`) and the ptxas options nvJitLink passes on
//! (`-lineinfo`, `-O<n>`, `-maxrregcount=N`, `-Xptxas=...`, `-g`). LTO IR
//! (and fatbinaries' LTO IR) is optimized with `-lto` by NVIDIA's
//! libnvJitLink, loaded at run time (`-nvjitlink=PATH`), as the CLI's
//! `-dlto`; without `-lto` LTO IR is refused at once. The Rust-side option
//! parser is [`options::parse_options`].

pub mod options;
mod sniff;

use linker_core::{Cubin, Diagnostic, ErrorKind, InputSource, LinkOptions, Severity};
use sniff::Kind;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The result of every `culink*` call. The values match nvJitLink's
/// `nvJitLinkResult` one for one; culink's own additions start at 100.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum culinkResult {
    /// The call succeeded.
    CULINK_SUCCESS = 0,
    /// `culinkCreate`: an option culink does not know, a flag given a value, a
    /// value option without a value, or an option string that is not UTF-8.
    CULINK_ERROR_UNRECOGNIZED_OPTION = 1,
    /// `culinkCreate`: no `-arch` option.
    CULINK_ERROR_MISSING_ARCH = 2,
    /// A malformed or unreadable input, an unknown handle, or a link that failed
    /// on its inputs (undefined or multiply defined symbols, ...): see the error log.
    CULINK_ERROR_INVALID_INPUT = 3,
    /// `culinkComplete`: PTX could not be compiled (no ptxas found, or ptxas
    /// rejected the PTX, the optimized program's included): see the error
    /// log.
    CULINK_ERROR_PTX_COMPILE = 4,
    /// An LTO-IR (NVVM) input to a handle created without `-lto`; or, from
    /// `culinkComplete`, `-lto`'s optimization failed (no libnvJitLink, or
    /// it rejected the LTO IR), as nvJitLink's: see the error log.
    CULINK_ERROR_NVVM_COMPILE = 5,
    /// A bug in culink (a caught panic): see the error log.
    CULINK_ERROR_INTERNAL = 6,
    /// Never returned by culink (kept so the values match nvJitLink's).
    CULINK_ERROR_THREADPOOL = 7,
    /// An input type culink does not know or support (`CULINK_INPUT_NONE`,
    /// `CULINK_INPUT_INDEX`, an unknown value), or `CULINK_INPUT_ANY` data that
    /// is no known kind of input.
    CULINK_ERROR_UNRECOGNIZED_INPUT = 8,
    /// Never returned by culink (kept so the values match nvJitLink's).
    CULINK_ERROR_FINALIZE = 9,
    /// A required pointer argument was NULL.
    CULINK_ERROR_NULL_INPUT = 10,
    /// Never returned by culink (kept so the values match nvJitLink's).
    CULINK_ERROR_INCOMPATIBLE_OPTIONS = 11,
    /// The input's content does not match its declared type (e.g. a fatbin
    /// added as `CULINK_INPUT_CUBIN`).
    CULINK_ERROR_INCORRECT_INPUT_TYPE = 12,
    /// An input was compiled for an architecture the target cannot run.
    CULINK_ERROR_ARCH_MISMATCH = 13,
    /// Never returned by culink (kept so the values match nvJitLink's).
    CULINK_ERROR_OUTDATED_LIBRARY = 14,
    /// Never returned by culink yet (kept so the values match nvJitLink's).
    CULINK_ERROR_MISSING_FATBIN = 15,
    /// `culinkCreate`: `-arch` names no architecture (`-arch=bogus`).
    CULINK_ERROR_UNRECOGNIZED_ARCH = 16,
    /// `culinkCreate`: `-arch` names an architecture culink does not link for.
    CULINK_ERROR_UNSUPPORTED_ARCH = 17,
    /// Never returned by culink (kept so the values match nvJitLink's).
    CULINK_ERROR_LTO_NOT_ENABLED = 18,
    /// culink's own: the call does not fit the handle's state (an input added or
    /// `culinkComplete` called after `culinkComplete`, or the cubin asked for
    /// before a successful `culinkComplete`).
    CULINK_ERROR_INVALID_STATE = 100,
}

use culinkResult::*;

/// The declared type of an input (an `int`; the values match nvJitLink's
/// `nvJitLinkInputType`). It is a hint checked against the content: the content
/// decides how an input is linked.
#[allow(non_camel_case_types)]
pub type culinkInputType = c_int;

/// No type: refused with `CULINK_ERROR_UNRECOGNIZED_INPUT`.
pub const CULINK_INPUT_NONE: culinkInputType = 0;
/// A relocatable device object (`ET_REL` cubin from `ptxas -c` / `nvcc -dc`).
pub const CULINK_INPUT_CUBIN: culinkInputType = 1;
/// PTX text, compiled for the target by `culinkComplete` with an external
/// ptxas (`CULINK_ERROR_PTX_COMPILE` when that fails).
pub const CULINK_INPUT_PTX: culinkInputType = 2;
/// NVVM LTO-IR (NVRTC's `-dlto` output): optimized with the other LTO
/// inputs when the handle was created with `-lto`, else refused with
/// `CULINK_ERROR_NVVM_COMPILE`.
pub const CULINK_INPUT_LTOIR: culinkInputType = 3;
/// A fatbinary: its device code for the target is linked (its PTX compiled
/// when it has no code for the target).
pub const CULINK_INPUT_FATBIN: culinkInputType = 4;
/// A host object (ELF) embedding device code (`nvcc -dc`), or a cubin.
pub const CULINK_INPUT_OBJECT: culinkInputType = 5;
/// An `ar` archive of device objects or host objects with device code.
pub const CULINK_INPUT_LIBRARY: culinkInputType = 6;
/// An index file: refused with `CULINK_ERROR_UNRECOGNIZED_INPUT`.
pub const CULINK_INPUT_INDEX: culinkInputType = 7;
/// Any of the above, recognized by content.
pub const CULINK_INPUT_ANY: culinkInputType = 10;

/// The opaque link state behind a `culinkHandle`; callers never see inside it.
#[allow(non_camel_case_types)]
pub struct culinkHandle_st {
    _private: [u8; 0],
}

/// A link in progress: made by `culinkCreate`, ended by `culinkDestroy`.
#[allow(non_camel_case_types)]
pub type culinkHandle = *mut culinkHandle_st;

/// Where a handle is in its life.
enum Phase {
    /// Taking inputs.
    Open,
    /// `culinkComplete` succeeded: the cubin.
    Linked(Vec<u8>),
    /// `culinkComplete` failed (or panicked).
    Failed,
}

/// The state of one handle.
struct State {
    options: LinkOptions,
    inputs: Vec<InputSource>,
    phase: Phase,
    error_log: String,
    info_log: String,
}

impl State {
    /// Appends `error: message` to the error log and returns `code`.
    fn fail(&mut self, code: culinkResult, message: impl AsRef<str>) -> culinkResult {
        push_line(&mut self.error_log, "error", message.as_ref());
        code
    }

    fn log_diagnostics(&mut self, diagnostics: &[Diagnostic]) {
        for d in diagnostics {
            let text = d.error.to_string();
            match d.severity {
                Severity::Error => push_line(&mut self.error_log, "error", &text),
                Severity::Warning => push_line(&mut self.info_log, "warning", &text),
                Severity::Info => push_line(&mut self.info_log, "info", &text),
            }
        }
    }

    fn require_open(&mut self, what: &str) -> Result<(), culinkResult> {
        match self.phase {
            Phase::Open => Ok(()),
            _ => Err(self.fail(
                CULINK_ERROR_INVALID_STATE,
                format!("{what}: culinkComplete was already called on this handle"),
            )),
        }
    }

    fn add(&mut self, ty: culinkInputType, data: Arc<[u8]>, name: String) -> culinkResult {
        let kind = sniff::sniff(&data);
        if let Err(code) = check_input(ty, kind, &data, &name, self.options.link_time_opt) {
            return self.fail(code.0, code.1);
        }
        self.inputs.push(InputSource::Bytes { name, data });
        CULINK_SUCCESS
    }

    fn complete(&mut self) -> culinkResult {
        if let Err(code) = self.require_open("culinkComplete") {
            return code;
        }
        self.phase = Phase::Failed;
        // Complete runs once: the inputs go to the link and are freed after it.
        let mut opts = self.options.clone();
        opts.inputs = std::mem::take(&mut self.inputs);
        match linker_core::link(&opts) {
            Ok(out) => {
                self.log_diagnostics(&out.diagnostics);
                // -verbose: the resource report nvJitLink and nvlink print.
                if opts.verbose {
                    if let Ok(cubin) = linker_core::Cubin::parse(&out.cubin) {
                        for line in linker_core::resources::resource_usage(&cubin).lines() {
                            push_line(&mut self.info_log, "info", &line);
                        }
                    }
                }
                self.phase = Phase::Linked(out.cubin);
                CULINK_SUCCESS
            }
            Err(failure) => {
                self.log_diagnostics(&failure.diagnostics);
                // The first error picks the result; the log has them all.
                let code = failure.errors().next().map(|e| match e.kind {
                    ErrorKind::Arch => CULINK_ERROR_ARCH_MISMATCH,
                    ErrorKind::Compile => CULINK_ERROR_PTX_COMPILE,
                    // (nvJitLink's NVJITLINK_ERROR_NVVM_COMPILE.)
                    ErrorKind::Optimize => CULINK_ERROR_NVVM_COMPILE,
                    _ => CULINK_ERROR_INVALID_INPUT,
                });
                match code {
                    Some(c) => c,
                    None => self.fail(CULINK_ERROR_INTERNAL, "link failed without an error"),
                }
            }
        }
    }

    fn cubin(&mut self, what: &str) -> Result<&[u8], culinkResult> {
        if !matches!(self.phase, Phase::Linked(_)) {
            return Err(self.fail(
                CULINK_ERROR_INVALID_STATE,
                format!("{what}: no linked cubin: culinkComplete has not succeeded"),
            ));
        }
        match &self.phase {
            Phase::Linked(c) => Ok(c),
            _ => Err(CULINK_ERROR_INTERNAL),
        }
    }
}

/// Appends `severity: message` as one line (NULs removed: the log is a C string).
fn push_line(log: &mut String, severity: &str, message: &str) {
    log.push_str(severity);
    log.push_str(": ");
    log.extend(message.chars().filter(|&c| c != '\0'));
    log.push('\n');
}

/// Checks an input of declared type `ty` whose bytes look like `kind`.
fn check_input(
    ty: culinkInputType,
    kind: Kind,
    data: &[u8],
    name: &str,
    lto: bool,
) -> Result<(), (culinkResult, String)> {
    let ltoir = || {
        (
            CULINK_ERROR_NVVM_COMPILE,
            format!(
                "{name}: LTO-IR input needs link-time optimization: create the handle with -lto"
            ),
        )
    };
    let expected: &[Kind] = match ty {
        CULINK_INPUT_PTX => &[Kind::Ptx],
        CULINK_INPUT_LTOIR if lto => &[Kind::LtoIr],
        CULINK_INPUT_LTOIR => return Err(ltoir()),
        CULINK_INPUT_INDEX => {
            return Err((
                CULINK_ERROR_UNRECOGNIZED_INPUT,
                format!("{name}: index-file inputs are not supported"),
            ))
        }
        CULINK_INPUT_CUBIN => &[Kind::Cubin],
        CULINK_INPUT_FATBIN => &[Kind::Fatbin],
        CULINK_INPUT_OBJECT => &[Kind::HostObject, Kind::Cubin],
        CULINK_INPUT_LIBRARY => &[Kind::Archive],
        CULINK_INPUT_ANY => &[
            Kind::Cubin,
            Kind::HostObject,
            Kind::Fatbin,
            Kind::Archive,
            Kind::Ptx,
        ],
        other => {
            return Err((
                CULINK_ERROR_UNRECOGNIZED_INPUT,
                format!("{name}: unknown input type {other}"),
            ))
        }
    };
    if data.is_empty() {
        return Err((CULINK_ERROR_INVALID_INPUT, format!("{name}: empty input")));
    }
    match kind {
        k if expected.contains(&k) => {}
        Kind::LtoIr if ty == CULINK_INPUT_ANY && lto => {}
        Kind::LtoIr if ty == CULINK_INPUT_ANY => return Err(ltoir()),
        Kind::Unknown if ty == CULINK_INPUT_ANY => {
            return Err((
                CULINK_ERROR_UNRECOGNIZED_INPUT,
                format!("{name}: unrecognized input: not a cubin, fatbin, host object, archive, PTX or LTO-IR"),
            ))
        }
        Kind::Unknown => {
            let message = match ty {
                CULINK_INPUT_CUBIN => match Cubin::parse(data) {
                    Err(e) => e.in_file(name).to_string(),
                    Ok(_) => format!("{name}: not a cubin"),
                },
                _ => format!("{name}: not {}", expected[0].describe()),
            };
            return Err((CULINK_ERROR_INVALID_INPUT, message));
        }
        k => {
            return Err((
                CULINK_ERROR_INCORRECT_INPUT_TYPE,
                format!(
                    "{name}: the input is {}, but was added as {}",
                    k.describe(),
                    expected[0].describe()
                ),
            ))
        }
    }
    // Cubins are validated now, so a bad one is reported by the call that added it.
    if kind == Kind::Cubin {
        if let Err(e) = Cubin::parse(data) {
            return Err((CULINK_ERROR_INVALID_INPUT, e.in_file(name).to_string()));
        }
    }
    Ok(())
}

/// One handle's state behind its mutex.
struct Link {
    state: Mutex<State>,
}

/// The live handles by token. A `BTreeMap` because its `new` is `const`.
static HANDLES: Mutex<BTreeMap<usize, Arc<Link>>> = Mutex::new(BTreeMap::new());
/// The next handle token; tokens are never reused, so a stale handle never
/// reaches another link.
static NEXT_TOKEN: AtomicUsize = AtomicUsize::new(1);

fn handles() -> MutexGuard<'static, BTreeMap<usize, Arc<Link>>> {
    HANDLES.lock().unwrap_or_else(PoisonError::into_inner)
}

fn lookup(handle: culinkHandle) -> Result<Arc<Link>, culinkResult> {
    if handle.is_null() {
        return Err(CULINK_ERROR_NULL_INPUT);
    }
    handles()
        .get(&(handle as usize))
        .cloned()
        .ok_or(CULINK_ERROR_INVALID_INPUT)
}

/// Runs an entry point's body; a panic becomes `CULINK_ERROR_INTERNAL`.
fn entry(body: impl FnOnce() -> culinkResult) -> culinkResult {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(CULINK_ERROR_INTERNAL)
}

/// Runs `body` on the locked state of `handle`; a panic in `body` is logged in
/// the handle's error log and becomes `CULINK_ERROR_INTERNAL`.
fn with_state(handle: culinkHandle, body: impl FnOnce(&mut State) -> culinkResult) -> culinkResult {
    entry(|| {
        let link = match lookup(handle) {
            Ok(l) => l,
            Err(code) => return code,
        };
        let mut state = link.state.lock().unwrap_or_else(PoisonError::into_inner);
        match catch_unwind(AssertUnwindSafe(|| body(&mut state))) {
            Ok(code) => code,
            Err(payload) => {
                let what = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                state.fail(
                    CULINK_ERROR_INTERNAL,
                    format!("internal error (please report): {what}"),
                )
            }
        }
    })
}

/// Creates a link handle from `numOptions` option strings (`-arch=sm_90`, `-v`,
/// `-w`, `-Werror`, `-kernels-used=K`, `-variables-used=V`, `-g`, the ptxas
/// options for PTX inputs (`-lineinfo`, `-O<n>`, `-maxrregcount=N`,
/// `-Xptxas=OPT`, `-ptxas=PATH`), `-lto` (`-nvjitlink=PATH`), and nvJitLink's
/// other LTO options, which are ignored; the table is in docs/library.md).
///
/// On success `*handle` is the new handle; on failure it is NULL and no handle
/// exists (so there is no log to read: the result code says what was wrong).
///
/// # Safety
/// `handle` must be NULL or valid for a write; `options` must be NULL (only when
/// `numOptions` is 0) or point to `numOptions` pointers, each NULL or a
/// NUL-terminated string.
#[allow(non_snake_case)]
#[no_mangle]
pub unsafe extern "C" fn culinkCreate(
    handle: *mut culinkHandle,
    numOptions: u32,
    options: *mut *const c_char,
) -> culinkResult {
    entry(|| {
        if handle.is_null() {
            return CULINK_ERROR_NULL_INPUT;
        }
        // SAFETY: `handle` is non-null and, by the contract, valid for a write.
        unsafe { handle.write(std::ptr::null_mut()) };
        if numOptions > 0 && options.is_null() {
            return CULINK_ERROR_NULL_INPUT;
        }
        let mut args = Vec::with_capacity(numOptions as usize);
        for i in 0..numOptions as usize {
            // SAFETY: `options` points to `numOptions` pointers (checked non-null above).
            let p = unsafe { *options.add(i) };
            if p.is_null() {
                return CULINK_ERROR_NULL_INPUT;
            }
            // SAFETY: each non-null option is a NUL-terminated string by the contract.
            match unsafe { CStr::from_ptr(p) }.to_str() {
                Ok(s) => args.push(s.to_string()),
                Err(_) => return CULINK_ERROR_UNRECOGNIZED_OPTION,
            }
        }
        let opts = match options::parse_options(&args) {
            Ok(o) => o,
            Err(e) => {
                return match e.kind {
                    options::OptionErrorKind::Unrecognized => CULINK_ERROR_UNRECOGNIZED_OPTION,
                    options::OptionErrorKind::MissingArch => CULINK_ERROR_MISSING_ARCH,
                    options::OptionErrorKind::UnrecognizedArch => CULINK_ERROR_UNRECOGNIZED_ARCH,
                    options::OptionErrorKind::UnsupportedArch => CULINK_ERROR_UNSUPPORTED_ARCH,
                }
            }
        };
        let link = Arc::new(Link {
            state: Mutex::new(State {
                options: opts,
                inputs: Vec::new(),
                phase: Phase::Open,
                error_log: String::new(),
                info_log: String::new(),
            }),
        });
        let token = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
        handles().insert(token, link);
        // SAFETY: as above; the token is an opaque non-zero value, never dereferenced.
        unsafe { handle.write(token as culinkHandle) };
        CULINK_SUCCESS
    })
}

/// Destroys `*handle` and sets it to NULL. Calls on the handle still running on
/// other threads finish normally; later calls get `CULINK_ERROR_INVALID_INPUT`.
///
/// # Safety
/// `handle` must be NULL or valid for reads and writes.
#[no_mangle]
pub unsafe extern "C" fn culinkDestroy(handle: *mut culinkHandle) -> culinkResult {
    entry(|| {
        if handle.is_null() {
            return CULINK_ERROR_NULL_INPUT;
        }
        // SAFETY: `handle` is non-null and valid for reads by the contract.
        let h = unsafe { handle.read() };
        if h.is_null() {
            return CULINK_ERROR_NULL_INPUT;
        }
        let removed = handles().remove(&(h as usize));
        if removed.is_none() {
            return CULINK_ERROR_INVALID_INPUT;
        }
        // SAFETY: as above, valid for writes.
        unsafe { handle.write(std::ptr::null_mut()) };
        CULINK_SUCCESS
    })
}

/// Adds an input from memory (copied: the caller may free `data` on return).
/// `name` (may be NULL: `<data N>`) names the input in diagnostics.
///
/// # Safety
/// `data` must be NULL or valid for `size` bytes of reads; `name` must be NULL
/// or a NUL-terminated string.
#[allow(non_snake_case)]
#[no_mangle]
pub unsafe extern "C" fn culinkAddData(
    handle: culinkHandle,
    inputType: culinkInputType,
    data: *const c_void,
    size: usize,
    name: *const c_char,
) -> culinkResult {
    with_state(handle, |st| {
        let name = if name.is_null() {
            format!("<data {}>", st.inputs.len() + 1)
        } else {
            // SAFETY: a non-null `name` is a NUL-terminated string by the contract.
            unsafe { CStr::from_ptr(name) }
                .to_string_lossy()
                .into_owned()
        };
        if let Err(code) = st.require_open(&format!("culinkAddData '{name}'")) {
            return code;
        }
        if data.is_null() {
            return st.fail(
                CULINK_ERROR_NULL_INPUT,
                format!("culinkAddData '{name}': data is NULL"),
            );
        }
        // SAFETY: `data` is non-null and valid for `size` bytes by the contract.
        let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size) };
        st.add(inputType, Arc::from(bytes), name)
    })
}

/// Adds an input read from the file `fileName` (read now; the path names the
/// input in diagnostics).
///
/// # Safety
/// `fileName` must be NULL or a NUL-terminated string.
#[allow(non_snake_case)]
#[no_mangle]
pub unsafe extern "C" fn culinkAddFile(
    handle: culinkHandle,
    inputType: culinkInputType,
    fileName: *const c_char,
) -> culinkResult {
    with_state(handle, |st| {
        if fileName.is_null() {
            return st.fail(CULINK_ERROR_NULL_INPUT, "culinkAddFile: fileName is NULL");
        }
        // SAFETY: a non-null `fileName` is a NUL-terminated string by the contract.
        let raw = unsafe { CStr::from_ptr(fileName) };
        let path = c_path(raw);
        let name = path.display().to_string();
        if let Err(code) = st.require_open(&format!("culinkAddFile '{name}'")) {
            return code;
        }
        match std::fs::read(&path) {
            Ok(bytes) => st.add(inputType, Arc::from(bytes), name),
            Err(e) => st.fail(
                CULINK_ERROR_INVALID_INPUT,
                format!("{name}: cannot read input file: {e}"),
            ),
        }
    })
}

/// A path from a C string (any bytes on Unix).
fn c_path(raw: &CStr) -> std::path::PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        std::ffi::OsStr::from_bytes(raw.to_bytes()).into()
    }
    #[cfg(not(unix))]
    {
        raw.to_string_lossy().into_owned().into()
    }
}

/// Links the inputs added so far. Errors go to the error log; warnings and (with
/// `-v`) statistics to the info log. Called once per handle.
#[no_mangle]
pub extern "C" fn culinkComplete(handle: culinkHandle) -> culinkResult {
    with_state(handle, State::complete)
}

/// Writes the size in bytes of the linked cubin to `*size`.
///
/// # Safety
/// `size` must be NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn culinkGetLinkedCubinSize(
    handle: culinkHandle,
    size: *mut usize,
) -> culinkResult {
    with_state(handle, |st| {
        if size.is_null() {
            return CULINK_ERROR_NULL_INPUT;
        }
        match st.cubin("culinkGetLinkedCubinSize") {
            Ok(c) => {
                // SAFETY: `size` is non-null and valid for a write by the contract.
                unsafe { size.write(c.len()) };
                CULINK_SUCCESS
            }
            Err(code) => code,
        }
    })
}

/// Copies the linked cubin to `cubin`, which must hold
/// `culinkGetLinkedCubinSize` bytes.
///
/// # Safety
/// `cubin` must be NULL or valid for writes of the cubin's size.
#[no_mangle]
pub unsafe extern "C" fn culinkGetLinkedCubin(
    handle: culinkHandle,
    cubin: *mut c_void,
) -> culinkResult {
    with_state(handle, |st| {
        if cubin.is_null() {
            return CULINK_ERROR_NULL_INPUT;
        }
        match st.cubin("culinkGetLinkedCubin") {
            Ok(c) => {
                // SAFETY: `cubin` is non-null and holds `c.len()` bytes by the
                // contract; our buffer cannot overlap caller memory.
                unsafe { std::ptr::copy_nonoverlapping(c.as_ptr(), cubin.cast::<u8>(), c.len()) };
                CULINK_SUCCESS
            }
            Err(code) => code,
        }
    })
}

/// The size of a log as a C string (including the terminating NUL).
fn log_size(log: &str, size: *mut usize) -> culinkResult {
    if size.is_null() {
        return CULINK_ERROR_NULL_INPUT;
    }
    // SAFETY: checked non-null; the callers' contracts make it valid for a write.
    unsafe { size.write(log.len() + 1) };
    CULINK_SUCCESS
}

/// Copies a log and its terminating NUL to `buf`.
fn copy_log(log: &str, buf: *mut c_char) -> culinkResult {
    if buf.is_null() {
        return CULINK_ERROR_NULL_INPUT;
    }
    // SAFETY: checked non-null; the callers' contracts make `buf` hold
    // `log.len() + 1` bytes, and it cannot overlap our string.
    unsafe {
        std::ptr::copy_nonoverlapping(log.as_ptr(), buf.cast::<u8>(), log.len());
        buf.add(log.len()).write(0);
    }
    CULINK_SUCCESS
}

/// Writes the size of the error log, including its terminating NUL, to `*size`.
/// The error log holds one `error: ...` line per error (each naming its input),
/// from every call on the handle so far.
///
/// # Safety
/// `size` must be NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn culinkGetErrorLogSize(
    handle: culinkHandle,
    size: *mut usize,
) -> culinkResult {
    with_state(handle, |st| log_size(&st.error_log, size))
}

/// Copies the error log (NUL-terminated) to `log`, which must hold
/// `culinkGetErrorLogSize` bytes.
///
/// # Safety
/// `log` must be NULL or valid for writes of the error log's size.
#[no_mangle]
pub unsafe extern "C" fn culinkGetErrorLog(handle: culinkHandle, log: *mut c_char) -> culinkResult {
    with_state(handle, |st| copy_log(&st.error_log, log))
}

/// Writes the size of the info log (warnings, and with `-v` phase timings and
/// statistics), including its terminating NUL, to `*size`.
///
/// # Safety
/// `size` must be NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn culinkGetInfoLogSize(
    handle: culinkHandle,
    size: *mut usize,
) -> culinkResult {
    with_state(handle, |st| log_size(&st.info_log, size))
}

/// Copies the info log (NUL-terminated) to `log`, which must hold
/// `culinkGetInfoLogSize` bytes.
///
/// # Safety
/// `log` must be NULL or valid for writes of the info log's size.
#[no_mangle]
pub unsafe extern "C" fn culinkGetInfoLog(handle: culinkHandle, log: *mut c_char) -> culinkResult {
    with_state(handle, |st| copy_log(&st.info_log, log))
}

/// Writes culink's version (e.g. 0.1) to `*major` and `*minor`.
///
/// # Safety
/// `major` and `minor` must each be NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn culinkVersion(major: *mut c_uint, minor: *mut c_uint) -> culinkResult {
    entry(|| {
        if major.is_null() || minor.is_null() {
            return CULINK_ERROR_NULL_INPUT;
        }
        let parse = |s: &str| s.parse::<c_uint>().unwrap_or(0);
        // SAFETY: both non-null and valid for a write by the contract.
        unsafe {
            major.write(parse(env!("CARGO_PKG_VERSION_MAJOR")));
            minor.write(parse(env!("CARGO_PKG_VERSION_MINOR")));
        }
        CULINK_SUCCESS
    })
}

/// The name of a result code (`"CULINK_ERROR_MISSING_ARCH"`), a static
/// NUL-terminated string; `"CULINK_ERROR_UNKNOWN"` for values that are none.
#[no_mangle]
pub extern "C" fn culinkGetErrorString(result: c_int) -> *const c_char {
    let name: &'static CStr = match result {
        0 => c"CULINK_SUCCESS",
        1 => c"CULINK_ERROR_UNRECOGNIZED_OPTION",
        2 => c"CULINK_ERROR_MISSING_ARCH",
        3 => c"CULINK_ERROR_INVALID_INPUT",
        4 => c"CULINK_ERROR_PTX_COMPILE",
        5 => c"CULINK_ERROR_NVVM_COMPILE",
        6 => c"CULINK_ERROR_INTERNAL",
        7 => c"CULINK_ERROR_THREADPOOL",
        8 => c"CULINK_ERROR_UNRECOGNIZED_INPUT",
        9 => c"CULINK_ERROR_FINALIZE",
        10 => c"CULINK_ERROR_NULL_INPUT",
        11 => c"CULINK_ERROR_INCOMPATIBLE_OPTIONS",
        12 => c"CULINK_ERROR_INCORRECT_INPUT_TYPE",
        13 => c"CULINK_ERROR_ARCH_MISMATCH",
        14 => c"CULINK_ERROR_OUTDATED_LIBRARY",
        15 => c"CULINK_ERROR_MISSING_FATBIN",
        16 => c"CULINK_ERROR_UNRECOGNIZED_ARCH",
        17 => c"CULINK_ERROR_UNSUPPORTED_ARCH",
        18 => c"CULINK_ERROR_LTO_NOT_ENABLED",
        100 => c"CULINK_ERROR_INVALID_STATE",
        _ => c"CULINK_ERROR_UNKNOWN",
    };
    name.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new_handle() -> culinkHandle {
        handle_with(&[c"-arch=sm_90"])
    }

    /// A handle created with `options`.
    fn handle_with(options: &[&CStr]) -> culinkHandle {
        let mut opts: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
        let mut h: culinkHandle = std::ptr::null_mut();
        // SAFETY: `h` and `opts` are live locals; the options are NUL-terminated.
        assert_eq!(
            unsafe { culinkCreate(&mut h, opts.len() as u32, opts.as_mut_ptr()) },
            CULINK_SUCCESS
        );
        h
    }

    /// `culinkAddData` of `bytes` as an input of type `ty` called `name`.
    fn add_data(h: culinkHandle, ty: culinkInputType, bytes: &[u8], name: &CStr) -> culinkResult {
        // SAFETY: `bytes` and `name` are live for the call.
        unsafe { culinkAddData(h, ty, bytes.as_ptr().cast(), bytes.len(), name.as_ptr()) }
    }

    fn error_log(h: culinkHandle) -> String {
        let mut n = 0;
        // SAFETY: `n` is a live local.
        assert_eq!(unsafe { culinkGetErrorLogSize(h, &mut n) }, CULINK_SUCCESS);
        let mut buf = vec![0 as c_char; n];
        // SAFETY: `buf` holds the log's size.
        assert_eq!(
            unsafe { culinkGetErrorLog(h, buf.as_mut_ptr()) },
            CULINK_SUCCESS
        );
        // SAFETY: the log was written NUL-terminated into `buf`.
        unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn panics_become_internal_errors() {
        assert_eq!(entry(|| panic!("outside a handle")), CULINK_ERROR_INTERNAL);
        let mut h = new_handle();
        assert_eq!(with_state(h, |_| panic!("boom")), CULINK_ERROR_INTERNAL);
        let log = error_log(h);
        assert!(
            log.contains("internal error") && log.contains("boom"),
            "{log}"
        );
        // The handle (and its mutex) is still usable.
        assert_eq!(culinkComplete(h), CULINK_ERROR_INVALID_INPUT);
        // SAFETY: `h` is a live local.
        assert_eq!(unsafe { culinkDestroy(&mut h) }, CULINK_SUCCESS);
    }

    #[test]
    fn result_names_match_the_enum() {
        for r in [
            CULINK_SUCCESS,
            CULINK_ERROR_NULL_INPUT,
            CULINK_ERROR_INVALID_STATE,
        ] {
            // SAFETY: culinkGetErrorString returns a static NUL-terminated string.
            let name = unsafe { CStr::from_ptr(culinkGetErrorString(r as c_int)) };
            assert_eq!(name.to_str().unwrap(), format!("{r:?}"));
        }
    }

    #[test]
    fn input_type_checks() {
        let name = "x";
        let check_lto = |ty, data: &[u8], lto| {
            check_input(ty, sniff::sniff(data), data, name, lto)
                .err()
                .map(|e| e.0)
        };
        let check = |ty, data: &[u8]| check_lto(ty, data, false);
        // With -lto, LTO IR is taken (as LTOIR or ANY), and only LTO IR as LTOIR.
        let ltoir = b"\xed\x43\x4e\x7f\x01\x00";
        assert_eq!(check_lto(CULINK_INPUT_LTOIR, ltoir, true), None);
        assert_eq!(check_lto(CULINK_INPUT_ANY, ltoir, true), None);
        assert_eq!(
            check_lto(CULINK_INPUT_LTOIR, b"!<arch>\n", true),
            Some(CULINK_ERROR_INCORRECT_INPUT_TYPE)
        );
        assert_eq!(
            check(CULINK_INPUT_ANY, ltoir),
            Some(CULINK_ERROR_NVVM_COMPILE)
        );
        let fatbin = [0x50, 0xed, 0x55, 0xba, 1, 0, 0x10, 0];
        assert_eq!(check(CULINK_INPUT_FATBIN, &fatbin), None);
        assert_eq!(check(CULINK_INPUT_ANY, &fatbin), None);
        assert_eq!(
            check(CULINK_INPUT_CUBIN, &fatbin),
            Some(CULINK_ERROR_INCORRECT_INPUT_TYPE)
        );
        assert_eq!(check(CULINK_INPUT_LIBRARY, b"!<arch>\n"), None);
        assert_eq!(
            check(CULINK_INPUT_FATBIN, b"!<arch>\n"),
            Some(CULINK_ERROR_INCORRECT_INPUT_TYPE)
        );
        assert_eq!(
            check(CULINK_INPUT_LIBRARY, b"junk"),
            Some(CULINK_ERROR_INVALID_INPUT)
        );
        assert_eq!(
            check(CULINK_INPUT_LTOIR, b"anything"),
            Some(CULINK_ERROR_NVVM_COMPILE)
        );
        assert_eq!(
            check(CULINK_INPUT_ANY, b"BC\xc0\xde"),
            Some(CULINK_ERROR_NVVM_COMPILE)
        );
        assert_eq!(
            check(CULINK_INPUT_NONE, b"x"),
            Some(CULINK_ERROR_UNRECOGNIZED_INPUT)
        );
        assert_eq!(
            check(CULINK_INPUT_INDEX, b"x"),
            Some(CULINK_ERROR_UNRECOGNIZED_INPUT)
        );
        assert_eq!(check(-1, b"x"), Some(CULINK_ERROR_UNRECOGNIZED_INPUT));
        assert_eq!(
            check(CULINK_INPUT_ANY, b""),
            Some(CULINK_ERROR_INVALID_INPUT)
        );
    }

    #[test]
    fn a_failed_link_time_optimization_is_an_nvvm_compile_error() {
        let mut h = handle_with(&[
            c"-arch=sm_90",
            c"-lto",
            c"-nvjitlink=/nonexistent/libnvJitLink.so",
        ]);
        // LTO IR by its magic (the optimizer is never reached: no library).
        let ltoir = b"\xed\x43\x4e\x7f\x01\x00\x00\x00";
        let r = add_data(h, CULINK_INPUT_LTOIR, ltoir, c"k.ltoir");
        assert_eq!(r, CULINK_SUCCESS, "{}", error_log(h));
        assert_eq!(culinkComplete(h), CULINK_ERROR_NVVM_COMPILE);
        let log = error_log(h);
        assert!(log.contains("/nonexistent/libnvJitLink.so"), "{log}");
        // SAFETY: `h` is a live local.
        assert_eq!(unsafe { culinkDestroy(&mut h) }, CULINK_SUCCESS);
    }

    #[test]
    fn inputs_the_core_may_refuse_are_passed_through() {
        let mut h = new_handle();
        let fatbin = [
            0x50u8, 0xed, 0x55, 0xba, 1, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        let r = add_data(h, CULINK_INPUT_FATBIN, &fatbin, c"k.fatbin");
        assert_eq!(r, CULINK_SUCCESS);
        // The core decides by content; whatever it makes of this (empty) fatbin,
        // a failure is reported against the input's name.
        let r = culinkComplete(h);
        if r != CULINK_SUCCESS {
            let log = error_log(h);
            assert!(log.contains("k.fatbin"), "{log}");
        }
        // SAFETY: `h` is a live local.
        assert_eq!(unsafe { culinkDestroy(&mut h) }, CULINK_SUCCESS);
    }
}

/// `docs/library.md`, so `cargo test` compiles its Rust example.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/library.md")]
pub struct LibraryGuide;
