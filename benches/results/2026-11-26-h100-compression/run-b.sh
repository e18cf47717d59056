#!/usr/bin/env bash
# Issue 22, call B: a kernel-bound run (the deep wavefront d16 k48, 144 steps, 1800^3) with the
# written arrays compressed at rate 16 and each codec grid, against uncompressed; a short
# link-bound call (propagate, 1800^3, 8 steps, k=2, every array compressed); the in-core kernel
# at 820^3 for the per-point reference; and the error after 144 steps (fidelity, 256^3, k=8,
# 17 lossy round trips; zfp and f16). Binaries in .gpu/bin (release, cuda).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
B=.gpu/bin; L=$OUT/b; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/device.txt
timeout 250 $B/pipeline --program acoustic --size incore,1800x1800x1800 --steps 144 --verify false \
  --configs in-core,wavefront,wavefront-compressed --at 16,48 --codec-grids queue,sized,priority \
  --max-host-gib 122 --json $L/sponge1800-k48.json > $L/sponge1800-k48.log 2>&1
echo "sponge1800-k48 rc=$?" >> $L/rc.txt
timeout 150 $B/pipeline --program propagate --size 1800x1800x1800 --steps 8 --verify false \
  --configs wavefront,wavefront-compressed --at 16,2 --codec-grids queue \
  --compress-arrays prev,cur,vel --max-host-gib 122 \
  --json $L/propagate1800-8steps-k2.json > $L/propagate1800-8steps-k2.log 2>&1
echo "propagate1800 rc=$?" >> $L/rc.txt
for codec in zfp f16; do
  timeout 60 $B/fidelity --codec $codec --models acoustic --size-3d 256 --steps 144 --every 144 \
    --block-steps 8 --rates 16 --backend cuda --json $L/fidelity-$codec.json > $L/fidelity-$codec.log 2>&1
  echo "fidelity $codec rc=$?" >> $L/rc.txt
done
rm -f $L/*.svg $L/*.png
tar czf $OUT/b.tgz -C $OUT b && rm -rf $L
