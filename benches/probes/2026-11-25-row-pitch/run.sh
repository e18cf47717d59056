#!/bin/bash
# builds and runs the async-staging probe for a few depths
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name --format=csv,noheader
for m in 1 2; do for d in 1 2 3 4; do
  nvcc -O3 -arch=sm_90 --fmad=false -DPACC_ASYNC=$d -DPACC_MINB=$m -o p_${d}_${m} main.cu || exit 1
  for n in 512 820; do ./p_${d}_${m} $n $([ $n = 512 ] && echo 100 || echo 40); done
done; done
