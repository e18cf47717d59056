set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 PACC_CACHE_DIR=$OUT/cache
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $OUT/card.txt 2>&1
for b in fused_kernels slice_lengths translate_e2e cuda_exec cuda_faults row_pitch staged_kernels kernel_occupancy fused_random_gpu; do
  s=$(date +%s)
  timeout 150 .gpu/bin/$b --include-ignored --test-threads=1 > $OUT/$b.log 2>&1
  echo "$b rc=$? $(( $(date +%s) - s ))s $(grep -E '^test result' $OUT/$b.log | tail -n 1)" | tee -a $OUT/summary.txt
done
timeout 60 .gpu/bin/acoustic --size 128 --steps 200 --verify > $OUT/acoustic.log 2>&1; echo "acoustic rc=$?" | tee -a $OUT/summary.txt
