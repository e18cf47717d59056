#!/usr/bin/env bash
# Builds the probe from the committed generated sources (tests/snapshots) and runs it.
# Usage (on the GPU machine, from the repository root): [ONLY="vec fused2"] bash benches/probes/2026-11-26-fusion/probe/build-and-run.sh OUTDIR [STEPS] [p512 p820 s1000 ...]
# (ONLY: run only the kernels whose name holds it, beside the generated reference)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp/probe}; shift || true
mkdir -p "$out"
snap=tests/snapshots
# snapshot, prefix; the vector forms' helpers (pacc_ld4, ...) are kept from the first snapshot
# only, since every snapshot defines them
first=1
gen() {
  awk 'BEGIN{n=0} /^---$/{n++; next} n>=2' "$snap/$1" |
    if ((first)); then cat; else grep -v -E '^(__device__|template).* void pacc_(ld4|st4|cp4)\('; fi |
    sed -e "s/pacc_propagate_sponge_/$2/g" -e "s/pacc_propagate_/$2/g" -e "s/#pragma unroll PACC_UNROLL/#pragma unroll 2/" -e "s/#pragma unroll PACC_F\{0,1\}VUNROLL/#pragma unroll 1/"
}
{
  echo '#pragma once'
  echo '#define PACC_RY 1'
  gen examples_snapshots__acoustic_propagate_cuda.snap gpr1_
  first=0
  gen examples_snapshots__acoustic_propagate_sponge_cuda.snap gsp1_
  echo '#undef PACC_RY'
  echo '#define PACC_RY 4'
  gen examples_snapshots__acoustic_propagate_cuda.snap gpr4_
  gen examples_snapshots__acoustic_propagate_sponge_cuda.snap gsp4_
  echo '#define gen_pr_ry1 gpr1_k0'
  echo '#define gen_pr_ry4 gpr4_k0'
  echo '#define gen_sp_ry1 gsp1_k0'
  echo '#define gen_sp_ry4 gsp4_k0'
} > "$here/gen.cuh"
nvcc -O3 -std=c++17 -arch=sm_90 -fmad=false -lineinfo -Xptxas -v -o "$out/fused" "$here/fused.cu" 2> "$out/ptxas.log" || { cat "$out/ptxas.log"; exit 1; }
# Line-buffered: a run cut short by a time limit keeps what it printed.
stdbuf -oL "$out/fused" "$@"
