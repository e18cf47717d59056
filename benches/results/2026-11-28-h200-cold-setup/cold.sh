#!/usr/bin/env bash
# Device call (issue 36): cold set-up, before (acoustic-old: PTX JIT-compiled by the driver at
# load, candidates compiled and timed one by one, two runs each) against after (acoustic: CUBIN
# compiled side by side, one run each on held page-locked slabs, fusion not weighed for short
# runs). Every "first" process has an empty pacc cache and the driver's JIT cache off, as on a
# fresh machine; "second" reuses the first's pacc cache. Interleaved old/new, REPS times.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
B=.gpu/bin
L=$(mktemp -d)
nvidia-smi -L > $OUT/gpus.txt; nproc >> $OUT/gpus.txt
s() { grep -E "wall|setup \(s\)|kernel shape" "$1" | cut -c1-300; }
one() { # version label cache args...
  local v=$1 label=$2 c=$3; shift 3
  local exe=$B/acoustic; [[ $v == old ]] && exe=$B/acoustic-old
  PACC_CACHE_DIR=$c CUDA_CACHE_DISABLE=1 timeout 120 $exe "$@" --backend cuda > $L/$v-$label.log 2>&1
  echo "== $v $label rc=$?: $*" >> $OUT/summary.txt; s $L/$v-$label.log >> $OUT/summary.txt
}
for rep in $(seq ${REPS:-2}); do
  for v in old new; do
    c=$(mktemp -d)
    one $v 1600-first-$rep $c --shape 1600,1600,1600 --steps 144 --sponge 20
    one $v 1600-second-$rep $c --shape 1600,1600,1600 --steps 144 --sponge 20
    c=$(mktemp -d)
    one $v 512-first-$rep $c --size 512 --steps 200
    one $v 512-second-$rep $c --size 512 --steps 200
  done
done
tar czf $OUT/logs.tgz -C $L .
