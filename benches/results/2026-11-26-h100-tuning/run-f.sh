export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
B=.gpu/bin
echo "== acoustic 820^3, 18000 steps, fusion left to the tuner"
( time $B/acoustic --size 820 --steps 18000 --backend cuda ) > $OUT/f-acoustic-820-auto.log 2>&1
tail -n 12 $OUT/f-acoustic-820-auto.log
