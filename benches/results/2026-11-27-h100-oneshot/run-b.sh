#!/usr/bin/env bash
# Call B: after page-locking starts once the device memory is allocated. The one-shot 96 GB
# call (acoustic `propagate`, 2000^3, 8 steps) with the arrays from pacc::runtime::pages::zeros
# (the example's default) and from Array3::zeros (--plain-pages), at rest and written; one
# registering thread; region sharing; Himeno one-shot; the GPU tests of page-locking.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
L=$OUT/b; mkdir -p $L
B=.gpu/bin
$B/cuda_faults --include-ignored --test-threads=1 > $L/test-cuda_faults.log 2>&1; echo "cuda_faults rc $?"
$B/cuda_exec --include-ignored --test-threads=1 > $L/test-cuda_exec.log 2>&1; echo "cuda_exec rc $?"
tail -3 $L/test-cuda_faults.log $L/test-cuda_exec.log
run() { local name=$1; shift; /usr/bin/time -v "$@" > $L/$name.log 2>&1; echo "== $name rc $?"; grep -h -E "wall|setup|page-locked|tuner:|Elapsed" $L/$name.log; }
A="$B/acoustic --size 2000 --steps 8 --backend cuda"
run oneshot-huge-rest-1 $A
run oneshot-huge-rest-2 $A
run oneshot-huge-written $A --init-noise 1e-6
run oneshot-plain-written $A --init-noise 1e-6 --plain-pages
run oneshot-huge-rest-1thread env PACC_PIN_THREADS=1 $A
run oneshot-huge-rest-region env PACC_SCHEME=region-sharing $A
run oneshot-plain-rest $A --plain-pages
run himeno-1100-oneshot $B/himeno --grid 1100,1100,1100 --iterations 8 --backend cuda
cd $OUT && tar czf b.tgz b && rm -rf b
