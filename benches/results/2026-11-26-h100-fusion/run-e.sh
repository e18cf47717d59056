#!/usr/bin/env bash
# Device call E (2026-11-26): fused Himeno out of core, the sponge acoustic out of core,
# a one-shot call on 96 GB (page-locking beside the run), and two MPI ranks on one device.
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
timeout 120 .gpu/bin/fused_kernels --include-ignored --test-threads=1 2>&1 | tail -n 5 > "$out/fused-tests.log"
cat "$out/fused-tests.log"
p=.gpu/bin/pipeline
run() { # name, args...
  local name=$1; shift
  echo "== pipeline $*" | tee -a "$out/pipeline.log"
  timeout 170 $p "$@" --json "/tmp/$name.json" > "$out/$name.log" 2>&1
  echo "rc=$?" >> "$out/$name.log"
  cp "/tmp/$name.json" "$out/" 2>/dev/null
  grep -E "^\| (in-core|wavefront)|failed|skipped|^## " "$out/$name.log" >> "$out/pipeline.log"
}
run himeno-f2 --program himeno --size incore,ooc --steps 144 --configs in-core,wavefront --fuse 2
run sponge --program acoustic --size incore,ooc --steps 144 --configs in-core,wavefront
cat "$out/pipeline.log"
a=.gpu/bin/acoustic
{
  echo "== one-shot: acoustic --size 2000 --steps 8 --backend cuda (default: page-locking beside the run)"
  { time timeout 150 $a --size 2000 --steps 8 --backend cuda ; } 2>&1 | tail -n 14
  echo "== one-shot: PACC_PIN_OVERLAP=0 (every piece registered before the first operation)"
  export PACC_PIN_OVERLAP=0; { time timeout 150 $a --size 2000 --steps 8 --backend cuda ; } 2>&1 | tail -n 14; unset PACC_PIN_OVERLAP
} > "$out/oneshot.log" 2>&1
cat "$out/oneshot.log"
{
  echo "== one rank: acoustic --size 1600 --steps 48 --sponge 20 --backend cuda"
  timeout 100 $a --size 1600 --steps 48 --sponge 20 --backend cuda 2>&1 | tail -n 8
  echo "== mpirun -np 2: acoustic --size 1600 --steps 48 --sponge 20 --backend cuda"
  timeout 120 mpirun --allow-run-as-root -np 2 $a --size 1600 --steps 48 --sponge 20 --backend cuda 2>&1 | tail -n 16
} > "$out/mpi.log" 2>&1
cat "$out/mpi.log"
