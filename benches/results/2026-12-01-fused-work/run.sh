#!/usr/bin/env bash
# The fused kernels' work per point-step for every block their forms take, in the plane (no
# device: `pacc plan` reads the translator's FusedDecl). Run from the repository root.
set -euo pipefail
cargo build -q --bin pacc
plan() { target/debug/pacc plan "$@" | grep '^fused kernel'; }
for f in propagate propagate_sponge; do
  for s in 2 3; do
    plan src/models/acoustic.rs --function "$f" --shape 512,512,512 --block-steps 24 --fuse "$s"
  done
done
for s in 2 3; do
  plan src/models/himeno.rs --shape 512,512,768 --block-steps 24 --fuse "$s"
done
