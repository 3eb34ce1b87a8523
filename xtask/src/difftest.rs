//! `cargo xtask difftest [--seed S] [--count K] [--archs 75,80,..] [--keep DIR]`:
//! random differential link testing of culink against nvlink.
//!
//! Each iteration generates a random multi-object PTX program from its seed
//! ([`generate`]), assembles every object with the pinned `ptxas -arch=sm_XX -c`,
//! links the objects with nvlink and with culink (same command line) and checks:
//!
//! * both succeed or both fail; when both fail, the error classes (undefined
//!   reference, multiple definition, size mismatch, ...) agree;
//! * when both succeed, `culink diff` finds the outputs equivalent, except for the
//!   documented Blackwell re-finalization differences (instructions that differ
//!   only in their scheduling control field at sm_100+);
//! * both warn about statically unknown stack sizes or neither does;
//! * culink's output is byte-identical with `RAYON_NUM_THREADS=1` and `2`.
//!
//! A mismatch is saved under `target/difftest/fail-<seed>/` (PTX, objects, both
//! outputs, the diff, a `replay.txt`) and the iteration's seed printed: `cargo
//! xtask difftest --seed <seed> --count 1 --archs <arch>` replays it exactly (the
//! program depends only on the seed; the arch is drawn from the seed and the
//! `--archs` list, so replaying with the one arch gives the same link).
//!
//! The generator ([`generate`]) mixes cross-object device functions of two
//! signatures, direct, recursive and indirect calls (through `mov` of a function
//! address or through function-pointer tables in initialized `.global` data),
//! weak/strong/static/common definitions duplicated across objects, extern
//! declarations (used, unused, of never-defined symbols, occasionally of a wrong
//! size), initialized data holding addresses (`f`, `g`, `generic(g)`, `g+8`),
//! module `.const` data, per-kernel static `.shared`, module `.shared`, dynamic
//! `.extern .shared`, `.local` stack arrays, textures, samplers and surfaces
//! (unified and independent texture mode), loops, dead functions and kernels.

use crate::util::{io_err, show, tools_dir, workspace_root};
use linker_core::cubin::Cubin;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

// ---------------------------------------------------------------------------
// Random numbers: splitmix64.

/// A splitmix64 generator: small, fast and stable across platforms and versions.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as usize
    }

    /// True with probability `pct` percent.
    pub fn chance(&mut self, pct: u32) -> bool {
        self.next_u64() % 100 < u64::from(pct)
    }

    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.range(0, v.len() - 1)]
    }

    pub fn u32(&mut self) -> u32 {
        self.next_u64() as u32
    }
}

// ---------------------------------------------------------------------------
// The program model.

/// Architectures the tester draws from by default.
pub const ALL_ARCHS: &[&str] = &[
    "75", "80", "86", "89", "90", "90a", "100", "100a", "103", "120", "121",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Link {
    Visible,
    Weak,
    Static,
    Common,
}

impl Link {
    fn prefix(self) -> &'static str {
        match self {
            Link::Visible => ".visible ",
            Link::Weak => ".weak ",
            Link::Static => "",
            Link::Common => ".common ",
        }
    }
}

/// Device function signatures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sig {
    /// `(.param .b32 r) f(.param .b32 x)`
    Int,
    /// `(.param .b64 r) f(.param .b64 x, .param .b32 y)`
    Pair,
}

