// Probe (2026-11-26): a hand-written fused two-step kernel of the `propagate` /
// `propagate_sponge` stencil against a lean single-step kernel and the generated kernels
// (renamed copies of the committed CUDA source), in core, bit for bit (all built -fmad=false).
//
// Fused design: a block of BX x BY threads, RY rows each, covers a BX x (BY*RY) tile of level
// t+1 and writes the inner (BX-8) x (BY*RY-8) tile of levels t+1 and t+2 into new buffers.
// Marching along z, step j computes level t+1 at plane j (register queue of `cur` planes
// j-4..j+4, in-plane `cur` from a staged shared tile) and level t+2 at plane j-4 (register queue
// of level t+1's column, in-plane level t+1 from a second shared tile). Both tiles are
// double-buffered: one barrier a step.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <string>
#include <algorithm>
#include <cuda_runtime.h>
#include "gen.cuh"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1);} } while (0)

#define RH 4

struct Co { float c0, c1, c2, c3, c4; };

template <bool SPONGE>
__device__ __forceinline__ float upd(float u, float p, float v, float e, float lap) {
  if (SPONGE) return (2.0f * u - (1.0f - e) * p + v * lap) / (1.0f + e);
  return 2.0f * u - p + v * lap;
}

// The generated kernels' evaluation order. Q[4] is the centre, Q[4 -+ d] the z neighbours.
#define LAP(Q, S, SW)                                                                    \
  (3.0f * k.c0 * Q[4] + k.c1 * (Q[3] + Q[5] + S[-1 * SW] + S[1 * SW] + S[-1] + S[1]) + \
   k.c2 * (Q[2] + Q[6] + S[-2 * SW] + S[2 * SW] + S[-2] + S[2]) +                        \
   k.c3 * (Q[1] + Q[7] + S[-3 * SW] + S[3 * SW] + S[-3] + S[3]) +                        \
   k.c4 * (Q[0] + Q[8] + S[-4 * SW] + S[4 * SW] + S[-4] + S[4]))

