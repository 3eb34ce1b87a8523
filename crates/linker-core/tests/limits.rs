//! Scale: many inputs and one very large input link, with memory proportional
//! to the input size.
//!
//! Inputs are synthesised in memory from `tests/link/call_extern` (sm_90):
//! `a.o` (kernel `kern_a`, calls `add_one`) and `b.o` (defines `add_one` and
//! `gcounter`), copied with those names rewritten to unique names of the same length, so
//! every pair links on its own. A large input is `a.o` with `.text.kern_a`
//! grown (moved to the end of the file and padded with zeros).
//!
//! The full-size runs are `#[ignore]`d (they take a while in a debug build):
//!
//! ```text
//! cargo test --release -p linker-core --test limits -- --ignored --nocapture
//! ```
//!
//! A counting allocator measures the peak of live heap bytes during the link;
//! it must stay within a fixed multiple of the total input size.

mod common;

use linker_core::{Cubin, InputSource, LinkOptions, SmArch};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// One measurement at a time (tests run in parallel threads).
static SERIAL: Mutex<()> = Mutex::new(());

struct Counting;

fn grow(n: usize) {
    let now = LIVE.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: forwards to `System`, counting bytes only.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        grow(l.size());
        // SAFETY: same contract.
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        grow(l.size());
        // SAFETY: same contract.
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        // SAFETY: same contract.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        if n > l.size() {
            grow(n - l.size());
        } else {
            LIVE.fetch_sub(l.size() - n, Ordering::Relaxed);
        }
        // SAFETY: same contract.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn fixture(stem: &str) -> Vec<u8> {
    let p = common::workspace_root().join(format!("tests/link/call_extern/{stem}.sm_90.o"));
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Replaces every NUL-terminated occurrence of `from` (preceded by NUL or '.')
/// inside the string tables of `obj` by `to` (same length).
fn rename(obj: &mut [u8], from: &str, to: &str) {
    assert_eq!(from.len(), to.len());
    let ranges: Vec<(usize, usize)> = {
        let c = Cubin::parse(obj).expect("fixture parses");
        c.sections
            .iter()
            .filter(|s| s.sh_type == linker_core::elf::SHT_STRTAB)
            .map(|s| (s.offset as usize, s.size as usize))
            .collect()
    };
    let pat = from.as_bytes();
    for (off, size) in ranges {
        let table = &mut obj[off..off + size];
        let mut i = 1;
        while i + pat.len() < table.len() {
            if &table[i..i + pat.len()] == pat
                && table[i + pat.len()] == 0
                && (table[i - 1] == 0 || table[i - 1] == b'.')
            {
                table[i..i + pat.len()].copy_from_slice(to.as_bytes());
                i += pat.len();
            } else {
                i += 1;
            }
        }
    }
}

/// `2 * pairs` inputs: pair `i` is `a.o` and `b.o` with `kern_a`/`add_one` renamed.
fn pairs(n: usize) -> Vec<InputSource> {
    let (a, b) = (fixture("a"), fixture("b"));
    let mut out = Vec::with_capacity(2 * n);
    for i in 0..n {
        let (k, f, g) = (format!("k{i:05}"), format!("a{i:06}"), format!("g{i:07}"));
        let mut ai = a.clone();
        rename(&mut ai, "kern_a", &k);
        rename(&mut ai, "add_one", &f);
        rename(&mut ai, "gcounter", &g);
        let mut bi = b.clone();
        rename(&mut bi, "add_one", &f);
        rename(&mut bi, "gcounter", &g);
        for (name, data) in [(format!("a{i}.o"), ai), (format!("b{i}.o"), bi)] {
            out.push(InputSource::Bytes {
                name,
                data: Arc::from(data),
            });
        }
    }
    out
}

/// `a.o` with `.text.kern_a` grown to `size` bytes (moved to the end of the file).
fn big_input(size: usize) -> Vec<u8> {
    let mut obj = fixture("a");
    let (hdr, old_off, old_size) = {
        let c = Cubin::parse(&obj).unwrap();
        let s = c.section_by_name(".text.kern_a").unwrap();
        let hdr = c.header.e_shoff as usize + 64 * s.index as usize;
        (hdr, s.offset as usize, s.size as usize)
    };
    let new_off = obj.len().div_ceil(128) * 128;
    let code = obj[old_off..old_off + old_size].to_vec();
    obj.resize(new_off, 0);
    obj.extend_from_slice(&code);
    obj.resize(new_off + size, 0);
    obj[hdr + 24..hdr + 32].copy_from_slice(&(new_off as u64).to_le_bytes());
    obj[hdr + 32..hdr + 40].copy_from_slice(&(size as u64).to_le_bytes());
    obj
}

