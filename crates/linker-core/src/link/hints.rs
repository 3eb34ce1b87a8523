//! Hints for undefined references (nvlink gives none), added to the
//! relocate phase's errors before the link stops:
//!
//! - a **near-miss** name defined in the link (edit distance; e.g. a mangled
//!   name that differs only in one parameter type: `_Z3addii` / `_Z3addif`);
//! - an **archive member for another architecture** that defines the name
//!   (an input archive or a `-l` library built without code for `-arch`);
//! - a **library on the search path not named with `-l`** (`libNAME.a` in a
//!   `-L` directory or `LIBRARY_PATH`) that defines it.
//!
//! Only the error path pays for this; archives are read once per link.

use super::load::{archive_definitions, find_library};
use super::symbols::SymbolDb;
use super::{Diags, InputFile};
use crate::arch::SmArch;
use crate::config::{InputSource, LinkOptions, Severity};
use crate::elf::STB_LOCAL;
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

/// Architectures looked at for "defined for another arch".
const OTHER_ARCHS: &[u32] = &[
    50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 88, 89, 90, 100, 101, 103, 110, 120, 121,
];

const PREFIX: &str = "undefined reference to '";

/// Levenshtein distance, giving up (None) once it exceeds `max`.
fn distance(a: &str, b: &str, max: usize) -> Option<usize> {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        let mut row_min = cur[0];
        for j in 1..=b.len() {
            let sub = prev[j - 1] + usize::from(a[i - 1] != b[j - 1]);
            cur[j] = sub.min(prev[j] + 1).min(cur[j - 1] + 1);
            row_min = row_min.min(cur[j]);
        }
        if row_min > max {
            return None;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    (prev[b.len()] <= max).then_some(prev[b.len()])
}

/// How far a name may be from a candidate to be suggested.
fn threshold(name: &str) -> usize {
    (name.len() / 5).clamp(1, 4)
}

/// The defined names closest to `name` (at most three, nearest first, then by name).
pub(crate) fn near_misses<'a>(
    name: &str,
    candidates: impl Iterator<Item = (&'a str, &'a str)>,
) -> Vec<(String, String)> {
    let max = threshold(name);
    let mut found: Vec<(usize, String, String)> = candidates
        .filter(|(c, _)| *c != name)
        .filter_map(|(c, file)| {
            distance(name, c, max).map(|d| (d, c.to_string(), file.to_string()))
        })
        .collect();
    found.sort();
    found.dedup_by(|a, b| a.1 == b.1);
    found.into_iter().take(3).map(|(_, c, f)| (c, f)).collect()
}

fn is_archive(path: &std::path::Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && (&magic == b"!<arch>\n" || &magic == b"!<thin>\n")
}

