//! The R_CUDA relocation table: one [`RelocDesc`] row per relocation type.
//!
//! The rows are data, transcribed from ptxas 13.0.88's own action table (the seed file
//! `tests/data/r_cuda_seed.txt`, checked row for row by `tests/reloc_table_seed.rs`): for each
//! type code its name, which party resolves it ([`ResolverClass`]) and up to three
//! [`BitAction`]s, each saying "bits `lo..=hi` of the relocated word receive value `kind`
//! shifted right by `shift`". The one generic applier in [`super::apply()`](fn@super::apply) interprets them.
//! Type codes outside `0..117` have no row: [`describe`] returns `None` and [`RelocType`]
//! displays them as `Unknown(n)`.

use std::fmt;

/// Number of R_CUDA types in this build (codes `0..=116`).
pub const R_CUDA_COUNT: usize = 117;

/// An R_CUDA relocation type code (`ELF64_R_TYPE` of a `.rel`/`.rela` entry).
///
/// Displays as its name (`R_CUDA_CONST_FIELD21_38`) or `Unknown(n)`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelocType(pub u32);

impl RelocType {
    /// The table row for this type, if it is known.
    pub fn desc(self) -> Option<&'static RelocDesc> {
        describe(self.0)
    }
    /// The type's name, if it is known.
    pub fn name(self) -> Option<&'static str> {
        self.desc().map(|d| d.name)
    }
}

impl fmt::Display for RelocType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "Unknown({})", self.0),
        }
    }
}

impl fmt::Debug for RelocType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Who resolves a relocation type, per ptxas's action table (`NVRH_*`).
///
/// This is ptxas's *intent*; what nvlink actually does with each type it meets is policy
/// that belongs to the linker (see `docs/nvlink-facts.md` §1.3). The numeric handler enum
/// in this ptxas build is NONE=0, LINKER=1, DRIVER=2, FINALIZER=3, EITHER=4 (older builds
/// had EITHER=3 and no FINALIZER, which no R_CUDA type uses: it is reserved for the
/// Mercury family); this enum carries the stable class names, not those numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResolverClass {
    /// `NVRH_NONE`: nothing to do (`R_CUDA_NONE`, `R_CUDA_NONE_LAST`).
    None,
    /// `NVRH_LINKER`: the linker resolves it; the driver never sees it.
    Linker,
    /// `NVRH_DRIVER`: the CUDA driver resolves it at load time; the linker keeps it.
    Driver,
    /// `NVRH_FINALIZER`: the Mercury finalizer resolves it (R_MERCURY types only).
    Finalizer,
    /// `NVRH_EITHER`: whichever party knows the value.
    Either,
}

impl ResolverClass {
    /// The seed's name (`NVRH_LINKER`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            ResolverClass::None => "NVRH_NONE",
            ResolverClass::Linker => "NVRH_LINKER",
            ResolverClass::Driver => "NVRH_DRIVER",
            ResolverClass::Finalizer => "NVRH_FINALIZER",
            ResolverClass::Either => "NVRH_EITHER",
        }
    }
}

impl fmt::Display for ResolverClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One bit-field insertion: bits `lo..=hi` of the relocated little-endian word receive
/// `kind`'s value shifted right by `shift` (as the seed writes it: `bits[lo..hi]=KIND>>shift`).
///
/// Invariant (checked by the seed test for every table row, and by the applier for any
/// action it is handed): `lo <= hi < 128`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BitAction {
    /// Lowest bit of the field (bit 0 is the least significant bit of the byte at `r_offset`).
    pub lo: u8,
    /// Highest bit of the field, inclusive.
    pub hi: u8,
    /// Which value goes into the field.
    pub kind: ValueKind,
    /// The right shift the seed records for the value (see [`super::apply`](mod@super::apply) for how
    /// `SHIFT2`/`SHIFT8` combine with it).
    pub shift: u8,
}

impl BitAction {
    /// Width of the field in bits (`hi - lo + 1`, 1..=128).
    pub const fn width(&self) -> u32 {
        self.hi.saturating_sub(self.lo) as u32 + 1
    }
    /// The field's mask, in place (bits `lo..=hi` set).
    pub const fn mask(&self) -> u128 {
        let span = self.width() - 1;
        let span = if span > 127 { 127 } else { span };
        (u128::MAX >> (127 - span)) << (self.lo & 127)
    }
}

/// A shorthand constructor for the tables (R_CUDA here, R_MERCURY in `mercury.rs`).
pub(crate) const fn act(lo: u8, hi: u8, kind: ValueKind, shift: u8) -> BitAction {
    BitAction {
        lo,
        hi,
        kind,
        shift,
    }
}

/// Everything known about one R_CUDA type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RelocDesc {
    /// The type code (`ELF64_R_TYPE`); equals the row's index in [`R_CUDA_TABLE`].
    pub code: u32,
    /// The name as ptxas and cuobjdump spell it (`R_CUDA_ABS32_32`).
    pub name: &'static str,
    /// Who resolves it.
    pub class: ResolverClass,
    /// The bit fields it writes, 0 to 3 of them, in the seed's order.
    pub actions: &'static [BitAction],
}

impl RelocDesc {
    /// The type as a [`RelocType`].
    pub const fn reloc_type(&self) -> RelocType {
        RelocType(self.code)
    }
    /// The highest bit any action writes, or `None` for a type without actions.
    pub fn highest_bit(&self) -> Option<u8> {
        self.actions.iter().map(|a| a.hi).max()
    }
    /// How many bytes starting at `r_offset` the applier reads and writes: the smallest
    /// little-endian word of 1, 2, 4, 8 or 16 bytes that holds every field (0 for a type
    /// without actions). Byte relocations (`R_CUDA_8_*`) touch 1 byte, `R_CUDA_32` 4,
    /// `R_CUDA_64` and the 64-bit instruction fields 8, fields reaching bit 64 or higher
    /// (the 128-bit instruction word) 16.
    pub fn width_bytes(&self) -> usize {
        match self.highest_bit() {
            None => 0,
            Some(hi) if hi < 8 => 1,
            Some(hi) if hi < 16 => 2,
            Some(hi) if hi < 32 => 4,
            Some(hi) if hi < 64 => 8,
            Some(_) => 16,
        }
    }
    /// Whether ptxas marks it as resolvable by the linker (`Linker` or `Either`).
    pub fn linker_may_resolve(&self) -> bool {
        matches!(self.class, ResolverClass::Linker | ResolverClass::Either)
    }
}

/// The table row for type `code`, or `None` for a code this build does not know.
pub fn describe(code: u32) -> Option<&'static RelocDesc> {
    R_CUDA_TABLE.get(usize::try_from(code).ok()?)
}