// VELQ: level t+2 takes vel (and damp) at plane j-4 from a register queue (1) or reloads them
// (0, an L2 hit: the block read them four steps earlier).
template <int BX, int BY, int RY, bool SPONGE, int MINB, int VELQ>
__global__ void __launch_bounds__(BX * BY, MINB)
fused2(const float* __restrict__ prev, const float* __restrict__ cur,
       const float* __restrict__ vel, const float* __restrict__ damp,
       float* __restrict__ oprev, float* __restrict__ ocur, int n0, int n1, int n2, int rp,
       int zseg, Co k) {
  constexpr int TY = BY * RY, SW = BX + 2 * RH, SH = TY + 2 * RH;
  extern __shared__ float smem[];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x = blockIdx.x * (BX - 2 * RH) - RH + tx;
  const int y0 = blockIdx.y * (TY - 2 * RH) - RH + ty;
  const long long pl = (long long)n1 * rp;
  const int zb = blockIdx.z * zseg, ze = min(zb + zseg, n0);
  const bool xin = x >= 0 && x < n2, xr = x >= RH && x < n2 - RH;
  const int hxo = tx < RH ? -RH : (tx >= BX - RH ? RH : 0);
  const bool hxin = hxo != 0 && x + hxo >= 0 && x + hxo < n2;
  const bool xout = tx >= RH && tx < BX - RH && xin;
  int c[RY];
  bool in[RY], rng[RY], out[RY], hxv[RY];
  float qc[RY][9], qn[RY], q0[RY][9], pr[RY], prn[RY], vr[RY], vrn[RY], dr[RY], drn[RY], hx[RY];
  float vq[RY][5], dq[RY][5];
  const int jb = zb - 4;
#pragma unroll
  for (int r = 0; r < RY; ++r) {
    const int y = y0 + r * BY;
    c[r] = y * rp + x;
    in[r] = xin && y >= 0 && y < n1;
    rng[r] = in[r] && xr && y >= RH && y < n1 - RH;
    const int row = ty + r * BY;
    out[r] = in[r] && xout && row >= RH && row < TY - RH;
    hxv[r] = hxin && y >= 0 && y < n1;
#pragma unroll
    for (int s = 0; s < 9; ++s) {
      const int p = jb - 4 + s;
      qc[r][s] = (in[r] && p >= 0 && p < n0) ? cur[p * pl + c[r]] : 0.0f;
      q0[r][s] = 0.0f;
    }
#pragma unroll
    for (int s = 0; s < 5; ++s) vq[r][s] = dq[r][s] = 0.0f;
    qn[r] = 0.0f;
    const bool ok = in[r] && jb >= 0 && jb < n0;
    prn[r] = ok ? prev[jb * pl + c[r]] : 0.0f;
    vrn[r] = ok ? vel[jb * pl + c[r]] : 0.0f;
    drn[r] = (SPONGE && ok) ? damp[jb * pl + c[r]] : 0.0f;
    hx[r] = (hxv[r] && jb >= 0 && jb < n0) ? cur[jb * pl + c[r] + hxo] : 0.0f;
    pr[r] = vr[r] = dr[r] = 0.0f;
  }
  // y halo: the first RH rows of threads load the cell RH above their row 0, the last RH rows
  // the cell RH below their row RY-1.
  const int hyo = ty < RH ? -RH : (ty >= BY - RH ? RH : 0);
  const int hyr = hyo < 0 ? 0 : RY - 1;
  const int hyy = y0 + hyr * BY + hyo;
  const bool hyv = hyo != 0 && xin && hyy >= 0 && hyy < n1;
  const int hyc = hyy * rp + x;
  const int hys = (ty + hyr * BY + RH + hyo) * SW + tx + RH;
  float hy = (hyv && jb >= 0 && jb < n0) ? cur[jb * pl + hyc] : 0.0f;
  int buf = 0;
#pragma unroll 1
  for (int j = jb; j < ze + 4; ++j) {
    float* sc = smem + buf * (SH * SW);
    float* s0 = smem + 2 * SH * SW + buf * (TY * BX);
    const bool jn = j >= 0 && j < n0;
    const bool jn1 = j + 1 >= 0 && j + 1 < n0;
    const bool jn5 = j + 5 >= 0 && j + 5 < n0;
    const long long po = (long long)j * pl;
    // Phase A: this step's tiles (cur at plane j, level t+1 at plane j-4), next step's loads.
#pragma unroll
    for (int r = 0; r < RY; ++r) {
      const int si = (ty + r * BY + RH) * SW + tx + RH;
      sc[si] = qc[r][4];
      if (hxv[r]) sc[si + hxo] = hx[r];
      s0[(ty + r * BY) * BX + tx] = q0[r][4];
      pr[r] = prn[r];
      vr[r] = vrn[r];
      dr[r] = drn[r];
      qn[r] = (in[r] && jn5) ? cur[po + 5 * pl + c[r]] : 0.0f;
      if (in[r] && jn1) {
        prn[r] = prev[po + pl + c[r]];
        vrn[r] = vel[po + pl + c[r]];
        if (SPONGE) drn[r] = damp[po + pl + c[r]];
      }
      if (hxv[r] && jn1) hx[r] = cur[po + pl + c[r] + hxo];
    }
    if (hyv) sc[hys] = hy;
    if (hyv && jn1) hy = cur[po + pl + hyc];
    __syncthreads();
    const int p1 = j - 4;
    const bool l2 = p1 >= zb && p1 < ze;
    const bool r1 = p1 >= RH && p1 < n0 - RH;
    const bool r0 = j >= RH && j < n0 - RH;
#pragma unroll
    for (int r = 0; r < RY; ++r) {
      const float* S = sc + (ty + r * BY + RH) * SW + tx + RH;
      float v0 = 0.0f;
      if (in[r] && jn) {
        v0 = pr[r];
        if (rng[r] && r0) v0 = upd<SPONGE>(qc[r][4], pr[r], vr[r], dr[r], LAP(qc[r], S, SW));
      }
      q0[r][8] = v0;
      if (VELQ) {
#pragma unroll
        for (int s = 0; s < 4; ++s) { vq[r][s] = vq[r][s + 1]; dq[r][s] = dq[r][s + 1]; }
        vq[r][4] = vr[r];
        dq[r][4] = dr[r];
      }
      if (l2 && out[r]) {
        const float* T = s0 + (ty + r * BY) * BX + tx;
        float v1 = qc[r][0];
        if (rng[r] && r1) {
          float vv, ee = 0.0f;
          if (VELQ) { vv = vq[r][0]; ee = dq[r][0]; }
          else {
            vv = vel[po - 4 * pl + c[r]];
            if (SPONGE) ee = damp[po - 4 * pl + c[r]];
          }
          v1 = upd<SPONGE>(q0[r][4], qc[r][0], vv, ee, LAP(q0[r], T, BX));
        }
        ocur[po - 4 * pl + c[r]] = v1;
        oprev[po - 4 * pl + c[r]] = q0[r][4];
      }
#pragma unroll
      for (int s = 0; s < 8; ++s) { qc[r][s] = qc[r][s + 1]; q0[r][s] = q0[r][s + 1]; }
      qc[r][8] = qn[r];
    }
    buf ^= 1;
  }
}

