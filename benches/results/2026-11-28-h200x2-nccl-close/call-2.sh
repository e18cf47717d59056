#!/usr/bin/env bash
# Call 2 (2x H200): the relay's unit tests (abandon before waiting, pageable and pinned; every
# byte over several rounds), `mpirun -n 2 mpi gpu` launched 4 times (each stopped after 100 s),
# then the out-of-core relayed case of the scaling bench against one GPU.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/cards.txt
.gpu/bin/pacc_runtime --ignored relay --test-threads=1 > $OUT/relay-tests.log 2>&1
echo "relay tests rc=$? ($(grep 'test result' $OUT/relay-tests.log))" > $OUT/summary.txt
for r in 1 2 3 4; do
  s=$(date +%s)
  timeout -k 5 100 mpirun -n 2 --oversubscribe --allow-run-as-root -x RAYON_NUM_THREADS=1 \
    -x NCCL_NVLS_ENABLE=0 -x NCCL_DEBUG=WARN .gpu/bin/mpi gpu > $OUT/run$r.log 2>&1
  rc=$?
  echo "launch $r: rc=$rc $(( $(date +%s) - s )) s; $(grep -c 'NCCL WARN' $OUT/run$r.log) NCCL warnings" >> $OUT/summary.txt
  pkill -9 -f "bin/mpi gpu" 2>/dev/null
done
DEVMEM=10 STEPS=144 RANKS="1 2" CASES="ooc" bash benches/scaling.sh .gpu/bin/acoustic $OUT/scaling > $OUT/scaling.log 2>&1
echo "scaling rc=$?" >> $OUT/summary.txt
cat $OUT/summary.txt; cat $OUT/scaling/scaling.txt
cd $OUT && tar czf logs.tgz *.log scaling && rm -rf *.log scaling
