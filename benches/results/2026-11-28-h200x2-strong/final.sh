#!/usr/bin/env bash
# Device call (4 GPUs): GPU tests of the final code, then the strong-scaling shapes.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
B=.gpu/bin
L=$(mktemp -d)
nvidia-smi -L > $OUT/gpus.txt; nproc >> $OUT/gpus.txt
for t in cuda_exec fused_kernels; do
  timeout 120 $B/$t --include-ignored --test-threads=1 > $L/t-$t.log 2>&1
  echo "$t rc=$? $(grep 'test result' $L/t-$t.log | tail -1)" >> $OUT/summary.txt
done
timeout 150 $B/mpi --ignored > $L/t-mpi-gpu.log 2>&1
echo "mpi rc=$? $(grep -E '^test|passed' $L/t-mpi-gpu.log)" >> $OUT/summary.txt
STEPS=144 CASES="${CASES:-s1600 s1800 s2000}" RANKS="${RANKS:-2 4}" timeout ${ST:-300} bash benches/scaling.sh $B/acoustic $L/scaling > $L/scaling.log 2>&1
echo "scaling rc=$?" >> $OUT/summary.txt
cp $L/scaling/scaling.txt $L/scaling/scaling.jsonl $OUT/ 2>/dev/null
tar czf $OUT/logs.tgz -C $L .
