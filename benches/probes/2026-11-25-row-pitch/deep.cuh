extern "C" __global__ void __launch_bounds__(PACC_BX * PACC_BY, PACC_MINB) pacc_propagate_k0_deep(
    long long pacc_z0,
    long long pacc_z1,
    long long pacc_own0,
    long long pacc_own1,
    long long pacc_base,
    long long pacc_n0,
    long long pacc_n1,
    long long pacc_n2,
    long long pacc_t,
    long long pacc_seg,
    float* __restrict__ prev,
    const float* __restrict__ cur,
    const float* __restrict__ vel,
    float c0,
    float c1,
    float c2,
    float c3,
    float c4,
    float dx2,
    const float* wavelet)
{
    const int pacc_tx = threadIdx.x;
    const int pacc_ty = threadIdx.y;
    const long long x = (long long)blockIdx.x * PACC_BX + pacc_tx;
    const long long y = (long long)blockIdx.y * PACC_BY + pacc_ty;
    const long long pacc_zb = pacc_z0 + (long long)blockIdx.z * pacc_seg;
    const long long pacc_ze = pacc_zb + pacc_seg < pacc_z1 ? pacc_zb + pacc_seg : pacc_z1;
    const long long pacc_pl = pacc_n1 * pacc_n2;
    const long long pacc_c = y * pacc_n2 + x;
    const bool pacc_in = x < pacc_n2 && y < pacc_n1;
    const bool pacc_xy = pacc_in && y >= 4 && y < pacc_n1 - 4 && x >= 4 && x < pacc_n2 - 4;
    // Column planes z-4 ..= z+4 of `cur`, private to the thread, in a mirrored ring of shared memory.
    __shared__ float pacc_col[2 * 9 * PACC_BX * PACC_BY];
    const int pacc_tid = pacc_ty * PACC_BX + pacc_tx;
    float* const pacc_cc = pacc_col + pacc_tid;
    float pacc_next1 = (float)0;
    if (pacc_in && pacc_zb < pacc_ze) {
        #pragma unroll
        for (int j = 0; j < 8; ++j) { const float v = cur[(pacc_zb - pacc_base + (j - 4)) * pacc_pl + pacc_c]; pacc_cc[j * PACC_BX * PACC_BY] = v; pacc_cc[(j + 9) * PACC_BX * PACC_BY] = v; }
        pacc_next1 = cur[(pacc_zb - pacc_base + (4)) * pacc_pl + pacc_c];
    }
    int pacc_cb = 0;
    float pacc_r0 = (float)0, pacc_rn0 = (float)0;
    if (pacc_in && pacc_zb < pacc_ze) pacc_rn0 = prev[(pacc_zb - pacc_base) * pacc_pl + pacc_c];
    float pacc_r2 = (float)0, pacc_rn2 = (float)0;
    if (pacc_in && pacc_zb < pacc_ze) pacc_rn2 = vel[(pacc_zb - pacc_base) * pacc_pl + pacc_c];
    // `cur` in shared memory: a ring of 2 tiles (planes z ..= z and the next).
    __shared__ float pacc_sm1[2 * (PACC_BX + 8) * (PACC_BY + 8)];
    const int pacc_sw1 = (PACC_BX + 8);
    const int pacc_si1 = (pacc_ty + 4) * pacc_sw1 + pacc_tx + 4;
    int pacc_so1_0 = 0 * (PACC_BX + 8) * (PACC_BY + 8), pacc_so1_1 = 1 * (PACC_BX + 8) * (PACC_BY + 8);
    // The x-halo cell this thread loads (offset 0: none).
    const int pacc_hxo1 = pacc_tx < 4 ? -4 : (pacc_tx >= PACC_BX - 4 ? 4 : 0);
    const bool pacc_hxv1 = pacc_hxo1 != 0 && y < pacc_n1 && x + pacc_hxo1 >= 0 && x + pacc_hxo1 < pacc_n2;
    float pacc_hx1 = (float)0;
    // The y-halo cell this thread loads (offset 0: none).
    const int pacc_hyo1 = pacc_ty < 4 ? -4 : (pacc_ty >= PACC_BY - 4 ? 4 : 0);
    const bool pacc_hyv1 = pacc_hyo1 != 0 && x < pacc_n2 && y + pacc_hyo1 >= 0 && y + pacc_hyo1 < pacc_n1;
    float pacc_hy1 = (float)0;
    float pacc_hc1 = (float)0;
    if (pacc_zb < pacc_ze) {
        if (pacc_hxv1) pacc_hx1 = cur[(pacc_zb - pacc_base + (0)) * pacc_pl + pacc_c + pacc_hxo1];
        if (pacc_hyv1) pacc_hy1 = cur[(pacc_zb - pacc_base + (0)) * pacc_pl + pacc_c + pacc_hyo1 * pacc_n2];
    }
    const long long pacc_a0 = (pacc_zb - pacc_base) * pacc_pl + pacc_c;
    const float* __restrict__ pacc_gn1 = cur + pacc_a0 + 5 * pacc_pl;
    const float* __restrict__ pacc_g0 = prev + pacc_a0 + pacc_pl;
    const float* __restrict__ pacc_g2 = vel + pacc_a0 + pacc_pl;
    const float* __restrict__ pacc_ghx = cur + pacc_a0 + pacc_pl + pacc_hxo1;
    const float* __restrict__ pacc_ghy = cur + pacc_a0 + pacc_pl + pacc_hyo1 * pacc_n2;
    float* __restrict__ pacc_w0 = prev + pacc_a0;
    float* const pacc_t1 = pacc_sm1 + pacc_si1;
    const int pacc_nz = (int)(pacc_ze - pacc_zb);
    #pragma unroll 2
    for (int pacc_k = 0; pacc_k < pacc_nz; ++pacc_k) {
        const bool pacc_more = pacc_k + 1 < pacc_nz;
        {
            const int w = pacc_cb + 8 >= 9 ? pacc_cb - 1 : pacc_cb + 8;
            pacc_cc[w * PACC_BX * PACC_BY] = pacc_next1;
            pacc_cc[(w + 9) * PACC_BX * PACC_BY] = pacc_next1;
        }
        if (pacc_in && pacc_more) pacc_next1 = *pacc_gn1;
        const float* const pacc_q = pacc_cc + pacc_cb * PACC_BX * PACC_BY;
#define Q(j) pacc_q[(j + 4) * PACC_BX * PACC_BY]
        pacc_r0 = pacc_rn0;
        if (pacc_in && pacc_more) pacc_rn0 = *pacc_g0;
        pacc_r2 = pacc_rn2;
        if (pacc_in && pacc_more) pacc_rn2 = *pacc_g2;
        float* const pacc_s = pacc_t1 + pacc_so1_0;
        if (pacc_in) pacc_s[0] = Q(0);
        if (pacc_hxv1) pacc_s[pacc_hxo1] = pacc_hx1;
        if (pacc_hyv1) pacc_s[pacc_hyo1 * pacc_sw1] = pacc_hy1;
        if (pacc_more) {
            if (pacc_hxv1) pacc_hx1 = *pacc_ghx;
            if (pacc_hyv1) pacc_hy1 = *pacc_ghy;
        }
        pacc_gn1 += pacc_pl; pacc_g0 += pacc_pl; pacc_g2 += pacc_pl; pacc_ghx += pacc_pl; pacc_ghy += pacc_pl;
        __syncthreads();
        if (pacc_xy) {
            float u = Q(0);
            float lap = 3.0f * c0 * u + c1 * (Q(-1) + Q(1) + pacc_s[(-1) * pacc_sw1] + pacc_s[(1) * pacc_sw1] + pacc_s[(-1)] + pacc_s[(1)]) + c2 * (Q(-2) + Q(2) + pacc_s[(-2) * pacc_sw1] + pacc_s[(2) * pacc_sw1] + pacc_s[(-2)] + pacc_s[(2)]) + c3 * (Q(-3) + Q(3) + pacc_s[(-3) * pacc_sw1] + pacc_s[(3) * pacc_sw1] + pacc_s[(-3)] + pacc_s[(3)]) + c4 * (Q(-4) + Q(4) + pacc_s[(-4) * pacc_sw1] + pacc_s[(4) * pacc_sw1] + pacc_s[(-4)] + pacc_s[(4)]);
            *pacc_w0 = 2.0f * u - pacc_r0 + pacc_r2 * lap;
        }
        pacc_w0 += pacc_pl;
        pacc_cb = pacc_cb + 1 == 9 ? 0 : pacc_cb + 1;
        { const int pacc_o = pacc_so1_0; pacc_so1_0 = pacc_so1_1; pacc_so1_1 = pacc_o; }
    }
#undef Q
}
