//! The R_CUDA relocation table: one row per type, as data.
//!
//! All 117 types (0..=116) of ptxas/nvlink 13.0 with their resolver class and
//! the bit actions each one performs, transcribed from the seed document
//! `003_58ebef5c5e222e19.txt` (itself extracted from ptxas' action table).
//! A test parses the seed and proves this table matches it row for row.
//! An action `bits[lo..=hi] = KIND >> shift` inserts the value of `KIND`,
//! shifted right, into bits `lo..=hi` of the little-endian word at `r_offset`.

use std::fmt;

/// Who resolves a relocation type.
///
/// In this ptxas build the numeric enum is NONE=0, LINKER=1, DRIVER=2,
/// FINALIZER=3 (unused by R_CUDA types), EITHER=4; older builds numbered
/// EITHER 3. Only the class matters here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResolverClass {
    /// No action (`NVRH_NONE`).
    None,
    /// Resolved by the linker (`NVRH_LINKER`).
    Linker,
    /// Resolved by the CUDA driver at load time (`NVRH_DRIVER`).
    Driver,
    /// Resolved by whichever knows the value (`NVRH_EITHER`).
    Either,
}

impl ResolverClass {
    /// The seed's name (`NVRH_LINKER`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ResolverClass::None => "NVRH_NONE",
            ResolverClass::Linker => "NVRH_LINKER",
            ResolverClass::Driver => "NVRH_DRIVER",
            ResolverClass::Either => "NVRH_EITHER",
        }
    }
}

/// The kind of value a bit action inserts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueKind {
    /// `ADDR`.
    Addr,
    /// `ADDR8_0`.
    Addr80,
    /// `ADDR8_16`.
    Addr816,
    /// `ADDR8_24`.
    Addr824,
    /// `ADDR8_32`.
    Addr832,
    /// `ADDR8_40`.
    Addr840,
    /// `ADDR8_48`.
    Addr848,
    /// `ADDR8_56`.
    Addr856,
    /// `ADDR8_8`.
    Addr88,
    /// `CBANK`.
    Cbank,
    /// `CBANK4`.
    Cbank4,
    /// `CLEAR`.
    Clear,
    /// `FDESC`.
    Fdesc,
    /// `FDESC8_0`.
    Fdesc80,
    /// `FDESC8_16`.
    Fdesc816,
    /// `FDESC8_24`.
    Fdesc824,
    /// `FDESC8_32`.
    Fdesc832,
    /// `FDESC8_40`.
    Fdesc840,
    /// `FDESC8_48`.
    Fdesc848,
    /// `FDESC8_56`.
    Fdesc856,
    /// `FDESC8_8`.
    Fdesc88,
    /// `FDESCA`.
    Fdesca,
    /// `GADDR`.
    Gaddr,
    /// `GADDR8_0`.
    Gaddr80,
    /// `GADDR8_16`.
    Gaddr816,
    /// `GADDR8_24`.
    Gaddr824,
    /// `GADDR8_32`.
    Gaddr832,
    /// `GADDR8_40`.
    Gaddr840,
    /// `GADDR8_48`.
    Gaddr848,
    /// `GADDR8_56`.
    Gaddr856,
    /// `GADDR8_8`.
    Gaddr88,
    /// `HEADER`.
    Header,
    /// `HIADDR`.
    Hiaddr,
    /// `HIFDESC`.
    Hifdesc,
    /// `HIUADDR`.
    Hiuaddr,
    /// `HWDESC`.
    Hwdesc,
    /// `HWSWDESC`.
    Hwswdesc,
    /// `INST`.
    Inst,
    /// `INST_FIELD_CLEAR`.
    InstFieldClear,
    /// `INST_OPCODE`.
    InstOpcode,
    /// `LOADDR`.
    Loaddr,
    /// `LOFDESC`.
    Lofdesc,
    /// `LOUADDR`.
    Louaddr,
    /// `PCREL`.
    Pcrel,
    /// `SHIFT2`.
    Shift2,
    /// `SHIFT8`.
    Shift8,
    /// `SLOT`.
    Slot,
    /// `UADDR`.
    Uaddr,
    /// `UADDR8_0`.
    Uaddr80,
    /// `UADDR8_16`.
    Uaddr816,
    /// `UADDR8_24`.
    Uaddr824,
    /// `UADDR8_32`.
    Uaddr832,
    /// `UADDR8_40`.
    Uaddr840,
    /// `UADDR8_48`.
    Uaddr848,
    /// `UADDR8_56`.
    Uaddr856,
    /// `UADDR8_8`.
    Uaddr88,
}

