//! The zero-copy, validating reader of CUDA ELF files ("cubins").
//!
//! [`Cubin::parse`] checks everything a later phase relies on before anyone
//! looks at the data: the ELF identification (64-bit, little endian,
//! `EM_CUDA`), that every header table and section lies inside the file, that
//! names are in range, that symbol section indices and relocation symbol
//! indices and offsets are valid. After a successful parse, the accessors can
//! no longer fail, so the linker's hot loops need no error paths for them.
//! Nothing is copied: names and section contents borrow from the input bytes.
//!
//! The sub-formats inside sections have their own modules: [`eiattr`]
//! (`.nv.info*` and, with the same wire format, `.nv.compat`), [`compat`],
//! [`notes`] (`.note.nv.tkinfo`, `.note.nv.cuinfo`) and [`callgraph`]
//! (`.nv.callgraph`, `.nv.prototype`).

pub mod callgraph;
pub mod compat;
pub mod eiattr;
pub(crate) mod frame;
pub mod notes;

use crate::arch::SmArch;
use crate::elf::*;
use crate::error::{Error, Result};

/// Size of the ELF64 file header.
pub const EHDR_SIZE: usize = 64;
/// Size of one ELF64 section header.
pub const SHDR_SIZE: usize = 64;
/// Size of one ELF64 program header.
pub const PHDR_SIZE: usize = 56;
/// Size of one ELF64 symbol.
pub const SYM_SIZE: usize = 24;
/// Size of one ELF64 `Rel` entry.
pub const REL_SIZE: usize = 16;
/// Size of one ELF64 `Rela` entry.
pub const RELA_SIZE: usize = 24;

/// Little-endian field readers over a byte slice, bounds-checked.
pub(crate) mod le {
    /// Reads a `u16` at `off`, or `None` past the end.
    pub fn u16(d: &[u8], off: usize) -> Option<u16> {
        Some(u16::from_le_bytes(
            d.get(off..off.checked_add(2)?)?.try_into().ok()?,
        ))
    }
    /// Reads a `u32` at `off`, or `None` past the end.
    pub fn u32(d: &[u8], off: usize) -> Option<u32> {
        Some(u32::from_le_bytes(
            d.get(off..off.checked_add(4)?)?.try_into().ok()?,
        ))
    }
    /// Reads a `u64` at `off`, or `None` past the end.
    pub fn u64(d: &[u8], off: usize) -> Option<u64> {
        Some(u64::from_le_bytes(
            d.get(off..off.checked_add(8)?)?.try_into().ok()?,
        ))
    }
}

/// The ELF file header of a cubin, field by field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// `e_ident` (16 bytes).
    pub ident: [u8; 16],
    /// `e_type`: `ET_REL` (1) for `ptxas -c` output, `ET_EXEC` (2) for a linked cubin.
    pub e_type: u16,
    /// `e_machine`: always `EM_CUDA` (190) after validation.
    pub e_machine: u16,
    /// `e_version`.
    pub e_version: u32,
    /// `e_entry` (0 in cubins).
    pub e_entry: u64,
    /// `e_phoff`.
    pub e_phoff: u64,
    /// `e_shoff`.
    pub e_shoff: u64,
    /// `e_flags`: architecture and format bits; layout depends on [`Header::abi_version`].
    pub e_flags: u32,
    /// `e_ehsize`.
    pub e_ehsize: u16,
    /// `e_phentsize`.
    pub e_phentsize: u16,
    /// `e_phnum`.
    pub e_phnum: u16,
    /// `e_shentsize`.
    pub e_shentsize: u16,
    /// `e_shnum` as stored (0 with extended numbering).
    pub e_shnum: u16,
    /// `e_shstrndx` as stored.
    pub e_shstrndx: u16,
}

impl Header {
    /// `EI_OSABI` (0x41 for CUDA).
    pub fn osabi(&self) -> u8 {
        self.ident[7]
    }
    /// `EI_ABIVERSION`: 8 for CUDA 13 objects, 7 for CUDA 12 and older.
    pub fn abi_version(&self) -> u8 {
        self.ident[8]
    }
    /// The architecture recorded in `e_flags`.
    pub fn arch(&self) -> SmArch {
        SmArch::from_e_flags(self.abi_version(), self.e_flags)
    }
}

