#!/usr/bin/env bash
# Call 2 (issue 35): the fused vector form after hoisting its guards; blocks tried with a probe
# build (PACC_PROBE_FVB); Nsight Compute; the fused GPU tests.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
timeout 200 .gpu/bin/kernels --only acoustic,sponge --acoustic 512 --sponge 512 --steps3d 24 --variants "fuse=2;fuse=2,vx=1" --json $L/k512.json > $L/k512.log 2>&1
echo "k512 rc=$?" >> $OUT/summary.txt
for B in 16,24 16,32 8,32 8,48 32,16 16,16 32,12; do
  for MB in 1 2; do
    PACC_PROBE_FVB=$B PACC_PROBE_FVMINB=$MB timeout 60 .gpu/bin/kernels-probe --only acoustic --acoustic 512 --steps3d 12 --variants "fuse=2" > $L/probe-$B-$MB.log 2>&1
    echo "block $B minb $MB: $(grep 'fuse=2' $L/probe-$B-$MB.log)" >> $OUT/summary.txt
  done
done
M=smsp__inst_executed.sum,launch__registers_per_thread,launch__block_size,launch__grid_size,launch__shared_mem_per_block_static,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,smsp__inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_local_ld.sum,smsp__sass_inst_executed_op_local_st.sum,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active
timeout 120 ncu --csv --metrics $M -k regex:'propagate_f2' --launch-count 2 .gpu/bin/kernels --only acoustic --acoustic 512 --steps3d 4 --variants "fuse=2" > $L/ncu-prop.csv 2> $L/ncu-prop.err
echo "ncu rc=$?" >> $OUT/summary.txt
timeout 170 .gpu/bin/fused_kernels --include-ignored --test-threads=1 > $L/t-fused_kernels.log 2>&1
echo "fused_kernels rc=$? $(grep 'test result' $L/t-fused_kernels.log | tail -1)" >> $OUT/summary.txt
cat $OUT/summary.txt
