//! `gpu-check`: see `docs/gpu-validation.md`.
//!
//! * `gpu-check check BUNDLE [--out FILE] [--deadline SECS] [--jobs N] [CASE...]`
//!   — run and compare every case (N at a time, default 4);
//! * `gpu-check probe` — print the device and driver, or exit 3 without one;
//! * `gpu-check exec CUBIN LAUNCH_TXT DUMP` — one run (used by `check`).
//!
//! Exit status: 0 all pass, 1 a case failed, 2 usage or bundle error,
//! 3 no CUDA driver / no usable device (nothing was run: never a pass).

use gpu_check::exec::{self, ExecError, EXIT_NO_DRIVER};
use std::path::Path;
use std::process::ExitCode;

const USAGE: &str = "usage:
  gpu-check check BUNDLE [--out FILE] [--deadline SECS] [--jobs N] [--no-self-check] [CASE...]
                                                  run every case of a bundle, compare culink's and nvlink's cubins
  gpu-check probe                                 print the CUDA device and driver (exit 3 without a driver)
  gpu-check exec CUBIN LAUNCH_TXT DUMP            one run (internal; used by `check`)
exit status: 0 pass, 1 failures, 2 usage/bundle error, 3 no CUDA driver (nothing run)
";

fn code(c: i32) -> ExitCode {
    ExitCode::from(u8::try_from(c).unwrap_or(1))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("check") => code(gpu_check::check::main(&args[1..])),
        Some("probe") => match exec::open_driver() {
            Ok((_, i)) => {
                println!(
                    "{} (sm_{}{}, {} device(s)), driver {}",
                    i.name, i.cc.0, i.cc.1, i.count, i.driver_version
                );
                ExitCode::SUCCESS
            }
            Err(ExecError::NoDriver(e)) | Err(ExecError::Failed(e)) => {
                eprintln!("gpu-check: no CUDA driver: {e}");
                code(EXIT_NO_DRIVER)
            }
        },
        Some("exec") if args.len() == 4 => {
            match exec::run(Path::new(&args[1]), Path::new(&args[2])) {
                Ok(dump) => match std::fs::write(&args[3], dump.encode()) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => {
                        eprintln!("gpu-check: cannot write {}: {e}", args[3]);
                        ExitCode::FAILURE
                    }
                },
                Err(ExecError::NoDriver(e)) => {
                    eprintln!("gpu-check: no CUDA driver: {e}");
                    code(EXIT_NO_DRIVER)
                }
                Err(ExecError::Failed(e)) => {
                    eprintln!("gpu-check: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Some("-h" | "--help" | "help") => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprint!("{USAGE}");
            ExitCode::from(2)
        }
    }
}