// Lean single step: the generated staged kernel's scheme with 32-bit in-plane offsets and one
// 64-bit plane offset per step.
template <int BX, int BY, int RY, bool SPONGE, int MINB>
__global__ void __launch_bounds__(BX * BY, MINB)
step1(float* __restrict__ prev, const float* __restrict__ cur, const float* __restrict__ vel,
      const float* __restrict__ damp, int z0, int z1, int n0, int n1, int n2, int rp, int zseg,
      Co k) {
  constexpr int TY = BY * RY, SW = BX + 2 * RH, SH = TY + 2 * RH;
  __shared__ float Sc[2 * SH * SW];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x = blockIdx.x * BX + tx;
  const int y0 = blockIdx.y * TY + ty;
  const long long pl = (long long)n1 * rp;
  const int zb = z0 + blockIdx.z * zseg, ze = min(zb + zseg, z1);
  const bool xin = x < n2, xr = x >= RH && x < n2 - RH;
  const int hxo = tx < RH ? -RH : (tx >= BX - RH ? RH : 0);
  const bool hxin = hxo != 0 && x + hxo >= 0 && x + hxo < n2;
  int c[RY];
  bool in[RY], rng[RY], hxv[RY];
  float qc[RY][9], qn[RY], pr[RY], prn[RY], vr[RY], vrn[RY], dr[RY], drn[RY], hx[RY];
#pragma unroll
  for (int r = 0; r < RY; ++r) {
    const int y = y0 + r * BY;
    c[r] = y * rp + x;
    in[r] = xin && y < n1;
    rng[r] = in[r] && xr && y >= RH && y < n1 - RH;
    hxv[r] = hxin && y < n1;
#pragma unroll
    for (int s = 0; s < 9; ++s)
      qc[r][s] = (in[r] && zb < ze) ? cur[(zb - 4 + s) * pl + c[r]] : 0.0f;
    qn[r] = 0.0f;
    prn[r] = (in[r] && zb < ze) ? prev[zb * pl + c[r]] : 0.0f;
    vrn[r] = (in[r] && zb < ze) ? vel[zb * pl + c[r]] : 0.0f;
    drn[r] = (SPONGE && in[r] && zb < ze) ? damp[zb * pl + c[r]] : 0.0f;
    hx[r] = (hxv[r] && zb < ze) ? cur[zb * pl + c[r] + hxo] : 0.0f;
    pr[r] = vr[r] = dr[r] = 0.0f;
  }
  const int hyo = ty < RH ? -RH : (ty >= BY - RH ? RH : 0);
  const int hyr = hyo < 0 ? 0 : RY - 1;
  const int hyy = y0 + hyr * BY + hyo;
  const bool hyv = hyo != 0 && xin && hyy >= 0 && hyy < n1;
  const int hyc = hyy * rp + x;
  const int hys = (ty + hyr * BY + RH + hyo) * SW + tx + RH;
  float hy = (hyv && zb < ze) ? cur[zb * pl + hyc] : 0.0f;
  int buf = 0;
#pragma unroll 1
  for (int z = zb; z < ze; ++z) {
    float* sc = Sc + buf * (SH * SW);
    const long long po = (long long)z * pl;
    const bool more = z + 1 < ze;
#pragma unroll
    for (int r = 0; r < RY; ++r) {
      const int si = (ty + r * BY + RH) * SW + tx + RH;
      sc[si] = qc[r][4];
      if (hxv[r]) sc[si + hxo] = hx[r];
      pr[r] = prn[r];
      vr[r] = vrn[r];
      dr[r] = drn[r];
      if (in[r] && more) {
        qn[r] = cur[po + 5 * pl + c[r]];
        prn[r] = prev[po + pl + c[r]];
        vrn[r] = vel[po + pl + c[r]];
        if (SPONGE) drn[r] = damp[po + pl + c[r]];
      }
      if (hxv[r] && more) hx[r] = cur[po + pl + c[r] + hxo];
    }
    if (hyv) sc[hys] = hy;
    if (hyv && more) hy = cur[po + pl + hyc];
    __syncthreads();
#pragma unroll
    for (int r = 0; r < RY; ++r) {
      const float* S = sc + (ty + r * BY + RH) * SW + tx + RH;
      if (rng[r]) prev[po + c[r]] = upd<SPONGE>(qc[r][4], pr[r], vr[r], dr[r], LAP(qc[r], S, SW));
#pragma unroll
      for (int s = 0; s < 8; ++s) qc[r][s] = qc[r][s + 1];
      qc[r][8] = qn[r];
    }
    buf ^= 1;
  }
}


// ---------------------------------------------------------------------------------------------
// Vector forms: each thread computes 4 consecutive points along x, so every in-plane neighbour
// load from shared memory is a 16-byte load serving 4 points (x neighbours: the vectors left and
// right of the thread's own; y neighbours: the same columns in the rows above and below).
#define LD4(p) (*reinterpret_cast<const float4*>(p))
#define ST4(p, v) (*reinterpret_cast<float4*>(p) = (v))
__device__ __forceinline__ float at(const float4& v, int k) {
  return k == 0 ? v.x : (k == 1 ? v.y : (k == 2 ? v.z : v.w));
}
__device__ __forceinline__ void set(float4& v, int k, float f) {
  if (k == 0) v.x = f; else if (k == 1) v.y = f; else if (k == 2) v.z = f; else v.w = f;
}

