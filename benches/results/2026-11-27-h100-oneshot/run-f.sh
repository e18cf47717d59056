#!/usr/bin/env bash
# Call F: the registering threads (PACC_PIN_THREADS 1, 2, 4; registration beside the run) on the
# one-shot 96 GB call with huge-page arrays, each twice, interleaved.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
L=$OUT/f; mkdir -p $L
B=.gpu/bin
run() { local name=$1; shift; "$@" > $L/$name.log 2>&1; echo "== $name rc $?"; grep -h -E "wall|page-locked" $L/$name.log | cut -c1-160; }
A="$B/acoustic --size 2000 --steps 8 --backend cuda"
run warm $B/acoustic --size 512 --steps 8 --backend cuda
run first env PACC_PIN_THREADS=4 $A
for rep in 1 2; do for t in 1 2 4; do run threads-$t-$rep env PACC_PIN_THREADS=$t $A; done; done
cd $OUT && tar czf f.tgz f && rm -rf f
