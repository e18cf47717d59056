#!/usr/bin/env bash
# Call 1 (eighth session, 2026-11-28): the fused vector form that runs the body for every point
# (770e0fa) on the GPU, and the same speculation in the single-step vector form
# (single-step-speculate.patch, built into .gpu/ss/) side by side with the committed form.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/gpu.txt 2>&1
t() { # dir binary
  s=$(date +%s%N)
  timeout 150 .gpu/$1/$2 --include-ignored --test-threads=1 > $L/t-$1-$2.log 2>&1
  echo "test $1/$2 rc=$? $(( ($(date +%s%N)-s)/1000000 )) ms $(grep 'test result' $L/t-$1-$2.log | tail -1)" >> $S
}
for b in fused_kernels fused_random_gpu translate_e2e cuda_exec; do t bin $b; done
for b in fused_kernels translate_e2e cuda_exec; do t ss $b; done
K="--only acoustic,sponge,himeno --acoustic 512 --sponge 512 --himeno 512,512,768 --steps3d 24"
for d in bin ss; do
  s=$(date +%s%N)
  timeout 120 .gpu/$d/kernels $K --variants "fuse=2" > $L/k512-$d.log 2>&1
  echo "k512 $d rc=$? $(( ($(date +%s%N)-s)/1000000 )) ms" >> $S
done
M=smsp__inst_executed.sum,launch__registers_per_thread,launch__block_size,launch__grid_size,gpu__time_duration.sum,smsp__sass_inst_executed_op_local_ld.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active
for d in bin ss; do
  timeout 90 ncu --csv --metrics $M -k regex:'(_f2_vec|k0_vec)' --launch-count 8 .gpu/$d/kernels --only acoustic,sponge --acoustic 512 --sponge 512 --steps3d 2 --variants "fuse=2" > $L/ncu-$d.csv 2> $L/ncu-$d.err
  echo "ncu $d rc=$?" >> $S
done
for d in bin ss; do
  timeout 100 .gpu/$d/kernels --only acoustic,sponge --acoustic 820 --sponge 820 --steps3d 24 --variants "fuse=2" > $L/k820-$d.log 2>&1
  echo "k820 $d rc=$?" >> $S
done
for f in $L/k512-*.log $L/k820-*.log; do echo "== $f" >> $S; grep -E "^(acoustic|sponge|himeno) .*(marching|fuse)" $f >> $S; done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
cat $S
