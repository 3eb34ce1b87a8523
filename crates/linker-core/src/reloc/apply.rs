//! The one bit-field applier for every R_CUDA type.
//!
//! [`apply`] reads the little-endian word at a relocation site (1, 2, 4, 8 or 16 bytes,
//! [`RelocDesc::width_bytes`]), and for each [`BitAction`] of the type whose value the
//! caller supplies, encodes the value ([`encode`]), checks that it fits the field, clears
//! the field and inserts it. All fields are computed before anything is written, so a
//! failing relocation leaves the site untouched. Actions whose value the caller does not
//! supply (returns `None` for) keep the bits ptxas wrote. [`extract`] and
//! [`extract_value`] read fields back (for dump, diff and tests).
//!
//! How a value becomes field bits, as measured against nvlink 13.0.88 and cuobjdump
//! (see `tests/reloc_apply_oracle.rs` for the byte-exact evidence):
//!
//! * `field = value >> source_shift`, where [`source_shift`] is the action's `shift`,
//!   except that `SHIFT2` always drops at least 2 bits (`max(shift, 2)`): sm_75..89
//!   `R_CUDA_CONST_FIELD19_40` stores `.const` offset `0xc` as `3`, `R_CUDA_BINDLESSOFF14_40`
//!   stores constant0 slot `0x168` as `0x5a`, and `R_CUDA_ABS47_34` bit 34 decodes (cuobjdump)
//!   as call target `0x4` — all with a seed shift of 0. In the split call targets
//!   (`R_CUDA_ABS55_16_34`/`ABS56_16_34`: `SHIFT2>>2`, `SHIFT8>>10`) cuobjdump decodes bit 16
//!   as `0x4` and bit 34 as `0x400`, so there the seed's shift already is the total shift.
//!   `SHIFT2` values must be multiples of 4.
//! * Ranges ([`Encoding`]): most fields must hold the value exactly (unsigned); `PCREL` is
//!   signed; the parts of a split value are truncated: `LO*` (low 32 bits), `HI*` (high 32),
//!   the byte kinds `*8_N`, `INST`, and the low `SHIFT2` piece of a `SHIFT2`+`SHIFT8` pair.
//! * `CBANK` is the constant bank number. nvlink writes it: sm_75..89 ptxas leaves 0 in the
//!   bank field of `R_CUDA_CONST_FIELD19_40` and nvlink's output has 3 (`.nv.constant3`); on
//!   sm_90+ ptxas already wrote the bank (3, or 0 for tex/surf handles in constant0) and
//!   nvlink leaves it. Supplying the bank of the target's constant section matches both.
//!   `CBANK4` (only `R_CUDA_CONST_FIELD19_28`, an old encoding with a 4-bit bank field) is
//!   taken to be bit 4 of the same bank number, the 4-bit `CBANK` then holding its low
//!   bits: this follows from the field widths and is not verified against any tool.
//! * `CLEAR`/`INST_FIELD_CLEAR`: the caller supplies 0 (nvlink zeroes the FDE range of a
//!   dead function through `R_CUDA_UNUSED_CLEAR64`).

use super::table::{describe, BitAction, RelocDesc, ValueKind};
use crate::error::{Error, ErrorKind, Result};

/// How an action's shifted value must fit its field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// Unsigned; bits above the field are an overflow error, except for a
    /// negative value that fits the field as two's complement (written
    /// truncated, as nvlink does: `R_CUDA_ABS24_40` of a shared variable at
    /// window offset 0 with addend -0x400 becomes `0xfffc00`, CUB's radix
    /// sort kernels at sm_75-89).
    Checked,
    /// Two's complement; the value must lie in the field's signed range.
    Signed,
    /// One piece of a larger value: bits above the field are dropped by design.
    Truncated,
}

/// Whether `desc` has an action of `kind`.
fn has_kind(desc: &RelocDesc, kind: ValueKind) -> bool {
    desc.actions.iter().any(|a| a.kind == kind)
}

/// The total right shift applied to the caller's value before it is inserted into
/// `action`'s field (see the module docs for the measurements behind `SHIFT2`).
pub fn source_shift(action: &BitAction) -> u32 {
    let shift = u32::from(action.shift);
    match action.kind {
        ValueKind::Shift2 => shift.max(2),
        ValueKind::CBank4 => shift + 4,
        _ => shift,
    }
}

