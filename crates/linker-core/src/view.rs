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

/// The `R_CUDA_*` name of a relocation type (`R_CUDA_UNKNOWN_<n>` for unknown
/// codes; Mercury types `0x10000 + n` as `R_MERCURY_<n>`).
pub(crate) fn reloc_name(code: u32) -> String {
    if let Some(d) = crate::reloc::table::describe(code) {
        return d.name.to_string();
    }
    if let Some(d) = crate::reloc::mercury::describe_mercury(code) {
        return d.name.to_string();
    }
    if code >= 0x10000 {
        return format!("R_MERCURY_{}", code - 0x10000);
    }
    format!("R_CUDA_UNKNOWN_{code}")
}
