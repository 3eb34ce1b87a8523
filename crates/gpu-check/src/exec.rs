//! One run: load one cubin, run a case's launches, dump device memory
//! (`gpu-check exec CUBIN LAUNCH_TXT DUMP`, started by `gpu-check check` in a
//! child process so that device `printf` — which the driver writes to the
//! process's stdout at `cuCtxSynchronize` — is captured per run, and a faulting
//! kernel cannot poison the other cubin's context).

use crate::args::Marshalled;
use crate::driver::{DevPtr, Driver};
use crate::dump::{Dump, Region};
use crate::launch::LaunchFile;
use std::collections::HashMap;
use std::path::Path;

/// Exit status when no CUDA driver (or no usable device) is present.
pub const EXIT_NO_DRIVER: i32 = 3;

/// Why a run could not produce a dump.
#[derive(Debug)]
pub enum ExecError {
    /// The driver library is missing or `cuInit` failed.
    NoDriver(String),
    /// Anything else (bad files, module load failure, ...).
    Failed(String),
}

/// Loads the driver and initializes it: the device description, or
/// [`ExecError::NoDriver`].
pub fn open_driver() -> Result<(Driver, crate::driver::DeviceInfo), ExecError> {
    let d = Driver::load().map_err(ExecError::NoDriver)?;
    let info = d.init().map_err(|e| ExecError::NoDriver(e.to_string()))?;
    Ok((d, info))
}

/// Runs `launch` on `cubin` and returns the dump.
pub fn run(cubin: &Path, launch: &Path) -> Result<Dump, ExecError> {
    let fail = ExecError::Failed;
    let image =
        std::fs::read(cubin).map_err(|e| fail(format!("cannot read {}: {e}", cubin.display())))?;
    let text = std::fs::read_to_string(launch)
        .map_err(|e| fail(format!("cannot read {}: {e}", launch.display())))?;
    let lf = LaunchFile::parse(&text, &launch.display().to_string()).map_err(fail)?;
    let globals = crate::cubin::globals(&image).map_err(fail)?;
    let (d, _) = open_driver()?;
    d.context().map_err(|e| fail(e.to_string()))?;
    for &(limit, v) in &lf.limits {
        d.set_limit(limit, v)
            .map_err(|e| fail(format!("limit {limit:?} {v}: {e}")))?;
    }
    let module = d
        .load_module(&image)
        .map_err(|e| fail(format!("{}: {e}", cubin.display())))?;

    let mut dump = Dump::default();
    let read_globals = |dump: &mut Dump, prefix: &str| {
        for g in globals.iter().filter(|g| !lf.skip_globals.contains(g)) {
            let (addr, data) = match module.global(g) {
                Ok((p, n)) => (p, d.read(p, n).map_err(|e| e.to_string())),
                Err(e) => (0, Err(e.name.clone())),
            };
            dump.regions.push(Region {
                name: format!("{prefix}global {g}"),
                addr,
                data,
            });
        }
    };
    read_globals(&mut dump, "before ");

    let mut bufs: Vec<(String, DevPtr, usize)> = Vec::new();
    let mut by_name = HashMap::new();
    for b in &lf.buffers {
        let p = d
            .alloc(&b.init)
            .map_err(|e| fail(format!("buffer {}: {e}", b.name)))?;
        bufs.push((b.name.clone(), p, b.init.len()));
        by_name.insert(b.name.clone(), p);
    }
    // After every launch: every buffer and global, so that a difference is
    // attributed to the first launch after which the two runs disagree.
    let snapshot = |dump: &mut Dump, prefix: &str| {
        for (name, p, n) in &bufs {
            dump.regions.push(Region {
                name: format!("{prefix}buffer {name}"),
                addr: *p,
                data: d.read(*p, *n).map_err(|e| e.to_string()),
            });
        }
        read_globals(dump, prefix);
    };
    for (i, l) in lf.launches.iter().enumerate() {
        let what = format!("launch {} (line {}, `{}`)", i + 1, l.line, l.kernel);
        let r = module
            .function(&l.kernel)
            .map_err(|e| e.to_string())
            .and_then(|f| {
                let mut m = Marshalled::new(&l.args, &by_name, |g| {
                    module
                        .global(g)
                        .map(|x| x.0)
                        .map_err(|e| format!("global `{g}`: {e}"))
                })?;
                module
                    .launch(f, l.grid, l.block, l.shared, m.params())
                    .map_err(|e| e.to_string())
            });
        match r {
            Ok(()) => {
                dump.launches_ok += 1;
                snapshot(&mut dump, &format!("launch {} `{}`: ", i + 1, l.kernel));
            }
            Err(e) => {
                // The context is usually unusable now: no more reads.
                dump.error = Some(format!("{what}: {e}"));
                break;
            }
        }
    }
    for (_, p, _) in &bufs {
        let _ = d.free(*p);
    }
    drop(module);
    Ok(dump)
}