impl Sig {
    fn proto(self, name: &str) -> String {
        match self {
            Sig::Int => format!("(.param .b32 r) {name}(.param .b32 x)"),
            Sig::Pair => format!("(.param .b64 r) {name}(.param .b64 x, .param .b32 y)"),
        }
    }
    fn callproto(self) -> &'static str {
        match self {
            Sig::Int => ".callprototype (.param .b32 _) _ (.param .b32 _);",
            Sig::Pair => ".callprototype (.param .b64 _) _ (.param .b64 _, .param .b32 _);",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Elem {
    B8,
    B16,
    B32,
    U64,
}

impl Elem {
    fn size(self) -> usize {
        match self {
            Elem::B8 => 1,
            Elem::B16 => 2,
            Elem::B32 => 4,
            Elem::U64 => 8,
        }
    }
    fn decl(self) -> &'static str {
        match self {
            Elem::B8 => ".b8",
            Elem::B16 => ".b16",
            Elem::B32 => ".b32",
            Elem::U64 => ".u64",
        }
    }
    fn ld(self) -> &'static str {
        match self {
            Elem::B8 => "u8",
            Elem::B16 => "u16",
            Elem::B32 => "u32",
            Elem::U64 => "u64",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Space {
    Global,
    Const,
}

#[derive(Debug, Clone)]
struct Func {
    name: String,
    sig: Sig,
    /// (object, linkage); empty: never defined (an undefined reference if used).
    defs: Vec<(usize, Link)>,
}

#[derive(Debug, Clone)]
struct VarDef {
    obj: usize,
    link: Link,
    count: usize,
    init: bool,
}

#[derive(Debug, Clone)]
struct Var {
    name: String,
    space: Space,
    elem: Elem,
    align: usize,
    count: usize,
    defs: Vec<VarDef>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TexKind {
    Tex,
    Sampler,
    Surf,
}

#[derive(Debug, Clone)]
struct Tex {
    name: String,
    kind: TexKind,
    obj: usize,
    visible: bool,
}

#[derive(Debug, Clone)]
struct Kernel {
    name: String,
    defs: Vec<(usize, Link)>,
}

struct Model {
    nobj: usize,
    indep: Vec<bool>,
    funcs: Vec<Func>,
    vars: Vec<Var>,
    texs: Vec<Tex>,
    kernels: Vec<Kernel>,
    /// Per object: dynamic `.extern .shared` arrays (name, align).
    dyn_shared: Vec<Vec<(String, usize)>>,
    /// Per object: module-level static `.shared` arrays (name, words).
    mod_shared: Vec<Vec<(String, usize)>>,
}

/// A generated program: the arch and the PTX of each object, in link order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// `75`, `90a`, `100`, ...
    pub arch: String,
    pub objects: Vec<String>,
}

impl Program {
    pub fn sm(&self) -> String {
        format!("sm_{}", self.arch)
    }
    pub fn sm_number(&self) -> u32 {
        self.arch
            .trim_end_matches(|c: char| !c.is_ascii_digit())
            .parse()
            .unwrap_or(0)
    }
}

/// The arch for `seed` from `archs`: drawn by its own generator, so the program
/// itself does not depend on the list.
pub fn arch_for(seed: u64, archs: &[String]) -> String {
    let mut r = Rng::new(seed ^ 0xA5C3_0000_DEAD_BEEF);
    r.pick(archs).clone()
}

fn unique_static(
    rng: &mut Rng,
    taken: &mut BTreeSet<(usize, String)>,
    obj: usize,
    base: &str,
) -> String {
    loop {
        let n = format!("{base}{}", rng.range(0, 3));
        if taken.insert((obj, n.clone())) {
            return n;
        }
        // Fall back to a fresh name when the small pool is used up in this object.
        let n = format!("{base}x{}", rng.u32() % 100_000);
        if taken.insert((obj, n.clone())) {
            return n;
        }
    }
}

fn build_model(rng: &mut Rng) -> Model {
    let nobj = rng.range(2, 6);
    let indep: Vec<bool> = (0..nobj).map(|_| rng.chance(15)).collect();
    let mut taken: BTreeSet<(usize, String)> = BTreeSet::new();

    // Device functions.
    let mut funcs = Vec::new();
    let nfunc = rng.range(nobj, 4 * nobj);
    for i in 0..nfunc {
        let sig = if rng.chance(30) { Sig::Pair } else { Sig::Int };
        let home = rng.range(0, nobj - 1);
        let roll = rng.range(0, 99);
        if roll < 3 {
            // Declared (and maybe used) but never defined.
            funcs.push(Func {
                name: format!("fundef{i}"),
                sig,
                defs: vec![],
            });
            continue;
        }
        if roll < 28 {
            let name = unique_static(rng, &mut taken, home, "sfn");
            funcs.push(Func {
                name,
                sig,
                defs: vec![(home, Link::Static)],
            });
            continue;
        }
        let link = if roll < 45 { Link::Weak } else { Link::Visible };
        let mut defs = vec![(home, link)];
        if rng.chance(22) {
            for _ in 0..rng.range(1, 2) {
                let o = rng.range(0, nobj - 1);
                if defs.iter().any(|d| d.0 == o) {
                    continue;
                }
                // Mostly weak copies; rarely a second strong one (multiple definition).
                let l = if rng.chance(88) {
                    Link::Weak
                } else {
                    Link::Visible
                };
                defs.push((o, l));
            }
        }
        funcs.push(Func {
            name: format!("fn{i}"),
            sig,
            defs,
        });
    }

    // Variables.
    let mut vars = Vec::new();
    let nvar = rng.range(1, 3 * nobj);
    for i in 0..nvar {
        let space = if rng.chance(25) {
            Space::Const
        } else {
            Space::Global
        };
        let elem = *rng.pick(&[
            Elem::B8,
            Elem::B16,
            Elem::B32,
            Elem::U64,
            Elem::U64,
            Elem::B32,
        ]);
        let align = (*rng.pick(&[1usize, 2, 4, 8, 16])).max(elem.size());
        let count = if rng.chance(10) {
            rng.range(100, 600)
        } else {
            rng.range(1, 24)
        };
        let home = rng.range(0, nobj - 1);
        let roll = rng.range(0, 99);
        if roll < 3 {
            vars.push(Var {
                name: format!("gundef{i}"),
                space,
                elem,
                align,
                count,
                defs: vec![],
            });
            continue;
        }
        if roll < 25 {
            let name = unique_static(
                rng,
                &mut taken,
                home,
                if space == Space::Const { "scv" } else { "sgv" },
            );
            let init = rng.chance(50);
            vars.push(Var {
                name,
                space,
                elem,
                align,
                count,
                defs: vec![VarDef {
                    obj: home,
                    link: Link::Static,
                    count,
                    init,
                }],
            });
            continue;
        }
        let link = if space == Space::Global && roll < 33 {
            Link::Common
        } else if roll < 45 {
            Link::Weak
        } else {
            Link::Visible
        };
        let init = link != Link::Common && rng.chance(55);
        let mut defs = vec![VarDef {
            obj: home,
            link,
            count,
            init,
        }];
        if rng.chance(22) {
            for _ in 0..rng.range(1, 2) {
                let o = rng.range(0, nobj - 1);
                if defs.iter().any(|d| d.obj == o) {
                    continue;
                }
                let l = match link {
                    Link::Common => {
                        if rng.chance(80) {
                            Link::Common
                        } else {
                            Link::Visible
                        }
                    }
                    _ => {
                        if rng.chance(90) {
                            Link::Weak
                        } else {
                            Link::Visible
                        }
                    }
                };
                // Commons may differ in size; others rarely (a size-mismatch error).
                let c = if l == Link::Common || rng.chance(8) {
                    rng.range(1, 24)
                } else {
                    count
                };
                let init = l != Link::Common && rng.chance(50);
                defs.push(VarDef {
                    obj: o,
                    link: l,
                    count: c,
                    init,
                });
            }
        }
        let prefix = if space == Space::Const { "cv" } else { "gv" };
        vars.push(Var {
            name: format!("{prefix}{i}"),
            space,
            elem,
            align,
            count,
            defs,
        });
    }

    // Textures, samplers, surfaces.
    let mut texs = Vec::new();
    for (o, &is_indep) in indep.iter().enumerate() {
        if !rng.chance(35) {
            continue;
        }
        for k in 0..rng.range(1, 3) {
            texs.push(Tex {
                name: format!("tx{o}_{k}"),
                kind: TexKind::Tex,
                obj: o,
                visible: rng.chance(50),
            });
        }
        if rng.chance(50) {
            texs.push(Tex {
                name: format!("sf{o}"),
                kind: TexKind::Surf,
                obj: o,
                visible: rng.chance(50),
            });
        }
        if is_indep {
            for k in 0..rng.range(1, 2) {
                texs.push(Tex {
                    name: format!("smp{o}_{k}"),
                    kind: TexKind::Sampler,
                    obj: o,
                    visible: rng.chance(50),
                });
            }
        }
    }

    // Kernels.
    let mut kernels = Vec::new();
    let nk = rng.range(1, 2 * nobj);
    for i in 0..nk {
        let home = rng.range(0, nobj - 1);
        let roll = rng.range(0, 99);
        let link = if roll < 10 {
            Link::Static
        } else if roll < 20 {
            Link::Weak
        } else {
            Link::Visible
        };
        let name = if link == Link::Static {
            unique_static(rng, &mut taken, home, "sk")
        } else {
            format!("kern{i}")
        };
        let mut defs = vec![(home, link)];
        if link != Link::Static && rng.chance(10) {
            let o = rng.range(0, nobj - 1);
            if o != home {
                defs.push((
                    o,
                    if rng.chance(85) {
                        Link::Weak
                    } else {
                        Link::Visible
                    },
                ));
            }
        }
        kernels.push(Kernel { name, defs });
    }

    let dyn_shared = (0..nobj)
        .map(|_| {
            (0..rng.range(0, 2))
                .map(|k| (format!("dyn{k}"), *rng.pick(&[1usize, 4, 8, 16])))
                .collect()
        })
        .collect();
    let mod_shared = (0..nobj)
        .map(|o| {
            (0..rng.range(0, 1))
                .map(|k| (format!("msh{o}_{k}"), rng.range(1, 64)))
                .collect()
        })
        .collect();
    Model {
        nobj,
        indep,
        funcs,
        vars,
        texs,
        kernels,
        dyn_shared,
        mod_shared,
    }
}

/// Extern declarations an object needs, collected while its code is generated.
#[derive(Default)]
struct Needs {
    funcs: BTreeSet<usize>,
    /// (var, declared count: None for `[]`)
    vars: BTreeSet<(usize, Option<usize>)>,
    texs: BTreeSet<usize>,
}

struct ObjGen<'a> {
    m: &'a Model,
    obj: usize,
    needs: Needs,
    label: usize,
    /// Choices added after the generator's first version, from a stream of
    /// their own so that older seeds still make the same programs (plus the
    /// additions).
    extra: Rng,
    /// A third stream, for fences (added after the jump tables), so that
    /// seeds keep their earlier additions too.
    fences: Rng,
    /// A fourth stream, for kernel performance directives (`.maxntid`,
    /// `.reqntid`, `.minnctapersm`, `.maxnreg`), added after the fences.
    directives: Rng,
    /// A fifth stream (added after the directives): cluster directives and
    /// declarations that leave out a variable's `.managed` attribute.
    later: Rng,
    /// Per variable: `.attribute(.managed)` (global variables only; from a
    /// program-wide stream of its own).
    managed: &'a [bool],
    /// Whether the target has thread-block clusters (sm_90+): their
    /// directives are drawn for every kernel and written only then.
    clusters: bool,
    /// The system calls the object's code makes (`vprintf`; `malloc` and
    /// `free`), declared `.extern` and resolved by no object: the driver's.
    printf: bool,
    heap: bool,
}

impl ObjGen<'_> {
    fn defines_func(&self, f: usize) -> bool {
        self.m.funcs[f].defs.iter().any(|d| d.0 == self.obj)
    }
    fn func_visible(&self, f: usize) -> bool {
        let d = &self.m.funcs[f].defs;
        self.defines_func(f) || !d.iter().any(|x| x.1 == Link::Static)
    }
    fn defines_var(&self, v: usize) -> bool {
        self.m.vars[v].defs.iter().any(|d| d.obj == self.obj)
    }
    fn var_visible(&self, v: usize) -> bool {
        let d = &self.m.vars[v].defs;
        self.defines_var(v) || !d.iter().any(|x| x.link == Link::Static)
    }

    /// Marks function `f` used here (an extern declaration when defined elsewhere).
    fn use_func(&mut self, f: usize) {
        if !self.defines_func(f) {
            self.needs.funcs.insert(f);
        }
    }
    fn use_var(&mut self, rng: &mut Rng, v: usize) {
        if !self.defines_var(v) {
            let var = &self.m.vars[v];
            let decl = if rng.chance(8) {
                None
            } else if rng.chance(3) {
                Some(var.count + 1)
            } else {
                // Declare with the first definition's size (the home object's).
                Some(var.defs.first().map(|d| d.count).unwrap_or(var.count))
            };
            // One declaration per variable and object.
            if !self.needs.vars.iter().any(|x| x.0 == v) {
                self.needs.vars.insert((v, decl));
            }
        }
    }
    fn var_count_here(&self, v: usize) -> usize {
        let var = &self.m.vars[v];
        if let Some(d) = var.defs.iter().find(|d| d.obj == self.obj) {
            return d.count;
        }
        match self.needs.vars.iter().find(|x| x.0 == v) {
            Some((_, Some(c))) => *c,
            _ => var.count,
        }
    }

    fn callable_funcs(&self) -> Vec<usize> {
        (0..self.m.funcs.len())
            .filter(|&f| self.func_visible(f))
            .collect()
    }
    fn usable_vars(&self, space: Option<Space>, elem: Option<Elem>) -> Vec<usize> {
        (0..self.m.vars.len())
            .filter(|&v| self.var_visible(v))
            .filter(|&v| space.is_none_or(|s| self.m.vars[v].space == s))
            .filter(|&v| elem.is_none_or(|e| self.m.vars[v].elem == e))
            .collect()
    }
    fn usable_texs(&self, kind: TexKind) -> Vec<usize> {
        let mode = self.m.indep[self.obj];
        (0..self.m.texs.len())
            .filter(|&t| {
                let x = &self.m.texs[t];
                x.kind == kind && (x.obj == self.obj || (x.visible && self.m.indep[x.obj] == mode))
            })
            .collect()
    }
    fn use_tex(&mut self, t: usize) {
        if self.m.texs[t].obj != self.obj {
            self.needs.texs.insert(t);
        }
    }

    fn call(&mut self, rng: &mut Rng, body: &mut String, f: usize, indirect: Option<String>) {
        self.use_func(f);
        let func = &self.m.funcs[f];
        let (name, sig) = (func.name.clone(), func.sig);
        let l = self.label;
        self.label += 1;
        let (target, proto) = match indirect {
            Some(reg) => (reg, format!(", proto{l}")),
            None => (name, String::new()),
        };
        let uni = if proto.is_empty() && rng.chance(70) {
            ".uni"
        } else {
            ""
        };
        body.push_str("\t{\n");
        if !proto.is_empty() {
            let _ = writeln!(body, "\tproto{l}: {}", sig.callproto());
        }
        match sig {
            Sig::Int => {
                let _ = writeln!(
                    body,
                    "\t.param .b32 pa{l};\n\t.param .b32 pr{l};\n\tst.param.b32 [pa{l}], %r1;\n\tcall{uni} (pr{l}), {target}, (pa{l}){proto};\n\tld.param.b32 %r3, [pr{l}];\n\t}}\n\tadd.u32 %r1, %r1, %r3;"
                );
            }
            Sig::Pair => {
                let _ = writeln!(
                    body,
                    "\t.param .b64 pa{l};\n\t.param .b32 pb{l};\n\t.param .b64 pr{l};\n\tcvt.u64.u32 %rd3, %r1;\n\tst.param.b64 [pa{l}], %rd3;\n\tst.param.b32 [pb{l}], %r1;\n\tcall{uni} (pr{l}), {target}, (pa{l}, pb{l}){proto};\n\tld.param.b64 %rd3, [pr{l}];\n\t}}\n\tcvt.u32.u64 %r3, %rd3;\n\tadd.u32 %r1, %r1, %r3;"
                );
            }
        }
    }

    /// One random operation on the accumulator `%r1`.
    /// A `brx.idx` through a table of 2-5 targets: ptxas puts the table in
    /// the function's constant bank 2 (`.nv.constant2.<fn>`) and, on
    /// Blackwell, its Mercury twin `.nv.merc.nv.constant.optimizer.<fn>`,
    /// which the link merges per kernel.
    fn jump_table(&mut self, body: &mut String) {
        let l = self.label;
        self.label += 1;
        let n = self.extra.range(2, 5);
        let targets: Vec<String> = (0..n).map(|i| format!("jt{l}_{i}")).collect();
        let _ = writeln!(
            body,
            "	rem.u32 %r7, %r1, {n};
	ts{l}: .branchtargets {};
	brx.idx %r7, ts{l};",
            targets.join(", ")
        );
        for (i, t) in targets.iter().enumerate() {
            let c = self.extra.u32() | 1;
            let op = ["add.u32", "mul.lo.u32", "xor.b32"][i % 3];
            let _ = writeln!(
                body,
                "{t}:
	{op} %r1, %r1, {c};
	bra.uni jt{l}_end;"
            );
        }
        let _ = writeln!(body, "jt{l}_end:");
    }

    fn op(&mut self, rng: &mut Rng, body: &mut String, decls: &mut String, in_kernel: bool) {
        if self.extra.chance(8) {
            self.jump_table(body);
        }
        if self.extra.chance(4) {
            // A special register whose use ptxas records per function and
            // nvlink adds to the kernels reaching it (`%ctaid.z` before
            // sm_90: EIATTR_CTAIDZ_USED).
            let _ = writeln!(body, "\tmov.u32 %r7, %ctaid.z;\n\tadd.u32 %r1, %r1, %r7;");
        }
        if !in_kernel && self.fences.chance(5) {
            // A memory fence in a device function: on Blackwell its SASS run
            // (fillers, MEMBARs, ERRBAR, CGAERRBAR, CCTL) is one capsule
            // instruction behind a span prefix, which moves the capsule
            // operands after it. Kept out of kernels, which nvlink
            // re-finalizes when they hold fences (docs/blackwell.md §8).
            let fence = ["membar.gl;", "fence.sc.gpu;", "fence.acq_rel.gpu;"];
            let _ = writeln!(body, "\t{}", fence[self.fences.range(0, 2)]);
        }
        match rng.range(0, 13) {
            0 | 1 => {
                let c = rng.u32() | 1;
                let _ = writeln!(
                    body,
                    "\tmul.lo.u32 %r1, %r1, {c};\n\tshr.u32 %r2, %r1, {};\n\txor.b32 %r1, %r1, %r2;",
                    rng.range(3, 17)
                );
            }
            2 | 3 => {
                let fs = self.callable_funcs();
                if !fs.is_empty() {
                    let f = *rng.pick(&fs);
                    self.call(rng, body, f, None);
                }
            }
            4 => {
                // Indirect call through a function address in a register.
                let fs = self.callable_funcs();
                if !fs.is_empty() {
                    let f = *rng.pick(&fs);
                    let name = self.m.funcs[f].name.clone();
                    self.use_func(f);
                    let _ = writeln!(body, "\tmov.u64 %rd4, {name};");
                    self.call(rng, body, f, Some("%rd4".into()));
                }
            }
            5 => {
                // Indirect call through a pointer loaded from a .u64 global.
                let vs = self.usable_vars(Some(Space::Global), Some(Elem::U64));
                let fs = self.callable_funcs();
                if !vs.is_empty() && !fs.is_empty() {
                    let v = *rng.pick(&vs);
                    self.use_var(rng, v);
                    let k = rng.range(0, self.var_count_here(v).max(1) - 1);
                    let name = &self.m.vars[v].name;
                    let _ = writeln!(body, "\tld.global.u64 %rd4, [{name}+{}];", 8 * k);
                    let f = *rng.pick(&fs);
                    self.call(rng, body, f, Some("%rd4".into()));
                }
            }
            6 | 7 => {
                let vs = self.usable_vars(None, None);
                if !vs.is_empty() {
                    let v = *rng.pick(&vs);
                    self.use_var(rng, v);
                    let var = &self.m.vars[v];
                    let n = self.var_count_here(v).max(1);
                    let off = var.elem.size() * rng.range(0, n - 1);
                    let sp = if var.space == Space::Const {
                        "const"
                    } else {
                        "global"
                    };
                    let t = var.elem.ld();
                    let name = var.name.clone();
                    let elem = var.elem;
                    let generic = var.space == Space::Global && rng.chance(30);
                    let addr = if generic {
                        let _ = writeln!(
                            body,
                            "\tmov.u64 %rd7, {name};\n\tcvta.global.u64 %rd7, %rd7;"
                        );
                        format!("[%rd7+{off}]")
                    } else {
                        format!("[{name}+{off}]")
                    };
                    let ld = if generic {
                        format!("ld.{t}")
                    } else {
                        format!("ld.{sp}.{t}")
                    };
                    if elem == Elem::U64 {
                        let _ = writeln!(body, "\t{ld} %rd8, {addr};\n\tcvt.u32.u64 %r3, %rd8;\n\tadd.u32 %r1, %r1, %r3;");
                    } else {
                        let _ = writeln!(body, "\t{ld} %r3, {addr};\n\tadd.u32 %r1, %r1, %r3;");
                    }
                    if var.space == Space::Global && rng.chance(50) {
                        let st = if generic {
                            format!("st.{t}")
                        } else {
                            format!("st.global.{t}")
                        };
                        if elem == Elem::U64 {
                            let _ =
                                writeln!(body, "\tcvt.u64.u32 %rd8, %r1;\n\t{st} {addr}, %rd8;");
                        } else {
                            let _ = writeln!(body, "\t{st} {addr}, %r1;");
                        }
                    }
                }
            }
            8 => {
                // Stack: a .local array indexed dynamically.
                let l = self.label;
                self.label += 1;
                let words = 1usize << rng.range(2, 6);
                let _ = writeln!(
                    decls,
                    "\t.local .align {} .b32 lb{l}[{words}];",
                    *rng.pick(&[4, 8, 16])
                );
                let _ = writeln!(
                    body,
                    "\tand.b32 %r4, %r1, {};\n\tmul.wide.u32 %rd5, %r4, 4;\n\tmov.u64 %rd6, lb{l};\n\tadd.u64 %rd6, %rd6, %rd5;\n\tst.local.u32 [%rd6], %r1;\n\tld.local.u32 %r3, [lb{l}+{}];\n\tadd.u32 %r1, %r1, %r3;",
                    words - 1,
                    4 * rng.range(0, words - 1)
                );
            }
            9 => {
                let ts = self.usable_texs(TexKind::Tex);
                if !ts.is_empty() {
                    let t = *rng.pick(&ts);
                    self.use_tex(t);
                    let tn = self.m.texs[t].name.clone();
                    let handle = if self.m.indep[self.obj] {
                        let ss = self.usable_texs(TexKind::Sampler);
                        if ss.is_empty() {
                            return;
                        }
                        let s = *rng.pick(&ss);
                        self.use_tex(s);
                        format!("{tn}, {}", self.m.texs[s].name)
                    } else {
                        tn.clone()
                    };
                    if rng.chance(25) {
                        let _ = writeln!(
                            body,
                            "\ttxq.width.b32 %r3, [{tn}];\n\tadd.u32 %r1, %r1, %r3;"
                        );
                    } else {
                        let _ = writeln!(
                            body,
                            "\ttex.1d.v4.f32.s32 {{%f1,%f2,%f3,%f4}}, [{handle}, {{%r1}}];\n\tcvt.rzi.s32.f32 %r3, %f1;\n\tadd.u32 %r1, %r1, %r3;"
                        );
                    }
                }
            }
            10 => {
                let ss = self.usable_texs(TexKind::Surf);
                if !ss.is_empty() {
                    let s = *rng.pick(&ss);
                    self.use_tex(s);
                    let n = &self.m.texs[s].name;
                    if rng.chance(50) {
                        let _ = writeln!(body, "\tsuld.b.1d.b32.trap {{%r3}}, [{n}, {{%r1}}];\n\tadd.u32 %r1, %r1, %r3;");
                    } else {
                        let _ = writeln!(body, "\tsust.b.1d.b32.trap [{n}, {{%r1}}], {{%r1}};");
                    }
                }
            }
            11 => {
                // Module-level static or dynamic extern shared memory.
                let o = self.obj;
                let mut opts: Vec<(String, usize)> = self.m.mod_shared[o]
                    .iter()
                    .map(|(n, w)| (n.clone(), 4 * rng.range(0, w - 1)))
                    .collect();
                opts.extend(
                    self.m.dyn_shared[o]
                        .iter()
                        .map(|(n, _)| (n.clone(), 4 * rng.range(0, 15))),
                );
                if !opts.is_empty() {
                    let (n, off) = rng.pick(&opts).clone();
                    let _ = writeln!(
                        body,
                        "\tst.shared.u32 [{n}+{off}], %r1;\n\tbar.sync 0;\n\tld.shared.u32 %r3, [{n}];\n\tadd.u32 %r1, %r1, %r3;"
                    );
                }
            }
            12 => {
                let l = self.label;
                self.label += 1;
                let _ = writeln!(
                    body,
                    "\tmov.u32 %r6, {};\nL{l}:\n\tmul.lo.u32 %r1, %r1, {};\n\tadd.u32 %r1, %r1, %r6;\n\tsub.u32 %r6, %r6, 1;\n\tsetp.ne.u32 %p1, %r6, 0;\n\t@%p1 bra L{l};",
                    rng.range(2, 9),
                    rng.u32() | 1
                );
            }
            _ => {
                // Kernel-only: nothing extra; functions: a conditional early path.
                if !in_kernel {
                    let _ = writeln!(
                        body,
                        "\tsetp.gt.u32 %p2, %r1, {};\n\t@%p2 add.u32 %r1, %r1, 7;",
                        rng.u32()
                    );
                }
            }
        }
    }

    fn func_body(&mut self, rng: &mut Rng, f: usize, link: Link) -> String {
        let func = &self.m.funcs[f];
        let mut body = String::new();
        let mut decls = String::new();
        match func.sig {
            Sig::Int => body.push_str("\tld.param.b32 %r1, [x];\n"),
            Sig::Pair => body.push_str(
                "\tld.param.b64 %rd1, [x];\n\tld.param.b32 %r1, [y];\n\tcvt.u32.u64 %r2, %rd1;\n\tadd.u32 %r1, %r1, %r2;\n",
            ),
        }
        let proto = func.sig.proto(&func.name);
        let sig = func.sig;
        for _ in 0..rng.range(1, 6) {
            self.op(rng, &mut body, &mut decls, false);
        }
        self.system_call(&mut body);
        match sig {
            Sig::Int => body.push_str("\tst.param.b32 [r], %r1;\n\tret;\n"),
            Sig::Pair => {
                body.push_str("\tcvt.u64.u32 %rd2, %r1;\n\tst.param.b64 [r], %rd2;\n\tret;\n")
            }
        }
        format!(
            "{}.func {proto}\n{{\n{REGS}{decls}{body}}}\n\n",
            link.prefix()
        )
    }

    fn kernel_body(&mut self, rng: &mut Rng, k: usize, link: Link) -> String {
        let name = self.m.kernels[k].name.clone();
        let mut params = vec![".param .u64 out".to_string(), ".param .u32 x".to_string()];
        let mut body = String::from(
            "\tld.param.u64 %rd9, [out];\n\tcvta.to.global.u64 %rd9, %rd9;\n\tld.param.u32 %r1, [x];\n\tmov.u32 %r5, %tid.x;\n\tadd.u32 %r1, %r1, %r5;\n",
        );
        for e in 0..rng.range(0, 3) {
            match rng.range(0, 3) {
                0 => {
                    params.push(format!(".param .u32 a{e}"));
                    let _ = writeln!(
                        body,
                        "\tld.param.u32 %r3, [a{e}];\n\tadd.u32 %r1, %r1, %r3;"
                    );
                }
                1 => {
                    params.push(format!(".param .u64 a{e}"));
                    let _ = writeln!(body, "\tld.param.u64 %rd3, [a{e}];\n\tcvt.u32.u64 %r3, %rd3;\n\tadd.u32 %r1, %r1, %r3;");
                }
                2 => {
                    params.push(format!(".param .align 8 .b8 a{e}[24]"));
                    let _ = writeln!(
                        body,
                        "\tld.param.u32 %r3, [a{e}+{}];\n\tadd.u32 %r1, %r1, %r3;",
                        4 * rng.range(0, 5)
                    );
                }
                _ => {
                    params.push(format!(
                        ".param .align 16 .b8 a{e}[{}]",
                        16 * rng.range(1, 8)
                    ));
                    let _ = writeln!(
                        body,
                        "\tld.param.u32 %r3, [a{e}+12];\n\tadd.u32 %r1, %r1, %r3;"
                    );
                }
            }
        }
        let mut decls = String::new();
        if rng.chance(50) {
            let words = rng.range(1, 300);
            let _ = writeln!(
                decls,
                "\t.shared .align {} .b32 ks[{words}];",
                *rng.pick(&[4, 8, 16])
            );
            let _ = writeln!(
                body,
                "\tmul.wide.u32 %rd5, %r5, 4;\n\tmov.u64 %rd6, ks;\n\tadd.u64 %rd6, %rd6, %rd5;\n\tst.shared.u32 [%rd6], %r1;\n\tbar.sync 0;\n\tld.shared.u32 %r3, [ks+{}];\n\tadd.u32 %r1, %r1, %r3;",
                4 * rng.range(0, words - 1)
            );
        }
        for _ in 0..rng.range(0, 6) {
            self.op(rng, &mut body, &mut decls, true);
        }
        self.system_call(&mut body);
        body.push_str("\tst.global.u32 [%rd9], %r1;\n\tret;\n");
        // ptxas itself rejects a register limit below the count of a function
        // of the same object the kernel calls, directly or through a pointer
        // it loads with `mov` (seed 510008) or from data (an indirect call
        // reaches every function of the object whose address is taken: seed
        // 1200510); the link checks the others.
        let indirect = body.contains(", proto");
        let local_calls = (0..self.m.funcs.len()).any(|f| {
            let name = &self.m.funcs[f].name;
            self.defines_func(f)
                && (indirect
                    || body.contains(&format!(" {name}, ("))
                    || body.contains(&format!(", {name};")))
        });
        let directives = self.kernel_directives(local_calls);
        format!(
            "{}.entry {name}({}){directives}\n{{\n{REGS}{decls}{body}}}\n\n",
            link.prefix(),
            params.join(", ")
        )
    }

    /// Performance directives of a kernel (often none): thread-count bounds,
    /// occupancy, a register limit. ptxas records them in the kernel's
    /// `.nv.info` (`MAX_THREADS`, `REQNTID`, `MIN_CTA_PER_SM`,
    /// `MAXREG_COUNT`); a register limit below what a callee uses is a link
    /// error (`maxreg_callee`), within it the kernel's count is raised. Limits
    /// below 64 only for kernels calling no function of their own object
    /// (`local_calls`), which ptxas would check against them itself.
    fn kernel_directives(&mut self, local_calls: bool) -> String {
        let mut out = self.cluster_directives();
        let d = &mut self.directives;
        if !d.chance(35) {
            return out;
        }
        // The dimensions and their thread count.
        let dims = |d: &mut Rng| -> (String, usize) {
            match d.range(0, 3) {
                0 => {
                    let x = 32 * d.range(1, 32);
                    (format!("{x}"), x)
                }
                1 => {
                    let (x, y) = (32 * d.range(1, 8), d.range(1, 4));
                    (format!("{x}, {y}"), x * y)
                }
                _ => {
                    let (x, y, z) = (32 * d.range(1, 4), d.range(1, 4), d.range(1, 3));
                    (format!("{x}, {y}, {z}"), x * y * z)
                }
            }
        };
        let threads = match d.range(0, 3) {
            0 => {
                let (text, n) = dims(d);
                let _ = write!(out, " .maxntid {text}");
                Some(n)
            }
            1 => {
                let (text, n) = dims(d);
                let _ = write!(out, " .reqntid {text}");
                Some(n)
            }
            _ => None,
        };
        if let Some(threads) = threads.filter(|_| d.chance(40)) {
            // Threads × blocks per SM bound the registers (65536 per SM):
            // a kernel calling its object's functions keeps at least 64
            // (seed 1201417: 256 threads × 8 blocks gave 32, below a callee's
            // 35, which ptxas refuses itself).
            let blocks = d.range(1, 8);
            if !local_calls || threads * blocks <= 1024 {
                let _ = write!(out, " .minnctapersm {blocks}");
            }
        }
        if d.chance(50) {
            let limit = *d.pick(&[16, 24, 32, 40, 64, 128, 255]);
            let _ = write!(
                out,
                " .maxnreg {}",
                if local_calls { limit.max(64) } else { limit }
            );
        }
        out
    }

    /// Thread-block cluster directives for a kernel, written at sm_90+ only
    /// (drawn either way, so the program does not depend on the arch):
    /// `.reqnctapercluster` (alone or with `.explicitcluster`) or
    /// `.maxclusterrank`.
    fn cluster_directives(&mut self) -> String {
        let d = &mut self.later;
        let kind = d.range(0, 9);
        let (x, y, z) = (*d.pick(&[1, 2, 4]), *d.pick(&[1, 2]), 1);
        let rank = *d.pick(&[2, 4, 8]);
        if !self.clusters {
            return String::new();
        }
        match kind {
            0 => format!(" .reqnctapercluster {x}, {y}, {z}"),
            1 => format!(" .explicitcluster .reqnctapercluster {x}, {y}, {z}"),
            2 => format!(" .maxclusterrank {rank}"),
            _ => String::new(),
        }
    }

    /// Now and then a system call at the end of a body (from the `later`
    /// stream): `vprintf` of the object's format string, or `malloc` then
    /// `free`, each in a block with registers of its own.
    fn system_call(&mut self, body: &mut String) {
        let kind = self.later.range(0, 11);
        match kind {
            0 => {
                self.printf = true;
                body.push_str(
                    "\t{\n\t.reg .b64 %sc<2>;\n\t.param .b64 fa;\n\t.param .b64 fb;\n\t.param .b32 fr;\n\tmov.u64 %sc0, fmt;\n\tcvta.global.u64 %sc0, %sc0;\n\tst.param.b64 [fa], %sc0;\n\tst.param.b64 [fb], 0;\n\tcall.uni (fr), vprintf, (fa, fb);\n\t}\n",
                );
            }
            1 => {
                self.heap = true;
                body.push_str(
                    "\t{\n\t.reg .b64 %sc<2>;\n\t.param .b64 hn;\n\t.param .b64 hr;\n\tst.param.b64 [hn], 64;\n\tcall.uni (hr), malloc, (hn);\n\tld.param.b64 %sc0, [hr];\n\t.param .b64 hp;\n\tst.param.b64 [hp], %sc0;\n\tcall.uni free, (hp);\n\t}\n",
                );
            }
            _ => {}
        }
    }

    /// ` .attribute(.managed)` for a declaration of variable `v` when it is
    /// managed; rarely left out (a declaration that disagrees: nvlink's
    /// verdict on the mix is the reference).
    fn managed_attr(&mut self, v: usize) -> &'static str {
        let drop = self.later.chance(4);
        if self.managed[v] && !drop {
            " .attribute(.managed)"
        } else {
            ""
        }
    }