/// Whether sections of this type have no file contents: `SHT_NOBITS` and the
/// CUDA types that relocatable objects use instead of it (`.nv.global`,
/// `.nv.shared.*`, `.nv.local.*`, `.nv.shared.reserved.*`).
pub fn occupies_no_file_space(sh_type: u32) -> bool {
    matches!(
        sh_type,
        SHT_NOBITS | SHT_CUDA_GLOBAL | SHT_CUDA_SHARED | SHT_CUDA_LOCAL | SHT_CUDA_SHARED_RESERVED
    )
}

/// One section: its header fields, its name and (unless `SHT_NOBITS`) its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section<'data> {
    /// Index in the section header table.
    pub index: u32,
    /// Name from `.shstrtab`.
    pub name: &'data str,
    /// `sh_type`.
    pub sh_type: u32,
    /// `sh_flags`.
    pub flags: u64,
    /// `sh_offset`.
    pub offset: u64,
    /// `sh_size`.
    pub size: u64,
    /// `sh_link`.
    pub link: u32,
    /// `sh_info`.
    pub info: u32,
    /// `sh_addralign`.
    pub addralign: u64,
    /// `sh_entsize`.
    pub entsize: u64,
    /// Contents; empty for sections that occupy no file space and for `SHT_NULL`.
    pub data: &'data [u8],
}

/// Bits of a text section's `sh_flags` that hold its barrier count in objects
/// from CUDA 12.8 and earlier ([`Section::flag_barriers`]).
pub const TEXT_BARRIERS_MASK: u64 = 0x7f << TEXT_BARRIERS_SHIFT;
/// Shift of [`TEXT_BARRIERS_MASK`].
pub const TEXT_BARRIERS_SHIFT: u32 = 20;

impl Section<'_> {
    /// Whether the section occupies no file space (`SHT_NOBITS`, or the CUDA
    /// types that are NOBITS-like in relocatable objects: `.nv.global`, `.nv.shared.*`).
    pub fn is_nobits(&self) -> bool {
        occupies_no_file_space(self.sh_type)
    }
    /// Whether this is a `SHT_REL` or `SHT_RELA` section.
    pub fn is_reloc(&self) -> bool {
        self.sh_type == SHT_REL || self.sh_type == SHT_RELA
    }
    /// The number of named barriers ptxas before CUDA 13 (measured: 11.8
    /// through 12.8) keeps in bits 20-26 of a text section's `sh_flags`
    /// ([`TEXT_BARRIERS_MASK`]); CUDA 13 writes `EIATTR_NUM_BARRIERS` instead,
    /// which nvlink 13 turns the flag bits into. 0 for other sections.
    pub fn flag_barriers(&self) -> u8 {
        if self.flags & SHF_EXECINSTR == 0 {
            return 0;
        }
        ((self.flags & TEXT_BARRIERS_MASK) >> TEXT_BARRIERS_SHIFT) as u8
    }
    /// The section this one belongs to through `sh_info`: any section with
    /// `SHF_INFO_LINK`, and the per-function CUDA sections (`.nv.info.<fn>`,
    /// `.nv.constant0.<fn>`, `.nv.constant2.<fn>`, `.nv.shared.<fn>`) whose
    /// `sh_info` is not 0 — ptxas before CUDA 12.4 (measured: 11.8, 12.0, 12.2;
    /// 12.4 sets the flag) ties them to their text without the flag, and
    /// nvlink reads them as tied all the same.
    pub fn info_section(&self) -> Option<u32> {
        let per_function = matches!(
            self.sh_type,
            SHT_CUDA_INFO | SHT_CUDA_CONSTANT0 | SHT_CUDA_CONSTANT2 | SHT_CUDA_SHARED
        );
        (self.info != 0 && (self.flags & SHF_INFO_LINK != 0 || per_function)).then_some(self.info)
    }
}