// The 4 points of the thread's vector: z-queue Q (9 float4), in-plane neighbours from the shared
// tile at S (row stride SW; S points at the thread's vector). Distances run outermost, so only
// the two rows at distance d are live at a time; each point's sum keeps the generated order.
template <bool SPONGE>
__device__ __forceinline__ float4 upd4(const float4* Q, const float* S, int SW, float4 P, float4 V,
                                       float4 E, const Co& k, unsigned rng) {
  const float4 L = LD4(S - 4), R = LD4(S + 4), C = Q[4];
  const float a[12] = {L.x, L.y, L.z, L.w, C.x, C.y, C.z, C.w, R.x, R.y, R.z, R.w};
  const float cd[5] = {k.c0, k.c1, k.c2, k.c3, k.c4};
  float lap[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) lap[i] = 3.0f * k.c0 * a[4 + i];
#pragma unroll
  for (int d = 1; d <= 4; ++d) {
    const float4 ym = LD4(S - d * SW), yp = LD4(S + d * SW);
#pragma unroll
    for (int i = 0; i < 4; ++i)
      lap[i] = lap[i] + cd[d] * (at(Q[4 - d], i) + at(Q[4 + d], i) + at(ym, i) + at(yp, i) +
                                 a[4 + i - d] + a[4 + i + d]);
  }
  float4 out = P;
#pragma unroll
  for (int i = 0; i < 4; ++i)
    if (rng & (1u << i)) set(out, i, upd<SPONGE>(a[4 + i], at(P, i), at(V, i), at(E, i), lap[i]));
  return out;
}

// Which of the 4 points x .. x+3 of row y lie in the nest's in-plane ranges.
__device__ __forceinline__ unsigned range_mask(int x, int y, int n1, int n2) {
  unsigned m = 0;
  if (y < RH || y >= n1 - RH) return 0;
#pragma unroll
  for (int i = 0; i < 4; ++i)
    if (x + i >= RH && x + i < n2 - RH) m |= 1u << i;
  return m;
}

template <int BXT, int BY, bool SPONGE, int MINB, int UNR = 1>
__global__ void __launch_bounds__(BXT * BY, MINB)
step1v(float* __restrict__ prev, const float* __restrict__ cur, const float* __restrict__ vel,
       const float* __restrict__ damp, int z0, int z1, int n0, int n1, int n2, int rp, int zseg,
       Co k) {
  constexpr int TX = 4 * BXT, SW = TX + 2 * RH, SH = BY + 2 * RH;
  __shared__ __align__(16) float Sc[2 * SH * SW];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x = blockIdx.x * TX + 4 * tx, y = blockIdx.y * BY + ty;
  const long long pl = (long long)n1 * rp;
  const int zb = z0 + blockIdx.z * zseg, ze = min(zb + zseg, z1);
  const int c = y * rp + x;
  const bool in = x < n2 && y < n1;
  const unsigned rng = in ? range_mask(x, y, n1, n2) : 0u;
  // Halo vectors: the first and last thread of a row load the vector left / right of the
  // block's row; the first and last RH rows of threads the row RH above / below.
  const int hxo = tx == 0 ? -4 : (tx == BXT - 1 ? 4 : 0);
  const bool hxv = hxo != 0 && y < n1 && x + hxo >= 0 && x + hxo < n2;
  const int hyo = ty < RH ? -RH : (ty >= BY - RH ? RH : 0);
  const bool hyv = hyo != 0 && x < n2 && y + hyo >= 0 && y + hyo < n1;
  const int si = (ty + RH) * SW + RH + 4 * tx;
  const float4 z4 = make_float4(0, 0, 0, 0);
  float4 q[9], qn = z4, pr = z4, prn = z4, vr = z4, vrn = z4, dr = z4, drn = z4, hx = z4, hy = z4;
  if (in && zb < ze) {
#pragma unroll
    for (int s = 0; s < 9; ++s) q[s] = LD4(cur + (zb - 4 + s) * pl + c);
    prn = LD4(prev + zb * pl + c);
    vrn = LD4(vel + zb * pl + c);
    if (SPONGE) drn = LD4(damp + zb * pl + c);
  } else {
#pragma unroll
    for (int s = 0; s < 9; ++s) q[s] = z4;
  }
  if (hxv && zb < ze) hx = LD4(cur + zb * pl + c + hxo);
  if (hyv && zb < ze) hy = LD4(cur + zb * pl + c + hyo * rp);
  int buf = 0;
#pragma unroll UNR
  for (int z = zb; z < ze; ++z) {
    float* sc = Sc + buf * (SH * SW);
    const long long po = (long long)z * pl;
    const bool more = z + 1 < ze;
    ST4(sc + si, q[4]);
    if (hxv) ST4(sc + si + hxo, hx);
    if (hyv) ST4(sc + si + hyo * SW, hy);
    pr = prn; vr = vrn; dr = drn;
    if (in && more) {
      qn = LD4(cur + po + 5 * pl + c);
      prn = LD4(prev + po + pl + c);
      vrn = LD4(vel + po + pl + c);
      if (SPONGE) drn = LD4(damp + po + pl + c);
    }
    if (hxv && more) hx = LD4(cur + po + pl + c + hxo);
    if (hyv && more) hy = LD4(cur + po + pl + c + hyo * rp);
    __syncthreads();
    if (rng) ST4(prev + po + c, upd4<SPONGE>(q, sc + si, SW, pr, vr, dr, k, rng));
#pragma unroll
    for (int s = 0; s < 8; ++s) q[s] = q[s + 1];
    q[8] = qn;
    buf ^= 1;
  }
}

