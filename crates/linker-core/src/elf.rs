//! Named constants of the CUDA ELF dialect.
//!
//! Standard ELF values are repeated here as plain integers; this module adds what
//! NVIDIA's tools use on top: `EM_CUDA`, the `SHT_CUDA_*` section types, the
//! CUDA `st_other` bits, the CUDA symbol type 13 and the note types. Each
//! family has a `*_name` function whose fallback is `Unknown(0x..)`, so dumps
//! never hide a value they do not know.

// Standard ELF values (as plain integers, matching the on-disk fields).
/// `e_type`: relocatable object.
pub const ET_REL: u16 = 1;
/// `e_type`: executable (a final cubin).
pub const ET_EXEC: u16 = 2;
/// `e_type` of the device code of `nvcc -ewp` (`--extensible-whole-program`)
/// objects (`ET_LOPROC`): a relocatable object in all but name, which nvlink
/// 13.0.88 links as one (its output equals that of the same object with
/// `e_type` `ET_REL`, measured at sm_80/90/100).
pub const ET_CUDA_EWP: u16 = 0xff00;
/// `p_type`: loadable segment.
pub const PT_LOAD: u32 = 1;
/// `p_type`: the program header table itself.
pub const PT_PHDR: u32 = 6;
/// `p_flags`: executable.
pub const PF_X: u32 = 1;
/// `p_flags`: writable.
pub const PF_W: u32 = 2;
/// `p_flags`: readable.
pub const PF_R: u32 = 4;
/// `sh_flags`: writable.
pub const SHF_WRITE: u64 = 1;
/// `sh_flags`: occupies memory at run time.
pub const SHF_ALLOC: u64 = 2;
/// `sh_flags`: executable.
pub const SHF_EXECINSTR: u64 = 4;
/// `sh_flags`: `sh_info` holds a section index.
pub const SHF_INFO_LINK: u64 = 0x40;
/// Undefined section index.
pub const SHN_UNDEF: u16 = 0;
/// Start of the reserved section index range.
pub const SHN_LORESERVE: u16 = 0xff00;
/// Absolute symbol.
pub const SHN_ABS: u16 = 0xfff1;
/// Common symbol.
pub const SHN_COMMON: u16 = 0xfff2;
/// Section index is in `SHT_SYMTAB_SHNDX`.
pub const SHN_XINDEX: u16 = 0xffff;
/// Inactive section header.
pub const SHT_NULL: u32 = 0;
/// Program-defined contents.
pub const SHT_PROGBITS: u32 = 1;
/// Symbol table.
pub const SHT_SYMTAB: u32 = 2;
/// String table.
pub const SHT_STRTAB: u32 = 3;
/// Relocations with addends.
pub const SHT_RELA: u32 = 4;
/// Notes.
pub const SHT_NOTE: u32 = 7;
/// Occupies no file space.
pub const SHT_NOBITS: u32 = 8;
/// Relocations without addends.
pub const SHT_REL: u32 = 9;
/// Extended section indices of the symbol table's symbols.
pub const SHT_SYMTAB_SHNDX: u32 = 18;
/// Local binding.
pub const STB_LOCAL: u8 = 0;
/// Global binding.
pub const STB_GLOBAL: u8 = 1;
/// Weak binding.
pub const STB_WEAK: u8 = 2;
/// No type.
pub const STT_NOTYPE: u8 = 0;
/// Data object.
pub const STT_OBJECT: u8 = 1;
/// Function.
pub const STT_FUNC: u8 = 2;
/// Section symbol.
pub const STT_SECTION: u8 = 3;
/// File symbol.
pub const STT_FILE: u8 = 4;

/// `e_machine` of CUDA device code.
pub const EM_CUDA: u16 = 190;
/// `EI_OSABI` used by CUDA 11+ cubins.
pub const ELFOSABI_CUDA: u8 = 0x41;
/// The older CUDA OSABI tag.
pub const ELFOSABI_CUDA_OLD: u8 = 0x33;

