#!/usr/bin/env bash
# Builds host_link.cu and runs it on 1, 2, 4 (as many as there are) GPUs at once.
set -euo pipefail
here=$(dirname "$0")
nvcc -O2 -std=c++17 -o /tmp/host_link "$here/host_link.cu"
gpus=$(nvidia-smi -L | wc -l)
for n in 1 2 4 8; do
    (( n <= gpus )) && /tmp/host_link "$n" 1024 8
done
