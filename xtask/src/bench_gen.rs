//! Synthetic PTX workloads for `cargo xtask bench` (see `bench.rs`).
//!
//! Two shapes:
//! * [`synthetic_object`]: object `i` of `n`. It defines a `.global` array, an
//!   initialized `.global` pointer table holding `generic()` addresses of the arrays
//!   of objects `i+1` and `i+7` (mod `n`), a small module `.const` table, leaf and
//!   middle device functions and kernels using `.shared` memory. Middle functions
//!   call the leaves of objects `i+1` and `i+7`; kernels call the middle functions
//!   of objects `i` and `i+1` and read the arrays of objects `i+1` and `i+7`. Leaves
//!   call nothing, so the call graph is acyclic (depth 2 below a kernel).
//! * [`library_object`]: one large object whose kernels load module constants with
//!   `ld.const` over and over (every load is a constant-bank relocation), the shape of
//!   a real math library; linked with one small synthetic object.
//!
//! All names carry the object index (`bench_g12`, `bench_k12_3`, ...), so any `n`
//! objects link without clashes. Module `.const` data is [`CONST_WORDS`] words per
//! object (8 bytes: 40 KB at n = 5000), well below the 64 KB nvlink accepts.

use std::fmt::Write;

/// Bump when the generated PTX changes in a way the cache key would not see.
pub const GEN_VERSION: u32 = 1;

/// Words of module `.const` data per synthetic object.
pub const CONST_WORDS: usize = 2;
/// Words of each object's `.global` array.
const GLOBAL_WORDS: usize = 64;
/// Kernels per synthetic object.
const KERNELS: usize = 4;
/// Leaf (and middle) device functions per synthetic object.
const FUNCS: usize = 4;
/// Arithmetic rounds (3 instructions each) in leaves, middles and kernels.
const LEAF_STEPS: usize = 8;
const MID_STEPS: usize = 4;
const KERNEL_STEPS: usize = 24;
/// Words of `.shared` memory per kernel.
const SHARED_WORDS: usize = 256;

/// The PTX ISA version for `.target sm_{sm}` (Blackwell needs 8.6 to 8.8
/// depending on the SM; the fixtures use 9.0).
fn ptx_version(sm: u32) -> &'static str {
    if sm >= 100 {
        "9.0"
    } else if sm >= 90 {
        "8.0"
    } else {
        "7.0"
    }
}

fn header(out: &mut String, sm: u32) {
    let _ = writeln!(
        out,
        ".version {}\n.target sm_{sm}\n.address_size 64\n",
        ptx_version(sm)
    );
}

/// The distinct other objects object `i` of `n` refers to: `i+1`, `i+7` (mod `n`).
pub fn neighbours(i: usize, n: usize) -> Vec<usize> {
    let mut v = Vec::new();
    for d in [1, 7] {
        let j = (i + d) % n;
        if j != i && !v.contains(&j) {
            v.push(j);
        }
    }
    v
}

