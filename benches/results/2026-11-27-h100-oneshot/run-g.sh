#!/usr/bin/env bash
# Call G: the one-shot 96 GB call (huge-page arrays, page-locked during the call) at the
# default and at a small grid over scheme x chunks x block steps, forced through PACC_SCHEME,
# PACC_CHUNKS and PACC_BLOCK_STEPS: the default's wall against the best, page-locking included.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
L=$OUT/g; mkdir -p $L
B=.gpu/bin
run() { local name=$1; shift; "$@" > $L/$name.log 2>&1; echo "== $name rc $? $(grep -h -o 'wall [0-9.]* s' $L/$name.log) $(grep -h -o '[0-9]* chunks (asked [0-9]*), [0-9]* block steps, [a-z-]*' $L/$name.log)"; }
A="$B/acoustic --size 2000 --steps 8 --backend cuda"
run warm $B/acoustic --size 512 --steps 8 --backend cuda
run default-1 $A
for c in wavefront:64:8 wavefront:128:8 wavefront:256:8 wavefront:128:4 region-sharing:64:8; do
  IFS=: read s d k <<< "$c"
  run $s-$d-$k env PACC_SCHEME=$s PACC_CHUNKS=$d PACC_BLOCK_STEPS=$k $A
done
run default-2 $A
cd $OUT && tar czf g.tgz g && rm -rf g
