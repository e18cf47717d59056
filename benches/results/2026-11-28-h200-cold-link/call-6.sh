#!/usr/bin/env bash
# Device call 6 (issue 36): the final tree (acoustic) against the session's start
# (acoustic-base, 30531f1): GPU tests, cold and warm processes at 1600^3 and 512^3, the
# one-shot 96 GB call on 4 KiB pages as the tuner picks its path (first and warm).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
B=.gpu/bin; L=$(mktemp -d)
one() { local name=$1; shift; local t0=$(date +%s%N); "$@" > $L/$name.log 2>&1; echo "== $name rc=$? $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> $OUT/summary.txt; grep -E "wall|setup \(s\)|kernel shape|tuner:|arrays were|bounced|test result|FAILED|panicked|s/step" $L/$name.log | cut -c1-500 >> $OUT/summary.txt; }
nvidia-smi -L > $OUT/machine.txt
for t in pacc_runtime cuda_exec cuda_faults translate_e2e fused_kernels; do
  one test-$t timeout 200 $B/$t --include-ignored --test-threads=1
done
for v in base new new2; do
  exe=$B/acoustic; [[ $v == base ]] && exe=$B/acoustic-base
  C=$(mktemp -d)
  one $v-1600-first env PACC_CACHE_DIR=$C CUDA_CACHE_DISABLE=1 $exe --backend cuda --shape 1600,1600,1600 --steps 144 --sponge 20
  one $v-1600-second env PACC_CACHE_DIR=$C CUDA_CACHE_DISABLE=1 $exe --backend cuda --shape 1600,1600,1600 --steps 144 --sponge 20
  C=$(mktemp -d)
  one $v-512-first env PACC_CACHE_DIR=$C CUDA_CACHE_DISABLE=1 $exe --backend cuda --size 512 --steps 200
  one $v-512-second env PACC_CACHE_DIR=$C CUDA_CACHE_DISABLE=1 $exe --backend cuda --size 512 --steps 200
done
C=$(mktemp -d)
one new-oneshot-first env PACC_CACHE_DIR=$C $B/acoustic --backend cuda --size 2000 --steps 8 --plain-pages
one new-oneshot-warm env PACC_CACHE_DIR=$C $B/acoustic --backend cuda --size 2000 --steps 8 --plain-pages
tar czf $OUT/logs.tgz -C $L .
