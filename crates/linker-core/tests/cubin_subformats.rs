//! Parse/encode tests of the cubin metadata sub-formats (EIATTR, EICOMPAT, notes,
//! call graph, prototypes) on raw sections copied from ptxas/nvlink 13.0 output.

use linker_core::cubin::callgraph::{
    self, CallEdge, CallGraph, CallGraphEntry, CallGraphList, PrototypeEntry,
};
use linker_core::cubin::compat::{self, EiCompat};
use linker_core::cubin::eiattr::{self, EiAttr, EiFormat, OwnedRecord, SymFields, Value};
use linker_core::cubin::notes::{self, CuInfo, TkInfo};
use linker_core::ErrorKind;

struct Blob {
    kind: String,
    name: String,
    bytes: Vec<u8>,
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

fn blobs() -> Vec<Blob> {
    include_str!("data/cuda_sections.hex")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Blob {
                kind: f[0].to_string(),
                name: format!("{} {}", f[1], f[2]),
                bytes: unhex(f[3]),
            }
        })
        .collect()
}

fn blob(name: &str) -> Vec<u8> {
    blobs()
        .into_iter()
        .find(|b| b.name == name)
        .unwrap_or_else(|| panic!("no blob {name}"))
        .bytes
}

#[test]
fn every_blob_round_trips_byte_exact() {
    let all = blobs();
    assert_eq!(all.len(), 13);
    for b in all {
        let d = &b.bytes;
        let mut out = Vec::new();
        match b.kind.as_str() {
            "info" => eiattr::encode(&eiattr::parse(d).unwrap(), &mut out).unwrap(),
            "compat" => compat::encode(&compat::parse(d).unwrap(), &mut out).unwrap(),
            "note" => {
                for n in notes::parse_notes(d).unwrap() {
                    n.encode(&mut out).unwrap();
                    if let Some(t) = n.tkinfo() {
                        assert_eq!(t.unwrap().encode().unwrap(), n.desc, "{}", b.name);
                    }
                    if let Some(c) = n.cuinfo() {
                        assert_eq!(c.unwrap().encode(), n.desc, "{}", b.name);
                    }
                }
            }
            "cg" => {
                callgraph::encode_callgraph(&callgraph::parse_callgraph(d).unwrap(), &mut out);
                let mut typed = Vec::new();
                CallGraph::parse(d).unwrap().encode(&mut typed);
                assert_eq!(&typed, d, "{}", b.name);
            }
            "proto" => {
                callgraph::encode_prototypes(&callgraph::parse_prototypes(d).unwrap(), &mut out)
            }
            k => panic!("kind {k}"),
        }
        assert_eq!(&out, d, "{} ({})", b.name, b.kind);
    }
}

#[test]
fn module_info_of_a_ptxas_object() {
    let d = blob("a_90.o .nv.info");
    let r = eiattr::parse(&d).unwrap();
    let attrs: Vec<EiAttr> = r.iter().map(|x| x.attr).collect();
    assert_eq!(
        attrs,
        [
            EiAttr::EIATTR_REGCOUNT,
            EiAttr::EIATTR_MAX_STACK_SIZE,
            EiAttr::EIATTR_FRAME_SIZE
        ]
    );
    assert_eq!(r[0].sym_value(), Some((16, 24)));
    assert_eq!(r[0].offset, 0);
    assert_eq!(r[1].offset, 12);
    assert_eq!(r[1].sym_value(), Some((16, 0)));
    assert_eq!(r[0].symbol_fields(), SymFields::First);
    assert_eq!(r[0].attr.to_string(), "EIATTR_REGCOUNT");
}