    /// The initializer of a variable definition (`None`: none).
    fn init(&mut self, rng: &mut Rng, v: usize, count: usize) -> String {
        let var = &self.m.vars[v];
        let elem = var.elem;
        let mut items = Vec::new();
        for _ in 0..count.min(16) {
            // (ptxas refuses an address in a managed variable's initializer.)
            let item = if elem == Elem::U64
                && var.space == Space::Global
                && !self.managed[v]
                && rng.chance(60)
            {
                if rng.chance(50) {
                    let fs = self.callable_funcs();
                    if fs.is_empty() {
                        "0".to_string()
                    } else {
                        let f = *rng.pick(&fs);
                        self.use_func(f);
                        self.m.funcs[f].name.clone()
                    }
                } else {
                    // Another global defined elsewhere, or earlier here.
                    let vs: Vec<usize> = self
                        .usable_vars(Some(Space::Global), None)
                        .into_iter()
                        .filter(|&w| w < v || !self.defines_var(w))
                        .collect();
                    if vs.is_empty() {
                        "0".to_string()
                    } else {
                        let w = *rng.pick(&vs);
                        self.use_var(rng, w);
                        let n = &self.m.vars[w].name;
                        match rng.range(0, 2) {
                            0 => n.clone(),
                            1 => format!("generic({n})"),
                            _ => {
                                let sz = self.var_count_here(w) * self.m.vars[w].elem.size();
                                format!("{n}+{}", rng.range(0, sz.max(1) - 1))
                            }
                        }
                    }
                }
            } else {
                let max = match elem {
                    Elem::B8 => 255,
                    Elem::B16 => 65535,
                    _ => u32::MAX as u64,
                };
                (rng.next_u64() % (max + 1)).to_string()
            };
            items.push(item);
        }
        if count == 1 {
            format!(" = {}", items[0])
        } else {
            format!(" = {{{}}}", items.join(", "))
        }
    }
}

