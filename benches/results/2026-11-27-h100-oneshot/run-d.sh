#!/usr/bin/env bash
# Call D: with unregistering on a background thread (the call no longer waits for it) and the
# link's rates kept on disk. One-shot calls of 8 steps: propagate 2000^3 (96 GB), the sponge at
# 1800^3 (93 GB), Himeno 1100^3 (75 GB); arrays from pacc::runtime::pages (default), written
# Array3::zeros, never-written Array3::zeros, and page-locked before the call (--lock-first).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
C=${CALL:-d}   # run-e.sh runs this again as call e
L=$OUT/$C; mkdir -p $L
B=.gpu/bin
$B/cuda_faults --include-ignored --test-threads=1 > $L/test-cuda_faults.log 2>&1; echo "cuda_faults rc $?"
$B/cuda_exec --include-ignored --test-threads=1 > $L/test-cuda_exec.log 2>&1; echo "cuda_exec rc $?"
grep -h "test result" $L/test-*.log
run() { local name=$1; shift; /usr/bin/time -v "$@" > $L/$name.log 2>&1; echo "== $name rc $?"; grep -h -E "wall|setup|page-locked|--lock-first|Elapsed" $L/$name.log; }
A="$B/acoustic --size 2000 --steps 8 --backend cuda"
run warm $B/acoustic --size 512 --steps 8 --backend cuda
run huge-overlap $A
run huge-overlap-2 $A
run huge-upfront env PACC_PIN_OVERLAP=0 $A
run huge-lock-first $A --lock-first
run plain-written $A --plain-pages --init-noise 1e-6
run plain-rest $A --plain-pages
S="$B/acoustic --size 1800 --sponge 20 --steps 8 --backend cuda"
run sponge-huge $S
run sponge-lock-first $S --lock-first
run himeno-1100 $B/himeno --grid 1100,1100,1100 --iterations 8 --backend cuda
cd $OUT && tar czf $C.tgz $C && rm -rf $C
