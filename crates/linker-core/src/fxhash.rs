//! A small, fast, non-cryptographic hasher for the linker's internal maps.
//!
//! `std`'s default SipHash-1-3 with a random key was 3–4% of a 2000-object link
//! (`perf report`: `sip::Hasher::write`, `hash_one`), hashing symbol names and
//! small integer keys. This is the "Fx" hash of Firefox and rustc (one
//! multiply-rotate per word), written here in a few lines instead of adding a
//! crate. It is deterministic (no random seed); no output order depends on map
//! iteration order either way (the link is byte-identical for every thread
//! count and run). Like every unkeyed hash it can be driven into collisions by
//! crafted inputs, which costs time, never correctness; a linker's inputs are the
//! user's own objects.

use std::hash::{BuildHasherDefault, Hasher};

/// `HashMap` with [`FxHasher`]; build with `HashMap::default()`.
pub(crate) type HashMap<K, V> = std::collections::HashMap<K, V, FxBuild>;
/// `HashSet` with [`FxHasher`]; build with `HashSet::default()`.
pub(crate) type HashSet<K> = std::collections::HashSet<K, FxBuild>;
/// The `BuildHasher` of [`FxHasher`].
pub(crate) type FxBuild = BuildHasherDefault<FxHasher>;

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// The Fx hasher: `h = (h.rotl(5) ^ word) * SEED` per machine word.
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher {
    hash: u64,
}

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 56));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    /// The final rotation moves the well-mixed high bits of the last multiply
    /// down to where `hashbrown` takes the bucket index: a product's low bits
    /// depend only on the multiplicand's low bits, i.e. on the first bytes of a
    /// name's last 8-byte chunk, and names like `.text.k_00123` then crowd
    /// into a few buckets (as rustc-hash 2 does).
    #[inline]
    fn finish(&self) -> u64 {
        self.hash.rotate_left(26)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn deterministic_and_distinguishes() {
        let b = FxBuild::default();
        assert_eq!(b.hash_one("abc"), b.hash_one("abc"));
        assert_ne!(b.hash_one("abc"), b.hash_one("abd"));
        assert_ne!(b.hash_one("abcdefgh"), b.hash_one("abcdefgh\0"));
        assert_ne!(b.hash_one(1u32), b.hash_one(2u32));
        let mut m: HashMap<&str, u32> = HashMap::default();
        m.insert("x", 1);
        assert_eq!(m.get("x"), Some(&1));
    }
}
