// Probe (2026-11-28, issue 36): can a bounce ring small enough to stay in the host's last-level
// cache (300 MiB here) spare host memory? Both directions at once, as a one-shot call runs:
// up: 8 threads copy pageable -> ring U (4 MiB pieces, cached stores) while the copy engine
//     reads ring U to the device;
// down: the copy engine writes the device to ring D while 8 threads copy ring D -> pageable.
// The copies and the DMA are not ordered against each other (bandwidth only, not data).
// Build: nvcc -O3 -std=c++17 -arch=sm_90 -o ring ring.cu; run: ./ring
#include <cuda_runtime.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1);} } while (0)

using clk = std::chrono::steady_clock;
static double secs(clk::time_point a) { return std::chrono::duration<double>(clk::now() - a).count(); }

int main() {
  const size_t big = 4ull << 30, piece = 4 << 20, maxring = 512ull << 20;
  char* in = (char*)malloc(big);
  char* out = (char*)malloc(big);
  memset(in, 1, big);
  memset(out, 2, big);
  char *ru, *rd, *dev;
  CK(cudaHostAlloc(&ru, maxring, 0));
  CK(cudaHostAlloc(&rd, maxring, 0));
  memset(ru, 3, maxring);
  memset(rd, 4, maxring);
  CK(cudaMalloc(&dev, 2 * maxring));
  cudaStream_t su, sd;
  CK(cudaStreamCreateWithFlags(&su, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&sd, cudaStreamNonBlocking));
  for (size_t ring : {8ull << 20, 16ull << 20, 32ull << 20, 64ull << 20, 128ull << 20, 512ull << 20}) {
    std::atomic<bool> stop{false};
    std::atomic<size_t> up{0}, down{0}, cin{0}, cout_{0};
    const size_t chunk = ring / 4;
    auto dma = [&](int dir) {
      // Enough passes per synchronization that the engine never waits for the host.
      const size_t passes = (256ull << 20) / ring + 1;
      while (!stop) {
        for (size_t pass = 0; pass < passes; ++pass)
        for (size_t o = 0; o < ring; o += chunk) {
          if (dir == 0) CK(cudaMemcpyAsync(dev + o, ru + o, chunk, cudaMemcpyHostToDevice, su));
          else CK(cudaMemcpyAsync(rd + o, dev + maxring + o, chunk, cudaMemcpyDeviceToHost, sd));
        }
        CK(cudaStreamSynchronize(dir == 0 ? su : sd));
        (dir == 0 ? up : down) += passes * ring;
      }
    };
    auto copier = [&](int dir) {
      std::atomic<size_t> next{0};
      std::vector<std::thread> th;
      for (int i = 0; i < 8; ++i)
        th.emplace_back([&] {
          while (!stop) {
            size_t k = next.fetch_add(piece);
            size_t o = k % big, r = k % ring;
            if (dir == 0) memcpy(ru + r, in + o, piece);
            else memcpy(out + o, rd + r, piece);
            (dir == 0 ? cin : cout_) += piece;
          }
        });
      for (auto& x : th) x.join();
    };
    std::thread a(dma, 0), b(dma, 1), c(copier, 0), d(copier, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    size_t u0 = up, d0 = down, i0 = cin, o0 = cout_;
    auto t0 = clk::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    double el = secs(t0);
    printf("ring %4zu MiB each way: DMA in %5.1f out %5.1f GB/s; copies in %5.1f out %5.1f GB/s\n",
           ring >> 20, (up - u0) / el / 1e9, (down - d0) / el / 1e9, (cin - i0) / el / 1e9,
           (cout_ - o0) / el / 1e9);
    stop = true;
    a.join(); b.join(); c.join(); d.join();
  }
  return 0;
}
