//! Atomic output: the cubin is written to a temporary file in the output's
//! directory and renamed over the output, so a failed or interrupted link never
//! leaves a partial file and never touches an existing output.
//!
//! The temporary name is `.<output>.culink-<pid>-<n>.tmp`, created with
//! `O_CREAT|O_EXCL` (unique even when several links write into one directory)
//! and removed on every error. On Unix, SIGINT, SIGTERM and SIGHUP arriving
//! while it exists remove it before the process dies of the signal (the
//! handler only calls `unlink`, `signal` and `raise`, which are
//! async-signal-safe). Before the temporary file exists nothing has been
//! written; after the rename the output is complete.
//!
//! The linker writes straight into the temporary file through a shared memory
//! mapping of its final size ([`AtomicOutput`] is a [`linker_core::OutputSink`]):
//! no output buffer in memory and no `write(2)` copy into the page cache. Each
//! finished window of the output is unmapped again (`MADV_DONTNEED`; the dirty
//! pages stay in the page cache and reach the file), so the output never counts
//! more than one window towards the process's resident memory.

use memmap2::{Advice, MmapMut, UncheckedAdvice};
use std::fs::{File, OpenOptions};
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Test hook: milliseconds to stall between writing the temporary file and
/// renaming it, so tests can deliver a signal inside that window.
const STALL_ENV: &str = "CULINK_TEST_STALL_OUTPUT_MS";

/// A temporary output file that becomes `path` on [`AtomicOutput::commit`] and
/// is removed when dropped uncommitted.
pub struct AtomicOutput {
    path: PathBuf,
    tmp: PathBuf,
    file: Option<File>,
    map: Option<MmapMut>,
    create_error: Option<io::Error>,
    /// Removes the temporary file on a terminating signal while it exists.
    guard: Option<signals::TempGuard>,
}

impl AtomicOutput {
    /// An output that will become `path`; the temporary file is created when the
    /// linker starts writing ([`linker_core::OutputSink::begin`]), so a failed
    /// link creates nothing.
    pub fn new(path: &Path) -> AtomicOutput {
        AtomicOutput {
            path: path.to_path_buf(),
            tmp: PathBuf::new(),
            file: None,
            map: None,
            create_error: None,
            guard: None,
        }
    }

    /// Why the temporary file could not be created, if that is what failed.
    pub fn create_error(&self) -> Option<&io::Error> {
        self.create_error.as_ref()
    }

    /// Creates the temporary file next to the output (same directory, so the
    /// final rename is atomic).
    fn create(&mut self) -> io::Result<()> {
        let path = &self.path;
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = path
            .file_name()
            .ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidInput, "output is not a file name")
            })?
            .to_string_lossy()
            .into_owned();
        if path.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "output path is a directory",
            ));
        }
        let pid = std::process::id();
        let mut attempt = 0u32;
        loop {
            let tmp = dir.join(format!(".{name}.culink-{pid}-{attempt}.tmp"));
            // Registered before the file exists, so no instant is unprotected.
            let guard = signals::TempGuard::new(&tmp);
            match OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&tmp)
            {
                Ok(f) => {
                    self.tmp = tmp;
                    self.file = Some(f);
                    self.guard = Some(guard);
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
                Err(e) => return Err(e),
            }
        }
    }

    /// Writes `bytes` as the whole contents (for callers that have them in
    /// memory, e.g. the `--register-link-binaries` file).
    pub fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        use linker_core::OutputSink;
        self.begin(bytes.len())?;
        self.window(0..bytes.len()).copy_from_slice(bytes);
        Ok(())
    }

    /// Unmaps, closes and renames the temporary file over the output.
    pub fn commit(mut self) -> io::Result<()> {
        if self.file.is_none() {
            self.create()?;
        }
        self.map = None;
        self.file = None;
        if let Some(ms) = std::env::var(STALL_ENV).ok().and_then(|v| v.parse().ok()) {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
        let result = std::fs::rename(&self.tmp, &self.path);
        if result.is_err() {
            let _ = std::fs::remove_file(&self.tmp);
        }
        self.guard = None;
        result
    }
}

impl Drop for AtomicOutput {
    fn drop(&mut self) {
        if self.file.is_some() {
            self.map = None;
            self.file = None;
            let _ = std::fs::remove_file(&self.tmp);
        }
        self.guard = None;
    }
}

impl linker_core::OutputSink for AtomicOutput {
    fn begin(&mut self, size: usize) -> io::Result<()> {
        if self.file.is_none() {
            if let Err(e) = self.create() {
                let copy = io::Error::new(e.kind(), e.to_string());
                self.create_error = Some(e);
                return Err(copy);
            }
        }
        let file = self.file.as_ref().expect("created above");
        file.set_len(size as u64)?;
        self.map = None;
        if size > 0 {
            // SAFETY: the file was created by this process with create_new
            // under a private temporary name; nothing else maps or truncates it
            // while the mapping lives.
            self.map = Some(unsafe { MmapMut::map_mut(file)? });
        }
        Ok(())
    }

