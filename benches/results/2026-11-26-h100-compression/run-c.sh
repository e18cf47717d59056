#!/usr/bin/env bash
# Issue 22, call C: the GPU tests with priority as the default codec grid, and the run path's
# decision on real calls (acoustic example: link-bound shallow blocks, and the deep default).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
B=.gpu/bin; L=$OUT/c; mkdir -p $L
timeout 120 $B/codec_cosched --include-ignored --test-threads=1 --nocapture > $L/codec_cosched.log 2>&1
echo "codec_cosched rc=$?" >> $L/rc.txt
timeout 100 $B/translate_e2e --include-ignored --test-threads=1 cuda_ > $L/translate_e2e.log 2>&1
echo "translate_e2e rc=$?" >> $L/rc.txt
timeout 120 $B/acoustic --size 640 --steps 32 --sponge 20 --backend cuda --scheme wavefront --chunks 8 \
  --block-steps 4 --compress-all 16 > $L/acoustic-k4-compress.log 2>&1
echo "acoustic k4 rc=$?" >> $L/rc.txt
timeout 120 $B/acoustic --size 640 --steps 96 --sponge 20 --backend cuda --compress-all 16 \
  > $L/acoustic-default-compress.log 2>&1
echo "acoustic default rc=$?" >> $L/rc.txt
tar czf $OUT/c.tgz -C $OUT c && rm -rf $L
