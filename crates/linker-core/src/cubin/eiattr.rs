//! EIATTR attribute streams: the `.nv.info` and `.nv.info.<function>` sections
//! (and, with another code space, `.nv.compat`; see [`super::compat`]).
//!
//! A stream is a flat sequence of records, each starting with `u8 format, u8 attr`:
//!
//! | format | name | wire form |
//! |---|---|---|
//! | 1 | `EIFMT_NVAL` | `fmt attr u16` (4 bytes; the u16 carries nothing, 0 in practice) |
//! | 2 | `EIFMT_BVAL` | `fmt attr u8 pad` (4 bytes) |
//! | 3 | `EIFMT_HVAL` | `fmt attr u16` (4 bytes) |
//! | 4 | `EIFMT_SVAL` | `fmt attr u16 len`, then `len` payload bytes |
//!
//! Parsing is zero-copy ([`Record`] borrows the section bytes) and keeps the
//! unused bytes of NVAL/BVAL records, so `encode(parse(x)) == x` for every
//! well-formed stream. Some SVAL payloads hold symbol-table indices that a linker
//! must renumber: [`symbol_fields`] says which, [`rewrite_symbols`] renumbers.
//!
//! Names are the ones `cuobjdump -elf` (CUDA 13.0) prints.

use std::fmt;

use crate::error::{Error, ErrorKind, Result};

/// The value format of an EIATTR (or EICOMPAT) record: the first byte of the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EiFormat(pub u8);

impl EiFormat {
    /// `EIFMT_NVAL`: no value (record is 4 bytes).
    pub const NVAL: EiFormat = EiFormat(1);
    /// `EIFMT_BVAL`: one value byte plus one pad byte.
    pub const BVAL: EiFormat = EiFormat(2);
    /// `EIFMT_HVAL`: a little-endian u16.
    pub const HVAL: EiFormat = EiFormat(3);
    /// `EIFMT_SVAL`: a u16 length followed by that many payload bytes.
    pub const SVAL: EiFormat = EiFormat(4);

    /// The `EIFMT_*` name, or `None` for an unknown format byte.
    pub fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            1 => "EIFMT_NVAL",
            2 => "EIFMT_BVAL",
            3 => "EIFMT_HVAL",
            4 => "EIFMT_SVAL",
            _ => return None,
        })
    }
}

impl fmt::Display for EiFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "Unknown(0x{:02x})", self.0),
        }
    }
}

