#!/usr/bin/env bash
# Call 8 (2x H200, one GPU): the fused kernels' GPU tests, with the new one in which the tuner
# weighs the fused forms and their vector blocks on a slab (issue 35, deliver 2).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
CUDA_VISIBLE_DEVICES=0 timeout 300 .gpu/bin/fused_kernels --include-ignored --test-threads=1 --nocapture > $OUT/fused_kernels.log 2>&1
echo "fused_kernels rc=$? $(grep 'test result' $OUT/fused_kernels.log)" | tee $OUT/summary.txt
grep -h "^test \|fusion: predicted" $OUT/fused_kernels.log | head -20
