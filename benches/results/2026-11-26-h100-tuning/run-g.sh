export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
B=.gpu/bin
mkdir -p $OUT/l
ls ~/.cache/pacc 2>&1 | head -3
for i in 1 2; do
  echo "== acoustic 512^3 1000 steps, process $i"
  ( time $B/acoustic --size 512 --steps 1000 --backend cuda ) > $OUT/l/g-acoustic-512-$i.log 2>&1
  grep -E "wall|kernel shape|tuner:|real" $OUT/l/g-acoustic-512-$i.log
done
for i in 1 2; do
  echo "== himeno 512x512x768 12000 sweeps, process $i"
  ( time $B/himeno --grid 512,512,768 --iterations 12000 --backend cuda ) > $OUT/l/g-himeno-12000-$i.log 2>&1
  grep -E "Gosa|wall|fusion|real" $OUT/l/g-himeno-12000-$i.log
done
ls -la ~/.cache/pacc/* | head
