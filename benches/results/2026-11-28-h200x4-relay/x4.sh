#!/usr/bin/env bash
# Device call (4 GPUs): the MPI GPU launches with their times, then fit and ooc scaling on 1, 2, 4.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
B=.gpu/bin
L=$(mktemp -d)
nvidia-smi -L > $OUT/gpus.txt; nvidia-smi topo -m >> $OUT/gpus.txt 2>&1; nproc >> $OUT/gpus.txt; free -g >> $OUT/gpus.txt
s=$(date +%s.%N)
PACC_MPI_TEST_VERBOSE=1 NCCL_DEBUG=WARN timeout ${MT:-420} $B/mpi --ignored > $L/t-mpi-gpu.log 2>&1
echo "mpi rc=$? $(grep -E '^test|passed' $L/t-mpi-gpu.log)" >> $OUT/summary.txt
echo "mpi took $(echo "$(date +%s.%N) - $s" | bc) s" >> $OUT/summary.txt
if [[ -n ${CASES:-} ]]; then
STEPS=144 RANKS="${RANKS:-1 2 4}" timeout ${ST:-300} bash benches/scaling.sh $B/acoustic $L/scaling > $L/scaling.log 2>&1
echo "scaling rc=$?" >> $OUT/summary.txt
cp $L/scaling/scaling.txt $L/scaling/scaling.jsonl $OUT/ 2>/dev/null
fi
tar czf $OUT/logs.tgz -C $L .