/// `.nv.info` and `.nv.info.<fn>`: EIATTR attribute streams.
pub const SHT_CUDA_INFO: u32 = 0x7000_0000;
/// `.nv.callgraph`: pairs of (caller, callee) symbol indices.
pub const SHT_CUDA_CALLGRAPH: u32 = 0x7000_0001;
/// `.nv.prototype`: function prototypes for indirect calls.
pub const SHT_CUDA_PROTOTYPE: u32 = 0x7000_0002;
/// `.nv.rel.action`: relocation action descriptors for the driver.
pub const SHT_CUDA_RESOLVED_RELA: u32 = 0x7000_0003;
/// `.nv.global` (bss) in relocatable objects.
pub const SHT_CUDA_GLOBAL: u32 = 0x7000_0007;
/// `.nv.global.init` in relocatable objects.
pub const SHT_CUDA_GLOBAL_INIT: u32 = 0x7000_0008;
/// `.nv.local.*`.
pub const SHT_CUDA_LOCAL: u32 = 0x7000_0009;
/// `.nv.shared.*` in relocatable objects.
pub const SHT_CUDA_SHARED: u32 = 0x7000_000a;
/// `.nv.rel.action` in final cubins (cuobjdump: CUDA_RELOCINFO).
pub const SHT_CUDA_RELOCINFO: u32 = 0x7000_000b;
/// `.nv.uft`: the unified function table.
pub const SHT_CUDA_UFT: u32 = 0x7000_000e;
/// `.nv.uft.entry`.
pub const SHT_CUDA_UFT_ENTRY: u32 = 0x7000_0011;
/// `.nv.udt`: the unified data table.
pub const SHT_CUDA_UDT: u32 = 0x7000_0012;
/// `.nv.udt.entry`.
pub const SHT_CUDA_UDT_ENTRY: u32 = 0x7000_0014;
/// `.nv.shared.reserved.*`.
pub const SHT_CUDA_SHARED_RESERVED: u32 = 0x7000_0015;
/// `.nv.capmerc.text.*` (Blackwell capability-Mercury text).
pub const SHT_CUDA_CAPMERC_TEXT: u32 = 0x7000_0016;
/// `.nv.constant0` .. `.nv.constant17` in relocatable objects: `SHT_CUDA_CONSTANT0 + bank`.
pub const SHT_CUDA_CONSTANT0: u32 = 0x7000_0064;
/// `.nv.constant2.<fn>`: one function's constant bank 2 (ptxas' jump tables).
pub const SHT_CUDA_CONSTANT2: u32 = SHT_CUDA_CONSTANT0 + 2;
/// `.nv.constant3` (module constants).
pub const SHT_CUDA_CONSTANT3: u32 = SHT_CUDA_CONSTANT0 + 3;
/// Last constant bank type (`.nv.constant17`).
pub const SHT_CUDA_CONSTANT17: u32 = SHT_CUDA_CONSTANT0 + 17;
/// `.nv.merc.rela.*`: Mercury relocations.
pub const SHT_CUDA_MERC_RELA: u32 = 0x7000_0082;
/// `.nv.merc.nv.resolvedrela.*`: the Mercury relocations a
/// `--preserve-relocs` link resolved (RELA entries, as `.nv.resolvedrela.*`).
pub const SHT_CUDA_MERC_RESOLVED_RELA: u32 = 0x7000_0088;
/// `.nv.merc.nv.info*`: Mercury EIATTR streams.
pub const SHT_CUDA_MERC_INFO: u32 = 0x7000_0083;
/// `.nv.merc.nv.constant.optimizer.*`: the Mercury twin of a function's
/// constant bank 2 (`.nv.constant2.*`: ptxas' jump tables, `*.const_opt.*`).
pub const SHT_CUDA_MERC_CONST_OPT: u32 = 0x7000_0084;
/// `.nv.merc.symtab`: the Mercury symbol table.
pub const SHT_CUDA_MERC_SYMTAB: u32 = 0x7000_0085;
/// `.nv.compat`: EICOMPAT attribute stream.
pub const SHT_CUDA_COMPAT: u32 = 0x7000_0086;

/// `sh_flags` bit NVIDIA sets on the tkinfo note (OS-specific range).
pub const SHF_CUDA_NOTE_TKINFO: u64 = 0x0200_0000;
/// `sh_flags` bit NVIDIA sets on the cuinfo note.
pub const SHF_CUDA_NOTE_CUINFO: u64 = 0x0100_0000;
/// `sh_flags` bit marking Mercury sections.
pub const SHF_CUDA_MERCURY: u64 = 0x1000_0000;

/// CUDA's symbol type for variables in relocatable objects (`STT_LOPROC`).
pub const STT_CUDA_OBJECT: u8 = 13;

/// `st_other` bit: the function is a kernel (`.entry`).
pub const STO_CUDA_ENTRY: u8 = 0x10;
/// `st_other` bit: variable in global memory.
pub const STO_CUDA_GLOBAL: u8 = 0x20;
/// `st_other` bit: a managed variable (`.attribute(.managed)`, CUDA
/// `__managed__`), in the ELF visibility field.
pub const STO_CUDA_MANAGED: u8 = 0x04;
/// `st_other` bit: variable in shared memory.
pub const STO_CUDA_SHARED: u8 = 0x40;
/// `st_other` bit: variable in constant memory.
pub const STO_CUDA_CONSTANT: u8 = 0x80;

