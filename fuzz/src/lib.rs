//! The bodies of culink's fuzz targets, shared by the libFuzzer binaries
//! (`fuzz_targets/*.rs`, run with `cargo +nightly fuzz run TARGET`) and the
//! stable-Rust mutation driver (`src/bin/fuzz-stable.rs`).
//!
//! A target *fails* by panicking; every `Err` from culink is a correct answer to
//! malformed input. Beyond "no panic" the targets check a few properties:
//!
//! * `cubin_reader`: whatever [`Cubin::parse`] accepts can be dumped, and diffs
//!   as equivalent to itself; every section's sub-format parsers run without panic.
//! * `link_mutated`: the input is linked alone and together with real fixture
//!   objects; whenever the link succeeds, its output must parse again with
//!   [`Cubin::parse`] (culink never writes a cubin its own reader rejects).

#![warn(missing_docs)]

use linker_core::cubin::{callgraph, compat, eiattr, notes};
use linker_core::{Cubin, InputSource, LinkOptions, SmArch};
use std::sync::Arc;

pub mod mutate;

/// Parses `data` as a cubin; if that succeeds, dumps it, diffs it against itself
/// and runs every sub-format parser over every section.
pub fn cubin_reader(data: &[u8]) {
    let Ok(cubin) = Cubin::parse(data) else {
        return;
    };
    let _ = linker_core::dump::dump_to_string(&cubin);
    // Content the diff cannot decode is reported on both sides, by design.
    let diffs: Vec<_> = linker_core::diff::diff(&cubin, &cubin)
        .into_iter()
        .filter(|d| !d.message.contains("undecodable"))
        .collect();
    assert!(
        diffs.is_empty(),
        "a cubin differs from itself: {:?}",
        diffs.iter().map(|d| &d.message).collect::<Vec<_>>()
    );
    let _ = linker_core::diff::check_program_headers(&cubin);
    for s in &cubin.sections {
        subformats(s.data);
    }
}

/// Runs every sub-format parser (and the decoders on what they accept) over `data`.
pub fn subformats(data: &[u8]) {
    if let Ok(records) = eiattr::parse(data) {
        for r in &records {
            let _ = r.symbol_indices();
            let _ = r.sym_value();
            let _ = r.words();
            let _ = r.int_value();
            let _ = eiattr::rewrite_symbols(r, |s| s.checked_add(1));
        }
    }
    let _ = compat::parse(data);
    if let Ok(list) = notes::parse_notes(data) {
        for n in &list {
            let _ = n.tkinfo();
            let _ = n.cuinfo();
        }
    }
    let _ = callgraph::parse_callgraph(data);
    let _ = callgraph::CallGraph::parse(data);
    let _ = callgraph::parse_prototypes(data);
}

macro_rules! partners {
    ($($sm:literal),*) => {
        &[$(( $sm,
            include_bytes!(concat!("../../tests/link/call_extern/a.sm_", stringify!($sm), ".o")) as &[u8],
            include_bytes!(concat!("../../tests/link/call_extern/b.sm_", stringify!($sm), ".o")) as &[u8],
        )),*]
    };
}

/// Real objects the mutated input is linked with: `call_extern`'s `a` and `b`, per SM.
pub const PARTNERS: &[(u32, &[u8], &[u8])] = partners!(75, 80, 86, 89, 90);

/// An `ar` archive of `members` (GNU format, short names).
pub fn archive(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = b"!<arch>\n".to_vec();
    for (name, data) in members {
        let header = format!(
            "{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n",
            format!("{name}/"),
            0,
            0,
            0,
            644,
            data.len()
        );
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        if data.len() % 2 == 1 {
            out.push(b'\n');
        }
    }
    out
}

