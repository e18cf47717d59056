#!/usr/bin/env bash
# Device call 1 (issue 36): where a cold set-up and a one-shot call spend their time, before
# this session's changes (acoustic-base). nsys summaries where the machine has nsys.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
B=.gpu/bin; L=$OUT/logs; mkdir -p $L
{ nvidia-smi -L; nproc; free -g | head -2; lscpu | grep -E "Model name|Socket|NUMA node\(s\)|L3"; } > $OUT/machine.txt 2>&1
NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys /usr/local/cuda/nsight-systems*/bin/nsys 2>/dev/null | head -1)
echo "nsys: $NSYS" >> $OUT/machine.txt
cold() { PACC_CACHE_DIR=$(mktemp -d) CUDA_CACHE_DISABLE=1 "$@"; }
one() { local name=$1; shift; local t0=$(date +%s.%N); "$@" > $L/$name.log 2>&1; echo "== $name rc=$? $(echo "$(date +%s.%N) - $t0" | bc) s" >> $OUT/summary.txt; grep -E "wall|setup \(s\)|kernel shape|tuner:|host path|bounce|regist" $L/$name.log | cut -c1-400 >> $OUT/summary.txt; }
A="$B/acoustic-base --backend cuda"
one base-1600-first cold $A --shape 1600,1600,1600 --steps 144 --sponge 20
C=$(mktemp -d)
one base-512-first env PACC_CACHE_DIR=$C CUDA_CACHE_DISABLE=1 $A --size 512 --steps 200
one base-512-second env PACC_CACHE_DIR=$C CUDA_CACHE_DISABLE=1 $A --size 512 --steps 200
if [[ -n $NSYS ]]; then
  D=$(mktemp -d)
  PACC_CACHE_DIR=$(mktemp -d) CUDA_CACHE_DISABLE=1 timeout 200 $NSYS profile -t cuda,osrt --sample=none -o $D/cold $A --shape 1600,1600,1600 --steps 144 --sponge 20 > $L/nsys-run.log 2>&1
  $NSYS stats -r cuda_api_sum,osrt_sum -f csv -o $OUT/nsys-cold $D/cold.nsys-rep > $L/nsys-stats.log 2>&1
  ls $D >> $L/nsys-stats.log
fi
one oneshot-auto-1 $A --size 2000 --steps 8 --plain-pages
one oneshot-auto-2 $A --size 2000 --steps 8 --plain-pages
