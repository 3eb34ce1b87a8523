//! Decoders of the CUDA sub-formats that [`crate::dump`] and [`crate::diff`] need:
//! EIATTR / EICOMPAT attribute streams, NVIDIA notes, call-graph and prototype
//! entries, and relocation type names.
//!
//! This is a thin, crate-internal adapter. The authoritative decoders live in
//! `cubin::eiattr`, `cubin::compat`, `cubin::notes`, `cubin::callgraph` and
//! `reloc::table`; when those modules are merged, the functions below delegate
//! to them and dump/diff do not change.

use crate::cubin::le;

/// One record of an EIATTR-format stream (`.nv.info*`, `.nv.compat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AttrRecord<'a> {
    /// Byte offset of the record in its section.
    pub offset: usize,
    /// `EIFMT_*` format byte (1 NVAL, 2 BVAL, 3 HVAL, 4 SVAL).
    pub format: u8,
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

/// Parses an EIATTR-format stream. Fails (with a message) on an unknown
/// format byte or a record running past the end.
pub(crate) fn parse_attrs(data: &[u8]) -> Result<Vec<AttrRecord<'_>>, String> {
    let mut out = Vec::new();
    let mut i = 0usize;
    while i < data.len() {
        if i + 4 > data.len() {
            return Err(format!(
                "truncated attribute record at offset {i:#x} ({} bytes left)",
                data.len() - i
            ));
        }
        let (format, attr) = (data[i], data[i + 1]);
        let (value, len) = match format {
            1 => (AttrValue::None, 4),
            2 => (AttrValue::Byte(data[i + 2]), 4),
            3 => (AttrValue::Half(le::u16(data, i + 2).unwrap_or(0)), 4),
            4 => {
                let n = le::u16(data, i + 2).unwrap_or(0) as usize;
                let bytes = data.get(i + 4..i + 4 + n).ok_or_else(|| {
                    format!("attribute record at offset {i:#x} claims {n:#x} value bytes past the end of the section")
                })?;
                (AttrValue::Bytes(bytes), 4 + n)
            }
            f => return Err(format!("unknown attribute format {f:#x} at offset {i:#x}")),
        };
        out.push(AttrRecord {
            offset: i,
            format,
            attr,
            value,
        });
        i += len;
    }
    Ok(out)
}