const REGS: &str =
    "\t.reg .b32 %r<10>;\n\t.reg .b64 %rd<10>;\n\t.reg .f32 %f<5>;\n\t.reg .pred %p<3>;\n";

fn ptx_target(arch: &str, indep: bool) -> String {
    let mode = if indep { ", texmode_independent" } else { "" };
    format!(".version 9.0\n.target sm_{arch}{mode}\n.address_size 64\n\n")
}

/// Generates the program for `seed` (objects in link order) for `sm_{arch}`.
pub fn generate(seed: u64, arch: &str) -> Program {
    let mut rng = Rng::new(seed);
    let m = build_model(&mut rng);
    let mut managed_rng = Rng::new(seed ^ 0x4d41_4e41_4745_0000);
    let managed: Vec<bool> = m
        .vars
        .iter()
        .map(|v| managed_rng.chance(15) && v.space == Space::Global)
        .collect();
    let clusters = Program {
        arch: arch.to_string(),
        objects: Vec::new(),
    }
    .sm_number()
        >= 90;
    let mut objects = Vec::new();
    for o in 0..m.nobj {
        let mut g = ObjGen {
            m: &m,
            obj: o,
            needs: Needs::default(),
            label: 0,
            extra: Rng::new(seed ^ 0x4A54_0000_0000_0000 ^ ((o as u64) << 32)),
            fences: Rng::new(seed ^ 0x4645_4e43_0000_0000 ^ ((o as u64) << 32)),
            directives: Rng::new(seed ^ 0x4449_5245_0000_0000 ^ ((o as u64) << 32)),
            later: Rng::new(seed ^ 0x4c41_5445_0000_0000 ^ ((o as u64) << 32)),
            managed: &managed,
            clusters,
            printf: false,
            heap: false,
        };
        let mut data = String::new();
        let mut code = String::new();
        let mut fwd = String::new();

        // Textures.
        let mut texdecl = String::new();
        for t in m.texs.iter().filter(|t| t.obj == o) {
            let kind = match t.kind {
                TexKind::Tex => ".texref",
                TexKind::Sampler => ".samplerref",
                TexKind::Surf => ".surfref",
            };
            let vis = if t.visible { ".visible " } else { "" };
            let _ = writeln!(texdecl, "{vis}.global {kind} {};", t.name);
        }
        // Shared memory.
        for (n, a) in &m.dyn_shared[o] {
            let _ = writeln!(texdecl, ".extern .shared .align {a} .b8 {n}[];");
        }
        for (n, w) in &m.mod_shared[o] {
            let _ = writeln!(texdecl, ".shared .align 4 .b32 {n}[{w}];");
        }

        // Forward declarations of this object's functions (data may take their address).
        for f in &m.funcs {
            for &(fo, link) in &f.defs {
                if fo == o {
                    let _ = writeln!(fwd, "{}.func {};", link.prefix(), f.sig.proto(&f.name));
                }
            }
        }

        // Variables defined here, in model order.
        for (v, var) in m.vars.iter().enumerate() {
            for d in var.defs.iter().filter(|d| d.obj == o) {
                let sp = if var.space == Space::Const {
                    ".const"
                } else {
                    ".global"
                };
                let init = if d.init {
                    g.init(&mut rng, v, d.count)
                } else {
                    String::new()
                };
                let dims = if d.count == 1 && rng.chance(50) {
                    String::new()
                } else {
                    format!("[{}]", d.count)
                };
                // An array needs a braced initializer, even of one element.
                let init = match init.strip_prefix(" = ") {
                    Some(v) if !dims.is_empty() && !v.starts_with('{') => format!(" = {{{v}}}"),
                    _ => init,
                };
                let attr = g.managed_attr(v);
                let _ = writeln!(
                    data,
                    "{}{sp}{attr} .align {} {} {}{dims}{init};",
                    d.link.prefix(),
                    var.align,
                    var.elem.decl(),
                    var.name
                );
            }
        }

        // Code: functions and kernels defined here, interleaved in a random order.
        let mut items: Vec<(bool, usize, Link)> = Vec::new();
        for (f, func) in m.funcs.iter().enumerate() {
            for &(fo, link) in &func.defs {
                if fo == o {
                    items.push((false, f, link));
                }
            }
        }
        for (k, kern) in m.kernels.iter().enumerate() {
            for &(ko, link) in &kern.defs {
                if ko == o {
                    items.push((true, k, link));
                }
            }
        }
        for i in (1..items.len()).rev() {
            let j = rng.range(0, i);
            items.swap(i, j);
        }
        for (is_kernel, i, link) in items {
            let s = if is_kernel {
                g.kernel_body(&mut rng, i, link)
            } else {
                g.func_body(&mut rng, i, link)
            };
            code.push_str(&s);
        }

        // Unused extern declarations.
        if rng.chance(30) {
            let fs: Vec<usize> = (0..m.funcs.len())
                .filter(|&f| g.func_visible(f) && !g.defines_func(f))
                .collect();
            if !fs.is_empty() {
                let f = *rng.pick(&fs);
                g.needs.funcs.insert(f);
            }
        }
        if rng.chance(30) {
            let vs: Vec<usize> = (0..m.vars.len())
                .filter(|&v| g.var_visible(v) && !g.defines_var(v))
                .collect();
            if !vs.is_empty() {
                let v = *rng.pick(&vs);
                g.use_var(&mut rng, v);
            }
        }

        let mut ext = String::new();
        for &f in &g.needs.funcs {
            let func = &m.funcs[f];
            let _ = writeln!(ext, ".extern .func {};", func.sig.proto(&func.name));
        }
        for (v, count) in g.needs.vars.clone() {
            let var = &m.vars[v];
            let sp = if var.space == Space::Const {
                ".const"
            } else {
                ".global"
            };
            let dims = match count {
                Some(c) => format!("[{c}]"),
                None => "[]".to_string(),
            };
            let attr = g.managed_attr(v);
            let _ = writeln!(
                ext,
                ".extern {sp}{attr} .align {} {} {}{dims};",
                var.align,
                var.elem.decl(),
                var.name
            );
        }
        for &t in &g.needs.texs {
            let tx = &m.texs[t];
            let kind = match tx.kind {
                TexKind::Tex => ".texref",
                TexKind::Sampler => ".samplerref",
                TexKind::Surf => ".surfref",
            };
            let _ = writeln!(ext, ".extern .global {kind} {};", tx.name);
        }
        // System calls: the driver's functions, and the format string.
        if g.printf {
            ext.push_str(
                ".extern .func (.param .b32 status) vprintf (.param .b64 fmt, .param .b64 args);\n",
            );
            data.push_str(".global .align 1 .b8 fmt[4] = {104, 105, 10, 0};\n");
        }
        if g.heap {
            ext.push_str(".extern .func (.param .b64 p) malloc (.param .b64 n);\n.extern .func free (.param .b64 p);\n");
        }
        let mut ptx = ptx_target(arch, m.indep[o]);
        for part in [ext, texdecl, fwd, data] {
            if !part.is_empty() {
                ptx.push_str(&part);
                ptx.push('\n');
            }
        }
        ptx.push_str(&code);
        objects.push(ptx);
    }
    Program {
        arch: arch.to_string(),
        objects,
    }
}

