//! Static archives: GNU/SysV `!<arch>\n` (with the `//` long-name table and the
//! `/` or `/SYM64/` symbol index, which is skipped), BSD `#1/len` names, and thin
//! archives `!<thin>\n` whose members are files named relative to the archive.
//!
//! Parsing borrows every name and member from the archive bytes; the linker
//! judges each member's content itself (members may be cubins, host objects or
//! fatbinaries).

use crate::error::{Error, Result};

/// The magic of a regular archive.
pub const AR_MAGIC: &[u8; 8] = b"!<arch>\n";
/// The magic of a thin archive.
pub const THIN_MAGIC: &[u8; 8] = b"!<thin>\n";
const HEADER: usize = 60;

/// Where a member's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemberData<'d> {
    /// Inside the archive.
    Inline(&'d [u8]),
    /// In another file (thin archive): the path as recorded, relative to the
    /// archive's directory unless absolute.
    External(&'d str),
}

/// One archive member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member<'d> {
    /// The member name (GNU trailing `/` removed).
    pub name: &'d str,
    /// Offset of the member's 60-byte header in the archive.
    pub offset: usize,
    /// Its bytes.
    pub data: MemberData<'d>,
}

/// A parsed archive.
#[derive(Debug, Clone)]
pub struct Archive<'d> {
    /// Whether it is a thin archive.
    pub thin: bool,
    /// The members (symbol index and name table excluded), in order.
    pub members: Vec<Member<'d>>,
}

/// Whether `data` starts like an archive (regular or thin).
pub fn is_archive(data: &[u8]) -> bool {
    data.starts_with(AR_MAGIC) || data.starts_with(THIN_MAGIC)
}

fn field(h: &[u8], from: usize, len: usize) -> &str {
    std::str::from_utf8(&h[from..from + len])
        .unwrap_or("")
        .trim_end()
}

