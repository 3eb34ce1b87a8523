//! A deterministic, structure-aware mutator for ELF/cubin bytes, driven by a
//! seeded PRNG (no coverage feedback): the engine of the stable-Rust driver.
//!
//! Besides blind byte/bit/word mutations it knows where the ELF header, the
//! section headers, the symbols and the relocation entries are, and writes
//! "interesting" values (0, 1, boundaries, the file size ± 1, `u32::MAX`, ...)
//! into their fields, so mutants get past the magic checks and reach the
//! deeper validation and the link phases.

/// xorshift64* — small, fast, reproducible from its seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (0 is replaced by a fixed non-zero constant).
    pub fn new(seed: u64) -> Self {
        Rng(if seed == 0 {
            0x9e37_79b9_7f4a_7c15
        } else {
            seed
        })
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// True with probability 1/`n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
}

fn rd(d: &[u8], off: usize, n: usize) -> Option<u64> {
    let b = d.get(off..off.checked_add(n)?)?;
    let mut v = 0u64;
    for (i, &x) in b.iter().enumerate() {
        v |= u64::from(x) << (8 * i);
    }
    Some(v)
}

fn wr(d: &mut [u8], off: usize, n: usize, v: u64) {
    if let Some(b) = off.checked_add(n).and_then(|e| d.get_mut(off..e)) {
        for (i, x) in b.iter_mut().enumerate() {
            *x = (v >> (8 * i)) as u8;
        }
    }
}

/// A boundary-ish value for a field of `n` bytes in a file of `len` bytes.
fn interesting(rng: &mut Rng, n: usize, len: usize, old: u64) -> u64 {
    let max = if n >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * n)) - 1
    };
    let v = match rng.below(16) {
        0 => 0,
        1 => 1,
        2 => old.wrapping_add(1),
        3 => old.wrapping_sub(1),
        4 => max,
        5 => max >> 1,
        6 => (max >> 1) + 1,
        7 => len as u64,
        8 => (len as u64).wrapping_sub(1),
        9 => len as u64 + 1,
        10 => 1 << rng.below(8 * n),
        11 => old.wrapping_add(rng.below(64) as u64).wrapping_sub(32),
        12 => old ^ (1 << rng.below(8 * n)),
        13 => [2u64, 3, 4, 7, 8, 16, 24, 64, 0x100, 0xff00, 0xfff0, 0xffff][rng.below(12)],
        14 => old.wrapping_mul(2),
        _ => rng.next_u64(),
    };
    v & max
}

/// Where the structures of an ELF64 file lie, as far as they can be read.
struct Layout {
    shoff: usize,
    shnum: usize,
    /// (file offset, size, entry size, sh_type) of each section with contents.
    sections: Vec<(usize, usize, usize, u32)>,
}

fn layout(d: &[u8]) -> Option<Layout> {
    let shoff = usize::try_from(rd(d, 40, 8)?).ok()?;
    let shnum = rd(d, 60, 2)? as usize;
    if shoff > d.len() {
        return None;
    }
    let mut sections = Vec::new();
    for i in 0..shnum.min(4096) {
        let o = shoff + i * 64;
        let ty = rd(d, o + 4, 4)? as u32;
        let off = rd(d, o + 24, 8)? as usize;
        let size = rd(d, o + 32, 8)? as usize;
        let ent = rd(d, o + 56, 8)? as usize;
        if off.checked_add(size).is_some_and(|e| e <= d.len()) && size > 0 {
            sections.push((off, size, ent, ty));
        }
    }
    Some(Layout {
        shoff,
        shnum,
        sections,
    })
}

/// Section header fields: (offset in the header, width).
const SHDR_FIELDS: &[(usize, usize)] = &[
    (0, 4),
    (4, 4),
    (8, 8),
    (16, 8),
    (24, 8),
    (32, 8),
    (40, 4),
    (44, 4),
    (48, 8),
    (56, 8),
];
/// ELF header fields after `e_ident`, plus the class/data/abi bytes.
const EHDR_FIELDS: &[(usize, usize)] = &[
    (4, 1),
    (5, 1),
    (7, 1),
    (8, 1),
    (16, 2),
    (18, 2),
    (32, 8),
    (40, 8),
    (48, 4),
    (54, 2),
    (56, 2),
    (58, 2),
    (60, 2),
    (62, 2),
];
/// Symbol fields.
const SYM_FIELDS: &[(usize, usize)] = &[(0, 4), (4, 1), (5, 1), (6, 2), (8, 8), (16, 8)];
/// Relocation fields (`r_offset`, type, symbol, addend).
const REL_FIELDS: &[(usize, usize)] = &[(0, 8), (8, 4), (12, 4), (16, 8)];

fn mutate_field(rng: &mut Rng, d: &mut [u8], base: usize, field: (usize, usize)) {
    let (fo, n) = field;
    let len = d.len();
    if let Some(old) = base.checked_add(fo).and_then(|o| rd(d, o, n)) {
        let v = interesting(rng, n, len, old);
        wr(d, base + fo, n, v);
    }
}