// ---------------------------------------------------------------------------
// The runner.

struct Options {
    seed: u64,
    count: u64,
    archs: Vec<String>,
    keep: Option<PathBuf>,
    /// Also link `-r` pipelines (see [`relocatable_pipelines`]).
    relocatable: bool,
    /// Assemble with line information (see [`with_line_info`]).
    lineinfo: bool,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        seed: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() % 1_000_000 * 1000)
            .unwrap_or(1),
        count: 20,
        archs: ALL_ARCHS.iter().map(|s| s.to_string()).collect(),
        keep: None,
        relocatable: false,
        lineinfo: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = |name: &str| it.next().cloned().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--seed" => o.seed = val("--seed")?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--count" => {
                o.count = val("--count")?
                    .parse()
                    .map_err(|e| format!("--count: {e}"))?
            }
            "--archs" => {
                o.archs = val("--archs")?
                    .split(',')
                    .map(|s| s.trim().trim_start_matches("sm_").to_string())
                    .filter(|s| !s.is_empty())
                    .collect();
                if o.archs.is_empty() {
                    return Err("--archs: empty list".into());
                }
            }
            "--keep" => o.keep = Some(PathBuf::from(val("--keep")?)),
            "--relocatable" => o.relocatable = true,
            "--lineinfo" => o.lineinfo = true,
            _ => return Err(format!("difftest: unknown argument `{a}`")),
        }
    }
    Ok(o)
}

