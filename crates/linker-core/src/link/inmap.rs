//! Input files mapped side by side in memory.
//!
//! The link drops the inputs' pages from memory between their uses
//! ([`super::load::Mappings`], [`super::load::Release`]). With the inputs
//! mapped wherever the kernel put them that took one `madvise` per input and
//! per use: about 13,000 calls at N = 2000 of the benchmark, each with its TLB
//! flush, 60–75 ms of the link (docs/performance.md, step 25). Here the files
//! are asked for one after the other, each page-aligned, in an address range
//! found free just before ([`free_range`], then `mmap` with that address as a
//! hint), so that one `madvise` covers any run of consecutive inputs
//! ([`runs`]). Placement is only a wish: a file the kernel puts elsewhere
//! starts a run of its own. (Placing them with `MAP_FIXED` inside a reserved
//! range instead cost 24 µs per file: each replaced piece of the reservation
//! is unmapped, with a TLB flush.) Off Unix the hints and the advice do nothing.

use std::fs::File;
use std::io;

/// One memory-mapped input file (read-only, private); unmapped when dropped.
/// Derefs to the file's bytes.
pub(crate) struct Mapped(imp::Map);

impl std::ops::Deref for Mapped {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.0.bytes()
    }
}

impl Mapped {
    /// The address range (start, end) of the mapping's pages.
    pub(crate) fn pages(&self) -> (usize, usize) {
        let (p, len) = (self.0.bytes().as_ptr() as usize, self.0.bytes().len());
        (p, p + len.div_ceil(page_size()) * page_size())
    }
}

/// Maps `file` (its size `len`, non-zero), at the address `hint` if that is
/// free (0: anywhere).
pub(crate) fn map_file(file: &File, len: usize, hint: usize) -> io::Result<Mapped> {
    imp::Map::new(file, len, hint).map(Mapped)
}

/// The page-aligned offsets of files of sizes `lens` placed one after the
/// other, and the bytes they span.
pub(crate) fn side_by_side(lens: &[usize]) -> Option<(Vec<usize>, usize)> {
    let page = page_size();
    let mut offsets = Vec::with_capacity(lens.len());
    let mut total = 0usize;
    for &len in lens {
        offsets.push(total);
        total = total.checked_add(len.checked_next_multiple_of(page)?)?;
    }
    Some((offsets, total))
}

/// The start of an address range of `len` bytes that is free now (0 when
/// none was found: the files then go wherever the kernel puts them).
pub(crate) fn free_range(len: usize) -> usize {
    imp::free_range(len)
}

