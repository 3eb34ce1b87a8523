//! Objects from CUDA 12.9's ptxas (ELF ABI 7 at sm_90, ABI 8 without some CUDA 13
//! metadata at sm_100) link like nvlink 13.0.88 links them, alone or mixed with
//! CUDA 13 objects (data and provenance: `tests/data/cuda12/README.md`); so do
//! objects of CUDA 11.8, 12.0 and 12.6 (`tests/data/old_toolkits/README.md`).

use linker_core::diff::{diff, DiffKind};
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

/// Every link of `tests/data/old_toolkits/links.txt` (`name sm [-g] [-r] inputs...`):
/// equivalent to `nvlink.<name>.cubin`, or failing as `nvlink.<name>.err`
/// records (every line of nvlink's error text names what culink's errors
/// must name: the function pair of a register-limit error, the input file
/// of a toolkit refusal).
#[test]
fn older_toolkit_objects_link_like_nvlink() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/old_toolkits");
    let links = std::fs::read_to_string(dir.join("links.txt")).expect("links.txt");
    let mut checked = 0;
    for line in links.lines().filter(|l| !l.trim().is_empty()) {
        let mut words = line.split_whitespace();
        let name = words.next().expect("name");
        let sm: u32 = words.next().expect("sm").parse().expect("sm number");
        let rest: Vec<&str> = words.collect();
        let opts = LinkOptions {
            arch: Some(SmArch::new(sm)),
            device_debug: rest.contains(&"-g"),
            relocatable: rest.contains(&"-r"),
            inputs: rest
                .iter()
                .filter(|w| !w.starts_with('-'))
                .map(|f| InputSource::File(dir.join(f)))
                .collect(),
            ..LinkOptions::default()
        };
        let result = link(&opts);
        let err = dir.join(format!("nvlink.{name}.err"));
        if err.exists() {
            let expected = std::fs::read_to_string(&err).expect("reference error");
            let failure = match result {
                Ok(_) => panic!("{name}: culink linked, nvlink failed with {expected}"),
                Err(f) => f,
            };
            let ours: Vec<String> = failure
                .diagnostics
                .iter()
                .map(|d| d.error.to_string())
                .collect();
            for want in expected.lines() {
                // The quoted names of nvlink's line ('k', 'heavy', the file).
                let names: Vec<&str> = want.split('\'').skip(1).step_by(2).collect();
                assert!(
                    ours.iter().any(|o| names
                        .iter()
                        .all(|n| o.contains(n.rsplit('/').next().unwrap_or(n)))),
                    "{name}: no culink error names {names:?} (nvlink: {want}); culink: {ours:#?}"
                );
            }
        } else {
            let ours = result
                .unwrap_or_else(|f| panic!("{name}: {:?}", f.diagnostics))
                .cubin;
            let reference =
                std::fs::read(dir.join(format!("nvlink.{name}.cubin"))).expect("reference");
            let mut d = diff(
                &Cubin::parse(&ours).expect("ours parses"),
                &Cubin::parse(&reference).expect("reference parses"),
            );
            if opts.relocatable {
                // culink -r keeps relocations nvlink -r resolves (frames;
                // docs/blackwell.md section 7); the rest must match, and
                // the relink, relocations included, must equal nvlink's
                // direct link (but for the tkinfo notes: the relink's names
                // the -r link, not the inputs' ptxas runs).
                d.retain(|x| x.kind != DiffKind::Relocation);
                let again = LinkOptions {
                    relocatable: false,
                    inputs: vec![InputSource::Bytes {
                        name: format!("{name}.r.o"),
                        data: ours.clone().into(),
                    }],
                    ..opts.clone()
                };
                let relinked = link(&again)
                    .unwrap_or_else(|f| panic!("{name}: relink: {:?}", f.diagnostics))
                    .cubin;
                let direct = std::fs::read(dir.join(format!("nvlink.{name}.direct.cubin")))
                    .expect("direct reference");
                let mut r = diff(
                    &Cubin::parse(&relinked).expect("relink parses"),
                    &Cubin::parse(&direct).expect("direct reference parses"),
                );
                r.retain(|x| !(x.kind == DiffKind::Note && x.message.contains("tkinfo")));
                assert!(r.is_empty(), "{name} relinked: {r:#?}");
            }
            assert!(d.is_empty(), "{name}: {d:#?}");
        }
        checked += 1;
    }
    assert!(checked >= 10, "links.txt lists {checked} links");
}
