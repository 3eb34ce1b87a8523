//! `-r` of Blackwell objects (the Mercury family, `docs/blackwell.md` §7):
//!
//! * the output's `.nv.merc.symtab` is index-aligned with its `.symtab` (entry
//!   `i` is the twin of entry `i`; only the parameter banks' section symbols,
//!   last, have none), the form ptxas writes and the final link reads;
//! * a `-r` object linked *after* other objects (so its `.nv.constant3`,
//!   `.nv.merc.debug_frame` and code move) gives the direct link of the same
//!   inputs: the Mercury relocations culink keeps (constant-bank operands in
//!   capsules, debug-frame CIE pointers) are resolved again by the final link.
//!
//! Inputs: `tests/link/relocatable` (`a`, `b`: calls and a global; `c1`, `c2`:
//! module constants, shared memory). The reference is nvlink's direct link
//! when the tool is there, culink's otherwise.

mod common;

use common::{link_dir, nv_tool};
use linker_core::diff::{diff, DiffKind};
use linker_core::elf::{SHT_CUDA_MERC_SYMTAB, STT_SECTION};
use linker_core::{link, Cubin, InputSource, LinkOptions, SmArch};
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

fn object(stem: &str, sm: u32) -> PathBuf {
    link_dir().join(format!("relocatable/{stem}.sm_{sm}.o"))
}

fn options(sm: u32, inputs: Vec<InputSource>, relocatable: bool) -> LinkOptions {
    LinkOptions {
        arch: Some(SmArch::new(sm)),
        inputs,
        relocatable,
        ..LinkOptions::default()
    }
}

fn files(stems: &[&str], sm: u32) -> Vec<InputSource> {
    stems
        .iter()
        .map(|s| InputSource::File(object(s, sm)))
        .collect()
}

/// The names of `.nv.merc.symtab`'s entries (section symbols: `None`).
fn merc_names(c: &Cubin<'_>) -> Vec<Option<String>> {
    let st = c
        .sections
        .iter()
        .find(|s| s.sh_type == SHT_CUDA_MERC_SYMTAB)
        .expect("a Mercury symbol table");
    let strtab = &c.sections[st.link as usize];
    st.data
        .chunks_exact(24)
        .map(|e| {
            if e[4] & 0xf == STT_SECTION {
                return None;
            }
            let off = u32::from_le_bytes([e[0], e[1], e[2], e[3]]) as usize;
            let rest = &strtab.data[off..];
            let end = rest.iter().position(|&b| b == 0).expect("terminated");
            Some(String::from_utf8_lossy(&rest[..end]).into_owned())
        })
        .collect()
}

#[test]
fn mercury_symtab_of_a_relocatable_output_is_index_aligned() {
    for sm in [100, 120] {
        let out = link(&options(sm, files(&["a", "b", "c1", "c2"], sm), true))
            .unwrap_or_else(|f| panic!("sm_{sm}: -r failed: {:?}", f.diagnostics));
        let c = Cubin::parse(&out.cubin).expect("parses");
        let merc = merc_names(&c);
        assert!(merc.len() > 1 && merc.len() <= c.symbols.len());
        for (i, m) in merc.iter().enumerate().skip(1) {
            let s = &c.symbols[i];
            match m {
                None => assert_eq!(s.ty(), STT_SECTION, "sm_{sm}: entry {i}"),
                Some(n) => assert_eq!(n, s.name, "sm_{sm}: entry {i}"),
            }
        }
        // The symbols past the Mercury table: the parameter banks' section symbols.
        for s in &c.symbols[merc.len()..] {
            assert_eq!(s.ty(), STT_SECTION, "sm_{sm}");
            let sec = s.section().expect("a section symbol names its section");
            assert!(
                c.sections[sec as usize].name.starts_with(".nv.constant0."),
                "sm_{sm}: {} has no Mercury twin",
                c.sections[sec as usize].name
            );
        }
    }
}

#[test]
fn relocatable_output_links_after_other_objects() {
    let nvlink = nv_tool("nvlink");
    // sm_90: the SASS `.debug_frame` CIE pointers (RELA) must move with the
    // -r object too; sm_100/120: the Mercury ones and the capsule operands.
    for sm in [90, 100, 120] {
        let tag = format!("sm_{sm}");
        let r = link(&options(sm, files(&["c2", "b"], sm), true))
            .unwrap_or_else(|f| panic!("{tag}: -r failed: {:?}", f.diagnostics));
        let mut inputs = files(&["a", "c1"], sm);
        inputs.push(InputSource::Bytes {
            name: "r.o".into(),
            data: Arc::from(r.cubin.as_slice()),
        });
        let relinked = link(&options(sm, inputs, false))
            .unwrap_or_else(|f| panic!("{tag}: relink failed: {:?}", f.diagnostics));
        let direct = match &nvlink {
            Some(nv) => {
                let dir =
                    std::env::temp_dir().join(format!("culink-rmerc-{}-{sm}", std::process::id()));
                std::fs::create_dir_all(&dir).expect("scratch dir");
                let out = dir.join("direct.cubin");
                let st = Command::new(nv)
                    .arg(format!("-arch=sm_{sm}"))
                    .args(["a", "c1", "c2", "b"].map(|s| object(s, sm)))
                    .arg("-o")
                    .arg(&out)
                    .output()
                    .expect("run nvlink");
                assert!(st.status.success(), "{tag}: nvlink failed");
                let bytes = std::fs::read(&out).expect("nvlink output");
                let _ = std::fs::remove_dir_all(&dir);
                bytes
            }
            None => {
                link(&options(sm, files(&["a", "c1", "c2", "b"], sm), false))
                    .unwrap_or_else(|f| panic!("{tag}: direct link failed: {:?}", f.diagnostics))
                    .cubin
            }
        };
        let ours = Cubin::parse(&relinked.cubin).expect("relinked parses");
        let theirs = Cubin::parse(&direct).expect("direct parses");
        // The tkinfo notes differ (culink's -r note instead of the inputs').
        let d: Vec<String> = diff(&ours, &theirs)
            .into_iter()
            .filter(|d| d.kind != DiffKind::Note)
            .map(|d| format!("    {:?}: {d}", d.kind))
            .collect();
        assert!(
            d.is_empty(),
            "{tag}: -r object linked after others differs from the direct link:\n{}",
            d.join("\n")
        );
    }
}

#[test]
fn mercury_relocatable_link_is_refused_where_not_measured() {
    // sm_100 objects relabelled sm_110 (e_flags bits 8..15): -r at sm_110 is
    // refused (docs/blackwell.md §7), the final link is not.
    let inputs = || -> Vec<InputSource> {
        ["a", "b"]
            .iter()
            .map(|s| {
                let mut bytes = std::fs::read(object(s, 100)).expect("fixture");
                bytes[0x31] = 110;
                InputSource::Bytes {
                    name: format!("{s}110.o"),
                    data: Arc::from(bytes.as_slice()),
                }
            })
            .collect()
    };
    let f = link(&options(110, inputs(), true)).expect_err("-r at sm_110 is refused");
    assert!(
        f.diagnostics
            .iter()
            .any(|d| d.error.kind == linker_core::ErrorKind::Unsupported),
        "{:?}",
        f.diagnostics
    );
    if let Err(f) = link(&options(110, inputs(), false)) {
        panic!("the final link is not refused: {:?}", f.diagnostics);
    }
}
