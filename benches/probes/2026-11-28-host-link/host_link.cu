// The host link when several GPUs of one host move data at once: each of N threads drives one
// GPU, copying `MiB` from pinned host memory to the device and the same amount back on two
// streams at the same time, `reps` times, all GPUs starting together. Prints each GPU's rate
// (both directions together) and their sum: what N out-of-core ranks on one host can move.
//
//   nvcc -O2 -std=c++17 -o host_link host_link.cu && ./host_link N [MiB] [reps]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x)                                                                 \
    do {                                                                         \
        cudaError_t e = (x);                                                     \
        if (e != cudaSuccess) {                                                  \
            std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));        \
            std::exit(1);                                                        \
        }                                                                        \
    } while (0)

int main(int argc, char **argv) {
    int n = argc > 1 ? std::atoi(argv[1]) : 1;
    size_t bytes = (size_t)(argc > 2 ? std::atoll(argv[2]) : 1024) << 20;
    int reps = argc > 3 ? std::atoi(argv[3]) : 8;
    std::atomic<int> ready{0};
    std::vector<double> rate(n);
    std::vector<std::thread> threads;
    for (int g = 0; g < n; ++g) {
        threads.emplace_back([&, g] {
            CHECK(cudaSetDevice(g));
            void *up, *down, *d_up, *d_down;
            CHECK(cudaHostAlloc(&up, bytes, cudaHostAllocDefault));
            CHECK(cudaHostAlloc(&down, bytes, cudaHostAllocDefault));
            CHECK(cudaMalloc(&d_up, bytes));
            CHECK(cudaMalloc(&d_down, bytes));
            cudaStream_t a, b;
            CHECK(cudaStreamCreate(&a));
            CHECK(cudaStreamCreate(&b));
            // Warm both directions once, then wait for every GPU.
            CHECK(cudaMemcpyAsync(d_up, up, bytes, cudaMemcpyHostToDevice, a));
            CHECK(cudaMemcpyAsync(down, d_down, bytes, cudaMemcpyDeviceToHost, b));
            CHECK(cudaDeviceSynchronize());
            ready.fetch_add(1);
            while (ready.load() < n) {
            }
            auto t0 = std::chrono::steady_clock::now();
            for (int r = 0; r < reps; ++r) {
                CHECK(cudaMemcpyAsync(d_up, up, bytes, cudaMemcpyHostToDevice, a));
                CHECK(cudaMemcpyAsync(down, d_down, bytes, cudaMemcpyDeviceToHost, b));
            }
            CHECK(cudaDeviceSynchronize());
            double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            rate[g] = 2.0 * bytes * reps / s;
        });
    }
    double sum = 0;
    for (auto &t : threads) t.join();
    for (int g = 0; g < n; ++g) {
        std::printf("gpu %d: %.1f GB/s both ways\n", g, rate[g] / 1e9);
        sum += rate[g];
    }
    std::printf("%d GPUs at once: %.1f GB/s in all, %.1f per GPU\n", n, sum / 1e9, sum / 1e9 / n);
}
