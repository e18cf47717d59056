#!/usr/bin/env bash
# Usage (GPU machine, repository root): bash benches/probes/2026-11-28-bounce-host/run.sh OUTDIR
# host.cu: host functions' concurrency, host copy and DMA rates alone and together (call 7);
# ring.cu: both directions through rings of 8 MiB .. 512 MiB (call 8).
set -euo pipefail
out=${1:-/tmp/bounce-host}; mkdir -p "$out"
here=$(dirname "$0")
for p in ${PROBES:-host ring}; do
  nvcc -O3 -std=c++17 -arch=sm_90 -o "$out/$p" "$here/$p.cu"
  if [[ $p == host ]]; then "$out/host" 16; else "$out/$p"; fi
done