impl<'d> Archive<'d> {
    /// Parses an archive. Errors are malformed-input errors with the offset of
    /// the bad member header.
    pub fn parse(data: &'d [u8]) -> Result<Archive<'d>> {
        let _span = tracing::debug_span!("archive_parse", len = data.len()).entered();
        let thin = if data.starts_with(AR_MAGIC) {
            false
        } else if data.starts_with(THIN_MAGIC) {
            true
        } else {
            return Err(Error::malformed("not an archive (bad magic)"));
        };
        let mut members = Vec::new();
        let mut names: &[u8] = &[];
        let mut pos = 8usize;
        while pos < data.len() {
            if data.len() - pos == 1 && data[pos] == b'\n' {
                break; // padding after an odd-sized last member
            }
            let at = pos as u64;
            let h = data.get(pos..pos + HEADER).ok_or_else(|| {
                Error::malformed(format!(
                    "archive member header truncated ({} of {HEADER} bytes)",
                    data.len() - pos
                ))
                .at(at)
            })?;
            if &h[58..60] != b"`\n" {
                return Err(Error::malformed("archive member header has a bad terminator").at(at));
            }
            let raw_name = field(h, 0, 16);
            let size_text = field(h, 48, 10);
            let size: usize = size_text.parse().map_err(|_| {
                Error::malformed(format!("archive member size '{size_text}' is not a number"))
                    .at(at)
            })?;
            let body = pos + HEADER;
            let special = raw_name == "/" || raw_name == "//" || raw_name == "/SYM64/";
            // Thin archives store only the symbol index and the name table inline.
            let stored = if thin && !special { 0 } else { size };
            let end = body
                .checked_add(stored)
                .filter(|&e| e <= data.len())
                .ok_or_else(|| {
                    Error::malformed(format!(
                        "archive member size {size} runs past the end of the archive"
                    ))
                    .at(at)
                })?;
            let mut content = &data[body..end];
            let name: &'d str = if raw_name == "//" {
                names = content;
                pos = end + (end & 1);
                continue;
            } else if special {
                pos = end + (end & 1);
                continue;
            } else if let Some(idx) = raw_name.strip_prefix('/') {
                let idx: usize = idx.parse().map_err(|_| {
                    Error::malformed(format!("archive member name '{raw_name}' is not valid"))
                        .at(at)
                })?;
                let rest = names.get(idx..).ok_or_else(|| {
                    Error::malformed(format!(
                        "archive long name offset {idx} is outside the name table"
                    ))
                    .at(at)
                })?;
                let len = rest
                    .iter()
                    .position(|&b| b == b'\n' || b == 0)
                    .unwrap_or(rest.len());
                let n = std::str::from_utf8(&rest[..len]).map_err(|_| {
                    Error::malformed("archive long member name is not UTF-8").at(at)
                })?;
                n.strip_suffix('/').unwrap_or(n)
            } else if let Some(len) = raw_name.strip_prefix("#1/") {
                // BSD: the name is the first `len` bytes of the member data.
                let len: usize = len
                    .parse()
                    .ok()
                    .filter(|&l| l <= content.len())
                    .ok_or_else(|| {
                        Error::malformed(format!("archive member name '{raw_name}' is not valid"))
                            .at(at)
                    })?;
                let n = std::str::from_utf8(&content[..len])
                    .map_err(|_| Error::malformed("archive member name is not UTF-8").at(at))?
                    .trim_end_matches('\0');
                content = &content[len..];
                n
            } else {
                let n = std::str::from_utf8(&h[..16])
                    .map_err(|_| Error::malformed("archive member name is not UTF-8").at(at))?
                    .trim_end();
                n.strip_suffix('/').unwrap_or(n)
            };
            if name.is_empty() {
                return Err(Error::malformed("archive member has an empty name").at(at));
            }
            // Skip the BSD symbol index.
            if name != "__.SYMDEF" && name != "__.SYMDEF SORTED" {
                members.push(Member {
                    name,
                    offset: pos,
                    data: if thin {
                        MemberData::External(name)
                    } else {
                        MemberData::Inline(content)
                    },
                });
            }
            pos = end + (end & 1);
        }
        Ok(Archive { thin, members })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn header(name: &str, size: usize) -> Vec<u8> {
        let h = format!("{name:<16}{:<12}{:<6}{:<6}{:<8}{size:<10}`\n", 0, 0, 0, 644);
        assert_eq!(h.len(), HEADER);
        h.into_bytes()
    }

    /// A GNU archive of `members` (long names go to the `//` table).
    pub(crate) fn build(members: &[(&str, &[u8])], thin: bool) -> Vec<u8> {
        let mut table = Vec::new();
        let mut refs = Vec::new();
        for (name, _) in members {
            if name.len() > 15 || thin {
                refs.push(format!("/{}", table.len()));
                table.extend_from_slice(name.as_bytes());
                table.extend_from_slice(b"/\n");
            } else {
                refs.push(format!("{name}/"));
            }
        }
        let mut out = if thin {
            THIN_MAGIC.to_vec()
        } else {
            AR_MAGIC.to_vec()
        };
        // An empty symbol index, as `ar rcs` writes for objects without symbols.
        out.extend(header("/", 4));
        out.extend_from_slice(&[0; 4]);
        if !table.is_empty() {
            out.extend(header("//", table.len()));
            out.extend_from_slice(&table);
            if out.len() % 2 == 1 {
                out.push(b'\n');
            }
        }
        for ((_, data), r) in members.iter().zip(&refs) {
            out.extend(header(r, data.len()));
            if !thin {
                out.extend_from_slice(data);
                if out.len() % 2 == 1 {
                    out.push(b'\n');
                }
            }
        }
        out
    }

    #[test]
    fn gnu_and_thin() {
        let a = build(
            &[("a.o", b"AAA"), ("a_very_long_member_name.o", b"BBBB")],
            false,
        );
        let ar = Archive::parse(&a).unwrap();
        assert!(!ar.thin);
        assert_eq!(ar.members.len(), 2);
        assert_eq!(ar.members[0].name, "a.o");
        assert_eq!(ar.members[0].data, MemberData::Inline(b"AAA"));
        assert_eq!(ar.members[1].name, "a_very_long_member_name.o");
        assert_eq!(ar.members[1].data, MemberData::Inline(b"BBBB"));
        let t = build(&[("sub/x.o", b"XX"), ("y.o", b"Y")], true);
        let ar = Archive::parse(&t).unwrap();
        assert!(ar.thin);
        assert_eq!(ar.members[0].data, MemberData::External("sub/x.o"));
        assert_eq!(ar.members[1].name, "y.o");
        // BSD names.
        let mut b = AR_MAGIC.to_vec();
        b.extend(header("#1/8", 8 + 3));
        b.extend_from_slice(b"bsd.o\0\0\0ZZZ");
        let ar = Archive::parse(&b).unwrap();
        assert_eq!(ar.members[0].name, "bsd.o");
        assert_eq!(ar.members[0].data, MemberData::Inline(b"ZZZ"));
        assert!(Archive::parse(AR_MAGIC).unwrap().members.is_empty());
    }

    #[test]
    fn malformed() {
        let a = build(
            &[("a.o", b"AAA"), ("a_very_long_member_name.o", b"BBBB")],
            false,
        );
        let err = |d: &[u8]| Archive::parse(d).unwrap_err();
        assert!(err(b"!<arc>\n").message.contains("magic"));
        // Truncated member data.
        let e = err(&a[..a.len() - 2]);
        assert!(e.message.contains("runs past the end"), "{e}");
        // Truncated header.
        assert!(err(&a[..8 + 30]).message.contains("header truncated"));
        // Bad size field.
        let mut d = AR_MAGIC.to_vec();
        d.extend(header("x.o/", 1));
        d[8 + 48] = b'z';
        let e = err(&d);
        assert!(e.message.contains("not a number"));
        assert_eq!(e.offset, Some(8));
        // Long-name offset outside the table.
        let mut d = AR_MAGIC.to_vec();
        d.extend(header("/999", 0));
        assert!(err(&d).message.contains("outside the name table"));
        // Bad terminator.
        let mut d = AR_MAGIC.to_vec();
        d.extend(header("x.o/", 0));
        d[8 + 58] = b'!';
        assert!(err(&d).message.contains("terminator"));
        for n in 0..a.len() {
            let _ = Archive::parse(&a[..n]);
        }
        for i in 0..a.len() {
            let mut d = a.clone();
            d[i] ^= 0x5a;
            let _ = Archive::parse(&d);
        }
    }
}
