// Several rows per thread: thread (tx, ty) computes rows ty, ty + BY, ... of a BY*RY-row tile.
extern "C" __global__ void __launch_bounds__(PACC_BX * PACC_BY, PACC_MINB) pacc_propagate_k0_rows(
    long long pacc_z0, long long pacc_z1, long long pacc_own0, long long pacc_own1, long long pacc_base,
    long long pacc_n0, long long pacc_n1, long long pacc_n2, long long pacc_t, long long pacc_seg,
    float* __restrict__ prev, const float* __restrict__ cur, const float* __restrict__ vel,
    float c0, float c1, float c2, float c3, float c4, float dx2, const float* wavelet)
{
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long long x = (long long)blockIdx.x * PACC_BX + tx;
    const long long ybase = (long long)blockIdx.y * (PACC_BY * RY);
    const long long zb = pacc_z0 + (long long)blockIdx.z * pacc_seg;
    const long long ze = zb + pacc_seg < pacc_z1 ? zb + pacc_seg : pacc_z1;
    const long long pl = pacc_n1 * pacc_n2;
    const int TW = PACC_BX + 8;
    const int TA = (PACC_BX + 8) * (PACC_BY * RY + 8);
    __shared__ float sm[2 * (PACC_BX + 8) * (PACC_BY * RY + 8)];
    int so0 = 0, so1 = TA;
    float q[RY][9], nxt[RY], r0[RY], rn0[RY], r2[RY], rn2[RY], hx[RY];
    bool in[RY], xy[RY], hxv[RY];
    long long c[RY];
    int si[RY];
    const int hxo = tx < 4 ? -4 : (tx >= PACC_BX - 4 ? 4 : 0);
#pragma unroll
    for (int r = 0; r < RY; ++r) {
        const long long y = ybase + ty + r * PACC_BY;
        c[r] = y * pacc_n2 + x;
        in[r] = x < pacc_n2 && y < pacc_n1;
        xy[r] = in[r] && y >= 4 && y < pacc_n1 - 4 && x >= 4 && x < pacc_n2 - 4;
        si[r] = (ty + r * PACC_BY + 4) * TW + tx + 4;
        hxv[r] = hxo != 0 && y < pacc_n1 && x + hxo >= 0 && x + hxo < pacc_n2;
        hx[r] = 0.0f; nxt[r] = 0.0f; r0[r] = rn0[r] = r2[r] = rn2[r] = 0.0f;
#pragma unroll
        for (int j = 0; j < 9; ++j) q[r][j] = 0.0f;
        if (in[r] && zb < ze) {
#pragma unroll
            for (int j = 0; j < 8; ++j) q[r][j] = cur[(zb - pacc_base + (j - 4)) * pl + c[r]];
            nxt[r] = cur[(zb - pacc_base + 4) * pl + c[r]];
            rn0[r] = prev[(zb - pacc_base) * pl + c[r]];
            rn2[r] = vel[(zb - pacc_base) * pl + c[r]];
        }
        if (hxv[r] && zb < ze) hx[r] = cur[(zb - pacc_base) * pl + c[r] + hxo];
    }
    // The y-halo cell: rows above the tile for ty < 4, below it for ty >= BY - 4.
    const bool top = ty < 4, bottom = ty >= PACC_BY - 4;
    const long long yh = top ? ybase + ty - 4 : ybase + (RY - 1) * PACC_BY + ty + 4;
    const bool hyv = (top || bottom) && x < pacc_n2 && yh >= 0 && yh < pacc_n1;
    const int hsi = (top ? ty : (RY - 1) * PACC_BY + ty + 8) * TW + tx + 4;
    const long long hyc = yh * pacc_n2 + x;
    float hy = 0.0f;
    if (hyv && zb < ze) hy = cur[(zb - pacc_base) * pl + hyc];
#pragma unroll 2
    for (long long z = zb; z < ze; ++z) {
        const long long zo = (z - pacc_base) * pl;
        const bool more = z + 1 < ze;
#pragma unroll
        for (int r = 0; r < RY; ++r) {
            q[r][8] = nxt[r];
            if (in[r] && more) nxt[r] = cur[zo + c[r] + 5 * pl];
            r0[r] = rn0[r];
            if (in[r] && more) rn0[r] = prev[zo + c[r] + pl];
            r2[r] = rn2[r];
            if (in[r] && more) rn2[r] = vel[zo + c[r] + pl];
            if (in[r]) sm[so0 + si[r]] = q[r][4];
            if (hxv[r]) sm[so0 + si[r] + hxo] = hx[r];
        }
        if (hyv) sm[so0 + hsi] = hy;
        if (more) {
#pragma unroll
            for (int r = 0; r < RY; ++r) if (hxv[r]) hx[r] = cur[zo + pl + c[r] + hxo];
            if (hyv) hy = cur[zo + pl + hyc];
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < RY; ++r) {
            if (xy[r]) {
                const float* s = sm + so0 + si[r];
                float u = q[r][4];
                float lap = 3.0f * c0 * u + c1 * (q[r][3] + q[r][5] + s[-1 * TW] + s[1 * TW] + s[-1] + s[1]) + c2 * (q[r][2] + q[r][6] + s[-2 * TW] + s[2 * TW] + s[-2] + s[2]) + c3 * (q[r][1] + q[r][7] + s[-3 * TW] + s[3 * TW] + s[-3] + s[3]) + c4 * (q[r][0] + q[r][8] + s[-4 * TW] + s[4 * TW] + s[-4] + s[4]);
                prev[zo + c[r]] = 2.0f * u - r0[r] + r2[r] * lap;
            }
#pragma unroll
            for (int j = 0; j < 8; ++j) q[r][j] = q[r][j + 1];
        }
        { const int o = so0; so0 = so1; so1 = o; }
    }
}
