#!/usr/bin/env bash
# Call 7 (2x H200): after keeping NCCL communicators between calls: the relay unit tests, the
# MPI GPU launches (2 and 3 ranks; the failing rank, resident and relayed) twice, and the
# `mpi gpu` case's seconds with 2 ranks (36 calls in one process) against calls 1, 2 and 5.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
.gpu/bin/pacc_runtime --ignored relay --test-threads=1 > $OUT/relay-tests.log 2>&1
echo "relay tests rc=$? ($(grep 'test result' $OUT/relay-tests.log))" > $OUT/summary.txt
for r in 1 2; do
  timeout 300 .gpu/bin/mpi --ignored > $OUT/mpi-ignored-$r.log 2>&1
  echo "mpi --ignored ($r) rc=$? $(tail -1 $OUT/mpi-ignored-$r.log)" >> $OUT/summary.txt
done
for r in 1 2 3; do
  s=$(date +%s%N)
  timeout -k 5 100 mpirun -n 2 --oversubscribe --allow-run-as-root -x RAYON_NUM_THREADS=1 \
    -x NCCL_NVLS_ENABLE=0 -x NCCL_DEBUG=WARN .gpu/bin/mpi gpu > $OUT/run$r.log 2>&1
  rc=$?
  echo "launch $r: rc=$rc $(( ($(date +%s%N) - s) / 1000000 )) ms; $(grep -c 'NCCL WARN' $OUT/run$r.log) NCCL warnings" >> $OUT/summary.txt
done
cat $OUT/summary.txt; grep -h "ok (" $OUT/mpi-ignored-*.log
cd $OUT && tar czf logs.tgz *.log && rm -f *.log