/// The value an action inserts, by the name the seed gives it (`ADDR`, `SHIFT2`, ...).
///
/// How each kind is encoded into its field is defined by [`crate::reloc::apply`](mod@crate::reloc::apply).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ValueKind {
    /// `ADDR`: The target address (symbol value + addend) as the linker knows it: a section or window offset, or an absolute address.
    Addr,
    /// `GADDR`: A global (generic) address: only the driver knows it.
    GAddr,
    /// `HEADER`: A texture/sampler/surface header index (driver).
    Header,
    /// `HWDESC`: A surface hardware descriptor (driver).
    HwDesc,
    /// `HWSWDESC`: A surface hardware+software descriptor (driver).
    HwSwDesc,
    /// `LOADDR`: The low 32 bits of the target address.
    LoAddr,
    /// `HIADDR`: The target address, of which the action keeps the high 32 bits (`>>32`).
    HiAddr,
    /// `SLOT`: A texture/sampler/surface slot number.
    Slot,
    /// `SHIFT2`: A 4-byte aligned quantity stored divided by 4 (`v >> 2`): constant-bank offsets, bindless texture offsets, call targets.
    Shift2,
    /// `CBANK`: A constant bank number (`c[bank][..]`).
    CBank,
    /// `CBANK4`: Bit 4 of a constant bank number (for encodings whose bank field is 4 bits wide).
    CBank4,
    /// `FDESC`: A function descriptor (driver).
    FDesc,
    /// `LOFDESC`: The low 32 bits of a function descriptor (driver).
    LoFDesc,
    /// `HIFDESC`: A function descriptor, of which the action keeps the high 32 bits (driver).
    HiFDesc,
    /// `FDESCA`: A function descriptor address (driver).
    FDescA,
    /// `PCREL`: A PC-relative displacement (signed).
    PcRel,
    /// `INST`: A whole instruction (driver).
    Inst,
    /// `INST_OPCODE`: An instruction opcode (the yield-rewrite relocations).
    InstOpcode,
    /// `INST_FIELD_CLEAR`: A cleared instruction field (the yield-rewrite relocations): value 0.
    InstFieldClear,
    /// `CLEAR`: Zero: the field of a dead object is cleared.
    Clear,
    /// `SHIFT8`: The high part of a split call target, stored as `v >> 10` above an 8-bit low part.
    Shift8,
    /// `ADDR8_0`: Byte 0 (bits 0..7) of the target address.
    Addr8_0,
    /// `ADDR8_8`: Byte 1 (bits 8..15) of the target address.
    Addr8_8,
    /// `ADDR8_16`: Byte 2 (bits 16..23) of the target address.
    Addr8_16,
    /// `ADDR8_24`: Byte 3 (bits 24..31) of the target address.
    Addr8_24,
    /// `ADDR8_32`: Byte 4 (bits 32..39) of the target address.
    Addr8_32,
    /// `ADDR8_40`: Byte 5 (bits 40..47) of the target address.
    Addr8_40,
    /// `ADDR8_48`: Byte 6 (bits 48..55) of the target address.
    Addr8_48,
    /// `ADDR8_56`: Byte 7 (bits 56..63) of the target address.
    Addr8_56,
    /// `GADDR8_0`: Byte 0 (bits 0..7) of a global address.
    GAddr8_0,
    /// `GADDR8_8`: Byte 1 (bits 8..15) of a global address.
    GAddr8_8,
    /// `GADDR8_16`: Byte 2 (bits 16..23) of a global address.
    GAddr8_16,
    /// `GADDR8_24`: Byte 3 (bits 24..31) of a global address.
    GAddr8_24,
    /// `GADDR8_32`: Byte 4 (bits 32..39) of a global address.
    GAddr8_32,
    /// `GADDR8_40`: Byte 5 (bits 40..47) of a global address.
    GAddr8_40,
    /// `GADDR8_48`: Byte 6 (bits 48..55) of a global address.
    GAddr8_48,
    /// `GADDR8_56`: Byte 7 (bits 56..63) of a global address.
    GAddr8_56,
    /// `FDESC8_0`: Byte 0 (bits 0..7) of a function descriptor.
    FDesc8_0,
    /// `FDESC8_8`: Byte 1 (bits 8..15) of a function descriptor.
    FDesc8_8,
    /// `FDESC8_16`: Byte 2 (bits 16..23) of a function descriptor.
    FDesc8_16,
    /// `FDESC8_24`: Byte 3 (bits 24..31) of a function descriptor.
    FDesc8_24,
    /// `FDESC8_32`: Byte 4 (bits 32..39) of a function descriptor.
    FDesc8_32,
    /// `FDESC8_40`: Byte 5 (bits 40..47) of a function descriptor.
    FDesc8_40,
    /// `FDESC8_48`: Byte 6 (bits 48..55) of a function descriptor.
    FDesc8_48,
    /// `FDESC8_56`: Byte 7 (bits 56..63) of a function descriptor.
    FDesc8_56,
    /// `UADDR`: A unified (function table) address (driver).
    UAddr,
    /// `UADDR8_0`: Byte 0 (bits 0..7) of a unified address.
    UAddr8_0,
    /// `UADDR8_8`: Byte 1 (bits 8..15) of a unified address.
    UAddr8_8,
    /// `UADDR8_16`: Byte 2 (bits 16..23) of a unified address.
    UAddr8_16,
    /// `UADDR8_24`: Byte 3 (bits 24..31) of a unified address.
    UAddr8_24,
    /// `UADDR8_32`: Byte 4 (bits 32..39) of a unified address.
    UAddr8_32,
    /// `UADDR8_40`: Byte 5 (bits 40..47) of a unified address.
    UAddr8_40,
    /// `UADDR8_48`: Byte 6 (bits 48..55) of a unified address.
    UAddr8_48,
    /// `UADDR8_56`: Byte 7 (bits 56..63) of a unified address.
    UAddr8_56,
    /// `LOUADDR`: The low 32 bits of a unified address (driver).
    LoUAddr,
    /// `HIUADDR`: A unified address, of which the action keeps the high 32 bits (driver).
    HiUAddr,
}

impl ValueKind {
    /// Every kind, in the order the seed first uses them.
    pub const ALL: [ValueKind; 56] = [
        ValueKind::Addr,
        ValueKind::GAddr,
        ValueKind::Header,
        ValueKind::HwDesc,
        ValueKind::HwSwDesc,
        ValueKind::LoAddr,
        ValueKind::HiAddr,
        ValueKind::Slot,
        ValueKind::Shift2,
        ValueKind::CBank,
        ValueKind::CBank4,
        ValueKind::FDesc,
        ValueKind::LoFDesc,
        ValueKind::HiFDesc,
        ValueKind::FDescA,
        ValueKind::PcRel,
        ValueKind::Inst,
        ValueKind::InstOpcode,
        ValueKind::InstFieldClear,
        ValueKind::Clear,
        ValueKind::Shift8,
        ValueKind::Addr8_0,
        ValueKind::Addr8_8,
        ValueKind::Addr8_16,
        ValueKind::Addr8_24,
        ValueKind::Addr8_32,
        ValueKind::Addr8_40,
        ValueKind::Addr8_48,
        ValueKind::Addr8_56,
        ValueKind::GAddr8_0,
        ValueKind::GAddr8_8,
        ValueKind::GAddr8_16,
        ValueKind::GAddr8_24,
        ValueKind::GAddr8_32,
        ValueKind::GAddr8_40,
        ValueKind::GAddr8_48,
        ValueKind::GAddr8_56,
        ValueKind::FDesc8_0,
        ValueKind::FDesc8_8,
        ValueKind::FDesc8_16,
        ValueKind::FDesc8_24,
        ValueKind::FDesc8_32,
        ValueKind::FDesc8_40,
        ValueKind::FDesc8_48,
        ValueKind::FDesc8_56,
        ValueKind::UAddr,
        ValueKind::UAddr8_0,
        ValueKind::UAddr8_8,
        ValueKind::UAddr8_16,
        ValueKind::UAddr8_24,
        ValueKind::UAddr8_32,
        ValueKind::UAddr8_40,
        ValueKind::UAddr8_48,
        ValueKind::UAddr8_56,
        ValueKind::LoUAddr,
        ValueKind::HiUAddr,
    ];

