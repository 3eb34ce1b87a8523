#!/usr/bin/env bash
# Second half of scripts/gpu-check.sh: runs ON THE GPU MACHINE, from the bundle
# `target/gpu-bundle/` (copied there as `run.sh`). Needs only bash, the NVIDIA
# driver (libcuda.so.1) and the bundle: no Rust, no network, no CUDA toolkit.
# Writes $OUT/gpu-results.md (results table), $OUT/gpu-check.log, $OUT/nvidia-smi.txt.
# Exit status: gpu-check's (0 pass, 1 failures, 2 bundle error, 3 no driver).
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-$here/out}"
mkdir -p "$out"
{ nvidia-smi 2>&1 || echo "(nvidia-smi not available)"; } > "$out/nvidia-smi.txt"
bin="$here/gpu-check"
if [ ! -x "$bin" ]; then
    # Copies may lose the executable bit.
    bin="$(mktemp -d)/gpu-check"
    cp "$here/gpu-check" "$bin" && chmod +x "$bin"
fi
cat "$here/manifest.txt" 2>/dev/null | tee "$out/gpu-check.log"
# The binary was built on the preparing machine (glibc >= 2.34 needed).
if ! "$bin" --help > /dev/null 2> "$out/start-error.txt"; then
    echo "gpu-check: the bundled binary cannot start on this machine:" | tee -a "$out/gpu-check.log"
    tee -a "$out/gpu-check.log" < "$out/start-error.txt"
    exit 2
fi
# --deadline: leave time to write results within the run tool's timeout_s (300).
"$bin" check "$here" --out "$out/gpu-results.md" --deadline "${GPU_CHECK_DEADLINE:-240}" 2>&1 | tee -a "$out/gpu-check.log"
rc=${PIPESTATUS[0]}
echo "gpu-check exit status: $rc" | tee -a "$out/gpu-check.log"
exit "$rc"
