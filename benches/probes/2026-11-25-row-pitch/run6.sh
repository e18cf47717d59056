for cfg in "2 1" "2 2" "4 1" "4 2"; do set -- $cfg
  nvcc -O3 -arch=sm_90 --fmad=false -DRY=$1 -DPACC_MINB=$2 -o pr main2.cu 2>&1 | grep -i error && exit 1
  for n in 512 832; do ./pr $n $([ $n = 512 ] && echo 100 || echo 40) 2; done
done
