//! `.nv.callgraph` (`SHT_CUDA_CALLGRAPH`, entsize 8) and `.nv.prototype`
//! (`SHT_CUDA_PROTOTYPE`, entsize 8).
//!
//! # `.nv.callgraph`
//!
//! A sequence of `u32, u32` pairs. A pair `<0, -n>` (second word `0xffffffff`,
//! `0xfffffffe`, ...) opens list `n`; the pairs after it, up to the next marker,
//! belong to that list. ptxas and nvlink always write the four markers in order,
//! even when a list is empty. `cuobjdump -elf` prints each pair as `<a,b>` (second
//! word signed): `<0,-1> <9,11> <0,-2> <0,-3> <0,-4>`.
//!
//! | list | pairs | established by |
//! |---|---|---|
//! | 1 | `<caller sym, callee sym>`: direct calls | every object with a call |
//! | 2 | `<function sym, prototype>`: address-taken functions (possible indirect-call targets) | loc_90: `lf`, whose address is stored in a global |
//! | 3 | `<function sym, prototype>`: functions making an indirect call through that prototype | loc_90: kernel `kloc` calls through `.callprototype` |
//! | 4 | `<function sym, function sym>`: the first takes the address of the second | loc_90: `kloc` does `mov.u64 %rd, lf` |
//!
//! The prototype word in lists 2 and 3 was 1 in every sample, which is both the
//! first prototype and the `.strtab` offset of its signature string (see below), so
//! which of the two it is remains unsettled. Symbol words are renumbered by nvlink.
//!
//! # `.nv.prototype`
//!
//! `u32 symbol index, u32 .strtab offset` pairs: an external or called function
//! and the `.strtab` offset of its signature string (`"#ii"` = int(int),
//! `"#il"` = int(long)). cuobjdump prints `<11,1(#ii)>`.

use std::fmt;

use crate::error::{Error, ErrorKind, Result};

use super::eiattr::le32;

/// A call-graph list number (the `n` of a `<0,-n>` marker).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallGraphList(pub u32);

impl CallGraphList {
    /// List 1: direct call edges `<caller, callee>`.
    pub const CALLS: CallGraphList = CallGraphList(1);
    /// List 2: address-taken functions `<function, prototype>`.
    pub const ADDRESS_TAKEN: CallGraphList = CallGraphList(2);
    /// List 3: indirect call sites `<caller, prototype>`.
    pub const INDIRECT_CALLS: CallGraphList = CallGraphList(3);
    /// List 4: address references `<function, referenced function>`.
    pub const ADDRESS_REFS: CallGraphList = CallGraphList(4);

    /// A descriptive name, `None` for unknown lists.
    pub fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            1 => "CALLS",
            2 => "ADDRESS_TAKEN",
            3 => "INDIRECT_CALLS",
            4 => "ADDRESS_REFS",
            _ => return None,
        })
    }
}

impl fmt::Display for CallGraphList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "Unknown(0x{:x})", self.0),
        }
    }
}

/// One 8-byte `.nv.callgraph` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallGraphEntry {
    /// `<0, -n>`: opens list `n`.
    Marker(CallGraphList),
    /// Any other pair.
    Pair {
        /// First word (a symbol index).
        first: u32,
        /// Second word (a symbol index or prototype, by list).
        second: u32,
    },
}

impl CallGraphEntry {
    /// Decodes one entry from its two words.
    pub fn from_words(first: u32, second: u32) -> Self {
        if first == 0 && (second as i32) < 0 {
            CallGraphEntry::Marker(CallGraphList(second.wrapping_neg()))
        } else {
            CallGraphEntry::Pair { first, second }
        }
    }

    /// The two words.
    pub fn words(self) -> (u32, u32) {
        match self {
            CallGraphEntry::Marker(l) => (0, l.0.wrapping_neg()),
            CallGraphEntry::Pair { first, second } => (first, second),
        }
    }
}

fn pairs(bytes: &[u8], what: &str) -> Result<Vec<(u32, u32)>> {
    if bytes.len() & 7 != 0 {
        let off = bytes.len() / 8 * 8;
        return Err(Error::malformed(format!(
            "{what}: {} trailing bytes after the last 8-byte entry",
            bytes.len() - off
        ))
        .at(off as u64));
    }
    Ok((0..bytes.len() / 8)
        .map(|i| {
            (
                le32(bytes, i * 8).unwrap_or(0),
                le32(bytes, i * 8 + 4).unwrap_or(0),
            )
        })
        .collect())
}

/// Parses a `.nv.callgraph` section into its raw entries.
pub fn parse_callgraph(bytes: &[u8]) -> Result<Vec<CallGraphEntry>> {
    Ok(pairs(bytes, ".nv.callgraph")?
        .into_iter()
        .map(|(a, b)| CallGraphEntry::from_words(a, b))
        .collect())
}

