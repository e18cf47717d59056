export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
B=.gpu/bin
mkdir -p $OUT/l
echo "== one-shot acoustic 2000^3 8 steps, arrays written first (--init-noise 1e-6)"
( time $B/acoustic --size 2000 --steps 8 --backend cuda --init-noise 1e-6 ) > $OUT/l/oneshot-written.log 2>&1
tail -n 14 $OUT/l/oneshot-written.log
echo "== the same, registering before the first transfer (PACC_PIN_OVERLAP=0)"
( time env PACC_PIN_OVERLAP=0 $B/acoustic --size 2000 --steps 8 --backend cuda --init-noise 1e-6 ) > $OUT/l/oneshot-written-nooverlap.log 2>&1
tail -n 14 $OUT/l/oneshot-written-nooverlap.log
