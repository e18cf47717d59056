#!/usr/bin/env bash
# Builds the generated Himeno kernels (himeno.cu: `pacc expand src/models/himeno.rs --cuda`, the
# marching loop's `#pragma unroll PACC_UNROLL` written as 2 for nvcc) per shape into $CUBINS,
# then (with --run) the driver, and runs it: bash build-and-run.sh [--run] [NI NJ NK]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cubins=${CUBINS:-$here/cubins}
mkdir -p "$cubins"
run=0; [[ "${1:-}" == "--run" ]] && { run=1; shift; }
opts="-arch=sm_90 -fmad=false -cubin -O3"
if [[ $run == 0 ]]; then
  nvcc $opts -DPACC_MINB=2 -o "$cubins/single.cubin" "$here/himeno.cu"
  for v in f2_32x16 f2_64x16 f2_32x32 f2_64x8 f2_128x8 f3_32x16 f3_64x16 f3_32x32; do
    s=${v:1:1}; b=${v:3}; bx=${b%x*}; by=${b#*x}
    nvcc $opts -DPACC_FUSE=$s -DPACC_FBX=$bx -DPACC_FBY=$by -Xptxas -v -o "$cubins/$v.cubin" "$here/himeno.cu" 2>&1 |
      grep -A2 "entry function 'pacc_jacobi_f$s'" | tail -2 | sed "s/^/$v: /" || true
  done
  exit 0
fi
nvcc -O2 -o "$cubins/driver" "$here/driver.cu" -lcuda
cd "$cubins" && ./driver "$@"
