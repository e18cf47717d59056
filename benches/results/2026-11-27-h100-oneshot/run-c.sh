#!/usr/bin/env bash
# Call C: where the one-shot call's page-locking costs: beside the run (default), all before
# the first operation (PACC_PIN_OVERLAP=0, 4 threads and 1), and outside the call
# (--lock-first), for arrays from pacc::runtime::pages (default) and written Array3::zeros.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
L=$OUT/c; mkdir -p $L
B=.gpu/bin
run() { local name=$1; shift; /usr/bin/time -v "$@" > $L/$name.log 2>&1; echo "== $name rc $?"; grep -h -E "wall|setup|page-locked|--lock-first|Elapsed" $L/$name.log; }
A="$B/acoustic --size 2000 --steps 8 --backend cuda"
run warm $B/acoustic --size 512 --steps 8 --backend cuda
run huge-overlap $A
run huge-upfront env PACC_PIN_OVERLAP=0 $A
run huge-upfront-1thread env PACC_PIN_OVERLAP=0 PACC_PIN_THREADS=1 $A
run huge-lock-first $A --lock-first
run plain-written-upfront env PACC_PIN_OVERLAP=0 $A --plain-pages --init-noise 1e-6
run plain-written-lock-first $A --plain-pages --init-noise 1e-6 --lock-first
run huge-overlap-again $A
cd $OUT && tar czf c.tgz c && rm -rf c
