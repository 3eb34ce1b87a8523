//! The `__device__`, `__constant__` and `__managed__` variables a cubin defines:
//! the globals gpu-check reads with `cuModuleGetGlobal`.

use object::elf;
use object::read::elf::FileHeader;

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