macro_rules! attr_codes {
    ($ty:ident; $( $(#[$doc:meta])* $name:ident = $val:expr ),* $(,)?) => {
        impl $ty {
            $( $(#[$doc])* pub const $name: $ty = $ty($val); )*

            /// The name `cuobjdump -elf` prints for this code, or `None` if unknown.
            pub fn name(self) -> Option<&'static str> {
                match self.0 {
                    $( $val => Some(stringify!($name)), )*
                    _ => None,
                }
            }

            /// Every named code, in numeric order.
            pub const ALL: &'static [$ty] = &[ $( $ty($val), )* ];
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.name() {
                    Some(n) => f.write_str(n),
                    None => write!(f, "Unknown(0x{:02x})", self.0),
                }
            }
        }

        impl From<u8> for $ty {
            fn from(v: u8) -> Self {
                $ty(v)
            }
        }

        impl From<$ty> for u8 {
            fn from(v: $ty) -> u8 {
                v.0
            }
        }
    };
}
pub(crate) use attr_codes;

/// An EIATTR attribute code (the second byte of a `.nv.info` record).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EiAttr(pub u8);

attr_codes! { EiAttr;
    /// Invalid/sentinel code.
    EIATTR_ERROR = 0x00,
    /// Padding.
    EIATTR_PAD = 0x01,
    /// Texture/surface image slot (legacy bound textures).
    EIATTR_IMAGE_SLOT = 0x02,
    /// Jump-table relocation offsets.
    EIATTR_JUMPTABLE_RELOCS = 0x03,
    /// The function reads `%ctaid.z`.
    EIATTR_CTAIDZ_USED = 0x04,
    /// `.maxntid` (u32 x, y, z).
    EIATTR_MAX_THREADS = 0x05,
    /// Image descriptor offset.
    EIATTR_IMAGE_OFFSET = 0x06,
    /// Image descriptor size.
    EIATTR_IMAGE_SIZE = 0x07,
    /// Texture uses normalized coordinates.
    EIATTR_TEXTURE_NORMALIZED = 0x08,
    /// Sampler initialisation: u32 sampler symbol index, u32 initialiser.
    EIATTR_SAMPLER_INIT = 0x09,
    /// Parameter constant bank: u32 symbol index of the `.nv.constant0.<fn>`
    /// section symbol, u32 `size << 16 | offset`.
    EIATTR_PARAM_CBANK = 0x0a,
    /// Parameter offsets in shared memory (pre-Fermi).
    EIATTR_SMEM_PARAM_OFFSETS = 0x0b,
    /// Parameter offsets in the constant bank.
    EIATTR_CBANK_PARAM_OFFSETS = 0x0c,
    /// Sync stack size.
    EIATTR_SYNC_STACK = 0x0d,
    /// Texture id to sampler id map.
    EIATTR_TEXID_SAMPID_MAP = 0x0e,
    /// Undefined functions called by this function: every u32 is a symbol index.
    EIATTR_EXTERNS = 0x0f,
    /// `.reqntid` (u32 x, y, z).
    EIATTR_REQNTID = 0x10,
    /// Frame size: u32 function symbol index, u32 bytes.
    EIATTR_FRAME_SIZE = 0x11,
    /// Minimum stack size: u32 function symbol index, u32 bytes (added by the linker).
    EIATTR_MIN_STACK_SIZE = 0x12,
    /// Sampler forces unnormalized coordinates.
    EIATTR_SAMPLER_FORCE_UNNORMALIZED = 0x13,
    /// Offsets of bindless image instructions.
    EIATTR_BINDLESS_IMAGE_OFFSETS = 0x14,
    /// Constant bank holding bindless texture handles.
    EIATTR_BINDLESS_TEXTURE_BANK = 0x15,
    /// Constant bank holding bindless surface handles.
    EIATTR_BINDLESS_SURFACE_BANK = 0x16,
    /// One kernel parameter (12 bytes: index, ordinal, offset, size/flags).
    EIATTR_KPARAM_INFO = 0x17,
    /// Parameter size in shared memory (pre-Fermi).
    EIATTR_SMEM_PARAM_SIZE = 0x18,
    /// Total parameter size in the constant bank.
    EIATTR_CBANK_PARAM_SIZE = 0x19,
    /// Texture/sampler/surface query attribute counts.
    EIATTR_QUERY_NUMATTRIB = 0x1a,
    /// `.maxnreg`.
    EIATTR_MAXREG_COUNT = 0x1b,
    /// Offsets of EXIT instructions.
    EIATTR_EXIT_INSTR_OFFSETS = 0x1c,
    /// Offsets of `S2R SR_CTAID` instructions.
    EIATTR_S2RCTAID_INSTR_OFFSETS = 0x1d,
    /// CRS (call/return stack) size.
    EIATTR_CRS_STACK_SIZE = 0x1e,
    /// Needs a CUDA dynamic parallelism wrapper.
    EIATTR_NEED_CNP_WRAPPER = 0x1f,
    /// Needs CUDA dynamic parallelism patching.
    EIATTR_NEED_CNP_PATCH = 0x20,
    /// Explicit caching.
    EIATTR_EXPLICIT_CACHING = 0x21,
    /// `istypep` used.
    EIATTR_ISTYPEP_USED = 0x22,
    /// Maximum stack size: u32 function symbol index, u32 bytes (dropped in `ET_EXEC`).
    EIATTR_MAX_STACK_SIZE = 0x23,
    /// `suq` used.
    EIATTR_SUQ_USED = 0x24,
    /// Offsets of loads with a cache modifier.
    EIATTR_LD_CACHEMOD_INSTR_OFFSETS = 0x25,
    /// Load cache request: u32 function symbol index, u32 flag.
    EIATTR_LOAD_CACHE_REQUEST = 0x26,
    /// Offsets of system-scope atomics.
    EIATTR_ATOM_SYS_INSTR_OFFSETS = 0x27,
    /// Offsets of cooperative-group instructions.
    EIATTR_COOP_GROUP_INSTR_OFFSETS = 0x28,
    /// Cooperative-group mask register ids.
    EIATTR_COOP_GROUP_MASK_REGIDS = 0x29,
    /// Workaround 1850030.
    EIATTR_SW1850030_WAR = 0x2a,
    /// WMMA used.
    EIATTR_WMMA_USED = 0x2b,
    /// Object contains pre-v10 code.
    EIATTR_HAS_PRE_V10_OBJECT = 0x2c,
    /// Offsets of emulated f16 atomics.
    EIATTR_ATOMF16_EMUL_INSTR_OFFSETS = 0x2d,
    /// Emulated 16-bit atomic register map (offset, register pairs).
    EIATTR_ATOM16_EMUL_INSTR_REG_MAP = 0x2e,
    /// Register count: u32 function symbol index, u32 registers.
    EIATTR_REGCOUNT = 0x2f,
    /// Workaround 2393858.
    EIATTR_SW2393858_WAR = 0x30,
    /// Offsets of warp-wide integer instructions.
    EIATTR_INT_WARP_WIDE_INSTR_OFFSETS = 0x31,
    /// Shared scratch (start offset, size).
    EIATTR_SHARED_SCRATCH = 0x32,
    /// Compilation statistics.
    EIATTR_STATISTICS = 0x33,
    /// Indirect branch targets.
    EIATTR_INDIRECT_BRANCH_TARGETS = 0x34,
    /// Workaround 2861232.
    EIATTR_SW2861232_WAR = 0x35,
    /// Software workaround flags.
    EIATTR_SW_WAR = 0x36,
    /// CUDA API version of the compiling toolkit (e.g. 0x82 = 13.0).
    EIATTR_CUDA_API_VERSION = 0x37,
    /// Number of mbarriers.
    EIATTR_NUM_MBARRIERS = 0x38,
    /// Offsets of mbarrier instructions.
    EIATTR_MBARRIER_INSTR_OFFSETS = 0x39,
    /// Coroutine resume id offsets.
    EIATTR_COROUTINE_RESUME_ID_OFFSETS = 0x3a,
    /// SAM region stack size: u32 function symbol index, u32 bytes.
    EIATTR_SAM_REGION_STACK_SIZE = 0x3b,
    /// Per-register-target performance statistics.
    EIATTR_PER_REG_TARGET_PERF_STATS = 0x3c,
    /// CTAs per cluster.
    EIATTR_CTA_PER_CLUSTER = 0x3d,
    /// Explicit cluster.
    EIATTR_EXPLICIT_CLUSTER = 0x3e,
    /// Maximum cluster rank.
    EIATTR_MAX_CLUSTER_RANK = 0x3f,
    /// Instruction register map.
    EIATTR_INSTR_REG_MAP = 0x40,
    /// Reserved shared memory used.
    EIATTR_RESERVED_SMEM_USED = 0x41,
    /// Size of reserved shared memory 0.
    EIATTR_RESERVED_SMEM_0_SIZE = 0x42,
    /// Microcode section data.
    EIATTR_UCODE_SECTION_DATA = 0x43,
    /// Unused load byte offsets.
    EIATTR_UNUSED_LOAD_BYTE_OFFSET = 0x44,
    /// Kernel parameter info, version 2.
    EIATTR_KPARAM_INFO_V2 = 0x45,
    /// Offsets of syscall instructions.
    EIATTR_SYSCALL_OFFSETS = 0x46,
    /// Offsets of `MEMBAR.SYS` workaround instructions.
    EIATTR_SW_WAR_MEMBAR_SYS_INSTR_OFFSETS = 0x47,
    /// Graphics global constant bank.
    EIATTR_GRAPHICS_GLOBAL_CBANK = 0x48,
    /// Shader type.
    EIATTR_SHADER_TYPE = 0x49,
    /// VRC CTA init count.
    EIATTR_VRC_CTA_INIT_COUNT = 0x4a,
    /// Tools patch function.
    EIATTR_TOOLS_PATCH_FUNC = 0x4b,
    /// Number of named barriers used (BVAL; propagated from callees by the linker).
    EIATTR_NUM_BARRIERS = 0x4c,
    /// Independent texture mode.
    EIATTR_TEXMODE_INDEPENDENT = 0x4d,
    /// Performance statistics.
    EIATTR_PERF_STATISTICS = 0x4e,
    /// At-entry fragments (name from the nvlink/ptxas string table; cuobjdump
    /// prints "unknown Attribute"; the tools spell it `..._FRAGEMENTS`).
    EIATTR_AT_ENTRY_FRAGMENTS = 0x4f,
    /// Sparse MMA mask.
    EIATTR_SPARSE_MMA_MASK = 0x50,
    /// tcgen05 1-CTA instructions used.
    EIATTR_TCGEN05_1CTA_USED = 0x51,
    /// tcgen05 2-CTA instructions used.
    EIATTR_TCGEN05_2CTA_USED = 0x52,
    /// Generate an error barrier at exit.
    EIATTR_GEN_ERRBAR_AT_EXIT = 0x53,
    /// Register reconfiguration.
    EIATTR_REG_RECONFIG = 0x54,
    /// Annotations.
    EIATTR_ANNOTATIONS = 0x55,
    /// Placeholder code (name from the nvlink/ptxas string table; cuobjdump prints
    /// "unknown Attribute").
    EIATTR_UNKNOWN = 0x56,
    /// Stack canary trap offsets.
    EIATTR_STACK_CANARY_TRAP_OFFSETS = 0x57,
    /// Stub function kind.
    EIATTR_STUB_FUNCTION_KIND = 0x58,
    /// Offsets of local CTA async stores.
    EIATTR_LOCAL_CTA_ASYNC_STORE_OFFSETS = 0x59,
    /// Mercury finalizer options.
    EIATTR_MERCURY_FINALIZER_OPTIONS = 0x5a,
    /// Blocks are clusters.
    EIATTR_BLOCKS_ARE_CLUSTERS = 0x5b,
    /// Sanitizer instrumentation.
    EIATTR_SANITIZE = 0x5c,
    /// Syscall fallbacks: pairs of u32 symbol indices (`a -> b`).
    EIATTR_SYSCALLS_FALLBACK = 0x5d,
    /// CUDA requirements.
    EIATTR_CUDA_REQ = 0x5e,
    /// Mercury ISA version (HVAL: major in the low byte, minor in the high byte).
    EIATTR_MERCURY_ISA_VERSION = 0x5f,
    /// One past the last code ptxas/nvlink 13.0 know (they reject codes above it).
    EIATTR_ERROR_LAST = 0x60,
    /// RT core entry (known to cuobjdump only).
    EIATTR_RTCORE_ENTRY = 0x61,
    /// Cluster launch control used (known to cuobjdump only).
    EIATTR_CLUSTER_LAUNCH_CONTROL_USED = 0x62,
    /// Minimum per-CTA memory size (known to cuobjdump only).
    EIATTR_MIN_PER_CTA_MEMORY_SIZE = 0x64,
    /// Offsets of ignore-OOB `cp.async.bulk` instructions (known to cuobjdump only).
    EIATTR_IGNOREOOB_CP_ASYNC_BULK_INSTR_OFFSETS = 0x65,
    /// Source language (known to cuobjdump only).
    EIATTR_LANGUAGE = 0x66,
    /// NVSAL software workaround (known to cuobjdump only).
    EIATTR_NVSAL_SW_WAR = 0x6b,
}

/// The value of a record, borrowed from the section bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Value<'d> {
    /// `EIFMT_NVAL`: no value.
    None,
    /// `EIFMT_BVAL`: one byte.
    Byte(u8),
    /// `EIFMT_HVAL`: a u16.
    Half(u16),
    /// `EIFMT_SVAL`: the payload (without its u16 length).
    Bytes(&'d [u8]),
}

/// One record of an attribute stream. `A` is the code space: [`EiAttr`] for
/// `.nv.info*`, [`super::compat::EiCompat`] for `.nv.compat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Record<'d, A = EiAttr> {
    /// Byte offset of the record within the section.
    pub offset: usize,
    /// The format byte.
    pub format: EiFormat,
    /// The attribute code.
    pub attr: A,
    /// The value; its variant always matches `format` for parsed records.
    pub value: Value<'d>,
    /// The bytes the format leaves unused, kept for byte-exact re-encoding: the u16
    /// of an NVAL record, the pad byte of a BVAL record; 0 otherwise (and 0 in all
    /// observed ptxas/nvlink output).
    pub pad: u16,
}

/// Reads a little-endian u16 at `at` (caller guarantees bounds).
fn le16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

/// Reads a little-endian u32 at `at`, `None` when out of bounds.
pub(crate) fn le32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// A zero-copy iterator over the records of an attribute stream.
///
/// Yields `Err` once (with the byte offset) on a truncated record or unknown
/// format, then ends.
#[derive(Debug, Clone)]
pub struct Iter<'d, A = EiAttr> {
    data: &'d [u8],
    pos: usize,
    failed: bool,
    _code: std::marker::PhantomData<A>,
}