const EIATTR_NAMES: &[&str] = &[
    "ERROR",
    "PAD",
    "IMAGE_SLOT",
    "JUMPTABLE_RELOCS",
    "CTAIDZ_USED",
    "MAX_THREADS",
    "IMAGE_OFFSET",
    "IMAGE_SIZE",
    "TEXTURE_NORMALIZED",
    "SAMPLER_INIT",
    "PARAM_CBANK",
    "SMEM_PARAM_OFFSETS",
    "CBANK_PARAM_OFFSETS",
    "SYNC_STACK",
    "TEXID_SAMPID_MAP",
    "EXTERNS",
    "REQNTID",
    "FRAME_SIZE",
    "MIN_STACK_SIZE",
    "SAMPLER_FORCE_UNNORMALIZED",
    "BINDLESS_IMAGE_OFFSETS",
    "BINDLESS_TEXTURE_BANK",
    "BINDLESS_SURFACE_BANK",
    "KPARAM_INFO",
    "SMEM_PARAM_SIZE",
    "CBANK_PARAM_SIZE",
    "QUERY_NUMATTRIB",
    "MAXREG_COUNT",
    "EXIT_INSTR_OFFSETS",
    "S2RCTAID_INSTR_OFFSETS",
    "CRS_STACK_SIZE",
    "NEED_CNP_WRAPPER",
    "NEED_CNP_PATCH",
    "EXPLICIT_CACHING",
    "ISTYPEP_USED",
    "MAX_STACK_SIZE",
    "SUQ_USED",
    "LD_CACHEMOD_INSTR_OFFSETS",
    "LOAD_CACHE_REQUEST",
    "ATOM_SYS_INSTR_OFFSETS",
    "COOP_GROUP_INSTR_OFFSETS",
    "COOP_GROUP_MAX_REGIDS",
    "SW1850030_WAR",
    "WMMA_USED",
    "HAS_PRE_V10_OBJECT",
    "ATOMF16_EMUL_INSTR_OFFSETS",
    "ATOM16_EMUL_INSTR_REG_MAP",
    "REGCOUNT",
    "SW2393858_WAR",
    "INT_WARP_WIDE_INSTR_OFFSETS",
    "SHARED_SCRATCH",
    "STATISTICS",
    "INDIRECT_BRANCH_TARGETS",
    "SW2861232_WAR",
    "SW_WAR",
    "CUDA_API_VERSION",
    "NUM_MBARRIERS",
    "MBARRIER_INSTR_OFFSETS",
    "COROUTINE_RESUME_OFFSETS",
    "SAM_REGION_STACK_SIZE",
    "PER_REG_TARGET_PERF_STATS",
    "CTA_PER_CLUSTER",
    "EXPLICIT_CLUSTER",
    "MAX_CLUSTER_RANK",
    "INSTR_REG_MAP",
    "RESERVED_SMEM_USED",
    "RESERVED_SMEM_0_SIZE",
    "UCODE_SECTION_DATA",
    "UNUSED_LOAD_BYTE_OFFSET",
    "KPARAM_INFO_V2",
    "SYSCALL_OFFSETS",
    "SW_WAR_MEMBAR_SYS_INSTR_OFFSETS",
    "GRAPHICS_GLOBAL_CBANK",
    "SHADER_TYPE",
    "VRC_CTA_INIT_COUNT",
    "TOOLS_PATCH_FUNC",
    "NUM_BARRIERS",
    "TEXMODE_INDEPENDENT",
    "PERF_STATISTICS",
    "AT_ENTRY_FRAGMENTS",
    "SPARSE_MMA_MASK",
    "TCGEN05_1CTA_USED",
    "TCGEN05_2CTA_USED",
    "GEN_ERRBAR_AT_EXIT",
    "REG_RECONFIG",
    "ANNOTATIONS",
    "UNKNOWN",
    "STACK_CANARY_TRAP_OFFSETS",
    "STUB_FUNCTION_KIND",
    "LOCAL_CTA_ASYNC_STORE_OFFSETS",
    "MERCURY_FINALIZER_OPTIONS",
    "BLOCKS_ARE_CLUSTERS",
    "SANITIZE",
    "SYSCALLS_FALLBACK",
    "CUDA_REQ",
    "MERCURY_ISA_VERSION",
];

/// `EIATTR_<NAME>` for an attribute code, `EIATTR_UNKNOWN_0x..` otherwise.
pub(crate) fn eiattr_name(attr: u8) -> String {
    match EIATTR_NAMES.get(attr as usize) {
        Some(n) if attr != 0x56 => format!("EIATTR_{n}"),
        _ => format!("EIATTR_UNKNOWN_{attr:#04x}"),
    }
}

/// `EICOMPAT_ATTR_<NAME>` for an `.nv.compat` attribute code.
pub(crate) fn eicompat_name(attr: u8) -> String {
    let n = match attr {
        0 => "ERROR",
        1 => "PAD",
        2 => "ISA_CLASS",
        3 => "INST_TENSORMAP_V1",
        4 => "INST_TCGEN05_MMA_DEPRECATED",
        5 => "INST_TCGEN05_MMA",
        6 => "ENABLE_OPPORTUNISTIC_FINALIZATION",
        7 => "MERCURY_ISA_MAJOR_MINOR_VERSION",
        8 => "MERCURY_ISA_PATCH_VERSION",
        9 => "CUDA_ACCELERATOR_TARGET",
        11 => "CAN_FASTPATH_FINALIZE",
        a => return format!("EICOMPAT_ATTR_UNKNOWN_{a:#04x}"),
    };
    format!("EICOMPAT_ATTR_{n}")
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

/// The symbol-index words of attribute `attr` (measured: facts §5).
pub(crate) fn symbol_words(attr: u8) -> SymWords {
    match attr {
        // PARAM_CBANK, FRAME_SIZE, MIN_STACK_SIZE, CRS_STACK_SIZE, MAX_STACK_SIZE,
        // REGCOUNT, SAM_REGION_STACK_SIZE
        0x0a | 0x11 | 0x12 | 0x1e | 0x23 | 0x2f | 0x3b => SymWords::First,
        // EXTERNS
        0x0f => SymWords::All,
        _ => SymWords::None,
    }
}

/// One ELF note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Note<'a> {
    /// Offset of the note in its section.
    pub offset: usize,
    /// Owner name without the terminating NUL.
    pub name: &'a [u8],
    /// `n_type`.
    pub ntype: u32,
    /// Descriptor bytes.
    pub desc: &'a [u8],
}

