//! A minimal CUDA driver API, loaded at run time from `libcuda.so.1` with
//! `libloading` (nothing CUDA is needed to build; see `docs/dependencies.md`).
//!
//! Only the entry points gpu-check uses are declared, with the ABI of `cuda.h`
//! (the `_v2` names are the ones `cuda.h` maps the plain names to since CUDA 4).
//! The library path is `$CULINK_GPU_CHECK_LIBCUDA` when set (tests point it at a
//! missing file to exercise the no-driver path), else `libcuda.so.1`.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::fmt;

/// `CUresult`.
pub type CuResult = c_int;
/// `CUdeviceptr`.
pub type DevPtr = u64;
type Handle = *mut c_void;

/// `CUDA_ERROR_NOT_FOUND`: a missing kernel or global.
pub const CUDA_ERROR_NOT_FOUND: CuResult = 500;
const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: c_int = 75;
const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: c_int = 76;
const CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: c_int = 8;

/// A `cuCtxSetLimit` limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// `CU_LIMIT_STACK_SIZE`: bytes of stack per thread.
    Stack,
    /// `CU_LIMIT_PRINTF_FIFO_SIZE`: bytes of the device printf buffer.
    PrintfFifo,
    /// `CU_LIMIT_MALLOC_HEAP_SIZE`: bytes of the device `malloc` heap.
    MallocHeap,
    /// `CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT`: device-side launches in flight.
    PendingLaunches,
}

impl Limit {
    fn raw(self) -> c_int {
        match self {
            Limit::Stack => 0,
            Limit::PrintfFifo => 1,
            Limit::MallocHeap => 2,
            Limit::PendingLaunches => 4,
        }
    }
}

/// A failed driver call: the function and its `CUresult`, named when the driver
/// can name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CuError {
    /// The driver function that failed.
    pub call: &'static str,
    /// Its `CUresult`.
    pub code: CuResult,
    /// `cuGetErrorName` of the code (empty when unknown).
    pub name: String,
}

impl fmt::Display for CuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} failed: {} ({})", self.call, self.name, self.code)
    }
}

type FnInit = unsafe extern "C" fn(c_uint) -> CuResult;
type FnDriverGetVersion = unsafe extern "C" fn(*mut c_int) -> CuResult;
type FnDeviceGetCount = unsafe extern "C" fn(*mut c_int) -> CuResult;
type FnDeviceGet = unsafe extern "C" fn(*mut c_int, c_int) -> CuResult;
type FnDeviceGetName = unsafe extern "C" fn(*mut c_char, c_int, c_int) -> CuResult;
type FnDeviceGetAttribute = unsafe extern "C" fn(*mut c_int, c_int, c_int) -> CuResult;
type FnPrimaryCtxRetain = unsafe extern "C" fn(*mut Handle, c_int) -> CuResult;
type FnCtxSetCurrent = unsafe extern "C" fn(Handle) -> CuResult;
type FnCtxSynchronize = unsafe extern "C" fn() -> CuResult;
type FnCtxSetLimit = unsafe extern "C" fn(c_int, usize) -> CuResult;
type FnModuleLoadData = unsafe extern "C" fn(*mut Handle, *const c_void) -> CuResult;
type FnModuleUnload = unsafe extern "C" fn(Handle) -> CuResult;
type FnModuleGetFunction = unsafe extern "C" fn(*mut Handle, Handle, *const c_char) -> CuResult;
type FnModuleGetGlobal =
    unsafe extern "C" fn(*mut DevPtr, *mut usize, Handle, *const c_char) -> CuResult;
type FnMemAlloc = unsafe extern "C" fn(*mut DevPtr, usize) -> CuResult;
type FnMemFree = unsafe extern "C" fn(DevPtr) -> CuResult;
type FnMemcpyHtoD = unsafe extern "C" fn(DevPtr, *const c_void, usize) -> CuResult;
type FnMemcpyDtoH = unsafe extern "C" fn(*mut c_void, DevPtr, usize) -> CuResult;
type FnFuncSetAttribute = unsafe extern "C" fn(Handle, c_int, c_int) -> CuResult;
type FnLaunchKernel = unsafe extern "C" fn(
    Handle,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    Handle,
    *mut *mut c_void,
    *mut *mut c_void,
) -> CuResult;
type FnGetErrorName = unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult;

