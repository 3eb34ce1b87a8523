//! culink links every fixture of `tests/link` like nvlink does:
//!
//! * `expect: ok` cases: `linker_core::link` succeeds at every arch, the output is
//!   equivalent to nvlink's (`diff::diff` empty) and satisfies the program-header
//!   rule (`check_program_headers`);
//! * `expect: error` cases: the link fails with an Error diagnostic that names every
//!   symbol (and arch) nvlink's message quotes;
//! * the output is byte-identical whatever the rayon pool size, and from one run to
//!   the next;
//! * `cuobjdump -elf -sass` and `nvdisasm` read every output cleanly (skipped when
//!   the tools are absent, except under `CI=true`: see `common::nv_tool`).
//!
//! Failures are collected over all cases and reported together.

mod common;

use common::{cases, nv_tool, Case, Reference};
use linker_core::diff::{check_program_headers, diff, error_classes};
use linker_core::{link, Cubin, InputSource, LinkFailure, LinkOptions, LinkOutput, SmArch};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Fixture cases culink does not yet link like nvlink, with the reason. Each is
/// still linked and diffed, and the test fails if a listed case starts to
/// match (so the list cannot go stale) or an unlisted case differs.
/// Tracked in docs/differences.md ("Known gaps").
const KNOWN_GAPS: &[(&str, &str)] = &[];

