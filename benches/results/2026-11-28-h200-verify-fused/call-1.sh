#!/usr/bin/env bash
# Call 1 (seventh session, 2026-11-28): the wavefront staircase change on the GPU (every GPU test
# binary), the hand-written fused probe on this card, and the in-core forms side by side.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/gpu.txt 2>&1
for t in fused_kernels cuda_exec translate_e2e pacc_runtime cuda_faults row_pitch staged_kernels kernel_occupancy fused_random_gpu; do
  s=$(date +%s%N)
  timeout 150 .gpu/bin/$t --include-ignored --test-threads=1 > $L/t-$t.log 2>&1
  echo "test $t rc=$? $(( ($(date +%s%N)-s)/1000000 )) ms $(grep 'test result' $L/t-$t.log | tail -1)" >> $S
done
timeout 150 bash benches/probes/2026-11-26-fusion/probe/build-and-run.sh $L/probe 20 p512 p820 > $L/probe.log 2>&1
echo "probe rc=$?" >> $S
timeout 150 .gpu/bin/kernels --only acoustic,sponge --acoustic 512 --sponge 512 --steps3d 24 --variants "fuse=2;fuse=2,vx=1" > $L/k512.log 2>&1
echo "k512 rc=$?" >> $S
cd $OUT && tar czf logs.tgz logs && rm -rf logs
cat $S
