#!/usr/bin/env bash
# Call 1 (ninth session): out of core, 144 steps, planned as on an 80 GB card. For each program
# the library's default (the tuner now also weighs blocks that save whole sweeps, and two
# buffer sets for a one-block wavefront) beside a grid of wavefront chunks x block steps that
# holds the earlier pick (16 or 128 chunks x 48). Then the GPU tests that cover the shadowing
# fix (e3b51d4), which had not run on a GPU.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/gpu.txt 2>&1
cat $L/gpu.txt >> $S
grid() { # program size chunks
  local s=$(date +%s)
  timeout 200 .gpu/bin/pipeline --program $1 --size $2 --steps 144 --device-memory 80 \
    --configs default,grid --grid-schemes wavefront --grid-chunks $3 --grid-steps 48,72,144 \
    --json $L/$1.json > $L/$1.log 2>&1
  echo "pipeline $1 rc=$? $(( $(date +%s)-s )) s" >> $S
  grep -E "^link|^## |^\| default|^  d=|tuner|default:" $L/$1.log | grep -v "^  default: \(rows\|page\|unreg\|[0-9] of\)" >> $S
}
grid acoustic ooc 16,24,64
grid propagate 1970x1970x1970 16,24,64
grid himeno ooc 32,64,128
for t in translate_e2e cuda_exec fused_kernels fused_random_gpu; do
  timeout 150 .gpu/bin/$t --include-ignored --test-threads=1 > $L/$t.log 2>&1
  echo "$t rc=$? $(grep -E '^test result' $L/$t.log)" >> $S
done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
cat $S