/// One symbol of `.symtab`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Symbol<'data> {
    /// Name from the symbol string table.
    pub name: &'data str,
    /// `st_info` (binding in the high nibble, type in the low nibble).
    pub info: u8,
    /// `st_other` (CUDA uses it for entry/space flags).
    pub other: u8,
    /// `st_shndx` as stored (`SHN_XINDEX` when the index is extended).
    pub shndx: u16,
    /// The real section index when `shndx` cannot hold it (from `SHT_SYMTAB_SHNDX`
    /// for `SHN_XINDEX`, or nvlink's raw reserved-range indices in extended images), else 0.
    pub ext_shndx: u32,
    /// `st_value`.
    pub value: u64,
    /// `st_size`.
    pub size: u64,
}

impl Symbol<'_> {
    /// `STB_*` binding.
    pub fn bind(&self) -> u8 {
        self.info >> 4
    }
    /// `STT_*` type (CUDA variables use 13 in relocatable objects).
    pub fn ty(&self) -> u8 {
        self.info & 0xf
    }
    /// Whether the symbol is undefined (`SHN_UNDEF`).
    pub fn is_undefined(&self) -> bool {
        self.shndx == SHN_UNDEF
    }
    /// The defining section index, when the symbol is defined in a real section.
    pub fn section(&self) -> Option<u32> {
        if self.ext_shndx != 0 {
            return Some(self.ext_shndx);
        }
        (self.shndx != SHN_UNDEF && self.shndx < SHN_LORESERVE).then_some(u32::from(self.shndx))
    }
}

/// One relocation, from a `SHT_REL` or `SHT_RELA` section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reloc {
    /// `r_offset`: byte offset inside the target section.
    pub offset: u64,
    /// Relocation type (`ELF64_R_TYPE`), an R_CUDA code.
    pub rtype: u32,
    /// Symbol index (`ELF64_R_SYM`).
    pub sym: u32,
    /// `r_addend` (0 for `SHT_REL`).
    pub addend: i64,
    /// Whether it came from a `SHT_RELA` section.
    pub is_rela: bool,
}

/// One program header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProgramHeader {
    /// `p_type`.
    pub p_type: u32,
    /// `p_flags`.
    pub flags: u32,
    /// `p_offset`.
    pub offset: u64,
    /// `p_vaddr`.
    pub vaddr: u64,
    /// `p_paddr`.
    pub paddr: u64,
    /// `p_filesz`.
    pub filesz: u64,
    /// `p_memsz`.
    pub memsz: u64,
    /// `p_align`.
    pub align: u64,
}

/// A parsed, validated cubin borrowing its bytes.
#[derive(Debug, Clone)]
pub struct Cubin<'data> {
    /// The whole file.
    pub data: &'data [u8],
    /// The file header.
    pub header: Header,
    /// All sections, indexed by section index (index 0 is the null section).
    pub sections: Vec<Section<'data>>,
    /// The symbols of `.symtab` (index 0 is the null symbol); empty without one.
    pub symbols: Vec<Symbol<'data>>,
    /// Index of `.symtab`, if any.
    pub symtab: Option<u32>,
    /// The program headers.
    pub program_headers: Vec<ProgramHeader>,
}

fn cstr_at(table: &[u8], off: u32) -> Option<&[u8]> {
    let rest = table.get(off as usize..)?;
    // `CStr` finds the NUL a word at a time (a byte loop was 5% of a large link).
    std::ffi::CStr::from_bytes_until_nul(rest)
        .ok()
        .map(std::ffi::CStr::to_bytes)
}

/// A string table, checked as UTF-8 once as a whole when it is (then each
/// name needs only its NUL found; per-name validation was 5% of a large link).
struct Names<'d> {
    bytes: &'d [u8],
    text: Option<&'d str>,
}

