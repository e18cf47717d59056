#!/usr/bin/env bash
# Device call 2 (issue 36), an instrumented build (acoustic-x, not committed): each candidate
# timing run's parts, the link probe at three buffer sizes, and bounced one-shot calls with
# slot sizes, slot counts and streaming stores (PACC_X_* knobs) side by side.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
B=.gpu/bin; L=$OUT/logs; mkdir -p $L
X="$B/acoustic-x --backend cuda"
one() { local name=$1; shift; local t0=$(date +%s%N); "$@" > $L/$name.log 2>&1; echo "== $name rc=$? $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> $OUT/summary.txt; grep -E "^X|wall|setup \(s\)|tuner:|arrays were|bounce|regist" $L/$name.log | cut -c1-600 >> $OUT/summary.txt; }
one x-1600-first env PACC_CACHE_DIR=$(mktemp -d) CUDA_CACHE_DISABLE=1 $X --shape 1600,1600,1600 --steps 144 --sponge 20
for mib in 32 64 256; do
  one x-512-link$mib env PACC_X_LINK_MIB=$mib PACC_CACHE_DIR=$(mktemp -d) CUDA_CACHE_DISABLE=1 $X --size 512 --steps 200
done
C=$(mktemp -d)
one warm env PACC_CACHE_DIR=$C $X --size 1400 --steps 8 --plain-pages
for cfg in "NT=0" "NT=1" "NT=2" "NT=3" "SLOT=8 NT=0" "SLOT=8 NT=2" "SLOT=8 SLOTS=8 NT=2" "SLOT=4 SLOTS=8 NT=2" "NT=0"; do
  eval "$cfg"; SLOT=${SLOT:-32}; SLOTS=${SLOTS:-4}
  one "b1400-s${SLOT}x${SLOTS}-nt$NT" env PACC_CACHE_DIR=$C PACC_HOST_PATH=bounce PACC_X_NT=$NT PACC_X_SLOT_MIB=$SLOT PACC_X_SLOTS=$SLOTS $X --size 1400 --steps 8 --plain-pages
  unset SLOT SLOTS NT
done
one r1400 env PACC_CACHE_DIR=$C PACC_HOST_PATH=register $X --size 1400 --steps 8 --plain-pages
