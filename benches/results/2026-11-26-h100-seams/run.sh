#!/usr/bin/env bash
# Issue 23 checks on the GPU after the seams refactor: the GPU tests (f16 and zfp codecs against
# the CPU coder, fused kernels, the CUDA executor), the codec throughput (f16 beside zfp), and
# two tuned example runs through the new tuner probe. Binaries from .gpu/bin (release,
# features cuda,mpi). Logs under $OUT.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PACC_CACHE_DIR=off
B=.gpu/bin
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt
for t in translate_e2e fused_kernels cuda_exec compress; do
  timeout 300 $B/$t --include-ignored --test-threads=1 > $OUT/test-$t.log 2>&1
  echo "$t rc=$?" >> $OUT/tests.txt
done
timeout 200 $B/kernels --only sponge --sponge 256 --steps3d 10 --codec 512 --json $OUT/codec.json > $OUT/codec.log 2>&1
echo "kernels rc=$?" >> $OUT/tests.txt
timeout 120 $B/acoustic --size 256 --steps 96 --backend cuda --verify > $OUT/acoustic.log 2>&1

echo "acoustic rc=$?" >> $OUT/tests.txt
timeout 120 $B/himeno --size l --iterations 200 --backend cuda > $OUT/himeno.log 2>&1
echo "himeno rc=$?" >> $OUT/tests.txt
cd $OUT && tar czf logs.tgz *.log *.txt *.json 2>/dev/null
