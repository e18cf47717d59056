export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
B=.gpu/bin
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv > $OUT/gpu.txt
echo "== pinning" ; $B/pinning --gib 8 --threads 1,4 --piece-mib 64,1024 --states fresh,touched,huge > $OUT/pinning2.log 2>&1; cat $OUT/pinning2.log
echo "== one-shot acoustic 2000^3 8 steps"
( time $B/acoustic --size 2000 --steps 8 --backend cuda ) > $OUT/oneshot-2000.log 2>&1; tail -n 14 $OUT/oneshot-2000.log
echo "== himeno 512x512x768 2000 iterations: auto (first, compiles), auto (PTX cached), single, fused 2"
for f in auto auto2 1 2; do
  case $f in auto|auto2) unset PACC_FUSE;; *) export PACC_FUSE=$f;; esac
  ( time $B/himeno --grid 512,512,768 --iterations 2000 --backend cuda ) > $OUT/himeno-2000-$f.log 2>&1
  grep -E "cpu :|wall|kernel:|fusion|fused:|real" $OUT/himeno-2000-$f.log
done
unset PACC_FUSE
echo "== mpi 1200 -np 2"
timeout 150 mpirun --allow-run-as-root -np 2 $B/acoustic --size 1200 --steps 48 --sponge 20 --backend cuda > $OUT/mpi-1200.log 2>&1; tail -n 16 $OUT/mpi-1200.log
echo "== one rank 1600"
( time timeout 150 $B/acoustic --size 1600 --steps 48 --sponge 20 --backend cuda ) > $OUT/one-1600.log 2>&1; tail -n 12 $OUT/one-1600.log
echo "== mpi 1600 -np 2"
( time timeout 200 mpirun --allow-run-as-root -np 2 $B/acoustic --size 1600 --steps 48 --sponge 20 --backend cuda ) > $OUT/mpi-1600.log 2>&1; tail -n 16 $OUT/mpi-1600.log
