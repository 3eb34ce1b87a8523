//! The R_CUDA table in `reloc::table` matches the seed document row for row:
//! code, name, resolver class and every bit action (lo, hi, value kind, shift).

use linker_core::reloc::table::{describe, RelocType, R_CUDA_TABLE};
use std::path::Path;

struct SeedRow {
    code: u32,
    name: String,
    class: String,
    actions: Vec<(u8, u8, String, u8)>,
}

fn parse_seed(text: &str) -> Vec<SeedRow> {
    let mut rows = Vec::new();
    for line in text.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() != 4 || cols[0].parse::<u32>().is_err() {
            continue;
        }
        let code = cols[0].parse().unwrap();
        let name = cols[1].trim_matches('`').to_string();
        let class = cols[2].to_string();
        let mut actions = Vec::new();
        if cols[3].trim() != "(none)" {
            for part in cols[3].split(" ; ") {
                // bits[lo..hi]=KIND>>shift
                let part = part.trim();
                let inner = part
                    .strip_prefix("bits[")
                    .expect("action starts with bits[");
                let (range, rest) = inner.split_once("]=").expect("]=");
                let (lo, hi) = range.split_once("..").expect("..");
                let (kind, shift) = rest.split_once(">>").expect(">>");
                actions.push((
                    lo.parse().unwrap(),
                    hi.parse().unwrap(),
                    kind.to_string(),
                    shift.parse().unwrap(),
                ));
            }
        }
        rows.push(SeedRow {
            code,
            name,
            class,
            actions,
        });
    }
    rows
}

fn seed_text() -> String {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/r_cuda_seed.txt");
    let text = std::fs::read_to_string(&committed).expect("committed seed copy");
    // The shared original, when present beside the repository, must be identical.
    let shared = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/seeds/003_58ebef5c5e222e19.txt");
    if let Ok(orig) = std::fs::read_to_string(shared) {
        assert_eq!(
            orig, text,
            "tests/data/r_cuda_seed.txt differs from ../shared/seeds"
        );
    }
    text
}

#[test]
fn table_matches_seed_row_for_row() {
    let rows = parse_seed(&seed_text());
    assert_eq!(rows.len(), 117, "the seed lists 117 types");
    assert_eq!(R_CUDA_TABLE.len(), rows.len());
    for row in &rows {
        let d = describe(row.code).unwrap_or_else(|| panic!("code {} missing", row.code));
        assert_eq!(d.code, row.code);
        assert_eq!(d.name, row.name, "name of {}", row.code);
        assert_eq!(d.class.as_str(), row.class, "class of {}", row.name);
        let ours: Vec<(u8, u8, String, u8)> = d
            .actions
            .iter()
            .map(|a| (a.lo, a.hi, a.kind.as_str().to_string(), a.shift))
            .collect();
        assert_eq!(ours, row.actions, "actions of {}", row.name);
        assert_eq!(RelocType(row.code).to_string(), row.name);
    }
    assert!(describe(117).is_none());
    assert_eq!(RelocType(500).to_string(), "Unknown(500)");
}

#[test]
fn class_counts_match_the_seed_summary() {
    use linker_core::reloc::table::ResolverClass::*;
    let count = |c| R_CUDA_TABLE.iter().filter(|d| d.class == c).count();
    // "1=NVRH_LINKER (39 types), 2=NVRH_DRIVER (52 types), 4=NVRH_EITHER (24 types)".
    assert_eq!(count(Linker), 39);
    assert_eq!(count(Driver), 52);
    assert_eq!(count(Either), 24);
    assert_eq!(count(None), 2);
}