impl<'d, A> Iter<'d, A> {
    /// Iterates over the records of `data` (a whole section's contents).
    pub fn new(data: &'d [u8]) -> Self {
        Iter {
            data,
            pos: 0,
            failed: false,
            _code: std::marker::PhantomData,
        }
    }
}

impl<'d, A: From<u8>> Iterator for Iter<'d, A> {
    type Item = Result<Record<'d, A>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.data.len() {
            return None;
        }
        let r = parse_one(self.data, self.pos);
        match &r {
            Ok((_, next)) => self.pos = *next,
            Err(_) => self.failed = true,
        }
        Some(r.map(|(rec, _)| rec))
    }
}

fn parse_one<'d, A: From<u8>>(d: &'d [u8], off: usize) -> Result<(Record<'d, A>, usize)> {
    let trunc = |what: &str| {
        Error::malformed(format!("truncated attribute record ({what})")).at(off as u64)
    };
    let (Some(&fmt_b), Some(&attr_b)) = (d.get(off), d.get(off + 1)) else {
        return Err(trunc("header"));
    };
    let format = EiFormat(fmt_b);
    let field = le16(d, off + 2).ok_or_else(|| trunc("header"))?;
    let attr = A::from(attr_b);
    let (value, pad, next) = match format {
        EiFormat::NVAL => (Value::None, field, off + 4),
        EiFormat::BVAL => (Value::Byte(field as u8), field >> 8, off + 4),
        EiFormat::HVAL => (Value::Half(field), 0, off + 4),
        EiFormat::SVAL => {
            let start = off + 4;
            let end = start + field as usize;
            let payload = d.get(start..end).ok_or_else(|| {
                Error::malformed(format!(
                    "attribute payload of {} bytes runs past the section end ({} bytes left)",
                    field,
                    d.len() - start
                ))
                .at(off as u64)
            })?;
            (Value::Bytes(payload), 0, end)
        }
        other => {
            return Err(
                Error::malformed(format!("unknown attribute format {other}")).at(off as u64),
            );
        }
    };
    Ok((
        Record {
            offset: off,
            format,
            attr,
            value,
            pad,
        },
        next,
    ))
}