/// Adds hints to every undefined-reference error of `diags`.
pub(crate) fn annotate(
    diags: &mut Diags,
    files: &[InputFile<'_>],
    db: &SymbolDb<'_>,
    opts: &LinkOptions,
    arch: SmArch,
) {
    let undefined: BTreeSet<String> = diags
        .list
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .filter_map(|d| d.error.message.strip_prefix(PREFIX))
        .filter_map(|rest| rest.split_once('\'').map(|(n, _)| n.to_string()))
        .collect();
    if undefined.is_empty() {
        return;
    }
    let _span = tracing::info_span!("undefined_hints").entered();
    // Defined names of the link, with the file defining each.
    let mut defined: Vec<(&str, &str)> = Vec::new();
    for (name, g) in &db.globals {
        if let Some(def) = g.def {
            defined.push((name, files[def.file.0 as usize].name));
        }
    }
    for f in files {
        for s in f.cubin.symbols.iter().skip(1) {
            if s.bind() == STB_LOCAL && !s.is_undefined() && !s.name.is_empty() {
                defined.push((s.name, f.name));
            }
        }
    }
    // Archives of the link (inputs and -l libraries found).
    let mut archives: Vec<PathBuf> = Vec::new();
    for i in &opts.inputs {
        if let InputSource::File(p) = i {
            if is_archive(p) {
                archives.push(p.clone());
            }
        }
    }
    for l in &opts.libraries {
        if let Some(p) = find_library(&l.name, &opts.library_paths) {
            archives.push(p);
        }
    }
    let mut other_arch: HashMap<String, Vec<(String, u32)>> = HashMap::new();
    for a in &archives {
        for &sm in OTHER_ARCHS.iter().filter(|&&sm| sm != arch.sm) {
            for (member, names) in archive_definitions(a, SmArch::new(sm)) {
                for n in names.into_iter().filter(|n| undefined.contains(n)) {
                    other_arch.entry(n).or_default().push((member.clone(), sm));
                }
            }
        }
    }
    // Libraries on the search path not named with -l.
    let mut dirs: Vec<PathBuf> = opts.library_paths.clone();
    if let Some(v) = std::env::var_os("LIBRARY_PATH") {
        dirs.extend(std::env::split_paths(&v));
    }
    let mut unnamed: HashMap<String, Vec<(String, String)>> = HashMap::new();
    for d in &dirs {
        let Ok(rd) = std::fs::read_dir(d) else {
            continue;
        };
        let mut libs: Vec<(String, PathBuf)> = rd
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                let stem = n.strip_prefix("lib")?.strip_suffix(".a")?.to_string();
                Some((stem, e.path()))
            })
            .filter(|(stem, _)| !opts.libraries.iter().any(|l| &l.name == stem))
            .collect();
        libs.sort();
        for (stem, path) in libs {
            for (member, names) in archive_definitions(&path, arch) {
                for n in names.into_iter().filter(|n| undefined.contains(n)) {
                    unnamed
                        .entry(n)
                        .or_default()
                        .push((stem.clone(), member.clone()));
                }
            }
        }
    }
    for d in diags
        .list
        .iter_mut()
        .filter(|d| d.severity == Severity::Error)
    {
        let Some(rest) = d.error.message.strip_prefix(PREFIX) else {
            continue;
        };
        let Some((name, _)) = rest.split_once('\'') else {
            continue;
        };
        let name = name.to_string();
        let mut notes: Vec<String> = Vec::new();
        if let Some(v) = unnamed.get(&name) {
            let (stem, member) = &v[0];
            notes.push(format!(
                "it is defined in '{member}' on the library search path: add -l{stem}"
            ));
        }
        if let Some(v) = other_arch.get(&name) {
            let (member, sm) = &v[0];
            notes.push(format!(
                "'{member}' defines it, but for sm_{sm}, not {arch}"
            ));
        }
        let near = near_misses(&name, defined.iter().copied());
        if !near.is_empty() {
            let list: Vec<String> = near
                .iter()
                .map(|(c, f)| format!("'{c}' (in '{f}')"))
                .collect();
            notes.push(format!("did you mean {}?", list.join(" or ")));
        }
        for n in notes {
            d.error.message.push_str("; ");
            d.error.message.push_str(&n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_is_levenshtein_with_cutoff() {
        assert_eq!(distance("_Z3addii", "_Z3addif", 2), Some(1));
        assert_eq!(distance("kitten", "sitting", 3), Some(3));
        assert_eq!(distance("kitten", "sitting", 2), None);
        assert_eq!(distance("a", "abcdef", 2), None);
    }

    #[test]
    fn near_misses_nearest_first_and_deterministic() {
        let c = [
            ("_Z3addif", "b.o"),
            ("_Z3addff", "c.o"),
            ("unrelated_name", "d.o"),
        ];
        let got = near_misses("_Z3addii", c.iter().copied());
        // Threshold 1 for an 8-byte name: `_Z3addff` (distance 2) is too far.
        assert_eq!(got, vec![("_Z3addif".to_string(), "b.o".to_string())]);
        let long = [
            ("_Z10accumulateIfEvPT_i", "b.o"),
            ("_Z10accumulateIdEvPT_i", "c.o"),
            ("_Z10accumulateIiEvPT_l", "a.o"),
        ];
        let got = near_misses("_Z10accumulateIiEvPT_i", long.iter().copied());
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "_Z10accumulateIdEvPT_i",
                "_Z10accumulateIfEvPT_i",
                "_Z10accumulateIiEvPT_l"
            ]
        );
        assert!(near_misses("f", c.iter().copied()).is_empty());
    }
}