/// What a link attempt did.
struct LinkRun {
    ok: bool,
    stderr: String,
    cubin: Option<Vec<u8>>,
}

fn link(
    tool: &Path,
    env: Option<(&str, &str)>,
    dir: &Path,
    sm: &str,
    inputs: &[String],
    out: &str,
) -> Result<LinkRun, String> {
    let mut cmd = Command::new(tool);
    cmd.current_dir(dir)
        .arg(format!("-arch={sm}"))
        .args(inputs)
        .arg("-o")
        .arg(out);
    if let Some((k, v)) = env {
        cmd.env(k, v);
    }
    let _ = std::fs::remove_file(dir.join(out));
    let r = output_within(&mut cmd, LINK_TIMEOUT)?.ok_or_else(|| {
        format!(
            "`{}` ran over {}s (a hang?)",
            show(&cmd),
            LINK_TIMEOUT.as_secs()
        )
    })?;
    let ok = r.status.success();
    Ok(LinkRun {
        ok,
        stderr: String::from_utf8_lossy(&r.stderr).into_owned(),
        cubin: if ok {
            std::fs::read(dir.join(out)).ok()
        } else {
            None
        },
    })
}

fn warns_stack(stderr: &str) -> bool {
    stderr
        .to_lowercase()
        .contains("cannot be statically determined")
}

/// Compares culink's output with nvlink's; the differences that count.
fn compare(ours: &[u8], theirs: &[u8], sm: u32) -> Result<Vec<String>, String> {
    let o = Cubin::parse(ours).map_err(|e| format!("culink output does not parse: {e}"))?;
    let t = Cubin::parse(theirs).map_err(|e| format!("nvlink output does not parse: {e}"))?;
    let d: Vec<String> = linker_core::diff::diff(&o, &t)
        .iter()
        .map(|x| x.to_string())
        .collect();
    if sm < 100 {
        return Ok(d);
    }
    // Blackwell re-finalization: instructions differing only in the scheduling
    // control field are a known gap (`culink diff` notes it on each, and on
    // the count line of a function whose further ones all are).
    let sched = "(scheduling control field only";
    Ok(d.into_iter().filter(|x| !x.contains(sched)).collect())
}

enum Outcome {
    Same,
    PtxasTimeout,
    GenBug(String),
    Mismatch(String),
}

/// `-r` pipelines: culink's `-r` of two neighbouring objects (the first two,
/// the last two, and objects 1 and 2 when there are four or more), linked in
/// their place with the others by culink, and again by nvlink, must be
/// equivalent to nvlink's direct link of all of them (but for the tkinfo
/// notes, which name the `-r` link), or else to what nvlink's own pipeline
/// gives ([`nvlink_pipeline`]): a `-r` output is a merged object, and its
/// final link cannot always place its pieces as the direct link does.
/// Returns the report lines.
fn relocatable_pipelines(
    culink: &Path,
    nvlink: &Path,
    dir: &Path,
    sm: &str,
    sm_number: u32,
    inputs: &[String],
    reference: &[u8],
) -> Result<Vec<String>, String> {
    let n = inputs.len();
    let mut splits = vec![("prefix", 0usize), ("suffix", n - 2)];
    if n >= 4 {
        splits.push(("mid", 1));
    }
    let mut report = Vec::new();
    for (name, at) in splits {
        let part = &inputs[at..at + 2];
        let robj = format!("r_{name}.o");
        // (`-r` passed as the first "input": `link` puts it after `-arch`.)
        let args: Vec<String> = std::iter::once("-r".to_string())
            .chain(part.iter().cloned())
            .collect();
        let r = link(culink, None, dir, sm, &args, &robj)?;
        if !r.ok {
            // A split nvlink -r refuses as well (a size mismatch between the
            // two objects that the direct link never compares, seed 610008)
            // is no pipeline to test.
            let nr = link(nvlink, None, dir, sm, &args, &format!("nv_r_{name}.o"))?;
            if !nr.ok {
                continue;
            }
            report.push(format!(
                "-r pipeline {name} ({}): the -r link fails:\n{}",
                part.join(" "),
                r.stderr
            ));
            continue;
        }
        let mut order: Vec<String> = inputs[..at].to_vec();
        order.push(robj.clone());
        order.extend_from_slice(&inputs[at + 2..]);
        // The final link by culink, then by nvlink (interop: build systems
        // mix the two; this found nvlink zeroing Blackwell jump tables).
        let finals = [
            (culink, "pipe", "the final link", ""),
            (
                nvlink,
                "npipe",
                "nvlink's final link of culink's -r output",
                "nvlink's final link of culink's -r output: ",
            ),
        ];
        let mut own: Option<Result<Vec<u8>, String>> = None;
        for (tool, stem, what, prefix) in finals {
            let fin = link(tool, None, dir, sm, &order, &format!("{stem}_{name}.cubin"))?;
            let Some(cubin) = fin.cubin.filter(|_| fin.ok) else {
                report.push(format!(
                    "-r pipeline {name} ({}): {what} fails:\n{}",
                    order.join(" "),
                    fin.stderr
                ));
                continue;
            };
            let d: Vec<String> = compare(&cubin, reference, sm_number)?
                .into_iter()
                .filter(|x| !x.contains(".note.nv.tkinfo"))
                .collect();
            if d.is_empty() {
                continue;
            }
            let own = match own {
                Some(ref o) => o,
                None => own.insert(nvlink_pipeline(
                    nvlink, dir, sm, &args, &robj, &order, name,
                )?),
            };
            // (nvlink's own pipeline may write what no reader accepts: an
            // `sh_addralign` of 0x360, seed 1200704; then it is no reference.)
            let same_as_own = match own {
                Ok(theirs) => compare(&cubin, theirs, sm_number)
                    .is_ok_and(|d| d.iter().all(|x| x.contains(".note.nv.tkinfo"))),
                Err(_) => false,
            };
            if !same_as_own {
                report.push(format!(
                    "-r pipeline {name} ({}): {prefix}{} difference(s) from nvlink's direct link:",
                    order.join(" "),
                    d.len()
                ));
                report.extend(d.into_iter().map(|x| format!("  {x}")));
                if let Err(why) = own {
                    report.push(format!("  (and {why})"));
                }
            } else {
                eprintln!(
                    "  note: -r pipeline {name}: {prefix}{} difference(s) from nvlink's direct link, the same as nvlink's own pipeline",
                    d.len()
                );
            }
        }
    }
    Ok(report)
}

