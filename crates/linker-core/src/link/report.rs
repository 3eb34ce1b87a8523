//! Reports about a link (called after the write phase when asked for in
//! [`crate::ReportOptions`]): the call graph (nvlink's `--dump-callgraph` text
//! and Graphviz DOT), the link map (nvlink has none) and `--why-live`.
//!
//! All of them are built from the phases' results only, in input order, so
//! they are deterministic.

use super::live::Live;
use super::sections::{Body, Plan};
use super::InputFile;
use crate::cubin::eiattr::{self, EiAttr};
use crate::cubin::Cubin;
use crate::elf::*;
use std::collections::{HashMap, VecDeque};
use std::fmt::Write;

/// Own register count of every function (from `EIATTR_REGCOUNT`), by function index.
fn regcounts(files: &[InputFile<'_>], live: &Live) -> Vec<Option<u32>> {
    let mut by_sym: HashMap<(u32, u32), u32> = HashMap::new();
    for f in files {
        for s in f
            .cubin
            .sections
            .iter()
            .filter(|s| s.sh_type == SHT_CUDA_INFO && s.info_section().is_none())
        {
            let Ok(records) = eiattr::parse(s.data) else {
                continue;
            };
            for r in records.iter().filter(|r| r.attr == EiAttr::EIATTR_REGCOUNT) {
                if let Some((sym, v)) = r.sym_value() {
                    by_sym.insert((f.id.0, sym), v);
                }
            }
        }
    }
    live.funcs
        .iter()
        .map(|f| by_sym.get(&(f.key.file.0, f.sym)).copied())
        .collect()
}

fn func_name<'d>(files: &[InputFile<'d>], live: &Live, fi: u32) -> &'d str {
    let f = &live.funcs[fi as usize];
    files[f.key.file.0 as usize].cubin.symbols[f.sym as usize].name
}

/// The call graph as `nvlink --dump-callgraph` prints it: one numbered line per
/// function (input order; removed functions print an empty line), `^` entry,
/// `&` address taken, `[N]` registers, `-> callees`; then one line per kernel
/// whose register count a callee raised.
pub(crate) fn callgraph_text(files: &[InputFile<'_>], live: &Live, arch: crate::SmArch) -> String {
    let regs = regcounts(files, live);
    let mut out = format!(
        "callgraph for {arch}:\n\
         # A: s -> B // s (number A) potentially calls B\n\
         # s [N]     // s uses N registers\n\
         # ^s        // s is entry point\n\
         # &s        // s has address taken\n"
    );
    for (i, f) in live.funcs.iter().enumerate() {
        if !live.live[i] {
            let _ = writeln!(out, "{}: ", i + 1);
            continue;
        }
        let mark = if f.is_kernel {
            "^"
        } else if f.address_taken {
            "&"
        } else {
            ""
        };
        let r = regs[i].map(|r| format!(" [{r}]")).unwrap_or_default();
        let callees: Vec<String> = f.callees.iter().map(|c| (c + 1).to_string()).collect();
        let _ = writeln!(
            out,
            "{}: {mark}{}{r} -> {}",
            i + 1,
            func_name(files, live, i as u32),
            callees.join(" ")
        )
        .map(|_| ());
        if callees.is_empty() {
            // nvlink writes "->" with no trailing space.
            out.truncate(out.len() - 2);
            out.push('\n');
        }
    }
    // Register counts raised in kernels by their call trees.
    for (k, f) in live.funcs.iter().enumerate() {
        if !f.is_kernel || !live.live[k] {
            continue;
        }
        let own = regs[k].unwrap_or(0);
        let mut best: Option<(u32, u32)> = None;
        for fi in reachable(live, k as u32) {
            if let Some(r) = regs[fi as usize] {
                if r > own && best.is_none_or(|(_, b)| r > b) {
                    best = Some((fi, r));
                }
            }
        }
        if let Some((fi, r)) = best {
            let _ = writeln!(
                out,
                "regcount {r} for {} propagated to entry {}",
                func_name(files, live, fi),
                func_name(files, live, k as u32)
            );
        }
    }
    out
}

/// Functions reachable from `root` (excluding it), breadth first, each once.
fn reachable(live: &Live, root: u32) -> Vec<u32> {
    let mut seen = vec![false; live.funcs.len()];
    seen[root as usize] = true;
    let mut out = Vec::new();
    let mut queue: VecDeque<u32> = live.funcs[root as usize].callees.iter().copied().collect();
    while let Some(f) = queue.pop_front() {
        if std::mem::replace(&mut seen[f as usize], true) {
            continue;
        }
        out.push(f);
        queue.extend(live.funcs[f as usize].callees.iter().copied());
    }
    out
}

fn dot_quote(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\\\""))
}

