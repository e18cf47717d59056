#!/usr/bin/env bash
# Call 2 (eighth session): issue 35's out-of-core rows with both vector forms running every
# point (1f410a6), single steps and fused 2, planned as on an 80 GB card; then the hand-written
# vector probe (single step and fused 2) on this card.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/gpu.txt 2>&1
for f in 1 2; do
  s=$(date +%s)
  timeout 170 .gpu/bin/pipeline --program all --size ooc --steps 144 --configs default --fuse $f \
    --device-memory 80 --json $L/ooc-fuse$f.json > $L/ooc-fuse$f.log 2>&1
  echo "pipeline fuse $f rc=$? $(( $(date +%s)-s )) s" >> $S
  grep -E "^## |^\| default" $L/ooc-fuse$f.log >> $S
done
ONLY="vec" timeout 200 bash benches/probes/2026-11-26-fusion/probe/build-and-run.sh $L/probe 20 p512 > $L/probe.log 2>&1
echo "probe rc=$?" >> $S
grep -E "regs|summary|propagate 512" $L/probe.log >> $S
rm -f $L/probe/fused
cd $OUT && tar czf logs.tgz logs && rm -rf logs
cat $S
