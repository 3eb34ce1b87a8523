//! Decoders of the CUDA sub-formats that [`crate::dump`] and [`crate::diff`] need,
//! behind one small crate-internal interface: a thin adapter over the
//! authoritative decoders in `cubin::eiattr`, `cubin::compat`, `cubin::notes`,
//! and, for relocation type names, an interim table (to be replaced by
//! `reloc::table::describe` when that module lands).

use crate::cubin::{compat::EiCompat, eiattr, notes};

/// One record of an EIATTR-format stream (`.nv.info*`, `.nv.compat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AttrRecord<'a> {
    /// Byte offset of the record in its section.
    pub offset: usize,
    /// Attribute code.
    pub attr: u8,
    /// The value.
    pub value: AttrValue<'a>,
}

/// The value of an attribute record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AttrValue<'a> {
    /// `EIFMT_NVAL`: no value.
    None,
    /// `EIFMT_BVAL`: one byte.
    Byte(u8),
    /// `EIFMT_HVAL`: a 16-bit value.
    Half(u16),
    /// `EIFMT_SVAL`: a byte string.
    Bytes(&'a [u8]),
}

/// Parses an EIATTR-format stream (`.nv.info*` or `.nv.compat`; the code space
/// does not matter for the wire format).
pub(crate) fn parse_attrs(data: &[u8]) -> Result<Vec<AttrRecord<'_>>, String> {
    let recs = eiattr::parse(data).map_err(|e| e.to_string())?;
    Ok(recs
        .into_iter()
        .map(|r| AttrRecord {
            offset: r.offset,
            attr: r.attr.0,
            value: match r.value {
                eiattr::Value::None => AttrValue::None,
                eiattr::Value::Byte(b) => AttrValue::Byte(b),
                eiattr::Value::Half(h) => AttrValue::Half(h),
                eiattr::Value::Bytes(b) => AttrValue::Bytes(b),
            },
        })
        .collect())
}

/// The `EIATTR_*` name of an attribute code (`Unknown(0x..)` otherwise).
pub(crate) fn eiattr_name(attr: u8) -> String {
    eiattr::EiAttr(attr).to_string()
}

/// The `EICOMPAT_ATTR_*` name of an `.nv.compat` attribute code.
pub(crate) fn eicompat_name(attr: u8) -> String {
    EiCompat(attr).to_string()
}

/// Which 32-bit words of an SVAL payload are symbol-table indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SymWords {
    /// None: the payload holds plain values.
    None,
    /// Only word 0 (`(sym, value)` pairs such as REGCOUNT, FRAME_SIZE, PARAM_CBANK).
    First,
    /// Every word (lists of symbols such as EXTERNS).
    All,
}

/// The symbol-index words of an SVAL record of attribute `attr` with a payload
/// of `len` bytes (a payload that does not fit its layout is shown raw).
pub(crate) fn symbol_words(attr: u8, len: usize) -> SymWords {
    match eiattr::symbol_fields(eiattr::EiAttr(attr), eiattr::EiFormat::SVAL, len) {
        eiattr::SymFields::First => SymWords::First,
        eiattr::SymFields::All => SymWords::All,
        eiattr::SymFields::None | eiattr::SymFields::Invalid => SymWords::None,
    }
}

pub(crate) use notes::Note;

/// Parses the notes of a `SHT_NOTE` section.
pub(crate) fn parse_notes(data: &[u8]) -> Result<Vec<Note<'_>>, String> {
    notes::parse_notes(data).map_err(|e| e.to_string())
}

/// A one-line decoding of a note: tkinfo / cuinfo fields, raw hex otherwise.
pub(crate) fn describe_note(note: &Note<'_>) -> String {
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    match (note.tkinfo(), note.cuinfo()) {
        (Some(Ok(t)), _) => format!(
            "tkinfo v{} tool {:?} version {:?} branch {:?} args {:?}{}",
            t.version,
            s(t.tool_name),
            s(t.tool_version),
            s(t.tool_branch),
            s(t.tool_args),
            if t.object_file.is_empty() {
                String::new()
            } else {
                format!(" object {:?}", s(t.object_file))
            }
        ),
        (_, Some(Ok(c))) => format!(
            "cuinfo v{} virtual sm_{} cuda api {:#x}",
            c.version, c.virtual_sm, c.cuda_api_version
        ),
        (Some(Err(e)), _) | (_, Some(Err(e))) => {
            format!("undecodable NVIDIA note ({e}): desc {}", hex(note.desc))
        }
        _ => format!(
            "owner {:?} type {:#x} desc {}",
            s(note.name),
            note.ntype,
            hex(note.desc)
        ),
    }
}

/// Space-separated lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 3);
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(&format!("{b:02x}"));
    }
    s
}