/// How many nvlink -r outputs `check_nvlink_r_input` compared.
static NVLINK_R_COMPARED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// One known gap: case, archs, scope, why. A scope tolerates a difference
/// whose text holds every string of one of its entries, a whole failure by
/// its first line, or single lines of a failure by entries naming both
/// (see [`tolerate_in_failure`]).
type ArchGap = (&'static str, &'static [u32], Option<Scope>, &'static str);

/// What a known gap tolerates: any entry whose strings all match.
type Scope = &'static [&'static [&'static str]];

/// The note `culink diff` appends to an instruction that differs in its
/// scheduling control field only.
const SCHEDULING_ONLY: &str = "(scheduling control field only";

/// Whether `scope` tolerates a difference or failure with this text.
fn in_scope(scope: Scope, text: &str) -> bool {
    scope.iter().any(|all| all.iter().all(|s| text.contains(s)))
}

/// What of failure `f` (its first line a header, the rest its differences
/// or diagnostics) `scope` leaves: `None` when it tolerates all of it, and
/// how many parts it tolerated. An entry whose strings the header holds
/// covers the whole failure (e.g. nvlink's relink of a `-r` output failing);
/// an entry naming the header *and* a difference (some of its strings in
/// the header, the others in that line) covers that line of it only. A
/// relink's differences that merely match an entry meant for the direct
/// link (no string in the header) stay.
fn tolerate_in_failure(scope: Scope, f: &str) -> (Option<String>, usize) {
    let mut lines = f.lines();
    let header = lines.next().unwrap_or("");
    if in_scope(scope, header) {
        return (None, 1);
    }
    let covers = |line: &str| {
        scope.iter().any(|all| {
            let (in_header, in_line): (Vec<&&str>, Vec<&&str>) =
                all.iter().partition(|s| header.contains(**s));
            !in_header.is_empty()
                && !in_line.is_empty()
                && in_line.iter().all(|s| line.contains(**s))
        })
    };
    let (covered, left): (Vec<&str>, Vec<&str>) = lines.partition(|l| covers(l));
    match (covered.len(), left.is_empty()) {
        (0, _) => (Some(f.to_string()), 0),
        (n, true) => (None, n),
        (n, false) => (Some(format!("{header}\n{}", left.join("\n"))), n),
    }
}

/// Like [`KNOWN_GAPS`], for some archs of a case only (the case's other archs
/// must link like nvlink). With a scope, only differences and failures whose
/// text names one of its strings are tolerated (everything else in those
/// links must still match nvlink). The last entry naming a case and arch
/// counts.
/// Tracked in docs/blackwell.md ("Known gaps").
const KNOWN_ARCH_GAPS: &[ArchGap] = &[
    (
        "bank2_relink_order",
        &[75, 89, 90, 100, 120],
        Some(&[
            &[".nv.constant"],
            &["nvlink's -r output", "section .nv.constant2.k size: ours 0x28, reference 0x1c"],
            &["nvlink's -r output", ".nv.merc.nv.constant.optimizer.k"],
        ]),
        "nvlink -r appends the table of a weak copy that lost when read to the winner's `.nv.constant2.<f>` (and its Mercury twin to the winner's); culink -r keeps it as a second section of that name attached to the winner, which every relink by culink lays out as the same block (they equal nvlink's direct link). And nvlink's final link of its own -r output takes only the winner's 0x10 bytes of that merged 0x1c-byte table into k's bank (0x1c; culink's link of the object and nvlink's direct link: 0x28)",
    ),
    (
        "bank2_relink_order",
        &[100, 120],
        Some(&[
            &[".nv.constant"],
            &["nvlink's link of it", ".nv.constant2.k"],
            &["nvlink's link of it", ".nv.merc.nv.constant.optimizer.k"],
            &["nvlink's -r output", "section .nv.constant2.k size: ours 0x28, reference 0x1c"],
            &["nvlink's -r output", ".nv.merc.nv.constant.optimizer.k"],
        ]),
        "and on Blackwell nvlink's relink of that output pairs the second table with the first one's Mercury twin (culink's relinks equal the direct link)",
    ),
    (
        "bank2_kernel_loser_table_r",
        &[75, 89, 90, 100, 120],
        Some(&[
            &[".nv.constant"],
            &["nvlink's -r output", ".nv.constant2.k"],
            &["nvlink's -r output", ".nv.merc.nv.constant.optimizer.k"],
        ]),
        "as bank2_relink_order, for a kernel's table: nvlink -r appends the losing copy's table to the winning kernel's `.nv.constant2.<k>` (and Mercury twin), culink -r keeps it as a second section of that name, which culink's relinks append to the kernel's bank as the direct link does; nvlink's relink of its own -r output leaves the bank 8 bytes short (0x18; direct link 0x20)",
    ),
    (
        "sb_realloc_shares",
        &[100, 103],
        Some(&[&["18DeviceReduceKernel", SCHEDULING_ONLY]]),
        "nvlink labels CUB's multi-tile reduction kernel otherwise (a shared-memory store's read scoreboard, then the groups after it: which of the free ones its allocator takes there is not what culink's replay takes); the single-tile kernel, whose shares ptxas made for want of a free scoreboard, the point of the case, must match (docs/blackwell.md section 8)",
    ),
    (
        "sb_realloc_shares",
        &[120, 121],
        Some(&[
            &["18DeviceReduceKernel", SCHEDULING_ONLY],
            &["28DeviceReduceSingleTileKernel", SCHEDULING_ONLY],
        ]),
        "as at sm_100, and at sm_120/121 the single-tile kernel too is labelled otherwise by nvlink after the shares (scheduling control fields only)",
    ),
    (
        "sb_realloc_onesweep",
        &[100, 103, 120, 121],
        Some(&[&["29DeviceRadixSortOnesweepKernel", SCHEDULING_ONLY]]),
        "nvlink labels CUB's onesweep radix-sort kernel otherwise (ptxas' labels differ from nvlink's in 2,393 of its 2,680 instructions, culink's in 220; 124 of 2,624 at sm_120/121): it also regroups producers where the registers say, which the replay does not decode; the unit test `onesweep_comes_closer_to_nvlink` bounds the count (docs/blackwell.md section 8)",
    ),
    (
        "bank2_replaced_slot_r",
        &[75, 90],
        Some(&[&["f.const_opt.0.12#"]]),
        "nvlink -r resolves the winner's references to its table (culink -r keeps them, docs/differences.md), so neither of the two `f.const_opt.0.12` in `.nv.constant2.f` (the winner's and the replaced copy's, in both outputs) has a referrer in nvlink's output and `culink diff` names them by content; in culink's the winner's is named by its `.text.f` relocation",
    ),
    (
        "bank2_replaced_slot_r",
        &[100, 120],
        Some(&[&[
            "culink's link of nvlink's -r output",
            "contents of .nv.constant2.k",
            "differ at offset 0x18 (6 bytes differ): ours 00 00 00 00 00 00 00 00, reference 30 01 00 00 50 01 00 00",
        ]]),
        "nvlink -r (like culink -r now) writes the winner's table as zeros with both copies' Mercury relocations; nvlink's final link of that object writes the SASS entries from the Mercury targets (its finalizer maps Mercury to SASS offsets, which the objects do not carry), culink's keeps the zeros",
    ),
    (
        "relocatable_frames",
        &[100, 120],
        Some(&[
            &[".debug_frame size: ours 0x530, reference 0x5a0"],
            &["contents of .debug_frame differ at offset 0x10c (724 bytes differ)"],
        ]),
        "in a -r output every replaced weak copy is live, so nvlink's rewrite of a replaced copy's FDE (docs/blackwell.md section 5) shows there (culink -r writes those FDEs as they are: the scope pins its size and differing bytes, so that a change to them shows); the relinks, frames included, equal nvlink's direct link",
    ),
];

/// The options of `case`'s link at `sm`, as the CLI would build them.
fn options(case: &Case, sm: u32) -> LinkOptions {
    let mut kernels_used: Option<Vec<String>> = None;
    let mut it = case.options.iter();
    while let Some(o) = it.next() {
        let value = match o.split_once('=') {
            Some((name, v)) if name.trim_start_matches('-') == "kernels-used" => {
                Some(v.to_string())
            }
            None if o.trim_start_matches('-') == "kernels-used" => it.next().cloned(),
            _ => None,
        };
        if let Some(v) = value {
            kernels_used
                .get_or_insert_with(Vec::new)
                .extend(v.split(',').map(String::from));
        }
    }
    let mut variables_used: Option<Vec<String>> = None;
    let mut it = case.options.iter();
    while let Some(o) = it.next() {
        let value = match o.split_once('=') {
            Some((name, v)) if name.trim_start_matches('-') == "variables-used" => {
                Some(v.to_string())
            }
            None if o.trim_start_matches('-') == "variables-used" => it.next().cloned(),
            _ => None,
        };
        if let Some(v) = value {
            variables_used
                .get_or_insert_with(Vec::new)
                .extend(v.split(',').map(String::from));
        }
    }
    LinkOptions {
        variables_used,
        arch: Some(SmArch::parse(&case.sm(sm)).expect("fixture arch")),
        inputs: case
            .input_paths(sm)
            .into_iter()
            .map(InputSource::File)
            .collect(),
        kernels_used,
        relocatable: is_relocatable(case),
        preserve_relocs: case
            .options
            .iter()
            .any(|o| o.trim_start_matches('-') == "preserve-relocs"),
        device_debug: case.options.iter().any(|o| o == "-g"),
        ..LinkOptions::default()
    }
}

/// Whether the case is a relocatable (`-r`) link.
fn is_relocatable(case: &Case) -> bool {
    case.options.iter().any(|o| o == "-r")
}

/// Differences between culink's and nvlink's `-r` outputs that are deliberate
/// (docs/differences.md): culink keeps the constant-bank and shared-memory
/// relocations nvlink -r resolves (so text and relocations differ), and keeps
/// `extern .shared` references as they are (no `externsharedinstance`, no
/// `.nv_debug.shared` holding them), and keeps `.common` variables common
/// (nvlink -r allocates them in `.nv.global`). The relink checks cover what
/// these hide.
fn tolerated_in_relocatable(d: &linker_core::diff::Difference, commons: &[String]) -> bool {
    use linker_core::diff::DiffKind;
    let s = d.to_string();
    // (Not an extra section: a second `.nv.shared.<k>` of one name, which
    // made nvdisasm hang, hid behind "shared" once.)
    let extra_section = s.starts_with("extra section ");
    // nvlink -r's `.nv.global` (only commons' then) and its section symbols,
    // and nvlink's allocated twins of the variables ours keeps common.
    let allocated_common = s.starts_with("missing ")
        && (s.contains("section .nv.global (")
            || s.contains("symbol `.nv.global`")
            || commons
                .iter()
                .any(|n| s.contains(&format!("symbol `{n}` (")) && s.contains("in .nv.global")));
    matches!(d.kind, DiffKind::Text | DiffKind::Relocation)
        || (s.contains("shared") && !extra_section)
        || s.contains("`dyn`")
        || s.contains("in COMMON")
        || s.contains("section ours COMMON")
        || allocated_common
}

/// A call-graph entry ours lists once more than nvlink -r does: culink's
/// `-r` output keeps one CALLS / ADDRESS_REFS entry per copy of the caller
/// (a weak copy replaced by a later definition and the winner), so that its
/// relink lists them as nvlink's direct link does; nvlink -r keeps one, and
/// its own relink then differs from its direct link (docs/differences.md).
/// Only a repeat is tolerated: the reference must list the same entry.
fn repeated_graph_entry(d: &linker_core::diff::Difference, reference_dump: &str) -> bool {
    let s = d.to_string();
    d.kind == linker_core::diff::DiffKind::CallGraph
        && s.split_once(": extra entry ")
            .and_then(|(_, rest)| rest.strip_suffix(" in ours"))
            .is_some_and(|e| {
                (e.starts_with("CALLS: ") || e.starts_with("ADDRESS_REFS: "))
                    && reference_dump.lines().any(|l| l.trim() == e)
            })
}

/// The size of the section called `name` (0 when there is none).
fn section_size(c: &Cubin<'_>, name: &str) -> u64 {
    c.sections
        .iter()
        .find(|s| s.name == name)
        .map_or(0, |s| s.size)
}

/// The names ours keeps `.common` where the reference allocated them (the
/// symbols a `-r` difference shows in `COMMON` on our side).
fn kept_commons(d: &[linker_core::diff::Difference]) -> Vec<String> {
    d.iter()
        .map(|x| x.to_string())
        .filter(|s| s.contains("in COMMON") || s.contains("section ours COMMON"))
        .filter_map(|s| Some(s.split('`').nth(1)?.to_string()))
        .collect()
}

/// Differences a relink of a `-r` output may show against the direct link:
/// the tkinfo notes (one linker note instead of the inputs'). (Dead
/// functions' frame ranges match: culink's `-r` output keeps the
/// `R_CUDA_UNUSED_CLEAR64` / `R_MERCURY_UNUSED_CLEAR64` entries nvlink -r
/// drops.)
fn tolerated_in_relink(d: &linker_core::diff::Difference) -> bool {
    d.kind == linker_core::diff::DiffKind::Note
}

/// A `-r` case: our relocatable output, linked again (final link) by culink
/// and, when the tool is there, by nvlink, must be equivalent to the direct
/// final link of the same inputs by nvlink (run here when nvlink is present,
/// otherwise culink's direct link stands in).
fn check_relink(case: &Case, sm: u32, ours: &[u8], fails: &mut Vec<String>) {
    let tag = format!("{} sm_{sm} (relink of -r output)", case.name);
    let dir = std::env::temp_dir().join(format!(
        "culink-relink-{}-{}-{sm}",
        std::process::id(),
        case.name
    ));
    let _ = std::fs::create_dir_all(&dir);
    let robj = dir.join("r.o");
    std::fs::write(&robj, ours).expect("write r.o");
    let mut direct_opts = options(case, sm);
    direct_opts.relocatable = false;
    let nvlink = nv_tool("nvlink");
    let reference: Vec<u8> = match &nvlink {
        Some(nv) => {
            let inputs = case.input_paths(sm);
            run_nvlink(nv, case.sm(sm), &[], &inputs, &dir.join("direct.cubin"))
                .unwrap_or_else(|e| panic!("{tag}: nvlink direct link failed:\n{e}"))
        }
        None => match link(&direct_opts) {
            Ok(o) => o.cubin,
            Err(f) => {
                fails.push(format!(
                    "{tag}: direct link failed:\n{}",
                    render_failure(&f)
                ));
                return;
            }
        },
    };
    let theirs = Cubin::parse(&reference).expect("reference parses");
    let mut relinked: Vec<(String, Vec<u8>)> = Vec::new();
    let mut again = direct_opts.clone();
    again.inputs = vec![InputSource::File(robj.clone())];
    match link(&again) {
        Ok(o) => relinked.push(("culink".into(), o.cubin)),
        Err(f) => fails.push(format!(
            "{tag}: culink relink failed:\n{}",
            render_failure(&f)
        )),
    }
    // Split links: the `-r` output of all inputs but the last (first) one,
    // linked before (after) that input, must also equal the direct link —
    // its frames then land after another object's, its functions may die.
    let all = direct_opts.inputs.clone();
    if all.len() >= 2 {
        for (name, part, rest_first) in [
            ("prefix", all[..all.len() - 1].to_vec(), false),
            ("suffix", all[1..].to_vec(), true),
        ] {
            let mut r = options(case, sm);
            r.inputs = part;
            let robj = dir.join(format!("r_{name}.o"));
            match link(&r) {
                Ok(o) => std::fs::write(&robj, o.cubin).expect("write split -r output"),
                Err(f) => {
                    fails.push(format!(
                        "{tag}: -r of the {name} failed:\n{}",
                        render_failure(&f)
                    ));
                    continue;
                }
            }
            let mut fin = direct_opts.clone();
            fin.inputs = if rest_first {
                vec![all[0].clone(), InputSource::File(robj)]
            } else {
                vec![InputSource::File(robj), all[all.len() - 1].clone()]
            };
            match link(&fin) {
                Ok(o) => relinked.push((format!("culink ({name} -r)"), o.cubin)),
                Err(f) => fails.push(format!(
                    "{tag}: culink link of the {name}'s -r output failed:\n{}",
                    render_failure(&f)
                )),
            }
        }
    }
    if let Some(nv) = &nvlink {
        let out = dir.join("relinked.cubin");
        match run_nvlink(nv, case.sm(sm), &[], std::slice::from_ref(&robj), &out) {
            Ok(bytes) => relinked.push(("nvlink".into(), bytes)),
            Err(e) => fails.push(format!("{tag}: nvlink cannot link our -r output:\n{e}")),
        }
    }
    for (tool, bytes) in relinked {
        let c = match Cubin::parse(&bytes) {
            Ok(c) => c,
            Err(e) => {
                fails.push(format!("{tag}: {tool} relink does not parse: {e}"));
                continue;
            }
        };
        push_differences(
            fails,
            &format!("{tag}: {tool}'s link of it differs from the direct link"),
            &c,
            &theirs,
            |d| !tolerated_in_relink(d),
        );
    }
    if let Some(nv) = &nvlink {
        check_nvlink_r_input(case, sm, nv, &dir, &tag, fails);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Build systems also hand culink objects that nvlink -r made: culink's
/// final link of nvlink's `-r` output of the case's inputs must equal
/// nvlink's final link of that same output (nvlink -r resolves what it
/// resolves, rightly or not; both final links see the same object). Found
/// on a Thrust object: nvlink -r writes windows holding nothing, which
/// nvlink's final link drops (fixture `relink_nvlink_r_shared`).
fn check_nvlink_r_input(
    case: &Case,
    sm: u32,
    nv: &Path,
    dir: &Path,
    tag: &str,
    fails: &mut Vec<String>,
) {
    let arch = case.sm(sm);
    let nr = dir.join("nvlink_r.o");
    // Every -r case must be comparable: a case nvlink -r refuses, or whose
    // -r output nvlink cannot link, would test nothing here.
    if let Err(e) = run_nvlink(nv, arch.clone(), &["-r"], &case.input_paths(sm), &nr) {
        fails.push(format!(
            "{tag}: nvlink -r refuses the inputs, nothing to compare culink's link of its output with:\n{e}"
        ));
        return;
    }
    let out = dir.join("nvlink_of_nvlink_r.cubin");
    let reference = match run_nvlink(nv, arch, &[], std::slice::from_ref(&nr), &out) {
        Ok(r) => r,
        Err(e) => {
            fails.push(format!(
                "{tag}: nvlink cannot link its own -r output, nothing to compare with:\n{e}"
            ));
            return;
        }
    };
    NVLINK_R_COMPARED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut opts = options(case, sm);
    opts.relocatable = false;
    opts.inputs = vec![InputSource::File(nr)];
    let ours = match link(&opts) {
        Ok(o) => o.cubin,
        Err(f) => {
            fails.push(format!(
                "{tag}: culink cannot link nvlink's -r output:\n{}",
                render_failure(&f)
            ));
            return;
        }
    };
    let (a, b) = (
        Cubin::parse(&ours).expect("ours parses"),
        Cubin::parse(&reference).expect("reference parses"),
    );
    push_differences(
        fails,
        &format!("{tag}: culink's link of nvlink's -r output differs from nvlink's"),
        &a,
        &b,
        |_| true,
    );
}

/// Adds one failure, `header` then one line per difference of `ours` from
/// `reference` that `keep` keeps, when there is any.
fn push_differences(
    fails: &mut Vec<String>,
    header: &str,
    ours: &Cubin<'_>,
    reference: &Cubin<'_>,
    keep: impl Fn(&linker_core::diff::Difference) -> bool,
) {
    let d: Vec<String> = diff(ours, reference)
        .into_iter()
        .filter(|d| keep(d))
        .map(|d| format!("    {:?}: {d}", d.kind))
        .collect();
    if !d.is_empty() {
        fails.push(format!("{header}:\n{}", d.join("\n")));
    }
}

/// Runs `nvlink -arch=<arch> <options> <inputs> -o <out>`; the output's
/// bytes, or nvlink's stderr when it fails.
fn run_nvlink(
    nv: &Path,
    arch: String,
    options: &[&str],
    inputs: &[PathBuf],
    out: &Path,
) -> Result<Vec<u8>, String> {
    let st = Command::new(nv)
        .arg(format!("-arch={arch}"))
        .args(options)
        .args(inputs)
        .arg("-o")
        .arg(out)
        .output()
        .expect("run nvlink");
    if !st.status.success() {
        return Err(String::from_utf8_lossy(&st.stderr).into_owned());
    }
    Ok(std::fs::read(out).expect("read nvlink output"))
}

fn link_case(case: &Case, sm: u32) -> Result<LinkOutput, LinkFailure> {
    link(&options(case, sm))
}

/// Every diagnostic of a failure, one per line, for messages.
fn render_failure(f: &LinkFailure) -> String {
    f.diagnostics
        .iter()
        .map(|d| format!("    {:?}: {}", d.severity, d.error))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `'…'`-quoted words of nvlink's stderr, in order, without repeats. A quote
/// opens only at the start of a line or after whitespace (so the apostrophe of
/// "doesn't" does not), and the quoted word holds no whitespace.
fn quoted(stderr: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in stderr.lines() {
        let b = line.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'\'' && (i == 0 || b[i - 1].is_ascii_whitespace()) {
                if let Some(len) = line[i + 1..].find('\'') {
                    let q = &line[i + 1..i + 1 + len];
                    if !q.is_empty() && !q.contains(char::is_whitespace) {
                        if !out.iter().any(|o| o == q) {
                            out.push(q.to_string());
                        }
                        i += len + 2;
                        continue;
                    }
                }
            }
            i += 1;
        }
    }
    out
}

/// Checks one `expect: ok` link; appends problems to `fails`.
/// Returns how many differences `tolerate` excused.
fn check_ok(
    case: &Case,
    sm: u32,
    reference: &Path,
    tolerate: Option<Scope>,
    fails: &mut Vec<String>,
) -> usize {
    let tag = format!("{} sm_{sm}", case.name);
    let out = match link_case(case, sm) {
        Ok(o) => o,
        Err(f) => {
            fails.push(format!(
                "{tag}: link failed, nvlink succeeds:\n{}",
                render_failure(&f)
            ));
            return 0;
        }
    };
    let ref_bytes = std::fs::read(reference)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", reference.display()));
    let theirs = Cubin::parse(&ref_bytes)
        .unwrap_or_else(|e| panic!("{}: nvlink reference unreadable: {e}", reference.display()));
    let ours = match Cubin::parse(&out.cubin) {
        Ok(c) => c,
        Err(e) => {
            fails.push(format!("{tag}: our output does not parse: {e}"));
            return 0;
        }
    };
    let mut d = diff(&ours, &theirs);
    let before = d.len();
    if let Some(scope) = tolerate {
        d.retain(|x| !in_scope(scope, &x.to_string()));
    }
    let tolerated = before - d.len();
    if is_relocatable(case) {
        let commons = kept_commons(&d);
        let reference_dump = linker_core::dump::dump_to_string(&theirs);
        let repeats = d
            .iter()
            .filter(|x| repeated_graph_entry(x, &reference_dump))
            .count();
        // The section is larger by the repeats (8 bytes each), no more.
        let grown_by_repeats = format!(
            "section .nv.callgraph size: ours {:#x}, reference {:#x}",
            section_size(&theirs, ".nv.callgraph") + 8 * repeats as u64,
            section_size(&theirs, ".nv.callgraph"),
        );
        d.retain(|x| {
            let grown = repeats > 0 && x.to_string() == grown_by_repeats;
            !(tolerated_in_relocatable(x, &commons)
                || repeated_graph_entry(x, &reference_dump)
                || grown)
        });
        if ours.header.e_type != linker_core::elf::ET_REL || ours.header.e_phnum != 0 {
            fails.push(format!(
                "{tag}: -r output is not ET_REL without program headers"
            ));
        }
        check_relink(case, sm, &out.cubin, fails);
    }
    if !d.is_empty() {
        let lines: Vec<String> = d.iter().map(|x| format!("    {:?}: {x}", x.kind)).collect();
        fails.push(format!(
            "{tag}: {} difference(s) from nvlink:\n{}",
            d.len(),
            lines.join("\n")
        ));
    }
    let p = if is_relocatable(case) {
        Vec::new()
    } else {
        check_program_headers(&ours)
    };
    if !p.is_empty() {
        let lines: Vec<String> = p.iter().map(|x| format!("    {x}")).collect();
        fails.push(format!(
            "{tag}: program-header rule violated:\n{}",
            lines.join("\n")
        ));
    }
    tolerated
}

/// Checks one `expect: error` link against nvlink's stderr; appends problems to `fails`.
fn check_error(case: &Case, sm: u32, nvlink_stderr: &str, fails: &mut Vec<String>) {
    let tag = format!("{} sm_{sm}", case.name);
    let failure = match link_case(case, sm) {
        Ok(o) => {
            fails.push(format!(
                "{tag}: link succeeded ({} bytes), nvlink fails with:\n{nvlink_stderr}",
                o.cubin.len()
            ));
            return;
        }
        Err(f) => f,
    };
    let errors: Vec<String> = failure.errors().map(|e| e.to_string()).collect();
    if errors.is_empty() {
        fails.push(format!(
            "{tag}: link failed without an Error diagnostic:\n{}",
            render_failure(&failure)
        ));
        return;
    }
    let all = errors.join("\n");
    // Input file names are quoted by nvlink as given on its command line (bare names);
    // culink names the paths it was given, and which file a "first defined in" points
    // at is not a fact we require. Every other quoted word (symbol, arch) must appear.
    let file_names: Vec<String> = case
        .input_paths(sm)
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    let missing: Vec<String> = quoted(nvlink_stderr)
        .into_iter()
        .filter(|q| !file_names.contains(q))
        .filter(|q| !all.contains(&format!("'{q}'")) && !all.contains(q.as_str()))
        .collect();
    if !missing.is_empty() {
        fails.push(format!(
            "{tag}: culink's errors do not mention {missing:?}\n  nvlink:\n{}  culink:\n{}",
            nvlink_stderr
                .lines()
                .map(|l| format!("    {l}\n"))
                .collect::<String>(),
            render_failure(&failure)
        ));
    }
    // And they are errors of the same kinds (a size mismatch reported next to
    // a multiple definition, not instead of it).
    let ours: String = errors.iter().map(|e| format!("error: {e}\n")).collect();
    // Register-limit errors come in nvlink's order (the entry functions').
    let (theirs_limits, ours_limits) = (
        register_limit_entries(nvlink_stderr),
        register_limit_entries(&ours),
    );
    if theirs_limits != ours_limits {
        fails.push(format!(
            "{tag}: register-limit errors in another order: nvlink {theirs_limits:?}, culink {ours_limits:?}"
        ));
    }
    let (theirs, ours) = (error_classes(nvlink_stderr), error_classes(&ours));
    if theirs != ours {
        fails.push(format!(
            "{tag}: error classes differ: nvlink {theirs:?}, culink {ours:?}\n  culink:\n{}",
            render_failure(&failure)
        ));
    }
}

/// The entry functions of the "entry function 'k' with max regcount of N calls
/// function ..." errors in `stderr`, in order.
fn register_limit_entries(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.contains("with max regcount of"))
        .filter_map(|l| quoted(l).into_iter().next())
        .collect()
}

#[test]
fn quoted_words_of_nvlink_messages() {
    assert_eq!(
        quoted("nvlink error   : Undefined reference to 'add_one' in 'a.sm_90.o'\nnvlink error   : Undefined reference to 'gcounter' in 'a.sm_90.o'\n"),
        ["add_one", "a.sm_90.o", "gcounter"]
    );
    assert_eq!(
        quoted("nvlink error   : Size doesn't match for 'wv' in 'w3.sm_90.o', first specified in 'w1.sm_90.o'\nnvlink fatal   : merge_elf failed"),
        ["wv", "w3.sm_90.o", "w1.sm_90.o"]
    );
    assert_eq!(
        quoted("nvlink fatal   : Input file 'b.sm_80.o' arch does not match target 'sm_90'"),
        ["b.sm_80.o", "sm_90"]
    );
}

#[test]
fn a_scope_covers_a_failure_by_its_header_or_single_lines_naming_both() {
    let f = "k sm_100: relink differs:\n    Contents: a at 0x18\n    Contents: b at 0x20";
    // By the header: all of it.
    assert_eq!(tolerate_in_failure(&[&["relink differs"]], f), (None, 1));
    // Header and a difference: that line only.
    let (rest, n) = tolerate_in_failure(&[&["relink differs", "a at 0x18"]], f);
    assert_eq!(n, 1);
    assert_eq!(
        rest.as_deref(),
        Some("k sm_100: relink differs:\n    Contents: b at 0x20")
    );
    assert_eq!(
        tolerate_in_failure(&[&["relink differs", "at 0x"]], f),
        (None, 2)
    );
    // A difference alone (an entry meant for the direct link): nothing.
    assert_eq!(
        tolerate_in_failure(&[&["a at 0x18"]], f),
        (Some(f.to_string()), 0)
    );
}

#[test]
fn every_fixture_links_like_nvlink() {
    let cases = cases();
    assert!(!cases.is_empty(), "no cases in tests/link");
    let mut fails = Vec::new();
    let mut n = 0;
    for case in &cases {
        let gap = KNOWN_GAPS.iter().find(|(name, _)| *name == case.name);
        let mut case_fails = Vec::new();
        for &sm in &case.archs {
            n += 1;
            // The last entry naming the case and arch (a later one may widen
            // an earlier one's scope for some archs).
            let arch_gap = KNOWN_ARCH_GAPS
                .iter()
                .rfind(|(name, archs, _, _)| *name == case.name && archs.contains(&sm));
            let scope = arch_gap.and_then(|g| g.2);
            let mut sm_fails = Vec::new();
            let mut tolerated = match case.reference(sm) {
                Reference::Cubin(path) => check_ok(case, sm, &path, scope, &mut sm_fails),
                Reference::Error { stderr, .. } => {
                    check_error(case, sm, &stderr, &mut sm_fails);
                    0
                }
            };
            if let Some(scope) = scope {
                sm_fails = sm_fails
                    .into_iter()
                    .filter_map(|f| {
                        let (rest, n) = tolerate_in_failure(scope, &f);
                        tolerated += n;
                        rest
                    })
                    .collect();
            }
            match arch_gap {
                // Scoped: the rest must match; the gap itself must still exist.
                Some((_, _, Some(_), why)) => {
                    if tolerated == 0 {
                        fails.push(format!(
                            "{} sm_{sm}: listed in KNOWN_ARCH_GAPS ({why}) but now links like nvlink: remove it from the list",
                            case.name
                        ));
                    } else {
                        eprintln!("known gap: {} sm_{sm}: {why}", case.name);
                    }
                    case_fails.extend(sm_fails);
                }
                Some((_, _, None, why)) if sm_fails.is_empty() => fails.push(format!(
                    "{} sm_{sm}: listed in KNOWN_ARCH_GAPS ({why}) but now links like nvlink: remove it from the list",
                    case.name
                )),
                Some((_, _, None, why)) => eprintln!("known gap: {} sm_{sm}: {why}", case.name),
                None => case_fails.extend(sm_fails),
            }
        }
        match gap {
            Some((_, why)) if case_fails.is_empty() => fails.push(format!(
                "{}: listed in KNOWN_GAPS ({why}) but now links like nvlink: remove it from the list",
                case.name
            )),
            Some((_, why)) => eprintln!(
                "known gap: {} ({} of {} archs differ): {why}",
                case.name,
                case_fails.len(),
                case.archs.len()
            ),
            None => fails.extend(case_fails),
        }
    }
    // (With `CULINK_FIXTURES` set, only the named cases are there.)
    let all_cases = common::chosen_cases().is_none();
    for (name, archs, _, _) in KNOWN_ARCH_GAPS.iter().filter(|_| all_cases) {
        assert!(
            cases
                .iter()
                .any(|c| c.name == *name && archs.iter().all(|a| c.archs.contains(a))),
            "KNOWN_ARCH_GAPS names a case or arch that does not exist: {name} {archs:?}"
        );
    }
    for (name, _) in KNOWN_GAPS.iter().filter(|_| all_cases) {
        assert!(
            cases.iter().any(|c| c.name == *name),
            "KNOWN_GAPS names a case that does not exist: {name}"
        );
    }
    // With nvlink present every -r case compares nvlink's -r output too.
    let compared = NVLINK_R_COMPARED.load(std::sync::atomic::Ordering::Relaxed);
    eprintln!("nvlink -r outputs linked by culink and compared: {compared}");
    if nv_tool("nvlink").is_some() && cases.iter().any(is_relocatable) {
        assert!(
            compared > 0,
            "nvlink is present but no nvlink -r output was compared"
        );
    }
    assert!(
        fails.is_empty(),
        "{} of {n} fixture links differ from nvlink:\n\n{}",
        fails.len(),
        fails.join("\n\n")
    );
}

/// CUB's onesweep radix-sort kernel (fixture `sb_realloc_onesweep`, a known
/// gap): nvlink also regroups scoreboard producers where the registers say,
/// which culink's replay does not follow, so only a bound holds — a
/// regression shows as more instructions that differ from nvlink's
/// (ptxas' own labels: 2,393 of 2,680, 2,394 of 2,624 at sm_120/121).
#[test]
fn onesweep_comes_closer_to_nvlink() {
    let Some(case) = cases()
        .into_iter()
        .find(|c| c.name == "sb_realloc_onesweep")
    else {
        // (Not among the cases `CULINK_FIXTURES` chose.)
        assert!(
            common::chosen_cases().is_some(),
            "fixture sb_realloc_onesweep is missing"
        );
        return;
    };
    let text = |cubin: &[u8]| -> Vec<[u8; 16]> {
        let c = Cubin::parse(cubin).expect("a cubin");
        let s = c
            .sections
            .iter()
            .find(|s| s.name.starts_with(".text.") && s.name.contains("OnesweepKernel"))
            .expect("the onesweep kernel's text");
        s.data
            .chunks_exact(16)
            .map(|w| w.try_into().unwrap())
            .collect()
    };
    for (sm, at_most) in [(100, 220), (103, 220), (120, 124), (121, 124)] {
        let ours = link_case(&case, sm).unwrap_or_else(|f| panic!("{}", render_failure(&f)));
        let reference = std::fs::read(case.dir.join(format!("nvlink.sm_{sm}.cubin"))).unwrap();
        let (ours, theirs) = (text(&ours.cubin), text(&reference));
        assert_eq!(ours.len(), theirs.len(), "sm_{sm}");
        let differ = ours.iter().zip(&theirs).filter(|(a, b)| a != b).count();
        assert!(
            differ <= at_most,
            "sm_{sm}: {differ} instructions differ from nvlink's (at most {at_most})"
        );
    }
}

/// Links `case` at `sm` inside a rayon pool of `threads` threads.
fn link_in_pool(case: &Case, sm: u32, threads: usize) -> Vec<u8> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("build rayon pool");
    pool.install(|| link_case(case, sm))
        .unwrap_or_else(|f| {
            panic!(
                "{} sm_{sm} ({threads} threads): link failed:\n{}",
                case.name,
                render_failure(&f)
            )
        })
        .cubin
}

#[test]
fn output_is_identical_for_any_thread_count_and_run() {
    let mut fails = Vec::new();
    let mut n = 0;
    for case in cases().iter().filter(|c| c.expect_ok) {
        // `-r` cases also at sm_100 (the Mercury family of a relocatable link).
        let archs: &[u32] = if is_relocatable(case) {
            &[90, 75, 100]
        } else {
            &[90, 75]
        };
        for &sm in archs {
            if !case.archs.contains(&sm) {
                continue;
            }
            n += 1;
            let first = link_in_pool(case, sm, 1);
            for (threads, run) in [(1, 2), (2, 1), (2, 2), (8, 1), (8, 2)] {
                let again = link_in_pool(case, sm, threads);
                if again != first {
                    let at = first
                        .iter()
                        .zip(&again)
                        .position(|(a, b)| a != b)
                        .unwrap_or(first.len().min(again.len()));
                    fails.push(format!(
                        "{} sm_{sm}: {threads} threads (run {run}) differs from 1 thread \
                         (run 1): sizes {} vs {}, first difference at byte {at:#x}",
                        case.name,
                        again.len(),
                        first.len()
                    ));
                }
            }
        }
    }
    assert!(n > 0, "no ok case at sm_90 or sm_75");
    assert!(
        fails.is_empty(),
        "non-deterministic output:\n{}",
        fails.join("\n")
    );
}

/// An [`linker_core::OutputSink`] whose windows start as garbage, as a
/// reused buffer's would: the writer must write every byte of each window.
#[derive(Default)]
struct PoisonSink {
    image: Vec<u8>,
    window: Vec<u8>,
    at: usize,
}

impl linker_core::OutputSink for PoisonSink {
    fn begin(&mut self, size: usize) -> std::io::Result<()> {
        self.image = vec![0x5a; size];
        Ok(())
    }
    fn window(&mut self, range: std::ops::Range<usize>) -> &mut [u8] {
        self.window = vec![0xa5; range.len()];
        self.at = range.start;
        &mut self.window
    }
    fn release(&mut self, range: std::ops::Range<usize>) {
        assert_eq!(range.start, self.at, "released a window that was not given");
        self.image[range].copy_from_slice(&self.window);
    }
}

#[test]
fn the_writer_writes_every_byte_of_each_window() {
    let mut n = 0;
    for case in cases().iter().filter(|c| c.expect_ok) {
        for sm in [90, 75, 100] {
            if !case.archs.contains(&sm) {
                continue;
            }
            n += 1;
            let expected = link_case(case, sm)
                .unwrap_or_else(|f| panic!("{} sm_{sm}: {}", case.name, render_failure(&f)))
                .cubin;
            let mut sink = PoisonSink::default();
            linker_core::link_to(&options(case, sm), &mut sink)
                .unwrap_or_else(|f| panic!("{} sm_{sm}: {}", case.name, render_failure(&f)));
            if let Some(at) = expected.iter().zip(&sink.image).position(|(a, b)| a != b) {
                panic!(
                    "{} sm_{sm}: byte {at:#x} depends on the sink's previous contents",
                    case.name
                );
            }
            assert_eq!(expected.len(), sink.image.len(), "{} sm_{sm}", case.name);
        }
    }
    assert!(n > 0);
}

/// Runs `tool args... file`; `Err` unless it exits 0 with no "error" on stderr
/// and prints something.
fn read_clean(tool: &Path, args: &[&str], file: &Path) -> Result<(), String> {
    let out = Command::new(tool)
        .args(args)
        .arg(file)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", tool.display()))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let name = tool.file_name().unwrap_or_default().to_string_lossy();
    if !out.status.success() || stderr.to_lowercase().contains("error") {
        return Err(format!(
            "`{name} {} {}` failed ({}): {}",
            args.join(" "),
            file.display(),
            out.status,
            stderr.trim()
        ));
    }
    if out.stdout.is_empty() {
        return Err(format!("`{name} {}` printed nothing", file.display()));
    }
    Ok(())
}

#[test]
fn nvidia_readers_accept_our_output() {
    let (Some(cuobjdump), Some(nvdisasm)) = (nv_tool("cuobjdump"), nv_tool("nvdisasm")) else {
        eprintln!("skipped: cuobjdump/nvdisasm not found (run `cargo xtask nv-tools` or set CULINK_NV_TOOLS)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("culink-link-fixtures-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    // Each tool call costs ~0.3 s of start-up: every arch of every case takes ~55 s on
    // two cores, so by default sm_75, sm_80 and sm_90 (one per SASS family), plus the
    // first arch of a case that has none of them. CULINK_TOOLS_ALL_ARCHS=1: all archs.
    let all_archs = std::env::var("CULINK_TOOLS_ALL_ARCHS").is_ok_and(|v| v == "1");
    // (our output, nvlink's reference for the same link)
    let mut files: Vec<(PathBuf, PathBuf)> = Vec::new();
    for case in cases().iter().filter(|c| c.expect_ok) {
        let mut archs: Vec<u32> = case
            .archs
            .iter()
            .copied()
            .filter(|sm| all_archs || [75, 80, 90].contains(sm))
            .collect();
        if archs.is_empty() {
            archs.push(case.archs[0]);
        }
        for sm in archs {
            let Ok(out) = link_case(case, sm) else {
                // Reported by `every_fixture_links_like_nvlink`.
                continue;
            };
            let path = dir.join(format!("{}.sm_{sm}.cubin", case.name));
            std::fs::write(&path, &out.cubin).expect("write output");
            files.push((path, case.dir.join(format!("nvlink.{}.cubin", case.sm(sm)))));
        }
    }
    assert!(
        files
            .iter()
            .any(|(f, _)| f.to_string_lossy().ends_with(".sm_75.cubin"))
            && files
                .iter()
                .any(|(f, _)| f.to_string_lossy().ends_with(".sm_90.cubin")),
        "no sm_75 / sm_90 outputs to check"
    );
    let next = std::sync::atomic::AtomicUsize::new(0);
    let fails = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((path, reference)) = files.get(i) else {
                    break;
                };
                let tools: [(&Path, &[&str]); 2] =
                    [(&cuobjdump, &["-elf", "-sass"]), (&nvdisasm, &[])];
                for (tool, args) in tools {
                    // A rejection counts only when the tool reads nvlink's
                    // output of the same link (cuobjdump rejects nvlink's own
                    // sm_90+ `cu_debug_loc_undef_label` output: "Checked Data
                    // was Invalid").
                    if let Err(e) = read_clean(tool, args, path) {
                        if read_clean(tool, args, reference).is_ok() {
                            fails.lock().unwrap().push(e);
                        }
                    }
                }
            });
        }
    });
    let mut fails = fails.into_inner().unwrap();
    fails.sort();
    if fails.is_empty() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(
        fails.is_empty(),
        "{} of {} tool runs rejected our output (files kept in {}):\n{}",
        fails.len(),
        2 * files.len(),
        dir.display(),
        fails.join("\n")
    );
}