impl ValueKind {
    /// The seed's spelling (`ADDR`, `SHIFT2`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ValueKind::Addr => "ADDR",
            ValueKind::Addr80 => "ADDR8_0",
            ValueKind::Addr816 => "ADDR8_16",
            ValueKind::Addr824 => "ADDR8_24",
            ValueKind::Addr832 => "ADDR8_32",
            ValueKind::Addr840 => "ADDR8_40",
            ValueKind::Addr848 => "ADDR8_48",
            ValueKind::Addr856 => "ADDR8_56",
            ValueKind::Addr88 => "ADDR8_8",
            ValueKind::Cbank => "CBANK",
            ValueKind::Cbank4 => "CBANK4",
            ValueKind::Clear => "CLEAR",
            ValueKind::Fdesc => "FDESC",
            ValueKind::Fdesc80 => "FDESC8_0",
            ValueKind::Fdesc816 => "FDESC8_16",
            ValueKind::Fdesc824 => "FDESC8_24",
            ValueKind::Fdesc832 => "FDESC8_32",
            ValueKind::Fdesc840 => "FDESC8_40",
            ValueKind::Fdesc848 => "FDESC8_48",
            ValueKind::Fdesc856 => "FDESC8_56",
            ValueKind::Fdesc88 => "FDESC8_8",
            ValueKind::Fdesca => "FDESCA",
            ValueKind::Gaddr => "GADDR",
            ValueKind::Gaddr80 => "GADDR8_0",
            ValueKind::Gaddr816 => "GADDR8_16",
            ValueKind::Gaddr824 => "GADDR8_24",
            ValueKind::Gaddr832 => "GADDR8_32",
            ValueKind::Gaddr840 => "GADDR8_40",
            ValueKind::Gaddr848 => "GADDR8_48",
            ValueKind::Gaddr856 => "GADDR8_56",
            ValueKind::Gaddr88 => "GADDR8_8",
            ValueKind::Header => "HEADER",
            ValueKind::Hiaddr => "HIADDR",
            ValueKind::Hifdesc => "HIFDESC",
            ValueKind::Hiuaddr => "HIUADDR",
            ValueKind::Hwdesc => "HWDESC",
            ValueKind::Hwswdesc => "HWSWDESC",
            ValueKind::Inst => "INST",
            ValueKind::InstFieldClear => "INST_FIELD_CLEAR",
            ValueKind::InstOpcode => "INST_OPCODE",
            ValueKind::Loaddr => "LOADDR",
            ValueKind::Lofdesc => "LOFDESC",
            ValueKind::Louaddr => "LOUADDR",
            ValueKind::Pcrel => "PCREL",
            ValueKind::Shift2 => "SHIFT2",
            ValueKind::Shift8 => "SHIFT8",
            ValueKind::Slot => "SLOT",
            ValueKind::Uaddr => "UADDR",
            ValueKind::Uaddr80 => "UADDR8_0",
            ValueKind::Uaddr816 => "UADDR8_16",
            ValueKind::Uaddr824 => "UADDR8_24",
            ValueKind::Uaddr832 => "UADDR8_32",
            ValueKind::Uaddr840 => "UADDR8_40",
            ValueKind::Uaddr848 => "UADDR8_48",
            ValueKind::Uaddr856 => "UADDR8_56",
            ValueKind::Uaddr88 => "UADDR8_8",
        }
    }
}

/// One bit action: `bits[lo..=hi] = kind >> shift`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BitAction {
    /// Lowest bit written.
    pub lo: u8,
    /// Highest bit written (inclusive).
    pub hi: u8,
    /// The value inserted.
    pub kind: ValueKind,
    /// Right shift applied to the value before insertion.
    pub shift: u8,
}

impl BitAction {
    /// Width of the field in bits.
    pub fn width(&self) -> u32 {
        u32::from(self.hi - self.lo) + 1
    }
}

/// One relocation type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RelocDesc {
    /// The ELF relocation type code.
    pub code: u32,
    /// `R_CUDA_...`.
    pub name: &'static str,
    /// Who resolves it.
    pub class: ResolverClass,
    /// The fields it writes.
    pub actions: &'static [BitAction],
}

impl RelocDesc {
    /// Bytes the relocation touches at `r_offset`: 4, 8 or 16 by its highest bit.
    pub fn width_bytes(&self) -> usize {
        let hi = self.actions.iter().map(|a| a.hi).max().unwrap_or(0);
        if hi < 32 {
            4
        } else if hi < 64 {
            8
        } else {
            16
        }
    }
}

/// An R_CUDA relocation type code with its name as `Display`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelocType(pub u32);

