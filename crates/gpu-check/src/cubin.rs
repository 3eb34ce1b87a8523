//! The `__device__`, `__constant__` and `__managed__` variables a cubin defines:
//! the globals gpu-check reads with `cuModuleGetGlobal`.

use object::elf;
use object::read::elf::{FileHeader, SectionHeader};

/// Names of the defined `STT_OBJECT` symbols in `.nv.global*`, `.nv.constant*`
/// (except the per-kernel parameter banks `.nv.constant0.*`) and `.nv.managed*`
/// sections, sorted. Names defined more than once (same-named locals of
/// different objects, e.g. nvcc's `$str`) are left out: which one
/// `cuModuleGetGlobal` returns depends on symbol order, which may legitimately
/// differ between the two linkers.
pub fn globals(image: &[u8]) -> Result<Vec<String>, String> {
    let err = |e: object::read::Error| format!("cannot read cubin: {e}");
    let hdr = elf::FileHeader64::<object::Endianness>::parse(image).map_err(err)?;
    let endian = hdr.endian().map_err(err)?;
    let sections = hdr.sections(endian, image).map_err(err)?;
    let symbols = sections
        .symbols(endian, image, elf::SHT_SYMTAB)
        .map_err(err)?;
    let mut names = Vec::new();
    for (i, sym) in symbols.iter().enumerate() {
        if sym.st_type() != elf::STT_OBJECT {
            continue;
        }
        let Ok(Some(idx)) = symbols.symbol_section(endian, sym, object::SymbolIndex(i)) else {
            continue;
        };
        let Ok(sec) = sections.section(idx) else {
            continue;
        };
        let Ok(sname) = sections.section_name(endian, sec) else {
            continue;
        };
        let sname = String::from_utf8_lossy(sname);
        let wanted = sname.starts_with(".nv.global")
            || sname.starts_with(".nv.managed")
            || (sname.starts_with(".nv.constant") && !sname.starts_with(".nv.constant0"));
        if !wanted {
            continue;
        }
        let Ok(name) = symbols.symbol_name(endian, sym) else {
            continue;
        };
        if name.is_empty() {
            continue;
        }
        names.push(String::from_utf8_lossy(name).into_owned());
    }
    names.sort();
    let mut unique = Vec::with_capacity(names.len());
    let mut i = 0;
    while i < names.len() {
        let j = names[i..].iter().take_while(|n| **n == names[i]).count();
        if j == 1 {
            unique.push(names[i].clone());
        }
        i += j;
    }
    Ok(unique)
}

/// Names of the kernels a cubin defines (every kernel has its parameter bank
/// `.nv.constant0.<kernel>`); used to check launch files without a GPU.
pub fn kernels(image: &[u8]) -> Result<Vec<String>, String> {
    let err = |e: object::read::Error| format!("cannot read cubin: {e}");
    let hdr = elf::FileHeader64::<object::Endianness>::parse(image).map_err(err)?;
    let endian = hdr.endian().map_err(err)?;
    let sections = hdr.sections(endian, image).map_err(err)?;
    let mut names = Vec::new();
    for sec in sections.iter() {
        let Ok(n) = sections.section_name(endian, sec) else {
            continue;
        };
        // Every kernel has its parameter bank `.nv.constant0.<kernel>`.
        if let Some(k) = n.strip_prefix(b".nv.constant0.") {
            names.push(String::from_utf8_lossy(k).into_owned());
        }
    }
    names.sort();
    names.dedup();
    Ok(names)
}

/// `EIATTR_KPARAM_INFO`.
const EIATTR_KPARAM_INFO: u8 = 0x17;
/// `EIFMT_SVAL`: a record with a 16-bit length and a payload.
const EIFMT_SVAL: u8 = 0x04;
/// `EIFMT_HVAL`: a record with a 16-bit value and no payload.
const EIFMT_HVAL: u8 = 0x03;
/// `EIFMT_NVAL`: a record with no value (two padding bytes).
const EIFMT_NVAL: u8 = 0x01;
/// `EIFMT_BVAL`: a record with an 8-bit value (and a padding byte).
const EIFMT_BVAL: u8 = 0x02;

/// The parameter sizes of `kernel`, in parameter order, from the
/// `EIATTR_KPARAM_INFO` records of its `.nv.info.<kernel>` section (payload:
/// index u32, ordinal u16, offset u16, flags u32 whose bits 18..31 are the size).
/// `None` when the cubin has no such section.
pub fn kernel_params(image: &[u8], kernel: &str) -> Result<Option<Vec<u32>>, String> {
    let err = |e: object::read::Error| format!("cannot read cubin: {e}");
    let hdr = elf::FileHeader64::<object::Endianness>::parse(image).map_err(err)?;
    let endian = hdr.endian().map_err(err)?;
    let sections = hdr.sections(endian, image).map_err(err)?;
    let want = format!(".nv.info.{kernel}");
    let Some(sec) = sections.iter().find(|s| {
        sections
            .section_name(endian, s)
            .is_ok_and(|n| n == want.as_bytes())
    }) else {
        return Ok(None);
    };
    let data = sec.data(endian, image).map_err(err)?;
    let mut params: Vec<(u16, u32)> = Vec::new();
    let mut off = 0;
    while off + 4 <= data.len() {
        let (fmt, attr) = (data[off], data[off + 1]);
        let val = u16::from_le_bytes([data[off + 2], data[off + 3]]) as usize;
        off += 4;
        match fmt {
            EIFMT_SVAL => {
                let payload = data
                    .get(off..off + val)
                    .ok_or_else(|| format!("{want}: record runs past the section"))?;
                if attr == EIATTR_KPARAM_INFO && payload.len() >= 12 {
                    let ordinal = u16::from_le_bytes([payload[4], payload[5]]);
                    let flags =
                        u32::from_le_bytes([payload[8], payload[9], payload[10], payload[11]]);
                    params.push((ordinal, (flags >> 18) & 0x3fff));
                }
                off += val;
            }
            EIFMT_NVAL | EIFMT_BVAL | EIFMT_HVAL => {}
            _ => return Err(format!("{want}: unknown record format 0x{fmt:02x}")),
        }
    }
    params.sort();
    Ok(Some(params.into_iter().map(|(_, s)| s).collect()))
}
