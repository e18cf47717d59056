#!/usr/bin/env bash
# Call 2 (seventh session): the fused vector form with its marching loop unrolled (unroll=N sets
# PACC_FVUNROLL), the hand-written probe on this card, and the dynamic instruction mix (ncu).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv > $L/gpu.txt 2>&1
V="fuse=2;fuse=2,unroll=2;fuse=2,unroll=9"
timeout 200 .gpu/bin/kernels --only acoustic,sponge --acoustic 512 --sponge 512 --steps3d 24 --variants "$V" > $L/k512.log 2>&1
echo "k512 rc=$?" >> $S
timeout 150 bash benches/probes/2026-11-26-fusion/probe/build-and-run.sh $L/probe 20 p512 p820 > $L/probe.log 2>&1
echo "probe rc=$?" >> $S
M=smsp__inst_executed.sum,launch__registers_per_thread,launch__block_size,launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,smsp__sass_inst_executed_op_local_ld.sum,smsp__sass_inst_executed_op_local_st.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__average_warp_latency_issue_stalled_not_selected.ratio,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio,smsp__average_warp_latency_issue_stalled_mio_throttle.ratio,smsp__average_warp_latency_issue_stalled_no_instruction.ratio,smsp__average_warp_latency_issue_stalled_lg_throttle.ratio,smsp__thread_inst_executed_per_inst_executed.ratio
timeout 150 ncu --csv --metrics $M -k regex:'(_f2_vec|k0_vec)' --launch-count 12 .gpu/bin/kernels --only acoustic --acoustic 512 --steps3d 4 --variants "fuse=2;fuse=2,unroll=9" > $L/ncu.csv 2> $L/ncu.err
echo "ncu rc=$?" >> $S
timeout 150 ncu --csv --metrics sass__inst_executed_per_opcode --print-metric-instances values -k regex:'(_f2_vec|k0_vec)' --launch-count 12 .gpu/bin/kernels --only acoustic --acoustic 512 --steps3d 4 --variants "fuse=2;fuse=2,unroll=9" > $L/ncu-op.csv 2> $L/ncu-op.err
echo "ncu-op rc=$?" >> $S
grep -E "acoustic|sponge" $L/k512.log >> $S
grep -A30 "^summary" $L/probe.log >> $S
cd $OUT && tar czf logs.tgz logs && rm -rf logs
cat $S
