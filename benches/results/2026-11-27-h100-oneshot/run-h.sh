#!/usr/bin/env bash
# Call H: pieces of at most 32 MiB (acoustic-p32: MAX_PIECE = 32 << 20 in
# pacc-runtime/src/exec/cuda/pinning.rs) against 1 GiB (acoustic, as committed), and 256
# chunks, on the one-shot 96 GB call, interleaved, three times each.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
L=$OUT/h; mkdir -p $L
B=.gpu/bin
run() { local name=$1; shift; "$@" > $L/$name.log 2>&1; echo "== $name rc $? $(grep -h -o 'wall [0-9.]* s' $L/$name.log) $(grep -h -o 'in [0-9]* pieces' $L/$name.log) $(grep -h -o '[0-9.]* s of it waited' $L/$name.log)"; }
run warm $B/acoustic --size 512 --steps 8 --backend cuda
run first $B/acoustic --size 2000 --steps 8 --backend cuda
for rep in 1 2 3; do
  run base-$rep $B/acoustic --size 2000 --steps 8 --backend cuda
  run p32-$rep $B/acoustic-p32 --size 2000 --steps 8 --backend cuda
  [ $rep -le 2 ] && run base-256-$rep env PACC_CHUNKS=256 $B/acoustic --size 2000 --steps 8 --backend cuda
done
cd $OUT && tar czf h.tgz h && rm -rf h