/// How `action` (one of `desc`'s actions) range-checks its value.
pub fn encoding(desc: &RelocDesc, action: &BitAction) -> Encoding {
    use ValueKind as K;
    match action.kind {
        K::PcRel => Encoding::Signed,
        K::LoAddr | K::HiAddr | K::LoFDesc | K::HiFDesc | K::LoUAddr | K::HiUAddr | K::Inst => {
            Encoding::Truncated
        }
        K::Addr8_0
        | K::Addr8_8
        | K::Addr8_16
        | K::Addr8_24
        | K::Addr8_32
        | K::Addr8_40
        | K::Addr8_48
        | K::Addr8_56
        | K::GAddr8_0
        | K::GAddr8_8
        | K::GAddr8_16
        | K::GAddr8_24
        | K::GAddr8_32
        | K::GAddr8_40
        | K::GAddr8_48
        | K::GAddr8_56
        | K::FDesc8_0
        | K::FDesc8_8
        | K::FDesc8_16
        | K::FDesc8_24
        | K::FDesc8_32
        | K::FDesc8_40
        | K::FDesc8_48
        | K::FDesc8_56
        | K::UAddr8_0
        | K::UAddr8_8
        | K::UAddr8_16
        | K::UAddr8_24
        | K::UAddr8_32
        | K::UAddr8_40
        | K::UAddr8_48
        | K::UAddr8_56 => Encoding::Truncated,
        K::Shift2 if has_kind(desc, K::Shift8) => Encoding::Truncated,
        K::CBank if has_kind(desc, K::CBank4) => Encoding::Truncated,
        _ => Encoding::Checked,
    }
}

/// Checks `lo <= hi < 128` for an action (table rows satisfy it; hand-made ones may not).
fn check_action(desc: &RelocDesc, action: &BitAction) -> Result<()> {
    if action.lo > action.hi || action.hi >= 128 {
        return Err(Error::malformed(format!(
            "{}: bad bit action bits[{}..{}]",
            desc.name, action.lo, action.hi
        )));
    }
    Ok(())
}

/// The field bits (not yet shifted into place) that `value` becomes in `action`, one of
/// `desc`'s actions; [`ErrorKind::Overflow`] when it does not fit.
pub fn encode(desc: &RelocDesc, action: &BitAction, value: u64) -> Result<u128> {
    check_action(desc, action)?;
    let width = action.width();
    let field_mask = action.mask() >> action.lo;
    let s = source_shift(action);
    let overflow = |why: &str| {
        Error::new(
            ErrorKind::Overflow,
            format!(
                "{}: value {value:#x} {why} the {width}-bit field bits[{}..{}] ({}>>{s})",
                desc.name,
                action.lo,
                action.hi,
                action.kind.as_str()
            ),
        )
    };
    if action.kind == ValueKind::Shift2 && value & 3 != 0 {
        return Err(overflow("is not a multiple of 4 for"));
    }
    match encoding(desc, action) {
        Encoding::Checked => {
            let x = u128::from(value.checked_shr(s).unwrap_or(0));
            if x & !field_mask == 0 {
                return Ok(x);
            }
            let negative = (value as i64)
                .checked_shr(s)
                .filter(|&v| v < 0 && width < 64 && v >= -(1i64 << (width - 1)));
            match negative {
                Some(v) => Ok((v as i128 as u128) & field_mask),
                None => Err(overflow("does not fit")),
            }
        }
        Encoding::Truncated => Ok(u128::from(value.checked_shr(s).unwrap_or(0)) & field_mask),
        Encoding::Signed => {
            let x = (value as i64)
                .checked_shr(s)
                .unwrap_or(if (value as i64) < 0 { -1 } else { 0 });
            let fits = width >= 64 || {
                let half = 1i64 << (width - 1);
                (-half..half).contains(&x)
            };
            if !fits {
                return Err(overflow("does not fit (signed)"));
            }
            Ok((x as i128 as u128) & field_mask)
        }
    }
}

/// Reads the `n`-byte little-endian word at the start of `site`.
fn read_word(desc: &RelocDesc, site: &[u8]) -> Result<u128> {
    let n = desc.width_bytes();
    let bytes = site.get(..n).ok_or_else(|| {
        Error::malformed(format!(
            "{}: relocation needs {n} bytes at its offset, only {} left",
            desc.name,
            site.len()
        ))
    })?;
    let mut buf = [0u8; 16];
    buf[..n].copy_from_slice(bytes);
    Ok(u128::from_le_bytes(buf))
}

