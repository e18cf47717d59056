#!/usr/bin/env bash
# Issue 22 baseline (before co-scheduling): link-bound runs with and without rate-16
# compression of the written arrays, same plan. Binary .gpu/bin/pipeline (release, cuda).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
B=.gpu/bin; L=$OUT/base; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/device.txt
for codec in zfp f16; do
  timeout 250 $B/pipeline --program acoustic --size 1800x1800x1800 --steps 48 --verify false \
    --configs wavefront,wavefront-compressed --at 16,8 --codec $codec --max-host-gib 122 \
    --json $L/sponge-k8-$codec.json > $L/sponge-k8-$codec.log 2>&1
  echo "sponge $codec rc=$?" >> $L/rc.txt
done
tar czf $OUT/base.tgz -C $OUT base && rm -rf $L
