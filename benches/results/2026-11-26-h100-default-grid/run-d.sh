#!/usr/bin/env bash
# Issue 21, the fifth kind: one MPI rank's slab. Two ranks on one H100, propagate_sponge at
# 1200^3 for 48 steps: the default (each rank tuned, depth agreed) against fixed schemes,
# chunks and block steps. The figure is the slowest rank's pipeline seconds (its `rank N:
# ... s pipeline` note; page-locking and halo exchange apart). Binary: .gpu/bin/acoustic
# (release, features cuda,mpi).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
B=.gpu/bin
mkdir -p $OUT/d
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/d/device.txt
run() {
  local name=$1; shift
  timeout 120 mpirun --allow-run-as-root -np 2 $B/acoustic --size 1200 --steps 48 --sponge 20 \
    --backend cuda "$@" > $OUT/d/$name.log 2>&1
  echo "$name rc=$? $(grep -o 'rank [0-9]: [0-9]* planes, [0-9.]* s wall, [0-9.]* s pipeline' $OUT/d/$name.log | tr '\n' ';')" >> $OUT/d/summary.txt
}
run default
for s in wavefront region-sharing; do
  for k in 16 48; do
    for d in 6 12 24; do
      run $s-d$d-k$k --scheme $s --chunks $d --block-steps $k
    done
  done
done
cd $OUT/d && tar czf ../logs-d.tgz * && cd .. && rm -rf d