const RELOC_NAMES: &[&str] = &[
    "R_CUDA_NONE",
    "R_CUDA_32",
    "R_CUDA_64",
    "R_CUDA_G32",
    "R_CUDA_G64",
    "R_CUDA_ABS32_26",
    "R_CUDA_TEX_HEADER_INDEX",
    "R_CUDA_SAMP_HEADER_INDEX",
    "R_CUDA_SURF_HW_DESC",
    "R_CUDA_SURF_HW_SW_DESC",
    "R_CUDA_ABS32_LO_26",
    "R_CUDA_ABS32_HI_26",
    "R_CUDA_ABS32_23",
    "R_CUDA_ABS32_LO_23",
    "R_CUDA_ABS32_HI_23",
    "R_CUDA_ABS24_26",
    "R_CUDA_ABS24_23",
    "R_CUDA_ABS16_26",
    "R_CUDA_ABS16_23",
    "R_CUDA_TEX_SLOT",
    "R_CUDA_SAMP_SLOT",
    "R_CUDA_SURF_SLOT",
    "R_CUDA_TEX_BINDLESSOFF13_32",
    "R_CUDA_TEX_BINDLESSOFF13_47",
    "R_CUDA_CONST_FIELD19_28",
    "R_CUDA_CONST_FIELD19_23",
    "R_CUDA_TEX_SLOT9_49",
    "R_CUDA_6_31",
    "R_CUDA_2_47",
    "R_CUDA_TEX_BINDLESSOFF13_41",
    "R_CUDA_TEX_BINDLESSOFF13_45",
    "R_CUDA_FUNC_DESC32_23",
    "R_CUDA_FUNC_DESC32_LO_23",
    "R_CUDA_FUNC_DESC32_HI_23",
    "R_CUDA_FUNC_DESC_32",
    "R_CUDA_FUNC_DESC_64",
    "R_CUDA_CONST_FIELD21_26",
    "R_CUDA_QUERY_DESC21_37",
    "R_CUDA_CONST_FIELD19_26",
    "R_CUDA_CONST_FIELD21_23",
    "R_CUDA_PCREL_IMM24_26",
    "R_CUDA_PCREL_IMM24_23",
    "R_CUDA_ABS32_20",
    "R_CUDA_ABS32_LO_20",
    "R_CUDA_ABS32_HI_20",
    "R_CUDA_ABS24_20",
    "R_CUDA_ABS16_20",
    "R_CUDA_FUNC_DESC32_20",
    "R_CUDA_FUNC_DESC32_LO_20",
    "R_CUDA_FUNC_DESC32_HI_20",
    "R_CUDA_CONST_FIELD19_20",
    "R_CUDA_BINDLESSOFF13_36",
    "R_CUDA_SURF_HEADER_INDEX",
    "R_CUDA_INSTRUCTION64",
    "R_CUDA_CONST_FIELD21_20",
    "R_CUDA_ABS32_32",
    "R_CUDA_ABS32_LO_32",
    "R_CUDA_ABS32_HI_32",
    "R_CUDA_ABS47_34",
    "R_CUDA_ABS16_32",
    "R_CUDA_ABS24_32",
    "R_CUDA_FUNC_DESC32_32",
    "R_CUDA_FUNC_DESC32_LO_32",
    "R_CUDA_FUNC_DESC32_HI_32",
    "R_CUDA_CONST_FIELD19_40",
    "R_CUDA_BINDLESSOFF14_40",
    "R_CUDA_CONST_FIELD21_38",
    "R_CUDA_INSTRUCTION128",
    "R_CUDA_YIELD_OPCODE9_0",
    "R_CUDA_YIELD_CLEAR_PRED4_87",
    "R_CUDA_32_LO",
    "R_CUDA_32_HI",
    "R_CUDA_UNUSED_CLEAR32",
    "R_CUDA_UNUSED_CLEAR64",
    "R_CUDA_ABS24_40",
    "R_CUDA_ABS55_16_34",
    "R_CUDA_8_0",
    "R_CUDA_8_8",
    "R_CUDA_8_16",
    "R_CUDA_8_24",
    "R_CUDA_8_32",
    "R_CUDA_8_40",
    "R_CUDA_8_48",
    "R_CUDA_8_56",
    "R_CUDA_G8_0",
    "R_CUDA_G8_8",
    "R_CUDA_G8_16",
    "R_CUDA_G8_24",
    "R_CUDA_G8_32",
    "R_CUDA_G8_40",
    "R_CUDA_G8_48",
    "R_CUDA_G8_56",
    "R_CUDA_FUNC_DESC_8_0",
    "R_CUDA_FUNC_DESC_8_8",
    "R_CUDA_FUNC_DESC_8_16",
    "R_CUDA_FUNC_DESC_8_24",
    "R_CUDA_FUNC_DESC_8_32",
    "R_CUDA_FUNC_DESC_8_40",
    "R_CUDA_FUNC_DESC_8_48",
    "R_CUDA_FUNC_DESC_8_56",
    "R_CUDA_ABS20_44",
    "R_CUDA_SAMP_HEADER_INDEX_0",
    "R_CUDA_UNIFIED",
    "R_CUDA_UNIFIED_32",
    "R_CUDA_UNIFIED_8_0",
    "R_CUDA_UNIFIED_8_8",
    "R_CUDA_UNIFIED_8_16",
    "R_CUDA_UNIFIED_8_24",
    "R_CUDA_UNIFIED_8_32",
    "R_CUDA_UNIFIED_8_40",
    "R_CUDA_UNIFIED_8_48",
    "R_CUDA_UNIFIED_8_56",
    "R_CUDA_UNIFIED32_LO_32",
    "R_CUDA_UNIFIED32_HI_32",
    "R_CUDA_ABS56_16_34",
    "R_CUDA_CONST_FIELD22_37",
    "R_CUDA_NONE_LAST",
];

/// The `R_CUDA_*` name of a relocation type (`R_CUDA_UNKNOWN_<n>` for unknown
/// codes; Mercury types `0x10000 + n` as `R_MERCURY_<n>`).
pub(crate) fn reloc_name(code: u32) -> String {
    if let Some(n) = RELOC_NAMES.get(code as usize) {
        return (*n).to_string();
    }
    if code >= 0x10000 {
        return format!("R_MERCURY_{}", code - 0x10000);
    }
    format!("R_CUDA_UNKNOWN_{code}")
}