/// Parses a whole `.nv.info*` section.
pub fn parse(bytes: &[u8]) -> Result<Vec<Record<'_>>> {
    parse_as(bytes)
}

/// Parses a whole attribute stream with the code space `A`.
pub fn parse_as<A: From<u8>>(bytes: &[u8]) -> Result<Vec<Record<'_, A>>> {
    Iter::new(bytes).collect()
}

/// Appends the encoding of `records` to `out`.
///
/// Fails (without a partial record) when a value does not match its format or an
/// SVAL payload exceeds 65535 bytes.
pub fn encode<A: Copy + Into<u8>>(records: &[Record<'_, A>], out: &mut Vec<u8>) -> Result<()> {
    for r in records {
        r.encode(out)?;
    }
    Ok(())
}

impl<'d, A: Copy + Into<u8>> Record<'d, A> {
    /// The number of bytes [`Record::encode`] writes.
    pub fn encoded_len(&self) -> usize {
        match self.value {
            Value::Bytes(b) => 4 + b.len(),
            _ => 4,
        }
    }

    /// Appends this record's wire form to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        let field: u16 = match (self.format, self.value) {
            (EiFormat::NVAL, Value::None) => self.pad,
            (EiFormat::BVAL, Value::Byte(b)) => {
                if self.pad > 0xff {
                    return Err(Error::new(
                        ErrorKind::Overflow,
                        "BVAL pad does not fit one byte",
                    ));
                }
                u16::from(b) | self.pad << 8
            }
            (EiFormat::HVAL, Value::Half(h)) => h,
            (EiFormat::SVAL, Value::Bytes(b)) => u16::try_from(b.len()).map_err(|_| {
                Error::new(
                    ErrorKind::Overflow,
                    format!("attribute payload of {} bytes exceeds 65535", b.len()),
                )
            })?,
            (f, v) => {
                return Err(Error::new(
                    ErrorKind::Overflow,
                    format!("attribute value {v:?} does not match format {f}"),
                ));
            }
        };
        out.push(self.format.0);
        out.push(self.attr.into());
        out.extend_from_slice(&field.to_le_bytes());
        if let Value::Bytes(b) = self.value {
            out.extend_from_slice(b);
        }
        Ok(())
    }

    /// The SVAL payload, if this is an SVAL record.
    pub fn payload(&self) -> Option<&'d [u8]> {
        match self.value {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }

    /// The payload as little-endian u32 words, if this is an SVAL record whose
    /// length is a multiple of 4.
    pub fn words(&self) -> Option<Vec<u32>> {
        let b = self.payload()?;
        if b.len() & 3 != 0 {
            return None;
        }
        Some(
            b.chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        )
    }

    /// The value as an integer: BVAL byte, HVAL u16, or a 4-byte SVAL payload.
    pub fn int_value(&self) -> Option<u32> {
        match self.value {
            Value::Byte(b) => Some(u32::from(b)),
            Value::Half(h) => Some(u32::from(h)),
            Value::Bytes(b) if b.len() == 4 => le32(b, 0),
            _ => None,
        }
    }

    /// An owned copy (offset dropped).
    pub fn to_owned_record(&self) -> OwnedRecord<A> {
        OwnedRecord {
            format: self.format,
            attr: self.attr,
            value: match self.value {
                Value::None => OwnedValue::None,
                Value::Byte(b) => OwnedValue::Byte(b),
                Value::Half(h) => OwnedValue::Half(h),
                Value::Bytes(b) => OwnedValue::Bytes(b.to_vec()),
            },
            pad: self.pad,
        }
    }
}