    /// The seed's name for this kind (`ADDR`, `SHIFT2`, `ADDR8_16`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            ValueKind::Addr => "ADDR",
            ValueKind::GAddr => "GADDR",
            ValueKind::Header => "HEADER",
            ValueKind::HwDesc => "HWDESC",
            ValueKind::HwSwDesc => "HWSWDESC",
            ValueKind::LoAddr => "LOADDR",
            ValueKind::HiAddr => "HIADDR",
            ValueKind::Slot => "SLOT",
            ValueKind::Shift2 => "SHIFT2",
            ValueKind::CBank => "CBANK",
            ValueKind::CBank4 => "CBANK4",
            ValueKind::FDesc => "FDESC",
            ValueKind::LoFDesc => "LOFDESC",
            ValueKind::HiFDesc => "HIFDESC",
            ValueKind::FDescA => "FDESCA",
            ValueKind::PcRel => "PCREL",
            ValueKind::Inst => "INST",
            ValueKind::InstOpcode => "INST_OPCODE",
            ValueKind::InstFieldClear => "INST_FIELD_CLEAR",
            ValueKind::Clear => "CLEAR",
            ValueKind::Shift8 => "SHIFT8",
            ValueKind::Addr8_0 => "ADDR8_0",
            ValueKind::Addr8_8 => "ADDR8_8",
            ValueKind::Addr8_16 => "ADDR8_16",
            ValueKind::Addr8_24 => "ADDR8_24",
            ValueKind::Addr8_32 => "ADDR8_32",
            ValueKind::Addr8_40 => "ADDR8_40",
            ValueKind::Addr8_48 => "ADDR8_48",
            ValueKind::Addr8_56 => "ADDR8_56",
            ValueKind::GAddr8_0 => "GADDR8_0",
            ValueKind::GAddr8_8 => "GADDR8_8",
            ValueKind::GAddr8_16 => "GADDR8_16",
            ValueKind::GAddr8_24 => "GADDR8_24",
            ValueKind::GAddr8_32 => "GADDR8_32",
            ValueKind::GAddr8_40 => "GADDR8_40",
            ValueKind::GAddr8_48 => "GADDR8_48",
            ValueKind::GAddr8_56 => "GADDR8_56",
            ValueKind::FDesc8_0 => "FDESC8_0",
            ValueKind::FDesc8_8 => "FDESC8_8",
            ValueKind::FDesc8_16 => "FDESC8_16",
            ValueKind::FDesc8_24 => "FDESC8_24",
            ValueKind::FDesc8_32 => "FDESC8_32",
            ValueKind::FDesc8_40 => "FDESC8_40",
            ValueKind::FDesc8_48 => "FDESC8_48",
            ValueKind::FDesc8_56 => "FDESC8_56",
            ValueKind::UAddr => "UADDR",
            ValueKind::UAddr8_0 => "UADDR8_0",
            ValueKind::UAddr8_8 => "UADDR8_8",
            ValueKind::UAddr8_16 => "UADDR8_16",
            ValueKind::UAddr8_24 => "UADDR8_24",
            ValueKind::UAddr8_32 => "UADDR8_32",
            ValueKind::UAddr8_40 => "UADDR8_40",
            ValueKind::UAddr8_48 => "UADDR8_48",
            ValueKind::UAddr8_56 => "UADDR8_56",
            ValueKind::LoUAddr => "LOUADDR",
            ValueKind::HiUAddr => "HIUADDR",
        }
    }

    /// The kind the seed calls `name`, if any.
    pub fn from_name(name: &str) -> Option<ValueKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