// Fused two steps, vector form: the block's BXT x BY threads cover a (4*BXT) x BY tile of
// level t+1 and write the inner (4*BXT - 8) x (BY - 8) tile of both levels.
template <int BXT, int BY, bool SPONGE, int MINB, int UNR = 1>
__global__ void __launch_bounds__(BXT * BY, MINB)
fused2v(const float* __restrict__ prev, const float* __restrict__ cur,
        const float* __restrict__ vel, const float* __restrict__ damp,
        float* __restrict__ oprev, float* __restrict__ ocur, int n0, int n1, int n2, int rp,
        int zseg, Co k) {
  constexpr int TX = 4 * BXT, SW = TX + 2 * RH, SH = BY + 2 * RH;
  extern __shared__ __align__(16) float smem[];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x = blockIdx.x * (TX - 8) - 4 + 4 * tx;
  const int y = blockIdx.y * (BY - 8) - 4 + ty;
  const long long pl = (long long)n1 * rp;
  const int zb = blockIdx.z * zseg, ze = min(zb + zseg, n0);
  const bool in = x >= 0 && x < n2 && y >= 0 && y < n1;
  const unsigned rng = in ? range_mask(x, y, n1, n2) : 0u;
  const bool out = in && tx >= 1 && tx < BXT - 1 && ty >= RH && ty < BY - RH;
  const int c = y * rp + x;
  const int hxo = tx == 0 ? -4 : (tx == BXT - 1 ? 4 : 0);
  const bool hxv = hxo != 0 && y >= 0 && y < n1 && x + hxo >= 0 && x + hxo < n2;
  const int hyo = ty < RH ? -RH : (ty >= BY - RH ? RH : 0);
  const bool hyv = hyo != 0 && x >= 0 && x < n2 && y + hyo >= 0 && y + hyo < n1;
  const int si = (ty + RH) * SW + RH + 4 * tx;
  const int ti = ty * TX + 4 * tx;
  const float4 z4 = make_float4(0, 0, 0, 0);
  float4 q[9], q0[9], qn = z4, pr = z4, prn = z4, vr = z4, vrn = z4, dr = z4, drn = z4, hx = z4,
         hy = z4;
  const int jb = zb - 4;
#pragma unroll
  for (int s = 0; s < 9; ++s) {
    const int p = jb - 4 + s;
    q[s] = (in && p >= 0 && p < n0) ? LD4(cur + p * pl + c) : z4;
    q0[s] = z4;
  }
  if (in && jb >= 0) {
    prn = LD4(prev + jb * pl + c);
    vrn = LD4(vel + jb * pl + c);
    if (SPONGE) drn = LD4(damp + jb * pl + c);
  }
  if (hxv && jb >= 0) hx = LD4(cur + jb * pl + c + hxo);
  if (hyv && jb >= 0) hy = LD4(cur + jb * pl + c + hyo * rp);
  int buf = 0;
#pragma unroll UNR
  for (int j = jb; j < ze + 4; ++j) {
    float* sc = smem + buf * (SH * SW);
    float* s0 = smem + 2 * SH * SW + buf * (BY * TX);
    const long long po = (long long)j * pl;
    const bool jn = j >= 0 && j < n0, jn1 = j + 1 >= 0 && j + 1 < n0, jn5 = j + 5 >= 0 && j + 5 < n0;
    ST4(sc + si, q[4]);
    if (hxv) ST4(sc + si + hxo, hx);
    if (hyv) ST4(sc + si + hyo * SW, hy);
    ST4(s0 + ti, q0[4]);
    pr = prn; vr = vrn; dr = drn;
    qn = (in && jn5) ? LD4(cur + po + 5 * pl + c) : z4;
    if (in && jn1) {
      prn = LD4(prev + po + pl + c);
      vrn = LD4(vel + po + pl + c);
      if (SPONGE) drn = LD4(damp + po + pl + c);
    }
    if (hxv && jn1) hx = LD4(cur + po + pl + c + hxo);
    if (hyv && jn1) hy = LD4(cur + po + pl + c + hyo * rp);
    __syncthreads();
    // Level t+1 at plane j.
    float4 v0 = z4;
    if (in && jn) {
      v0 = pr;
      if (rng && j >= RH && j < n0 - RH) v0 = upd4<SPONGE>(q, sc + si, SW, pr, vr, dr, k, rng);
    }
    q0[8] = v0;
    // Level t+2 at plane j - 4.
    const int p1 = j - 4;
    if (out && p1 >= zb && p1 < ze) {
      float4 v1 = q[0];
      if (rng && p1 >= RH && p1 < n0 - RH) {
        const float4 V = LD4(vel + po - 4 * pl + c);
        const float4 E = SPONGE ? LD4(damp + po - 4 * pl + c) : z4;
        v1 = upd4<SPONGE>(q0, s0 + ti, TX, q[0], V, E, k, rng);
      }
      ST4(ocur + po - 4 * pl + c, v1);
      ST4(oprev + po - 4 * pl + c, q0[4]);
    }
#pragma unroll
    for (int s = 0; s < 8; ++s) { q[s] = q[s + 1]; q0[s] = q0[s + 1]; }
    q[8] = qn;
    buf ^= 1;
  }
}

// ---------------------------------------------------------------------------------------------
static int nsm = 0;

struct Field {
  int n0, n1, n2, rp;
  size_t elems() const { return (size_t)n0 * n1 * rp; }
};