    fn window(&mut self, range: Range<usize>) -> &mut [u8] {
        match &mut self.map {
            Some(map) => {
                // One call to fault in the whole window instead of a page fault
                // per 4 KiB page; a failure (old kernel) only costs the faults.
                let _ = map.advise_range(Advice::PopulateWrite, range.start, range.len());
                &mut map[range]
            }
            None => &mut [],
        }
    }

    fn release(&mut self, range: Range<usize>) {
        if let Some(map) = &self.map {
            // SAFETY: MADV_DONTNEED on a *shared* file mapping only unmaps the
            // pages; their (dirty) contents stay in the page cache and a later
            // access faults the same bytes back in, so no data is lost and no
            // reference into the mapping sees different bytes.
            let _ = unsafe {
                map.unchecked_advise_range(UncheckedAdvice::DontNeed, range.start, range.len())
            };
        }
    }
}

#[cfg(unix)]
mod signals {
    //! Removes the registered temporary file when a terminating signal arrives.
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;
    use std::sync::atomic::{AtomicPtr, Ordering};
    use std::sync::Once;

    /// The temporary file to remove, as a leaked C string (never freed, so the
    /// handler can never see a dangling pointer); null when there is none.
    static TEMP: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());
    static INSTALL: Once = Once::new();

    extern "C" fn on_signal(sig: libc::c_int) {
        let p = TEMP.swap(std::ptr::null_mut(), Ordering::SeqCst);
        // SAFETY: `p` is null or a leaked, NUL-terminated string; unlink, signal
        // and raise are async-signal-safe.
        unsafe {
            if !p.is_null() {
                libc::unlink(p);
            }
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }

    /// Registers `path` for removal on SIGINT/SIGTERM/SIGHUP until dropped.
    pub struct TempGuard;

    impl TempGuard {
        pub fn new(path: &Path) -> TempGuard {
            INSTALL.call_once(|| {
                for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                    // SAFETY: installs a handler that only makes async-signal-safe calls.
                    unsafe {
                        libc::signal(sig, on_signal as extern "C" fn(libc::c_int) as usize);
                    }
                }
            });
            if let Ok(c) = CString::new(path.as_os_str().as_bytes()) {
                TEMP.store(c.into_raw(), Ordering::SeqCst);
            }
            TempGuard
        }
    }

    impl Drop for TempGuard {
        fn drop(&mut self) {
            // The string stays leaked: a handler running now may still read it.
            TEMP.store(std::ptr::null_mut(), Ordering::SeqCst);
        }
    }
}

#[cfg(not(unix))]
mod signals {
    //! No signal handling off Unix; the temporary file is still removed on errors.
    use std::path::Path;

    /// Does nothing off Unix.
    pub struct TempGuard;

    impl TempGuard {
        pub fn new(_path: &Path) -> TempGuard {
            TempGuard
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linker_core::OutputSink;

    #[test]
    fn replaces_and_leaves_no_temp() {
        let dir = std::env::temp_dir().join(format!("culink-out-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("x.cubin");
        std::fs::write(&out, b"old").unwrap();
        let mut o = AtomicOutput::new(&out);
        o.write_all(b"new").unwrap();
        o.commit().unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        // Windows written and released keep their bytes.
        let mut o = AtomicOutput::new(&out);
        o.begin(3 << 20).unwrap();
        o.window(0..(2 << 20)).fill(7);
        o.release(0..(2 << 20));
        o.window((2 << 20)..(3 << 20)).fill(9);
        o.release((2 << 20)..(3 << 20));
        o.commit().unwrap();
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(bytes.len(), 3 << 20);
        assert!(bytes[..2 << 20].iter().all(|&b| b == 7));
        assert!(bytes[2 << 20..].iter().all(|&b| b == 9));
        // Dropped uncommitted: the output is untouched, no temporary is left.
        let mut o = AtomicOutput::new(&out);
        o.write_all(b"partial").unwrap();
        drop(o);
        assert_eq!(std::fs::read(&out).unwrap().len(), 3 << 20);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        // A missing directory fails without creating anything.
        let mut o = AtomicOutput::new(&dir.join("nope/y.cubin"));
        assert!(o.begin(1).is_err());
        assert!(o.create_error().is_some());
        drop(o);
        assert!(!dir.join("nope").exists());
        // A directory as output fails and leaves it alone.
        let sub = dir.join("sub");
        std::fs::create_dir(&sub).unwrap();
        let mut o = AtomicOutput::new(&sub);
        assert!(o.begin(1).is_err());
        drop(o);
        assert!(sub.is_dir());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
