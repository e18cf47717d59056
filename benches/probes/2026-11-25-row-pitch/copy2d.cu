#include <cstdio>
#include <cuda_runtime.h>
int main(){
  size_t bytes = 2ull<<30; char* h; cudaHostAlloc((void**)&h, bytes, 0);
  char* d; cudaMalloc(&d, bytes + (bytes>>3));
  cudaEvent_t a,b; cudaEventCreate(&a); cudaEventCreate(&b); float ms;
  for (int rep=0; rep<2; rep++){
  cudaEventRecord(a); cudaMemcpyAsync(d,h,bytes,cudaMemcpyHostToDevice); cudaEventRecord(b); cudaEventSynchronize(b); cudaEventElapsedTime(&ms,a,b);
  printf("flat HtoD %.1f GB/s\n", bytes/ms/1e6);
  cudaEventRecord(a); cudaMemcpyAsync(h,d,bytes,cudaMemcpyDeviceToHost); cudaEventRecord(b); cudaEventSynchronize(b); cudaEventElapsedTime(&ms,a,b);
  printf("flat DtoH %.1f GB/s\n", bytes/ms/1e6);
  size_t rows[4]={820*4, 1800*4, 1970*4, 100*4}; size_t pitch[4]={832*4,1824*4,1984*4,128*4};
  for(int i=0;i<4;i++){ size_t w=rows[i], hgt=bytes/w/2;
    cudaEventRecord(a); cudaMemcpy2DAsync(d,pitch[i],h,w,w,hgt,cudaMemcpyHostToDevice); cudaEventRecord(b); cudaEventSynchronize(b); cudaEventElapsedTime(&ms,a,b);
    printf("2D HtoD row %zu B pitch %zu: %.1f GB/s\n", w, pitch[i], w*hgt/ms/1e6);
    cudaEventRecord(a); cudaMemcpy2DAsync(h,w,d,pitch[i],w,hgt,cudaMemcpyDeviceToHost); cudaEventRecord(b); cudaEventSynchronize(b); cudaEventElapsedTime(&ms,a,b);
    printf("2D DtoH row %zu B pitch %zu: %.1f GB/s (%s)\n", w, pitch[i], w*hgt/ms/1e6, cudaGetErrorString(cudaGetLastError()));
  }}
}