static std::vector<float> host_init(const Field& f, unsigned seed, float lo, float hi) {
  std::vector<float> h(f.elems(), 0.0f);
  unsigned s = seed;
  for (int z = 0; z < f.n0; ++z)
    for (int y = 0; y < f.n1; ++y)
      for (int x = 0; x < f.n2; ++x) {
        s = s * 1664525u + 1013904223u;
        h[((size_t)z * f.n1 + y) * f.rp + x] = lo + (hi - lo) * ((s >> 8) * (1.0f / 16777216.0f));
      }
  return h;
}

struct Arrays {
  float *p, *c, *v, *d, *p2, *c2;
};

static float elapsed(cudaEvent_t a, cudaEvent_t b) {
  float ms;
  CK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

static const Co K = {(float)(-205.0 / 72.0), 8.0f / 5.0f, -1.0f / 5.0f, 8.0f / 315.0f, -1.0f / 560.0f};

// Generated kernel: (z0, z1, own0, own1, base, n0, n1, n2, rp, t, seg, prev, cur, vel, [damp], c0..c4, dx2, wavelet)
typedef void (*GenFn)(long long, long long, long long, long long, long long, long long, long long,
                      long long, long long, long long, long long, float*, const float*,
                      const float*, float, float, float, float, float, float, const float*);
typedef void (*GenSpFn)(long long, long long, long long, long long, long long, long long,
                        long long, long long, long long, long long, long long, float*,
                        const float*, const float*, const float*, float, float, float, float,
                        float, float, const float*);

static int seg_for(int planes, long long blocks_xy, int resident) {
  // The segment count that fills whole waves best (the runtime's rule, simplified).
  int best = 1;
  double best_eff = 0;
  for (int s = 1; s <= 64 && s <= planes; ++s) {
    long long blocks = blocks_xy * s;
    long long waves = (blocks + resident - 1) / resident;
    double eff = (double)blocks / (waves * resident) / (1.0 + 8.0 * s / planes);
    if (eff > best_eff) { best_eff = eff; best = s; }
  }
  return (planes + best - 1) / best;
}

template <class F>
static int occupancy(F kern, int threads) {
  int b = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kern, threads, 0));
  return b;
}

template <class F>
static void attrs(const char* name, F kern) {
  cudaFuncAttributes a;
  CK(cudaFuncGetAttributes(&a, kern));
  printf("  %-28s regs %3d  smem %6zu B  local %zu B\n", name, a.numRegs, a.sharedSizeBytes,
         a.localSizeBytes);
}

struct Result {
  std::string name;
  double gpts;
  long long mismatches;
};

static std::vector<Result> results;

static long long compare(const Field& f, const float* a, const float* b) {
  std::vector<float> ha(f.elems()), hb(f.elems());
  CK(cudaMemcpy(ha.data(), a, f.elems() * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hb.data(), b, f.elems() * 4, cudaMemcpyDeviceToHost));
  long long bad = 0;
  for (int z = 0; z < f.n0; ++z)
    for (int y = 0; y < f.n1; ++y)
      for (int x = 0; x < f.n2; ++x) {
        size_t i = ((size_t)z * f.n1 + y) * f.rp + x;
        if (memcmp(&ha[i], &hb[i], 4) != 0) ++bad;
      }
  return bad;
}

