#!/usr/bin/env bash
# Device call 3 (issue 36): pacc's own pinned buffers as registered huge-page mappings, the link
# timed on 32 MiB beside the candidates' compile, the occupancy guard's forms and the internal
# kernels compiled ahead. GPU tests of the touched code, then before (acoustic-base) against
# after (acoustic), then bounced one-shot calls by slot size and streaming stores.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
B=.gpu/bin; L=$OUT/logs; mkdir -p $L
one() { local name=$1; shift; local t0=$(date +%s%N); "$@" > $L/$name.log 2>&1; echo "== $name rc=$? $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> $OUT/summary.txt; grep -E "^X|wall|setup \(s\)|kernel shape|tuner:|arrays were|test result|FAILED|panicked" $L/$name.log | cut -c1-500 >> $OUT/summary.txt; }
for t in pacc_runtime cuda_exec cuda_faults row_pitch; do
  one test-$t timeout 300 $B/$t --include-ignored --test-threads=1
done
for v in base new; do
  exe=$B/acoustic; [[ $v == base ]] && exe=$B/acoustic-base
  C=$(mktemp -d)
  one $v-1600-first env PACC_CACHE_DIR=$C CUDA_CACHE_DISABLE=1 $exe --backend cuda --shape 1600,1600,1600 --steps 144 --sponge 20
  one $v-1600-second env PACC_CACHE_DIR=$C CUDA_CACHE_DISABLE=1 $exe --backend cuda --shape 1600,1600,1600 --steps 144 --sponge 20
  C=$(mktemp -d)
  one $v-512-first env PACC_CACHE_DIR=$C CUDA_CACHE_DISABLE=1 $exe --backend cuda --size 512 --steps 200
  one $v-512-second env PACC_CACHE_DIR=$C CUDA_CACHE_DISABLE=1 $exe --backend cuda --size 512 --steps 200
done
C=$(mktemp -d)
for cfg in "SLOT=32 NT=2" "SLOT=64 NT=2" "SLOT=64 NT=3" "SLOT=128 NT=2" "SLOT=32 NT=0"; do
  eval "$cfg"
  one "b1400-s$SLOT-nt$NT" env PACC_CACHE_DIR=$C PACC_HOST_PATH=bounce PACC_X_NT=$NT PACC_X_SLOT_MIB=$SLOT $B/acoustic --backend cuda --size 1400 --steps 8 --plain-pages
done
one b2000-s32-nt2 env PACC_CACHE_DIR=$C PACC_HOST_PATH=bounce PACC_X_NT=2 $B/acoustic --backend cuda --size 2000 --steps 8 --plain-pages
one b2000-s64-nt2 env PACC_CACHE_DIR=$C PACC_HOST_PATH=bounce PACC_X_NT=2 PACC_X_SLOT_MIB=64 $B/acoustic --backend cuda --size 2000 --steps 8 --plain-pages