impl<'d> Names<'d> {
    fn new(bytes: &'d [u8]) -> Self {
        Names {
            bytes,
            text: std::str::from_utf8(bytes).ok(),
        }
    }
    fn get(&self, off: u32, what: &str) -> Result<&'d str> {
        if let (Some(text), Some(bytes)) = (self.text, cstr_at(self.bytes, off)) {
            // A NUL is a character boundary; `off` may not be one (then the
            // per-name path reports the error).
            if let Some(name) = text.get(off as usize..off as usize + bytes.len()) {
                return Ok(name);
            }
        }
        name_at(self.bytes, off, what)
    }
}

/// The entries of a relocation section's bytes (`SHT_RELA` when `is_rela`).
fn decode_relocs(data: &[u8], is_rela: bool) -> impl Iterator<Item = Reloc> + '_ {
    let ent = if is_rela { RELA_SIZE } else { REL_SIZE };
    data.chunks_exact(ent).map(move |e| {
        let info = le::u64(e, 8).unwrap_or(0);
        Reloc {
            offset: le::u64(e, 0).unwrap_or(0),
            rtype: info as u32,
            sym: (info >> 32) as u32,
            addend: if is_rela {
                le::u64(e, 16).unwrap_or(0) as i64
            } else {
                0
            },
            is_rela,
        }
    })
}

fn name_at<'d>(table: &'d [u8], off: u32, what: &str) -> Result<&'d str> {
    let bytes = cstr_at(table, off).ok_or_else(|| {
        Error::malformed(format!(
            "{what} name offset {off:#x} is outside its string table (size {:#x}) or unterminated",
            table.len()
        ))
    })?;
    std::str::from_utf8(bytes)
        .map_err(|_| Error::malformed(format!("{what} name at {off:#x} is not valid UTF-8")))
}

impl<'data> Cubin<'data> {
    /// Parses and validates `data`. Errors carry the offending section/offset but
    /// not the file name; callers add it with [`Error::in_file`].
    pub fn parse(data: &'data [u8]) -> Result<Self> {
        let _span = tracing::trace_span!("parse_cubin", len = data.len()).entered();
        if data.len() < 4 || &data[..4] != b"\x7fELF" {
            return Err(Error::malformed("not an ELF file (bad magic)").at(0));
        }
        if data.len() < EHDR_SIZE {
            return Err(Error::malformed(format!(
                "truncated ELF header ({} bytes, need {EHDR_SIZE})",
                data.len()
            ))
            .at(0));
        }
        let mut ident = [0u8; 16];
        ident.copy_from_slice(&data[..16]);
        if ident[4] != 2 {
            return Err(Error::malformed(format!(
                "ELF class {} is not ELFCLASS64; cubins are 64-bit",
                ident[4]
            ))
            .at(4));
        }
        if ident[5] != 1 {
            return Err(Error::malformed(format!(
                "ELF data encoding {} is not little endian",
                ident[5]
            ))
            .at(5));
        }
        let r16 = |o| le::u16(data, o).unwrap_or(0);
        let r32 = |o| le::u32(data, o).unwrap_or(0);
        let r64 = |o| le::u64(data, o).unwrap_or(0);
        let header = Header {
            ident,
            e_type: r16(16),
            e_machine: r16(18),
            e_version: r32(20),
            e_entry: r64(24),
            e_phoff: r64(32),
            e_shoff: r64(40),
            e_flags: r32(48),
            e_ehsize: r16(52),
            e_phentsize: r16(54),
            e_phnum: r16(56),
            e_shentsize: r16(58),
            e_shnum: r16(60),
            e_shstrndx: r16(62),
        };
        if header.e_machine != EM_CUDA {
            return Err(Error::malformed(format!(
                "e_machine {} is not EM_CUDA ({EM_CUDA}); not a CUDA device object",
                header.e_machine
            ))
            .at(18));
        }
        let program_headers = Self::parse_phdrs(data, &header)?;
        let sections = Self::parse_sections(data, &header)?;
        let mut cubin = Cubin {
            data,
            header,
            sections,
            symbols: Vec::new(),
            symtab: None,
            program_headers,
        };
        cubin.parse_symbols()?;
        cubin.validate_relocs()?;
        Ok(cubin)
    }

