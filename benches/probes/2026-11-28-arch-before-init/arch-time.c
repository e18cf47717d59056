// Probe (2026-11-28): how soon a process can know the GPU's compute capability (which NVRTC
// needs) through NVML, against the driver's cuInit; and both at once on two threads, as the
// runtime would start them. Times are from the process's start of main.
// Usage: arch-time nvml|cuda|both
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double t0;
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec - t0;
}

static void* by_nvml(void* arg) {
  (void)arg;
  double s = now();
  void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (!h) { printf("nvml: no library\n"); return NULL; }
  int (*init)(void) = dlsym(h, "nvmlInit_v2");
  int (*count)(unsigned*) = dlsym(h, "nvmlDeviceGetCount_v2");
  int (*handle)(unsigned, void**) = dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
  int (*cc)(void*, int*, int*) = dlsym(h, "nvmlDeviceGetCudaComputeCapability");
  double l = now();
  unsigned n = 0;
  int major = -1, minor = -1;
  int r = init();
  double i = now();
  if (r == 0 && count(&n) == 0 && n > 0) {
    void* d;
    if (handle(0, &d) == 0) cc(d, &major, &minor);
  }
  printf("nvml: start %.3f loaded %.3f init %.3f capability %.3f s: %d.%d (%u devices)\n", s, l, i,
         now(), major, minor, n);
  return NULL;
}

static void* by_cuda(void* arg) {
  (void)arg;
  double s = now();
  void* h = dlopen("libcuda.so.1", RTLD_NOW);
  if (!h) { printf("cuda: no library\n"); return NULL; }
  int (*init)(unsigned) = dlsym(h, "cuInit");
  int (*get)(int*, int) = dlsym(h, "cuDeviceGet");
  int (*attr)(int*, int, int) = dlsym(h, "cuDeviceGetAttribute");
  double l = now();
  int r = init(0);
  double i = now();
  int dev = 0, major = -1, minor = -1;
  if (r == 0 && get(&dev, 0) == 0) {
    attr(&major, 75, dev);
    attr(&minor, 76, dev);
  }
  printf("cuda: start %.3f loaded %.3f init %.3f capability %.3f s: %d.%d\n", s, l, i, now(),
         major, minor);
  return NULL;
}

int main(int argc, char** argv) {
  t0 = 0;
  t0 = now();
  const char* mode = argc > 1 ? argv[1] : "both";
  pthread_t a, b;
  int na = 0, nb = 0;
  if (!strcmp(mode, "nvml") || !strcmp(mode, "both")) na = !pthread_create(&a, NULL, by_nvml, NULL);
  if (!strcmp(mode, "cuda") || !strcmp(mode, "both")) nb = !pthread_create(&b, NULL, by_cuda, NULL);
  if (na) pthread_join(a, NULL);
  if (nb) pthread_join(b, NULL);
  return 0;
}