#[test]
fn function_info_with_nval_and_externs() {
    let d = blob("a_80.o .nv.info.kern_a");
    let r = eiattr::parse(&d).unwrap();
    let nval = r
        .iter()
        .find(|x| x.attr == EiAttr::EIATTR_SW2861232_WAR)
        .unwrap();
    assert_eq!(
        (nval.format, nval.value, nval.pad),
        (EiFormat::NVAL, Value::None, 0)
    );
    let ext = r.iter().find(|x| x.attr == EiAttr::EIATTR_EXTERNS).unwrap();
    assert_eq!(ext.symbol_fields(), SymFields::All);
    assert_eq!(ext.symbol_indices().unwrap(), [0xb]);
    let cbank = r
        .iter()
        .find(|x| x.attr == EiAttr::EIATTR_PARAM_CBANK)
        .unwrap();
    assert_eq!(cbank.sym_value(), Some((4, 0x0008_0160)));
    let kp = r
        .iter()
        .find(|x| x.attr == EiAttr::EIATTR_KPARAM_INFO)
        .unwrap();
    assert_eq!(kp.symbol_fields(), SymFields::None);
    assert_eq!(kp.payload().unwrap().len(), 12);
    let ver = r
        .iter()
        .find(|x| x.attr == EiAttr::EIATTR_CUDA_API_VERSION)
        .unwrap();
    assert_eq!(ver.int_value(), Some(0x82));
    let mr = r
        .iter()
        .find(|x| x.attr == EiAttr::EIATTR_MAXREG_COUNT)
        .unwrap();
    assert_eq!(mr.value, Value::Half(0xff));
}

#[test]
fn bval_records_and_crs_stack_size() {
    let r18 = blob("all_100.cubin .nv.info.#18");
    let r = eiattr::parse(&r18).unwrap();
    let last: Vec<(EiAttr, EiFormat)> =
        r.iter().rev().take(2).map(|x| (x.attr, x.format)).collect();
    assert_eq!(
        last,
        [
            (EiAttr::EIATTR_BINDLESS_SURFACE_BANK, EiFormat::BVAL),
            (EiAttr::EIATTR_BINDLESS_TEXTURE_BANK, EiFormat::BVAL)
        ]
    );
    let r13 = blob("all_100.cubin .nv.info.#13");
    let r = eiattr::parse(&r13).unwrap();
    assert_eq!(r[0].attr, EiAttr::EIATTR_CRS_STACK_SIZE);
    assert_eq!(r[0].symbol_fields(), SymFields::None);
    assert_eq!(r[0].int_value(), Some(0));
}

#[test]
fn nvlink_output_info_has_min_stack_size() {
    let r_bytes = blob("ab_90.cubin .nv.info");
    let r = eiattr::parse(&r_bytes).unwrap();
    assert!(r
        .iter()
        .any(|x| x.attr == EiAttr::EIATTR_MIN_STACK_SIZE && x.sym_value().is_some()));
    assert!(!r.iter().any(|x| x.attr == EiAttr::EIATTR_MAX_STACK_SIZE));
}

#[test]
fn rewrite_symbols_renumbers_only_symbol_words() {
    let d = blob("a_90.o .nv.info");
    let r = eiattr::parse(&d).unwrap();
    let o = eiattr::rewrite_symbols(&r[0], |s| Some(s + 100)).unwrap();
    assert_eq!(o.as_record().sym_value(), Some((116, 24)));
    let e = eiattr::rewrite_symbols(&r[1], |_| None).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Symbol);
    assert_eq!(e.offset, Some(12));
    // Attributes without symbols come back unchanged whatever the map says.
    let k = blob("a_80.o .nv.info.kern_a");
    for rec in eiattr::parse(&k).unwrap() {
        if rec.symbol_fields() == SymFields::None {
            assert_eq!(
                eiattr::rewrite_symbols(&rec, |_| None)
                    .unwrap()
                    .as_record()
                    .value,
                rec.value
            );
        }
    }
}

#[test]
fn owned_records_encode_like_nvlink() {
    let mut out = Vec::new();
    OwnedRecord::words(EiAttr::EIATTR_MIN_STACK_SIZE, &[9, 0])
        .encode(&mut out)
        .unwrap();
    OwnedRecord::bval(EiAttr::EIATTR_NUM_BARRIERS, 2)
        .encode(&mut out)
        .unwrap();
    OwnedRecord::hval(EiAttr::EIATTR_MERCURY_ISA_VERSION, 0x0101)
        .encode(&mut out)
        .unwrap();
    OwnedRecord::nval(EiAttr::EIATTR_SW2861232_WAR)
        .encode(&mut out)
        .unwrap();
    assert_eq!(
        out,
        [4, 0x12, 8, 0, 9, 0, 0, 0, 0, 0, 0, 0, 2, 0x4c, 2, 0, 3, 0x5f, 1, 1, 1, 0x35, 0, 0]
    );
    let big = OwnedRecord::sval(EiAttr::EIATTR_EXTERNS, vec![0; 70000]);
    assert_eq!(
        big.encode(&mut Vec::new()).unwrap_err().kind,
        ErrorKind::Overflow
    );
    let mut bad = OwnedRecord::bval(EiAttr::EIATTR_NUM_BARRIERS, 1);
    bad.format = EiFormat::HVAL;
    assert!(bad.encode(&mut Vec::new()).is_err());
}