/// A fatbinary container holding `elfs` as uncompressed ELF entries, `(sm, bytes)`.
pub fn fatbin(elfs: &[(u32, &[u8])]) -> Vec<u8> {
    let mut body = Vec::new();
    for (sm, data) in elfs {
        let padded = data.len().div_ceil(8) * 8;
        let mut h = [0u8; 64];
        h[0..2].copy_from_slice(&2u16.to_le_bytes()); // ELF
        h[2..4].copy_from_slice(&0x0101u16.to_le_bytes());
        h[4..8].copy_from_slice(&64u32.to_le_bytes());
        h[8..16].copy_from_slice(&(padded as u64).to_le_bytes());
        h[24..26].copy_from_slice(&7u16.to_le_bytes());
        h[26..28].copy_from_slice(&1u16.to_le_bytes());
        h[28..32].copy_from_slice(&sm.to_le_bytes());
        body.extend_from_slice(&h);
        body.extend_from_slice(data);
        body.resize(body.len() + padded - data.len(), 0);
    }
    let mut out = Vec::with_capacity(16 + body.len());
    out.extend_from_slice(&0xBA55_ED50u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

/// Container seeds the fixtures lack: archives and fatbinaries of the
/// `call_extern` objects (sm_90 and mixed SMs).
pub fn synthetic_seeds() -> Vec<Vec<u8>> {
    let p90 = PARTNERS[PARTNERS.len() - 1];
    let p80 = PARTNERS[1];
    vec![
        archive(&[("a.o", p90.1), ("b.o", p90.2)]),
        archive(&[("b.o", p80.2)]),
        fatbin(&[(90, p90.1)]),
        fatbin(&[(80, p80.2), (90, p90.2)]),
        archive(&[("f.fatbin", &fatbin(&[(90, p90.2)]))]),
    ]
}

fn bytes(name: &str, data: &[u8]) -> InputSource {
    InputSource::Bytes {
        name: name.to_string(),
        data: Arc::from(data),
    }
}

/// Links `inputs` for `sm`; a successful output must be a cubin culink can read back.
pub fn link_and_check(sm: u32, inputs: Vec<InputSource>) {
    let opts = LinkOptions {
        arch: Some(SmArch::new(sm)),
        inputs,
        recorded_args: Some("-arch sm_fuzz".into()),
        ..LinkOptions::default()
    };
    if let Ok(out) = linker_core::link(&opts) {
        if let Err(e) = Cubin::parse(&out.cubin) {
            panic!("culink wrote a cubin its reader rejects: {e}");
        }
    }
}

/// Links the (mutated) object `data` alone, after `a` and before `b` of the
/// `call_extern` fixture, for the SM its header names (sm_90 when unreadable).
pub fn link_mutated(data: &[u8]) {
    let sm = Cubin::parse(data).map(|c| c.arch().sm).unwrap_or(90);
    let &(sm, a, b) = PARTNERS
        .iter()
        .find(|p| p.0 == sm)
        .unwrap_or(&PARTNERS[PARTNERS.len() - 1]);
    link_and_check(sm, vec![bytes("fuzz.o", data)]);
    link_and_check(sm, vec![bytes("a.o", a), bytes("fuzz.o", data)]);
    link_and_check(sm, vec![bytes("fuzz.o", data), bytes("b.o", b)]);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The synthetic containers are what culink's input readers accept, and link.
    #[test]
    fn synthetic_seeds_link() {
        let seeds = synthetic_seeds();
        for (i, s) in seeds.iter().enumerate() {
            let inputs = vec![bytes("seed", s)];
            let r = linker_core::link(&LinkOptions {
                arch: Some(SmArch::new(90)),
                inputs,
                ..LinkOptions::default()
            });
            let errors: Vec<String> = match &r {
                Ok(_) => Vec::new(),
                Err(f) => f.errors().map(|e| e.to_string()).collect(),
            };
            // Seeds 1 and 3 hold only b.o's device function: they link too.
            assert!(
                errors.iter().all(|e| !e.contains("malformed")
                    && !e.contains("fatbinary")
                    && !e.contains("archive")),
                "seed {i}: {errors:?}"
            );
        }
    }
}
