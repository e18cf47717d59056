#!/usr/bin/env bash
# Device call 8 (issue 36): NVRTC's start paid beside the driver's (acoustic-warm) against the
# tree of call 6 (acoustic-nowarm), first and second processes at 512^3 interleaved, three
# times; the session's start (acoustic-base) once; one 1600^3 first process with the warm-up.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
B=.gpu/bin; L=$(mktemp -d)
one() { local name=$1; shift; "$@" > $L/$name.log 2>&1; echo "== $name rc=$?" >> $OUT/summary.txt; grep -E "wall|setup \(s\)" $L/$name.log | cut -c1-300 >> $OUT/summary.txt; }
nvidia-smi -L > $OUT/machine.txt
for rep in 1 2 3; do
  for v in nowarm warm; do
    C=$(mktemp -d)
    one $v-512-first-$rep env PACC_CACHE_DIR=$C CUDA_CACHE_DISABLE=1 $B/acoustic-$v --backend cuda --size 512 --steps 200
    one $v-512-second-$rep env PACC_CACHE_DIR=$C CUDA_CACHE_DISABLE=1 $B/acoustic-$v --backend cuda --size 512 --steps 200
  done
done
C=$(mktemp -d)
one base-512-first env PACC_CACHE_DIR=$C CUDA_CACHE_DISABLE=1 $B/acoustic-base --backend cuda --size 512 --steps 200
one base-512-second env PACC_CACHE_DIR=$C CUDA_CACHE_DISABLE=1 $B/acoustic-base --backend cuda --size 512 --steps 200
one warm-1600-first env PACC_CACHE_DIR=$(mktemp -d) CUDA_CACHE_DISABLE=1 $B/acoustic-warm --backend cuda --shape 1600,1600,1600 --steps 144 --sponge 20
tar czf $OUT/logs.tgz -C $L .
