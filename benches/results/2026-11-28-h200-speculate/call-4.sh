#!/usr/bin/env bash
# Call 4 (eighth session): the fused vector form summing its leading lets a term at a time
# across the points, each row loaded before the first term that reads it, and the row's middle
# vector from the thread's register (fuse_vector/sums.rs). Every GPU test binary on it; kernels
# side by side with 1f410a6 (kernels_old) and with 16x24 first (kernels_new_16x24); Nsight
# Compute's stall reasons; the out-of-core fused rows.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/gpu.txt 2>&1
for t in fused_kernels fused_random_gpu translate_e2e cuda_exec pacc_runtime cuda_faults row_pitch staged_kernels kernel_occupancy; do
  s=$(date +%s%N)
  timeout 150 .gpu/bin/$t --include-ignored --test-threads=1 > $L/t-$t.log 2>&1
  echo "test $t rc=$? $(( ($(date +%s%N)-s)/1000000 )) ms $(grep 'test result' $L/t-$t.log | tail -1)" >> $S
done
for k in kernels_old kernels kernels_new_16x24 kernels_old kernels; do
  timeout 60 .gpu/bin/$k --only acoustic,sponge --acoustic 512 --sponge 512 --steps3d 24 --variants "fuse=2;fuse=3" > $L/k512-$k.log 2>&1
  echo "k512 $k rc=$?" >> $S
  grep -E "^(acoustic|sponge) .*marching" $L/k512-$k.log >> $S
done
timeout 60 .gpu/bin/kernels --only acoustic,sponge --acoustic 820 --sponge 820 --steps3d 24 --variants "fuse=2" > $L/k820.log 2>&1
echo "k820 rc=$?" >> $S
grep -E "^(acoustic|sponge) .*marching" $L/k820.log >> $S
M=smsp__inst_executed.sum,launch__registers_per_thread,launch__block_size,launch__grid_size,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_local_ld.sum
for r in barrier short_scoreboard long_scoreboard wait not_selected math_pipe_throttle mio_throttle no_instruction dispatch_stall selected; do
  M=$M,smsp__average_warp_latency_issue_stalled_$r.ratio
done
timeout 90 ncu --csv --metrics $M -k regex:'_f2_vec' --launch-count 4 .gpu/bin/kernels --only acoustic,sponge --acoustic 512 --sponge 512 --steps3d 2 --variants "fuse=2" > $L/ncu.csv 2> $L/ncu.err
echo "ncu rc=$?" >> $S
timeout 170 .gpu/bin/pipeline --program all --size ooc --steps 144 --configs default --fuse 2 \
  --device-memory 80 --json $L/ooc-fuse2.json > $L/ooc-fuse2.log 2>&1
echo "pipeline fuse 2 rc=$?" >> $S
grep -E "^## |^\| default" $L/ooc-fuse2.log >> $S
cd $OUT && tar czf logs.tgz logs && rm -rf logs
cat $S
