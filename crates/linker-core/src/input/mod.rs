//! Input containers, judged by content (never by file name).
//!
//! | kind | detected by | module |
//! |---|---|---|
//! | relocatable cubin | `\x7fELF`, `e_machine` = `EM_CUDA` (190) | [`crate::cubin`] |
//! | fatbinary | magic `0xBA55ED50` | [`fatbin`] |
//! | host object (`nvcc -dc`) | `\x7fELF`, any other `e_machine` | [`host`] |
//! | archive | `!<arch>\n` or `!<thin>\n` | [`archive`] |
//! | PTX | text holding `.version` and `.target` | [`ptx`] (external ptxas) |
//! | LTO IR (NVRTC, `nvcc -dlto --keep`'s `.ltoir`) | magic `0x7F4E43ED`, or LLVM bitcode | [`lto`] (`-dlto`, libnvJitLink) |
//!
//! The parsers borrow from the input bytes; only compressed fatbinary payloads
//! and ptxas output are new allocations. The link pipeline expands every input
//! into device images in `link/load.rs`.

pub mod archive;
pub mod fatbin;
pub mod host;
pub mod lto;
pub mod ptx;

/// What an input's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// A CUDA ELF file (`EM_CUDA`).
    CudaElf,
    /// An ELF file for a host machine (device code, if any, in an embedded fatbinary).
    HostElf,
    /// A fatbinary container.
    Fatbin,
    /// A static archive (regular or thin).
    Archive,
    /// PTX source text.
    Ptx,
    /// NVVM LTO IR (what NVRTC's `-dlto` and nvcc's `.ltoir` files hold).
    LtoIr,
    /// A zero-length file.
    Empty,
    /// None of the above.
    Unknown,
}

impl InputKind {
    /// A short description for messages ("a fatbinary", "PTX text", ...).
    pub fn describe(self) -> &'static str {
        match self {
            InputKind::CudaElf => "a CUDA ELF file",
            InputKind::HostElf => "a host ELF object",
            InputKind::Fatbin => "a fatbinary",
            InputKind::Archive => "an archive",
            InputKind::Ptx => "PTX text",
            InputKind::LtoIr => "LTO IR",
            InputKind::Empty => "an empty file",
            InputKind::Unknown => "not a recognised input format",
        }
    }
}

/// Decides what `data` is from its first bytes.
pub fn detect(data: &[u8]) -> InputKind {
    if data.is_empty() {
        InputKind::Empty
    } else if fatbin::is_fatbin(data) {
        InputKind::Fatbin
    } else if archive::is_archive(data) {
        InputKind::Archive
    } else if data.starts_with(b"\x7fELF") {
        if host::is_host_elf(data) {
            InputKind::HostElf
        } else {
            InputKind::CudaElf
        }
    } else if lto::is_lto_ir(data) {
        InputKind::LtoIr
    } else if ptx::looks_like_ptx(data) {
        InputKind::Ptx
    } else {
        InputKind::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection() {
        assert_eq!(detect(b""), InputKind::Empty);
        assert_eq!(detect(b"\x50\xed\x55\xba\x01\x00"), InputKind::Fatbin);
        assert_eq!(detect(b"!<arch>\n"), InputKind::Archive);
        assert_eq!(detect(b"!<thin>\n"), InputKind::Archive);
        let mut elf = vec![0u8; 64];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[18] = 190;
        assert_eq!(detect(&elf), InputKind::CudaElf);
        elf[18] = 62;
        assert_eq!(detect(&elf), InputKind::HostElf);
        assert_eq!(
            detect(b"//\n// Generated\n.version 9.0\n.target sm_90\n"),
            InputKind::Ptx
        );
        assert_eq!(detect(b"\xed\x43\x4e\x7f\x01"), InputKind::LtoIr);
        assert_eq!(detect(b"hello"), InputKind::Unknown);
        assert_eq!(detect(b"\x7fEL"), InputKind::Unknown);
    }
}
