#!/usr/bin/env bash
# Device call D (2026-11-26): out-of-core pipeline figures with the vector and fused kernels,
# each against its link floor and the in-core run of the same program per point.
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
p=.gpu/bin/pipeline
run() { # name, args...
  local name=$1; shift
  echo "== pipeline $*" | tee -a "$out/pipeline.log"
  timeout 200 $p "$@" --json "$out/$name.json" > "$out/$name.log" 2>&1
  echo "rc=$?" >> "$out/$name.log"
  grep -vE "^\s*$" "$out/$name.log" | tail -n 25 >> "$out/pipeline.log"
}
run himeno-f1 --program himeno --size incore,ooc --steps 144 --configs in-core,wavefront
run himeno-f2 --program himeno --size incore,ooc --steps 144 --configs in-core,wavefront --fuse 2
run propagate --program propagate --size incore,1970x1970x1970 --steps 144 --configs in-core,wavefront,wavefront-staircase
cat "$out/pipeline.log"
