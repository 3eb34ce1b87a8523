//! `fuzz-stable`: culink's fuzz targets on stable Rust, without libFuzzer.
//!
//! ```text
//! fuzz-stable [--target cubin_reader|link_mutated] [--secs N] [--iters N]
//!             [--seed S] [--corpus DIR]... [--artifacts DIR]
//! fuzz-stable [--target T] --replay FILE...   run T on each FILE, panics not caught
//! fuzz-stable --write-seeds DIR               write the synthetic container seeds
//! ```
//!
//! Seeds: every `*.o` and `*.cubin` under each `--corpus` directory (recursively;
//! default `tests/link`) plus synthetic archives and fatbinaries of fixture
//! objects (`culink_fuzz::synthetic_seeds`). Each execution picks a seed (or an earlier mutant that
//! still parsed), applies 1–4 structure-aware mutations from a seeded PRNG
//! (`culink_fuzz::mutate`) and runs the target under `catch_unwind`. A panic is a
//! crash: the input is written to `<artifacts>/<target>/crash-<hash>` (default
//! `fuzz/artifacts`) and counted once per distinct panic location. The run is
//! reproducible from `--seed` and `--iters`. The last line of output is
//! `fuzz-stable: target=T execs=N crashes=C unique=U secs=S`; exit status 1 when
//! anything crashed.
//!
//! A single allocation over `CULINK_FUZZ_MAX_ALLOC` bytes (default 1 GiB) is a
//! crash too ("memory not proportional to input"): the input is written to
//! `<artifacts>/<target>/oom-current` and the process aborts (an allocator may not
//! unwind), as libFuzzer's `-malloc_limit_mb` does.

use culink_fuzz::mutate::{mutate, Rng};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The input being executed, for the allocation-limit report.
static CURRENT: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static CURRENT_LEN: AtomicUsize = AtomicUsize::new(0);
static MAX_ALLOC: AtomicUsize = AtomicUsize::new(1 << 30);
/// Opened before the run, so reporting needs no allocation.
static OOM_FILE: OnceLock<File> = OnceLock::new();

struct LimitedAlloc;

// SAFETY: forwards to `System`; only adds a size check before it.
unsafe impl GlobalAlloc for LimitedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        check(layout.size());
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        check(layout.size());
        // SAFETY: same contract as ours.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        check(new_size);
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: LimitedAlloc = LimitedAlloc;

fn check(size: usize) {
    if size <= MAX_ALLOC.load(Ordering::Relaxed) {
        return;
    }
    let ptr = CURRENT.load(Ordering::Relaxed);
    let len = CURRENT_LEN.load(Ordering::Relaxed);
    if let (Some(mut f), false) = (OOM_FILE.get(), ptr.is_null()) {
        // SAFETY: `CURRENT` points at the live input of the running execution.
        let input = unsafe { std::slice::from_raw_parts(ptr, len) };
        let _ = f.write_all(input);
    }
    let _ = std::io::stderr()
        .write_all(b"fuzz-stable: CRASH oversized allocation (see oom-current in the artifacts)\n");
    if std::env::var_os("RUST_BACKTRACE").is_some() {
        eprintln!("{}", std::backtrace::Backtrace::force_capture());
    }
    std::process::abort();
}

thread_local! {
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
    static IN_TARGET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, out);
        } else if p
            .extension()
            .is_some_and(|e| e == "o" || e == "cubin" || e == "bin")
        {
            out.push(p);
        }
    }
}