// BEGIN GENERATED from the seed (r_cuda_seed.txt); checked row for row by tests/reloc_table_seed.rs
impl RelocType {
    /// `R_CUDA_NONE` (type 0).
    pub const R_CUDA_NONE: RelocType = RelocType(0);
    /// `R_CUDA_32` (type 1).
    pub const R_CUDA_32: RelocType = RelocType(1);
    /// `R_CUDA_64` (type 2).
    pub const R_CUDA_64: RelocType = RelocType(2);
    /// `R_CUDA_G32` (type 3).
    pub const R_CUDA_G32: RelocType = RelocType(3);
    /// `R_CUDA_G64` (type 4).
    pub const R_CUDA_G64: RelocType = RelocType(4);
    /// `R_CUDA_ABS32_26` (type 5).
    pub const R_CUDA_ABS32_26: RelocType = RelocType(5);
    /// `R_CUDA_TEX_HEADER_INDEX` (type 6).
    pub const R_CUDA_TEX_HEADER_INDEX: RelocType = RelocType(6);
    /// `R_CUDA_SAMP_HEADER_INDEX` (type 7).
    pub const R_CUDA_SAMP_HEADER_INDEX: RelocType = RelocType(7);
    /// `R_CUDA_SURF_HW_DESC` (type 8).
    pub const R_CUDA_SURF_HW_DESC: RelocType = RelocType(8);
    /// `R_CUDA_SURF_HW_SW_DESC` (type 9).
    pub const R_CUDA_SURF_HW_SW_DESC: RelocType = RelocType(9);
    /// `R_CUDA_ABS32_LO_26` (type 10).
    pub const R_CUDA_ABS32_LO_26: RelocType = RelocType(10);
    /// `R_CUDA_ABS32_HI_26` (type 11).
    pub const R_CUDA_ABS32_HI_26: RelocType = RelocType(11);
    /// `R_CUDA_ABS32_23` (type 12).
    pub const R_CUDA_ABS32_23: RelocType = RelocType(12);
    /// `R_CUDA_ABS32_LO_23` (type 13).
    pub const R_CUDA_ABS32_LO_23: RelocType = RelocType(13);
    /// `R_CUDA_ABS32_HI_23` (type 14).
    pub const R_CUDA_ABS32_HI_23: RelocType = RelocType(14);
    /// `R_CUDA_ABS24_26` (type 15).
    pub const R_CUDA_ABS24_26: RelocType = RelocType(15);
    /// `R_CUDA_ABS24_23` (type 16).
    pub const R_CUDA_ABS24_23: RelocType = RelocType(16);
    /// `R_CUDA_ABS16_26` (type 17).
    pub const R_CUDA_ABS16_26: RelocType = RelocType(17);
    /// `R_CUDA_ABS16_23` (type 18).
    pub const R_CUDA_ABS16_23: RelocType = RelocType(18);
    /// `R_CUDA_TEX_SLOT` (type 19).
    pub const R_CUDA_TEX_SLOT: RelocType = RelocType(19);
    /// `R_CUDA_SAMP_SLOT` (type 20).
    pub const R_CUDA_SAMP_SLOT: RelocType = RelocType(20);
    /// `R_CUDA_SURF_SLOT` (type 21).
    pub const R_CUDA_SURF_SLOT: RelocType = RelocType(21);
    /// `R_CUDA_TEX_BINDLESSOFF13_32` (type 22).
    pub const R_CUDA_TEX_BINDLESSOFF13_32: RelocType = RelocType(22);
    /// `R_CUDA_TEX_BINDLESSOFF13_47` (type 23).
    pub const R_CUDA_TEX_BINDLESSOFF13_47: RelocType = RelocType(23);
    /// `R_CUDA_CONST_FIELD19_28` (type 24).
    pub const R_CUDA_CONST_FIELD19_28: RelocType = RelocType(24);
    /// `R_CUDA_CONST_FIELD19_23` (type 25).
    pub const R_CUDA_CONST_FIELD19_23: RelocType = RelocType(25);
    /// `R_CUDA_TEX_SLOT9_49` (type 26).
    pub const R_CUDA_TEX_SLOT9_49: RelocType = RelocType(26);
    /// `R_CUDA_6_31` (type 27).
    pub const R_CUDA_6_31: RelocType = RelocType(27);
    /// `R_CUDA_2_47` (type 28).
    pub const R_CUDA_2_47: RelocType = RelocType(28);
    /// `R_CUDA_TEX_BINDLESSOFF13_41` (type 29).
    pub const R_CUDA_TEX_BINDLESSOFF13_41: RelocType = RelocType(29);
    /// `R_CUDA_TEX_BINDLESSOFF13_45` (type 30).
    pub const R_CUDA_TEX_BINDLESSOFF13_45: RelocType = RelocType(30);
    /// `R_CUDA_FUNC_DESC32_23` (type 31).
    pub const R_CUDA_FUNC_DESC32_23: RelocType = RelocType(31);
    /// `R_CUDA_FUNC_DESC32_LO_23` (type 32).
    pub const R_CUDA_FUNC_DESC32_LO_23: RelocType = RelocType(32);
    /// `R_CUDA_FUNC_DESC32_HI_23` (type 33).
    pub const R_CUDA_FUNC_DESC32_HI_23: RelocType = RelocType(33);
    /// `R_CUDA_FUNC_DESC_32` (type 34).
    pub const R_CUDA_FUNC_DESC_32: RelocType = RelocType(34);
    /// `R_CUDA_FUNC_DESC_64` (type 35).
    pub const R_CUDA_FUNC_DESC_64: RelocType = RelocType(35);
    /// `R_CUDA_CONST_FIELD21_26` (type 36).
    pub const R_CUDA_CONST_FIELD21_26: RelocType = RelocType(36);
    /// `R_CUDA_QUERY_DESC21_37` (type 37).
    pub const R_CUDA_QUERY_DESC21_37: RelocType = RelocType(37);
    /// `R_CUDA_CONST_FIELD19_26` (type 38).
    pub const R_CUDA_CONST_FIELD19_26: RelocType = RelocType(38);
    /// `R_CUDA_CONST_FIELD21_23` (type 39).
    pub const R_CUDA_CONST_FIELD21_23: RelocType = RelocType(39);
    /// `R_CUDA_PCREL_IMM24_26` (type 40).
    pub const R_CUDA_PCREL_IMM24_26: RelocType = RelocType(40);
    /// `R_CUDA_PCREL_IMM24_23` (type 41).
    pub const R_CUDA_PCREL_IMM24_23: RelocType = RelocType(41);
    /// `R_CUDA_ABS32_20` (type 42).
    pub const R_CUDA_ABS32_20: RelocType = RelocType(42);
    /// `R_CUDA_ABS32_LO_20` (type 43).
    pub const R_CUDA_ABS32_LO_20: RelocType = RelocType(43);
    /// `R_CUDA_ABS32_HI_20` (type 44).
    pub const R_CUDA_ABS32_HI_20: RelocType = RelocType(44);
    /// `R_CUDA_ABS24_20` (type 45).
    pub const R_CUDA_ABS24_20: RelocType = RelocType(45);
    /// `R_CUDA_ABS16_20` (type 46).
    pub const R_CUDA_ABS16_20: RelocType = RelocType(46);
    /// `R_CUDA_FUNC_DESC32_20` (type 47).
    pub const R_CUDA_FUNC_DESC32_20: RelocType = RelocType(47);
    /// `R_CUDA_FUNC_DESC32_LO_20` (type 48).
    pub const R_CUDA_FUNC_DESC32_LO_20: RelocType = RelocType(48);
    /// `R_CUDA_FUNC_DESC32_HI_20` (type 49).
    pub const R_CUDA_FUNC_DESC32_HI_20: RelocType = RelocType(49);
    /// `R_CUDA_CONST_FIELD19_20` (type 50).
    pub const R_CUDA_CONST_FIELD19_20: RelocType = RelocType(50);
    /// `R_CUDA_BINDLESSOFF13_36` (type 51).
    pub const R_CUDA_BINDLESSOFF13_36: RelocType = RelocType(51);
    /// `R_CUDA_SURF_HEADER_INDEX` (type 52).
    pub const R_CUDA_SURF_HEADER_INDEX: RelocType = RelocType(52);
    /// `R_CUDA_INSTRUCTION64` (type 53).
    pub const R_CUDA_INSTRUCTION64: RelocType = RelocType(53);
    /// `R_CUDA_CONST_FIELD21_20` (type 54).
    pub const R_CUDA_CONST_FIELD21_20: RelocType = RelocType(54);
    /// `R_CUDA_ABS32_32` (type 55).
    pub const R_CUDA_ABS32_32: RelocType = RelocType(55);
    /// `R_CUDA_ABS32_LO_32` (type 56).
    pub const R_CUDA_ABS32_LO_32: RelocType = RelocType(56);
    /// `R_CUDA_ABS32_HI_32` (type 57).
    pub const R_CUDA_ABS32_HI_32: RelocType = RelocType(57);
    /// `R_CUDA_ABS47_34` (type 58).
    pub const R_CUDA_ABS47_34: RelocType = RelocType(58);
    /// `R_CUDA_ABS16_32` (type 59).
    pub const R_CUDA_ABS16_32: RelocType = RelocType(59);
    /// `R_CUDA_ABS24_32` (type 60).
    pub const R_CUDA_ABS24_32: RelocType = RelocType(60);
    /// `R_CUDA_FUNC_DESC32_32` (type 61).
    pub const R_CUDA_FUNC_DESC32_32: RelocType = RelocType(61);
    /// `R_CUDA_FUNC_DESC32_LO_32` (type 62).
    pub const R_CUDA_FUNC_DESC32_LO_32: RelocType = RelocType(62);
    /// `R_CUDA_FUNC_DESC32_HI_32` (type 63).
    pub const R_CUDA_FUNC_DESC32_HI_32: RelocType = RelocType(63);
    /// `R_CUDA_CONST_FIELD19_40` (type 64).
    pub const R_CUDA_CONST_FIELD19_40: RelocType = RelocType(64);
    /// `R_CUDA_BINDLESSOFF14_40` (type 65).
    pub const R_CUDA_BINDLESSOFF14_40: RelocType = RelocType(65);
    /// `R_CUDA_CONST_FIELD21_38` (type 66).
    pub const R_CUDA_CONST_FIELD21_38: RelocType = RelocType(66);
    /// `R_CUDA_INSTRUCTION128` (type 67).
    pub const R_CUDA_INSTRUCTION128: RelocType = RelocType(67);
    /// `R_CUDA_YIELD_OPCODE9_0` (type 68).
    pub const R_CUDA_YIELD_OPCODE9_0: RelocType = RelocType(68);
    /// `R_CUDA_YIELD_CLEAR_PRED4_87` (type 69).
    pub const R_CUDA_YIELD_CLEAR_PRED4_87: RelocType = RelocType(69);
    /// `R_CUDA_32_LO` (type 70).
    pub const R_CUDA_32_LO: RelocType = RelocType(70);
    /// `R_CUDA_32_HI` (type 71).
    pub const R_CUDA_32_HI: RelocType = RelocType(71);
    /// `R_CUDA_UNUSED_CLEAR32` (type 72).
    pub const R_CUDA_UNUSED_CLEAR32: RelocType = RelocType(72);
    /// `R_CUDA_UNUSED_CLEAR64` (type 73).
    pub const R_CUDA_UNUSED_CLEAR64: RelocType = RelocType(73);
    /// `R_CUDA_ABS24_40` (type 74).
    pub const R_CUDA_ABS24_40: RelocType = RelocType(74);
    /// `R_CUDA_ABS55_16_34` (type 75).
    pub const R_CUDA_ABS55_16_34: RelocType = RelocType(75);
    /// `R_CUDA_8_0` (type 76).
    pub const R_CUDA_8_0: RelocType = RelocType(76);
    /// `R_CUDA_8_8` (type 77).
    pub const R_CUDA_8_8: RelocType = RelocType(77);
    /// `R_CUDA_8_16` (type 78).
    pub const R_CUDA_8_16: RelocType = RelocType(78);
    /// `R_CUDA_8_24` (type 79).
    pub const R_CUDA_8_24: RelocType = RelocType(79);
    /// `R_CUDA_8_32` (type 80).
    pub const R_CUDA_8_32: RelocType = RelocType(80);
    /// `R_CUDA_8_40` (type 81).
    pub const R_CUDA_8_40: RelocType = RelocType(81);
    /// `R_CUDA_8_48` (type 82).
    pub const R_CUDA_8_48: RelocType = RelocType(82);
    /// `R_CUDA_8_56` (type 83).
    pub const R_CUDA_8_56: RelocType = RelocType(83);
    /// `R_CUDA_G8_0` (type 84).
    pub const R_CUDA_G8_0: RelocType = RelocType(84);
    /// `R_CUDA_G8_8` (type 85).
    pub const R_CUDA_G8_8: RelocType = RelocType(85);
    /// `R_CUDA_G8_16` (type 86).
    pub const R_CUDA_G8_16: RelocType = RelocType(86);
    /// `R_CUDA_G8_24` (type 87).
    pub const R_CUDA_G8_24: RelocType = RelocType(87);
    /// `R_CUDA_G8_32` (type 88).
    pub const R_CUDA_G8_32: RelocType = RelocType(88);
    /// `R_CUDA_G8_40` (type 89).
    pub const R_CUDA_G8_40: RelocType = RelocType(89);
    /// `R_CUDA_G8_48` (type 90).
    pub const R_CUDA_G8_48: RelocType = RelocType(90);
    /// `R_CUDA_G8_56` (type 91).
    pub const R_CUDA_G8_56: RelocType = RelocType(91);
    /// `R_CUDA_FUNC_DESC_8_0` (type 92).
    pub const R_CUDA_FUNC_DESC_8_0: RelocType = RelocType(92);
    /// `R_CUDA_FUNC_DESC_8_8` (type 93).
    pub const R_CUDA_FUNC_DESC_8_8: RelocType = RelocType(93);
    /// `R_CUDA_FUNC_DESC_8_16` (type 94).
    pub const R_CUDA_FUNC_DESC_8_16: RelocType = RelocType(94);
    /// `R_CUDA_FUNC_DESC_8_24` (type 95).
    pub const R_CUDA_FUNC_DESC_8_24: RelocType = RelocType(95);
    /// `R_CUDA_FUNC_DESC_8_32` (type 96).
    pub const R_CUDA_FUNC_DESC_8_32: RelocType = RelocType(96);
    /// `R_CUDA_FUNC_DESC_8_40` (type 97).
    pub const R_CUDA_FUNC_DESC_8_40: RelocType = RelocType(97);
    /// `R_CUDA_FUNC_DESC_8_48` (type 98).
    pub const R_CUDA_FUNC_DESC_8_48: RelocType = RelocType(98);
    /// `R_CUDA_FUNC_DESC_8_56` (type 99).
    pub const R_CUDA_FUNC_DESC_8_56: RelocType = RelocType(99);
    /// `R_CUDA_ABS20_44` (type 100).
    pub const R_CUDA_ABS20_44: RelocType = RelocType(100);
    /// `R_CUDA_SAMP_HEADER_INDEX_0` (type 101).
    pub const R_CUDA_SAMP_HEADER_INDEX_0: RelocType = RelocType(101);
    /// `R_CUDA_UNIFIED` (type 102).
    pub const R_CUDA_UNIFIED: RelocType = RelocType(102);
    /// `R_CUDA_UNIFIED_32` (type 103).
    pub const R_CUDA_UNIFIED_32: RelocType = RelocType(103);
    /// `R_CUDA_UNIFIED_8_0` (type 104).
    pub const R_CUDA_UNIFIED_8_0: RelocType = RelocType(104);
    /// `R_CUDA_UNIFIED_8_8` (type 105).
    pub const R_CUDA_UNIFIED_8_8: RelocType = RelocType(105);
    /// `R_CUDA_UNIFIED_8_16` (type 106).
    pub const R_CUDA_UNIFIED_8_16: RelocType = RelocType(106);
    /// `R_CUDA_UNIFIED_8_24` (type 107).
    pub const R_CUDA_UNIFIED_8_24: RelocType = RelocType(107);
    /// `R_CUDA_UNIFIED_8_32` (type 108).
    pub const R_CUDA_UNIFIED_8_32: RelocType = RelocType(108);
    /// `R_CUDA_UNIFIED_8_40` (type 109).
    pub const R_CUDA_UNIFIED_8_40: RelocType = RelocType(109);
    /// `R_CUDA_UNIFIED_8_48` (type 110).
    pub const R_CUDA_UNIFIED_8_48: RelocType = RelocType(110);
    /// `R_CUDA_UNIFIED_8_56` (type 111).
    pub const R_CUDA_UNIFIED_8_56: RelocType = RelocType(111);
    /// `R_CUDA_UNIFIED32_LO_32` (type 112).
    pub const R_CUDA_UNIFIED32_LO_32: RelocType = RelocType(112);
    /// `R_CUDA_UNIFIED32_HI_32` (type 113).
    pub const R_CUDA_UNIFIED32_HI_32: RelocType = RelocType(113);
    /// `R_CUDA_ABS56_16_34` (type 114).
    pub const R_CUDA_ABS56_16_34: RelocType = RelocType(114);
    /// `R_CUDA_CONST_FIELD22_37` (type 115).
    pub const R_CUDA_CONST_FIELD22_37: RelocType = RelocType(115);
    /// `R_CUDA_NONE_LAST` (type 116).
    pub const R_CUDA_NONE_LAST: RelocType = RelocType(116);
}

