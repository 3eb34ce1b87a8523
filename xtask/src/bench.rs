//! `cargo xtask bench [--quick] [--runs R] [--sizes N,N,...] [--no-culink]`:
//! nvlink against culink on synthetic workloads (method: `docs/performance.md`).
//!
//! * Workloads ([`crate::bench_gen`]) are assembled once with the pinned
//!   `ptxas -arch=sm_XX -c` (2 jobs) into `target/bench/<arch>-<N>/`, keyed by a hash
//!   of the generator version, arch, N and the first object's PTX (file `key`).
//! * Each workload: one warm-up of each linker, then R rounds alternating nvlink and
//!   culink; the median is reported. Wall time is measured around spawn..reap; peak
//!   RSS is `ru_maxrss` of exactly that child, from `wait4(2)` (declared here against
//!   the C library std already links: no crate).
//! * The floor: read every input and write an output of nvlink's output size,
//!   in-process.
//! * The report goes to stdout and `target/bench/report.md`.

use crate::bench_gen::{self, GEN_VERSION};
use crate::util::{io_err, show, tools_dir, workspace_root};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Kernels × `ld.const` per kernel of the library object: ~35,000 constant-bank
/// relocations.
const LIB_KERNELS: usize = 80;
const LIB_LOADS: usize = 500;
/// Conditional global loads of the leaf kernel (about 16 instructions each).
const LEAF_LOADS: usize = 2500;
/// nvlink runs taking longer than this (warm-up) get [`SLOW_RUNS`] timed runs.
const SLOW_SECS: f64 = 10.0;
const SLOW_RUNS: usize = 3;

/// One benchmark workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Workload {
    /// `n` synthetic objects for `sm_{sm}`.
    Synthetic { sm: u32, n: usize },
    /// The large constant-heavy library object plus one small object.
    Library { sm: u32 },
    /// One object with one long leaf kernel (Blackwell: nvlink re-allocates
    /// its scoreboards, and so does culink's replay).
    Leaf { sm: u32 },
}

impl Workload {
    fn sm(self) -> u32 {
        match self {
            Workload::Synthetic { sm, .. } | Workload::Library { sm } | Workload::Leaf { sm } => sm,
        }
    }

    fn dir_name(self) -> String {
        match self {
            Workload::Synthetic { sm, n } => format!("sm_{sm}-{n}"),
            Workload::Library { sm } => format!("sm_{sm}-lib"),
            Workload::Leaf { sm } => format!("sm_{sm}-leaf"),
        }
    }

    fn label(self) -> String {
        match self {
            Workload::Synthetic { sm: 90, n } => n.to_string(),
            Workload::Synthetic { sm, n } => format!("{n} (sm_{sm})"),
            Workload::Library { sm } => format!("library (sm_{sm})"),
            Workload::Leaf { sm } => format!("leaf kernel (sm_{sm})"),
        }
    }

    /// (file name, PTX generator) for every input, in link order.
    fn inputs(self) -> Vec<String> {
        match self {
            Workload::Synthetic { n, .. } => (0..n).map(|i| format!("o{i:05}.o")).collect(),
            Workload::Library { .. } => vec!["lib.o".into(), "small.o".into()],
            Workload::Leaf { .. } => vec!["leaf.o".into()],
        }
    }

    fn ptx(self, index: usize) -> String {
        match self {
            Workload::Synthetic { sm, n } => bench_gen::synthetic_object(index, n, sm),
            Workload::Library { sm } if index == 0 => {
                bench_gen::library_object(sm, LIB_KERNELS, LIB_LOADS)
            }
            Workload::Library { sm } => bench_gen::synthetic_object(0, 1, sm),
            Workload::Leaf { sm } => bench_gen::leaf_object(sm, LEAF_LOADS),
        }
    }

    /// The cache key: generator version, workload, first object's PTX.
    fn key(self) -> String {
        let mut h = Fnv::default();
        h.write(format!("gen {GEN_VERSION} {self:?}\n").as_bytes());
        h.write(self.ptx(0).as_bytes());
        format!("{:016x}\n", h.0)
    }
}