template <bool SPONGE>
static void run_size(int n, int steps, const char* only) {
  Field f{n, n, n, ((n * 4 + 127) / 128) * 128 / 4};
  size_t bytes = f.elems() * 4;
  printf("\n== %s %d^3 (rp %d), %d steps\n", SPONGE ? "propagate_sponge" : "propagate", n, f.rp,
         steps);
  auto hp = host_init(f, 1, -1.0f, 1.0f), hc = host_init(f, 2, -1.0f, 1.0f);
  auto hv = host_init(f, 3, 0.02f, 0.1f), hd = host_init(f, 4, 0.0f, 0.05f);
  Arrays ref{}, cand{};
  float *dv, *dd;
  CK(cudaMalloc(&dv, bytes));
  CK(cudaMalloc(&dd, bytes));
  CK(cudaMemcpy(dv, hv.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dd, hd.data(), bytes, cudaMemcpyHostToDevice));
  float *P, *C, *P2, *C2, *RP, *RC;
  CK(cudaMalloc(&P, bytes));
  CK(cudaMalloc(&C, bytes));
  CK(cudaMalloc(&P2, bytes));
  CK(cudaMalloc(&C2, bytes));
  CK(cudaMalloc(&RP, bytes));
  CK(cudaMalloc(&RC, bytes));
  auto reset = [&]() {
    CK(cudaMemcpy(P, hp.data(), bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(C, hc.data(), bytes, cudaMemcpyHostToDevice));
    CK(cudaMemset(P2, 0, bytes));
    CK(cudaMemset(C2, 0, bytes));
  };
  double pts = (double)(n - 8) * (n - 8) * (n - 8) * steps;
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  bool have_ref = false;
  auto measure = [&](const std::string& name, auto&& launch_steps, bool pingpong) {
    if (only && !strstr(name.c_str(), only) && name.rfind("gen ry=1", 0) != 0) return;
    // correctness run
    reset();
    float *a = P, *b = C, *a2 = P2, *b2 = C2;
    launch_steps(a, b, a2, b2);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    long long bad = -1;
    if (!have_ref) {
      CK(cudaMemcpy(RP, a, bytes, cudaMemcpyDeviceToDevice));
      CK(cudaMemcpy(RC, b, bytes, cudaMemcpyDeviceToDevice));
      have_ref = true;
      bad = 0;
    } else {
      bad = compare(f, RP, a) + compare(f, RC, b);
    }
    // timing: three repetitions, the median
    std::vector<float> t;
    for (int rep = 0; rep < 3; ++rep) {
      reset();
      a = P; b = C; a2 = P2; b2 = C2;
      CK(cudaEventRecord(e0));
      launch_steps(a, b, a2, b2);
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      t.push_back(elapsed(e0, e1));
    }
    std::sort(t.begin(), t.end());
    double g = pts / (t[1] * 1e-3) / 1e9;
    printf("  %-34s %8.2f ms  %7.1f Gpt/s  differ %lld\n", name.c_str(), t[1], g, bad);
    results.push_back({std::string(SPONGE ? "sponge " : "propagate ") + std::to_string(n) + " " + name, g, bad});
    (void)pingpong;
  };

  // generated kernels (single step, marching)
  auto gen = [&](const char* name, auto fn, int bx, int by, int ry) {
    measure(name, [&](float*& a, float*& b, float*&, float*&) {
      int z0 = 4, z1 = n - 4;
      long long bxy = (long long)((n + bx - 1) / bx) * ((n + by * ry - 1) / (by * ry));
      int res = occupancy(fn, bx * by) * nsm;
      int seg = seg_for(z1 - z0, bxy, res);
      dim3 grid((n + bx - 1) / bx, (n + by * ry - 1) / (by * ry), (z1 - z0 + seg - 1) / seg);
      for (int s = 0; s < steps; ++s) {
        if constexpr (SPONGE)
          fn<<<grid, dim3(bx, by)>>>(z0, z1, z0, z1, 0, n, n, n, f.rp, s, seg, a, b, dv, dd, K.c0,
                                     K.c1, K.c2, K.c3, K.c4, 1.0f, dv);
        else
          fn<<<grid, dim3(bx, by)>>>(z0, z1, z0, z1, 0, n, n, n, f.rp, s, seg, a, b, dv, K.c0,
                                     K.c1, K.c2, K.c3, K.c4, 1.0f, dv);
        std::swap(a, b);
      }
    }, false);
  };
  if constexpr (SPONGE) {
    gen("gen ry=1 (staged default)", gen_sp_ry1, 64, 8, 1);
    gen("gen ry=4", gen_sp_ry4, 64, 8, 4);
  } else {
    gen("gen ry=1 (staged default)", gen_pr_ry1, 64, 8, 1);
    gen("gen ry=4", gen_pr_ry4, 64, 8, 4);
  }

  auto lean = [&](const char* name, auto fn, int bx, int by, int ry) {
    measure(name, [&](float*& a, float*& b, float*&, float*&) {
      int z0 = 4, z1 = n - 4;
      long long bxy = (long long)((n + bx - 1) / bx) * ((n + by * ry - 1) / (by * ry));
      int res = occupancy(fn, bx * by) * nsm;
      int seg = seg_for(z1 - z0, bxy, res);
      dim3 grid((n + bx - 1) / bx, (n + by * ry - 1) / (by * ry), (z1 - z0 + seg - 1) / seg);
      for (int s = 0; s < steps; ++s) {
        fn<<<grid, dim3(bx, by)>>>(a, b, dv, dd, z0, z1, n, n, n, f.rp, seg, K);
        std::swap(a, b);
      }
    }, false);
  };
  lean("lean step ry=4 64x8", step1<64, 8, 4, SPONGE, 1>, 64, 8, 4);
  auto vecstep = [&](const char* name, auto fn, int bxt, int by) {
    measure(name, [&](float*& a, float*& b, float*&, float*&) {
      int z0 = 4, z1 = n - 4, tx = 4 * bxt;
      long long bxy = (long long)((n + tx - 1) / tx) * ((n + by - 1) / by);
      int res = occupancy(fn, bxt * by) * nsm;
      int seg = seg_for(z1 - z0, bxy, res);
      dim3 grid((n + tx - 1) / tx, (n + by - 1) / by, (z1 - z0 + seg - 1) / seg);
      for (int s = 0; s < steps; ++s) {
        fn<<<grid, dim3(bxt, by)>>>(a, b, dv, dd, z0, z1, n, n, n, f.rp, seg, K);
        std::swap(a, b);
      }
    }, false);
  };
  vecstep("vec step 16x16", step1v<16, 16, SPONGE, 1>, 16, 16);
  vecstep("vec step 16x16 minb2", step1v<16, 16, SPONGE, 2>, 16, 16);
  vecstep("vec step 16x16 unr3", step1v<16, 16, SPONGE, 1, 3>, 16, 16);
  vecstep("vec step 16x16 unr9", step1v<16, 16, SPONGE, 1, 9>, 16, 16);
  vecstep("vec step 16x32", step1v<16, 32, SPONGE, 1>, 16, 32);
  vecstep("vec step 32x8", step1v<32, 8, SPONGE, 2>, 32, 8);
  vecstep("vec step 32x16", step1v<32, 16, SPONGE, 1>, 32, 16);
  vecstep("vec step 8x32", step1v<8, 32, SPONGE, 2>, 8, 32);
  auto vecfused = [&](const char* name, auto fn, int bxt, int by) {
    measure(name, [&](float*& a, float*& b, float*& a2, float*& b2) {
      int ox = 4 * bxt - 8, oy = by - 8;
      long long bxy = (long long)((n + ox - 1) / ox) * ((n + oy - 1) / oy);
      size_t sm = (size_t)(2 * (by + 8) * (4 * bxt + 8) + 2 * by * 4 * bxt) * 4;
      CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm));
      int nb = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, fn, bxt * by, sm));
      int seg = seg_for(n, bxy, nb * nsm);
      dim3 grid((n + ox - 1) / ox, (n + oy - 1) / oy, (n + seg - 1) / seg);
      for (int s = 0; s < steps; s += 2) {
        fn<<<grid, dim3(bxt, by), sm>>>(a, b, dv, dd, a2, b2, n, n, n, f.rp, seg, K);
        std::swap(a, a2);
        std::swap(b, b2);
      }
    }, true);
  };
  vecfused("vec fused2 16x32", fused2v<16, 32, SPONGE, 1>, 16, 32);
  vecfused("vec fused2 16x32 unr3", fused2v<16, 32, SPONGE, 1, 3>, 16, 32);
  vecfused("vec fused2 16x24 unr3", fused2v<16, 24, SPONGE, 1, 3>, 16, 24);
  vecfused("vec fused2 16x32 unr9", fused2v<16, 32, SPONGE, 1, 9>, 16, 32);
  vecfused("vec fused2 8x64", fused2v<8, 64, SPONGE, 1>, 8, 64);
  vecfused("vec fused2 32x16", fused2v<32, 16, SPONGE, 1>, 32, 16);
  vecfused("vec fused2 16x16 minb2", fused2v<16, 16, SPONGE, 2>, 16, 16);
  vecfused("vec fused2 16x24", fused2v<16, 24, SPONGE, 1>, 16, 24);

  auto fused = [&](const char* name, auto fn, int bx, int by, int ry) {
    measure(name, [&](float*& a, float*& b, float*& a2, float*& b2) {
      int ox = bx - 8, oy = by * ry - 8;
      long long bxy = (long long)((n + ox - 1) / ox) * ((n + oy - 1) / oy);
      size_t sm = (size_t)(2 * (by * ry + 8) * (bx + 8) + 2 * by * ry * bx) * 4;
      CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm));
      int nb = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, fn, bx * by, sm));
      int res = nb * nsm;
      int seg = seg_for(n, bxy, res);
      static bool said = false;
      if (!said) { said = true; }
      
      dim3 grid((n + ox - 1) / ox, (n + oy - 1) / oy, (n + seg - 1) / seg);
      for (int s = 0; s < steps; s += 2) {
        fn<<<grid, dim3(bx, by), sm>>>(a, b, dv, dd, a2, b2, n, n, n, f.rp, seg, K);
        std::swap(a, a2);
        std::swap(b, b2);
      }
    }, true);
  };
  fused("fused2 64x8 ry=4", fused2<64, 8, 4, SPONGE, 1, 0>, 64, 8, 4);
  CK(cudaFree(P)); CK(cudaFree(C)); CK(cudaFree(P2)); CK(cudaFree(C2));
  CK(cudaFree(RP)); CK(cudaFree(RC)); CK(cudaFree(dv)); CK(cudaFree(dd));
}

