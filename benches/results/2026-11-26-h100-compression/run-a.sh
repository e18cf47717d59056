#!/usr/bin/env bash
# Issue 22, call A: GPU tests, then the link-bound wavefront k=8 (48 steps) with rate-16 zfp,
# uncompressed against compressed with the codec's grid queue / sized / priority (same plan),
# at 1800^3 (written arrays compressed: the 128 GB host holds no more) and at 1600^3 (every array
# compressed, inputs once). Each compressed row carries the tuner's decision for that plan.
# Binaries in .gpu/bin (release, cuda).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
B=.gpu/bin; L=$OUT/a; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/device.txt
timeout 100 $B/translate_e2e --include-ignored --test-threads=1 cuda_ > $L/translate_e2e.log 2>&1
echo "translate_e2e rc=$?" >> $L/rc.txt
timeout 60 $B/row_pitch --include-ignored --test-threads=1 > $L/row_pitch.log 2>&1
echo "row_pitch rc=$?" >> $L/rc.txt
timeout 230 $B/pipeline --program acoustic --size 1800x1800x1800 --steps 48 --verify false \
  --configs wavefront,wavefront-compressed --at 16,8 --codec-grids queue,sized,priority \
  --max-host-gib 122 --json $L/sponge1800-k8.json > $L/sponge1800-k8.log 2>&1
echo "sponge1800 rc=$?" >> $L/rc.txt
timeout 200 $B/pipeline --program acoustic --size 1600x1600x1600 --steps 48 --verify false \
  --configs wavefront,wavefront-compressed --at 16,8 --codec-grids queue,priority \
  --compress-arrays prev,cur,vel,damp --max-host-gib 122 \
  --json $L/sponge1600-k8-all.json > $L/sponge1600-k8-all.log 2>&1
echo "sponge1600 rc=$?" >> $L/rc.txt
rm -f $L/*.svg $L/*.png
tar czf $OUT/a.tgz -C $OUT a && rm -rf $L