/// FNV-1a 64 (stable across Rust versions, unlike `DefaultHasher`).
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// Command-line options.
#[derive(Debug)]
struct Options {
    quick: bool,
    runs: usize,
    /// `--sizes`: explicit workloads.
    sizes: Option<Vec<Workload>>,
    culink: bool,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        quick: false,
        runs: 5,
        sizes: None,
        culink: true,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => o.quick = true,
            "--no-culink" => o.culink = false,
            "--runs" => {
                o.runs = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|&r| r >= 1)
                    .ok_or("--runs needs a positive number")?;
            }
            "--sizes" => {
                let v = it.next().ok_or("--sizes needs N,N,...")?;
                let s: Option<Vec<Workload>> = v.split(',').map(parse_workload).collect();
                o.sizes = Some(
                    s.filter(|s| !s.is_empty())
                        .ok_or_else(|| format!("bad --sizes `{v}`"))?,
                );
            }
            _ => {
                return Err(format!(
                "unexpected argument `{a}` (usage: cargo xtask bench [--quick] [--runs R] [--sizes N|sm_NN:N|lib,...] [--no-culink])"
            ))
            }
        }
    }
    Ok(o)
}

/// The workloads of a run, in order.
fn plan(o: &Options) -> Vec<Workload> {
    if let Some(w) = &o.sizes {
        return w.clone();
    }
    let sizes: &[usize] = if o.quick {
        &[10, 100, 1000]
    } else {
        &[10, 100, 500, 1000, 2000, 5000]
    };
    let mut w: Vec<Workload> = sizes
        .iter()
        .map(|&n| Workload::Synthetic { sm: 90, n })
        .collect();
    if !o.quick {
        w.push(Workload::Synthetic { sm: 80, n: 1000 });
        w.push(Workload::Library { sm: 90 });
        w.push(Workload::Leaf { sm: 100 });
    }
    w
}

/// One `--sizes` item: `N` (sm_90), `sm_NN:N`, `lib` or `sm_NN:lib`,
/// `leaf` or `sm_NN:leaf`.
fn parse_workload(s: &str) -> Option<Workload> {
    let s = s.trim();
    let (sm, what) = match s.split_once(':') {
        Some((a, b)) => (a.strip_prefix("sm_")?.parse().ok()?, b),
        None => (90, s),
    };
    if what == "lib" {
        return Some(Workload::Library { sm });
    }
    if what == "leaf" {
        return Some(Workload::Leaf { sm });
    }
    let n = what.parse().ok().filter(|&n| n >= 1)?;
    Some(Workload::Synthetic { sm, n })
}

/// The size on which culink's thread scaling is measured.
fn scaling_size(w: &[Workload]) -> Option<Workload> {
    let syn = |n| Workload::Synthetic { sm: 90, n };
    [2000, 1000]
        .into_iter()
        .map(syn)
        .find(|x| w.contains(x))
        .or_else(|| {
            w.iter()
                .rev()
                .copied()
                .find(|x| matches!(x, Workload::Synthetic { sm: 90, .. }))
        })
}

