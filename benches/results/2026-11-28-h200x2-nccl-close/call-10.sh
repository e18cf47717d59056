#!/usr/bin/env bash
# Call 10 (2x H200): the final tree (set-up before the run again): relay tests, the MPI GPU
# launches, `mpi gpu` with 2 ranks twice.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
.gpu/bin/pacc_runtime --ignored relay --test-threads=1 > $OUT/relay-tests.log 2>&1
echo "relay tests rc=$? ($(grep 'test result' $OUT/relay-tests.log))" > $OUT/summary.txt
timeout 300 .gpu/bin/mpi --ignored > $OUT/mpi-ignored.log 2>&1
echo "mpi --ignored rc=$? $(tail -1 $OUT/mpi-ignored.log)" >> $OUT/summary.txt
for r in 1 2; do
  s=$(date +%s%N)
  timeout -k 5 100 mpirun -n 2 --oversubscribe --allow-run-as-root -x RAYON_NUM_THREADS=1 \
    -x NCCL_NVLS_ENABLE=0 -x NCCL_DEBUG=WARN .gpu/bin/mpi gpu > $OUT/run$r.log 2>&1
  rc=$?
  echo "launch $r: rc=$rc $(( ($(date +%s%N) - s) / 1000000 )) ms; $(grep -c 'NCCL WARN' $OUT/run$r.log) NCCL warnings" >> $OUT/summary.txt
done
cat $OUT/summary.txt; grep -h "ok (" $OUT/mpi-ignored.log
cd $OUT && tar czf logs.tgz *.log && rm -f *.log
