#!/usr/bin/env bash
# Call 3 (2x H200, one GPU used by the pipeline runs): the relay's unit tests again (after the
# enqueue-failure fix), then the out-of-core pipeline runs of issue 35 planned as on an 80 GB card,
# single steps against fused 2, each against its link floor.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $OUT/cards.txt
if [ -z "${SKIP_RELAY:-}" ]; then
  .gpu/bin/pacc_runtime --ignored relay --test-threads=1 > $OUT/relay-tests.log 2>&1
  echo "relay tests rc=$? ($(grep 'test result' $OUT/relay-tests.log))" > $OUT/summary.txt
fi
for f in 1 2; do
  CUDA_VISIBLE_DEVICES=0 timeout 200 .gpu/bin/pipeline --program all --size ooc \
    --steps 144 --configs default --fuse $f --device-memory 80 --json $OUT/ooc-fuse$f.json \
    > $OUT/ooc-fuse$f.log 2>&1
  echo "pipeline fuse $f rc=$?" >> $OUT/summary.txt
done
cat $OUT/summary.txt; grep -h "s/step" $OUT/ooc-fuse*.log
cd $OUT && tar czf logs.tgz *.log *.json && rm -f *.log *.json ooc-*.svg ooc-*.png