int main(int argc, char** argv) {
  const char* only = getenv("ONLY");
  int steps = argc > 1 ? atoi(argv[1]) : 20;
  CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s, %d SMs\n", prop.name, nsm);
  printf("kernel resources:\n");
  attrs("gen ry=1", gen_pr_ry1);
  attrs("gen ry=4", gen_pr_ry4);
  attrs("lean ry=4", step1<64, 8, 4, false, 1>);
  attrs("fused2 64x8 ry=4", fused2<64, 8, 4, false, 1, 0>);
  attrs("vec step 16x16", step1v<16, 16, false, 1>);
  attrs("vec step 16x16 sponge", step1v<16, 16, true, 1>);
  attrs("vec fused2 16x32", fused2v<16, 32, false, 1>);
  attrs("vec fused2 16x32 sponge", fused2v<16, 32, true, 1>);
  for (int i = 2; i < argc; ++i) {
    int n = atoi(argv[i] + 1);
    if (argv[i][0] == 'p') run_size<false>(n, steps, only);
    else run_size<true>(n, steps, only);
  }
  printf("\nsummary (Gpt/s per step, differ = values not bit-identical to gen ry=1):\n");
  for (auto& r : results) printf("  %-50s %7.1f  %lld\n", r.name.c_str(), r.gpts, r.mismatches);
  return 0;
}
