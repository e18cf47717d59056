#!/usr/bin/env bash
# Call A: registration rate of written 4 KiB pages against written huge pages, and the one-shot
# 96 GB call with the arrays on plain pages (Array3::zeros) and from pacc::runtime::pages::zeros.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
L=$OUT/a; mkdir -p $L
B=.gpu/bin
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag; free -g; nproc; } > $L/machine.txt 2>&1
$B/pinning --gib 16 --threads 1,4,8 --piece-mib 1024 --states touched,huge-touched > $L/pinning.log 2>&1
run() { local name=$1; shift; /usr/bin/time -v $B/acoustic "$@" > $L/$name.log 2>&1; }
run oneshot-huge-rest-1 --size 2000 --steps 8 --backend cuda
run oneshot-huge-written --size 2000 --steps 8 --backend cuda --init-noise 1e-6
run oneshot-plain-written --size 2000 --steps 8 --backend cuda --init-noise 1e-6 --plain-pages
run oneshot-huge-rest-2 --size 2000 --steps 8 --backend cuda
grep -h -E "wall|setup|page-locked|tuner:|Elapsed|Maximum resident" $L/*.log
cd $OUT && tar czf a.tgz a && rm -rf a