/// The loaded driver library and its entry points.
pub struct Driver {
    init: FnInit,
    driver_get_version: FnDriverGetVersion,
    device_get_count: FnDeviceGetCount,
    device_get: FnDeviceGet,
    device_get_name: FnDeviceGetName,
    device_get_attribute: FnDeviceGetAttribute,
    primary_ctx_retain: FnPrimaryCtxRetain,
    ctx_set_current: FnCtxSetCurrent,
    ctx_synchronize: FnCtxSynchronize,
    ctx_set_limit: FnCtxSetLimit,
    module_load_data: FnModuleLoadData,
    module_unload: FnModuleUnload,
    module_get_function: FnModuleGetFunction,
    module_get_global: FnModuleGetGlobal,
    mem_alloc: FnMemAlloc,
    mem_free: FnMemFree,
    memcpy_htod: FnMemcpyHtoD,
    memcpy_dtoh: FnMemcpyDtoH,
    func_set_attribute: FnFuncSetAttribute,
    launch_kernel: FnLaunchKernel,
    get_error_name: FnGetErrorName,
    // Keeps the function pointers above valid; never unloaded before them.
    _lib: libloading::Library,
}

/// What the device and driver are, for the results table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// `cuDeviceGetName` of device 0.
    pub name: String,
    /// Compute capability (major, minor).
    pub cc: (i32, i32),
    /// `cuDriverGetVersion`, e.g. 13000 for CUDA 13.0.
    pub driver_version: i32,
    /// Devices visible.
    pub count: i32,
}

/// The library `load` opens.
pub fn library_path() -> String {
    match std::env::var("CULINK_GPU_CHECK_LIBCUDA") {
        Ok(p) if !p.is_empty() => p,
        _ => "libcuda.so.1".to_string(),
    }
}

macro_rules! sym {
    ($lib:expr, $name:literal) => {{
        // SAFETY: the type is the `cuda.h` prototype of this symbol.
        let s = unsafe { $lib.get(concat!($name, "\0").as_bytes()) }
            .map_err(|e| format!("{} has no `{}`: {e}", library_path(), $name))?;
        *s
    }};
}

impl Driver {
    /// Opens the driver library and resolves every entry point (no `cuInit`).
    pub fn load() -> Result<Driver, String> {
        let path = library_path();
        // SAFETY: loading libcuda runs its initializers, which is what every CUDA
        // program does; nothing else is loaded under this name.
        let lib = unsafe { libloading::Library::new(&path) }
            .map_err(|e| format!("cannot load {path}: {e}"))?;
        Ok(Driver {
            init: sym!(lib, "cuInit"),
            driver_get_version: sym!(lib, "cuDriverGetVersion"),
            device_get_count: sym!(lib, "cuDeviceGetCount"),
            device_get: sym!(lib, "cuDeviceGet"),
            device_get_name: sym!(lib, "cuDeviceGetName"),
            device_get_attribute: sym!(lib, "cuDeviceGetAttribute"),
            primary_ctx_retain: sym!(lib, "cuDevicePrimaryCtxRetain"),
            ctx_set_current: sym!(lib, "cuCtxSetCurrent"),
            ctx_synchronize: sym!(lib, "cuCtxSynchronize"),
            ctx_set_limit: sym!(lib, "cuCtxSetLimit"),
            module_load_data: sym!(lib, "cuModuleLoadData"),
            module_unload: sym!(lib, "cuModuleUnload"),
            module_get_function: sym!(lib, "cuModuleGetFunction"),
            module_get_global: sym!(lib, "cuModuleGetGlobal_v2"),
            mem_alloc: sym!(lib, "cuMemAlloc_v2"),
            mem_free: sym!(lib, "cuMemFree_v2"),
            memcpy_htod: sym!(lib, "cuMemcpyHtoD_v2"),
            memcpy_dtoh: sym!(lib, "cuMemcpyDtoH_v2"),
            func_set_attribute: sym!(lib, "cuFuncSetAttribute"),
            launch_kernel: sym!(lib, "cuLaunchKernel"),
            get_error_name: sym!(lib, "cuGetErrorName"),
            _lib: lib,
        })
    }

