#!/usr/bin/env bash
# Call 2 (ninth session): issue 35's out-of-core rows with the tuner of 3f790af (sweep depths,
# two sets for one wavefront block, the link at 0.84 of its measured rate), planned as on an
# 80 GB card, with the in-core runs at the in-core sizes in the same process (time per point);
# fused 2 out of core; then the 32-bit bounds patch (intbounds-2.patch) against HEAD in core,
# alternating.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/gpu.txt 2>&1
cat $L/gpu.txt >> $S
for f in 1 2; do
  configs=default; sizes=ooc
  [[ $f == 1 ]] && { configs=in-core,default; sizes=incore,ooc; }
  s=$(date +%s)
  timeout 240 .gpu/bin/pipeline --program all --size $sizes --steps 144 --configs $configs --fuse $f \
    --device-memory 80 --json $L/fuse$f.json > $L/fuse$f.log 2>&1
  echo "pipeline fuse $f rc=$? $(( $(date +%s)-s )) s" >> $S
  grep -E "^link|^## |^\| (default|in-core)" $L/fuse$f.log >> $S
done
for k in kernels-head kernels-intb kernels-head kernels-intb; do
  timeout 60 .gpu/bin/$k --only acoustic,sponge --acoustic 512 --sponge 512 --steps3d 24 --variants "fuse=2;fuse=3" > $L/k512-$k.log 2>&1
  echo "k512 $k rc=$?" >> $S
  grep -E "^(acoustic|sponge) .*marching" $L/k512-$k.log >> $S
done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
cat $S