fn fnv(d: &[u8]) -> u64 {
    d.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

fn main() {
    let mut target = String::from("link_mutated");
    let mut secs: Option<u64> = None;
    let mut iters: Option<u64> = None;
    let mut seed = 1u64;
    let mut corpora: Vec<PathBuf> = Vec::new();
    let mut artifacts = PathBuf::from("fuzz/artifacts");
    let mut replay: Vec<PathBuf> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--target" => target = val(),
            "--secs" => secs = Some(val().parse().expect("--secs N")),
            "--iters" => iters = Some(val().parse().expect("--iters N")),
            "--seed" => seed = val().parse().expect("--seed N"),
            "--corpus" => corpora.push(val().into()),
            "--artifacts" => artifacts = val().into(),
            "--replay" => replay.push(val().into()),
            "--write-seeds" => {
                let dir = PathBuf::from(val());
                std::fs::create_dir_all(&dir).expect("create the seed directory");
                for (i, s) in culink_fuzz::synthetic_seeds().iter().enumerate() {
                    std::fs::write(dir.join(format!("synthetic-{i}.bin")), s)
                        .expect("write a seed");
                }
                return;
            }
            _ => {
                eprintln!("fuzz-stable: unknown argument {a}");
                std::process::exit(2);
            }
        }
    }
    let run: fn(&[u8]) = match target.as_str() {
        "cubin_reader" => culink_fuzz::cubin_reader,
        "link_mutated" => culink_fuzz::link_mutated,
        _ => {
            eprintln!("fuzz-stable: unknown target {target}");
            std::process::exit(2);
        }
    };
    if !replay.is_empty() {
        for f in &replay {
            let data = std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            eprintln!("fuzz-stable: replaying {}", f.display());
            run(&data);
        }
        println!(
            "fuzz-stable: {} inputs replayed without a crash",
            replay.len()
        );
        return;
    }
    if corpora.is_empty() {
        corpora.push("tests/link".into());
    }
    let mut files = Vec::new();
    for c in &corpora {
        collect(c, &mut files);
    }
    let mut seeds: Vec<Vec<u8>> = files.iter().filter_map(|p| std::fs::read(p).ok()).collect();
    seeds.extend(culink_fuzz::synthetic_seeds());
    if seeds.is_empty() {
        eprintln!("fuzz-stable: no seeds under {corpora:?}");
        std::process::exit(2);
    }
    let art_dir = artifacts.join(&target);
    if let Some(n) = std::env::var("CULINK_FUZZ_MAX_ALLOC")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        MAX_ALLOC.store(n, Ordering::Relaxed);
    }
    let _ = std::fs::create_dir_all(&art_dir);
    if let Ok(f) = File::create(art_dir.join("oom-current")) {
        let _ = OOM_FILE.set(f);
    }
    std::panic::set_hook(Box::new(|info| {
        let loc = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        if !IN_TARGET.with(|t| t.get()) {
            eprintln!("fuzz-stable: internal panic at {loc}: {msg}");
        }
        LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{loc}: {msg}")));
    }));
    // Seeds first, unmutated: they must never crash.
    let mut rng = Rng::new(seed);
    let mut pool: Vec<Vec<u8>> = seeds.clone();
    let mut unique: BTreeMap<String, u64> = BTreeMap::new();
    let mut crashes = 0u64;
    let mut execs = 0u64;
    let start = Instant::now();
    let deadline = secs.map(|s| start + Duration::from_secs(s));
    let limit = iters.unwrap_or(if secs.is_some() { u64::MAX } else { 10_000 });
    let mut report = Instant::now();
    while execs < limit {
        if execs.is_multiple_of(64) && deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let input = if (execs as usize) < seeds.len() {
            seeds[execs as usize].clone()
        } else {
            let mut d = pool[rng.below(pool.len())].clone();
            let other = &seeds[rng.below(seeds.len())];
            mutate(&mut rng, &mut d, other);
            d
        };
        execs += 1;
        CURRENT_LEN.store(input.len(), Ordering::Relaxed);
        CURRENT.store(input.as_ptr().cast_mut(), Ordering::Relaxed);
        IN_TARGET.with(|t| t.set(true));
        let result = std::panic::catch_unwind(|| run(&input));
        IN_TARGET.with(|t| t.set(false));
        CURRENT.store(std::ptr::null_mut(), Ordering::Relaxed);
        if result.is_err() {
            crashes += 1;
            let what = LAST_PANIC
                .with(|p| p.borrow_mut().take())
                .unwrap_or_default();
            let key = what.split(": ").next().unwrap_or("").to_string();
            let n = unique.entry(key).or_insert(0);
            *n += 1;
            if *n == 1 {
                let _ = std::fs::create_dir_all(&art_dir);
                let path = art_dir.join(format!("crash-{:016x}", fnv(&input)));
                let _ = std::fs::write(&path, &input);
                eprintln!("fuzz-stable: CRASH {what}\n    input: {}", path.display());
            }
        } else if pool.len() < 4096 && rng.one_in(8) && linker_core::Cubin::parse(&input).is_ok() {
            // Keep well-formed mutants: later mutations go deeper from them.
            pool.push(input);
        }
        if report.elapsed() >= Duration::from_secs(60) {
            report = Instant::now();
            eprintln!(
                "fuzz-stable: {target}: {execs} execs, {crashes} crashes, {:.0}/s, pool {}",
                execs as f64 / start.elapsed().as_secs_f64(),
                pool.len()
            );
        }
    }
    // No oversized allocation: drop the empty report file.
    let _ = std::fs::remove_file(art_dir.join("oom-current"));
    let secs = start.elapsed().as_secs_f64();
    println!(
        "fuzz-stable: target={target} execs={execs} crashes={crashes} unique={} secs={secs:.1}",
        unique.len()
    );
    if crashes > 0 {
        std::process::exit(1);
    }
}
