// Probe (2026-11-26): the translator's fused Himeno kernels (PACC_FUSE = 2, 3; generated source
// from `pacc expand src/models/himeno.rs --cuda`, compiled per shape by build.sh) against its
// single-step kernels, in core, through the driver API: bits of p and wrk2 after 12 iterations,
// the last iteration's gosa, and time per iteration.
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <vector>
#include <string>
#include <algorithm>
#include <fstream>
#include <sstream>

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s; cuGetErrorString(r_, &s); \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, s); exit(1);} } while (0)

struct Args {
  std::vector<uint64_t> s;
  void i(long long v) { s.push_back((uint64_t)v); }
  void p(CUdeviceptr v) { s.push_back((uint64_t)v); }
  void f(float v) { uint32_t b; memcpy(&b, &v, 4); s.push_back(b); }
  std::vector<void*> ptrs() { std::vector<void*> r; for (auto& x : s) r.push_back(&x); return r; }
};

static CUmodule load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss; ss << f.rdbuf();
  std::string img = ss.str();
  CUmodule m; CK(cuModuleLoadData(&m, img.data()));
  return m;
}

static int nsm;
static int seg_for(int planes, long long bxy, int resident) {
  int best = 1; double be = 0;
  for (int s = 1; s <= 64 && s <= planes; ++s) {
    long long b = bxy * s, w = (b + resident - 1) / resident;
    double e = (double)b / (w * resident) / (1.0 + 4.0 * s / planes);
    if (e > be) { be = e; best = s; }
  }
  return (planes + best - 1) / best;
}