impl Record<'_, EiAttr> {
    /// Which payload words are symbol indices (see [`symbol_fields`]).
    pub fn symbol_fields(&self) -> SymFields {
        let len = self.payload().map_or(0, <[u8]>::len);
        symbol_fields(self.attr, self.format, len)
    }

    /// The symbol indices in the payload, in order.
    ///
    /// Fails when the attribute holds symbol indices but its payload length does
    /// not fit the layout ([`SymFields::Invalid`]).
    pub fn symbol_indices(&self) -> Result<Vec<u32>> {
        let p = self.payload().unwrap_or(&[]);
        let f = self.symbol_fields();
        if f == SymFields::Invalid {
            return Err(self.bad_layout());
        }
        Ok(f.offsets(p.len()).filter_map(|o| le32(p, o)).collect())
    }

    /// For the `(function symbol, u32)` attributes (REGCOUNT, FRAME_SIZE,
    /// MIN/MAX_STACK_SIZE, PARAM_CBANK, LOAD_CACHE_REQUEST, SAM_REGION_STACK_SIZE)
    /// with an 8-byte payload: `(symbol index, value)`.
    pub fn sym_value(&self) -> Option<(u32, u32)> {
        let p = self.payload()?;
        if p.len() != 8 || self.symbol_fields() != SymFields::First {
            return None;
        }
        Some((le32(p, 0)?, le32(p, 4)?))
    }

    fn bad_layout(&self) -> Error {
        Error::malformed(format!(
            "{} payload of {} bytes does not fit its symbol-index layout",
            self.attr,
            self.payload().map_or(0, <[u8]>::len)
        ))
        .at(self.offset as u64)
    }
}

