// Variants of the generated marching kernel of `propagate` / `propagate_sponge`, timed side by
// side to find what keeps them from the D2D rate (issue 12, item 4). Not part of the build:
//
//   nvcc -O3 -arch=sm_90 -fmad=false -o sv benches/kernels/stencil_variants.cu
//   ./sv NZ NY NX SPONGE          e.g. ./sv 1400 1400 1400 1; ./sv 250 1800 1800 1
//
// Each row: block shape, index width, plane staging, unrolling, `__launch_bounds__` minimum
// blocks per SM, registers and spill bytes per thread, segment, resident blocks per SM, ms per
// launch, Gpt/s and the fraction of the measured D2D rate at the kernel's compulsory bytes per
// point. Every variant's result is compared bit for bit with the generated form (`gen`) after
// one launch. Results: benches/results/2026-11-23-h100-kernels/ (the list in `all` is the
// second run's; the first run's variants are rows of the same template).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CK(x)                                                                        \
    do {                                                                             \
        cudaError_t e_ = (x);                                                        \
        if (e_ != cudaSuccess) {                                                     \
            fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

struct Coef { float c0, c1, c2, c3, c4; };

// Index width: I32 computes each plane's pointer once (64-bit) and offsets in the plane in 32 bits.
// SMEM stages the current plane of `cur` (with its in-plane halo) in shared memory.
template <int BX, int BY, bool I32, bool SMEM, bool SPONGE, int UNROLL, int MINB>
__global__ void __launch_bounds__(BX * BY, MINB) march(long long z0, long long z1, long long n1,
                                                 long long n2, long long seg,
                                                 float* __restrict__ prev,
                                                 const float* __restrict__ cur,
                                                 const float* __restrict__ vel,
                                                 const float* __restrict__ damp, Coef k)
{
    __shared__ float tile[SMEM ? (BY + 8) : 1][SMEM ? (BX + 8) : 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long long x = (long long)blockIdx.x * BX + tx;
    const long long y = (long long)blockIdx.y * BY + ty;
    const long long zb = z0 + (long long)blockIdx.z * seg;
    const long long ze = zb + seg < z1 ? zb + seg : z1;
    const long long pl = n1 * n2;
    const long long c = y * n2 + x;
    const int ci = (int)(y * n2 + x);
    const int n2i = (int)n2;
    const bool in = x < n2 && y < n1;
    const bool xy = in && y >= 4 && y < n1 - 4 && x >= 4 && x < n2 - 4;
    float m4 = 0, m3 = 0, m2 = 0, m1 = 0, q0 = 0, p1 = 0, p2 = 0, p3 = 0, p4 = 0, nx1 = 0;
    if (in && zb < ze) {
        m4 = cur[(zb - 4) * pl + c];
        m3 = cur[(zb - 3) * pl + c];
        m2 = cur[(zb - 2) * pl + c];
        m1 = cur[(zb - 1) * pl + c];
        q0 = cur[(zb)*pl + c];
        p1 = cur[(zb + 1) * pl + c];
        p2 = cur[(zb + 2) * pl + c];
        p3 = cur[(zb + 3) * pl + c];
        nx1 = cur[(zb + 4) * pl + c];
    }
    float r0 = 0, rn0 = 0, r2 = 0, rn2 = 0, r3 = 0, rn3 = 0;
    if (in && zb < ze) {
        rn0 = prev[zb * pl + c];
        rn2 = vel[zb * pl + c];
        if (SPONGE) rn3 = damp[zb * pl + c];
    }
#pragma unroll UNROLL
    for (long long z = zb; z < ze; ++z) {
        const long long at = z * pl + c;
        p4 = nx1;
        if (in && z + 1 < ze) nx1 = cur[at + 5 * pl];
        r0 = rn0;
        if (in && z + 1 < ze) rn0 = prev[at + pl];
        r2 = rn2;
        if (in && z + 1 < ze) rn2 = vel[at + pl];
        if (SPONGE) {
            r3 = rn3;
            if (in && z + 1 < ze) rn3 = damp[at + pl];
        }
        float xm1, xp1, xm2, xp2, xm3, xp3, xm4, xp4, ym1, yp1, ym2, yp2, ym3, yp3, ym4, yp4;
        if (SMEM) {
            __syncthreads();
            const float* cp = cur + z * pl;
            tile[ty + 4][tx + 4] = q0;
            if (tx < 4) {
                if (x >= 4 && y < n1) tile[ty + 4][tx] = cp[c - 4];
                if (x + BX < n2 && y < n1) tile[ty + 4][tx + BX + 4] = cp[c + BX];
            }
            if (ty < 4) {
                if (y >= 4 && x < n2) tile[ty][tx + 4] = cp[c - 4 * n2];
                if (y + BY < n1 && x < n2) tile[ty + BY + 4][tx + 4] = cp[c + BY * n2];
            }
            __syncthreads();
            const int sx = tx + 4, sy = ty + 4;
            xm1 = tile[sy][sx - 1]; xp1 = tile[sy][sx + 1];
            xm2 = tile[sy][sx - 2]; xp2 = tile[sy][sx + 2];
            xm3 = tile[sy][sx - 3]; xp3 = tile[sy][sx + 3];
            xm4 = tile[sy][sx - 4]; xp4 = tile[sy][sx + 4];
            ym1 = tile[sy - 1][sx]; yp1 = tile[sy + 1][sx];
            ym2 = tile[sy - 2][sx]; yp2 = tile[sy + 2][sx];
            ym3 = tile[sy - 3][sx]; yp3 = tile[sy + 3][sx];
            ym4 = tile[sy - 4][sx]; yp4 = tile[sy + 4][sx];
        } else if (I32) {
            if (xy) {
                const float* cp = cur + z * pl + ci;
                xm1 = cp[-1]; xp1 = cp[1]; xm2 = cp[-2]; xp2 = cp[2];
                xm3 = cp[-3]; xp3 = cp[3]; xm4 = cp[-4]; xp4 = cp[4];
                ym1 = cp[-n2i]; yp1 = cp[n2i]; ym2 = cp[-2 * n2i]; yp2 = cp[2 * n2i];
                ym3 = cp[-3 * n2i]; yp3 = cp[3 * n2i]; ym4 = cp[-4 * n2i]; yp4 = cp[4 * n2i];
            }
        } else {
            if (xy) {
                xm1 = cur[at - 1]; xp1 = cur[at + 1]; xm2 = cur[at - 2]; xp2 = cur[at + 2];
                xm3 = cur[at - 3]; xp3 = cur[at + 3]; xm4 = cur[at - 4]; xp4 = cur[at + 4];
                ym1 = cur[at - n2]; yp1 = cur[at + n2]; ym2 = cur[at - 2 * n2];
                yp2 = cur[at + 2 * n2]; ym3 = cur[at - 3 * n2]; yp3 = cur[at + 3 * n2];
                ym4 = cur[at - 4 * n2]; yp4 = cur[at + 4 * n2];
            }
        }
        if (xy) {
            float u = q0;
            // The same expression tree as the generated kernel (same bits).
            float lap = 3.0f * k.c0 * u + k.c1 * (m1 + p1 + ym1 + yp1 + xm1 + xp1) +
                        k.c2 * (m2 + p2 + ym2 + yp2 + xm2 + xp2) +
                        k.c3 * (m3 + p3 + ym3 + yp3 + xm3 + xp3) +
                        k.c4 * (m4 + p4 + ym4 + yp4 + xm4 + xp4);
            if (SPONGE) {
                float e = r3;
                prev[at] = (2.0f * u - (1.0f - e) * r0 + r2 * lap) / (1.0f + e);
            } else {
                prev[at] = 2.0f * u - r0 + r2 * lap;
            }
        }
        m4 = m3; m3 = m2; m2 = m1; m1 = q0; q0 = p1; p1 = p2; p2 = p3; p3 = p4;
    }
}

__global__ void fill(float* a, long long n, unsigned seed, float scale, float off)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
        a[i] = off + scale * ((h & 0xffffff) / 16777216.0f);
    }
}

__global__ void bits_sum(const float* a, long long n, unsigned long long* out)
{
    unsigned long long s = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        s += (unsigned long long)__float_as_uint(a[i]) * (unsigned long long)(i % 1000003 + 1);
    atomicAdd(out, s);
}

struct Ctx {
    long long nz, ny, nx, n;
    bool sponge;
    float *prev, *prev0, *cur, *vel, *damp;
    unsigned long long* sum;
    int sms;
    double d2d;  // bytes/s, read + write
};

// The runtime's segment choice (exec/cuda/launch.rs `Geometry::segment`).
static long long segment(long long planes, long long per_slice, long long resident, long long reach)
{
    double best = -1e30;
    long long bs = planes;
    for (long long nseg = 1; nseg <= std::min(64LL, planes); ++nseg) {
        long long seg = (planes + nseg - 1) / nseg;
        long long ns = (planes + seg - 1) / seg;
        long long blocks = per_slice * ns;
        long long waves = (blocks + resident - 1) / resident;
        double fill = (double)blocks / (double)(waves * resident);
        double refill = 1.0 + (double)reach / (4.0 * seg);
        double score = fill / refill;
        if (score > best + 1e-9) { best = score; bs = seg; }
    }
    return bs;
}

template <int BX, int BY, bool I32, bool SMEM, bool SPONGE, int UNROLL, int MINB = 1>
static void run(Ctx& c, const char* name, long long seg_override, unsigned long long ref,
                unsigned long long* got)
{
    auto kern = march<BX, BY, I32, SMEM, SPONGE, UNROLL, MINB>;
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, kern));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, BX * BY, 0));
    long long planes = c.nz - 8;
    long long gx = (c.nx + BX - 1) / BX, gy = (c.ny + BY - 1) / BY;
    long long seg = seg_override > 0 ? seg_override : segment(planes, gx * gy, std::max(1, per_sm * c.sms), 8);
    long long gz = (planes + seg - 1) / seg;
    dim3 grid(gx, gy, gz), block(BX, BY);
    Coef k{-205.0f / 72.0f, 8.0f / 5.0f, -1.0f / 5.0f, 8.0f / 315.0f, -1.0f / 560.0f};
    auto launch = [&] {
        kern<<<grid, block>>>(4, c.nz - 4, c.ny, c.nx, seg, c.prev, c.cur, c.vel, c.damp, k);
    };
    // Correctness: one launch from the saved state.
    CK(cudaMemcpy(c.prev, c.prev0, c.n * 4, cudaMemcpyDeviceToDevice));
    launch();
    CK(cudaGetLastError());
    CK(cudaMemset(c.sum, 0, 8));
    bits_sum<<<1024, 256>>>(c.prev, c.n, c.sum);
    CK(cudaMemcpy(got, c.sum, 8, cudaMemcpyDeviceToHost));
    CK(cudaDeviceSynchronize());
    // Timing: median of 7 launches after a warm-up.
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    launch();
    std::vector<float> ms;
    for (int r = 0; r < 7; ++r) {
        CK(cudaEventRecord(a));
        launch();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float t;
        CK(cudaEventElapsedTime(&t, a, b));
        ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    double t = ms[3] * 1e-3;
    double pts = (double)(c.nz - 8) * (c.ny - 8) * (c.nx - 8);
    double bpp = SPONGE ? 20.0 : 16.0;
    double gpts = pts / t / 1e9;
    printf("%-10s %4dx%-3d %s %s unroll %d minb %d regs %3d spill %3d seg %4lld occ %2d  %8.3f ms  %6.1f Gpt/s  %5.1f%% D2D  %s\n",
           name, BX, BY, I32 ? "i32" : "i64", SMEM ? "smem" : "l1  ", UNROLL, MINB, fa.numRegs, (int)fa.localSizeBytes, seg, per_sm, t * 1e3,
           gpts, 100.0 * gpts * 1e9 * bpp / c.d2d,
           ref == 0 ? "(reference)" : (*got == ref ? "same bits" : "BITS DIFFER"));
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
}