/// Links `inputs` at sm_90; returns (output size, peak heap bytes during the link).
fn measured_link(inputs: Vec<InputSource>) -> (usize, usize) {
    let opts = LinkOptions {
        arch: Some(SmArch::new(90)),
        inputs,
        ..LinkOptions::default()
    };
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let out = linker_core::link(&opts)
        .unwrap_or_else(|f| panic!("{:?}", f.errors().take(3).collect::<Vec<_>>()));
    let peak = PEAK.load(Ordering::Relaxed) - base;
    Cubin::parse(&out.cubin).expect("output parses");
    (out.cubin.len(), peak)
}

fn input_bytes(inputs: &[InputSource]) -> usize {
    inputs
        .iter()
        .map(|i| match i {
            InputSource::Bytes { data, .. } => data.len(),
            InputSource::File(_) => 0,
        })
        .sum()
}

/// Peak heap during a link may be at most this multiple of the input size
/// (plus a constant): the output buffer, the plan and per-input tables.
const MEMORY_FACTOR: usize = 12;
const MEMORY_SLACK: usize = 8 << 20;

fn many_inputs(pairs_n: usize) {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let inputs = pairs(pairs_n);
    let total = input_bytes(&inputs);
    let t = std::time::Instant::now();
    let (out, peak) = measured_link(inputs);
    eprintln!(
        "{} inputs, {total} bytes in, {out} bytes out, peak heap {peak} bytes ({:.1}x), {:.2?}",
        2 * pairs_n,
        peak as f64 / total as f64,
        t.elapsed()
    );
    assert!(out > total / 4, "output suspiciously small");
    assert!(
        peak <= MEMORY_FACTOR * total + MEMORY_SLACK,
        "peak heap {peak} for {total} input bytes"
    );
}

fn one_big_input(size: usize) {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let data = big_input(size);
    let total = data.len();
    let b = fixture("b");
    let inputs = vec![
        InputSource::Bytes {
            name: "big.o".into(),
            data: Arc::from(data),
        },
        InputSource::Bytes {
            name: "b.o".into(),
            data: Arc::from(b),
        },
    ];
    let t = std::time::Instant::now();
    let (out, peak) = measured_link(inputs);
    eprintln!(
        "one {total}-byte input: {out} bytes out, peak heap {peak} bytes ({:.1}x), {:.2?}",
        peak as f64 / total as f64,
        t.elapsed()
    );
    assert!(out >= size);
    // Inputs are borrowed, not copied: about one output buffer.
    assert!(
        peak <= 3 * total + MEMORY_SLACK,
        "peak heap {peak} for a {total}-byte input"
    );
}

#[test]
fn two_hundred_inputs() {
    many_inputs(100);
}

#[test]
#[ignore = "10,000 inputs: run with --release -- --ignored"]
fn ten_thousand_inputs() {
    many_inputs(5000);
}

#[test]
fn four_megabyte_input() {
    one_big_input(4 << 20);
}

#[test]
#[ignore = "a 128 MiB input: run with --release -- --ignored"]
fn input_over_100_megabytes() {
    one_big_input(128 << 20);
}

/// 11,000 pairs make about 66,000 output sections (6 per pair): more than a
/// 16-bit section index can name, so the output uses extended numbering; it
/// must read back with every section.
#[test]
#[ignore = "22,000 inputs: run with --release -- --ignored"]
fn more_sections_than_16_bit_indices() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let opts = LinkOptions {
        arch: Some(SmArch::new(90)),
        inputs: pairs(11_000),
        ..LinkOptions::default()
    };
    let out = linker_core::link(&opts)
        .unwrap_or_else(|f| panic!("{:?}", f.errors().take(3).collect::<Vec<_>>()));
    let c = Cubin::parse(&out.cubin).expect("output parses");
    assert!(c.sections.len() > 0xff00, "{} sections", c.sections.len());
    assert_eq!(c.header.e_shnum, 0, "extended numbering");
}
