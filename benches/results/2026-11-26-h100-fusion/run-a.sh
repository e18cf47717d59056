#!/usr/bin/env bash
# Device call A (2026-11-26): GPU tests of the vector form, in-core kernel rates of the vector
# and scalar forms side by side, and Nsight Compute instruction counts of both.
# Run from the repository root after `../shared/tools/gpu-pack`; logs go to $OUT.
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  for t in staged_kernels kernel_occupancy row_pitch translate_e2e cuda_exec wavefront examples_equivalence; do
    echo "== $t"
    timeout 400 .gpu/bin/$t --include-ignored --test-threads=1 2>&1 | tail -n 60
  done
} > "$out/gpu-tests.log" 2>&1
grep -E "^== |^test result|FAILED|panicked" "$out/gpu-tests.log"
k=.gpu/bin/kernels
{
  echo "== kernels --only acoustic --acoustic 512 --steps3d 100"
  $k --only acoustic --acoustic 512 --steps3d 100 --variants "vx=1;vx=1,ry=4;bx=32,by=8;minb=1" --json "$out/k512.json"
  echo "== kernels --only acoustic,sponge --acoustic 820 --sponge 1000 --steps3d 40"
  $k --only acoustic,sponge --acoustic 820 --sponge 1000 --steps3d 40 --variants "vx=1;vx=1,ry=4;bx=32,by=8;minb=1" --json "$out/k820.json"
  echo "== kernels --only sponge,himeno --sponge 1400 --steps3d 20"
  $k --only sponge,himeno --sponge 1400 --steps3d 20 --variants "vx=1;vx=1,ry=4;minb=1" --json "$out/k1400.json"
} > "$out/kernels.log" 2>&1
grep -E "^== |Gpt/s|differ|form" "$out/kernels.log" | head -80
# Warp instructions per launch of the vector and the scalar staged kernel (512^3, 4 steps).
for kn in "pacc_propagate_k0_vec" "pacc_propagate_k0$"; do
  ncu --clock-control none -k regex:"$kn" --launch-count 2 \
    --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active \
    --csv $k --only acoustic --acoustic 512 --steps3d 4 --variants "vx=1" 2>&1 | grep -E '^"[0-9]' 
done > "$out/ncu.csv"
wc -l "$out/ncu.csv"
