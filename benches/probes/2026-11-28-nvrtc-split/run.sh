#!/usr/bin/env bash
# Builds the probe and times NVRTC on the committed generated sources of `propagate` and
# `propagate_sponge` (tests/snapshots), as the runtime compiles a single-step run's module,
# with and without NVRTC's split compilation. Usage (GPU machine, repository root):
#   bash benches/probes/2026-11-28-nvrtc-split/run.sh OUTDIR
set -euo pipefail
out=${1:-/tmp/nvrtc-split}; mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
gcc -O2 -o "$out/nvrtc-time" "$here/nvrtc-time.c" -I/usr/local/cuda/include -L/usr/local/cuda/lib64 -lnvrtc
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
for prog in propagate propagate_sponge; do
  awk 'BEGIN{n=0} /^---$/{n++; next} n>=2' "tests/snapshots/examples_snapshots__acoustic_${prog}_cuda.snap" > "$out/$prog.cu"
  for rep in 1 2 3; do
    for opt in none --split-compile=0 --split-compile=4; do
      o=$opt; [[ $o == none ]] && o=
      printf '%s rep %s ' "$prog" "$rep"
      "$out/nvrtc-time" "$out/$prog.cu" "$out/$prog-${opt#--}.cubin" $o
    done
  done
  for opt in --split-compile=0 --split-compile=4; do
    cmp -s "$out/$prog-none.cubin" "$out/$prog-${opt#--}.cubin" && echo "$prog $opt: same machine code" || echo "$prog $opt: machine code differs"
  done
done