template <bool S>
static void all(Ctx& c)
{
    unsigned long long ref = 0, got = 0;
    run<64, 8, false, false, S, 2>(c, "gen", 0, 0, &ref);
    run<64, 8, false, false, S, 2, 2>(c, "gen", 0, ref, &got);
    run<64, 8, false, false, S, 2, 3>(c, "gen", 0, ref, &got);
    run<64, 8, false, false, S, 2, 4>(c, "gen", 0, ref, &got);
    run<64, 8, false, false, S, 1, 3>(c, "gen", 0, ref, &got);
    run<64, 8, false, false, S, 1, 4>(c, "gen", 0, ref, &got);
    run<64, 8, true, false, S, 1, 3>(c, "i32", 0, ref, &got);
    run<64, 8, true, false, S, 1, 4>(c, "i32", 0, ref, &got);
    run<64, 8, true, false, S, 2, 4>(c, "i32", 0, ref, &got);
    run<32, 8, false, false, S, 2, 6>(c, "gen", 0, ref, &got);
    run<32, 8, false, false, S, 1, 8>(c, "gen", 0, ref, &got);
    run<32, 8, true, false, S, 1, 8>(c, "i32", 0, ref, &got);
    run<32, 16, false, false, S, 2, 3>(c, "gen", 0, ref, &got);
    run<32, 16, false, false, S, 1, 4>(c, "gen", 0, ref, &got);
    run<32, 16, true, false, S, 1, 4>(c, "i32", 0, ref, &got);
    run<32, 32, false, false, S, 1, 2>(c, "gen", 0, ref, &got);
    run<32, 32, true, false, S, 1, 2>(c, "i32", 0, ref, &got);
    run<64, 16, false, false, S, 2, 1>(c, "gen", 0, ref, &got);
    run<64, 16, false, false, S, 1, 2>(c, "gen", 0, ref, &got);
    run<64, 16, true, false, S, 1, 2>(c, "i32", 0, ref, &got);
    run<64, 16, false, false, S, 2, 2>(c, "gen", 0, ref, &got);
    run<128, 8, false, false, S, 1, 2>(c, "gen", 0, ref, &got);
    run<128, 8, true, false, S, 1, 2>(c, "i32", 0, ref, &got);
    run<128, 4, false, false, S, 1, 4>(c, "gen", 0, ref, &got);
    run<32, 8, false, true, S, 1, 8>(c, "smem", 0, ref, &got);
    run<64, 16, false, true, S, 1, 2>(c, "smem", 0, ref, &got);
}