    fn parse_phdrs(data: &[u8], h: &Header) -> Result<Vec<ProgramHeader>> {
        if h.e_phnum == 0 {
            return Ok(Vec::new());
        }
        if h.e_phentsize as usize != PHDR_SIZE {
            return Err(Error::malformed(format!(
                "e_phentsize {} is not {PHDR_SIZE}",
                h.e_phentsize
            ))
            .at(54));
        }
        let count = h.e_phnum as usize;
        let end = h
            .e_phoff
            .checked_add((count * PHDR_SIZE) as u64)
            .filter(|&e| e <= data.len() as u64)
            .ok_or_else(|| {
                Error::malformed(format!(
                    "program header table ({count} entries at {:#x}) extends past the end of the file ({:#x} bytes)",
                    h.e_phoff,
                    data.len()
                ))
                .at(32)
            })?;
        let table = &data[h.e_phoff as usize..end as usize];
        Ok(table
            .chunks_exact(PHDR_SIZE)
            .map(|p| ProgramHeader {
                p_type: le::u32(p, 0).unwrap_or(0),
                flags: le::u32(p, 4).unwrap_or(0),
                offset: le::u64(p, 8).unwrap_or(0),
                vaddr: le::u64(p, 16).unwrap_or(0),
                paddr: le::u64(p, 24).unwrap_or(0),
                filesz: le::u64(p, 32).unwrap_or(0),
                memsz: le::u64(p, 40).unwrap_or(0),
                align: le::u64(p, 48).unwrap_or(0),
            })
            .collect())
    }