/// A pseudo-random 32-bit constant from `(a, b)` (no `rand` crate; stable).
fn mix(a: usize, b: usize) -> u32 {
    let mut x =
        (a as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (b as u64).wrapping_add(0x632B_E59B);
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 32;
    (x as u32) | 1
}

/// `steps` xorshift-multiply rounds on `%r1` (3 instructions each, not foldable).
fn scramble(out: &mut String, seed: usize, steps: usize) {
    for s in 0..steps {
        let _ = writeln!(
            out,
            "\tshr.u32 %r2, %r1, {};\n\txor.b32 %r1, %r1, %r2;\n\tmul.lo.u32 %r1, %r1, {};",
            7 + s % 13,
            mix(seed, s)
        );
    }
}

/// The PTX of synthetic object `i` of `n` for `sm_{sm}`.
pub fn synthetic_object(i: usize, n: usize, sm: u32) -> String {
    let nb = neighbours(i, n);
    // The call/read targets: the first and last neighbour (the same when n = 2);
    // with n = 1 the object refers to itself.
    let (a, b) = match (nb.first(), nb.last()) {
        (Some(&a), Some(&b)) => (a, b),
        _ => (i, i),
    };
    let mut o = String::with_capacity(32 * 1024);
    header(&mut o, sm);
    for &j in &nb {
        let _ = writeln!(
            o,
            ".extern .global .align 4 .b32 bench_g{j}[{GLOBAL_WORDS}];"
        );
        for f in 0..FUNCS {
            let _ = writeln!(
                o,
                ".extern .func (.param .b32 r) bench_leaf{j}_{f}(.param .b32 x);"
            );
        }
    }
    if a != i {
        for f in 0..FUNCS {
            let _ = writeln!(
                o,
                ".extern .func (.param .b32 r) bench_mid{a}_{f}(.param .b32 x);"
            );
        }
    }
    let _ = writeln!(
        o,
        "\n.visible .global .align 4 .b32 bench_g{i}[{GLOBAL_WORDS}];"
    );
    let _ = writeln!(
        o,
        ".visible .global .align 8 .u64 bench_p{i}[2] = {{generic(bench_g{a}), generic(bench_g{b})}};"
    );
    let words: Vec<String> = (0..CONST_WORDS)
        .map(|w| mix(i, 1000 + w).to_string())
        .collect();
    let _ = writeln!(
        o,
        ".const .align 4 .b32 bench_c{i}[{CONST_WORDS}] = {{{}}};\n",
        words.join(", ")
    );

    // Leaves: arithmetic on the argument and one module constant.
    for f in 0..FUNCS {
        let _ = writeln!(
            o,
            ".visible .func (.param .b32 r) bench_leaf{i}_{f}(.param .b32 x)\n{{\n\t.reg .b32 %r<4>;\n\tld.param.b32 %r1, [x];\n\tld.const.b32 %r3, [bench_c{i}+{}];\n\txor.b32 %r1, %r1, %r3;",
            4 * (f % CONST_WORDS)
        );
        scramble(&mut o, i * 100 + f, LEAF_STEPS);
        o.push_str("\tst.param.b32 [r], %r1;\n\tret;\n}\n\n");
    }

    // Middles: call a leaf of both neighbours, read their globals.
    for f in 0..FUNCS {
        let _ = writeln!(
            o,
            ".visible .func (.param .b32 r) bench_mid{i}_{f}(.param .b32 x)\n{{\n\t.reg .b32 %r<6>;\n\t.reg .b64 %rd<3>;\n\tld.param.b32 %r1, [x];"
        );
        for (k, t) in [a, b].into_iter().enumerate() {
            let _ = writeln!(
                o,
                "\t{{\n\t.param .b32 pa;\n\t.param .b32 pr;\n\tst.param.b32 [pa], %r1;\n\tcall.uni (pr), bench_leaf{t}_{}, (pa);\n\tld.param.b32 %r4, [pr];\n\t}}\n\tld.global.u32 %r5, [bench_g{t}+{}];\n\tadd.u32 %r1, %r1, %r4;\n\txor.b32 %r1, %r1, %r5;",
                (f + k) % FUNCS,
                4 * ((i + f + k) % GLOBAL_WORDS)
            );
        }
        scramble(&mut o, i * 100 + 50 + f, MID_STEPS);
        o.push_str("\tst.param.b32 [r], %r1;\n\tret;\n}\n\n");
    }

    // Kernels: shared memory, calls, globals, constants, pointer table.
    for k in 0..KERNELS {
        let callee = if k % 2 == 0 { i } else { a };
        let _ = writeln!(
            o,
            ".visible .entry bench_k{i}_{k}(.param .u64 out, .param .u32 x)\n{{\n\t.shared .align 4 .b32 sm[{SHARED_WORDS}];\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<8>;\n\t.reg .pred %p;\n\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd1, %rd1;\n\tld.param.u32 %r1, [x];\n\tmov.u32 %r6, %tid.x;\n\tmul.wide.u32 %rd5, %r6, 4;\n\tmov.u64 %rd6, sm;\n\tadd.u64 %rd6, %rd6, %rd5;\n\tst.shared.u32 [%rd6], %r1;\n\tbar.sync 0;\n\txor.b32 %r7, %r6, 1;\n\tmul.wide.u32 %rd5, %r7, 4;\n\tmov.u64 %rd6, sm;\n\tadd.u64 %rd6, %rd6, %rd5;\n\tld.shared.u32 %r3, [%rd6];\n\tadd.u32 %r1, %r1, %r3;"
        );
        let _ = writeln!(
            o,
            "\t{{\n\t.param .b32 pa;\n\t.param .b32 pr;\n\tst.param.b32 [pa], %r1;\n\tcall.uni (pr), bench_mid{callee}_{}, (pa);\n\tld.param.b32 %r4, [pr];\n\t}}\n\tadd.u32 %r1, %r1, %r4;",
            k % FUNCS
        );
        let _ = writeln!(
            o,
            "\tld.global.u64 %rd2, [bench_p{i}+{}];\n\tld.u32 %r5, [%rd2+{}];\n\txor.b32 %r1, %r1, %r5;\n\tld.global.u32 %r5, [bench_g{b}+{}];\n\tadd.u32 %r1, %r1, %r5;\n\tld.const.b32 %r5, [bench_c{i}+{}];\n\txor.b32 %r1, %r1, %r5;",
            8 * (k % 2),
            4 * (k % GLOBAL_WORDS),
            4 * ((k * 3 + i) % GLOBAL_WORDS),
            4 * ((k + 1) % CONST_WORDS)
        );
        scramble(&mut o, i * 100 + 80 + k, KERNEL_STEPS);
        let _ = writeln!(
            o,
            "\tsetp.eq.u32 %p, %r6, 0;\n\t@%p st.global.u32 [bench_g{i}+{}], %r1;\n\tmul.wide.u32 %rd5, %r6, 4;\n\tadd.u64 %rd3, %rd1, %rd5;\n\tst.global.u32 [%rd3], %r1;\n\tret;\n}}\n",
            4 * (k % GLOBAL_WORDS)
        );
    }
    o
}

/// Arithmetic rounds after each `ld.const` of the library object (code size).
const LIB_PAD_STEPS: usize = 2;

/// Words of module `.const` data in the library object (16 KB).
pub const LIB_CONST_WORDS: usize = 4096;

/// The PTX of the large "library" object: `kernels` kernels, each with `loads`
/// `ld.const` of module constants (one constant-bank relocation each) mixed into
/// arithmetic. It also defines `bench_g0`/leaf functions so that it links with
/// synthetic object 0 of 1 ([`synthetic_object`]`(0, 1, sm)`), which is
/// self-contained; the library defines only `bench_lib*` names.
pub fn library_object(sm: u32, kernels: usize, loads: usize) -> String {
    let mut o = String::with_capacity(kernels * loads * 120);
    header(&mut o, sm);
    let words: Vec<String> = (0..LIB_CONST_WORDS)
        .map(|w| mix(7, w).to_string())
        .collect();
    let _ = writeln!(
        o,
        ".visible .const .align 4 .b32 bench_libc[{LIB_CONST_WORDS}] = {{{}}};\n",
        words.join(", ")
    );
    for k in 0..kernels {
        let _ = writeln!(
            o,
            ".visible .entry bench_lib{k}(.param .u64 out, .param .u32 x)\n{{\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<4>;\n\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd1, %rd1;\n\tld.param.u32 %r1, [x];"
        );
        for l in 0..loads {
            let w = (mix(k, l) as usize) % LIB_CONST_WORDS;
            let _ = writeln!(
                o,
                "\tld.const.b32 %r3, [bench_libc+{}];\n\tshr.u32 %r2, %r1, {};\n\txor.b32 %r1, %r1, %r2;\n\tmad.lo.u32 %r1, %r1, %r3, {};",
                4 * w,
                5 + l % 17,
                mix(l, k)
            );
            scramble(&mut o, k * 100_000 + l, LIB_PAD_STEPS);
        }
        o.push_str(
            "\tmov.u32 %r4, %tid.x;\n\tmul.wide.u32 %rd2, %r4, 4;\n\tadd.u64 %rd3, %rd1, %rd2;\n\tst.global.u32 [%rd3], %r1;\n\tret;\n}\n\n",
        );
    }
    o
}

/// The PTX of one long leaf kernel: an early exit, then `loads` global
/// loads, each compared and, when large, multiplied with another load into
/// the sum (the shape whose scoreboards nvlink's finalizer re-allocates at
/// sm_100 and later, docs/blackwell.md §8; culink's replay walks its
/// groups).
pub fn leaf_object(sm: u32, loads: usize) -> String {
    let mut o = String::with_capacity(loads * 400);
    header(&mut o, sm);
    o.push_str(
        ".visible .entry bench_leaf(.param .u64 in, .param .u64 out, .param .u32 n, .param .f32 t)\n{\n\t.reg .pred %p<3>;\n\t.reg .b32 %r<8>;\n\t.reg .f32 %f<8>;\n\t.reg .b64 %rd<8>;\n\tld.param.u64 %rd1, [in];\n\tcvta.to.global.u64 %rd1, %rd1;\n\tld.param.u64 %rd2, [out];\n\tcvta.to.global.u64 %rd2, %rd2;\n\tld.param.u32 %r1, [n];\n\tld.param.f32 %f1, [t];\n\tmov.u32 %r2, %tid.x;\n\tmov.u32 %r3, %ctaid.x;\n\tmov.u32 %r4, %ntid.x;\n\tmad.lo.u32 %r2, %r3, %r4, %r2;\n\tsetp.ge.u32 %p1, %r2, %r1;\n\t@%p1 bra DONE;\n\tmov.f32 %f2, 0f00000000;\n",
    );
    for l in 0..loads {
        let _ = writeln!(
            o,
            "\tadd.u32 %r5, %r2, {};\n\tand.b32 %r5, %r5, 1048575;\n\tmul.wide.u32 %rd3, %r5, 4;\n\tadd.u64 %rd4, %rd1, %rd3;\n\tld.global.f32 %f3, [%rd4];\n\tsetp.gt.f32 %p2, %f3, %f1;\n\t@!%p2 bra L{l};\n\tmad.lo.u32 %r6, %r2, 3, {l};\n\tand.b32 %r6, %r6, 65535;\n\tmul.wide.u32 %rd5, %r6, 4;\n\tadd.u64 %rd6, %rd2, %rd5;\n\tld.global.f32 %f4, [%rd6];\n\tfma.rn.f32 %f2, %f3, %f4, %f2;\n\tbra.uni M{l};\nL{l}:\n\tsub.f32 %f2, %f2, %f3;\nM{l}:",
            (mix(l, 3) as usize) % 1_000_003
        );
    }
    o.push_str(
        "\tmul.wide.u32 %rd7, %r2, 4;\n\tadd.u64 %rd7, %rd2, %rd7;\n\tst.global.f32 [%rd7], %f2;\nDONE:\n\tret;\n}\n",
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_are_distinct_others() {
        assert_eq!(neighbours(0, 1), Vec::<usize>::new());
        assert_eq!(neighbours(0, 2), vec![1]);
        assert_eq!(neighbours(1, 3), vec![2]);
        assert_eq!(neighbours(9, 10), vec![0, 6]);
        assert_eq!(neighbours(3, 100), vec![4, 10]);
    }

    #[test]
    fn synthetic_object_has_the_expected_shape() {
        let p = synthetic_object(9, 10, 90);
        assert!(p.starts_with(".version 8.0\n.target sm_90\n.address_size 64\n"));
        for needle in [
            ".extern .global .align 4 .b32 bench_g0[64];",
            ".extern .global .align 4 .b32 bench_g6[64];",
            ".extern .func (.param .b32 r) bench_leaf6_1(.param .b32 x);",
            ".extern .func (.param .b32 r) bench_mid0_0(.param .b32 x);",
            ".visible .global .align 8 .u64 bench_p9[2] = {generic(bench_g0), generic(bench_g6)};",
            ".const .align 4 .b32 bench_c9[2] = {",
            ".visible .entry bench_k9_3(",
            ".shared .align 4 .b32 sm[256];",
            "call.uni (pr), bench_leaf0_",
            "call.uni (pr), bench_mid0_1, (pa);",
            "ld.const.b32 %r3, [bench_c9+4];",
        ] {
            assert!(p.contains(needle), "missing `{needle}` in:\n{p}");
        }
        // Balanced braces, one entry per kernel.
        assert_eq!(p.matches('{').count(), p.matches('}').count());
        assert_eq!(p.matches(".entry ").count(), KERNELS);
        // Deterministic.
        assert_eq!(p, synthetic_object(9, 10, 90));
        assert!(synthetic_object(0, 10, 80).contains(".version 7.0\n.target sm_80\n"));
    }

    #[test]
    fn single_object_refers_to_itself_only() {
        let p = synthetic_object(0, 1, 90);
        assert!(!p.contains(".extern"));
        assert!(p.contains("generic(bench_g0), generic(bench_g0)"));
    }

    #[test]
    fn leaf_object_counts() {
        let p = leaf_object(100, 4);
        assert!(p.starts_with(".version 9.0\n.target sm_100\n"));
        assert_eq!(p.matches(".entry ").count(), 1);
        assert_eq!(p.matches("ld.global.f32").count(), 8);
        assert_eq!(p.matches('{').count(), p.matches('}').count());
        assert!(!p.contains("call"));
        assert_eq!(p, leaf_object(100, 4));
    }

    #[test]
    fn library_object_counts() {
        let p = library_object(90, 3, 5);
        assert_eq!(p.matches(".entry ").count(), 3);
        assert_eq!(p.matches("ld.const.b32").count(), 15);
        assert!(!p.contains("bench_g"));
    }
}