#[test]
fn truncated_and_unknown_records_fail_with_offsets() {
    let d = blob("a_90.o .nv.info");
    for cut in 1..d.len() {
        let res = eiattr::parse(&d[..cut]);
        if cut % 12 == 0 {
            assert!(res.is_ok());
        } else {
            let e = res.unwrap_err();
            assert_eq!(e.kind, ErrorKind::Malformed);
            assert_eq!(e.offset, Some((cut / 12 * 12) as u64), "cut {cut}");
        }
    }
    let e = eiattr::parse(&[3, 0x19, 8, 0, 7, 1, 0, 0]).unwrap_err();
    assert_eq!(e.offset, Some(4));
    assert!(e.message.contains("Unknown(0x07)"), "{}", e.message);
    // The iterator yields the good records, then one error, then stops.
    let items: Vec<_> = eiattr::Iter::<EiAttr>::new(&[3, 0x19, 8, 0, 4, 0x2f, 8, 0, 1]).collect();
    assert_eq!(items.len(), 2);
    assert!(items[0].is_ok() && items[1].is_err());
}

#[test]
fn compat_stream() {
    let d = blob("a_90.o .nv.compat");
    let r = compat::parse(&d).unwrap();
    let codes: Vec<EiCompat> = r.iter().map(|x| x.attr).collect();
    assert_eq!(
        codes,
        [
            EiCompat::EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET,
            EiCompat::EICOMPAT_ATTR_ISA_CLASS,
            EiCompat::EICOMPAT_ATTR_INST_TCGEN05_MMA,
            EiCompat::EICOMPAT_ATTR_MERCURY_ISA_MAJOR_MINOR_VERSION,
            EiCompat::EICOMPAT_ATTR_INST_TENSORMAP_V1,
            EiCompat::EICOMPAT_ATTR_ENABLE_OPPORTUNISTIC_FINALIZATION,
            EiCompat::EICOMPAT_ATTR_CAN_FASTPATH_FINALIZE,
        ]
    );
    assert_eq!(r[3].value, Value::Half(0x0101));
    assert_eq!(r[6].payload().unwrap().len(), 8);
    // nvlink drops CAN_FASTPATH_FINALIZE and keeps the rest in order.
    let out_bytes = blob("ab_90.cubin .nv.compat");
    let kept: Vec<_> = r
        .iter()
        .filter(|x| x.attr != EiCompat::EICOMPAT_ATTR_CAN_FASTPATH_FINALIZE)
        .copied()
        .collect();
    let mut enc = Vec::new();
    compat::encode(&kept, &mut enc).unwrap();
    assert_eq!(enc, out_bytes);
}

