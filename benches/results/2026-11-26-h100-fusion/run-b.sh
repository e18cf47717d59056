#!/usr/bin/env bash
# Device call B (2026-11-26): GPU tests (vector form, fused kernels, read-only ring, page-locking
# faults), then in-core kernel rates of the single-step forms and the fused kernels side by
# side, and Nsight Compute instruction counts of the fused kernels.
# Run from the repository root after `../shared/tools/gpu-pack`; logs go to $OUT.
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  for t in fused_kernels staged_kernels kernel_occupancy row_pitch translate_e2e cuda_exec wavefront examples_equivalence read_only_ring cuda_faults; do
    echo "== $t"
    timeout 400 .gpu/bin/$t --include-ignored --test-threads=1 2>&1 | tail -n 40
  done
} > "$out/gpu-tests.log" 2>&1
grep -E "^== |^test result|FAILED|panicked" "$out/gpu-tests.log"
k=.gpu/bin/kernels
{
  echo "== kernels --only acoustic,sponge,himeno --acoustic 512 --sponge 512 --himeno 512,512,768 --steps3d 24"
  $k --only acoustic,sponge,himeno --acoustic 512 --sponge 512 --himeno 512,512,768 --steps3d 24 --variants "vx=1;vx=1,ry=4;fuse=2;fuse=3" --json "$out/k512f.json"
  echo "== kernels --only sponge,himeno --sponge 1000 --himeno 1024,512,512 --steps3d 24"
  $k --only sponge,himeno --sponge 1000 --himeno 1024,512,512 --steps3d 24 --variants "vx=1,ry=4;fuse=2;fuse=3" --json "$out/k1000f.json"
} > "$out/kernels.log" 2>&1
grep -E "^== |Gpt/s|differ|marching|plain" "$out/kernels.log" | head -60
for kn in "pacc_jacobi_f2" "pacc_jacobi_k0$" "pacc_propagate_f2" "pacc_propagate_k0_vec"; do
  case $kn in *jacobi*) m=himeno;; *) m=acoustic;; esac
  ncu --clock-control none -k regex:"$kn" --launch-count 1 \
    --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active \
    --csv $k --only $m --acoustic 512 --himeno 512,512,768 --steps3d 4 --variants "fuse=2" 2>&1 | grep -E '^"[0-9]'
done > "$out/ncu.csv"
wc -l "$out/ncu.csv"
