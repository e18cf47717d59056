#!/usr/bin/env bash
# Call 5 (2x H200): after merging issue 37 (options settled once, typed errors) with the NCCL
# changes: every GPU test binary with its ignored tests, the runtime's own GPU unit tests, the
# MPI launches on the GPUs (2 and 3 ranks, and the failing-rank case, resident and relayed), and
# the README's main command on the GPU.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
L=$OUT/tests; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
for t in cuda_exec cuda_faults row_pitch staged_kernels kernel_occupancy fused_kernels fused_random_gpu translate_e2e pacc_runtime; do
  timeout 200 .gpu/bin/$t --include-ignored --test-threads=1 > $L/t-$t.log 2>&1
  echo "$t rc=$? $(grep 'test result' $L/t-$t.log | tail -1)" | tee -a $OUT/summary.txt
done
timeout 300 .gpu/bin/mpi --ignored > $L/t-mpi-gpu.log 2>&1
echo "mpi rc=$? $(tail -1 $L/t-mpi-gpu.log)" | tee -a $OUT/summary.txt
timeout 60 .gpu/bin/acoustic --size 128 --steps 200 --verify > $L/readme-main.log 2>&1
echo "README main command rc=$? $(grep -i 'verify\|backend' $L/readme-main.log | head -2 | tr '\n' ' ')" | tee -a $OUT/summary.txt
cd $OUT && tar czf tests.tgz tests && rm -rf tests
