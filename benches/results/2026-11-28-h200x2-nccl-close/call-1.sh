#!/usr/bin/env bash
# Call 1 (2x H200): the relay's abandon-before-wait unit tests, then `mpirun -n 2 mpi gpu`
# launched 5 times (each stopped after 100 s), NCCL warnings on.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/cards.txt
.gpu/bin/pacc_runtime --ignored relay --test-threads=1 > $OUT/relay-tests.log 2>&1
echo "relay tests rc=$?" > $OUT/summary.txt
for r in 1 2 3 4 5; do
  s=$(date +%s)
  timeout -k 5 100 mpirun -n 2 --oversubscribe --allow-run-as-root -x RAYON_NUM_THREADS=1 \
    -x NCCL_NVLS_ENABLE=0 -x NCCL_DEBUG=WARN .gpu/bin/mpi gpu > $OUT/run$r.log 2>&1
  rc=$?
  echo "launch $r: rc=$rc $(( $(date +%s) - s )) s; $(grep -c 'NCCL WARN' $OUT/run$r.log) NCCL warnings" >> $OUT/summary.txt
  pkill -9 -f "bin/mpi gpu" 2>/dev/null
done
cat $OUT/summary.txt
cd $OUT && tar czf logs.tgz *.log && rm -f *.log
