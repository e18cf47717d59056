export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
B=.gpu/bin
mkdir -p $OUT/l
for t in fused_kernels cuda_exec; do
  echo "== $t"; timeout 300 $B/$t --include-ignored --test-threads=1 > $OUT/l/h-test-$t.log 2>&1; echo "rc=$?"; grep -E "^test result" $OUT/l/h-test-$t.log
done
for i in 1 2; do
  echo "== himeno 512x512x768 12000 sweeps, process $i"
  ( time $B/himeno --grid 512,512,768 --iterations 12000 --backend cuda ) > $OUT/l/h-himeno-12000-$i.log 2>&1
  grep -E "Gosa|wall|fusion|real" $OUT/l/h-himeno-12000-$i.log
done
echo "== single steps (PACC_FUSE=1), same machine (PTX and rates on disk)"
( time env PACC_FUSE=1 $B/himeno --grid 512,512,768 --iterations 12000 --backend cuda ) > $OUT/l/h-himeno-12000-single.log 2>&1
grep -E "Gosa|wall|kernel shape|real" $OUT/l/h-himeno-12000-single.log
ls ~/.cache/pacc/rates | wc -l
