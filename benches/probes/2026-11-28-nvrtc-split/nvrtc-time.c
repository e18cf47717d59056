// Probe (2026-11-28): how long NVRTC takes to compile one of pacc's generated modules to
// machine code, with the options the runtime passes and with extra ones, and whether the
// machine code is the same. One compile per process (the runtime's first compile pays NVRTC's
// start too). Usage: nvrtc-time SOURCE.cu OUT.cubin [extra NVRTC options...]
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s SOURCE.cu OUT.cubin [options]\n", argv[0]); return 2; }
  FILE* f = fopen(argv[1], "rb");
  if (!f) { perror(argv[1]); return 2; }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* src = malloc(n + 1);
  if (fread(src, 1, n, f) != (size_t)n) return 2;
  src[n] = 0;
  fclose(f);
  const char* opts[32] = {"--gpu-architecture=sm_90", "--fmad=false"};
  int k = 2;
  for (int i = 3; i < argc && k < 32; ++i) opts[k++] = argv[i];
  double t0 = now();
  nvrtcProgram p;
  if (nvrtcCreateProgram(&p, src, "probe.cu", 0, NULL, NULL) != NVRTC_SUCCESS) return 3;
  nvrtcResult r = nvrtcCompileProgram(p, k, opts);
  double t1 = now();
  if (r != NVRTC_SUCCESS) {
    size_t ls;
    nvrtcGetProgramLogSize(p, &ls);
    char* log = malloc(ls + 1);
    nvrtcGetProgramLog(p, log);
    fprintf(stderr, "compile failed: %s\n%s\n", nvrtcGetErrorString(r), log);
    return 4;
  }
  size_t cs;
  nvrtcGetCUBINSize(p, &cs);
  char* cubin = malloc(cs);
  nvrtcGetCUBIN(p, cubin);
  FILE* o = fopen(argv[2], "wb");
  fwrite(cubin, 1, cs, o);
  fclose(o);
  printf("%.3f s  %zu bytes  options:", t1 - t0, cs);
  for (int i = 2; i < k; ++i) printf(" %s", opts[i]);
  printf("\n");
  return 0;
}
