#!/usr/bin/env bash
# Call 4 (2026-11-28): every GPU test binary with its ignored tests, then the MPI launches on
# the GPUs (2 ranks, NCCL relay where two GPUs are there).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
L=$OUT/tests; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt 2>&1
for t in cuda_exec cuda_faults row_pitch staged_kernels kernel_occupancy fused_kernels fused_random_gpu translate_e2e; do
  timeout 200 .gpu/bin/$t --include-ignored --test-threads=1 > $L/t-$t.log 2>&1
  echo "$t rc=$? $(grep 'test result' $L/t-$t.log | tail -1)" | tee -a $OUT/summary.txt
done
timeout 300 .gpu/bin/mpi --ignored > $L/t-mpi-gpu.log 2>&1
echo "mpi rc=$? $(tail -1 $L/t-mpi-gpu.log)" | tee -a $OUT/summary.txt
cd $OUT && tar czf tests.tgz tests && rm -rf tests