/// `cargo xtask bench`.
pub fn run(args: &[String]) -> Result<(), String> {
    let opts = parse_args(args)?;
    let tools = crate::nv_tools::ensure().or_else(|e| {
        let dir = tools_dir();
        if dir.join("nvlink").is_file() && dir.join("ptxas").is_file() {
            Ok(dir)
        } else {
            Err(e)
        }
    })?;
    let root = workspace_root();
    let bench = root.join("target/bench");
    let out_dir = bench.join("out");
    std::fs::create_dir_all(&out_dir).map_err(|e| io_err("create", &out_dir, e))?;

    let culink = if opts.culink {
        build_culink(&root)
    } else {
        Err("not run (--no-culink)".into())
    };
    if let Err(e) = &culink {
        println!("bench: culink unavailable: {e}");
    }

    let workloads = plan(&opts);
    let mut rows = Vec::new();
    for &w in &workloads {
        let dir = prepare(w, &tools.join("ptxas"), &bench)?;
        let row = measure_workload(w, &dir, &tools, culink.as_ref().ok(), &out_dir, opts.runs)?;
        println!("bench: {}", row.summary());
        rows.push(row);
    }

    let mut scaling = None;
    if let (Ok(c), Some(w)) = (&culink, scaling_size(&workloads)) {
        if rows.iter().any(|r| r.workload == w && r.culink.is_ok()) {
            let dir = bench.join(w.dir_name());
            println!("bench: culink thread scaling on {}", w.label());
            scaling = Some((w, thread_scaling(w, &dir, c, &out_dir, opts.runs)?));
        }
    }

    let report = render_report(&rows, scaling.as_ref(), &opts, &tools, culink.as_ref());
    print!("\n{report}");
    let path = bench.join("report.md");
    std::fs::write(&path, &report).map_err(|e| io_err("write", &path, e))?;
    println!("bench: report written to {}", path.display());
    Ok(())
}

/// `cargo build --release -p linker-cli`; the binary path, or why there is none.
fn build_culink(root: &Path) -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args(["build", "--release", "-p", "linker-cli"]);
    println!("bench: {}", show(&cmd));
    let st = cmd
        .status()
        .map_err(|e| format!("cannot run `{}`: {e}", show(&cmd)))?;
    if !st.success() {
        return Err(format!("build failed ({st})"));
    }
    let bin = root.join("target/release/culink");
    if bin.is_file() {
        Ok(bin)
    } else {
        Err(format!("{} missing after build", bin.display()))
    }
}

/// Generates and assembles `w` under `bench/<dir_name>` unless its `key` matches.
fn prepare(w: Workload, ptxas: &Path, bench: &Path) -> Result<PathBuf, String> {
    let dir = bench.join(w.dir_name());
    let key_path = dir.join("key");
    let key = w.key();
    let inputs = w.inputs();
    if std::fs::read_to_string(&key_path).is_ok_and(|k| k == key)
        && inputs.iter().all(|f| dir.join(f).is_file())
    {
        return Ok(dir);
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| io_err("remove", &dir, e))?;
    }
    std::fs::create_dir_all(&dir).map_err(|e| io_err("create", &dir, e))?;
    let t = Instant::now();
    println!(
        "bench: assembling {} ({} objects, ptxas -arch=sm_{} -c, 2 jobs)",
        w.dir_name(),
        inputs.len(),
        w.sm()
    );
    let next = AtomicUsize::new(0);
    let failure: Mutex<Option<String>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= inputs.len() || failure.lock().map_or(true, |f| f.is_some()) {
                    return;
                }
                if let Err(e) = assemble(w, i, &dir, &inputs[i], ptxas) {
                    if let Ok(mut f) = failure.lock() {
                        f.get_or_insert(e);
                    }
                    return;
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Err(e);
    }
    std::fs::write(&key_path, key).map_err(|e| io_err("write", &key_path, e))?;
    println!(
        "bench: assembled {} in {:.1} s",
        w.dir_name(),
        t.elapsed().as_secs_f64()
    );
    Ok(dir)
}

