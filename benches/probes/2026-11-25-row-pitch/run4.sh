for m in 1 2; do
  nvcc -O3 -arch=sm_90 --fmad=false -DPACC_ASYNC=2 -DPACC_MINB=$m -o pl main.cu 2>/dev/null || { nvcc -O3 -arch=sm_90 -DPACC_ASYNC=2 -o pl main.cu 2>&1 | grep error; exit 1; }
  for n in 512 820; do ./pl $n $([ $n = 512 ] && echo 100 || echo 40) 2; done
done
cuobjdump -sass pl > $OUT/sass-lean.txt
