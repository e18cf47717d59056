#!/usr/bin/env bash
# Issue 21: the default configuration (no options) against a grid over region sharing and the
# wavefront x chunks x block steps, plus the in-core run, for propagate_sponge in core (820^3,
# 144 steps) and out of core (1800^3, 144 steps). Binary .gpu/bin/pipeline (release, cuda).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
B=.gpu/bin
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt
timeout 200 $B/pipeline --program acoustic --size 820x820x820 --steps 144 --verify false \
  --configs default,region-sharing,wavefront,in-core,grid --grid-chunks 2,4,8,16 \
  --grid-steps 8,16,48,144 --json $OUT/incore-820.json > $OUT/incore-820.log 2>&1
echo "incore rc=$?" >> $OUT/rc.txt
timeout 360 $B/pipeline --program acoustic --size ooc --steps 144 --verify false \
  --configs default,grid --grid-chunks 8,16 --grid-steps 16,48 \
  --json $OUT/ooc-1800.json > $OUT/ooc-1800.log 2>&1
echo "ooc rc=$?" >> $OUT/rc.txt
