//! The C ABI called from Rust threads: handles used from many threads, links in
//! parallel, and destroy racing other calls on the same handle.

use culink::*;
use std::ffi::{c_char, CString};
use std::path::PathBuf;

fn fixture(rel: &str) -> CString {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/link")
        .join(rel);
    CString::new(p.to_str().unwrap()).unwrap()
}

/// A handle for sm_90 with call_extern's two inputs added.
fn prepared() -> culinkHandle {
    let arch = CString::new("-arch=sm_90").unwrap();
    let mut opts = [arch.as_ptr()];
    let mut h: culinkHandle = std::ptr::null_mut();
    // SAFETY: `h` and `opts` are live locals; the option is NUL-terminated.
    let r = unsafe { culinkCreate(&mut h, 1, opts.as_mut_ptr()) };
    assert_eq!(r, culinkResult::CULINK_SUCCESS);
    for f in ["call_extern/a.sm_90.o", "call_extern/b.sm_90.o"] {
        let path = fixture(f);
        // SAFETY: `path` is a NUL-terminated string that outlives the call.
        let r = unsafe { culinkAddFile(h, CULINK_INPUT_CUBIN, path.as_ptr()) };
        assert_eq!(r, culinkResult::CULINK_SUCCESS);
    }
    h
}

fn cubin_of(h: culinkHandle) -> Result<Vec<u8>, culinkResult> {
    let mut size = 0usize;
    // SAFETY: `size` is a live local.
    let r = unsafe { culinkGetLinkedCubinSize(h, &mut size) };
    if r != culinkResult::CULINK_SUCCESS {
        return Err(r);
    }
    let mut buf = vec![0u8; size];
    // SAFETY: `buf` holds `size` bytes, the cubin's size.
    let r = unsafe { culinkGetLinkedCubin(h, buf.as_mut_ptr().cast()) };
    if r != culinkResult::CULINK_SUCCESS {
        return Err(r);
    }
    Ok(buf)
}

#[test]
fn parallel_links_on_separate_handles_agree() {
    let cubins: Vec<Vec<u8>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    let mut h = prepared();
                    assert_eq!(culinkComplete(h), culinkResult::CULINK_SUCCESS);
                    let c = cubin_of(h).unwrap();
                    // SAFETY: `h` is a live local.
                    assert_eq!(
                        unsafe { culinkDestroy(&mut h) },
                        culinkResult::CULINK_SUCCESS
                    );
                    c
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    assert!(cubins.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn one_handle_shared_by_threads_and_destroyed_mid_use() {
    let mut h = prepared();
    let token = h as usize;
    std::thread::scope(|s| {
        // Many threads race to complete the same handle: exactly one wins.
        let results: Vec<culinkResult> = (0..8)
            .map(|_| s.spawn(move || culinkComplete(token as culinkHandle)))
            .collect::<Vec<_>>()
            .into_iter()
            .map(|w| w.join().unwrap())
            .collect();
        let ok = results
            .iter()
            .filter(|&&r| r == culinkResult::CULINK_SUCCESS)
            .count();
        assert_eq!(ok, 1, "{results:?}");
        assert!(results
            .iter()
            .all(|&r| r == culinkResult::CULINK_SUCCESS
                || r == culinkResult::CULINK_ERROR_INVALID_STATE));
        // Readers on other threads while this one destroys the handle: every call
        // either succeeds or reports an unknown handle.
        let readers: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(move || {
                    for _ in 0..200 {
                        match cubin_of(token as culinkHandle) {
                            Ok(c) => assert!(c.starts_with(b"\x7fELF")),
                            Err(r) => {
                                assert_eq!(r, culinkResult::CULINK_ERROR_INVALID_INPUT);
                                return;
                            }
                        }
                    }
                })
            })
            .collect();
        // SAFETY: `h` is a live local.
        assert_eq!(
            unsafe { culinkDestroy(&mut h) },
            culinkResult::CULINK_SUCCESS
        );
        for r in readers {
            r.join().unwrap();
        }
    });
    assert!(h.is_null());
}

#[test]
fn made_up_handles_are_rejected() {
    let fake = 0xdead_beef_usize as culinkHandle;
    assert_eq!(
        culinkComplete(fake),
        culinkResult::CULINK_ERROR_INVALID_INPUT
    );
    let mut n = 0usize;
    // SAFETY: `n` is a live local.
    let r = unsafe { culinkGetErrorLogSize(fake, &mut n) };
    assert_eq!(r, culinkResult::CULINK_ERROR_INVALID_INPUT);
}

#[test]
fn logs_are_c_strings_with_their_size() {
    let mut h = prepared();
    let junk = b"junk";
    let name = CString::new("junk.bin").unwrap();
    // SAFETY: `junk` and `name` are live for the call.
    let r = unsafe {
        culinkAddData(
            h,
            CULINK_INPUT_CUBIN,
            junk.as_ptr().cast(),
            junk.len(),
            name.as_ptr(),
        )
    };
    assert_eq!(r, culinkResult::CULINK_ERROR_INVALID_INPUT);
    let mut n = 0usize;
    // SAFETY: `n` is a live local.
    assert_eq!(
        unsafe { culinkGetErrorLogSize(h, &mut n) },
        culinkResult::CULINK_SUCCESS
    );
    let mut buf = vec![0x55 as c_char; n];
    // SAFETY: `buf` holds `n` bytes, the log's size.
    assert_eq!(
        unsafe { culinkGetErrorLog(h, buf.as_mut_ptr()) },
        culinkResult::CULINK_SUCCESS
    );
    let bytes: Vec<u8> = buf.iter().map(|&c| c as u8).collect();
    assert_eq!(bytes[n - 1], 0);
    let text = std::str::from_utf8(&bytes[..n - 1]).unwrap();
    assert!(text.starts_with("error: junk.bin: "), "{text}");
    // The rejected input was not added: the link still succeeds.
    assert_eq!(culinkComplete(h), culinkResult::CULINK_SUCCESS);
    // SAFETY: `h` is a live local.
    assert_eq!(
        unsafe { culinkDestroy(&mut h) },
        culinkResult::CULINK_SUCCESS
    );
}
