// Probe (2026-11-28): what bounds the bounce rings' one-shot path (issue 36)?
// A: do host functions on two streams run at the same time (the rings' two directions)?
// B: host copy rate, pageable -> pinned, on T threads, alone;
// C: the same while the copy engines move pinned memory both ways at once (the DMA's share of
//    host memory);
// D: two copies at once (pageable -> pinned and pinned -> pageable, T/2 threads each) with the DMA.
// Build: nvcc -O3 -std=c++17 -arch=sm_90 -o host host.cu; run: ./host [threads]
#include <cuda_runtime.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <unistd.h>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1);} } while (0)

using clk = std::chrono::steady_clock;
static double secs(clk::time_point a) { return std::chrono::duration<double>(clk::now() - a).count(); }

static void CUDART_CB sleeper(void*) { usleep(200000); }

// Copies `total` bytes from src to dst (both `ring` bytes, reused) in 4 MiB pieces on `t` threads.
static double copy_rate(char* dst, const char* src, size_t ring, size_t total, int t) {
  const size_t piece = 4 << 20;
  std::atomic<size_t> next{0};
  auto t0 = clk::now();
  std::vector<std::thread> th;
  for (int i = 0; i < t; ++i)
    th.emplace_back([&] {
      for (;;) {
        size_t k = next.fetch_add(piece);
        if (k >= total) break;
        size_t o = k % ring;
        memcpy(dst + o, src + o, piece);
      }
    });
  for (auto& x : th) x.join();
  return total / secs(t0) / 1e9;
}

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 16;
  cudaStream_t s[4];
  for (auto& x : s) CK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
  // A
  auto t0 = clk::now();
  CK(cudaLaunchHostFunc(s[0], sleeper, nullptr));
  CK(cudaLaunchHostFunc(s[1], sleeper, nullptr));
  CK(cudaDeviceSynchronize());
  printf("A: two 0.2 s host functions on two streams took %.3f s (0.2: side by side, 0.4: one after the other)\n", secs(t0));
  const size_t ring = 1ull << 30, total = 16ull << 30;
  char* pageable_in = (char*)malloc(ring);
  char* pageable_out = (char*)malloc(ring);
  memset(pageable_in, 1, ring);
  memset(pageable_out, 2, ring);
  char *pin_a, *pin_b, *pin_c, *pin_d, *dev;
  CK(cudaHostAlloc(&pin_a, ring, 0));
  CK(cudaHostAlloc(&pin_b, ring, 0));
  CK(cudaHostAlloc(&pin_c, ring, 0));
  CK(cudaHostAlloc(&pin_d, ring, 0));
  memset(pin_a, 3, ring); memset(pin_b, 4, ring); memset(pin_c, 5, ring); memset(pin_d, 6, ring);
  CK(cudaMalloc(&dev, 2 * ring));
  for (int t : {threads / 2, threads}) {
    printf("B: copy pageable -> pinned, %2d threads: %.1f GB/s\n", t, copy_rate(pin_a, pageable_in, ring, total, t));
    printf("B: copy pinned -> pageable, %2d threads: %.1f GB/s\n", t, copy_rate(pageable_out, pin_b, ring, total, t));
  }
  // The copy engines, both ways, until told to stop.
  std::atomic<bool> stop{false};
  std::atomic<size_t> up{0}, down{0};
  auto dma = [&](int dir) {
    const size_t chunk = 64 << 20;
    while (!stop) {
      for (size_t o = 0; o < ring; o += chunk) {
        if (dir == 0) CK(cudaMemcpyAsync(dev + o, pin_c + o, chunk, cudaMemcpyHostToDevice, s[2]));
        else CK(cudaMemcpyAsync(pin_d + o, dev + ring + o, chunk, cudaMemcpyDeviceToHost, s[3]));
      }
      CK(cudaStreamSynchronize(s[2 + dir]));
      (dir == 0 ? up : down) += ring;
    }
  };
  {
    auto d0 = clk::now();
    std::thread u(dma, 0), d(dma, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    double idle = secs(d0);
    size_t u0 = up, dn0 = down;
    printf("C: DMA alone: in %.1f GB/s, out %.1f GB/s\n", u0 / idle / 1e9, dn0 / idle / 1e9);
    auto c0 = clk::now();
    size_t u1 = up, d1 = down;
    double r = copy_rate(pin_a, pageable_in, ring, total, threads);
    double el = secs(c0);
    printf("C: copy pageable -> pinned, %d threads, beside DMA both ways: %.1f GB/s; DMA in %.1f, out %.1f GB/s\n",
           threads, r, (up - u1) / el / 1e9, (down - d1) / el / 1e9);
    auto e0 = clk::now();
    size_t u2 = up, d2 = down;
    double ra = 0, rb = 0;
    std::thread x([&] { ra = copy_rate(pin_a, pageable_in, ring, total / 2, threads / 2); });
    std::thread y([&] { rb = copy_rate(pageable_out, pin_b, ring, total / 2, threads / 2); });
    x.join(); y.join();
    double el2 = secs(e0);
    printf("D: two copies at once (%d threads each) beside DMA: in-copy %.1f, out-copy %.1f GB/s, total %.1f; DMA in %.1f, out %.1f GB/s\n",
           threads / 2, ra, rb, total / el2 / 1e9, (up - u2) / el2 / 1e9, (down - d2) / el2 / 1e9);
    stop = true;
    u.join(); d.join();
  }
  return 0;
}
