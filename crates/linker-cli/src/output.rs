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

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Test hook: milliseconds to stall between writing the temporary file and
/// renaming it, so tests can deliver a signal inside that window.
const STALL_ENV: &str = "CULINK_TEST_STALL_OUTPUT_MS";

/// Writes `bytes` to `path` atomically (temp file + rename in the same directory).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "output is not a file name"))?
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
    let (tmp, mut file, guard) = loop {
        let tmp = dir.join(format!(".{name}.culink-{pid}-{attempt}.tmp"));
        // Registered before the file exists, so no instant is unprotected.
        let guard = signals::TempGuard::new(&tmp);
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => break (tmp, f, guard),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(e) => return Err(e),
        }
    };
    let result = file
        .write_all(bytes)
        .and_then(|_| file.flush())
        .and_then(|_| {
            drop(file);
            if let Some(ms) = std::env::var(STALL_ENV).ok().and_then(|v| v.parse().ok()) {
                std::thread::sleep(std::time::Duration::from_millis(ms));
            }
            std::fs::rename(&tmp, path)
        });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    drop(guard);
    result
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

    #[test]
    fn replaces_and_leaves_no_temp() {
        let dir = std::env::temp_dir().join(format!("culink-out-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("x.cubin");
        std::fs::write(&out, b"old").unwrap();
        write_atomically(&out, b"new").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        // A missing directory fails without creating anything.
        assert!(write_atomically(&dir.join("nope/y.cubin"), b"z").is_err());
        // A directory as output fails and leaves it alone.
        let sub = dir.join("sub");
        std::fs::create_dir(&sub).unwrap();
        assert!(write_atomically(&sub, b"z").is_err());
        assert!(sub.is_dir());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
