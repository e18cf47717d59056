#!/usr/bin/env bash
# Issue 21, after RESIDENT_MARGIN: the default (no options) against the grid (region sharing
# and the wavefront x chunks x block steps, and the in-core run), in the same run, for
# propagate_sponge and propagate in core (820^3, 144 steps) and Himeno out of core (1200^3,
# 48 sweeps). Binary .gpu/bin/pipeline (release, cuda).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
B=.gpu/bin
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt
for prog in acoustic propagate; do
  timeout 150 $B/pipeline --program $prog --size 820x820x820 --steps 144 --verify false \
    --configs default,in-core,grid --grid-chunks 2,4,8,16 --grid-steps 48,144 \
    --json $OUT/incore-820-$prog.json > $OUT/incore-820-$prog.log 2>&1
  echo "$prog rc=$?" >> $OUT/rc.txt
done
timeout 280 $B/pipeline --program himeno --size 1200x1200x1200 --steps 48 --verify false \
  --configs default,grid --grid-chunks 8,16 --grid-steps 16,48 \
  --json $OUT/ooc-1200-himeno.json > $OUT/ooc-1200-himeno.log 2>&1
echo "himeno rc=$?" >> $OUT/rc.txt
cd $OUT && tar czf logs.tgz *.log *.json *.txt
