set -x
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv > $OUT/gpu.txt
uname -r >> $OUT/gpu.txt; free -g >> $OUT/gpu.txt
.gpu/bin/pinning --gib 8 --threads 1,4,8 --piece-mib 64,1024 > $OUT/pinning.log 2>&1
for f in auto 1 2; do
  if [ $f = auto ]; then unset PACC_FUSE; else export PACC_FUSE=$f; fi
  .gpu/bin/himeno --grid 512,512,768 --iterations 600 --backend cuda > $OUT/himeno-512-$f.log 2>&1
done
unset PACC_FUSE
for f in auto 1; do
  if [ $f = auto ]; then unset PACC_FUSE; else export PACC_FUSE=$f; fi
  .gpu/bin/acoustic --size 512 --steps 768 --backend cuda > $OUT/acoustic-512-$f.log 2>&1
done
tail -n 30 $OUT/*.log
