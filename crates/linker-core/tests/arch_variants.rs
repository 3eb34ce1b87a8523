//! `a`/`f` arch variants: culink links them like nvlink 13.0.88 (data and
//! provenance: `tests/data/variants/README.md`). The variant of a target shows in
//! `.nv.compat` (`EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET`), not in `e_flags`; an
//! `sm_XXa` object links only into an image for the same SM.

use linker_core::diff::diff;
use linker_core::{link, Cubin, InputSource, LinkOptions, SmArch};
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/variants")
}

fn link_files(arch: &str, inputs: &[&str]) -> Result<Vec<u8>, String> {
    let opts = LinkOptions {
        arch: Some(SmArch::parse(arch).expect("arch")),
        inputs: inputs
            .iter()
            .map(|i| InputSource::File(dir().join(i)))
            .collect(),
        ..LinkOptions::default()
    };
    link(&opts)
        .map(|o| o.cubin)
        .map_err(|f| format!("{:?}", f.diagnostics))
}

#[test]
fn variants_link_like_nvlink() {
    let cases: &[(&str, &[&str])] = &[
        ("sm_90a", &["a.sm_90.o", "b.sm_90.o"]),
        ("sm_90", &["a.sm_90a.o", "b.sm_90a.o"]),
        ("sm_100a", &["a.sm_100.o", "b.sm_100.o"]),
        ("sm_100", &["a.sm_100a.o", "b.sm_100.o"]),
        ("sm_103", &["a.sm_103.o", "b.sm_100f.o"]),
        ("sm_103a", &["b.sm_100.o", "a.sm_103.o"]),
    ];
    for (arch, inputs) in cases {
        let ours = link_files(arch, inputs).unwrap_or_else(|e| panic!("{arch} {inputs:?}: {e}"));
        let name = format!(
            "nvlink.{arch}.{}.cubin",
            inputs
                .iter()
                .map(|i| i.trim_end_matches(".o"))
                .collect::<Vec<_>>()
                .join("+")
        );
        let reference = std::fs::read(dir().join(&name)).expect("reference");
        let (o, r) = (
            Cubin::parse(&ours).expect("ours parses"),
            Cubin::parse(&reference).expect("reference parses"),
        );
        let d = diff(&o, &r);
        assert!(
            d.is_empty(),
            "{arch} {inputs:?} differs from {name}: {d:#?}"
        );
    }
}

#[test]
fn arch_specific_object_stays_on_its_sm() {
    let err = link_files("sm_103", &["a.sm_103.o", "b.sm_100a.o"])
        .expect_err("nvlink rejects an sm_100a object in an sm_103 link");
    assert!(
        err.contains("sm_103") && err.contains("b.sm_100a.o"),
        "{err}"
    );
}