    fn check(&self, call: &'static str, code: CuResult) -> Result<(), CuError> {
        if code == 0 {
            return Ok(());
        }
        let mut p: *const c_char = std::ptr::null();
        // SAFETY: cuGetErrorName writes a pointer to a static string or fails.
        let name = if unsafe { (self.get_error_name)(code, &mut p) } == 0 && !p.is_null() {
            // SAFETY: non-null, NUL-terminated, static in the driver.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        } else {
            String::new()
        };
        Err(CuError { call, code, name })
    }

    /// `cuInit(0)` and a description of device 0.
    pub fn init(&self) -> Result<DeviceInfo, CuError> {
        // SAFETY: plain driver calls with valid out-pointers.
        unsafe {
            self.check("cuInit", (self.init)(0))?;
            let mut v = 0;
            self.check("cuDriverGetVersion", (self.driver_get_version)(&mut v))?;
            let mut count = 0;
            self.check("cuDeviceGetCount", (self.device_get_count)(&mut count))?;
            let mut dev = 0;
            self.check("cuDeviceGet", (self.device_get)(&mut dev, 0))?;
            let mut buf = [0 as c_char; 256];
            self.check(
                "cuDeviceGetName",
                (self.device_get_name)(buf.as_mut_ptr(), buf.len() as c_int, dev),
            )?;
            let name = CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned();
            let (mut major, mut minor) = (0, 0);
            self.check(
                "cuDeviceGetAttribute",
                (self.device_get_attribute)(
                    &mut major,
                    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                    dev,
                ),
            )?;
            self.check(
                "cuDeviceGetAttribute",
                (self.device_get_attribute)(
                    &mut minor,
                    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                    dev,
                ),
            )?;
            Ok(DeviceInfo {
                name,
                cc: (major, minor),
                driver_version: v,
                count,
            })
        }
    }

    /// Retains device 0's primary context and makes it current.
    pub fn context(&self) -> Result<(), CuError> {
        // SAFETY: valid out-pointers; the context lives until the process exits.
        unsafe {
            let mut dev = 0;
            self.check("cuDeviceGet", (self.device_get)(&mut dev, 0))?;
            let mut ctx: Handle = std::ptr::null_mut();
            self.check(
                "cuDevicePrimaryCtxRetain",
                (self.primary_ctx_retain)(&mut ctx, dev),
            )?;
            self.check("cuCtxSetCurrent", (self.ctx_set_current)(ctx))
        }
    }

    /// `cuCtxSetLimit`.
    pub fn set_limit(&self, limit: Limit, value: usize) -> Result<(), CuError> {
        // SAFETY: plain value arguments.
        self.check("cuCtxSetLimit", unsafe {
            (self.ctx_set_limit)(limit.raw(), value)
        })
    }

    /// `cuCtxSynchronize` (also flushes device `printf` to stdout).
    pub fn synchronize(&self) -> Result<(), CuError> {
        // SAFETY: no arguments.
        self.check("cuCtxSynchronize", unsafe { (self.ctx_synchronize)() })
    }

