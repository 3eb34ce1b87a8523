//! gpu-check: runs culink's and nvlink's cubins of the same link on a real GPU
//! and compares everything they leave behind, byte for byte.
//!
//! * [`launch`] — the per-case `launch.txt` (buffers, launches, limits);
//! * [`args`] — kernel arguments and their marshalling for `cuLaunchKernel`;
//! * [`driver`] — the few CUDA driver entry points used, loaded from
//!   `libcuda.so.1` at run time (builds and tests without CUDA);
//! * [`cubin`] — the globals a cubin defines;
//! * [`exec`] — one run of one cubin (a child process);
//! * [`dump`] — what a run left in device memory, and comparing two runs;
//! * [`check`] — a whole bundle, and the results table.
//!
//! See `docs/gpu-validation.md`.

pub mod args;
pub mod check;
pub mod cubin;
pub mod driver;
pub mod dump;
pub mod exec;
pub mod launch;