/// Which u32 words of an SVAL payload are symbol-table indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SymFields {
    /// No symbol indices.
    None,
    /// The first u32 (byte offset 0) is a symbol index.
    First,
    /// Every u32 is a symbol index.
    All,
    /// The attribute holds symbol indices, but the payload length does not fit
    /// (shorter than 4 bytes, or not a multiple of 4 for [`SymFields::All`]).
    Invalid,
}

impl SymFields {
    /// The byte offsets, within a payload of `payload_len` bytes, of the symbol
    /// indices (nothing for `None` and `Invalid`).
    pub fn offsets(self, payload_len: usize) -> impl Iterator<Item = usize> {
        let n = match self {
            SymFields::None | SymFields::Invalid => 0,
            SymFields::First => usize::from(payload_len >= 4),
            SymFields::All => payload_len / 4,
        };
        (0..n).map(|i| i * 4)
    }
}

/// Which words of a record's payload are symbol indices, from the attribute code,
/// format and payload length. Only SVAL records hold symbol indices.
///
/// | code | layout |
/// |---|---|
/// | `SAMPLER_INIT` 0x09 | word 0 (the sampler reference; word 1 its initialiser) |
/// | `PARAM_CBANK` 0x0a | word 0 (section symbol of `.nv.constant0.<fn>`) |
/// | `EXTERNS` 0x0f | every word |
/// | `FRAME_SIZE` 0x11, `MIN_STACK_SIZE` 0x12, `MAX_STACK_SIZE` 0x23, `LOAD_CACHE_REQUEST` 0x26, `REGCOUNT` 0x2f, `SAM_REGION_STACK_SIZE` 0x3b | word 0 |
/// | `SYSCALLS_FALLBACK` 0x5d | every word |
pub fn symbol_fields(attr: EiAttr, format: EiFormat, payload_len: usize) -> SymFields {
    if format != EiFormat::SVAL {
        return SymFields::None;
    }
    let layout = match attr {
        EiAttr::EIATTR_PARAM_CBANK
        | EiAttr::EIATTR_FRAME_SIZE
        | EiAttr::EIATTR_MIN_STACK_SIZE
        | EiAttr::EIATTR_MAX_STACK_SIZE
        | EiAttr::EIATTR_LOAD_CACHE_REQUEST
        | EiAttr::EIATTR_REGCOUNT
        | EiAttr::EIATTR_SAM_REGION_STACK_SIZE
        | EiAttr::EIATTR_SAMPLER_INIT => SymFields::First,
        EiAttr::EIATTR_EXTERNS | EiAttr::EIATTR_SYSCALLS_FALLBACK => SymFields::All,
        _ => return SymFields::None,
    };
    match layout {
        SymFields::First if payload_len < 4 => SymFields::Invalid,
        SymFields::All if payload_len & 3 != 0 => SymFields::Invalid,
        l => l,
    }
}

