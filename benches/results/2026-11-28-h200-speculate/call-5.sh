#!/usr/bin/env bash
# Call 5 (eighth session): the fused vector form's marching loop unrolled after the
# term-at-a-time sums (unroll.patch: the `unroll` knob sets PACC_FVUNROLL), which no longer
# spills (static SASS); the fused GPU tests with the loop unrolled by 2.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
S=$OUT/summary.txt
V="fuse=2;fuse=2,unroll=2;fuse=2,unroll=3;fuse=2,unroll=9"
timeout 90 .gpu/bin/kernels --only acoustic,sponge --acoustic 512 --sponge 512 --steps3d 24 --variants "$V" > $L/k512.log 2>&1
echo "k512 rc=$?" >> $S
grep -E "^(acoustic|sponge) .*marching" $L/k512.log >> $S
timeout 60 .gpu/bin/kernels --only acoustic,sponge --acoustic 820 --sponge 820 --steps3d 24 --variants "fuse=2;fuse=2,unroll=2" > $L/k820.log 2>&1
echo "k820 rc=$?" >> $S
grep -E "^(acoustic|sponge) .*marching" $L/k820.log >> $S
for t in fused_kernels fused_random_gpu; do
  PACC_MARCH=unroll=2 timeout 100 .gpu/bin/$t --include-ignored --test-threads=1 > $L/t-$t.log 2>&1
  echo "test $t (PACC_MARCH=unroll=2) rc=$? $(grep 'test result' $L/t-$t.log | tail -1)" >> $S
done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
cat $S