/// The reference a `-r` pipeline falls back on where it differs from
/// nvlink's direct link: nvlink's own pipeline, its `-r` (`args`) of the same
/// two objects then its final link in `order` (with `robj` standing for the
/// `-r` output). `Err` says why there is none (nvlink cannot always link its
/// own `-r` output: seed 1200106, its `extern __shared__` arrays "defined"
/// twice).
fn nvlink_pipeline(
    nvlink: &Path,
    dir: &Path,
    sm: &str,
    args: &[String],
    robj: &str,
    order: &[String],
    name: &str,
) -> Result<Result<Vec<u8>, String>, String> {
    let nv_robj = format!("nv_r_{name}.o");
    let nr = link(nvlink, None, dir, sm, args, &nv_robj)?;
    if !nr.ok {
        return Ok(Err(format!("nvlink -r fails: {}", first_line(&nr.stderr))));
    }
    let nv_order: Vec<String> = order
        .iter()
        .map(|x| {
            if x == robj {
                nv_robj.clone()
            } else {
                x.clone()
            }
        })
        .collect();
    let fin = link(
        nvlink,
        None,
        dir,
        sm,
        &nv_order,
        &format!("own_{name}.cubin"),
    )?;
    Ok(fin.cubin.filter(|_| fin.ok).ok_or_else(|| {
        format!(
            "nvlink's final link of its own -r output fails: {}",
            first_line(&fin.stderr)
        )
    }))
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// `ptx` with line information: a `.file` after the header and a `.loc`
/// (one new line number each) before every instruction of a function body,
/// for `ptxas -lineinfo` (`.debug_line`, `.nv_debug_line_sass`, the
/// `.nv_debug_ptx_txt` copy). Found what plain programs do not: the line
/// tables of replaced weak copies (fixture `lineinfo_weak_replaced`).
pub fn with_line_info(ptx: &str, file: &str) -> String {
    let mut out = String::with_capacity(ptx.len() * 2);
    let mut depth = 0i32;
    let mut line = 0u32;
    for l in ptx.lines() {
        let t = l.trim();
        let instruction = depth > 0
            && !t.is_empty()
            && !t.starts_with(['.', '{', '}', '/'])
            && !t.ends_with(':')
            && !t.contains(".branchtargets");
        if instruction {
            line += 1;
            let _ = writeln!(out, "\t.loc 1 {line} 0");
        }
        out.push_str(l);
        out.push('\n');
        if t.starts_with(".address_size") {
            let _ = writeln!(out, ".file 1 \"{file}\"");
        }
        depth += l.matches('{').count() as i32 - l.matches('}').count() as i32;
    }
    out
}

fn run_one(
    seed: u64,
    arch: &str,
    dir: &Path,
    culink: &Path,
    relocatable: bool,
    lineinfo: bool,
) -> Result<(Outcome, Program), String> {
    let prog = generate(seed, arch);
    let sm = prog.sm();
    let tools = tools_dir();
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| io_err("remove", dir, e))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| io_err("create", dir, e))?;
    let mut inputs = Vec::new();
    for (i, ptx) in prog.objects.iter().enumerate() {
        let p = format!("o{i}.ptx");
        let text = if lineinfo {
            with_line_info(ptx, &format!("o{i}.cu"))
        } else {
            ptx.clone()
        };
        std::fs::write(dir.join(&p), text).map_err(|e| io_err("write", &dir.join(&p), e))?;
        let obj = format!("o{i}.o");
        let mut cmd = Command::new(tools.join("ptxas"));
        cmd.current_dir(dir)
            .arg(format!("-arch={sm}"))
            .arg("-c")
            .args(lineinfo.then_some("-lineinfo"))
            .arg(&p)
            .arg("-o")
            .arg(&obj);
        let Some(r) = output_within(&mut cmd, PTXAS_TIMEOUT)? else {
            // ptxas itself hangs on some valid programs (seen at sm_100): not
            // a linker question; skipped and reported.
            return Ok((Outcome::PtxasTimeout, prog));
        };
        if !r.status.success() {
            return Ok((
                Outcome::GenBug(format!(
                    "`{}` failed:\n{}",
                    show(&cmd),
                    String::from_utf8_lossy(&r.stderr)
                )),
                prog,
            ));
        }
        inputs.push(obj);
    }
    let nv = link(
        &tools.join("nvlink"),
        None,
        dir,
        &sm,
        &inputs,
        "nvlink.cubin",
    )?;
    let cu = link(
        culink,
        Some(("RAYON_NUM_THREADS", "1")),
        dir,
        &sm,
        &inputs,
        "culink.cubin",
    )?;
    let mut report = String::new();
    match (nv.ok, cu.ok) {
        (true, false) => {
            let _ = writeln!(report, "nvlink succeeds, culink fails:\n{}", cu.stderr);
        }
        (false, true) => {
            let _ = writeln!(report, "culink succeeds, nvlink fails:\n{}", nv.stderr);
        }
        (false, false) => {
            let (a, b) = (
                linker_core::diff::error_classes(&nv.stderr),
                linker_core::diff::error_classes(&cu.stderr),
            );
            if a != b || a.contains("other") {
                let _ = writeln!(
                    report,
                    "both fail, error classes differ: nvlink {a:?}, culink {b:?}\n--- nvlink:\n{}--- culink:\n{}",
                    nv.stderr, cu.stderr
                );
            }
        }
        (true, true) => {
            let (o, t) = (
                cu.cubin.as_deref().unwrap_or(&[]),
                nv.cubin.as_deref().unwrap_or(&[]),
            );
            match compare(o, t, prog.sm_number()) {
                Ok(d) if d.is_empty() => {}
                Ok(d) => {
                    let _ = writeln!(report, "{} difference(s) from nvlink:", d.len());
                    for x in d {
                        let _ = writeln!(report, "  {x}");
                    }
                }
                Err(e) => {
                    let _ = writeln!(report, "{e}");
                }
            }
            if warns_stack(&nv.stderr) != warns_stack(&cu.stderr) {
                let _ = writeln!(
                    report,
                    "stack-size warning differs:\n--- nvlink:\n{}--- culink:\n{}",
                    nv.stderr, cu.stderr
                );
            }
            let cu2 = link(
                culink,
                Some(("RAYON_NUM_THREADS", "2")),
                dir,
                &sm,
                &inputs,
                "culink.t2.cubin",
            )?;
            if cu2.cubin != cu.cubin {
                let _ = writeln!(
                    report,
                    "culink output differs between RAYON_NUM_THREADS=1 and 2"
                );
            }
            if relocatable && inputs.len() >= 3 {
                let nvlink = tools.join("nvlink");
                for line in
                    relocatable_pipelines(culink, &nvlink, dir, &sm, prog.sm_number(), &inputs, t)?
                {
                    let _ = writeln!(report, "{line}");
                }
            }
        }
    }
    if report.is_empty() {
        Ok((Outcome::Same, prog))
    } else {
        Ok((Outcome::Mismatch(report), prog))
    }
}

/// How long ptxas may take on one generated object, and a link.
const PTXAS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
const LINK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// Runs `cmd` capturing its output; `None` (the process killed) when it runs
/// longer than `limit`.
fn output_within(
    cmd: &mut Command,
    limit: std::time::Duration,
) -> Result<Option<std::process::Output>, String> {
    use std::process::Stdio;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run `{}`: {e}", show(cmd)))?;
    // Drain the pipes on threads so a chatty tool cannot block on them.
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(o) = out.as_mut() {
            let _ = std::io::Read::read_to_end(o, &mut v);
        }
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(e) = err.as_mut() {
            let _ = std::io::Read::read_to_end(e, &mut v);
        }
        v
    });
    let start = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(10)),
            Err(e) => return Err(format!("waiting for `{}`: {e}", show(cmd))),
        }
    };
    let stdout = t_out.join().unwrap_or_default();
    let stderr = t_err.join().unwrap_or_default();
    Ok(status.map(|status| std::process::Output {
        status,
        stdout,
        stderr,
    }))
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    if to.exists() {
        std::fs::remove_dir_all(to).map_err(|e| io_err("remove", to, e))?;
    }
    std::fs::create_dir_all(to).map_err(|e| io_err("create", to, e))?;
    for e in std::fs::read_dir(from).map_err(|e| io_err("read", from, e))? {
        let e = e.map_err(|e| io_err("read", from, e))?;
        std::fs::copy(e.path(), to.join(e.file_name()))
            .map_err(|x| io_err("copy", &e.path(), x))?;
    }
    Ok(())
}

fn build_culink() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("CULINK_BIN") {
        return Ok(PathBuf::from(p));
    }
    let root = workspace_root();
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(&root)
        .args(["build", "--quiet", "--release", "-p", "linker-cli"]);
    crate::util::run_ok(&mut cmd)?;
    Ok(root.join("target/release/culink"))
}