impl RelocType {
    /// `R_CUDA_NONE` (0).
    pub const R_CUDA_NONE: RelocType = RelocType(0);
    /// `R_CUDA_32` (1).
    pub const R_CUDA_32: RelocType = RelocType(1);
    /// `R_CUDA_64` (2).
    pub const R_CUDA_64: RelocType = RelocType(2);
    /// `R_CUDA_G32` (3).
    pub const R_CUDA_G32: RelocType = RelocType(3);
    /// `R_CUDA_G64` (4).
    pub const R_CUDA_G64: RelocType = RelocType(4);
    /// `R_CUDA_ABS32_26` (5).
    pub const R_CUDA_ABS32_26: RelocType = RelocType(5);
    /// `R_CUDA_TEX_HEADER_INDEX` (6).
    pub const R_CUDA_TEX_HEADER_INDEX: RelocType = RelocType(6);
    /// `R_CUDA_SAMP_HEADER_INDEX` (7).
    pub const R_CUDA_SAMP_HEADER_INDEX: RelocType = RelocType(7);
    /// `R_CUDA_SURF_HW_DESC` (8).
    pub const R_CUDA_SURF_HW_DESC: RelocType = RelocType(8);
    /// `R_CUDA_SURF_HW_SW_DESC` (9).
    pub const R_CUDA_SURF_HW_SW_DESC: RelocType = RelocType(9);
    /// `R_CUDA_ABS32_LO_26` (10).
    pub const R_CUDA_ABS32_LO_26: RelocType = RelocType(10);
    /// `R_CUDA_ABS32_HI_26` (11).
    pub const R_CUDA_ABS32_HI_26: RelocType = RelocType(11);
    /// `R_CUDA_ABS32_23` (12).
    pub const R_CUDA_ABS32_23: RelocType = RelocType(12);
    /// `R_CUDA_ABS32_LO_23` (13).
    pub const R_CUDA_ABS32_LO_23: RelocType = RelocType(13);
    /// `R_CUDA_ABS32_HI_23` (14).
    pub const R_CUDA_ABS32_HI_23: RelocType = RelocType(14);
    /// `R_CUDA_ABS24_26` (15).
    pub const R_CUDA_ABS24_26: RelocType = RelocType(15);
    /// `R_CUDA_ABS24_23` (16).
    pub const R_CUDA_ABS24_23: RelocType = RelocType(16);
    /// `R_CUDA_ABS16_26` (17).
    pub const R_CUDA_ABS16_26: RelocType = RelocType(17);
    /// `R_CUDA_ABS16_23` (18).
    pub const R_CUDA_ABS16_23: RelocType = RelocType(18);
    /// `R_CUDA_TEX_SLOT` (19).
    pub const R_CUDA_TEX_SLOT: RelocType = RelocType(19);
    /// `R_CUDA_SAMP_SLOT` (20).
    pub const R_CUDA_SAMP_SLOT: RelocType = RelocType(20);
    /// `R_CUDA_SURF_SLOT` (21).
    pub const R_CUDA_SURF_SLOT: RelocType = RelocType(21);
    /// `R_CUDA_TEX_BINDLESSOFF13_32` (22).
    pub const R_CUDA_TEX_BINDLESSOFF13_32: RelocType = RelocType(22);
    /// `R_CUDA_TEX_BINDLESSOFF13_47` (23).
    pub const R_CUDA_TEX_BINDLESSOFF13_47: RelocType = RelocType(23);
    /// `R_CUDA_CONST_FIELD19_28` (24).
    pub const R_CUDA_CONST_FIELD19_28: RelocType = RelocType(24);
    /// `R_CUDA_CONST_FIELD19_23` (25).
    pub const R_CUDA_CONST_FIELD19_23: RelocType = RelocType(25);
    /// `R_CUDA_TEX_SLOT9_49` (26).
    pub const R_CUDA_TEX_SLOT9_49: RelocType = RelocType(26);
    /// `R_CUDA_6_31` (27).
    pub const R_CUDA_6_31: RelocType = RelocType(27);
    /// `R_CUDA_2_47` (28).
    pub const R_CUDA_2_47: RelocType = RelocType(28);
    /// `R_CUDA_TEX_BINDLESSOFF13_41` (29).
    pub const R_CUDA_TEX_BINDLESSOFF13_41: RelocType = RelocType(29);
    /// `R_CUDA_TEX_BINDLESSOFF13_45` (30).
    pub const R_CUDA_TEX_BINDLESSOFF13_45: RelocType = RelocType(30);
    /// `R_CUDA_FUNC_DESC32_23` (31).
    pub const R_CUDA_FUNC_DESC32_23: RelocType = RelocType(31);
    /// `R_CUDA_FUNC_DESC32_LO_23` (32).
    pub const R_CUDA_FUNC_DESC32_LO_23: RelocType = RelocType(32);
    /// `R_CUDA_FUNC_DESC32_HI_23` (33).
    pub const R_CUDA_FUNC_DESC32_HI_23: RelocType = RelocType(33);
    /// `R_CUDA_FUNC_DESC_32` (34).
    pub const R_CUDA_FUNC_DESC_32: RelocType = RelocType(34);
    /// `R_CUDA_FUNC_DESC_64` (35).
    pub const R_CUDA_FUNC_DESC_64: RelocType = RelocType(35);
    /// `R_CUDA_CONST_FIELD21_26` (36).
    pub const R_CUDA_CONST_FIELD21_26: RelocType = RelocType(36);
    /// `R_CUDA_QUERY_DESC21_37` (37).
    pub const R_CUDA_QUERY_DESC21_37: RelocType = RelocType(37);
    /// `R_CUDA_CONST_FIELD19_26` (38).
    pub const R_CUDA_CONST_FIELD19_26: RelocType = RelocType(38);
    /// `R_CUDA_CONST_FIELD21_23` (39).
    pub const R_CUDA_CONST_FIELD21_23: RelocType = RelocType(39);
    /// `R_CUDA_PCREL_IMM24_26` (40).
    pub const R_CUDA_PCREL_IMM24_26: RelocType = RelocType(40);
    /// `R_CUDA_PCREL_IMM24_23` (41).
    pub const R_CUDA_PCREL_IMM24_23: RelocType = RelocType(41);
    /// `R_CUDA_ABS32_20` (42).
    pub const R_CUDA_ABS32_20: RelocType = RelocType(42);
    /// `R_CUDA_ABS32_LO_20` (43).
    pub const R_CUDA_ABS32_LO_20: RelocType = RelocType(43);
    /// `R_CUDA_ABS32_HI_20` (44).
    pub const R_CUDA_ABS32_HI_20: RelocType = RelocType(44);
    /// `R_CUDA_ABS24_20` (45).
    pub const R_CUDA_ABS24_20: RelocType = RelocType(45);
    /// `R_CUDA_ABS16_20` (46).
    pub const R_CUDA_ABS16_20: RelocType = RelocType(46);
    /// `R_CUDA_FUNC_DESC32_20` (47).
    pub const R_CUDA_FUNC_DESC32_20: RelocType = RelocType(47);
    /// `R_CUDA_FUNC_DESC32_LO_20` (48).
    pub const R_CUDA_FUNC_DESC32_LO_20: RelocType = RelocType(48);
    /// `R_CUDA_FUNC_DESC32_HI_20` (49).
    pub const R_CUDA_FUNC_DESC32_HI_20: RelocType = RelocType(49);
    /// `R_CUDA_CONST_FIELD19_20` (50).
    pub const R_CUDA_CONST_FIELD19_20: RelocType = RelocType(50);
    /// `R_CUDA_BINDLESSOFF13_36` (51).
    pub const R_CUDA_BINDLESSOFF13_36: RelocType = RelocType(51);
    /// `R_CUDA_SURF_HEADER_INDEX` (52).
    pub const R_CUDA_SURF_HEADER_INDEX: RelocType = RelocType(52);
    /// `R_CUDA_INSTRUCTION64` (53).
    pub const R_CUDA_INSTRUCTION64: RelocType = RelocType(53);
    /// `R_CUDA_CONST_FIELD21_20` (54).
    pub const R_CUDA_CONST_FIELD21_20: RelocType = RelocType(54);
    /// `R_CUDA_ABS32_32` (55).
    pub const R_CUDA_ABS32_32: RelocType = RelocType(55);
    /// `R_CUDA_ABS32_LO_32` (56).
    pub const R_CUDA_ABS32_LO_32: RelocType = RelocType(56);
    /// `R_CUDA_ABS32_HI_32` (57).
    pub const R_CUDA_ABS32_HI_32: RelocType = RelocType(57);
    /// `R_CUDA_ABS47_34` (58).
    pub const R_CUDA_ABS47_34: RelocType = RelocType(58);
    /// `R_CUDA_ABS16_32` (59).
    pub const R_CUDA_ABS16_32: RelocType = RelocType(59);
    /// `R_CUDA_ABS24_32` (60).
    pub const R_CUDA_ABS24_32: RelocType = RelocType(60);
    /// `R_CUDA_FUNC_DESC32_32` (61).
    pub const R_CUDA_FUNC_DESC32_32: RelocType = RelocType(61);
    /// `R_CUDA_FUNC_DESC32_LO_32` (62).
    pub const R_CUDA_FUNC_DESC32_LO_32: RelocType = RelocType(62);
    /// `R_CUDA_FUNC_DESC32_HI_32` (63).
    pub const R_CUDA_FUNC_DESC32_HI_32: RelocType = RelocType(63);
    /// `R_CUDA_CONST_FIELD19_40` (64).
    pub const R_CUDA_CONST_FIELD19_40: RelocType = RelocType(64);
    /// `R_CUDA_BINDLESSOFF14_40` (65).
    pub const R_CUDA_BINDLESSOFF14_40: RelocType = RelocType(65);
    /// `R_CUDA_CONST_FIELD21_38` (66).
    pub const R_CUDA_CONST_FIELD21_38: RelocType = RelocType(66);
    /// `R_CUDA_INSTRUCTION128` (67).
    pub const R_CUDA_INSTRUCTION128: RelocType = RelocType(67);
    /// `R_CUDA_YIELD_OPCODE9_0` (68).
    pub const R_CUDA_YIELD_OPCODE9_0: RelocType = RelocType(68);
    /// `R_CUDA_YIELD_CLEAR_PRED4_87` (69).
    pub const R_CUDA_YIELD_CLEAR_PRED4_87: RelocType = RelocType(69);
    /// `R_CUDA_32_LO` (70).
    pub const R_CUDA_32_LO: RelocType = RelocType(70);
    /// `R_CUDA_32_HI` (71).
    pub const R_CUDA_32_HI: RelocType = RelocType(71);
    /// `R_CUDA_UNUSED_CLEAR32` (72).
    pub const R_CUDA_UNUSED_CLEAR32: RelocType = RelocType(72);
    /// `R_CUDA_UNUSED_CLEAR64` (73).
    pub const R_CUDA_UNUSED_CLEAR64: RelocType = RelocType(73);
    /// `R_CUDA_ABS24_40` (74).
    pub const R_CUDA_ABS24_40: RelocType = RelocType(74);
    /// `R_CUDA_ABS55_16_34` (75).
    pub const R_CUDA_ABS55_16_34: RelocType = RelocType(75);
    /// `R_CUDA_8_0` (76).
    pub const R_CUDA_8_0: RelocType = RelocType(76);
    /// `R_CUDA_8_8` (77).
    pub const R_CUDA_8_8: RelocType = RelocType(77);
    /// `R_CUDA_8_16` (78).
    pub const R_CUDA_8_16: RelocType = RelocType(78);
    /// `R_CUDA_8_24` (79).
    pub const R_CUDA_8_24: RelocType = RelocType(79);
    /// `R_CUDA_8_32` (80).
    pub const R_CUDA_8_32: RelocType = RelocType(80);
    /// `R_CUDA_8_40` (81).
    pub const R_CUDA_8_40: RelocType = RelocType(81);
    /// `R_CUDA_8_48` (82).
    pub const R_CUDA_8_48: RelocType = RelocType(82);
    /// `R_CUDA_8_56` (83).
    pub const R_CUDA_8_56: RelocType = RelocType(83);
    /// `R_CUDA_G8_0` (84).
    pub const R_CUDA_G8_0: RelocType = RelocType(84);
    /// `R_CUDA_G8_8` (85).
    pub const R_CUDA_G8_8: RelocType = RelocType(85);
    /// `R_CUDA_G8_16` (86).
    pub const R_CUDA_G8_16: RelocType = RelocType(86);
    /// `R_CUDA_G8_24` (87).
    pub const R_CUDA_G8_24: RelocType = RelocType(87);
    /// `R_CUDA_G8_32` (88).
    pub const R_CUDA_G8_32: RelocType = RelocType(88);
    /// `R_CUDA_G8_40` (89).
    pub const R_CUDA_G8_40: RelocType = RelocType(89);
    /// `R_CUDA_G8_48` (90).
    pub const R_CUDA_G8_48: RelocType = RelocType(90);
    /// `R_CUDA_G8_56` (91).
    pub const R_CUDA_G8_56: RelocType = RelocType(91);
    /// `R_CUDA_FUNC_DESC_8_0` (92).
    pub const R_CUDA_FUNC_DESC_8_0: RelocType = RelocType(92);
    /// `R_CUDA_FUNC_DESC_8_8` (93).
    pub const R_CUDA_FUNC_DESC_8_8: RelocType = RelocType(93);
    /// `R_CUDA_FUNC_DESC_8_16` (94).
    pub const R_CUDA_FUNC_DESC_8_16: RelocType = RelocType(94);
    /// `R_CUDA_FUNC_DESC_8_24` (95).
    pub const R_CUDA_FUNC_DESC_8_24: RelocType = RelocType(95);
    /// `R_CUDA_FUNC_DESC_8_32` (96).
    pub const R_CUDA_FUNC_DESC_8_32: RelocType = RelocType(96);
    /// `R_CUDA_FUNC_DESC_8_40` (97).
    pub const R_CUDA_FUNC_DESC_8_40: RelocType = RelocType(97);
    /// `R_CUDA_FUNC_DESC_8_48` (98).
    pub const R_CUDA_FUNC_DESC_8_48: RelocType = RelocType(98);
    /// `R_CUDA_FUNC_DESC_8_56` (99).
    pub const R_CUDA_FUNC_DESC_8_56: RelocType = RelocType(99);
    /// `R_CUDA_ABS20_44` (100).
    pub const R_CUDA_ABS20_44: RelocType = RelocType(100);
    /// `R_CUDA_SAMP_HEADER_INDEX_0` (101).
    pub const R_CUDA_SAMP_HEADER_INDEX_0: RelocType = RelocType(101);
    /// `R_CUDA_UNIFIED` (102).
    pub const R_CUDA_UNIFIED: RelocType = RelocType(102);
    /// `R_CUDA_UNIFIED_32` (103).
    pub const R_CUDA_UNIFIED_32: RelocType = RelocType(103);
    /// `R_CUDA_UNIFIED_8_0` (104).
    pub const R_CUDA_UNIFIED_8_0: RelocType = RelocType(104);
    /// `R_CUDA_UNIFIED_8_8` (105).
    pub const R_CUDA_UNIFIED_8_8: RelocType = RelocType(105);
    /// `R_CUDA_UNIFIED_8_16` (106).
    pub const R_CUDA_UNIFIED_8_16: RelocType = RelocType(106);
    /// `R_CUDA_UNIFIED_8_24` (107).
    pub const R_CUDA_UNIFIED_8_24: RelocType = RelocType(107);
    /// `R_CUDA_UNIFIED_8_32` (108).
    pub const R_CUDA_UNIFIED_8_32: RelocType = RelocType(108);
    /// `R_CUDA_UNIFIED_8_40` (109).
    pub const R_CUDA_UNIFIED_8_40: RelocType = RelocType(109);
    /// `R_CUDA_UNIFIED_8_48` (110).
    pub const R_CUDA_UNIFIED_8_48: RelocType = RelocType(110);
    /// `R_CUDA_UNIFIED_8_56` (111).
    pub const R_CUDA_UNIFIED_8_56: RelocType = RelocType(111);
    /// `R_CUDA_UNIFIED32_LO_32` (112).
    pub const R_CUDA_UNIFIED32_LO_32: RelocType = RelocType(112);
    /// `R_CUDA_UNIFIED32_HI_32` (113).
    pub const R_CUDA_UNIFIED32_HI_32: RelocType = RelocType(113);
    /// `R_CUDA_ABS56_16_34` (114).
    pub const R_CUDA_ABS56_16_34: RelocType = RelocType(114);
    /// `R_CUDA_CONST_FIELD22_37` (115).
    pub const R_CUDA_CONST_FIELD22_37: RelocType = RelocType(115);
    /// `R_CUDA_NONE_LAST` (116).
    pub const R_CUDA_NONE_LAST: RelocType = RelocType(116);

