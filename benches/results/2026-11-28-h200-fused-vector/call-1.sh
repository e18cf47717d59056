#!/usr/bin/env bash
# Call 1 (2026-11-28, issue 35): in-core kernel rates of every form incl. the fused vector form,
# Nsight Compute figures of the fused kernels, then the fused and executor GPU tests.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv > $L/gpu.txt 2>&1
V="vx=1;fuse=2;fuse=2,vx=1;fuse=3;fuse=3,vx=1"
timeout 240 .gpu/bin/kernels --only acoustic,sponge,himeno --acoustic 512 --sponge 512 --himeno 512,512,768 --steps3d 24 --variants "$V" --json $L/k512.json > $L/k512.log 2>&1
echo "k512 rc=$?" >> $OUT/summary.txt
M=smsp__inst_executed.sum,launch__registers_per_thread,launch__block_size,launch__grid_size,launch__shared_mem_per_block_static,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,smsp__inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__sass_inst_executed_op_local_ld.sum
timeout 150 ncu --csv --metrics $M -k regex:'propagate_(f2|k0)' --launch-skip 0 --launch-count 12 .gpu/bin/kernels --only acoustic --acoustic 512 --steps3d 4 --variants "fuse=2;fuse=2,vx=1" > $L/ncu-prop.csv 2> $L/ncu-prop.err
echo "ncu rc=$?" >> $OUT/summary.txt
for t in fused_kernels fused_random_gpu cuda_exec; do
  timeout 170 .gpu/bin/$t --include-ignored --test-threads=1 > $L/t-$t.log 2>&1
  echo "$t rc=$? $(grep 'test result' $L/t-$t.log | tail -1)" >> $OUT/summary.txt
done
cat $OUT/summary.txt