/// Merges the page ranges of mappings into runs of adjacent ones, by address.
pub(crate) fn runs(mut ranges: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    ranges.sort_unstable();
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(ranges.len().min(16));
    for (lo, hi) in ranges {
        match out.last_mut() {
            Some(last) if last.1 == lo => last.1 = hi,
            // The same mapping twice (an archive's members) or a range inside
            // the last one.
            Some(last) if lo < last.1 => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

/// The system's page size, the unit of every address range here.
pub(crate) fn page_size() -> usize {
    static PAGE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *PAGE.get_or_init(imp::page_size)
}

/// Drops the resident pages of the addresses `lo..hi` (page-aligned, inside one
/// run of input mappings): they are read again from the files on the next
/// access (the mappings are private and never written). Advisory: a failure
/// changes nothing.
pub(crate) fn drop_pages(lo: usize, hi: usize) {
    imp::advise(lo, hi, imp::DONT_NEED);
}

/// Splits `lo..hi` (page-aligned, inside one file's mapping) into a mapping of
/// its own (`MADV_RANDOM`): the kernel's fault-around, which maps up to 64 KiB
/// of cached pages around a touched one, stops at a mapping's end.
pub(crate) fn split_off(lo: usize, hi: usize) {
    imp::advise(lo, hi, imp::RANDOM);
}

#[cfg(unix)]
mod imp {
    use super::*;
    use std::os::unix::io::AsRawFd;

    pub(super) const DONT_NEED: libc::c_int = libc::MADV_DONTNEED;
    pub(super) const RANDOM: libc::c_int = libc::MADV_RANDOM;

    /// A read-only private mapping of a whole file.
    pub(super) struct Map {
        ptr: *mut u8,
        len: usize,
    }

    // SAFETY: read-only memory owned by this value; sharing references to it
    // between threads is as safe as sharing a `&[u8]`.
    unsafe impl Send for Map {}
    // SAFETY: as above.
    unsafe impl Sync for Map {}

    impl Map {
        pub(super) fn new(file: &File, len: usize, hint: usize) -> io::Result<Map> {
            // SAFETY: a new read-only private mapping; without MAP_FIXED the
            // address is a hint and no existing mapping is replaced.
            let ptr = unsafe {
                libc::mmap(
                    hint as *mut libc::c_void,
                    len,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE,
                    file.as_raw_fd(),
                    0,
                )
            };
            if ptr == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            Ok(Map {
                ptr: ptr.cast(),
                len,
            })
        }

        pub(super) fn bytes(&self) -> &[u8] {
            // SAFETY: `len` bytes mapped read-only, living as long as `self`.
            // The link relies on the inputs not changing while it runs (as
            // mold, lld and wild do).
            unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
        }
    }

    impl Drop for Map {
        fn drop(&mut self) {
            // SAFETY: the mapping made in `new`, unmapped once.
            unsafe {
                libc::munmap(self.ptr.cast(), self.len);
            }
        }
    }

    pub(super) fn free_range(len: usize) -> usize {
        if len == 0 {
            return 0;
        }
        // SAFETY: a fresh inaccessible reservation, released at once: only its
        // address is kept, as a hint.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            );
            if p == libc::MAP_FAILED {
                return 0;
            }
            libc::munmap(p, len);
            p as usize
        }
    }

    pub(super) fn page_size() -> usize {
        // SAFETY: sysconf only reads a system constant.
        let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if p > 0 {
            p as usize
        } else {
            4096
        }
    }

    pub(super) fn advise(lo: usize, hi: usize, advice: libc::c_int) {
        if hi <= lo {
            return;
        }
        // SAFETY: callers pass page-aligned ranges covering only private,
        // read-only input file mappings that are alive: MADV_DONTNEED makes
        // the next access read the file again, MADV_RANDOM only changes the
        // paging policy.
        unsafe {
            libc::madvise(lo as *mut libc::c_void, hi - lo, advice);
        }
    }
}

#[cfg(not(unix))]
mod imp {
    use super::*;

    pub(super) const DONT_NEED: i32 = 0;
    pub(super) const RANDOM: i32 = 1;

    /// A read-only mapping of a whole file.
    pub(super) struct Map(memmap2::Mmap);

    impl Map {
        pub(super) fn new(file: &File, _len: usize, _hint: usize) -> io::Result<Map> {
            // SAFETY: a read-only map living as long as the link.
            Ok(Map(unsafe { memmap2::Mmap::map(file)? }))
        }

        pub(super) fn bytes(&self) -> &[u8] {
            &self.0
        }
    }

    pub(super) fn free_range(_len: usize) -> usize {
        0
    }

    pub(super) fn page_size() -> usize {
        4096
    }

    pub(super) fn advise(_lo: usize, _hi: usize, _advice: i32) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_merge_adjacent_and_nested_ranges() {
        let r = runs(vec![(8, 12), (0, 4), (4, 8), (20, 24), (21, 23)]);
        assert_eq!(r, vec![(0, 12), (20, 24)]);
        assert_eq!(runs(Vec::new()), Vec::new());
    }

    #[test]
    fn side_by_side_offsets_are_page_aligned() {
        let p = page_size();
        let (offs, total) = side_by_side(&[1, p, p + 1]).unwrap();
        assert_eq!(offs, vec![0, p, 2 * p]);
        assert_eq!(total, 4 * p);
        assert!(side_by_side(&[usize::MAX, 1]).is_none());
    }

    #[cfg(unix)]
    #[test]
    fn files_land_side_by_side_and_read_back() {
        let dir = std::env::temp_dir().join(format!("culink-inmap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let contents: Vec<Vec<u8>> = (0..5u8)
            .map(|i| vec![i; 1000 + 5000 * i as usize])
            .collect();
        let files: Vec<File> = contents
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let p = dir.join(format!("f{i}"));
                std::fs::write(&p, c).unwrap();
                File::open(&p).unwrap()
            })
            .collect();
        let lens: Vec<usize> = contents.iter().map(Vec::len).collect();
        let (offs, total) = side_by_side(&lens).unwrap();
        let base = free_range(total);
        let maps: Vec<Mapped> = files
            .iter()
            .zip(&offs)
            .zip(&lens)
            .map(|((f, &o), &len)| map_file(f, len, if base == 0 { 0 } else { base + o }).unwrap())
            .collect();
        for (m, c) in maps.iter().zip(&contents) {
            assert_eq!(&m[..], &c[..]);
        }
        // Dropped pages read back the same bytes.
        let all = runs(maps.iter().map(Mapped::pages).collect());
        for &(lo, hi) in &all {
            drop_pages(lo, hi);
        }
        for (m, c) in maps.iter().zip(&contents) {
            assert_eq!(&m[..], &c[..]);
        }
        drop(maps);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
