#!/usr/bin/env python3
"""Rebuilds the objects and nvlink references of tests/data/old_toolkits.

Objects: ptxas of older toolkits (PyPI wheels, downloaded into
target/old-ptxas/ by this script) on PTX of tests/link/<case>/ with the
.version lowered to what that ptxas reads; references: nvlink 13.0.88 from
target/nv-tools/bin (`cargo xtask nv-tools`). Run from the repository root:
    python3 crates/linker-core/tests/data/old_toolkits/regen.py
"""
import os, re, subprocess, sys, zipfile, glob, shutil

ROOT = os.getcwd()
HERE = os.path.join(ROOT, "crates/linker-core/tests/data/old_toolkits")
NV = os.path.join(ROOT, "target/nv-tools/bin")
CACHE = os.path.join(ROOT, "target/old-ptxas")
# toolkit tag -> (wheel, highest PTX ISA it reads)
TOOLKITS = {
    "118": ("nvidia-cuda-nvcc-cu11==11.8.89", "7.8"),
    "120": ("nvidia-cuda-nvcc-cu12==12.0.140", "8.0"),
    "126": ("nvidia-cuda-nvcc-cu12==12.6.85", "8.5"),
    "129": ("nvidia-cuda-nvcc-cu12==12.9.86", "8.8"),
}
# name, sm, [(case, object, toolkit tag or "130")], extra options
LINKS = [
    ("chain3_126", 80, [("call_chain3", o, "126") for o in "abc"], []),
    ("chain3_118", 80, [("call_chain3", o, "118") for o in "abc"], []),
    ("chain3_120_sm90", 90, [("call_chain3", o, "120") for o in "abc"], []),
    ("all_nine_120", 80, [("all_nine", o, "120") for o in "a b k loc c1 c2 stk1 stk2 tex".split()], []),
    ("lone_126", 80, [("shared_unreached_lone", "a", "126")], []),
    ("printf_mix", 80, [("printf_malloc", "p1", "126"), ("printf_malloc", "p2", "130")], []),
    ("extern_mix", 80, [("call_extern", "a", "118"), ("call_extern", "b", "130")], []),
    ("maxreg_118", 80, [("maxreg_callee", o, "118") for o in "abc"], []),
    ("sm90_118", 90, [("call_extern", o, "118") for o in "ab"], []),
    ("debug_126", 80, [("cu_debug", o, "126") for o in "ab"], ["-g"]),
    ("chain3_126_r", 80, [("call_chain3", o, "126") for o in "abc"], ["-r"]),
    ("fastpath_129", 100, [("cu_debug_loc_undef_label", o, "129") for o in "ab"], ["-g"]),
]


def ptxas(tag):
    if tag == "130":
        return os.path.join(NV, "ptxas")
    wheel, _ = TOOLKITS[tag]
    exe = os.path.join(CACHE, tag, "ptxas")
    if not os.path.exists(exe):
        os.makedirs(os.path.join(CACHE, tag), exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", wheel,
                        "-d", os.path.join(CACHE, tag)], check=True)
        whl = glob.glob(os.path.join(CACHE, tag, "*.whl"))[0]
        with zipfile.ZipFile(whl) as z:
            name = next(n for n in z.namelist() if n.endswith("/bin/ptxas"))
            with z.open(name) as src, open(exe, "wb") as dst:
                shutil.copyfileobj(src, dst)
        os.chmod(exe, 0o755)
    return exe


def build(case, obj, tag, sm):
    out = os.path.join(HERE, f"{case}.{obj}.{tag}.sm_{sm}.o")
    src = open(os.path.join(ROOT, "tests/link", case, obj + ".ptx")).read()
    src = src.replace("SMXX", f"sm_{sm}")
    if tag != "130":
        src = re.sub(r"\.version\s+[0-9.]+", ".version " + TOOLKITS[tag][1], src)
    tmp = out + ".ptx"
    open(tmp, "w").write(src)
    subprocess.run([ptxas(tag), f"-arch=sm_{sm}", "-m64", "-c", tmp, "-o", out], check=True)
    os.unlink(tmp)
    return os.path.basename(out)


def main():
    for f in glob.glob(os.path.join(HERE, "*.o")) + glob.glob(os.path.join(HERE, "nvlink.*")):
        os.unlink(f)
    lines = []
    for name, sm, objs, opts in LINKS:
        inputs = [build(c, o, t, sm) for c, o, t in objs]
        r = subprocess.run([os.path.join(NV, "nvlink"), f"-arch=sm_{sm}"] + opts + inputs
                           + ["-o", f"nvlink.{name}.cubin"], cwd=HERE, capture_output=True, text=True)
        if "-r" in opts:
            # The direct link of the same inputs: what a relink of the -r
            # output must equal.
            subprocess.run([os.path.join(NV, "nvlink"), f"-arch=sm_{sm}"]
                           + [o for o in opts if o != "-r"] + inputs
                           + ["-o", f"nvlink.{name}.direct.cubin"], cwd=HERE, check=True,
                           capture_output=True)
        if r.returncode != 0:
            open(os.path.join(HERE, f"nvlink.{name}.err"), "w").write(r.stderr)
            p = os.path.join(HERE, f"nvlink.{name}.cubin")
            if os.path.exists(p):
                os.unlink(p)
        lines.append(" ".join([name, str(sm)] + opts + inputs))
    open(os.path.join(HERE, "links.txt"), "w").write("\n".join(lines) + "\n")


main()
