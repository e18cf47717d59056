#!/usr/bin/env bash
# Call 3 (eighth session): the fused vector form's block after every point runs the body
# (kernels_8x48 is 1f410a6; kernels_16x24 and kernels_8x32 put that block first in
# fuse_vector::BLOCKS; kernels_int adds 32-bit plane bounds and output addresses from the
# step's offset, intbounds.patch), and Nsight Compute's stall reasons for the generated form
# beside the hand-written probe's fused2v at 16x24.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/gpu.txt 2>&1
for k in 8x48 16x24 8x32 int; do
  s=$(date +%s)
  timeout 90 .gpu/bin/kernels_$k --only acoustic,sponge --acoustic 512 --sponge 512 --steps3d 24 --variants "fuse=2" > $L/k512-$k.log 2>&1
  echo "k512 $k rc=$? $(( $(date +%s)-s )) s" >> $S
  grep -E "^(acoustic|sponge) .*marching" $L/k512-$k.log >> $S
done
M=smsp__inst_executed.sum,launch__registers_per_thread,launch__block_size,launch__grid_size,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_global_ld.sum
for r in barrier short_scoreboard long_scoreboard wait not_selected math_pipe_throttle mio_throttle no_instruction lg_throttle dispatch_stall selected; do
  M=$M,smsp__average_warp_latency_issue_stalled_$r.ratio
done
for k in 8x48 16x24; do
  timeout 90 ncu --csv --metrics $M -k regex:'_f2_vec' --launch-count 2 .gpu/bin/kernels_$k --only acoustic --acoustic 512 --steps3d 2 --variants "fuse=2" > $L/ncu-$k.csv 2> $L/ncu-$k.err
  echo "ncu $k rc=$?" >> $S
done
ONLY="vec fused2 16x24" timeout 120 bash benches/probes/2026-11-26-fusion/probe/build-and-run.sh $L/probe > $L/probe-build.log 2>&1
echo "probe build rc=$?" >> $S
ONLY="vec fused2 16x24" timeout 90 ncu --csv --metrics $M --kernel-name-base mangled -k regex:'fused2vILi16ELi24ELb0ELi1ELi1E' --launch-count 2 $L/probe/fused 4 p512 > $L/ncu-hand.csv 2> $L/ncu-hand.err
echo "ncu hand rc=$?" >> $S
rm -f $L/probe/fused
cd $OUT && tar czf logs.tgz logs && rm -rf logs
cat $S