/// Parses the notes of a `SHT_NOTE` section (4-byte aligned name and descriptor).
pub(crate) fn parse_notes(data: &[u8]) -> Result<Vec<Note<'_>>, String> {
    let mut out = Vec::new();
    let mut i = 0usize;
    while i < data.len() {
        let bad = || format!("truncated note at offset {i:#x}");
        let namesz = le::u32(data, i).ok_or_else(bad)? as usize;
        let descsz = le::u32(data, i + 4).ok_or_else(bad)? as usize;
        let ntype = le::u32(data, i + 8).ok_or_else(bad)?;
        let name_start = i + 12;
        let desc_start = name_start
            .checked_add(namesz.checked_add(3).ok_or_else(bad)? & !3)
            .ok_or_else(bad)?;
        let name = data
            .get(name_start..name_start.checked_add(namesz).ok_or_else(bad)?)
            .ok_or_else(bad)?;
        let desc = data
            .get(desc_start..desc_start.checked_add(descsz).ok_or_else(bad)?)
            .ok_or_else(bad)?;
        let name = name.strip_suffix(b"\0").unwrap_or(name);
        out.push(Note {
            offset: i,
            name,
            ntype,
            desc,
        });
        i = desc_start + ((descsz + 3) & !3);
    }
    Ok(out)
}

fn cstr(data: &[u8], off: usize) -> String {
    let rest = data.get(off..).unwrap_or(&[]);
    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    String::from_utf8_lossy(&rest[..end]).into_owned()
}

/// A one-line decoding of an NVIDIA note (tkinfo / cuinfo), raw hex otherwise.
pub(crate) fn describe_note(note: &Note<'_>) -> String {
    let owner = String::from_utf8_lossy(note.name);
    let d = note.desc;
    if note.name == b"NVIDIA Corp" && note.ntype == crate::elf::NT_CUDA_TKINFO && d.len() >= 24 {
        // u32 version, u32 reserved, then four offsets into the string area at 24.
        let w = |k: usize| le::u32(d, k).unwrap_or(0) as usize;
        let strings = &d[24..];
        return format!(
            "tkinfo v{} tool {:?} version {:?} branch {:?} args {:?}",
            w(0),
            cstr(strings, w(8)),
            cstr(strings, w(12)),
            cstr(strings, w(16)),
            cstr(strings, w(20))
        );
    }
    if note.name == b"NVIDIA Corp" && note.ntype == crate::elf::NT_CUDA_CUINFO && d.len() >= 8 {
        return format!(
            "cuinfo v{} virtual sm_{} cuda api {:#x}",
            le::u16(d, 0).unwrap_or(0),
            le::u16(d, 2).unwrap_or(0),
            le::u32(d, 4).unwrap_or(0)
        );
    }
    format!("owner {owner:?} type {:#x} desc {}", note.ntype, hex(d))
}

/// `(u32, u32)` pairs of `.nv.callgraph` / `.nv.prototype` (entsize 8); a
/// trailing partial entry is ignored by the caller via `rest`.
pub(crate) fn pairs(data: &[u8]) -> (Vec<(u32, u32)>, usize) {
    let v = data
        .chunks_exact(8)
        .map(|c| (le::u32(c, 0).unwrap_or(0), le::u32(c, 4).unwrap_or(0)))
        .collect();
    (v, data.len() % 8)
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
