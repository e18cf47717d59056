#!/usr/bin/env bash
# Call 4 (seventh session): NVRTC's compile of a single-step module with and without split
# compilation (issue 36's first-process cost), and the fused vector form's dynamic opcode mix.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
S=$OUT/summary.txt
nproc > $L/nproc.txt
timeout 200 bash benches/probes/2026-11-28-nvrtc-split/run.sh $L/nvrtc > $L/nvrtc.log 2>&1
echo "nvrtc rc=$?" >> $S
timeout 120 ncu --csv --metrics sass__inst_executed_per_opcode --print-metric-instances details -k regex:'_f2_vec' --launch-count 1 .gpu/bin/kernels --only acoustic --acoustic 512 --steps3d 4 --variants "fuse=2" > $L/ncu-op.csv 2> $L/ncu-op.err
echo "ncu-op rc=$?" >> $S
cat $L/nvrtc.log >> $S
rm -f $L/nvrtc/*.cubin $L/nvrtc/nvrtc-time
cd $OUT && tar czf logs.tgz logs && rm -rf logs
cat $S