    fn parse_sections(data: &'data [u8], h: &Header) -> Result<Vec<Section<'data>>> {
        if h.e_shoff == 0 {
            if h.e_shnum != 0 {
                return Err(Error::malformed("e_shnum is non-zero but e_shoff is 0").at(40));
            }
            return Ok(Vec::new());
        }
        if h.e_shentsize as usize != SHDR_SIZE {
            return Err(Error::malformed(format!(
                "e_shentsize {} is not {SHDR_SIZE}",
                h.e_shentsize
            ))
            .at(58));
        }
        let shoff = usize::try_from(h.e_shoff)
            .ok()
            .filter(|&o| o.checked_add(SHDR_SIZE).is_some_and(|e| e <= data.len()))
            .ok_or_else(|| {
                Error::malformed(format!(
                    "section header table offset {:#x} is outside the file ({:#x} bytes)",
                    h.e_shoff,
                    data.len()
                ))
                .at(40)
            })?;
        // Extended numbering: the real counts live in section 0.
        let mut count = h.e_shnum as u64;
        if count == 0 {
            count = le::u64(data, shoff + 32).unwrap_or(0);
        }
        let mut shstrndx = u32::from(h.e_shstrndx);
        if h.e_shstrndx == SHN_XINDEX {
            shstrndx = le::u32(data, shoff + 40).unwrap_or(0);
        }
        // Bound the count by the file size before allocating anything.
        let avail = ((data.len() - shoff) / SHDR_SIZE) as u64;
        if count > avail {
            return Err(Error::malformed(format!(
                "section header table claims {count} sections at {:#x}, but the file ({:#x} bytes) holds at most {avail}",
                h.e_shoff,
                data.len()
            ))
            .at(60));
        }
        let count = count as usize;
        let mut raw = Vec::with_capacity(count);
        for i in 0..count {
            let o = shoff + i * SHDR_SIZE;
            let s = &data[o..o + SHDR_SIZE];
            let rd32 = |k| le::u32(s, k).unwrap_or(0);
            let rd64 = |k| le::u64(s, k).unwrap_or(0);
            raw.push((
                rd32(0),
                rd32(4),
                rd64(8),
                rd64(16),
                rd64(24),
                rd64(32),
                rd32(40),
                rd32(44),
                rd64(48),
                rd64(56),
            ));
        }
        // Section contents.
        // `None`: the data lies outside the file (reported once names are known).
        let mut datas: Vec<Option<&'data [u8]>> = Vec::with_capacity(count);
        for (i, r) in raw.iter().enumerate() {
            let (_, ty, _, _, off, size, ..) = *r;
            if occupies_no_file_space(ty) || ty == SHT_NULL || i == 0 {
                datas.push(Some(&[]));
                continue;
            }
            let end = off.checked_add(size).filter(|&e| e <= data.len() as u64);
            datas.push(end.map(|end| &data[off as usize..end as usize]));
        }
        let out_of_file = |i: usize, name: String| {
            let (_, _, _, _, off, size, ..) = raw[i];
            Error::malformed(format!(
                "section #{i} data ({size:#x} bytes at {off:#x}) extends past the end of the file ({:#x} bytes)",
                data.len()
            ))
            .in_section(name)
        };
        if raw.first().is_some_and(|r| r.1 != SHT_NULL) {
            return Err(Error::malformed(format!(
                "section #0 has sh_type {:#x}; it must be SHT_NULL",
                raw[0].1
            ))
            .in_section("#0"));
        }
        let shstr: &[u8] = if count == 0 {
            &[]
        } else {
            let idx = shstrndx as usize;
            if idx == 0 || idx >= count {
                return Err(Error::malformed(format!(
                    "e_shstrndx {shstrndx} is not a valid section index (have {count})"
                ))
                .at(62));
            }
            if raw[idx].1 != SHT_STRTAB {
                return Err(Error::malformed(format!(
                    "section name table #{idx} is not SHT_STRTAB"
                ))
                .in_section(format!("#{idx}")));
            }
            datas[idx].ok_or_else(|| out_of_file(idx, format!("#{idx}")))?
        };
        let shstr_names = Names::new(shstr);
        let mut sections = Vec::with_capacity(count);
        for (i, r) in raw.iter().enumerate() {
            let (name_off, sh_type, flags, _addr, offset, size, link, info, addralign, entsize) =
                *r;
            let name = if i == 0 {
                ""
            } else {
                shstr_names
                    .get(name_off, "section")
                    .map_err(|e| e.in_section(format!("#{i}")))?
            };
            if link as usize >= count.max(1) {
                return Err(Error::malformed(format!(
                    "sh_link {link} is not a valid section index (have {count})"
                ))
                .in_section(name));
            }
            let Some(section_data) = datas[i] else {
                return Err(out_of_file(i, name.to_string()));
            };
            if addralign > 1 && !addralign.is_power_of_two() {
                return Err(Error::malformed(format!(
                    "sh_addralign {addralign:#x} is not a power of two"
                ))
                .in_section(name));
            }
            if addralign > 1 && !section_data.is_empty() && offset % addralign != 0 {
                return Err(Error::malformed(format!(
                    "section data at file offset {offset:#x} is not aligned to its sh_addralign {addralign:#x}"
                ))
                .in_section(name));
            }
            sections.push(Section {
                index: i as u32,
                name,
                sh_type,
                flags,
                offset,
                size,
                link,
                info,
                addralign,
                entsize,
                data: section_data,
            });
        }
        Self::check_overlaps(&sections)?;
        Ok(sections)
    }

    /// Rejects section contents that partially overlap one another or the
    /// header tables. Identical ranges are allowed (Blackwell cubins place
    /// `.nv.merc.nv.global.init` at the same offset as `.nv.global.init`).
    fn check_overlaps(sections: &[Section<'_>]) -> Result<()> {
        let mut ranges: Vec<(u64, u64, u32)> = sections
            .iter()
            .filter(|s| !s.data.is_empty())
            .map(|s| (s.offset, s.offset + s.size, s.index))
            .collect();
        ranges.sort_unstable();
        for w in ranges.windows(2) {
            let (a, b) = (w[0], w[1]);
            if b.0 < a.1 && !(a.0 == b.0 && a.1 == b.1) {
                let an = sections[a.2 as usize].name;
                let bn = sections[b.2 as usize].name;
                return Err(Error::malformed(format!(
                    "section data of '{bn}' ({:#x}..{:#x}) overlaps '{an}' ({:#x}..{:#x})",
                    b.0, b.1, a.0, a.1
                ))
                .in_section(bn));
            }
        }
        Ok(())
    }

    fn parse_symbols(&mut self) -> Result<()> {
        let Some(symtab) = self.sections.iter().find(|s| s.sh_type == SHT_SYMTAB) else {
            return Ok(());
        };
        let symtab = *symtab;
        if let Some(second) = self
            .sections
            .iter()
            .filter(|s| s.sh_type == SHT_SYMTAB)
            .nth(1)
        {
            return Err(
                Error::malformed("a second symbol table (only one is allowed)")
                    .in_section(second.name),
            );
        }
        if symtab.entsize as usize != SYM_SIZE || symtab.size % SYM_SIZE as u64 != 0 {
            return Err(Error::malformed(format!(
                "symbol table entsize {} / size {:#x} is not a whole number of {SYM_SIZE}-byte symbols",
                symtab.entsize, symtab.size
            ))
            .in_section(symtab.name));
        }
        let strtab = &self.sections[symtab.link as usize];
        if strtab.sh_type != SHT_STRTAB {
            return Err(Error::malformed(format!(
                "sh_link {} of the symbol table is not a string table",
                symtab.link
            ))
            .in_section(symtab.name));
        }
        let strdata = strtab.data;
        let nsec = self.sections.len();
        let extended = self.header.e_shnum == 0 && !self.sections.is_empty();
        let xindex = self
            .sections
            .iter()
            .find(|s| s.sh_type == SHT_SYMTAB_SHNDX && s.link == symtab.index)
            .map(|s| s.data);
        let names = Names::new(strdata);
        let mut symbols = Vec::with_capacity(symtab.data.len() / SYM_SIZE);
        for (i, e) in symtab.data.chunks_exact(SYM_SIZE).enumerate() {
            let name_offset = le::u32(e, 0).unwrap_or(0);
            let shndx = le::u16(e, 6).unwrap_or(0);
            let at = (i * SYM_SIZE) as u64;
            let name = names
                .get(name_offset, "symbol")
                .map_err(|err| err.in_section(symtab.name).at(at))?;
            let mut ext_shndx = 0u32;
            if shndx == SHN_XINDEX {
                // Extended section index: the real one is in SHT_SYMTAB_SHNDX.
                ext_shndx = xindex
                    .and_then(|t| le::u32(t, i * 4))
                    .ok_or_else(|| {
                        Error::malformed(format!(
                            "symbol #{i} uses SHN_XINDEX but no SHT_SYMTAB_SHNDX entry holds its section index"
                        ))
                        .in_section(symtab.name)
                        .for_symbol(name)
                        .at(at)
                    })?;
                if ext_shndx == 0 || ext_shndx as usize >= nsec {
                    return Err(Error::malformed(format!(
                        "symbol #{i} extended section index {ext_shndx} is out of range (have {nsec} sections)"
                    ))
                    .in_section(symtab.name)
                    .for_symbol(name)
                    .at(at));
                }
            }
            // In images that use extended numbering nvlink writes some
            // reserved-range indices raw (0xfff2 always, 0xff00 in
            // `.nv.merc.symtab`; see `link::symtab::encode_shndx`): in such a
            // file a reserved-range value that names a section is that section.
            if extended && (SHN_LORESERVE..SHN_XINDEX).contains(&shndx) && (shndx as usize) < nsec {
                ext_shndx = u32::from(shndx);
            }
            if shndx != SHN_UNDEF && shndx < SHN_LORESERVE && shndx as usize >= nsec {
                return Err(Error::malformed(format!(
                    "symbol #{i} section index {shndx} is out of range (have {nsec} sections)"
                ))
                .in_section(symtab.name)
                .for_symbol(name)
                .at(at));
            }
            symbols.push(Symbol {
                name,
                info: e[4],
                other: e[5],
                shndx,
                ext_shndx,
                value: le::u64(e, 8).unwrap_or(0),
                size: le::u64(e, 16).unwrap_or(0),
            });
        }
        self.symbols = symbols;
        self.symtab = Some(symtab.index);
        Ok(())
    }

    fn validate_relocs(&self) -> Result<()> {
        for s in self.sections.iter().filter(|s| s.is_reloc()) {
            let ent = if s.sh_type == SHT_RELA {
                RELA_SIZE
            } else {
                REL_SIZE
            };
            if s.size % ent as u64 != 0 || (s.entsize != 0 && s.entsize as usize != ent) {
                return Err(Error::malformed(format!(
                    "relocation section size {:#x} / entsize {} is not a whole number of {ent}-byte entries",
                    s.size, s.entsize
                ))
                .in_section(s.name));
            }
            if Some(s.link) != self.symtab {
                return Err(Error::malformed(format!(
                    "sh_link {} of a relocation section is not the symbol table",
                    s.link
                ))
                .in_section(s.name));
            }
            let target = self
                .sections
                .get(s.info as usize)
                .filter(|_| s.info != 0)
                .ok_or_else(|| {
                    Error::malformed(format!(
                        "sh_info {} of a relocation section is not a valid target section",
                        s.info
                    ))
                    .in_section(s.name)
                })?;
            let nsyms = self.symbols.len() as u32;
            for (i, r) in self.relocs_unchecked(s).enumerate() {
                let at = (i * ent) as u64;
                if r.sym >= nsyms {
                    return Err(Error::malformed(format!(
                        "relocation symbol index {} is out of range (have {nsyms} symbols)",
                        r.sym
                    ))
                    .in_section(s.name)
                    .at(at));
                }
                if r.offset >= target.size {
                    return Err(Error::malformed(format!(
                        "relocation offset {:#x} is beyond its target section '{}' (size {:#x})",
                        r.offset, target.name, target.size
                    ))
                    .in_section(s.name)
                    .at(at));
                }
            }
        }
        Ok(())
    }

    fn relocs_unchecked<'s>(&self, s: &'s Section<'data>) -> impl Iterator<Item = Reloc> + 's {
        decode_relocs(s.data, s.sh_type == SHT_RELA)
    }

    /// The relocations of a `SHT_REL`/`SHT_RELA` section (validated at parse time;
    /// any other section yields nothing).
    pub fn relocs<'s>(&self, section: &'s Section<'data>) -> impl Iterator<Item = Reloc> + 's {
        let data = if section.is_reloc() {
            section.data
        } else {
            &[]
        };
        decode_relocs(data, section.sh_type == SHT_RELA)
    }

    /// The architecture recorded in the header.
    pub fn arch(&self) -> SmArch {
        self.header.arch()
    }

    /// The first section with this name.
    pub fn section_by_name(&self, name: &str) -> Option<&Section<'data>> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// The section a symbol is defined in, if any.
    pub fn symbol_section(&self, sym: &Symbol<'_>) -> Option<&Section<'data>> {
        sym.section().and_then(|i| self.sections.get(i as usize))
    }

    /// Name of section `index`, or `#index` when out of range.
    pub fn section_name(&self, index: u32) -> String {
        self.sections
            .get(index as usize)
            .map(|s| s.name.to_string())
            .unwrap_or_else(|| format!("#{index}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_non_elf_and_truncation() {
        assert!(Cubin::parse(b"hello").is_err());
        assert!(Cubin::parse(b"\x7fELF\x02\x01").is_err());
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2;
        h[5] = 1;
        h[18] = 62; // EM_X86_64
        let e = Cubin::parse(&h).unwrap_err();
        assert!(e.message.contains("EM_CUDA"), "{e}");
        h[18] = EM_CUDA as u8;
        // Claim 60000 sections at offset 64: must fail without allocating them.
        h[40] = 64;
        h[58] = 64;
        h[60] = 0x60;
        h[61] = 0xea;
        let e = Cubin::parse(&h).unwrap_err();
        assert!(e.message.contains("section"), "{e}");
    }
}