pub fn run(args: &[String]) -> Result<(), String> {
    let o = parse_args(args)?;
    let tools = tools_dir();
    for t in ["ptxas", "nvlink"] {
        if !tools.join(t).exists() {
            return Err(format!(
                "{} not found: run `cargo xtask nv-tools`",
                tools.join(t).display()
            ));
        }
    }
    let culink = build_culink()?;
    let base = workspace_root().join("target/difftest");
    let work = base.join(format!("work-{}", std::process::id()));
    let mut per_arch: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
    let (mut fails, mut genbugs, mut timeouts) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..o.count {
        let seed = o.seed.wrapping_add(i);
        let arch = arch_for(seed, &o.archs);
        let (outcome, prog) = run_one(seed, &arch, &work, &culink, o.relocatable, o.lineinfo)?;
        let entry = per_arch.entry(arch.clone()).or_default();
        entry.0 += 1;
        let replay = format!(
            "cargo xtask difftest --seed {seed} --count 1 --archs {arch}{}{}",
            if o.relocatable { " --relocatable" } else { "" },
            if o.lineinfo { " --lineinfo" } else { "" }
        );
        match outcome {
            Outcome::Same => {}
            Outcome::PtxasTimeout => {
                let d = base.join(format!("ptxas-timeout-{seed}"));
                copy_dir(&work, &d)?;
                eprintln!(
                    "seed {seed} sm_{arch}: ptxas ran over {}s on a generated object (skipped), saved in {}",
                    PTXAS_TIMEOUT.as_secs(),
                    d.display()
                );
                entry.0 -= 1;
                timeouts.push(seed);
            }
            Outcome::GenBug(msg) => {
                let d = base.join(format!("genbug-{seed}"));
                copy_dir(&work, &d)?;
                eprintln!("seed {seed} sm_{arch}: generator bug (ptxas rejects a program), saved in {}\n{msg}", d.display());
                genbugs.push(seed);
                entry.0 -= 1;
            }
            Outcome::Mismatch(msg) => {
                entry.1 += 1;
                let d = base.join(format!("fail-{seed}"));
                copy_dir(&work, &d)?;
                std::fs::write(d.join("diff.txt"), &msg).map_err(|e| io_err("write", &d, e))?;
                std::fs::write(d.join("replay.txt"), format!("{replay}\n"))
                    .map_err(|e| io_err("write", &d, e))?;
                eprintln!("seed {seed} sm_{arch}: MISMATCH ({} objects), saved in {}\n  replay: {replay}\n{}", prog.objects.len(), d.display(), indent(&msg));
                fails.push(seed);
            }
        }
        if let Some(k) = &o.keep {
            copy_dir(&work, &k.join(format!("seed-{seed}")))?;
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    let summary: Vec<String> = per_arch
        .iter()
        .map(|(a, (n, f))| format!("sm_{a}: {n} links, {f} mismatches"))
        .collect();
    println!(
        "difftest: seeds {}..{}: {}",
        o.seed,
        o.seed.wrapping_add(o.count),
        summary.join("; ")
    );
    if !timeouts.is_empty() {
        println!("ptxas timeouts (skipped): {timeouts:?}");
    }
    if !genbugs.is_empty() {
        println!("generator bugs (ptxas rejected): {genbugs:?}");
    }
    if fails.is_empty() && genbugs.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} mismatch(es): seeds {fails:?}; {} generator bug(s)",
            fails.len(),
            genbugs.len()
        ))
    }
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("    {l}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse() {
        let args: Vec<String> = [
            "--seed",
            "7",
            "--count",
            "3",
            "--archs",
            "sm_90,100",
            "--relocatable",
            "--lineinfo",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let o = parse_args(&args).expect("parses");
        assert_eq!((o.seed, o.count), (7, 3));
        assert_eq!(o.archs, vec!["90".to_string(), "100".to_string()]);
        assert!(o.relocatable && o.lineinfo);
        let plain = parse_args(&[]).expect("parses");
        assert!(!plain.relocatable && !plain.lineinfo);
        assert!(parse_args(&["--bogus".to_string()]).is_err());
    }

    #[test]
    fn rng_is_splitmix64() {
        // The first outputs of splitmix64 seeded with 0 (reference values).
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        let mut r = Rng::new(7);
        for _ in 0..1000 {
            let v = r.range(2, 6);
            assert!((2..=6).contains(&v));
        }
    }

    #[test]
    fn generation_is_deterministic_per_seed() {
        for seed in [0u64, 1, 42, 1_000_003] {
            let a = generate(seed, "90");
            assert_eq!(a, generate(seed, "90"));
            assert!((2..=6).contains(&a.objects.len()));
            for o in &a.objects {
                assert!(o.starts_with(".version 9.0\n.target sm_90"), "{o}");
                assert_eq!(o.matches('{').count(), o.matches('}').count());
            }
        }
        assert_ne!(generate(1, "90"), generate(2, "90"));
        // The arch changes only the .target lines, and whether the cluster
        // directives drawn for kernels are written (sm_90+).
        let mut clusters: Vec<String> = vec![" .maxclusterrank 2".into()];
        for x in [1, 2, 4] {
            for y in [1, 2] {
                let r = format!(" .reqnctapercluster {x}, {y}, 1");
                clusters.push(format!(" .explicitcluster{r}"));
                clusters.push(r);
            }
        }
        clusters.extend([" .maxclusterrank 4".into(), " .maxclusterrank 8".into()]);
        let mut written = 0;
        for seed in 0..20u64 {
            let (a, b) = (generate(seed, "80"), generate(seed, "100a"));
            for (x, y) in a.objects.iter().zip(&b.objects) {
                let stripped = clusters
                    .iter()
                    .fold(y.clone(), |t, c| t.replace(c.as_str(), ""));
                written += usize::from(stripped != *y);
                assert_eq!(x.replace("sm_80", "sm_100a"), stripped);
            }
        }
        assert!(written > 0);
        let archs: Vec<String> = ["75", "121"].iter().map(|s| s.to_string()).collect();
        for seed in 0..50 {
            let arch = arch_for(seed, &archs);
            assert!(archs.contains(&arch));
            assert_eq!(arch, arch_for(seed, &archs));
        }
        assert_eq!(generate(3, "90a").sm_number(), 90);
    }

    #[test]
    fn the_generator_is_broad() {
        // Over a few dozen seeds every construct shows up.
        let all: String = (0..40u64)
            .flat_map(|s| generate(s, "90").objects)
            .collect::<Vec<_>>()
            .join("\n");
        for needle in [
            ".extern .func",
            ".weak .func",
            ".visible .func",
            ".common .global",
            ".weak .global",
            ".extern .global",
            ".const .align",
            "generic(",
            ".texref",
            ".samplerref",
            ".surfref",
            "texmode_independent",
            "tex.1d",
            "suld.b.1d",
            "sust.b.1d",
            "txq.width",
            ".callprototype",
            "call (pr",
            "call.uni (pr",
            ".local .align",
            ".extern .shared",
            ".param .align 16 .b8",
            ".weak .entry",
            "bar.sync",
            "[]",
            "brx.idx",
            "%ctaid.z",
            ".maxntid",
            ".reqntid",
            ".minnctapersm",
            ".maxnreg",
            ".global .attribute(.managed)",
            ".reqnctapercluster",
            ".explicitcluster",
            ".maxclusterrank",
            "call.uni (fr), vprintf",
            "call.uni free",
        ] {
            assert!(all.contains(needle), "no `{needle}` in 40 programs");
        }
        // No cluster directive below sm_90 (ptxas refuses them there).
        let sm80: String = (0..40u64)
            .flat_map(|s| generate(s, "80").objects)
            .collect::<Vec<_>>()
            .join("\n");
        assert!(!sm80.contains("cluster"));
    }

    #[test]
    fn error_classes_agree_between_the_linkers() {
        let nv = "nvlink error   : Undefined reference to 'f' in 'a.o'\nnvlink error   : Multiple definition of 'g' in 'b.o', first defined in 'a.o'\nnvlink fatal   : merge_elf failed\n";
        let cu = "culink: error: a.o: undefined reference to 'f'\nculink: error: symbol 'g': multiple definition of 'g': defined in 'a.o' and in 'b.o'\n";
        assert_eq!(
            linker_core::diff::error_classes(nv),
            linker_core::diff::error_classes(cu)
        );
        assert_eq!(
            linker_core::diff::error_classes("nvlink error   : Size doesn't match for 'v' in 'b.o', first specified in 'a.o'\n"),
            linker_core::diff::error_classes("culink: error: symbol 'v': size of 'v' is 0x10 in 'b.o' but 0x8 in 'a.o', where it was first specified\n")
        );
        assert_eq!(
            linker_core::diff::error_classes("nvlink error   : Common symbol 'v' in file 'c.o' has larger size than initialization\n"),
            linker_core::diff::error_classes("culink: error: symbol 'v': common symbol 'v' in 'c.o' has larger size than its initialization\n")
        );
        let managed = linker_core::diff::error_classes("nvlink error   : Managed attribute doesn't match for 'gv' in 'o1.o', first specified in 'o0.o'\n");
        assert_eq!(managed.len(), 1);
        assert_eq!(
            managed,
            linker_core::diff::error_classes("culink: error: symbol 'gv': managed attribute of 'gv' doesn't match: managed in 'o1.o' but not in 'o0.o' (first specified in 'o0.o')\n")
        );
        assert!(linker_core::diff::error_classes(
            "nvlink warning : Stack size for entry function 'k' cannot be statically determined\n"
        )
        .is_empty());
    }

    /// Every generated object of a few seeds assembles with the pinned ptxas
    #[test]
    fn line_info_marks_every_instruction() {
        let ptx = ".version 9.0\n.target sm_90\n.address_size 64\n.visible .func (.param .b32 r) f(.param .b32 x)\n{\n\t.reg .b32 %r<4>;\n\tld.param.b32 %r1, [x];\nL1:\n\t{ .param .b32 pa; }\n\tst.param.b32 [r], %r1;\n\tret;\n}\n";
        let out = with_line_info(ptx, "o0.cu");
        assert!(out.contains(".address_size 64\n.file 1 \"o0.cu\"\n"));
        assert!(out.contains("\t.loc 1 1 0\n\tld.param.b32"));
        assert!(out.contains("\t.loc 1 2 0\n\tst.param.b32"));
        assert!(out.contains("\t.loc 1 3 0\n\tret;"));
        // Declarations, labels and braces get none.
        assert_eq!(out.matches(".loc").count(), 3);
    }

    /// (skipped without the tools, fatal under `CI=true`).
    #[test]
    fn ptxas_accepts_generated_programs() {
        let ptxas = tools_dir().join("ptxas");
        if !ptxas.exists() {
            assert!(
                !crate::util::is_ci(),
                "{} missing under CI=true: run `cargo xtask nv-tools`",
                ptxas.display()
            );
            eprintln!("skipped: {} not found", ptxas.display());
            return;
        }
        let tmp = crate::util::TempDir::new("difftest-gen").expect("scratch dir");
        for (seed, arch, lineinfo) in [
            (11u64, "75", false),
            (12, "86", false),
            (13, "90", false),
            (14, "120", false),
            (15, "89", true),
            (16, "100", true),
        ] {
            for (i, ptx) in generate(seed, arch).objects.iter().enumerate() {
                let src = tmp.path().join(format!("s{seed}_{i}.ptx"));
                let text = if lineinfo {
                    with_line_info(ptx, "o.cu")
                } else {
                    ptx.clone()
                };
                std::fs::write(&src, &text).expect("write");
                let mut cmd = Command::new(&ptxas);
                cmd.arg(format!("-arch=sm_{arch}"))
                    .arg("-c")
                    .args(lineinfo.then_some("-lineinfo"))
                    .arg(&src)
                    .arg("-o")
                    .arg(src.with_extension("o"));
                match output_within(&mut cmd, PTXAS_TIMEOUT).expect("ptxas runs") {
                    None => eprintln!("seed {seed}: ptxas timed out (a ptxas hang, ignored)"),
                    Some(r) => {
                        assert!(
                            r.status.success(),
                            "seed {seed} object {i}: ptxas rejects:\n{}\n{text}",
                            String::from_utf8_lossy(&r.stderr)
                        );
                        if lineinfo {
                            let obj = std::fs::read(src.with_extension("o")).expect("object");
                            assert!(
                                obj.windows(11).any(|w| w == b".debug_line"),
                                "seed {seed} object {i}: no line table"
                            );
                        }
                    }
                }
            }
        }
    }
}
