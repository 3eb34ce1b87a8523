//! culink developer tasks, run as `cargo xtask <subcommand>`.
//!
//! Every subcommand lives in its own module and exposes
//! `run(args: &[String]) -> Result<(), String>`; adding one is one entry in
//! [`SUBCOMMANDS`] (and its module).

mod bench;
mod bench_gen;
mod capi_header;
mod difftest;
mod fixtures;
mod fuzz;
mod gpu_check;
mod nv_tools;
mod test;
mod util;

use std::process::ExitCode;

/// A subcommand: its name, a one-line summary, and its entry point.
struct Subcommand {
    name: &'static str,
    usage: &'static str,
    summary: &'static str,
    run: fn(&[String]) -> Result<(), String>,
}

/// All subcommands, in the order `cargo xtask` lists them.
const SUBCOMMANDS: &[Subcommand] = &[
    Subcommand {
        name: "nv-tools",
        usage: "nv-tools",
        summary: "download (once) and unpack the pinned NVIDIA tool wheels into target/nv-tools",
        run: nv_tools::run,
    },
    Subcommand {
        name: "fixtures",
        usage: "fixtures [--check] [CASE...]",
        summary: "regenerate tests/link fixtures with ptxas/nvcc/nvlink (--check: compare only)",
        run: fixtures::run,
    },
    Subcommand {
        name: "fuzz",
        usage: "fuzz [--secs N] [--target T] [--engine E]",
        summary:
            "run the fuzz targets (libFuzzer via cargo-fuzz on nightly, else the stable driver)",
        run: fuzz::run,
    },
    Subcommand {
        name: "test",
        usage: "test [CARGO TEST ARGS...]",
        summary: "get the NVIDIA tools, then run `cargo test --workspace` with CULINK_NV_TOOLS set",
        run: test::run,
    },
    Subcommand {
        name: "bench",
        usage: "bench [--quick] [--runs R] [--sizes N,..]",
        summary: "time nvlink vs culink on synthetic workloads; report in target/bench/report.md",
        run: bench::run,
    },
    Subcommand {
        name: "difftest",
        usage: "difftest [--seed S] [--count K] [--archs 75,80,..] [--keep DIR]",
        summary: "random multi-object PTX programs linked by nvlink and culink; mismatches in target/difftest",
        run: difftest::run,
    },
    Subcommand {
        name: "gpu-check",
        usage: "gpu-check [--bundle-only] [CASE...]",
        summary: "bundle culink+nvlink sm_90 cubins into target/gpu-bundle and run them on the GPU (exit 3: no driver)",
        run: gpu_check::run,
    },
    Subcommand {
        name: "capi-header",
        usage: "capi-header [--check]",
        summary:
            "generate crates/linker-capi/include/culink.h with cbindgen (--check: compare only)",
        run: capi_header::run,
    },
];

fn usage() -> String {
    let mut s = String::from("usage: cargo xtask <subcommand> [args]\n\nsubcommands:\n");
    for c in SUBCOMMANDS {
        s.push_str(&format!("  {:<32} {}\n", c.usage, c.summary));
    }
    s.push_str(
        "\nenvironment:\n  CULINK_NV_TOOLS   directory holding ptxas, nvlink, fatbinary, nvcc, cuobjdump, nvdisasm\n                    (default: <workspace>/target/nv-tools/bin)\n  CI=true           missing NVIDIA tools are fatal instead of a warning\n",
    );
    s
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(name) = args.first() else {
        print!("{}", usage());
        return ExitCode::SUCCESS;
    };
    if matches!(name.as_str(), "-h" | "--help" | "help") {
        print!("{}", usage());
        return ExitCode::SUCCESS;
    }
    let Some(cmd) = SUBCOMMANDS.iter().find(|c| c.name == name) else {
        eprint!("xtask: unknown subcommand `{name}`\n\n{}", usage());
        return ExitCode::from(2);
    };
    match (cmd.run)(&args[1..]) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask {}: error: {e}", cmd.name);
            ExitCode::FAILURE
        }
    }
}
