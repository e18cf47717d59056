#!/usr/bin/env bash
# Call 5: where `mpirun -n 2 mpi gpu` hangs on two GPUs: the ranks' progress and their stacks.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
which gdb eu-stack > $OUT/tools.txt 2>&1
mpirun -n 2 --oversubscribe --allow-run-as-root -x RAYON_NUM_THREADS=1 -x NCCL_NVLS_ENABLE=0 -x NCCL_DEBUG=WARN -x RUST_BACKTRACE=1 .gpu/bin/mpi gpu > $OUT/run.log 2>&1 &
for i in $(seq 1 50); do sleep 1; pgrep -f "bin/mpi gpu" > /dev/null || break; done
for p in $(pgrep -f "^.gpu/bin/mpi gpu|/mpi gpu$"); do
  { echo "== pid $p"; for t in /proc/$p/task/*; do echo "-- $(cat $t/comm) $(cat $t/wchan 2>/dev/null)"; cat $t/stack 2>/dev/null | head -8; done; } >> $OUT/stacks.txt
  command -v gdb > /dev/null && timeout 40 gdb -p $p -batch -ex "thread apply all bt 25" >> $OUT/gdb.txt 2>&1
done
pkill -f mpirun; sleep 1
tail -40 $OUT/run.log
