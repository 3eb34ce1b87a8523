//! Objects from CUDA 12.9's ptxas (ELF ABI 7 at sm_90, ABI 8 without some CUDA 13
//! metadata at sm_100) link like nvlink 13.0.88 links them, alone or mixed with
//! CUDA 13 objects (data and provenance: `tests/data/cuda12/README.md`).

use linker_core::diff::diff;
use linker_core::{link, Cubin, InputSource, LinkOptions, SmArch};
use std::path::PathBuf;

#[test]
fn cuda12_objects_link_like_nvlink() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/cuda12");
    for sm in [90, 100] {
        for (x, y) in [("a12", "b12"), ("a12", "b13"), ("a13", "b12")] {
            let opts = LinkOptions {
                arch: Some(SmArch::new(sm)),
                inputs: [x, y]
                    .iter()
                    .map(|s| InputSource::File(dir.join(format!("{s}.sm_{sm}.o"))))
                    .collect(),
                ..LinkOptions::default()
            };
            let ours = link(&opts)
                .unwrap_or_else(|f| panic!("sm_{sm} {x}+{y}: {:?}", f.diagnostics))
                .cubin;
            let reference = std::fs::read(dir.join(format!("nvlink.sm_{sm}.{x}+{y}.cubin")))
                .expect("reference");
            let d = diff(
                &Cubin::parse(&ours).expect("ours parses"),
                &Cubin::parse(&reference).expect("reference parses"),
            );
            assert!(d.is_empty(), "sm_{sm} {x}+{y}: {d:#?}");
        }
    }
}