/// Writes input `i`'s PTX, assembles it to `obj`, removes the PTX.
fn assemble(w: Workload, i: usize, dir: &Path, obj: &str, ptxas: &Path) -> Result<(), String> {
    let ptx_name = obj.replace(".o", ".ptx");
    let ptx = dir.join(&ptx_name);
    std::fs::write(&ptx, w.ptx(i)).map_err(|e| io_err("write", &ptx, e))?;
    let mut cmd = Command::new(ptxas);
    cmd.current_dir(dir)
        .arg(format!("-arch=sm_{}", w.sm()))
        .arg("-c")
        .arg(&ptx_name)
        .arg("-o")
        .arg(obj);
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run `{}`: {e}", show(&cmd)))?;
    if !out.status.success() {
        return Err(format!(
            "`{}` failed ({}) in {} (PTX kept):\n{}",
            show(&cmd),
            out.status,
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    std::fs::remove_file(&ptx).map_err(|e| io_err("remove", &ptx, e))
}

/// One measured child process.
#[derive(Debug, Clone)]
struct Sample {
    wall: Duration,
    /// Peak resident set size in KiB (`ru_maxrss`), when known.
    max_rss_kib: Option<u64>,
    /// Exit code (or 128 + signal).
    code: i32,
    /// First line of stderr.
    first_err: String,
}

/// Runs `cmd` with stdout discarded and stderr captured to `err_file`; measures
/// wall time (spawn to reap) and peak RSS of exactly this child.
fn measure(cmd: &mut Command, err_file: &Path) -> Result<Sample, String> {
    let err = std::fs::File::create(err_file).map_err(|e| io_err("create", err_file, e))?;
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(err);
    reset_peak_rss();
    let t = Instant::now();
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot run `{}`: {e}", show(cmd)))?;
    let (code, max_rss_kib) = reap::wait(child)?;
    let wall = t.elapsed();
    let first_err = std::fs::read_to_string(err_file)
        .unwrap_or_default()
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string();
    Ok(Sample {
        wall,
        max_rss_kib,
        code,
        first_err,
    })
}

/// Resets this process's peak RSS (`VmHWM`) to its current RSS (Linux >= 4.0).
///
/// Needed because the kernel folds the RSS peak of the process image a child
/// replaces at `exec` (with `vfork`/`posix_spawn`, which std uses, that is *this*
/// process's memory) into the child's `ru_maxrss`: without the reset every child
/// would report at least xtask's own peak.
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Reaping a child with its resource usage.
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
mod reap {
    /// `struct rusage` on 64-bit Linux: two `timeval`s, then 14 `long`s, the first
    /// of which is `ru_maxrss` (KiB).
    #[repr(C)]
    struct Rusage {
        utime: [i64; 2],
        stime: [i64; 2],
        longs: [i64; 14],
    }

    extern "C" {
        /// `pid_t wait4(pid_t, int *wstatus, int options, struct rusage *)`, from
        /// the C library std links anyway.
        fn wait4(pid: i32, status: *mut i32, options: i32, rusage: *mut Rusage) -> i32;
    }

    /// Waits for `child` with `wait4` (so the rusage is this child's alone);
    /// returns (exit code or 128 + signal, peak RSS in KiB).
    pub fn wait(child: std::process::Child) -> Result<(i32, Option<u64>), String> {
        let pid = i32::try_from(child.id()).map_err(|_| "pid out of range".to_string())?;
        let mut status = 0i32;
        let mut ru = Rusage {
            utime: [0; 2],
            stime: [0; 2],
            longs: [0; 14],
        };
        loop {
            // SAFETY: `status` and `ru` are valid, writable and live for the call;
            // `Rusage` has the layout of the 64-bit Linux `struct rusage`. The child
            // is reaped here and `child` is dropped without waiting.
            let r = unsafe { wait4(pid, &mut status, 0, &mut ru) };
            if r == pid {
                break;
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(format!("wait4({pid}): {e}"));
            }
        }
        drop(child);
        let code = if status & 0x7f == 0 {
            (status >> 8) & 0xff
        } else {
            128 + (status & 0x7f)
        };
        Ok((code, u64::try_from(ru.longs[0]).ok()))
    }
}

/// Elsewhere: std's wait, no RSS.
#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
mod reap {
    pub fn wait(mut child: std::process::Child) -> Result<(i32, Option<u64>), String> {
        let st = child.wait().map_err(|e| format!("wait: {e}"))?;
        Ok((st.code().unwrap_or(128), None))
    }
}

/// A linker's result on one workload: its timed samples, or why it failed.
type Outcome = Result<Vec<Sample>, String>;

/// One report row.
struct Row {
    workload: Workload,
    input_bytes: u64,
    output_bytes: u64,
    nvlink: Outcome,
    nvlink_note: Option<String>,
    culink: Outcome,
    floor: Vec<Duration>,
    /// `culink diff` verdict: "yes", "DIFFERS", or "n/a".
    equivalent: String,
}

impl Row {
    fn summary(&self) -> String {
        format!(
            "{}: nvlink {}, culink {}, floor {}",
            self.workload.label(),
            fmt_outcome(&self.nvlink),
            fmt_outcome(&self.culink),
            fmt_dur(median(&self.floor))
        )
    }
}

fn link_command(bin: &Path, w: Workload, dir: &Path, out: &Path) -> Command {
    let mut cmd = Command::new(bin);
    cmd.current_dir(dir)
        .arg(format!("-arch=sm_{}", w.sm()))
        .args(w.inputs())
        .arg("-o")
        .arg(out);
    cmd
}

fn failed(s: &Sample) -> String {
    format!("FAILED (exit {}, {})", s.code, s.first_err)
}

fn measure_workload(
    w: Workload,
    dir: &Path,
    tools: &Path,
    culink: Option<&PathBuf>,
    out_dir: &Path,
    runs: usize,
) -> Result<Row, String> {
    let inputs: Vec<PathBuf> = w.inputs().iter().map(|f| dir.join(f)).collect();
    let input_bytes = inputs
        .iter()
        .map(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
        .sum();
    let ref_out = out_dir.join("nvlink.cubin");
    let our_out = out_dir.join("culink.cubin");
    let err = out_dir.join("stderr.txt");
    let _ = std::fs::remove_file(&ref_out);
    let _ = std::fs::remove_file(&our_out);
    let nv = tools.join("nvlink");

    println!("bench: {}: warm-up", w.label());
    let warm = measure(&mut link_command(&nv, w, dir, &ref_out), &err)?;
    let mut nvlink: Outcome = if warm.code == 0 {
        Ok(Vec::new())
    } else {
        Err(failed(&warm))
    };
    let mut nv_runs = runs;
    let mut nvlink_note = None;
    if nvlink.is_ok() && warm.wall.as_secs_f64() > SLOW_SECS && runs > SLOW_RUNS {
        nv_runs = SLOW_RUNS;
        nvlink_note = Some(format!(
            "nvlink took {:.1} s (> {SLOW_SECS} s) in warm-up: {SLOW_RUNS} timed runs instead of {runs}",
            warm.wall.as_secs_f64()
        ));
    }
    let mut culink_out: Outcome = match culink {
        None => Err("n/a (no binary)".into()),
        Some(c) => {
            let s = measure(&mut link_command(c, w, dir, &our_out), &err)?;
            if s.code == 0 {
                Ok(Vec::new())
            } else {
                Err(failed(&s))
            }
        }
    };

    for r in 0..runs {
        if r < nv_runs {
            if let Ok(v) = &mut nvlink {
                let s = measure(&mut link_command(&nv, w, dir, &ref_out), &err)?;
                if s.code != 0 {
                    nvlink = Err(failed(&s));
                } else {
                    v.push(s);
                }
            }
        }
        if let (Ok(v), Some(c)) = (&mut culink_out, culink) {
            let s = measure(&mut link_command(c, w, dir, &our_out), &err)?;
            if s.code != 0 {
                culink_out = Err(failed(&s));
            } else {
                v.push(s);
            }
        }
    }

    let output_bytes = std::fs::metadata(&ref_out).map(|m| m.len()).unwrap_or(0);
    let floor = (0..runs)
        .map(|_| floor_once(&inputs, output_bytes as usize, &out_dir.join("floor.bin")))
        .collect::<Result<Vec<_>, _>>()?;

    let equivalent = match (culink, &culink_out, &nvlink) {
        (Some(c), Ok(_), Ok(_)) => {
            let mut cmd = Command::new(c);
            cmd.arg("diff").arg(&our_out).arg(&ref_out);
            match measure(&mut cmd, &err) {
                Ok(s) if s.code == 0 => "yes".into(),
                Ok(s) if s.code == 1 => "DIFFERS".into(),
                Ok(s) => format!("n/a (diff exit {})", s.code),
                Err(_) => "n/a".into(),
            }
        }
        _ => "n/a".into(),
    };
    Ok(Row {
        workload: w,
        input_bytes,
        output_bytes,
        nvlink,
        nvlink_note,
        culink: culink_out,
        floor,
        equivalent,
    })
}

/// The floor: read every input, write `out_len` bytes to `out` (no fsync).
fn floor_once(inputs: &[PathBuf], out_len: usize, out: &Path) -> Result<Duration, String> {
    use std::io::Read as _;
    // One reused buffer and chunked writes keep xtask's own RSS small (see
    // `reset_peak_rss`).
    let t = Instant::now();
    let mut buf = Vec::new();
    let mut total = 0usize;
    for p in inputs {
        buf.clear();
        let mut f = std::fs::File::open(p).map_err(|e| io_err("open", p, e))?;
        total += f.read_to_end(&mut buf).map_err(|e| io_err("read", p, e))?;
    }
    let chunk = vec![(total & 0xff) as u8; 1 << 20];
    let mut f = std::fs::File::create(out).map_err(|e| io_err("create", out, e))?;
    let mut left = out_len;
    while left > 0 {
        let n = left.min(chunk.len());
        f.write_all(&chunk[..n])
            .map_err(|e| io_err("write", out, e))?;
        left -= n;
    }
    drop(f);
    Ok(t.elapsed())
}

/// culink with `RAYON_NUM_THREADS` = 1 and 2, alternating: medians.
fn thread_scaling(
    w: Workload,
    dir: &Path,
    culink: &Path,
    out_dir: &Path,
    runs: usize,
) -> Result<Vec<(usize, Outcome)>, String> {
    let out = out_dir.join("culink-threads.cubin");
    let err = out_dir.join("stderr.txt");
    let mut res: Vec<(usize, Outcome)> = vec![(1, Ok(Vec::new())), (2, Ok(Vec::new()))];
    for r in 0..=runs {
        for (threads, o) in &mut res {
            let Ok(v) = o else { continue };
            let mut cmd = link_command(culink, w, dir, &out);
            cmd.env("RAYON_NUM_THREADS", threads.to_string());
            let s = measure(&mut cmd, &err)?;
            if s.code != 0 {
                *o = Err(failed(&s));
            } else if r > 0 {
                v.push(s); // r = 0 is the warm-up
            }
        }
    }
    Ok(res)
}

fn median(v: &[Duration]) -> Option<Duration> {
    let mut v = v.to_vec();
    v.sort();
    match v.len() {
        0 => None,
        n if n % 2 == 1 => Some(v[n / 2]),
        n => Some((v[n / 2 - 1] + v[n / 2]) / 2),
    }
}

fn median_time(o: &Outcome) -> Option<Duration> {
    o.as_ref()
        .ok()
        .and_then(|v| median(&v.iter().map(|s| s.wall).collect::<Vec<_>>()))
}

/// Median peak RSS in KiB.
fn median_rss(o: &Outcome) -> Option<u64> {
    let mut v: Vec<u64> = o
        .as_ref()
        .ok()?
        .iter()
        .filter_map(|s| s.max_rss_kib)
        .collect();
    v.sort_unstable();
    v.get(v.len() / 2).copied()
}

fn fmt_dur(d: Option<Duration>) -> String {
    match d {
        None => "–".into(),
        Some(d) if d.as_secs_f64() >= 1.0 => format!("{:.2} s", d.as_secs_f64()),
        Some(d) => format!("{:.1} ms", d.as_secs_f64() * 1e3),
    }
}

fn fmt_outcome(o: &Outcome) -> String {
    match o {
        Ok(_) => fmt_dur(median_time(o)),
        Err(e) => e.replace('|', "\\|"),
    }
}

fn fmt_rss(o: &Outcome) -> String {
    median_rss(o).map_or("–".into(), |k| format!("{:.0} MB", k as f64 / 1024.0))
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.1}×", a / b),
        _ => "–".into(),
    }
}

fn secs(d: Option<Duration>) -> Option<f64> {
    d.map(|d| d.as_secs_f64())
}

/// The machine: (cores, CPU model, memory).
fn machine() -> (usize, String, String) {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .unwrap_or("unknown")
        .trim()
        .to_string();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|k| k.parse::<f64>().ok())
        .map_or("unknown".into(), |k| format!("{:.1} GiB", k / 1048576.0));
    (cores, model, mem)
}

fn git_head() -> String {
    Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(workspace_root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map_or("unknown".into(), |o| {
            String::from_utf8_lossy(&o.stdout).trim().to_string()
        })
}

fn render_report(
    rows: &[Row],
    scaling: Option<&(Workload, Vec<(usize, Outcome)>)>,
    opts: &Options,
    tools: &Path,
    culink: Result<&PathBuf, &String>,
) -> String {
    let (cores, model, mem) = machine();
    let mut s = String::new();
    let _ = writeln!(s, "## culink benchmark\n");
    let _ = writeln!(
        s,
        "Machine: {cores} cores ({model}), {mem}. culink at {} ({}); nvlink from {}. \
         Median of {} alternating runs after one warm-up each; wall time spawn..reap, \
         peak RSS = `ru_maxrss` from `wait4`.\n",
        git_head(),
        match culink {
            Ok(_) => "release build".to_string(),
            Err(e) => format!("unavailable: {e}"),
        },
        tools.display(),
        opts.runs
    );
    s.push_str("| N | input MB | output MB | floor | nvlink | culink | nvlink/culink | culink/floor | nvlink RSS | culink RSS | RSS nvlink/culink | equivalent |\n");
    s.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for r in rows {
        let nv = median_time(&r.nvlink);
        let cu = median_time(&r.culink);
        let fl = median(&r.floor);
        let _ = writeln!(
            s,
            "| {} | {:.1} | {:.1} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.workload.label(),
            r.input_bytes as f64 / 1e6,
            r.output_bytes as f64 / 1e6,
            fmt_dur(fl),
            fmt_outcome(&r.nvlink),
            fmt_outcome(&r.culink),
            ratio(secs(nv), secs(cu)),
            ratio(secs(cu), secs(fl)),
            fmt_rss(&r.nvlink),
            fmt_rss(&r.culink),
            ratio(
                median_rss(&r.nvlink).map(|k| k as f64),
                median_rss(&r.culink).map(|k| k as f64)
            ),
            r.equivalent
        );
    }
    s.push('\n');
    for r in rows {
        if let Some(n) = &r.nvlink_note {
            let _ = writeln!(s, "* {}: {n}.", r.workload.label());
        }
    }
    let find = |n| {
        rows.iter()
            .find(|r| r.workload == Workload::Synthetic { sm: 90, n })
    };
    if let (Some(a), Some(b)) = (find(500), find(5000)) {
        let g = |o: &Outcome, p: &Outcome| ratio(secs(median_time(o)), secs(median_time(p)));
        let _ = writeln!(
            s,
            "* Growth time(5000)/time(500) (10× the input; 10.0× is linear): culink {}, nvlink {}, floor {}.",
            g(&b.culink, &a.culink),
            g(&b.nvlink, &a.nvlink),
            ratio(secs(median(&b.floor)), secs(median(&a.floor)))
        );
    }
    if let Some((w, res)) = scaling {
        let t = |n: usize| {
            res.iter()
                .find(|(k, _)| *k == n)
                .map_or("–".into(), |(_, o)| fmt_outcome(o))
        };
        let speedup = match (res.first(), res.get(1)) {
            (Some((_, a)), Some((_, b))) => ratio(secs(median_time(a)), secs(median_time(b))),
            _ => "–".into(),
        };
        let _ = writeln!(
            s,
            "* culink threads on N = {}: RAYON_NUM_THREADS=1 {}, =2 {}; speed-up {speedup}.",
            w.label(),
            t(1),
            t(2)
        );
    } else {
        s.push_str(
            "* culink thread scaling: not measured (it runs on an sm_90 synthetic size \
             that culink linked; this run had none).\n",
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans() {
        let o = parse_args(&[]).unwrap();
        assert_eq!(plan(&o).len(), 9);
        assert_eq!(
            scaling_size(&plan(&o)),
            Some(Workload::Synthetic { sm: 90, n: 2000 })
        );
        let q = parse_args(&["--quick".into()]).unwrap();
        assert_eq!(
            plan(&q),
            [10, 100, 1000].map(|n| Workload::Synthetic { sm: 90, n })
        );
        let s = parse_args(&["--sizes".into(), "3,7".into(), "--runs".into(), "2".into()]).unwrap();
        assert_eq!(s.runs, 2);
        assert_eq!(
            scaling_size(&plan(&s)),
            Some(Workload::Synthetic { sm: 90, n: 7 })
        );
        assert!(parse_args(&["--sizes".into(), "0".into()]).is_err());
        let l = parse_args(&["--sizes".into(), "lib,sm_80:5,sm_100:leaf".into()]).unwrap();
        assert_eq!(
            plan(&l),
            [
                Workload::Library { sm: 90 },
                Workload::Synthetic { sm: 80, n: 5 },
                Workload::Leaf { sm: 100 }
            ]
        );
    }

    #[test]
    fn medians() {
        let ms = Duration::from_millis;
        assert_eq!(median(&[ms(3), ms(1), ms(2)]), Some(ms(2)));
        assert_eq!(
            median(&[ms(4), ms(1), ms(2), ms(3)]),
            Some(Duration::from_micros(2500))
        );
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn cache_keys_differ() {
        let a = Workload::Synthetic { sm: 90, n: 10 };
        let b = Workload::Synthetic { sm: 90, n: 11 };
        let c = Workload::Synthetic { sm: 80, n: 10 };
        assert_ne!(a.key(), b.key());
        assert_ne!(a.key(), c.key());
        assert_eq!(a.key(), a.key());
    }

    #[test]
    fn measures_a_child() {
        let dir = crate::util::TempDir::new("bench-measure").unwrap();
        let err = dir.path().join("err");
        let s = measure(
            Command::new("sh").args(["-c", "echo oops >&2; exit 3"]),
            &err,
        )
        .unwrap();
        assert_eq!(s.code, 3);
        assert_eq!(s.first_err, "oops");
        if cfg!(target_os = "linux") {
            assert!(s.max_rss_kib.is_some_and(|k| k > 0));
            // xtask's own (freed) peak must not leak into the child's ru_maxrss.
            let big = vec![1u8; 300 << 20];
            assert_eq!(
                big.iter().step_by(4096).map(|&b| b as usize).sum::<usize>(),
                300 << 8
            );
            drop(big);
            let s = measure(&mut Command::new("true"), &err).unwrap();
            let rss = s.max_rss_kib.unwrap_or(0);
            assert!(
                rss < 100 << 10,
                "child peak RSS {rss} KiB includes xtask's peak"
            );
        }
    }

    /// Assembles and links a 3-object workload when the NVIDIA tools exist.
    #[test]
    fn three_objects_assemble_and_link() {
        let tools = tools_dir();
        if !tools.join("ptxas").is_file() || !tools.join("nvlink").is_file() {
            eprintln!("skipping: no ptxas/nvlink in {}", tools.display());
            return;
        }
        let tmp = crate::util::TempDir::new("bench-gen").unwrap();
        for w in [
            Workload::Synthetic { sm: 90, n: 3 },
            Workload::Synthetic { sm: 80, n: 9 },
        ] {
            let dir = prepare(w, &tools.join("ptxas"), tmp.path()).unwrap();
            let out = tmp.path().join("out.cubin");
            let s = measure(
                &mut link_command(&tools.join("nvlink"), w, &dir, &out),
                &tmp.path().join("err"),
            )
            .unwrap();
            assert_eq!(s.code, 0, "nvlink failed: {}", s.first_err);
            assert!(out.is_file());
        }
    }
}