    /// The table row, if the code is known.
    pub fn desc(self) -> Option<&'static RelocDesc> {
        describe(self.0)
    }
}

impl fmt::Display for RelocType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match describe(self.0) {
            Some(d) => f.write_str(d.name),
            None => write!(f, "Unknown({})", self.0),
        }
    }
}

const fn act(lo: u8, hi: u8, kind: ValueKind, shift: u8) -> BitAction {
    BitAction {
        lo,
        hi,
        kind,
        shift,
    }
}

/// The row of a relocation type code.
pub fn describe(code: u32) -> Option<&'static RelocDesc> {
    R_CUDA_TABLE.get(code as usize)
}

/// All 117 R_CUDA types, indexed by code.
pub const R_CUDA_TABLE: [RelocDesc; 117] = [
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
        actions: &[act(0, 31, ValueKind::Gaddr, 0)],
    },
    RelocDesc {
        code: 4,
        name: "R_CUDA_G64",
        class: ResolverClass::Driver,
        actions: &[act(0, 63, ValueKind::Gaddr, 0)],
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
        actions: &[act(0, 31, ValueKind::Hwdesc, 0)],
    },
    RelocDesc {
        code: 9,
        name: "R_CUDA_SURF_HW_SW_DESC",
        class: ResolverClass::Driver,
        actions: &[act(0, 31, ValueKind::Hwswdesc, 0)],
    },
    RelocDesc {
        code: 10,
        name: "R_CUDA_ABS32_LO_26",
        class: ResolverClass::Either,
        actions: &[act(26, 57, ValueKind::Loaddr, 0)],
    },
    RelocDesc {
        code: 11,
        name: "R_CUDA_ABS32_HI_26",
        class: ResolverClass::Either,
        actions: &[act(26, 57, ValueKind::Hiaddr, 32)],
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
        actions: &[act(23, 54, ValueKind::Loaddr, 0)],
    },
    RelocDesc {
        code: 14,
        name: "R_CUDA_ABS32_HI_23",
        class: ResolverClass::Either,
        actions: &[act(23, 54, ValueKind::Hiaddr, 32)],
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
            act(42, 45, ValueKind::Cbank, 0),
            act(26, 26, ValueKind::Cbank4, 0),
        ],
    },
    RelocDesc {
        code: 25,
        name: "R_CUDA_CONST_FIELD19_23",
        class: ResolverClass::Linker,
        actions: &[
            act(23, 36, ValueKind::Shift2, 0),
            act(37, 41, ValueKind::Cbank, 0),
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
        actions: &[act(23, 54, ValueKind::Fdesc, 0)],
    },
    RelocDesc {
        code: 32,
        name: "R_CUDA_FUNC_DESC32_LO_23",
        class: ResolverClass::Driver,
        actions: &[act(23, 54, ValueKind::Lofdesc, 0)],
    },
    RelocDesc {
        code: 33,
        name: "R_CUDA_FUNC_DESC32_HI_23",
        class: ResolverClass::Driver,
        actions: &[act(23, 54, ValueKind::Hifdesc, 32)],
    },
    RelocDesc {
        code: 34,
        name: "R_CUDA_FUNC_DESC_32",
        class: ResolverClass::Driver,
        actions: &[act(0, 31, ValueKind::Fdesca, 0)],
    },
    RelocDesc {
        code: 35,
        name: "R_CUDA_FUNC_DESC_64",
        class: ResolverClass::Driver,
        actions: &[act(0, 63, ValueKind::Fdesca, 0)],
    },
    RelocDesc {
        code: 36,
        name: "R_CUDA_CONST_FIELD21_26",
        class: ResolverClass::Linker,
        actions: &[
            act(26, 41, ValueKind::Addr, 0),
            act(42, 46, ValueKind::Cbank, 0),
        ],
    },
    RelocDesc {
        code: 37,
        name: "R_CUDA_QUERY_DESC21_37",
        class: ResolverClass::Linker,
        actions: &[
            act(37, 52, ValueKind::Addr, 0),
            act(53, 57, ValueKind::Cbank, 0),
        ],
    },
    RelocDesc {
        code: 38,
        name: "R_CUDA_CONST_FIELD19_26",
        class: ResolverClass::Linker,
        actions: &[
            act(26, 39, ValueKind::Shift2, 0),
            act(40, 44, ValueKind::Cbank, 0),
        ],
    },
    RelocDesc {
        code: 39,
        name: "R_CUDA_CONST_FIELD21_23",
        class: ResolverClass::Linker,
        actions: &[
            act(23, 38, ValueKind::Addr, 0),
            act(39, 43, ValueKind::Cbank, 0),
        ],
    },
    RelocDesc {
        code: 40,
        name: "R_CUDA_PCREL_IMM24_26",
        class: ResolverClass::Linker,
        actions: &[act(26, 49, ValueKind::Pcrel, 0)],
    },
    RelocDesc {
        code: 41,
        name: "R_CUDA_PCREL_IMM24_23",
        class: ResolverClass::Linker,
        actions: &[act(23, 46, ValueKind::Pcrel, 0)],
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
        actions: &[act(20, 51, ValueKind::Loaddr, 0)],
    },
    RelocDesc {
        code: 44,
        name: "R_CUDA_ABS32_HI_20",
        class: ResolverClass::Either,
        actions: &[act(20, 51, ValueKind::Hiaddr, 32)],
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
        actions: &[act(20, 51, ValueKind::Fdesc, 0)],
    },
    RelocDesc {
        code: 48,
        name: "R_CUDA_FUNC_DESC32_LO_20",
        class: ResolverClass::Driver,
        actions: &[act(20, 51, ValueKind::Lofdesc, 0)],
    },
    RelocDesc {
        code: 49,
        name: "R_CUDA_FUNC_DESC32_HI_20",
        class: ResolverClass::Driver,
        actions: &[act(20, 51, ValueKind::Hifdesc, 32)],
    },
    RelocDesc {
        code: 50,
        name: "R_CUDA_CONST_FIELD19_20",
        class: ResolverClass::Linker,
        actions: &[
            act(20, 33, ValueKind::Shift2, 0),
            act(34, 38, ValueKind::Cbank, 0),
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
            act(36, 40, ValueKind::Cbank, 0),
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
        actions: &[act(32, 63, ValueKind::Loaddr, 0)],
    },
    RelocDesc {
        code: 57,
        name: "R_CUDA_ABS32_HI_32",
        class: ResolverClass::Either,
        actions: &[act(32, 63, ValueKind::Hiaddr, 32)],
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
        actions: &[act(32, 63, ValueKind::Fdesc, 0)],
    },
    RelocDesc {
        code: 62,
        name: "R_CUDA_FUNC_DESC32_LO_32",
        class: ResolverClass::Driver,
        actions: &[act(32, 63, ValueKind::Lofdesc, 0)],
    },
    RelocDesc {
        code: 63,
        name: "R_CUDA_FUNC_DESC32_HI_32",
        class: ResolverClass::Driver,
        actions: &[act(32, 63, ValueKind::Hifdesc, 32)],
    },
    RelocDesc {
        code: 64,
        name: "R_CUDA_CONST_FIELD19_40",
        class: ResolverClass::Linker,
        actions: &[
            act(40, 53, ValueKind::Shift2, 0),
            act(54, 58, ValueKind::Cbank, 0),
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
            act(54, 58, ValueKind::Cbank, 0),
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
        actions: &[act(0, 31, ValueKind::Loaddr, 0)],
    },
    RelocDesc {
        code: 71,
        name: "R_CUDA_32_HI",
        class: ResolverClass::Either,
        actions: &[act(0, 31, ValueKind::Hiaddr, 32)],
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
        actions: &[act(0, 7, ValueKind::Addr80, 0)],
    },
    RelocDesc {
        code: 77,
        name: "R_CUDA_8_8",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr88, 8)],
    },
    RelocDesc {
        code: 78,
        name: "R_CUDA_8_16",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr816, 16)],
    },
    RelocDesc {
        code: 79,
        name: "R_CUDA_8_24",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr824, 24)],
    },
    RelocDesc {
        code: 80,
        name: "R_CUDA_8_32",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr832, 32)],
    },
    RelocDesc {
        code: 81,
        name: "R_CUDA_8_40",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr840, 40)],
    },
    RelocDesc {
        code: 82,
        name: "R_CUDA_8_48",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr848, 48)],
    },
    RelocDesc {
        code: 83,
        name: "R_CUDA_8_56",
        class: ResolverClass::Either,
        actions: &[act(0, 7, ValueKind::Addr856, 56)],
    },
    RelocDesc {
        code: 84,
        name: "R_CUDA_G8_0",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Gaddr80, 0)],
    },
    RelocDesc {
        code: 85,
        name: "R_CUDA_G8_8",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Gaddr88, 8)],
    },
    RelocDesc {
        code: 86,
        name: "R_CUDA_G8_16",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Gaddr816, 16)],
    },
    RelocDesc {
        code: 87,
        name: "R_CUDA_G8_24",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Gaddr824, 24)],
    },
    RelocDesc {
        code: 88,
        name: "R_CUDA_G8_32",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Gaddr832, 32)],
    },
    RelocDesc {
        code: 89,
        name: "R_CUDA_G8_40",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Gaddr840, 40)],
    },
    RelocDesc {
        code: 90,
        name: "R_CUDA_G8_48",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Gaddr848, 48)],
    },
    RelocDesc {
        code: 91,
        name: "R_CUDA_G8_56",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Gaddr856, 56)],
    },
    RelocDesc {
        code: 92,
        name: "R_CUDA_FUNC_DESC_8_0",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Fdesc80, 0)],
    },
    RelocDesc {
        code: 93,
        name: "R_CUDA_FUNC_DESC_8_8",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Fdesc88, 8)],
    },
    RelocDesc {
        code: 94,
        name: "R_CUDA_FUNC_DESC_8_16",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Fdesc816, 16)],
    },
    RelocDesc {
        code: 95,
        name: "R_CUDA_FUNC_DESC_8_24",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Fdesc824, 24)],
    },
    RelocDesc {
        code: 96,
        name: "R_CUDA_FUNC_DESC_8_32",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Fdesc832, 32)],
    },
    RelocDesc {
        code: 97,
        name: "R_CUDA_FUNC_DESC_8_40",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Fdesc840, 40)],
    },
    RelocDesc {
        code: 98,
        name: "R_CUDA_FUNC_DESC_8_48",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Fdesc848, 48)],
    },
    RelocDesc {
        code: 99,
        name: "R_CUDA_FUNC_DESC_8_56",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Fdesc856, 56)],
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
        actions: &[act(0, 63, ValueKind::Uaddr, 0)],
    },
    RelocDesc {
        code: 103,
        name: "R_CUDA_UNIFIED_32",
        class: ResolverClass::Driver,
        actions: &[act(0, 31, ValueKind::Uaddr, 0)],
    },
    RelocDesc {
        code: 104,
        name: "R_CUDA_UNIFIED_8_0",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Uaddr80, 0)],
    },
    RelocDesc {
        code: 105,
        name: "R_CUDA_UNIFIED_8_8",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Uaddr88, 8)],
    },
    RelocDesc {
        code: 106,
        name: "R_CUDA_UNIFIED_8_16",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Uaddr816, 16)],
    },
    RelocDesc {
        code: 107,
        name: "R_CUDA_UNIFIED_8_24",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Uaddr824, 24)],
    },
    RelocDesc {
        code: 108,
        name: "R_CUDA_UNIFIED_8_32",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Uaddr832, 32)],
    },
    RelocDesc {
        code: 109,
        name: "R_CUDA_UNIFIED_8_40",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Uaddr840, 40)],
    },
    RelocDesc {
        code: 110,
        name: "R_CUDA_UNIFIED_8_48",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Uaddr848, 48)],
    },
    RelocDesc {
        code: 111,
        name: "R_CUDA_UNIFIED_8_56",
        class: ResolverClass::Driver,
        actions: &[act(0, 7, ValueKind::Uaddr856, 56)],
    },
    RelocDesc {
        code: 112,
        name: "R_CUDA_UNIFIED32_LO_32",
        class: ResolverClass::Driver,
        actions: &[act(32, 63, ValueKind::Louaddr, 0)],
    },
    RelocDesc {
        code: 113,
        name: "R_CUDA_UNIFIED32_HI_32",
        class: ResolverClass::Driver,
        actions: &[act(32, 63, ValueKind::Hiuaddr, 32)],
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
            act(54, 58, ValueKind::Cbank, 0),
        ],
    },
    RelocDesc {
        code: 116,
        name: "R_CUDA_NONE_LAST",
        class: ResolverClass::None,
        actions: &[],
    },
];
