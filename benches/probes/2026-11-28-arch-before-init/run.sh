#!/usr/bin/env bash
# Builds and runs the probe, each mode in fresh processes. Usage (GPU machine, repository root):
#   bash benches/probes/2026-11-28-arch-before-init/run.sh OUTDIR
set -euo pipefail
out=${1:-/tmp/arch-time}; mkdir -p "$out"
gcc -O2 -o "$out/arch-time" "$(dirname "$0")/arch-time.c" -ldl -lpthread
for rep in 1 2 3; do
  for mode in both nvml cuda; do
    echo "== rep $rep $mode"; "$out/arch-time" $mode
  done
done
