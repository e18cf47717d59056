#!/usr/bin/env bash
# Call 6: `mpirun -n 2 mpi gpu` repeated on two GPUs; on a hang, the ranks' progress and threads.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
for r in 1 2 3 4 5; do
  mpirun -n 2 --oversubscribe --allow-run-as-root -x RAYON_NUM_THREADS=1 -x NCCL_NVLS_ENABLE=0 -x NCCL_DEBUG=WARN .gpu/bin/mpi gpu > $OUT/run$r.log 2>&1 &
  s=$(date +%s)
  while pgrep -f "bin/mpi gpu" > /dev/null; do sleep 1; [ $(( $(date +%s) - s )) -gt 50 ] && break; done
  echo "rep $r: $(( $(date +%s) - s )) s, $(tail -1 $OUT/run$r.log)" >> $OUT/summary.txt
  if pgrep -f "bin/mpi gpu" > /dev/null; then
    for p in $(pgrep -f "mpi gpu$"); do
      { echo "== pid $p $(cat /proc/$p/cmdline | tr '\0' ' ')"; for t in /proc/$p/task/*; do echo "-- $(cat $t/comm) $(cat $t/wchan 2>/dev/null) $(cat $t/stat | cut -d' ' -f3)"; head -6 $t/stack 2>/dev/null; done; } >> $OUT/stacks$r.txt
    done
    pkill -f mpirun; sleep 2; pkill -9 -f "mpi gpu"; break
  fi
done
cat $OUT/summary.txt