/// Note type of `.note.nv.tkinfo` (toolkit info).
pub const NT_CUDA_TKINFO: u32 = 2000;
/// Note type of `.note.nv.cuinfo` (CUDA info).
pub const NT_CUDA_CUINFO: u32 = 1000;
/// Owner name of NVIDIA notes.
pub const NOTE_OWNER_NVIDIA: &[u8] = b"NVIDIA Corp\0";

/// A readable name for an `sh_type`, standard or CUDA; `Unknown(0x..)` otherwise.
pub fn section_type_name(sh_type: u32) -> String {
    let s = match sh_type {
        SHT_NULL => "NULL",
        SHT_PROGBITS => "PROGBITS",
        SHT_SYMTAB => "SYMTAB",
        SHT_STRTAB => "STRTAB",
        SHT_RELA => "RELA",
        SHT_NOTE => "NOTE",
        SHT_NOBITS => "NOBITS",
        SHT_REL => "REL",
        SHT_SYMTAB_SHNDX => "SYMTAB_SHNDX",
        SHT_CUDA_INFO => "CUDA_INFO",
        SHT_CUDA_CALLGRAPH => "CUDA_CALLGRAPH",
        SHT_CUDA_PROTOTYPE => "CUDA_PROTOTYPE",
        SHT_CUDA_RESOLVED_RELA => "CUDA_RESOLVED_RELA",
        SHT_CUDA_GLOBAL => "CUDA_GLOBAL",
        SHT_CUDA_GLOBAL_INIT => "CUDA_GLOBAL_INIT",
        SHT_CUDA_LOCAL => "CUDA_LOCAL",
        SHT_CUDA_SHARED => "CUDA_SHARED",
        SHT_CUDA_RELOCINFO => "CUDA_RELOCINFO",
        SHT_CUDA_UFT => "CUDA_UFT",
        SHT_CUDA_UFT_ENTRY => "CUDA_UFT_ENTRY",
        SHT_CUDA_UDT => "CUDA_UDT",
        SHT_CUDA_UDT_ENTRY => "CUDA_UDT_ENTRY",
        SHT_CUDA_SHARED_RESERVED => "CUDA_SHARED_RESERVED",
        SHT_CUDA_CAPMERC_TEXT => "CUDA_CAPMERC_TEXT",
        SHT_CUDA_MERC_RELA => "CUDA_MERC_RELA",
        SHT_CUDA_MERC_RESOLVED_RELA => "CUDA_MERC_RESOLVED_RELA",
        SHT_CUDA_MERC_INFO => "CUDA_MERC_INFO",
        SHT_CUDA_MERC_CONST_OPT => "CUDA_MERC_CONST_OPT",
        SHT_CUDA_MERC_SYMTAB => "CUDA_MERC_SYMTAB",
        SHT_CUDA_COMPAT => "CUDA_COMPAT",
        t if (SHT_CUDA_CONSTANT0..=SHT_CUDA_CONSTANT17).contains(&t) => {
            return format!("CUDA_CONSTANT{}", t - SHT_CUDA_CONSTANT0)
        }
        t => return format!("Unknown({t:#x})"),
    };
    s.to_string()
}

/// A readable name for a symbol binding.
pub fn symbol_bind_name(bind: u8) -> String {
    match bind {
        STB_LOCAL => "LOCAL".into(),
        STB_GLOBAL => "GLOBAL".into(),
        STB_WEAK => "WEAK".into(),
        b => format!("Unknown({b})"),
    }
}

/// A readable name for a symbol type, including CUDA's type 13.
pub fn symbol_type_name(ty: u8) -> String {
    match ty {
        STT_NOTYPE => "NOTYPE".into(),
        STT_OBJECT => "OBJECT".into(),
        STT_FUNC => "FUNC".into(),
        STT_SECTION => "SECTION".into(),
        STT_FILE => "FILE".into(),
        STT_CUDA_OBJECT => "CUDA_OBJECT".into(),
        t => format!("Unknown({t})"),
    }
}

/// Renders `st_other` as its CUDA flag names (`ENTRY|GLOBAL`), or hex for the rest.
pub fn symbol_other_name(other: u8) -> String {
    let mut parts = Vec::new();
    let mut rest = other;
    for (bit, name) in [
        (STO_CUDA_ENTRY, "ENTRY"),
        (STO_CUDA_GLOBAL, "GLOBAL"),
        (STO_CUDA_MANAGED, "MANAGED"),
        (STO_CUDA_SHARED, "SHARED"),
        (STO_CUDA_CONSTANT, "CONSTANT"),
    ] {
        if other & bit != 0 {
            parts.push(name.to_string());
            rest &= !bit;
        }
    }
    if rest != 0 || parts.is_empty() {
        parts.push(format!("{rest:#x}"));
    }
    parts.join("|")
}
