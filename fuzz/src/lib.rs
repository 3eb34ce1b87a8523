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