    /// `cuModuleLoadData` on an in-memory cubin.
    pub fn load_module(&self, image: &[u8]) -> Result<Module<'_>, CuError> {
        // The driver reads the ELF with aligned loads: copy into 8-byte words.
        let mut words = vec![0u64; image.len().div_ceil(8)];
        // SAFETY: `words` has at least `image.len()` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(image.as_ptr(), words.as_mut_ptr().cast(), image.len());
        }
        let mut m: Handle = std::ptr::null_mut();
        // SAFETY: a valid image pointer for the duration of the call.
        self.check("cuModuleLoadData", unsafe {
            (self.module_load_data)(&mut m, words.as_ptr().cast())
        })?;
        Ok(Module {
            driver: self,
            handle: m,
        })
    }

    /// `cuMemAlloc` of `size` bytes (at least 1), filled from `init`.
    pub fn alloc(&self, init: &[u8]) -> Result<DevPtr, CuError> {
        let mut p = 0;
        // SAFETY: valid out-pointer; `init` is readable for its length.
        unsafe {
            self.check("cuMemAlloc", (self.mem_alloc)(&mut p, init.len().max(1)))?;
            if !init.is_empty() {
                self.check(
                    "cuMemcpyHtoD",
                    (self.memcpy_htod)(p, init.as_ptr().cast(), init.len()),
                )?;
            }
        }
        Ok(p)
    }

    /// `cuMemFree`.
    pub fn free(&self, p: DevPtr) -> Result<(), CuError> {
        // SAFETY: `p` came from `alloc`.
        self.check("cuMemFree", unsafe { (self.mem_free)(p) })
    }

    /// Copies `len` bytes at `p` to the host.
    pub fn read(&self, p: DevPtr, len: usize) -> Result<Vec<u8>, CuError> {
        let mut v = vec![0u8; len];
        if len > 0 {
            // SAFETY: `v` is writable for `len` bytes.
            self.check("cuMemcpyDtoH", unsafe {
                (self.memcpy_dtoh)(v.as_mut_ptr().cast(), p, len)
            })?;
        }
        Ok(v)
    }
}

/// A loaded module; unloaded on drop.
pub struct Module<'d> {
    driver: &'d Driver,
    handle: Handle,
}

/// A kernel of a [`Module`].
#[derive(Clone, Copy)]
pub struct Function {
    handle: Handle,
}

impl Module<'_> {
    /// `cuModuleGetFunction`.
    pub fn function(&self, name: &str) -> Result<Function, CuError> {
        let c = CString::new(name).map_err(|_| CuError {
            call: "cuModuleGetFunction",
            code: CUDA_ERROR_NOT_FOUND,
            name: "name contains NUL".into(),
        })?;
        let mut f: Handle = std::ptr::null_mut();
        // SAFETY: valid module, name and out-pointer.
        self.driver.check("cuModuleGetFunction", unsafe {
            (self.driver.module_get_function)(&mut f, self.handle, c.as_ptr())
        })?;
        Ok(Function { handle: f })
    }

    /// `cuModuleGetGlobal`: device address and size of a `__device__` /
    /// `__constant__` variable.
    pub fn global(&self, name: &str) -> Result<(DevPtr, usize), CuError> {
        let c = CString::new(name).map_err(|_| CuError {
            call: "cuModuleGetGlobal",
            code: CUDA_ERROR_NOT_FOUND,
            name: "name contains NUL".into(),
        })?;
        let (mut p, mut n) = (0, 0);
        // SAFETY: valid module, name and out-pointers.
        self.driver.check("cuModuleGetGlobal", unsafe {
            (self.driver.module_get_global)(&mut p, &mut n, self.handle, c.as_ptr())
        })?;
        Ok((p, n))
    }

    /// Launches `f` and waits for it. `params` holds one pointer per kernel
    /// parameter, each to that parameter's bytes.
    pub fn launch(
        &self,
        f: Function,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        params: &mut [*mut c_void],
    ) -> Result<(), CuError> {
        let d = self.driver;
        // SAFETY: `f` belongs to this module; every params entry points to live
        // bytes of the parameter's size (see `args::Marshalled`).
        unsafe {
            if shared > 48 * 1024 {
                d.check(
                    "cuFuncSetAttribute",
                    (d.func_set_attribute)(
                        f.handle,
                        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        shared as c_int,
                    ),
                )?;
            }
            let p = if params.is_empty() {
                std::ptr::null_mut()
            } else {
                params.as_mut_ptr()
            };
            d.check(
                "cuLaunchKernel",
                (d.launch_kernel)(
                    f.handle,
                    grid[0],
                    grid[1],
                    grid[2],
                    block[0],
                    block[1],
                    block[2],
                    shared,
                    std::ptr::null_mut(),
                    p,
                    std::ptr::null_mut(),
                ),
            )?;
        }
        d.synchronize()
    }
}

impl Drop for Module<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle came from cuModuleLoadData and is unloaded once.
        unsafe {
            (self.driver.module_unload)(self.handle);
        }
    }
}
