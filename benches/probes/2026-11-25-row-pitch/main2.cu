#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cstring>
#include <cuda_runtime.h>
#ifndef PACC_MINB
#define PACC_MINB 1
#endif
#define PACC_BX 64
#define PACC_BY 8
#define PACC_UNROLL 2
#define PACC_STAGE 1
#define PACC_PREFETCH 0
#include "staged.cuh"
#include "rows.cuh"
#define CK(x) do{cudaError_t e=(x); if(e){printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1);}}while(0)
typedef void (*K)(long long,long long,long long,long long,long long,long long,long long,long long,long long,long long,float*,const float*,const float*,float,float,float,float,float,float,const float*);
int main(int argc,char**argv){
  long long n=atoll(argv[1]); int steps=atoi(argv[2]); int kmax = argc>3 ? atoi(argv[3]) : 3;
  size_t N=n*n*n; std::vector<float> h(N), hv(N);
  unsigned s=1; for(size_t i=0;i<N;i++){s=s*1664525u+1013904223u; h[i]=((s>>8)&0xffff)/65536.0f-0.5f; hv[i]=0.05f+((s>>20)&0xff)/25600.0f;}
  float *a[2][3]; float* wv; CK(cudaMalloc(&wv,4096));
  for(int k=0;k<kmax;k++){ for(int j=0;j<2;j++) CK(cudaMalloc(&a[k][j],N*4)); CK(cudaMalloc(&a[k][2],N*4)); CK(cudaMemcpy(a[k][2],hv.data(),N*4,cudaMemcpyHostToDevice)); }
  K ks[2]={pacc_propagate_k0, pacc_propagate_k0_rows}; int sh[2]={0,0}; const char* nm[2]={"staged","rows"};
  int nsegs[3]={4,8,16};
  for(int k=0;k<kmax;k++){
    cudaFuncAttributes fa; CK(cudaFuncGetAttributes(&fa,(const void*)ks[k]));
    int nb; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb,(const void*)ks[k],PACC_BX*PACC_BY,sh[k]));
    for(int si=0;si<3;si++){
      long long z0=4,z1=n-4; long long nseg=nsegs[si]; long long seg=(z1-z0+nseg-1)/nseg;
      int ry = k==1 ? RY : 1; dim3 g((n+PACC_BX-1)/PACC_BX,(n+PACC_BY*ry-1)/(PACC_BY*ry),nseg), b(PACC_BX,PACC_BY);
      for(int j=0;j<2;j++) CK(cudaMemcpy(a[k][j],h.data(),N*4,cudaMemcpyHostToDevice));
      cudaEvent_t e0,e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
      float c0=-205.f/72,c1=8.f/5,c2=-1.f/5,c3=8.f/315,c4=-1.f/560;
      cudaEventRecord(e0);
      for(int t=0;t<steps;t++){ float* p=a[k][t&1]; float* c=a[k][(t+1)&1];
        ks[k]<<<g,b,sh[k]>>>(z0,z1,z0,z1,0,n,n,n,t,seg,p,c,a[k][2],c0,c1,c2,c3,c4,1.f,wv); }
      cudaEventRecord(e1); CK(cudaEventSynchronize(e1)); CK(cudaGetLastError());
      float ms; cudaEventElapsedTime(&ms,e0,e1);
      double pts=(double)(n-8)*(n-8)*(n-8)*steps;
      printf("n=%lld %s RY=%d minb=%d nseg=%lld regs=%d blocks/SM=%d: %.1f Gpt/s\n",n,nm[k],RY,PACC_MINB,nseg,fa.numRegs,nb,pts/ms/1e6);
    }
  }
  std::vector<float> x(N),y(N);
  for(int k=1;k<kmax;k++) for(int j=0;j<2;j++){ CK(cudaMemcpy(x.data(),a[0][j],N*4,cudaMemcpyDeviceToHost)); CK(cudaMemcpy(y.data(),a[k][j],N*4,cudaMemcpyDeviceToHost));
    size_t d=0; for(size_t i=0;i<N;i++) d+= memcmp(&x[i],&y[i],4)!=0; printf("%s array %d differ from staged: %zu\n",nm[k],j,d);}
  return 0;
}