/// The call graph in Graphviz DOT: kernels as boxes, address-taken functions
/// dashed, removed (dead) functions grey; node labels carry register counts.
pub(crate) fn callgraph_dot(files: &[InputFile<'_>], live: &Live) -> String {
    let regs = regcounts(files, live);
    let mut out = String::from("digraph callgraph {\n  node [shape=ellipse];\n");
    for (i, f) in live.funcs.iter().enumerate() {
        let name = func_name(files, live, i as u32);
        let label = match regs[i] {
            Some(r) => format!("{name}\\n{r} regs"),
            None => name.to_string(),
        };
        let mut attrs = vec![format!("label={}", dot_quote(&label))];
        if f.is_kernel {
            attrs.push("shape=box".into());
        }
        if f.address_taken {
            attrs.push("style=dashed".into());
        }
        if !live.live[i] {
            attrs.push("color=grey".into());
            attrs.push("fontcolor=grey".into());
        }
        let _ = writeln!(out, "  f{i} [{}];", attrs.join(", "));
    }
    for (i, f) in live.funcs.iter().enumerate() {
        for c in &f.callees {
            let _ = writeln!(out, "  f{i} -> f{c};");
        }
    }
    out.push_str("}\n");
    out
}

/// Why each named function is in the output: the chain of callers (or
/// address takers) from a root kernel, or why it is not there.
pub(crate) fn why_live(files: &[InputFile<'_>], live: &Live, names: &[String]) -> String {
    let mut out = String::new();
    for name in names {
        let matches: Vec<u32> = (0..live.funcs.len() as u32)
            .filter(|&i| func_name(files, live, i) == name)
            .collect();
        if matches.is_empty() {
            let _ = writeln!(out, "{name}: no function of that name is defined");
            continue;
        }
        for fi in matches {
            let f = &live.funcs[fi as usize];
            let file = files[f.key.file.0 as usize].name;
            if !live.live[fi as usize] {
                let _ = writeln!(
                    out,
                    "{name} ({file}): removed (no kernel calls it or takes its address)"
                );
                continue;
            }
            if f.is_kernel {
                let _ = writeln!(out, "{name} ({file}): kept: it is a kernel (a root)");
                continue;
            }
            match chain_from_root(live, fi) {
                Some(chain) => {
                    let path: Vec<String> = chain
                        .iter()
                        .map(|&c| func_name(files, live, c).to_string())
                        .collect();
                    let _ = writeln!(
                        out,
                        "{name} ({file}): kept: {}",
                        describe_chain(live, &chain, &path)
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "{name} ({file}): kept: its address is taken outside code (a root, e.g. a function-pointer table)"
                    );
                }
            }
        }
    }
    out
}

fn describe_chain(live: &Live, chain: &[u32], names: &[String]) -> String {
    let mut s = format!("kernel {}", names[0]);
    for w in 1..chain.len() {
        let callee = &live.funcs[chain[w] as usize];
        let verb = if callee.address_taken {
            "calls or takes the address of"
        } else {
            "calls"
        };
        let _ = write!(s, " {verb} {}", names[w]);
        if w + 1 < chain.len() {
            s.push(',');
        }
    }
    s
}

/// The shortest chain kernel → ... → `target` over live functions.
fn chain_from_root(live: &Live, target: u32) -> Option<Vec<u32>> {
    let n = live.funcs.len();
    let mut parent: Vec<Option<u32>> = vec![None; n];
    let mut seen = vec![false; n];
    let mut queue: VecDeque<u32> = VecDeque::new();
    for (i, f) in live.funcs.iter().enumerate() {
        if f.is_kernel && live.live[i] {
            seen[i] = true;
            queue.push_back(i as u32);
        }
    }
    while let Some(f) = queue.pop_front() {
        if f == target {
            let mut chain = vec![f];
            let mut cur = f;
            while let Some(p) = parent[cur as usize] {
                chain.push(p);
                cur = p;
            }
            chain.reverse();
            return Some(chain);
        }
        for &c in &live.funcs[f as usize].callees {
            if !std::mem::replace(&mut seen[c as usize], true) {
                parent[c as usize] = Some(f);
                queue.push_back(c);
            }
        }
    }
    None
}

/// The link map: every output section (index, name, type, size) with its
/// input contributions (file or `archive(member)`, input section, offset,
/// size), then every symbol of the output with its section, value and size.
pub(crate) fn map(files: &[InputFile<'_>], plan: &Plan, cubin: &[u8]) -> String {
    let parsed = Cubin::parse(cubin);
    let mut out = String::from("Output sections and their input contributions\n");
    let _ = writeln!(
        out,
        "  {:<4} {:<36} {:<20} {:>10}  contributions (offset size file:section)",
        "idx", "section", "type", "size"
    );
    for (pos, &id) in plan.order.iter().enumerate().skip(1) {
        let s = plan.sec(id);
        // Final sizes (`.shstrtab`'s is known only to the layout).
        let size = parsed
            .as_ref()
            .ok()
            .and_then(|c| c.sections.get(pos))
            .map_or(s.size, |x| x.size);
        let _ = writeln!(
            out,
            "  [{pos:>2}] {:<36} {:<20} {:>#10x}",
            s.name,
            section_type_name(s.sh_type),
            size
        );
        if let Body::Pieces(pieces) = &s.body {
            for p in pieces {
                let f = &files[p.file.0 as usize];
                let is = &f.cubin.sections[p.section as usize];
                let _ = writeln!(
                    out,
                    "         {:>#10x} {:>#8x}  {}:{}",
                    p.offset, is.size, f.name, is.name
                );
            }
        } else if matches!(s.body, Body::Bytes(_)) && s.size > 0 {
            let _ = writeln!(out, "         (built by the linker)");
        }
    }
    out.push_str("\nSymbols\n");
    match &parsed {
        Ok(c) => {
            for sym in c.symbols.iter().skip(1) {
                if sym.ty() == STT_SECTION {
                    continue;
                }
                let place = match sym.section() {
                    Some(i) => c.section_name(i),
                    None if sym.is_undefined() => "UNDEFINED".to_string(),
                    None => format!("shndx {:#x}", sym.shndx),
                };
                let bind = match sym.bind() {
                    STB_LOCAL => "local",
                    STB_WEAK => "weak",
                    _ => "global",
                };
                let _ = writeln!(
                    out,
                    "  {:<40} {:<6} {:<32} value {:#08x} size {:#06x}",
                    sym.name, bind, place, sym.value, sym.size
                );
            }
        }
        Err(e) => {
            let _ = writeln!(out, "  (output unreadable: {e})");
        }
    }
    out
}