/// One row per R_CUDA type, indexed by type code (row `n` has `code == n`).
pub const R_CUDA_TABLE: [RelocDesc; R_CUDA_COUNT] = [
    RelocDesc {
        code: 0,
        name: "R_CUDA_NONE",
        class: ResolverClass::None,
        actions: &[],
    },
    RelocDesc {
        code: 1,
        name: "R_CUDA_32",
        class: ResolverClass::Either,
        actions: &[act(0, 31, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: 2,
        name: "R_CUDA_64",
        class: ResolverClass::Either,
        actions: &[act(0, 63, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: 3,
        name: "R_CUDA_G32",
        class: ResolverClass::Driver,
        actions: &[act(0, 31, ValueKind::GAddr, 0)],
    },
    RelocDesc {
        code: 4,
        name: "R_CUDA_G64",
        class: ResolverClass::Driver,
        actions: &[act(0, 63, ValueKind::GAddr, 0)],
    },
    RelocDesc {
        code: 5,
        name: "R_CUDA_ABS32_26",
        class: ResolverClass::Either,
        actions: &[act(26, 57, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: 6,
        name: "R_CUDA_TEX_HEADER_INDEX",
        class: ResolverClass::Driver,
        actions: &[act(0, 19, ValueKind::Header, 0)],
    },
    RelocDesc {
        code: 7,
        name: "R_CUDA_SAMP_HEADER_INDEX",
        class: ResolverClass::Driver,
        actions: &[act(20, 31, ValueKind::Header, 0)],
    },
    RelocDesc {
        code: 8,
        name: "R_CUDA_SURF_HW_DESC",
        class: ResolverClass::Driver,
        actions: &[act(0, 31, ValueKind::HwDesc, 0)],
    },
    RelocDesc {
        code: 9,
        name: "R_CUDA_SURF_HW_SW_DESC",
        class: ResolverClass::Driver,
        actions: &[act(0, 31, ValueKind::HwSwDesc, 0)],
    },
    RelocDesc {
        code: 10,
        name: "R_CUDA_ABS32_LO_26",
        class: ResolverClass::Either,
        actions: &[act(26, 57, ValueKind::LoAddr, 0)],
    },
    RelocDesc {
        code: 11,
        name: "R_CUDA_ABS32_HI_26",
        class: ResolverClass::Either,
        actions: &[act(26, 57, ValueKind::HiAddr, 32)],
    },
    RelocDesc {
        code: 12,
        name: "R_CUDA_ABS32_23",
        class: ResolverClass::Either,
        actions: &[act(23, 54, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: 13,
        name: "R_CUDA_ABS32_LO_23",
        class: ResolverClass::Either,
        actions: &[act(23, 54, ValueKind::LoAddr, 0)],
    },
    RelocDesc {
        code: 14,
        name: "R_CUDA_ABS32_HI_23",
        class: ResolverClass::Either,
        actions: &[act(23, 54, ValueKind::HiAddr, 32)],
    },
    RelocDesc {
        code: 15,
        name: "R_CUDA_ABS24_26",
        class: ResolverClass::Linker,
        actions: &[act(26, 49, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: 16,
        name: "R_CUDA_ABS24_23",
        class: ResolverClass::Linker,
        actions: &[act(23, 46, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: 17,
        name: "R_CUDA_ABS16_26",
        class: ResolverClass::Linker,
        actions: &[act(26, 41, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: 18,
        name: "R_CUDA_ABS16_23",
        class: ResolverClass::Linker,
        actions: &[act(23, 38, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: 19,
        name: "R_CUDA_TEX_SLOT",
        class: ResolverClass::Linker,
        actions: &[act(32, 39, ValueKind::Slot, 0)],
    },
    RelocDesc {
        code: 20,
        name: "R_CUDA_SAMP_SLOT",
        class: ResolverClass::Linker,
        actions: &[act(40, 44, ValueKind::Slot, 0)],
    },
    RelocDesc {
        code: 21,
        name: "R_CUDA_SURF_SLOT",
        class: ResolverClass::Linker,
        actions: &[act(26, 31, ValueKind::Slot, 0)],
    },
    RelocDesc {
        code: 22,
        name: "R_CUDA_TEX_BINDLESSOFF13_32",
        class: ResolverClass::Linker,
        actions: &[act(32, 44, ValueKind::Shift2, 0)],
    },
    RelocDesc {
        code: 23,
        name: "R_CUDA_TEX_BINDLESSOFF13_47",
        class: ResolverClass::Linker,
        actions: &[act(47, 59, ValueKind::Shift2, 0)],
    },
    RelocDesc {
        code: 24,
        name: "R_CUDA_CONST_FIELD19_28",
        class: ResolverClass::Linker,
        actions: &[
            act(28, 41, ValueKind::Shift2, 0),
            act(42, 45, ValueKind::CBank, 0),
            act(26, 26, ValueKind::CBank4, 0),
        ],
    },
    RelocDesc {
        code: 25,
        name: "R_CUDA_CONST_FIELD19_23",
        class: ResolverClass::Linker,
        actions: &[
            act(23, 36, ValueKind::Shift2, 0),
            act(37, 41, ValueKind::CBank, 0),
        ],
    },
    RelocDesc {
        code: 26,
        name: "R_CUDA_TEX_SLOT9_49",
        class: ResolverClass::Linker,
        actions: &[act(49, 57, ValueKind::Slot, 0)],
    },
    RelocDesc {
        code: 27,
        name: "R_CUDA_6_31",
        class: ResolverClass::Linker,
        actions: &[act(31, 36, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: 28,
        name: "R_CUDA_2_47",
        class: ResolverClass::Linker,
        actions: &[act(47, 48, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: 29,
        name: "R_CUDA_TEX_BINDLESSOFF13_41",
        class: ResolverClass::Linker,
        actions: &[act(41, 53, ValueKind::Shift2, 0)],
    },
    RelocDesc {
        code: 30,
        name: "R_CUDA_TEX_BINDLESSOFF13_45",
        class: ResolverClass::Linker,
        actions: &[act(45, 57, ValueKind::Shift2, 0)],
    },
    RelocDesc {
        code: 31,
        name: "R_CUDA_FUNC_DESC32_23",
        class: ResolverClass::Driver,
        actions: &[act(23, 54, ValueKind::FDesc, 0)],
    },
    RelocDesc {
        code: 32,
        name: "R_CUDA_FUNC_DESC32_LO_23",
        class: ResolverClass::Driver,
        actions: &[act(23, 54, ValueKind::LoFDesc, 0)],
    },
    RelocDesc {
        code: 33,
        name: "R_CUDA_FUNC_DESC32_HI_23",
        class: ResolverClass::Driver,
        actions: &[act(23, 54, ValueKind::HiFDesc, 32)],
    },
    RelocDesc {
        code: 34,
        name: "R_CUDA_FUNC_DESC_32",
        class: ResolverClass::Driver,
        actions: &[act(0, 31, ValueKind::FDescA, 0)],
    },
    RelocDesc {
        code: 35,
        name: "R_CUDA_FUNC_DESC_64",
        class: ResolverClass::Driver,
        actions: &[act(0, 63, ValueKind::FDescA, 0)],
    },
    RelocDesc {
        code: 36,
        name: "R_CUDA_CONST_FIELD21_26",
        class: ResolverClass::Linker,
        actions: &[
            act(26, 41, ValueKind::Addr, 0),
            act(42, 46, ValueKind::CBank, 0),
        ],
    },
    RelocDesc {
        code: 37,
        name: "R_CUDA_QUERY_DESC21_37",
        class: ResolverClass::Linker,
        actions: &[
            act(37, 52, ValueKind::Addr, 0),
            act(53, 57, ValueKind::CBank, 0),
        ],
    },
    RelocDesc {
        code: 38,
        name: "R_CUDA_CONST_FIELD19_26",
        class: ResolverClass::Linker,
        actions: &[
            act(26, 39, ValueKind::Shift2, 0),
            act(40, 44, ValueKind::CBank, 0),
        ],
    },
    RelocDesc {
        code: 39,
        name: "R_CUDA_CONST_FIELD21_23",
        class: ResolverClass::Linker,
        actions: &[
            act(23, 38, ValueKind::Addr, 0),
            act(39, 43, ValueKind::CBank, 0),
        ],
    },
    RelocDesc {
        code: 40,
        name: "R_CUDA_PCREL_IMM24_26",
        class: ResolverClass::Linker,
        actions: &[act(26, 49, ValueKind::PcRel, 0)],
    },
    RelocDesc {
        code: 41,
        name: "R_CUDA_PCREL_IMM24_23",
        class: ResolverClass::Linker,
        actions: &[act(23, 46, ValueKind::PcRel, 0)],
    },
    RelocDesc {
        code: 42,
        name: "R_CUDA_ABS32_20",
        class: ResolverClass::Either,
        actions: &[act(20, 51, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: 43,
        name: "R_CUDA_ABS32_LO_20",
        class: ResolverClass::Either,
        actions: &[act(20, 51, ValueKind::LoAddr, 0)],
    },
    RelocDesc {
        code: 44,
        name: "R_CUDA_ABS32_HI_20",
        class: ResolverClass::Either,
        actions: &[act(20, 51, ValueKind::HiAddr, 32)],
    },
    RelocDesc {
        code: 45,
        name: "R_CUDA_ABS24_20",
        class: ResolverClass::Linker,
        actions: &[act(20, 43, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: 46,
        name: "R_CUDA_ABS16_20",
        class: ResolverClass::Linker,
        actions: &[act(20, 35, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: 47,
        name: "R_CUDA_FUNC_DESC32_20",
        class: ResolverClass::Driver,
        actions: &[act(20, 51, ValueKind::FDesc, 0)],
    },
    RelocDesc {
        code: 48,
        name: "R_CUDA_FUNC_DESC32_LO_20",
        class: ResolverClass::Driver,
        actions: &[act(20, 51, ValueKind::LoFDesc, 0)],
    },
    RelocDesc {
        code: 49,
        name: "R_CUDA_FUNC_DESC32_HI_20",
        class: ResolverClass::Driver,
        actions: &[act(20, 51, ValueKind::HiFDesc, 32)],
    },
    RelocDesc {
        code: 50,
        name: "R_CUDA_CONST_FIELD19_20",
        class: ResolverClass::Linker,
        actions: &[
            act(20, 33, ValueKind::Shift2, 0),
            act(34, 38, ValueKind::CBank, 0),
        ],
    },
    RelocDesc {
        code: 51,
        name: "R_CUDA_BINDLESSOFF13_36",
        class: ResolverClass::Linker,
        actions: &[act(36, 48, ValueKind::Shift2, 0)],
    },
    RelocDesc {
        code: 52,
        name: "R_CUDA_SURF_HEADER_INDEX",
        class: ResolverClass::Driver,
        actions: &[act(0, 19, ValueKind::Header, 0)],
    },
    RelocDesc {
        code: 53,
        name: "R_CUDA_INSTRUCTION64",
        class: ResolverClass::Driver,
        actions: &[act(0, 63, ValueKind::Inst, 0)],
    },
    RelocDesc {
        code: 54,
        name: "R_CUDA_CONST_FIELD21_20",
        class: ResolverClass::Linker,
        actions: &[
            act(20, 35, ValueKind::Addr, 0),
            act(36, 40, ValueKind::CBank, 0),
        ],
    },
    RelocDesc {
        code: 55,
        name: "R_CUDA_ABS32_32",
        class: ResolverClass::Either,
        actions: &[act(32, 63, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: 56,
        name: "R_CUDA_ABS32_LO_32",
        class: ResolverClass::Either,
        actions: &[act(32, 63, ValueKind::LoAddr, 0)],
    },
    RelocDesc {
        code: 57,
        name: "R_CUDA_ABS32_HI_32",
        class: ResolverClass::Either,
        actions: &[act(32, 63, ValueKind::HiAddr, 32)],
    },
    RelocDesc {
        code: 58,
        name: "R_CUDA_ABS47_34",
        class: ResolverClass::Driver,
        actions: &[act(34, 80, ValueKind::Shift2, 0)],
    },
    RelocDesc {
        code: 59,
        name: "R_CUDA_ABS16_32",
        class: ResolverClass::Linker,
        actions: &[act(32, 47, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: 60,
        name: "R_CUDA_ABS24_32",
        class: ResolverClass::Linker,
        actions: &[act(32, 55, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: 61,
        name: "R_CUDA_FUNC_DESC32_32",
        class: ResolverClass::Driver,
        actions: &[act(32, 63, ValueKind::FDesc, 0)],
    },
    RelocDesc {
        code: 62,
        name: "R_CUDA_FUNC_DESC32_LO_32",
        class: ResolverClass::Driver,
        actions: &[act(32, 63, ValueKind::LoFDesc, 0)],
    },
    RelocDesc {
        code: 63,
        name: "R_CUDA_FUNC_DESC32_HI_32",
        class: ResolverClass::Driver,
        actions: &[act(32, 63, ValueKind::HiFDesc, 32)],
    },
    RelocDesc {
        code: 64,
        name: "R_CUDA_CONST_FIELD19_40",
        class: ResolverClass::Linker,
        actions: &[
            act(40, 53, ValueKind::Shift2, 0),
            act(54, 58, ValueKind::CBank, 0),
        ],
    },
    RelocDesc {
        code: 65,
        name: "R_CUDA_BINDLESSOFF14_40",
        class: ResolverClass::Linker,
        actions: &[act(40, 53, ValueKind::Shift2, 0)],
    },
    RelocDesc {
        code: 66,
        name: "R_CUDA_CONST_FIELD21_38",
        class: ResolverClass::Linker,
        actions: &[
            act(38, 53, ValueKind::Addr, 0),
            act(54, 58, ValueKind::CBank, 0),
        ],
    },
    RelocDesc {
        code: 67,
        name: "R_CUDA_INSTRUCTION128",
        class: ResolverClass::Driver,
        actions: &[act(0, 127, ValueKind::Inst, 0)],
    },
    RelocDesc {
        code: 68,
        name: "R_CUDA_YIELD_OPCODE9_0",
        class: ResolverClass::Linker,
        actions: &[act(0, 8, ValueKind::InstOpcode, 0)],
    },
    RelocDesc {
        code: 69,
        name: "R_CUDA_YIELD_CLEAR_PRED4_87",
        class: ResolverClass::Linker,
        actions: &[act(87, 90, ValueKind::InstFieldClear, 0)],
    },
    RelocDesc {
        code: 70,
        name: "R_CUDA_32_LO",
        class: ResolverClass::Either,
        actions: &[act(0, 31, ValueKind::LoAddr, 0)],
    },
    RelocDesc {
        code: 71,
        name: "R_CUDA_32_HI",
        class: ResolverClass::Either,
        actions: &[act(0, 31, ValueKind::HiAddr, 32)],
    },
    RelocDesc {
        code: 72,
        name: "R_CUDA_UNUSED_CLEAR32",
        class: ResolverClass::Linker,
        actions: &[act(0, 31, ValueKind::Clear, 0)],
    },
    RelocDesc {
        code: 73,
        name: "R_CUDA_UNUSED_CLEAR64",
        class: ResolverClass::Linker,
        actions: &[act(0, 63, ValueKind::Clear, 0)],
    },
    RelocDesc {
        code: 74,
        name: "R_CUDA_ABS24_40",
        class: ResolverClass::Linker,
        actions: &[act(40, 63, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: 75,
        name: "R_CUDA_ABS55_16_34",
        class: ResolverClass::Driver,
        actions: &[
            act(16, 23, ValueKind::Shift2, 2),
            act(34, 80, ValueKind::Shift8, 10),
        ],
    },
    RelocDesc {
        code: 76,
        name: "R_CUDA_8_0",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr8_0, 0)],
    },
    RelocDesc {
        code: 77,
        name: "R_CUDA_8_8",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr8_8, 8)],
    },
    RelocDesc {
        code: 78,
        name: "R_CUDA_8_16",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr8_16, 16)],
    },
    RelocDesc {
        code: 79,
        name: "R_CUDA_8_24",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr8_24, 24)],
    },
    RelocDesc {
        code: 80,
        name: "R_CUDA_8_32",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr8_32, 32)],
    },
    RelocDesc {
        code: 81,
        name: "R_CUDA_8_40",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr8_40, 40)],
    },
    RelocDesc {
        code: 82,
        name: "R_CUDA_8_48",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr8_48, 48)],
    },
    RelocDesc {
        code: 83,
        name: "R_CUDA_8_56",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr8_56, 56)],
    },
    RelocDesc {
        code: 84,
        name: "R_CUDA_G8_0",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::GAddr8_0, 0)],
    },
    RelocDesc {
        code: 85,
        name: "R_CUDA_G8_8",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::GAddr8_8, 8)],
    },
    RelocDesc {
        code: 86,
        name: "R_CUDA_G8_16",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::GAddr8_16, 16)],
    },
    RelocDesc {
        code: 87,
        name: "R_CUDA_G8_24",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::GAddr8_24, 24)],
    },
    RelocDesc {
        code: 88,
        name: "R_CUDA_G8_32",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::GAddr8_32, 32)],
    },
    RelocDesc {
        code: 89,
        name: "R_CUDA_G8_40",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::GAddr8_40, 40)],
    },
    RelocDesc {
        code: 90,
        name: "R_CUDA_G8_48",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::GAddr8_48, 48)],
    },
    RelocDesc {
        code: 91,
        name: "R_CUDA_G8_56",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::GAddr8_56, 56)],
    },
    RelocDesc {
        code: 92,
        name: "R_CUDA_FUNC_DESC_8_0",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::FDesc8_0, 0)],
    },
    RelocDesc {
        code: 93,
        name: "R_CUDA_FUNC_DESC_8_8",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::FDesc8_8, 8)],
    },
    RelocDesc {
        code: 94,
        name: "R_CUDA_FUNC_DESC_8_16",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::FDesc8_16, 16)],
    },
    RelocDesc {
        code: 95,
        name: "R_CUDA_FUNC_DESC_8_24",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::FDesc8_24, 24)],
    },
    RelocDesc {
        code: 96,
        name: "R_CUDA_FUNC_DESC_8_32",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::FDesc8_32, 32)],
    },
    RelocDesc {
        code: 97,
        name: "R_CUDA_FUNC_DESC_8_40",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::FDesc8_40, 40)],
    },
    RelocDesc {
        code: 98,
        name: "R_CUDA_FUNC_DESC_8_48",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::FDesc8_48, 48)],
    },
    RelocDesc {
        code: 99,
        name: "R_CUDA_FUNC_DESC_8_56",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::FDesc8_56, 56)],
    },
    RelocDesc {
        code: 100,
        name: "R_CUDA_ABS20_44",
        class: ResolverClass::Linker,
        actions: &[act(44, 63, ValueKind::Addr, 0)],
    },
    RelocDesc {
        code: 101,
        name: "R_CUDA_SAMP_HEADER_INDEX_0",
        class: ResolverClass::Driver,
        actions: &[act(0, 11, ValueKind::Header, 0)],
    },
    RelocDesc {
        code: 102,
        name: "R_CUDA_UNIFIED",
        class: ResolverClass::Driver,
        actions: &[act(0, 63, ValueKind::UAddr, 0)],
    },
    RelocDesc {
        code: 103,
        name: "R_CUDA_UNIFIED_32",
        class: ResolverClass::Driver,
        actions: &[act(0, 31, ValueKind::UAddr, 0)],
    },
    RelocDesc {
        code: 104,
        name: "R_CUDA_UNIFIED_8_0",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::UAddr8_0, 0)],
    },
    RelocDesc {
        code: 105,
        name: "R_CUDA_UNIFIED_8_8",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::UAddr8_8, 8)],
    },
    RelocDesc {
        code: 106,
        name: "R_CUDA_UNIFIED_8_16",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::UAddr8_16, 16)],
    },
    RelocDesc {
        code: 107,
        name: "R_CUDA_UNIFIED_8_24",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::UAddr8_24, 24)],
    },
    RelocDesc {
        code: 108,
        name: "R_CUDA_UNIFIED_8_32",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::UAddr8_32, 32)],
    },
    RelocDesc {
        code: 109,
        name: "R_CUDA_UNIFIED_8_40",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::UAddr8_40, 40)],
    },
    RelocDesc {
        code: 110,
        name: "R_CUDA_UNIFIED_8_48",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::UAddr8_48, 48)],
    },
    RelocDesc {
        code: 111,
        name: "R_CUDA_UNIFIED_8_56",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::UAddr8_56, 56)],
    },
    RelocDesc {
        code: 112,
        name: "R_CUDA_UNIFIED32_LO_32",
        class: ResolverClass::Driver,
        actions: &[act(32, 63, ValueKind::LoUAddr, 0)],
    },
    RelocDesc {
        code: 113,
        name: "R_CUDA_UNIFIED32_HI_32",
        class: ResolverClass::Driver,
        actions: &[act(32, 63, ValueKind::HiUAddr, 32)],
    },
    RelocDesc {
        code: 114,
        name: "R_CUDA_ABS56_16_34",
        class: ResolverClass::Driver,
        actions: &[
            act(16, 23, ValueKind::Shift2, 2),
            act(34, 81, ValueKind::Shift8, 10),
        ],
    },
    RelocDesc {
        code: 115,
        name: "R_CUDA_CONST_FIELD22_37",
        class: ResolverClass::Linker,
        actions: &[
            act(37, 53, ValueKind::Addr, 0),
            act(54, 58, ValueKind::CBank, 0),
        ],
    },
    RelocDesc {
        code: 116,
        name: "R_CUDA_NONE_LAST",
        class: ResolverClass::None,
        actions: &[],
    },
];
// END GENERATED