int main(int argc, char** argv) {
  const long long NI = argc > 1 ? atoll(argv[1]) : 512, NJ = argc > 2 ? atoll(argv[2]) : 512,
                  NK = argc > 3 ? atoll(argv[3]) : 768;
  const int ITERS = 12;
  CK(cuInit(0)); CUdevice dev; CK(cuDeviceGet(&dev, 0)); CUcontext ctx; CK(cuCtxCreate(&ctx, nullptr, 0, dev));
  CK(cuDeviceGetAttribute(&nsm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  char name[256]; CK(cuDeviceGetName(name, 256, dev));
  const long long N = NI * NJ * NK;
  printf("%s, himeno %lldx%lldx%lld, %d iterations\n", name, NI, NJ, NK, ITERS);
  // 14 arrays: p, a0..a3, b0..b2, c0..c2, bnd, wrk1, wrk2 (Himeno's setup with small
  // perturbations, so diagonals and coefficients matter).
  std::vector<std::vector<float>> h(14, std::vector<float>(N));
  unsigned s = 12345;
  auto rnd = [&]() { s = s * 1664525u + 1013904223u; return (s >> 8) * (1.0f / 16777216.0f); };
  for (long long i = 0; i < N; ++i) {
    long long z = i / (NJ * NK);
    h[0][i] = (float)(z * z) / (float)((NI - 1) * (NI - 1)) + 0.01f * rnd();
    h[1][i] = h[2][i] = h[3][i] = 1.0f; h[4][i] = (float)(1.0 / 6.0);
    h[5][i] = 0.01f * rnd(); h[6][i] = 0.01f * rnd(); h[7][i] = 0.01f * rnd();
    h[8][i] = h[9][i] = h[10][i] = 1.0f; h[11][i] = 1.0f; h[12][i] = 0.0f; h[13][i] = 0.0f;
  }
  std::vector<CUdeviceptr> d(14);
  for (int a = 0; a < 14; ++a) { CK(cuMemAlloc(&d[a], N * 4)); }
  auto reset = [&]() { for (int a = 0; a < 14; ++a) CK(cuMemcpyHtoD(d[a], h[a].data(), N * 4)); };
  CUdeviceptr P2, W2, red; CK(cuMemAlloc(&P2, N * 4)); CK(cuMemAlloc(&W2, N * 4)); CK(cuMemAlloc(&red, 8 << 22));
  CUevent e0, e1; CK(cuEventCreate(&e0, 0)); CK(cuEventCreate(&e1, 0));
  std::vector<float> refp(N), refw(N);
  double refgosa = 0;
  const float omega = 0.8f;
  auto gosa_of = [&](long long nblocks, int which) {
    std::vector<double> v(nblocks);
    CK(cuMemcpyDtoH(v.data(), red + (uint64_t)which * nblocks * 8, nblocks * 8));
    double g = 0; for (double x : v) g += x; return g;
  };
  // --- single step: k0 (L1 marching, minb 2 as the occupancy guard compiles it) then k1 ---
  {
    CUmodule m = load("single.cubin");
    CUfunction k0, k1; CK(cuModuleGetFunction(&k0, m, "pacc_jacobi_k0")); CK(cuModuleGetFunction(&k1, m, "pacc_jacobi_k1"));
    const int BX = 64, BY = 8;
    long long gx = (NK + BX - 1) / BX, gy = (NJ + BY - 1) / BY;
    int b0; CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&b0, k0, BX * BY, 0));
    int seg = seg_for(NI - 2, gx * gy, b0 * nsm);
    long long gz = (NI - 2 + seg - 1) / seg;
    auto step = [&](int it) {
      for (int k = 0; k < 2; ++k) {
        Args a; for (long long v : {1LL, NI - 1, 1LL, NI - 1, 0LL, NI, NJ, NK, NK, (long long)it, (long long)seg}) a.i(v);
        for (int x = 0; x < 14; ++x) a.p(d[x]);
        a.f(omega);
        if (k == 0) a.p(red);
        auto pp = a.ptrs();
        CK(cuLaunchKernel(k == 0 ? k0 : k1, gx, gy, gz, BX, BY, 1, 0, 0, pp.data(), nullptr));
      }
    };
    float best = 1e30f;
    for (int rep = 0; rep < 3; ++rep) {
      reset();
      CK(cuEventRecord(e0, 0));
      for (int it = 0; it < ITERS; ++it) step(it);
      CK(cuEventRecord(e1, 0)); CK(cuEventSynchronize(e1));
      float ms; CK(cuEventElapsedTime(&ms, e0, e1)); best = std::min(best, ms);
    }
    refgosa = gosa_of(gx * gy * gz, 0);
    CK(cuMemcpyDtoH(refp.data(), d[0], N * 4)); CK(cuMemcpyDtoH(refw.data(), d[13], N * 4));
    double pts = (double)(NI - 2) * (NJ - 2) * (NK - 2);
    printf("%-28s %8.3f ms/iter  %6.1f Gpt/s  gosa %.9g  (seg %d, %d blocks/SM)\n", "single step (k0 + k1)",
           best / ITERS, pts * ITERS / (best * 1e-3) / 1e9, refgosa, seg, b0);
  }
  // --- fused variants ---
  const char* variants[] = {"f2_32x16", "f2_64x16", "f2_32x32", "f2_64x8", "f2_128x8", "f3_32x16", "f3_64x16", "f3_32x32"};
  for (const char* v : variants) {
    int s_ = v[1] - '0', bx, by; sscanf(v + 3, "%dx%d", &bx, &by);
    std::string path = std::string(v) + ".cubin";
    std::ifstream test(path); if (!test) { printf("%-28s (not compiled)\n", v); continue; }
    CUmodule m = load(path);
    CUfunction f; std::string fn = std::string("pacc_jacobi_f") + (char)('0' + s_);
    if (cuModuleGetFunction(&f, m, fn.c_str()) != CUDA_SUCCESS) { printf("%-28s (no function)\n", v); continue; }
    const int H = s_ - 1;  // the block's halo per side: 1 per fused step after the first
    long long tx = bx - 2 * H, ty = by - 2 * H;
    long long gx = (NK + tx - 1) / tx, gy = (NJ + ty - 1) / ty;
    int nb; CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&nb, f, bx * by, 0));
    int seg = seg_for(NI, gx * gy, std::max(nb, 1) * nsm);
    long long gz = (NI + seg - 1) / seg, nblocks = gx * gy * gz;
    auto launch = [&](int t, CUdeviceptr* in, CUdeviceptr* outp, CUdeviceptr* outw) {
      Args a; for (long long x : {0LL, NI, 0LL, NI, 0LL, NI, NJ, NK, NK, (long long)t, (long long)seg}) a.i(x);
      for (int x = 0; x < 14; ++x) a.p(in[x]);
      a.p(*outp); a.p(*outw); a.f(omega);
      for (int r = 0; r < s_; ++r) a.p(red + (uint64_t)r * nblocks * 8);
      auto pp = a.ptrs();
      CK(cuLaunchKernel(f, gx, gy, gz, bx, by, 1, 0, 0, pp.data(), nullptr));
    };
    float best = 1e30f;
    std::vector<CUdeviceptr> cur(d);
    for (int rep = 0; rep < 3; ++rep) {
      reset(); cur = d; CUdeviceptr op = P2, ow = W2;
      CK(cuEventRecord(e0, 0));
      for (int it = 0; it < ITERS; it += s_) {
        launch(it, cur.data(), &op, &ow);
        std::swap(cur[0], op); std::swap(cur[13], ow);
      }
      CK(cuEventRecord(e1, 0)); CK(cuEventSynchronize(e1));
      float ms; CK(cuEventElapsedTime(&ms, e0, e1)); best = std::min(best, ms);
      if (rep == 2) {
        std::vector<float> gp(N), gw(N);
        CK(cuMemcpyDtoH(gp.data(), cur[0], N * 4)); CK(cuMemcpyDtoH(gw.data(), cur[13], N * 4));
        long long bad = 0;
        for (long long i = 0; i < N; ++i) bad += memcmp(&gp[i], &refp[i], 4) != 0;
        // wrk2 is scratch (its last version is the last iteration's, like p's interior).
        long long badw = 0;
        for (long long i = 0; i < N; ++i) badw += memcmp(&gw[i], &refw[i], 4) != 0;
        double g = gosa_of(nblocks, s_ - 1);
        double pts = (double)(NI - 2) * (NJ - 2) * (NK - 2);
        int regs; CK(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
        int smem; CK(cuFuncGetAttribute(&smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f));
        int lmem; CK(cuFuncGetAttribute(&lmem, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f));
        printf("%-28s %8.3f ms/iter  %6.1f Gpt/s  gosa %.9g  differ p %lld wrk2 %lld  (regs %d, smem %d, local %d, %d blocks/SM, seg %d)\n",
               v, best / ITERS, pts * ITERS / (best * 1e-3) / 1e9, g, bad, badw, regs, smem, lmem, nb, seg);
      }
      // the fused run moved the arrays: put them back for the next repetition
      d = std::vector<CUdeviceptr>(cur); P2 = op; W2 = ow;
    }
  }
  return 0;
}
