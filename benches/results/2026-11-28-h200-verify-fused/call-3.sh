#!/usr/bin/env bash
# Call 3 (seventh session): issue 35's table re-measured after the wavefront staircase: in core
# (kernels, with the hand-written probe on this card), out of core as on an 80 GB card (single
# steps against fused 2), and issue 36's 512^3 first and second process (fresh cache each pair).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/gpu.txt 2>&1
timeout 150 bash benches/probes/2026-11-26-fusion/probe/build-and-run.sh $L/probe 20 p512 p820 > $L/probe.log 2>&1
echo "probe rc=$?" >> $S
timeout 200 .gpu/bin/kernels --only acoustic,sponge,himeno --acoustic 512 --sponge 512 --himeno 512,512,768 --steps3d 24 --variants "fuse=2;fuse=3" > $L/k512.log 2>&1
echo "k512 rc=$?" >> $S
timeout 150 .gpu/bin/kernels --only acoustic,sponge --acoustic 820 --sponge 820 --steps3d 24 --variants "fuse=2" > $L/k820.log 2>&1
echo "k820 rc=$?" >> $S
for f in 1 2; do
  timeout 200 .gpu/bin/pipeline --program all --size ooc --steps 144 --configs default --fuse $f \
    --device-memory 80 --json $L/ooc-fuse$f.json > $L/ooc-fuse$f.log 2>&1
  echo "pipeline fuse $f rc=$?" >> $S
done
for i in 1 2 3; do
  C=$(mktemp -d)
  for w in first second; do
    s=$(date +%s%N)
    env PACC_CACHE_DIR=$C CUDA_CACHE_DISABLE=1 timeout 60 .gpu/bin/acoustic --backend cuda --size 512 --steps 200 > $L/a512-$i-$w.log 2>&1
    echo "a512 pair $i $w rc=$? process $(( ($(date +%s%N)-s)/1000000 )) ms $(grep -m1 ' wall ' $L/a512-$i-$w.log)" >> $S
  done
done
grep -E "^(acoustic|sponge|himeno) " $L/k512.log $L/k820.log >> $S
grep -A12 "^summary" $L/probe.log >> $S
grep -h "s/step" $L/ooc-fuse*.log >> $S
cd $OUT && tar czf logs.tgz logs && rm -rf logs
cat $S
