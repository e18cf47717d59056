#!/usr/bin/env bash
# Device call 7 (issue 36): no regression on long runs: the sponge 1800^3, 144 steps, out of core
# as on an 80 GB card (the command of the issue 35 table, 2026-11-28-h200x2-nccl-close/call-3.sh).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $OUT/cards.txt
timeout 220 .gpu/bin/pipeline --program acoustic --size ooc --steps 144 --configs default --fuse 1 \
  --device-memory 80 --json $OUT/ooc-sponge.json > $OUT/ooc-sponge.log 2>&1
echo "pipeline rc=$?" > $OUT/summary.txt
grep -h "s/step\|floor\|host path\|page-locked\|bounced" $OUT/ooc-sponge.log >> $OUT/summary.txt