/// Returns an owned copy of `record` with every symbol index `s` in its payload
/// replaced by `map(s)`.
///
/// Fails with [`ErrorKind::Symbol`] (at the record's offset) when `map` returns
/// `None`, and with [`ErrorKind::Malformed`] when the payload does not fit the
/// attribute's symbol layout.
pub fn rewrite_symbols(
    record: &Record<'_, EiAttr>,
    map: impl Fn(u32) -> Option<u32>,
) -> Result<OwnedRecord> {
    let fields = record.symbol_fields();
    if fields == SymFields::Invalid {
        return Err(record.bad_layout());
    }
    let mut owned = record.to_owned_record();
    if let OwnedValue::Bytes(p) = &mut owned.value {
        for o in fields.offsets(p.len()) {
            let old = le32(p, o).unwrap_or(0);
            let new = map(old).ok_or_else(|| {
                Error::new(
                    ErrorKind::Symbol,
                    format!("{}: symbol index {old} has no output symbol", record.attr),
                )
                .at(record.offset as u64)
            })?;
            p[o..o + 4].copy_from_slice(&new.to_le_bytes());
        }
    }
    Ok(owned)
}

/// An owned record value (see [`Value`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum OwnedValue {
    /// `EIFMT_NVAL`.
    None,
    /// `EIFMT_BVAL`.
    Byte(u8),
    /// `EIFMT_HVAL`.
    Half(u16),
    /// `EIFMT_SVAL` payload.
    Bytes(Vec<u8>),
}

