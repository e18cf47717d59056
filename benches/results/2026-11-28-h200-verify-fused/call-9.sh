#!/usr/bin/env bash
# Call 9 (seventh session, issue 36): bounce rings small enough to stay in the host's 300 MiB
# last-level cache, with more slots, and cached stores into the upload slots. acoustic-x is the
# tree with the probe knobs of bounce.rs (PACC_X_SLOTS, PACC_X_SLOT_KIB, PACC_X_PIECE_KIB,
# PACC_X_IN/OUT = c|s for cached or streaming stores; not committed); acoustic-base is 8c18394.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
B=.gpu/bin; L=$OUT/logs; mkdir -p $L; S=$OUT/summary.txt
one() { local name=$1; shift; local t0=$(date +%s%N); "$@" > $L/$name.log 2>&1; echo "== $name rc=$? process $(( ($(date +%s%N) - t0) / 1000000 )) ms $(grep -m1 ' wall ' $L/$name.log | cut -c1-60)" >> $S; }
C=$(mktemp -d)
A="--backend cuda --steps 8 --plain-pages"
one warm env PACC_CACHE_DIR=$C $B/acoustic-base --backend cuda --size 512 --steps 8
declare -A K=(
  [k0]="PACC_X_SLOTS=4 PACC_X_SLOT_KIB=65536"
  [k1]="PACC_X_SLOTS=16 PACC_X_SLOT_KIB=4096 PACC_X_PIECE_KIB=256 PACC_X_IN=c PACC_X_OUT=s"
  [k2]="PACC_X_SLOTS=8 PACC_X_SLOT_KIB=8192 PACC_X_PIECE_KIB=512 PACC_X_IN=c PACC_X_OUT=s"
  [k3]="PACC_X_SLOTS=16 PACC_X_SLOT_KIB=8192 PACC_X_PIECE_KIB=512 PACC_X_IN=c PACC_X_OUT=s"
  [k4]="PACC_X_SLOTS=8 PACC_X_SLOT_KIB=8192 PACC_X_PIECE_KIB=512 PACC_X_IN=c PACC_X_OUT=c"
  [k5]="PACC_X_SLOTS=16 PACC_X_SLOT_KIB=4096 PACC_X_PIECE_KIB=256 PACC_X_IN=s PACC_X_OUT=s"
)
one base-1400 env PACC_CACHE_DIR=$C PACC_HOST_PATH=bounce $B/acoustic-base --size 1400 $A
for k in k0 k1 k2 k3 k4 k5; do
  one $k-1400 env PACC_CACHE_DIR=$C PACC_HOST_PATH=bounce ${K[$k]} $B/acoustic-x --size 1400 $A
done
one base-2000 env PACC_CACHE_DIR=$C $B/acoustic-base --size 2000 $A
for k in k1 k3; do
  one $k-2000 env PACC_CACHE_DIR=$C ${K[$k]} $B/acoustic-x --size 2000 $A
done
grep -h "setup (s)\|arrays were\|bounced" $L/base-2000.log $L/k1-2000.log $L/k3-2000.log | cut -c1-300 >> $S
cd $OUT && tar czf logs.tgz logs && rm -rf logs
cat $S
