#!/usr/bin/env bash
# Call 3 (issue 35, 2026-11-28): in-core rates of every kernel form side by side (vector single
# step, one-column fused, fused vector form), Nsight Compute figures, the fused GPU tests.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/gpu.txt 2>&1
V="vx=1;fuse=2;fuse=2,vx=1;fuse=3;fuse=3,vx=1"
timeout 240 .gpu/bin/kernels --only acoustic,sponge,himeno --acoustic 512 --sponge 512 --himeno 512,512,768 --steps3d 24 --variants "$V" --json $L/k512.json > $L/k512.log 2>&1
echo "k512 rc=$?" >> $OUT/summary.txt
timeout 200 .gpu/bin/kernels --only acoustic,sponge --acoustic 820 --sponge 820 --steps3d 24 --variants "fuse=2;fuse=2,vx=1" --json $L/k820.json > $L/k820.log 2>&1
echo "k820 rc=$?" >> $OUT/summary.txt
M=smsp__inst_executed.sum,launch__registers_per_thread,launch__block_size,launch__grid_size,launch__shared_mem_per_block_static,launch__occupancy_limit_registers,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,smsp__sass_inst_executed_op_local_ld.sum,smsp__sass_inst_executed_op_local_st.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio
for m in acoustic sponge; do
  timeout 120 ncu --csv --metrics $M -k regex:'(_f2|k0_vec)' --launch-count 6 .gpu/bin/kernels --only $m --acoustic 512 --sponge 512 --steps3d 4 --variants "fuse=2;fuse=2,vx=1" > $L/ncu-$m.csv 2> $L/ncu-$m.err
  echo "ncu $m rc=$?" >> $OUT/summary.txt
done
for t in fused_kernels fused_random_gpu; do
  timeout 170 .gpu/bin/$t --include-ignored --test-threads=1 > $L/t-$t.log 2>&1
  echo "$t rc=$? $(grep 'test result' $L/t-$t.log | tail -1)" >> $OUT/summary.txt
done
cat $OUT/summary.txt