/// Appends the encoding of raw entries to `out` (byte-exact inverse of [`parse_callgraph`]).
pub fn encode_callgraph(entries: &[CallGraphEntry], out: &mut Vec<u8>) {
    for e in entries {
        let (a, b) = e.words();
        out.extend_from_slice(&a.to_le_bytes());
        out.extend_from_slice(&b.to_le_bytes());
    }
}

/// A direct call edge (symbol indices).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallEdge {
    /// The calling function.
    pub caller: u32,
    /// The called function.
    pub callee: u32,
}

/// A `.nv.callgraph` grouped by list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct CallGraph {
    /// List 1: direct calls.
    pub calls: Vec<CallEdge>,
    /// List 2: `(function symbol, prototype)` of address-taken functions.
    pub address_taken: Vec<(u32, u32)>,
    /// List 3: `(calling function symbol, prototype)` of indirect call sites.
    pub indirect_calls: Vec<(u32, u32)>,
    /// List 4: `(function symbol, referenced function symbol)`.
    pub address_refs: Vec<(u32, u32)>,
}

impl CallGraph {
    /// Parses a `.nv.callgraph` section.
    ///
    /// Fails when a pair precedes the first marker ([`ErrorKind::Malformed`]) or a
    /// marker names a list other than 1..=4 ([`ErrorKind::Unsupported`]).
    pub fn parse(bytes: &[u8]) -> Result<CallGraph> {
        let mut g = CallGraph::default();
        let mut list = None;
        for (i, e) in parse_callgraph(bytes)?.into_iter().enumerate() {
            let off = (i * 8) as u64;
            match e {
                CallGraphEntry::Marker(l) => {
                    if l.name().is_none() {
                        return Err(Error::new(
                            ErrorKind::Unsupported,
                            format!(".nv.callgraph: unknown list marker <0,-{}>", l.0),
                        )
                        .at(off));
                    }
                    list = Some(l);
                }
                CallGraphEntry::Pair { first, second } => match list {
                    Some(CallGraphList::CALLS) => g.calls.push(CallEdge {
                        caller: first,
                        callee: second,
                    }),
                    Some(CallGraphList::ADDRESS_TAKEN) => g.address_taken.push((first, second)),
                    Some(CallGraphList::INDIRECT_CALLS) => g.indirect_calls.push((first, second)),
                    Some(_) => g.address_refs.push((first, second)),
                    None => {
                        return Err(Error::malformed(
                            ".nv.callgraph: entry before the first list marker",
                        )
                        .at(off))
                    }
                },
            }
        }
        Ok(g)
    }

    /// The raw entries in the layout ptxas and nvlink write: each of the four
    /// markers, in order, followed by its list.
    pub fn to_entries(&self) -> Vec<CallGraphEntry> {
        let mut v = Vec::with_capacity(
            4 + self.calls.len()
                + self.address_taken.len()
                + self.indirect_calls.len()
                + self.address_refs.len(),
        );
        let pair = |(first, second): (u32, u32)| CallGraphEntry::Pair { first, second };
        v.push(CallGraphEntry::Marker(CallGraphList::CALLS));
        v.extend(self.calls.iter().map(|e| pair((e.caller, e.callee))));
        v.push(CallGraphEntry::Marker(CallGraphList::ADDRESS_TAKEN));
        v.extend(self.address_taken.iter().copied().map(pair));
        v.push(CallGraphEntry::Marker(CallGraphList::INDIRECT_CALLS));
        v.extend(self.indirect_calls.iter().copied().map(pair));
        v.push(CallGraphEntry::Marker(CallGraphList::ADDRESS_REFS));
        v.extend(self.address_refs.iter().copied().map(pair));
        v
    }

    /// Appends the section encoding to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        encode_callgraph(&self.to_entries(), out)
    }
}

/// One `.nv.prototype` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PrototypeEntry {
    /// Symbol index of the function.
    pub symbol: u32,
    /// `.strtab` offset of the signature string (e.g. `"#ii"`).
    pub signature: u32,
}

/// Parses a `.nv.prototype` section.
pub fn parse_prototypes(bytes: &[u8]) -> Result<Vec<PrototypeEntry>> {
    Ok(pairs(bytes, ".nv.prototype")?
        .into_iter()
        .map(|(symbol, signature)| PrototypeEntry { symbol, signature })
        .collect())
}

/// Appends the encoding of `.nv.prototype` entries to `out`.
pub fn encode_prototypes(entries: &[PrototypeEntry], out: &mut Vec<u8>) {
    for e in entries {
        out.extend_from_slice(&e.symbol.to_le_bytes());
        out.extend_from_slice(&e.signature.to_le_bytes());
    }
}
