//! The one error type of `linker_core`.
//!
//! Every failure carries as much context as the failing phase knows: the input
//! file, the section, the symbol and the byte offset. `Display` renders them
//! in linker style: `a.o: section '.text.k' offset 0x40: relocation symbol index 99 out of range`.

use std::fmt;

/// What kind of failure an [`Error`] is; callers (and the CLI's exit status) may branch on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// Reading or writing a file failed.
    Io,
    /// The input bytes are not a well-formed CUDA ELF (or container) file.
    Malformed,
    /// Well-formed input using a feature culink does not handle.
    Unsupported,
    /// Symbol resolution failed (undefined or multiply defined symbols, size mismatches).
    Symbol,
    /// Bad command line or options.
    Usage,
    /// The input is for another architecture than the link target.
    Arch,
    /// A value does not fit the field it must be written into, or a limit was exceeded.
    Overflow,
    /// PTX could not be compiled: no ptxas found, or ptxas failed on the input.
    Compile,
    /// Link-time optimization failed: NVIDIA's libnvJitLink could not be
    /// loaded, or it refused or failed on the LTO IR (its PTX output then
    /// goes to ptxas: a failure there is [`ErrorKind::Compile`]).
    Optimize,
}

/// An error with linker context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The class of failure.
    pub kind: ErrorKind,
    /// The input (or output) file concerned, as the user named it.
    pub file: Option<String>,
    /// The section concerned, by name (or `#index` when the name is unreadable).
    pub section: Option<String>,
    /// The symbol concerned.
    pub symbol: Option<String>,
    /// A byte offset: within `section` when one is set, else within `file`.
    pub offset: Option<u64>,
    /// What went wrong, in plain words.
    pub message: String,
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A new error of `kind` with a message and no context yet.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            file: None,
            section: None,
            symbol: None,
            offset: None,
            message: message.into(),
        }
    }
    /// Shorthand for a [`ErrorKind::Malformed`] error.
    pub fn malformed(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Malformed, message)
    }
    /// Shorthand for a [`ErrorKind::Usage`] error.
    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Usage, message)
    }
    /// Sets the file, unless one is already set (inner context wins).
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        if self.file.is_none() {
            self.file = Some(file.into());
        }
        self
    }
    /// Sets the section, unless one is already set.
    pub fn in_section(mut self, section: impl Into<String>) -> Self {
        if self.section.is_none() {
            self.section = Some(section.into());
        }
        self
    }
    /// Sets the symbol, unless one is already set.
    pub fn for_symbol(mut self, symbol: impl Into<String>) -> Self {
        if self.symbol.is_none() {
            self.symbol = Some(symbol.into());
        }
        self
    }
    /// Sets the offset, unless one is already set.
    pub fn at(mut self, offset: u64) -> Self {
        if self.offset.is_none() {
            self.offset = Some(offset);
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut ctx: Vec<String> = Vec::new();
        if let Some(file) = &self.file {
            ctx.push(file.clone());
        }
        let mut place: Vec<String> = Vec::new();
        if let Some(section) = &self.section {
            place.push(format!("section '{section}'"));
        }
        if let Some(offset) = self.offset {
            place.push(format!("offset {offset:#x}"));
        }
        if let Some(symbol) = &self.symbol {
            place.push(format!("symbol '{symbol}'"));
        }
        if !place.is_empty() {
            ctx.push(place.join(" "));
        }
        for c in ctx {
            write!(f, "{c}: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::new(ErrorKind::Io, e.to_string())
    }
}
