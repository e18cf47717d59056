extern "C" __global__ void __launch_bounds__(PACC_BX * PACC_BY, PACC_MINB) pacc_propagate_k0(
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
    float pacc_q1_m4 = (float)0, pacc_q1_m3 = (float)0, pacc_q1_m2 = (float)0, pacc_q1_m1 = (float)0, pacc_q1_0 = (float)0, pacc_q1_p1 = (float)0, pacc_q1_p2 = (float)0, pacc_q1_p3 = (float)0, pacc_q1_p4 = (float)0, pacc_next1 = (float)0;
    if (pacc_in && pacc_zb < pacc_ze) {
        pacc_q1_m4 = cur[(pacc_zb - pacc_base + (-4)) * pacc_pl + pacc_c];
        pacc_q1_m3 = cur[(pacc_zb - pacc_base + (-3)) * pacc_pl + pacc_c];
        pacc_q1_m2 = cur[(pacc_zb - pacc_base + (-2)) * pacc_pl + pacc_c];
        pacc_q1_m1 = cur[(pacc_zb - pacc_base + (-1)) * pacc_pl + pacc_c];
        pacc_q1_0 = cur[(pacc_zb - pacc_base + (0)) * pacc_pl + pacc_c];
        pacc_q1_p1 = cur[(pacc_zb - pacc_base + (1)) * pacc_pl + pacc_c];
        pacc_q1_p2 = cur[(pacc_zb - pacc_base + (2)) * pacc_pl + pacc_c];
        pacc_q1_p3 = cur[(pacc_zb - pacc_base + (3)) * pacc_pl + pacc_c];
        pacc_next1 = cur[(pacc_zb - pacc_base + (4)) * pacc_pl + pacc_c];
    }
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
    #pragma unroll 2
    for (long long z = pacc_zb; z < pacc_ze; ++z) {
        const long long pacc_at = (z - pacc_base) * pacc_pl + pacc_c;
        pacc_q1_p4 = pacc_next1;
        if (pacc_in && z + 1 < pacc_ze) pacc_next1 = cur[pacc_at + (5) * pacc_pl];
        pacc_r0 = pacc_rn0;
        if (pacc_in && z + 1 < pacc_ze) pacc_rn0 = prev[pacc_at + pacc_pl];
        pacc_r2 = pacc_rn2;
        if (pacc_in && z + 1 < pacc_ze) pacc_rn2 = vel[pacc_at + pacc_pl];
#if PACC_PREFETCH > 0
        if (pacc_in && z + 1 + PACC_PREFETCH < pacc_ze) {
            asm volatile("prefetch.global.L2 [%0];" :: "l"(cur + pacc_at + (5 + PACC_PREFETCH) * pacc_pl));
            asm volatile("prefetch.global.L2 [%0];" :: "l"(prev + pacc_at + (1 + PACC_PREFETCH) * pacc_pl));
            asm volatile("prefetch.global.L2 [%0];" :: "l"(vel + pacc_at + (1 + PACC_PREFETCH) * pacc_pl));
        }
#endif
        if (pacc_in) pacc_sm1[pacc_so1_0 + pacc_si1] = pacc_q1_0;
        if (pacc_hxv1) pacc_sm1[pacc_so1_0 + pacc_si1 + pacc_hxo1] = pacc_hx1;
        if (pacc_hyv1) pacc_sm1[pacc_so1_0 + pacc_si1 + pacc_hyo1 * pacc_sw1] = pacc_hy1;
        if (z + 1 < pacc_ze) {
            if (pacc_hxv1) pacc_hx1 = cur[pacc_at + (1) * pacc_pl + pacc_hxo1];
            if (pacc_hyv1) pacc_hy1 = cur[pacc_at + (1) * pacc_pl + pacc_hyo1 * pacc_n2];
        }
        __syncthreads();
        if (pacc_xy) {
            float u = pacc_q1_0;
            float lap = 3.0f * c0 * u + c1 * (pacc_q1_m1 + pacc_q1_p1 + pacc_sm1[pacc_so1_0 + pacc_si1 + (-1) * pacc_sw1] + pacc_sm1[pacc_so1_0 + pacc_si1 + (1) * pacc_sw1] + pacc_sm1[pacc_so1_0 + pacc_si1 + (-1)] + pacc_sm1[pacc_so1_0 + pacc_si1 + (1)]) + c2 * (pacc_q1_m2 + pacc_q1_p2 + pacc_sm1[pacc_so1_0 + pacc_si1 + (-2) * pacc_sw1] + pacc_sm1[pacc_so1_0 + pacc_si1 + (2) * pacc_sw1] + pacc_sm1[pacc_so1_0 + pacc_si1 + (-2)] + pacc_sm1[pacc_so1_0 + pacc_si1 + (2)]) + c3 * (pacc_q1_m3 + pacc_q1_p3 + pacc_sm1[pacc_so1_0 + pacc_si1 + (-3) * pacc_sw1] + pacc_sm1[pacc_so1_0 + pacc_si1 + (3) * pacc_sw1] + pacc_sm1[pacc_so1_0 + pacc_si1 + (-3)] + pacc_sm1[pacc_so1_0 + pacc_si1 + (3)]) + c4 * (pacc_q1_m4 + pacc_q1_p4 + pacc_sm1[pacc_so1_0 + pacc_si1 + (-4) * pacc_sw1] + pacc_sm1[pacc_so1_0 + pacc_si1 + (4) * pacc_sw1] + pacc_sm1[pacc_so1_0 + pacc_si1 + (-4)] + pacc_sm1[pacc_so1_0 + pacc_si1 + (4)]);
            prev[pacc_at] = 2.0f * u - pacc_r0 + pacc_r2 * lap;
        }
        pacc_q1_m4 = pacc_q1_m3;
        pacc_q1_m3 = pacc_q1_m2;
        pacc_q1_m2 = pacc_q1_m1;
        pacc_q1_m1 = pacc_q1_0;
        pacc_q1_0 = pacc_q1_p1;
        pacc_q1_p1 = pacc_q1_p2;
        pacc_q1_p2 = pacc_q1_p3;
        pacc_q1_p3 = pacc_q1_p4;
        { const int pacc_o = pacc_so1_0; pacc_so1_0 = pacc_so1_1; pacc_so1_1 = pacc_o; }
    }
}