/// An owned record, for attributes the linker builds or rewrites.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OwnedRecord<A = EiAttr> {
    /// The format byte.
    pub format: EiFormat,
    /// The attribute code.
    pub attr: A,
    /// The value.
    pub value: OwnedValue,
    /// Unused bytes (see [`Record::pad`]).
    pub pad: u16,
}

impl<A: Copy + Into<u8>> OwnedRecord<A> {
    /// An NVAL record.
    pub fn nval(attr: A) -> Self {
        Self::with(attr, EiFormat::NVAL, OwnedValue::None)
    }
    /// A BVAL record.
    pub fn bval(attr: A, v: u8) -> Self {
        Self::with(attr, EiFormat::BVAL, OwnedValue::Byte(v))
    }
    /// An HVAL record.
    pub fn hval(attr: A, v: u16) -> Self {
        Self::with(attr, EiFormat::HVAL, OwnedValue::Half(v))
    }
    /// An SVAL record with the given payload.
    pub fn sval(attr: A, payload: Vec<u8>) -> Self {
        Self::with(attr, EiFormat::SVAL, OwnedValue::Bytes(payload))
    }
    /// An SVAL record whose payload is the given little-endian u32 words, e.g.
    /// `words(EIATTR_MIN_STACK_SIZE, &[sym, bytes])`.
    pub fn words(attr: A, words: &[u32]) -> Self {
        Self::sval(attr, words.iter().flat_map(|w| w.to_le_bytes()).collect())
    }
    fn with(attr: A, format: EiFormat, value: OwnedValue) -> Self {
        OwnedRecord {
            format,
            attr,
            value,
            pad: 0,
        }
    }

    /// A borrowed view (offset 0).
    pub fn as_record(&self) -> Record<'_, A> {
        Record {
            offset: 0,
            format: self.format,
            attr: self.attr,
            value: match &self.value {
                OwnedValue::None => Value::None,
                OwnedValue::Byte(b) => Value::Byte(*b),
                OwnedValue::Half(h) => Value::Half(*h),
                OwnedValue::Bytes(b) => Value::Bytes(b),
            },
            pad: self.pad,
        }
    }

    /// Appends this record's wire form to `out` (see [`Record::encode`]).
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        self.as_record().encode(out)
    }
}

/// Appends the encoding of owned records to `out`.
pub fn encode_owned<A: Copy + Into<u8>>(
    records: &[OwnedRecord<A>],
    out: &mut Vec<u8>,
) -> Result<()> {
    for r in records {
        r.encode(out)?;
    }
    Ok(())
}
