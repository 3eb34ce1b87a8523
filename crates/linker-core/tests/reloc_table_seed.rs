//! The const R_CUDA table must equal the seed (ptxas 13.0.88's action table) row for row.

use linker_core::reloc::table::{describe, RelocType, ValueKind, R_CUDA_COUNT, R_CUDA_TABLE};
use std::path::Path;

const SEED: &str = include_str!("data/r_cuda_seed.txt");
/// The shared seed, relative to the workspace root (present in the main checkout).
const SHARED_SEED: &str = "../shared/seeds/003_58ebef5c5e222e19.txt";

/// One parsed seed row: code, name, handler, actions (lo, hi, kind, shift).
type Row = (u32, String, String, Vec<(u8, u8, String, u8)>);

fn parse_action(text: &str) -> (u8, u8, String, u8) {
    // bits[LO..HI]=KIND>>SHIFT
    let rest = text
        .strip_prefix("bits[")
        .expect("action starts with bits[");
    let (range, rest) = rest.split_once("]=").expect("]=");
    let (lo, hi) = range.split_once("..").expect("lo..hi");
    let (kind, shift) = rest.split_once(">>").expect(">>");
    (
        lo.parse().unwrap(),
        hi.parse().unwrap(),
        kind.to_string(),
        shift.parse().unwrap(),
    )
}

fn parse_seed(text: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    for line in text.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() != 4 || !cols[0].chars().all(|c| c.is_ascii_digit()) || cols[0].is_empty() {
            continue;
        }
        let name = cols[1].trim_matches('`').to_string();
        let actions = if cols[3] == "(none)" {
            Vec::new()
        } else {
            cols[3].split(" ; ").map(parse_action).collect()
        };
        rows.push((cols[0].parse().unwrap(), name, cols[2].to_string(), actions));
    }
    rows
}

#[test]
fn committed_seed_equals_shared_seed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let shared = root.join(SHARED_SEED);
    if let Ok(text) = std::fs::read_to_string(&shared) {
        assert_eq!(
            text,
            SEED,
            "{} differs from tests/data/r_cuda_seed.txt",
            shared.display()
        );
    }
}

#[test]
fn table_matches_seed_row_for_row() {
    let rows = parse_seed(SEED);
    assert_eq!(rows.len(), 117);
    assert_eq!(R_CUDA_TABLE.len(), R_CUDA_COUNT);
    assert_eq!(rows.len(), R_CUDA_TABLE.len());
    for (i, ((code, name, class, actions), desc)) in
        rows.iter().zip(R_CUDA_TABLE.iter()).enumerate()
    {
        assert_eq!(*code as usize, i, "seed rows are in code order");
        assert_eq!(desc.code, *code);
        assert_eq!(desc.name, name);
        assert_eq!(desc.class.as_str(), class, "{name}");
        assert_eq!(desc.actions.len(), actions.len(), "{name}");
        for (a, (lo, hi, kind, shift)) in desc.actions.iter().zip(actions) {
            assert_eq!(
                (a.lo, a.hi, a.kind.as_str(), a.shift),
                (*lo, *hi, kind.as_str(), *shift),
                "{name}"
            );
            assert_eq!(ValueKind::from_name(kind), Some(a.kind));
            assert!(a.lo <= a.hi && a.hi < 128, "{name}");
        }
        assert_eq!(describe(*code).map(|d| d.name), Some(name.as_str()));
        assert_eq!(RelocType(*code).to_string(), *name);
    }
    // Every ValueKind is used by the seed.
    for k in ValueKind::ALL {
        assert!(
            rows.iter().any(|r| r.3.iter().any(|a| a.2 == k.as_str())),
            "{k:?} unused"
        );
    }
}

#[test]
fn unknown_codes() {
    assert!(describe(117).is_none());
    assert!(describe(u32::MAX).is_none());
    assert_eq!(RelocType(117).to_string(), "Unknown(117)");
    assert_eq!(RelocType(0x10001).to_string(), "Unknown(65537)");
    assert_eq!(
        RelocType::R_CUDA_CONST_FIELD21_38.to_string(),
        "R_CUDA_CONST_FIELD21_38"
    );
    assert_eq!(RelocType::R_CUDA_CONST_FIELD21_38.0, 66);
    assert_eq!(RelocType::R_CUDA_NONE_LAST.0, 116);
}

#[test]
fn widths() {
    let w = |t: RelocType| t.desc().unwrap().width_bytes();
    assert_eq!(w(RelocType::R_CUDA_NONE), 0);
    assert_eq!(w(RelocType::R_CUDA_8_16), 1);
    assert_eq!(w(RelocType::R_CUDA_SAMP_HEADER_INDEX_0), 2);
    assert_eq!(w(RelocType::R_CUDA_32), 4);
    assert_eq!(w(RelocType::R_CUDA_64), 8);
    assert_eq!(w(RelocType::R_CUDA_ABS32_32), 8);
    assert_eq!(w(RelocType::R_CUDA_CONST_FIELD21_38), 8);
    assert_eq!(w(RelocType::R_CUDA_ABS47_34), 16);
    assert_eq!(w(RelocType::R_CUDA_YIELD_CLEAR_PRED4_87), 16);
    assert_eq!(w(RelocType::R_CUDA_INSTRUCTION128), 16);
}
