#!/usr/bin/env bash
# The fused vector forms of both acoustic programs, 2 and 3 steps at their default blocks, from
# the committed snapshots. Run from the repository root, with NVRTC 13.0 and cuobjdump/nvdisasm:
#   pip install --target /tmp/cuda13 nvidia-cuda-nvrtc==13.0.88 nvidia-cuda-cuobjdump==13.2.51 nvidia-cuda-nvdisasm==13.2.51
#   NVRTC_LIB=/tmp/cuda13/nvidia/cu13/lib/libnvrtc.so.13 LD_LIBRARY_PATH=/tmp/cuda13/nvidia/cu13/lib \
#     PATH=/tmp/cuda13/nvidia/cu13/bin:$PATH bash benches/probes/2026-11-28-static-sass/run.sh
set -euo pipefail
here=$(dirname "$0")
for prog in propagate propagate_sponge; do
  python3 "$here/static-sass.py" "examples_snapshots__acoustic_${prog}_cuda.snap" 2 8 48
  python3 "$here/static-sass.py" "examples_snapshots__acoustic_${prog}_cuda.snap" 3 8 32
done
