#!/usr/bin/env bash
# Issue 21: the default against the grid for a one-shot call: propagate (3 arrays) at
# 2000^3 (96 GB), 8 steps. Binary .gpu/bin/pipeline (release, cuda).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
B=.gpu/bin
mkdir -p $OUT/c
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/c/device.txt
timeout 500 $B/pipeline --program propagate --size 2000x2000x2000 --steps 8 --verify false \
  --configs default,grid --grid-chunks 16,32,64 --grid-steps 4,8 \
  --json $OUT/c/oneshot-2000.json > $OUT/c/oneshot-2000.log 2>&1
echo "oneshot rc=$?" >> $OUT/c/rc.txt
cd $OUT/c && tar czf ../logs-c.tgz *.log *.json *.txt && cd .. && rm -rf c
