#!/usr/bin/env bash
# Issue 22: the codec's grid beside the stencil (queue = one thread per unit, sized = Li/Tu/Zeng,
# partition = Slate-style share of the SMs), link-bound wavefront k=8, rate-16 zfp.
# Binaries .gpu/bin/{pipeline,translate_e2e} (release, cuda).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
B=.gpu/bin; L=$OUT/grids; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/device.txt
timeout 100 $B/translate_e2e --include-ignored --test-threads=1 cuda_ > $L/translate_e2e.log 2>&1
echo "translate_e2e rc=$?" >> $L/rc.txt
# 1800^3 (93 GB): only the written arrays' compressed copies fit in the 128 GB host.
timeout 240 $B/pipeline --program acoustic --size 1800x1800x1800 --steps 48 --verify false \
  --configs wavefront,wavefront-compressed --at 16,8 --codec-grids queue,sized,partition \
  --max-host-gib 122 --json $L/sponge1800-k8.json > $L/sponge1800-k8.log 2>&1
echo "sponge1800 rc=$?" >> $L/rc.txt
# 1600^3 (66 GB): every array compressed (inputs once), the same plan shape.
timeout 200 $B/pipeline --program acoustic --size 1600x1600x1600 --steps 48 --verify false \
  --configs wavefront,wavefront-compressed --at 16,8 --codec-grids queue,sized \
  --compress-arrays prev,cur,vel,damp --max-host-gib 122 \
  --json $L/sponge1600-k8-all.json > $L/sponge1600-k8-all.log 2>&1
echo "sponge1600 rc=$?" >> $L/rc.txt
rm -f $L/*.svg $L/*.png
tar czf $OUT/grids.tgz -C $OUT grids && rm -rf $L
