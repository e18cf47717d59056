#!/usr/bin/env bash
# Call 6 (2x H200): the resident case after the non-blocking NCCL change (every exchange's
# ncclGroupEnd is now polled): propagate_sponge 1200^3, 144 steps, 1 and 2 GPUs.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
STEPS=144 RANKS="1 2" CASES="fit" bash benches/scaling.sh .gpu/bin/acoustic $OUT/scaling > $OUT/scaling.log 2>&1
echo "scaling rc=$?"; cat $OUT/scaling/scaling.txt
cd $OUT && tar czf logs.tgz scaling.log scaling && rm -rf scaling.log scaling