/// Applies relocation `desc` to `site`, the bytes starting at `r_offset` (at least
/// [`RelocDesc::width_bytes`] long). `values` supplies the value of each [`ValueKind`] the
/// caller knows (symbol value + addend for address kinds, the bank for `CBANK`, ...);
/// fields whose value is `None` are left as they are. On error nothing is written; the
/// error has no offset (add it with [`Error::at`]).
pub fn apply(
    desc: &RelocDesc,
    site: &mut [u8],
    values: impl Fn(ValueKind) -> Option<u64>,
) -> Result<()> {
    let n = desc.width_bytes();
    let mut word = read_word(desc, site)?;
    for action in desc.actions {
        if let Some(v) = values(action.kind) {
            let bits = encode(desc, action, v)?;
            word = (word & !action.mask()) | (bits << action.lo);
        }
    }
    site[..n].copy_from_slice(&word.to_le_bytes()[..n]);
    Ok(())
}

/// Applies relocation type `code` at `r_offset` inside `section`: [`apply`] plus the
/// checks a relocation entry from a file needs (known type, offset inside the section);
/// every error carries `r_offset`.
pub fn apply_at(
    section: &mut [u8],
    r_offset: u64,
    code: u32,
    values: impl Fn(ValueKind) -> Option<u64>,
) -> Result<()> {
    let desc = describe(code).ok_or_else(|| {
        Error::new(
            ErrorKind::Unsupported,
            format!("unknown relocation type {code}"),
        )
        .at(r_offset)
    })?;
    let len = section.len();
    let site = usize::try_from(r_offset)
        .ok()
        .and_then(|o| section.get_mut(o..))
        .ok_or_else(|| {
            Error::malformed(format!(
                "{}: offset beyond the end of the section ({len:#x} bytes)",
                desc.name
            ))
            .at(r_offset)
        })?;
    apply(desc, site, values).map_err(|e| e.at(r_offset))
}

/// The raw bits of action `action_index` of `desc` at `site` (not undoing any shift).
/// Fields wider than 64 bits (`R_CUDA_INSTRUCTION128`) are [`ErrorKind::Unsupported`].
pub fn extract(desc: &RelocDesc, site: &[u8], action_index: usize) -> Result<u64> {
    let action = desc.actions.get(action_index).ok_or_else(|| {
        Error::usage(format!(
            "{} has {} bit actions, no action {action_index}",
            desc.name,
            desc.actions.len()
        ))
    })?;
    check_action(desc, action)?;
    if action.width() > 64 {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!("{}: field wider than 64 bits", desc.name),
        ));
    }
    let word = read_word(desc, site)?;
    Ok(((word & action.mask()) >> action.lo) as u64)
}

/// The value field `action_index` holds, with the encoding's shift undone
/// (`extract << source_shift`, sign-extended for `PCREL`); for a truncated piece this is
/// only that piece's contribution.
pub fn extract_value(desc: &RelocDesc, site: &[u8], action_index: usize) -> Result<u64> {
    let raw = extract(desc, site, action_index)?;
    let action = &desc.actions[action_index];
    let s = source_shift(action);
    let width = action.width();
    let raw = if encoding(desc, action) == Encoding::Signed && width < 64 {
        let up = 64 - width;
        (((raw << up) as i64) >> up) as u64
    } else {
        raw
    };
    Ok(raw.checked_shl(s).unwrap_or(0))
}

/// The value of `kind` for a resolved address, offset or slot `value` (before
/// the action's own shift): address-like kinds take the value, `CLEAR` zero;
/// kinds that are not an address (bank numbers, header indices, instruction
/// bits) have none here.
pub fn value_for(kind: ValueKind, value: u64) -> Option<u64> {
    use ValueKind::*;
    match kind {
        Addr | LoAddr | HiAddr | Addr8_0 | Addr8_8 | Addr8_16 | Addr8_24 | Addr8_32 | Addr8_40
        | Addr8_48 | Addr8_56 | PcRel | Slot | Shift2 | Shift8 => Some(value),
        Clear => Some(0),
        _ => None,
    }
}

/// Applies relocation type `rtype` at the start of `site` with a resolved
/// value and, for constant-bank relocations, the bank number (`CBANK` fields;
/// `CBANK4` takes its fifth bit). Fields without a value keep their bits.
/// R_MERCURY types (`0x10000 + n`) use the Mercury table.
pub fn apply_resolved(rtype: u32, site: &mut [u8], value: u64, bank: Option<u64>) -> Result<()> {
    let desc = if crate::reloc::mercury::is_mercury(rtype) {
        crate::reloc::mercury::describe_mercury(rtype)
    } else {
        describe(rtype)
    };
    let desc = desc.ok_or_else(|| {
        crate::error::Error::new(
            crate::error::ErrorKind::Unsupported,
            format!("unknown relocation type {rtype}"),
        )
    })?;
    apply(desc, site, |k| match k {
        ValueKind::CBank => bank.map(|b| b & 0x1f),
        ValueKind::CBank4 => bank.map(|b| (b >> 4) & 1),
        _ => value_for(k, value),
    })
}
