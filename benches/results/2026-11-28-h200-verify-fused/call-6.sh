#!/usr/bin/env bash
# Call 6 (seventh session, issue 36): the architecture from NVML before cuInit, so that a
# process's first compile starts ~0.2 s sooner. acoustic-base is the example at 8c18394 (this
# session's start), acoustic the tree with nvml.rs. First and second process of each, with a
# fresh cache directory per pair, alternating; then the 1600^3 first process of each.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
B=.gpu/bin; L=$OUT/logs; mkdir -p $L; S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $L/gpu.txt
one() { local name=$1; shift; local t0=$(date +%s%N); "$@" > $L/$name.log 2>&1; echo "== $name rc=$? process $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> $S; grep -E " wall |setup \(s\)|test result|FAILED|panicked" $L/$name.log | cut -c1-400 >> $S; }
for i in 1 2 3 4; do
  for v in new base; do
    exe=$B/acoustic; [[ $v == base ]] && exe=$B/acoustic-base
    C=$(mktemp -d)
    one $v-512-$i-first env PACC_CACHE_DIR=$C CUDA_CACHE_DISABLE=1 $exe --backend cuda --size 512 --steps 200
    one $v-512-$i-second env PACC_CACHE_DIR=$C CUDA_CACHE_DISABLE=1 $exe --backend cuda --size 512 --steps 200
  done
done
for v in new base; do
  exe=$B/acoustic; [[ $v == base ]] && exe=$B/acoustic-base
  C=$(mktemp -d)
  one $v-1600-first env PACC_CACHE_DIR=$C CUDA_CACHE_DISABLE=1 $exe --backend cuda --shape 1600,1600,1600 --steps 144 --sponge 20
done
one test-pacc_runtime timeout 100 $B/pacc_runtime --include-ignored --test-threads=1
one test-translate_e2e timeout 100 $B/translate_e2e --include-ignored --test-threads=1
cd $OUT && tar czf logs.tgz logs && rm -rf logs
cat $S
