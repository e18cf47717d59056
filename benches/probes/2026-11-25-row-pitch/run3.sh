for u in 1 4 8 9 18; do for m in 1 2; do
  sed "s/#pragma unroll 2/#pragma unroll $u/" staged.cuh > staged_u.cuh
  sed "s/staged.cuh/staged_u.cuh/" main.cu > main_u.cu
  nvcc -O3 -arch=sm_90 --fmad=false -DPACC_ASYNC=2 -DPACC_MINB=$m -o pu main_u.cu 2>/dev/null || exit 1
  echo "unroll=$u minb=$m"
  for n in 512 820; do ./pu $n $([ $n = 512 ] && echo 100 || echo 40) s; done
done; done