int main(int argc, char** argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s NZ NY NX SPONGE(0|1)\n", argv[0]);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    Ctx c;
    c.nz = atoll(argv[1]); c.ny = atoll(argv[2]); c.nx = atoll(argv[3]);
    c.sponge = atoi(argv[4]) != 0;
    c.n = c.nz * c.ny * c.nx;
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    c.sms = p.multiProcessorCount;
    CK(cudaMalloc(&c.prev, c.n * 4));
    CK(cudaMalloc(&c.prev0, c.n * 4));
    CK(cudaMalloc(&c.cur, c.n * 4));
    CK(cudaMalloc(&c.vel, c.n * 4));
    CK(cudaMalloc(&c.damp, c.sponge ? c.n * 4 : 4));
    CK(cudaMalloc(&c.sum, 8));
    fill<<<4096, 256>>>(c.prev0, c.n, 1, 1.0f, -0.5f);
    fill<<<4096, 256>>>(c.cur, c.n, 2, 1.0f, -0.5f);
    fill<<<4096, 256>>>(c.vel, c.n, 3, 0.1f, 0.0f);
    if (c.sponge) fill<<<4096, 256>>>(c.damp, c.n, 4, 0.05f, 0.0f);
    CK(cudaDeviceSynchronize());
    // D2D rate: a copy of one array, counted as read + write.
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    CK(cudaMemcpy(c.prev, c.prev0, c.n * 4, cudaMemcpyDeviceToDevice));
    CK(cudaEventRecord(a));
    for (int r = 0; r < 5; ++r) CK(cudaMemcpy(c.prev, c.prev0, c.n * 4, cudaMemcpyDeviceToDevice));
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float t;
    CK(cudaEventElapsedTime(&t, a, b));
    c.d2d = 2.0 * c.n * 4 * 5 / (t * 1e-3);
    printf("%s, %d SMs; %lld x %lld x %lld, %s; D2D %.0f GB/s\n", p.name, c.sms, c.nz, c.ny, c.nx,
           c.sponge ? "propagate_sponge (20 B/pt)" : "propagate (16 B/pt)", c.d2d / 1e9);
    if (c.sponge) all<true>(c); else all<false>(c);
    return 0;
}
