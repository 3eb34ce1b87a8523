//! The one relocation applier.
//!
//! Every relocation culink resolves goes through [`apply`]: read the 32-, 64-
//! or 128-bit little-endian word at `r_offset`, and for each bit action of the
//! type's table row whose value is known, shift the value, check that it fits
//! the field (truncating kinds — the `LO*` halves and the 8-bit slices — are
//! masked instead), clear the field and insert it. Actions whose value is not
//! supplied (the constant bank number, header indices, ...) leave their bits
//! as the compiler wrote them.

use super::table::{describe, BitAction, RelocDesc, ValueKind};
use crate::error::{Error, ErrorKind, Result};

/// Whether a value kind is a deliberate truncation of the value (no overflow check).
fn truncates(kind: ValueKind) -> bool {
    use ValueKind::*;
    matches!(
        kind,
        Cbank
            | Loaddr
            | Hiaddr
            | Lofdesc
            | Hifdesc
            | Louaddr
            | Hiuaddr
            | Addr80
            | Addr88
            | Addr816
            | Addr824
            | Addr832
            | Addr840
            | Addr848
            | Addr856
    )
}

/// The value of `kind` for a resolved address/offset `value`, before the
/// action's own shift: address kinds take the value itself, `SHIFT2`/`SHIFT8`
/// its 4-byte/256-byte units, `CLEAR` zero. Kinds that are not an address
/// (bank numbers, header indices, instruction bits) have no value here.
pub fn value_for(kind: ValueKind, value: u64) -> Option<u64> {
    use ValueKind::*;
    match kind {
        Addr | Loaddr | Hiaddr | Addr80 | Addr88 | Addr816 | Addr824 | Addr832 | Addr840
        | Addr848 | Addr856 | Pcrel | Slot => Some(value),
        Shift2 => Some(value >> 2),
        Shift8 => Some(value >> 8),
        Clear => Some(0),
        _ => None,
    }
}

fn read_word(site: &[u8], n: usize) -> u128 {
    let mut b = [0u8; 16];
    b[..n].copy_from_slice(&site[..n]);
    u128::from_le_bytes(b)
}

fn write_word(site: &mut [u8], n: usize, w: u128) {
    site[..n].copy_from_slice(&w.to_le_bytes()[..n]);
}

fn field_mask(a: &BitAction) -> u128 {
    let width = a.width();
    let ones = if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    };
    ones << a.lo
}

/// Applies `desc` at the start of `site`, taking each action's value from `values`.
pub fn apply(
    desc: &RelocDesc,
    site: &mut [u8],
    values: impl Fn(ValueKind) -> Option<u64>,
) -> Result<()> {
    let n = desc.width_bytes();
    if site.len() < n {
        return Err(Error::malformed(format!(
            "relocation {} needs {n} bytes but only {} remain in the section",
            desc.name,
            site.len()
        )));
    }
    let mut word = read_word(site, n);
    for a in desc.actions {
        let Some(v) = values(a.kind) else { continue };
        let v = if a.shift >= 64 { 0 } else { v >> a.shift };
        let width = a.width();
        if width < 64 && !truncates(a.kind) && v >> width != 0 {
            return Err(Error::new(
                ErrorKind::Overflow,
                format!(
                    "relocation {}: value {v:#x} does not fit the {width}-bit field at bits {}..={}",
                    desc.name, a.lo, a.hi
                ),
            ));
        }
        let mask = field_mask(a);
        word = (word & !mask) | ((u128::from(v) << a.lo) & mask);
    }
    write_word(site, n, word);
    Ok(())
}

/// Applies relocation type `rtype` with a resolved address or offset `value`.
pub fn apply_value(rtype: u32, site: &mut [u8], value: u64) -> Result<()> {
    let desc = describe(rtype)
        .ok_or_else(|| Error::malformed(format!("unknown relocation type {rtype}")))?;
    apply(desc, site, |k| value_for(k, value))
}

/// Applies `rtype` with a resolved value and, for constant-bank relocations,
/// the bank number (`CBANK` fields; `CBANK4` takes its fifth bit).
pub fn apply_resolved(rtype: u32, site: &mut [u8], value: u64, bank: Option<u64>) -> Result<()> {
    let desc = describe(rtype)
        .ok_or_else(|| Error::malformed(format!("unknown relocation type {rtype}")))?;
    apply(desc, site, |k| match k {
        ValueKind::Cbank => bank,
        ValueKind::Cbank4 => bank.map(|b| (b >> 4) & 1),
        _ => value_for(k, value),
    })
}

/// Reads back the field of action `index` of `desc` at `site` (unshifted field bits).
pub fn extract(desc: &RelocDesc, site: &[u8], index: usize) -> Result<u64> {
    let a = desc.actions.get(index).ok_or_else(|| {
        Error::malformed(format!("relocation {} has no action {index}", desc.name))
    })?;
    let n = desc.width_bytes();
    if site.len() < n {
        return Err(Error::malformed(format!(
            "relocation {} needs {n} bytes but only {} remain",
            desc.name,
            site.len()
        )));
    }
    let word = read_word(site, n);
    Ok(((word & field_mask(a)) >> a.lo) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reloc::table::RelocType;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn const_field21_38_matches_nvlink() {
        // c1_90.o .text.k1 +0x90, `ca+4` with ca at 0x8 in the merged
        // .nv.constant3 → 0xc; bytes before/after from nvlink's c12_90.cubin.
        let mut w = hex("827b00ff0000c0000008000000a20e00");
        apply_value(RelocType::R_CUDA_CONST_FIELD21_38.0, &mut w, 0xc).unwrap();
        assert_eq!(w, hex("827b00ff0003c0000008000000a20e00"));
        // c2_90.o `cb+8`, cb at 0x14 → 0x1c.
        let mut w = hex("827b04ff0000c0000008000000a20e00");
        apply_value(RelocType::R_CUDA_CONST_FIELD21_38.0, &mut w, 0x1c).unwrap();
        assert_eq!(w, hex("827b04ff0007c0000008000000a20e00"));
    }

    #[test]
    fn abs32_32_shared_offset_matches_nvlink() {
        // c1_90.o .text.k1 +0xe0, extern shared `dyn` → 0x80 (nvlink c12_90).
        let mut w = hex("82780600000000000000000000e40f00");
        apply_value(RelocType::R_CUDA_ABS32_32.0, &mut w, 0x80).unwrap();
        assert_eq!(w, hex("82780600800000000000000000e40f00"));
    }

    #[test]
    fn clear_and_overflow() {
        let mut w = hex("0001000000000000");
        apply_value(RelocType::R_CUDA_UNUSED_CLEAR64.0, &mut w, 12345).unwrap();
        assert_eq!(w, vec![0; 8]);
        let mut w = vec![0u8; 16];
        let e = apply_value(RelocType::R_CUDA_CONST_FIELD21_38.0, &mut w, 0x1_0000).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Overflow);
        let mut short = vec![0u8; 4];
        assert!(apply_value(RelocType::R_CUDA_CONST_FIELD21_38.0, &mut short, 1).is_err());
        assert!(apply_value(999, &mut short, 1).is_err());
    }

    #[test]
    fn extract_reads_back() {
        let d = describe(RelocType::R_CUDA_CONST_FIELD21_38.0).unwrap();
        let w = hex("827b00ff0003c0000008000000a20e00");
        assert_eq!(extract(d, &w, 0).unwrap(), 0xc);
    }
}
