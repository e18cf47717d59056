#!/usr/bin/env bash
# Call 4 (ninth session), on 331bbb1's kernels: issue 35's 820^3 rows in core, and Nsight Compute
# on the single step, fused 2 and fused 3 vector kernels at 512^3 (instructions, occupancy,
# stall reasons per issued instruction), for the closing note's causes.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/gpu.txt 2>&1
cat $L/gpu.txt >> $S
timeout 90 .gpu/bin/kernels --only acoustic,sponge --acoustic 820 --sponge 820 --steps3d 24 --variants "fuse=2" > $L/k820.log 2>&1
echo "k820 rc=$?" >> $S
grep -E "^(acoustic|sponge) .*marching" $L/k820.log >> $S
M=smsp__inst_executed.sum,launch__registers_per_thread,launch__block_size,launch__grid_size,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__occupancy_limit_registers,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic
for r in barrier short_scoreboard long_scoreboard wait not_selected math_pipe_throttle mio_throttle lg_throttle no_instruction dispatch_stall selected; do
  M=$M,smsp__average_warp_latency_issue_stalled_$r.ratio
done
for prog in acoustic:propagate sponge:propagate_sponge; do
  only=${prog%%:*}; name=${prog##*:}
  for k in k0_vec f2_vec f3_vec; do
    timeout 60 ncu --csv --metrics $M -k regex:"^pacc_${name}_${k}\$" --launch-skip 1 --launch-count 1 \
      .gpu/bin/kernels --only $only --$only 512 --steps3d 6 --variants "fuse=2;fuse=3" > $L/ncu-$name-$k.csv 2> $L/ncu-$name-$k.err
    echo "ncu $name $k rc=$?" >> $S
  done
done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
cat $S
