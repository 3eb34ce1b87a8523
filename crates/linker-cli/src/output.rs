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
//! The linker fills the output window by window ([`AtomicOutput`] is a
//! [`linker_core::OutputSink`]) in one reused buffer, and each finished window is
//! written with one positioned `write` (`pwrite(2)`), so the output never counts
//! more than one window towards the process's resident memory. Measured against
//! a shared mapping of the file filled in place (`MADV_POPULATE_WRITE` per
//! window, `MADV_DONTNEED` after it): on ext4 a 56 MB output took 29–49 ms of
//! page-fault work through the mapping and 14–17 ms through `pwrite`.
//!
//! The commit swaps the finished file with an existing output
//! (`renameat2(RENAME_EXCHANGE)`, Linux) and then removes the old one, where a
//! plain rename over it is the fallback. On ext4 a rename over an existing file
//! also starts the writeback of the new file (the `auto_da_alloc` heuristic for
//! programs that replace files without `fsync`): 26–45 ms for the 54 MB output of
//! the 2000-object benchmark, against under 1 ms for the swap (the old file's
//! removal costs the same either way).

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
    /// The window being filled (reused for every window).
    buf: Vec<u8>,
    /// The first error writing a finished window; reported by
    /// [`AtomicOutput::commit`] (the sink's `release` cannot return it).
    write_error: Option<io::Error>,
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
            buf: Vec::new(),
            write_error: None,
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
        self.release(0..bytes.len());
        match self.write_error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Closes the temporary file and puts it in the output's place.
    pub fn commit(mut self) -> io::Result<()> {
        if self.file.is_none() {
            self.create()?;
        }
        if let Some(e) = self.write_error.take() {
            // Dropping `self` removes the temporary file.
            return Err(e);
        }
        self.buf = Vec::new();
        self.file = None;
        if let Some(ms) = std::env::var(STALL_ENV).ok().and_then(|v| v.parse().ok()) {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
        let result = replace(&self.tmp, &self.path);
        if result.is_err() {
            let _ = std::fs::remove_file(&self.tmp);
        }
        self.guard = None;
        result
    }
}

/// Puts `tmp` in `path`'s place: swapped with an existing `path`, whose old
/// file (now named `tmp`) is then removed; renamed where there is nothing to
/// swap with or the system cannot swap.
fn replace(tmp: &Path, path: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::ffi::CString;
        use std::os::unix::ffi::OsStrExt;
        let (Ok(from), Ok(to)) = (
            CString::new(tmp.as_os_str().as_bytes()),
            CString::new(path.as_os_str().as_bytes()),
        ) else {
            return std::fs::rename(tmp, path);
        };
        let exchange = || {
            // SAFETY: two NUL-terminated paths; renameat2 only reads them.
            unsafe {
                libc::renameat2(
                    libc::AT_FDCWD,
                    from.as_ptr(),
                    libc::AT_FDCWD,
                    to.as_ptr(),
                    libc::RENAME_EXCHANGE,
                )
            }
        };
        if exchange() == 0 {
            // `tmp` now names the old output. If it cannot be removed, the
            // swap is undone, so that a failed link leaves the old output as
            // it was (the caller then removes `tmp`, the new file again).
            if let Err(e) = std::fs::remove_file(tmp) {
                let _ = exchange();
                return Err(io::Error::new(
                    e.kind(),
                    format!("cannot remove the previous output: {e}"),
                ));
            }
            return Ok(());
        }
        // ENOENT (no output yet), EINVAL/ENOSYS (no swap here), EXDEV…: rename.
    }
    std::fs::rename(tmp, path)
}

impl Drop for AtomicOutput {
    fn drop(&mut self) {
        if self.file.is_some() {
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
        self.write_error = None;
        Ok(())
    }

    fn window(&mut self, range: Range<usize>) -> &mut [u8] {
        // The linker writes every byte of the window: no need to clear it.
        if self.buf.len() < range.len() {
            self.buf.resize(range.len(), 0);
        }
        &mut self.buf[..range.len()]
    }

    fn release(&mut self, range: Range<usize>) {
        if self.write_error.is_some() {
            return;
        }
        let Some(file) = &self.file else { return };
        if let Err(e) = write_at(file, &self.buf[..range.len()], range.start as u64) {
            self.write_error = Some(e);
        }
    }
}

/// Writes all of `bytes` at `offset` of `file`.
#[cfg(unix)]
fn write_at(file: &File, bytes: &[u8], offset: u64) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.write_all_at(bytes, offset)
}

/// Writes all of `bytes` at `offset` of `file`.
#[cfg(not(unix))]
fn write_at(mut file: &File, bytes: &[u8], offset: u64) -> io::Result<()> {
    use std::io::{Seek, SeekFrom, Write};
    file.seek(SeekFrom::Start(offset))?;
    file.write_all(bytes)
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
        // An output that is a symbolic link: the link is replaced by the new
        // file (as `rename` does), the file it pointed to stays as it was.
        #[cfg(unix)]
        {
            let target = dir.join("target.cubin");
            let link = dir.join("link.cubin");
            std::fs::write(&target, b"target").unwrap();
            std::os::unix::fs::symlink(&target, &link).unwrap();
            let mut o = AtomicOutput::new(&link);
            o.write_all(b"via link").unwrap();
            o.commit().unwrap();
            assert!(!std::fs::symlink_metadata(&link).unwrap().is_symlink());
            assert_eq!(std::fs::read(&link).unwrap(), b"via link");
            assert_eq!(std::fs::read(&target).unwrap(), b"target");
            assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 4);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