/// Applies one random mutation to `d`. `other` is another corpus entry to splice from.
pub fn mutate_once(rng: &mut Rng, d: &mut Vec<u8>, other: &[u8]) {
    if d.is_empty() {
        d.extend((0..1 + rng.below(64)).map(|_| rng.next_u64() as u8));
        return;
    }
    let len = d.len();
    // Fatbinary containers: a field of the container or first entry header
    // (sizes, kind, SM, compression flags, uncompressed size).
    if d.starts_with(&0xBA55_ED50u32.to_le_bytes()) && rng.one_in(3) {
        const FIELDS: &[(usize, usize)] = &[
            (4, 2),
            (6, 2),
            (8, 8),
            (16, 2),
            (20, 4),
            (24, 8),
            (32, 4),
            (44, 4),
            (56, 8),
            (72, 8),
        ];
        let f = FIELDS[rng.below(FIELDS.len())];
        if f == (56, 8) && rng.one_in(2) {
            // The compression flags: LZ4 or Zstandard.
            wr(d, 56, 8, [0x2000, 0x8000][rng.below(2)]);
        } else {
            mutate_field(rng, d, 0, f);
        }
        return;
    }
    match rng.below(14) {
        0 => {
            let i = rng.below(len);
            d[i] ^= 1 << rng.below(8);
        }
        1 => {
            let i = rng.below(len);
            d[i] = [0u8, 1, 0x7f, 0x80, 0xff, rng.next_u64() as u8][rng.below(6)];
        }
        2 => {
            let n = [2usize, 4, 8][rng.below(3)];
            let i = rng.below(len) & !(n - 1);
            let old = rd(d, i, n).unwrap_or(0);
            let v = interesting(rng, n, len, old);
            wr(d, i, n, v);
        }
        3 => d.truncate(rng.below(len)),
        4 => {
            // Remove or duplicate a range.
            let a = rng.below(len);
            let b = (a + 1 + rng.below(64)).min(len);
            if rng.one_in(2) {
                d.drain(a..b);
            } else {
                let chunk = d[a..b].to_vec();
                let at = rng.below(len);
                d.splice(at..at, chunk);
            }
        }
        5 if !other.is_empty() => {
            // Splice a range of another input over ours.
            let a = rng.below(other.len());
            let n = (1 + rng.below(256)).min(other.len() - a);
            let at = rng.below(len);
            let end = (at + n).min(len);
            d[at..end].copy_from_slice(&other[a..a + (end - at)]);
        }
        6 => {
            let f = EHDR_FIELDS[rng.below(EHDR_FIELDS.len())];
            mutate_field(rng, d, 0, f);
        }
        7 | 8 => {
            if let Some(l) = layout(d).filter(|l| l.shnum > 0) {
                let i = rng.below(l.shnum);
                let f = SHDR_FIELDS[rng.below(SHDR_FIELDS.len())];
                mutate_field(rng, d, l.shoff + i * 64, f);
            }
        }
        9 | 10 => {
            // A symbol or relocation entry field.
            if let Some(l) = layout(d) {
                let tables: Vec<_> = l
                    .sections
                    .iter()
                    .filter(|s| matches!(s.3, 2 | 4 | 9))
                    .collect();
                if !tables.is_empty() {
                    let &(off, size, _, ty) = tables[rng.below(tables.len())];
                    let (ent, fields) = match ty {
                        2 => (24, SYM_FIELDS),
                        4 => (24, REL_FIELDS),
                        _ => (16, &REL_FIELDS[..3]),
                    };
                    if size >= ent {
                        let k = rng.below(size / ent);
                        let f = fields[rng.below(fields.len())];
                        mutate_field(rng, d, off + k * ent, f);
                    }
                }
            }
        }
        _ => {
            // Inside one section's contents (EIATTR, notes, call graph, code, strings).
            if let Some(l) = layout(d).filter(|l| !l.sections.is_empty()) {
                let (off, size, _, _) = l.sections[rng.below(l.sections.len())];
                let i = off + rng.below(size);
                match rng.below(3) {
                    0 => d[i] ^= 1 << rng.below(8),
                    1 => d[i] = [0u8, 1, 2, 3, 4, 0x7f, 0x80, 0xff][rng.below(8)],
                    _ => {
                        let n = [2usize, 4][rng.below(2)];
                        let i = off + (rng.below(size) & !(n - 1));
                        if i + n <= off + size {
                            let old = rd(d, i, n).unwrap_or(0);
                            let v = interesting(rng, n, len, old);
                            wr(d, i, n, v);
                        }
                    }
                }
            }
        }
    }
}

/// Applies 1 to 4 stacked mutations.
pub fn mutate(rng: &mut Rng, d: &mut Vec<u8>, other: &[u8]) {
    let n = 1 + rng.below(4);
    for _ in 0..n {
        mutate_once(rng, d, other);
    }
}
