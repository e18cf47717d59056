#!/usr/bin/env bash
# SASS opcode histograms of the fused vector kernel and the single-step vector kernel.
export PATH=/usr/local/cuda/bin:$PATH
L=$OUT/sass; mkdir -p $L
nvcc --version | tail -2 > $L/nvcc.txt
nvcc -cubin -arch=sm_90 --fmad=false -x cu -DPACC_FUSE=2 -DPACC_VX=1 -DPACC_FVBX=16 -DPACC_FVBY=24 -o $L/f2.cubin .gpu/prop.cu > $L/f2.err 2>&1
nvcc -cubin -arch=sm_90 --fmad=false -x cu -o $L/k0.cubin .gpu/prop.cu > $L/k0.err 2>&1
for k in f2 k0; do
  cuobjdump -sass $L/$k.cubin > $L/$k.sass 2>&1
  cuobjdump -res-usage $L/$k.cubin > $L/$k.res 2>&1
done
ls -la $L
