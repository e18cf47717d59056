export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
B=.gpu/bin
mkdir -p $OUT/l
uname -r > $OUT/l/kernel.txt; free -g >> $OUT/l/kernel.txt; cat /sys/kernel/mm/transparent_hugepage/enabled >> $OUT/l/kernel.txt
for s in default staged-copy; do
  echo "== one-shot acoustic 2000^3 8 steps, scheme $s"
  if [ $s = default ]; then a=""; else a="--scheme $s"; fi
  ( time $B/acoustic --size 2000 --steps 8 --backend cuda $a ) > $OUT/l/oneshot-$s.log 2>&1
  tail -n 14 $OUT/l/oneshot-$s.log
done
tar czf $OUT/logs.tgz -C $OUT l
