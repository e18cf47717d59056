#!/usr/bin/env bash
# Call 5 (ninth session), on 331bbb1's kernels: Himeno in core (single step and fused 2) and
# Nsight Compute on its Jacobi kernel and fused 2 kernel: what bounds the out-of-core run now
# that the link does not.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/gpu.txt 2>&1
cat $L/gpu.txt >> $S
timeout 90 .gpu/bin/kernels --only himeno --himeno 512,512,768 --steps3d 24 --variants "fuse=2" > $L/khimeno.log 2>&1
echo "khimeno rc=$?" >> $S
grep -E "^himeno .*marching|device copy|D2D" $L/khimeno.log >> $S
M=smsp__inst_executed.sum,launch__registers_per_thread,launch__block_size,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct
for k in k0 k1 f2; do
  timeout 60 ncu --csv --metrics $M -k regex:"^pacc_jacobi_${k}\$" --launch-skip 1 --launch-count 1 \
    .gpu/bin/kernels --only himeno --himeno 512,512,768 --steps3d 6 --variants "fuse=2" > $L/ncu-jacobi-$k.csv 2> $L/ncu-jacobi-$k.err
  echo "ncu jacobi $k rc=$?" >> $S
done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
cat $S
