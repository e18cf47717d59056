#!/usr/bin/env bash
# Call 3 (ninth session), on 331bbb1: every GPU test binary (the tuner's sweep depths and two
# sets, the 32-bit fused bounds); the README's example on the GPU; fused 2 out of core with the
# bench tuning the fused program (5609cd1); Nsight Compute on the fused 2 kernels.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/gpu.txt 2>&1
cat $L/gpu.txt >> $S
for t in fused_kernels fused_random_gpu translate_e2e cuda_exec pacc_runtime cuda_faults row_pitch staged_kernels kernel_occupancy; do
  s=$(date +%s%N)
  timeout 150 .gpu/bin/$t --include-ignored --test-threads=1 > $L/t-$t.log 2>&1
  echo "test $t rc=$? $(( ($(date +%s%N)-s)/1000000 )) ms $(grep 'test result' $L/t-$t.log | tail -1)" >> $S
done
timeout 60 .gpu/bin/acoustic --size 128 --steps 200 --verify > $L/example.log 2>&1
echo "example rc=$?" >> $S; tail -3 $L/example.log >> $S
s=$(date +%s)
timeout 200 .gpu/bin/pipeline --program all --size ooc --steps 144 --configs default --fuse 2 \
  --device-memory 80 --json $L/ooc-fuse2.json > $L/ooc-fuse2.log 2>&1
echo "pipeline fuse 2 rc=$? $(( $(date +%s)-s )) s" >> $S
grep -E "^## |^\| default|failed" $L/ooc-fuse2.log >> $S
M=smsp__inst_executed.sum,launch__registers_per_thread,launch__block_size,launch__grid_size,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active
timeout 90 ncu --csv --metrics $M -k regex:'_f2_vec' --launch-count 4 .gpu/bin/kernels --only acoustic,sponge --acoustic 512 --sponge 512 --steps3d 2 --variants "fuse=2" > $L/ncu.csv 2> $L/ncu.err
echo "ncu rc=$?" >> $S
cd $OUT && tar czf logs.tgz logs && rm -rf logs
cat $S