#[test]
fn names_and_unknown_codes() {
    assert_eq!(EiAttr::EIATTR_REGCOUNT.to_string(), "EIATTR_REGCOUNT");
    assert_eq!(EiAttr(0x2f), EiAttr::EIATTR_REGCOUNT);
    assert_eq!(EiAttr(0x63).to_string(), "Unknown(0x63)");
    assert_eq!(EiAttr(0x63).name(), None);
    assert_eq!(EiAttr::ALL.len(), 103);
    assert!(EiAttr::ALL.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(EiFormat(9).to_string(), "Unknown(0x09)");
    assert_eq!(EiFormat::SVAL.to_string(), "EIFMT_SVAL");
    assert_eq!(
        EiCompat(10).to_string(),
        "EICOMPAT_ATTR_CUDA_DRIVER_VERSION"
    );
    assert_eq!(EiCompat(13).to_string(), "Unknown(0x0d)");
    assert_eq!(CallGraphList(2).to_string(), "ADDRESS_TAKEN");
}

#[test]
fn symbol_field_table() {
    let sval = EiFormat::SVAL;
    for a in [
        EiAttr::EIATTR_PARAM_CBANK,
        EiAttr::EIATTR_FRAME_SIZE,
        EiAttr::EIATTR_MIN_STACK_SIZE,
        EiAttr::EIATTR_MAX_STACK_SIZE,
        EiAttr::EIATTR_LOAD_CACHE_REQUEST,
        EiAttr::EIATTR_REGCOUNT,
        EiAttr::EIATTR_SAM_REGION_STACK_SIZE,
        EiAttr::EIATTR_SAMPLER_INIT,
    ] {
        assert_eq!(eiattr::symbol_fields(a, sval, 8), SymFields::First, "{a}");
        assert_eq!(eiattr::symbol_fields(a, sval, 2), SymFields::Invalid, "{a}");
        assert_eq!(
            eiattr::symbol_fields(a, EiFormat::HVAL, 0),
            SymFields::None,
            "{a}"
        );
    }
    assert_eq!(
        eiattr::symbol_fields(EiAttr::EIATTR_EXTERNS, sval, 12),
        SymFields::All
    );
    assert_eq!(
        eiattr::symbol_fields(EiAttr::EIATTR_EXTERNS, sval, 6),
        SymFields::Invalid
    );
    assert_eq!(
        eiattr::symbol_fields(EiAttr::EIATTR_SYSCALLS_FALLBACK, sval, 16),
        SymFields::All
    );
    assert_eq!(
        eiattr::symbol_fields(EiAttr::EIATTR_KPARAM_INFO, sval, 12),
        SymFields::None
    );
    assert_eq!(SymFields::All.offsets(12).collect::<Vec<_>>(), [0, 4, 8]);
    assert_eq!(SymFields::First.offsets(8).collect::<Vec<_>>(), [0]);
    let rec = eiattr::parse(&[4, 0x0f, 2, 0, 1, 2]).unwrap();
    assert_eq!(rec[0].symbol_indices().unwrap_err().offset, Some(0));
    assert!(eiattr::rewrite_symbols(&rec[0], Some).is_err());
}

#[test]
fn tkinfo_notes_of_an_nvlink_output() {
    let d = blob("ab_90.cubin .note.nv.tkinfo");
    let ns = notes::parse_notes(&d).unwrap();
    assert_eq!(ns.len(), 3);
    assert_eq!(
        ns.iter().map(|n| n.offset).collect::<Vec<_>>(),
        [0, 0xa0, 0x144]
    );
    let t: Vec<TkInfo> = ns.iter().map(|n| n.tkinfo().unwrap().unwrap()).collect();
    assert_eq!(t[0].tool_name, b"nvlink");
    assert_eq!(t[0].tool_args, b"-arch sm_90 ");
    assert_eq!(t[0].version, 2);
    assert_eq!(t[0].object_file, b"");
    assert_eq!(
        t[0].tool_version,
        b"Cuda compilation tools, release 13.0, V13.0.88"
    );
    assert_eq!(
        t[0].tool_branch,
        b"Build cuda_13.0.r13.0/compiler.36424714_0"
    );
    assert_eq!(ns[0].desc.len(), 136);
    assert_eq!(t[1].tool_name, b"ptxas");
    assert_eq!(t[1].tool_args, b"-arch sm_90 -c  ");
    assert_eq!(ns[1].desc.len(), 140);
    // Rebuilding the section from the decoded notes gives the same bytes.
    let mut out = Vec::new();
    for x in &t {
        x.encode_note(&mut out).unwrap();
    }
    assert_eq!(out, d);
}

#[test]
fn cuinfo_note() {
    let d = blob("ab_90.cubin .note.nv.cuinfo");
    let ns = notes::parse_notes(&d).unwrap();
    let c = ns[0].cuinfo().unwrap().unwrap();
    assert_eq!(
        c,
        CuInfo {
            version: 2,
            virtual_sm: 90,
            cuda_api_version: 0x82
        }
    );
    assert!(ns[0].tkinfo().is_none());
    let mut out = Vec::new();
    c.encode_note(&mut out).unwrap();
    assert_eq!(out, d);
    assert!(CuInfo::parse(&[2, 0, 90]).is_err());
}

#[test]
fn bad_notes_fail() {
    let d = blob("ab_90.cubin .note.nv.tkinfo");
    for cut in [1, 11, 12, 20, 30, 100, 0xa0 + 5] {
        let e = notes::parse_notes(&d[..cut]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Malformed, "cut {cut}");
    }
    assert_eq!(
        notes::parse_notes(&d[..0xa0 + 5]).unwrap_err().offset,
        Some(0xa0)
    );
    // A string offset outside the block.
    let mut desc = notes::parse_notes(&d).unwrap()[0].desc.to_vec();
    desc[8] = 0xff;
    assert!(TkInfo::parse(&desc).is_err());
    assert!(TkInfo::parse(&desc[..20]).is_err());
    // An unterminated last string.
    let mut desc2 = notes::parse_notes(&d).unwrap()[0].desc.to_vec();
    let n = desc2.len();
    desc2.truncate(n - 4);
    assert!(TkInfo::parse(&desc2).is_err());
}

#[test]
fn callgraph_lists() {
    let d = blob("loc_90.o .nv.callgraph");
    let e = callgraph::parse_callgraph(&d).unwrap();
    assert_eq!(e[0], CallGraphEntry::Marker(CallGraphList::CALLS));
    assert_eq!(
        e[1],
        CallGraphEntry::Pair {
            first: 26,
            second: 17
        }
    );
    let g = CallGraph::parse(&d).unwrap();
    assert_eq!(
        g.calls,
        [CallEdge {
            caller: 26,
            callee: 17
        }]
    );
    assert_eq!(g.address_taken, [(17, 1)]);
    assert_eq!(g.indirect_calls, [(26, 1)]);
    assert_eq!(g.address_refs, [(26, 17)]);

    let empty = CallGraph::default();
    let mut out = Vec::new();
    empty.encode(&mut out);
    assert_eq!(out.len(), 32);
    assert_eq!(&out[..8], &[0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);

    assert_eq!(
        callgraph::parse_callgraph(&d[..13]).unwrap_err().offset,
        Some(8)
    );
    assert!(CallGraph::parse(&[1, 0, 0, 0, 2, 0, 0, 0]).is_err());
    let e = CallGraph::parse(&[0, 0, 0, 0, 0xfb, 0xff, 0xff, 0xff]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unsupported);
}

#[test]
fn prototypes() {
    let d = blob("ab_90.cubin .nv.prototype");
    assert_eq!(
        callgraph::parse_prototypes(&d).unwrap(),
        [PrototypeEntry {
            symbol: 12,
            signature: 1
        }]
    );
    assert!(callgraph::parse_prototypes(&d[..7]).is_err());
}

/// No parser or decoder may panic, whatever the bytes.
#[test]
fn no_panic_on_arbitrary_bytes() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut inputs: Vec<Vec<u8>> = Vec::new();
    for b in blobs() {
        for cut in 0..=b.bytes.len() {
            inputs.push(b.bytes[..cut].to_vec());
        }
        for _ in 0..200 {
            let mut m = b.bytes.clone();
            let i = rnd() as usize % m.len();
            m[i] = rnd() as u8;
            inputs.push(m);
        }
    }
    for _ in 0..2000 {
        let n = rnd() as usize % 64;
        inputs.push((0..n).map(|_| rnd() as u8).collect());
    }
    for d in &inputs {
        if let Ok(r) = eiattr::parse(d) {
            for x in &r {
                let _ = x.symbol_indices();
                let _ = x.sym_value();
                let _ = x.words();
                let _ = eiattr::rewrite_symbols(x, |s| s.checked_add(1));
            }
            let mut o = Vec::new();
            eiattr::encode(&r, &mut o).unwrap();
            assert_eq!(&o, d);
        }
        let _ = compat::parse(d);
        if let Ok(ns) = notes::parse_notes(d) {
            for n in ns {
                let _ = n.tkinfo();
                let _ = n.cuinfo();
                let _ = TkInfo::parse(n.desc);
            }
        }
        let _ = TkInfo::parse(d);
        let _ = CuInfo::parse(d);
        let _ = CallGraph::parse(d);
        let _ = callgraph::parse_prototypes(d);
    }
}
