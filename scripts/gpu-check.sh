#!/usr/bin/env bash
# GPU validation of culink (docs/gpu-validation.md), in two halves:
#
#   scripts/gpu-check.sh prepare [CASE...]  HERE (Rust + NVIDIA tools): build
#       gpu-check and culink in release, link every case with culink, copy
#       nvlink's reference cubins and the launch files into target/gpu-bundle/.
#   scripts/gpu-check.sh run                THERE (the GPU machine, which has no Rust):
#       bash target/gpu-bundle/run.sh  -> $OUT/gpu-results.md
#
# With no argument: prepare, then print how to run the bundle.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cmd="${1:-prepare}"
[ $# -gt 0 ] && shift
case "$cmd" in
    prepare)
        cargo xtask gpu-check --bundle-only "$@"
        echo "next, on the GPU machine: bash target/gpu-bundle/run.sh"
        echo "  (run tool: carry [\"target/gpu-bundle\"], command \"bash target/gpu-bundle/run.sh\", timeout_s 300)"
        ;;
    run)
        exec bash target/gpu-bundle/run.sh
        ;;
    *)
        echo "usage: scripts/gpu-check.sh [prepare [CASE...] | run]" >&2
        exit 2
        ;;
esac
