export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
B=.gpu/bin
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv > $OUT/gpu.txt
for t in fused_kernels staged_kernels kernel_occupancy row_pitch translate_e2e cuda_exec cuda_faults checkpoint read_only_ring fused_runs; do
  echo "== $t"; timeout 300 $B/$t --include-ignored --test-threads=1 > $OUT/test-$t.log 2>&1; echo "rc=$?"; grep -E "^test result|FAILED|panicked|skip" $OUT/test-$t.log | head -5
done
echo "== README main example"; $B/acoustic --size 128 --steps 200 --verify > $OUT/readme-example.log 2>&1; echo "rc=$?"; tail -n 4 $OUT/readme-example.log
echo "== himeno 512x512x768, 12000 iterations: auto, then PACC_FUSE=1"
for f in auto 1; do
  case $f in auto) unset PACC_FUSE;; *) export PACC_FUSE=$f;; esac
  ( time $B/himeno --grid 512,512,768 --iterations 12000 --backend cuda ) > $OUT/himeno-12000-$f.log 2>&1
  grep -E "Gosa|cpu :|wall|kernel:|fusion|fused:|real" $OUT/himeno-12000-$f.log
done
