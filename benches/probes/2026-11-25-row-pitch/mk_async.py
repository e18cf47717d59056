import re,sys
src=open('probe/staged.cuh').read()
src=src.replace('pacc_propagate_k0(','pacc_propagate_k0_async(',1)
# loads in the loop: (guard, dest, address expression relative to pacc_at)
loads=[
 ('pacc_in && z + 1 < pacc_ze','pacc_next1','cur','pacc_at + (5) * pacc_pl'),
 ('pacc_in && z + 1 < pacc_ze','pacc_rn0','prev','pacc_at + pacc_pl'),
 ('pacc_in && z + 1 < pacc_ze','pacc_rn2','vel','pacc_at + pacc_pl'),
 ('pacc_hxv1 && z + 1 < pacc_ze','pacc_hx1','cur','pacc_at + (1) * pacc_pl + pacc_hxo1'),
 ('pacc_hyv1 && z + 1 < pacc_ze','pacc_hy1','cur','pacc_at + (1) * pacc_pl + pacc_hyo1 * pacc_n2'),
]
# remove original loads
src=src.replace("        if (pacc_in && z + 1 < pacc_ze) pacc_next1 = cur[pacc_at + (5) * pacc_pl];\n","        if (pacc_in && z + 1 < pacc_ze) pacc_next1 = pacc_ff[0 * PACC_FS + pacc_rs];\n")
src=src.replace("        if (pacc_in && z + 1 < pacc_ze) pacc_rn0 = prev[pacc_at + pacc_pl];\n","        if (pacc_in && z + 1 < pacc_ze) pacc_rn0 = pacc_ff[1 * PACC_FS + pacc_rs];\n")
src=src.replace("        if (pacc_in && z + 1 < pacc_ze) pacc_rn2 = vel[pacc_at + pacc_pl];\n","        if (pacc_in && z + 1 < pacc_ze) pacc_rn2 = pacc_ff[2 * PACC_FS + pacc_rs];\n")
src=src.replace("""        if (z + 1 < pacc_ze) {
            if (pacc_hxv1) pacc_hx1 = cur[pacc_at + (1) * pacc_pl + pacc_hxo1];
            if (pacc_hyv1) pacc_hy1 = cur[pacc_at + (1) * pacc_pl + pacc_hyo1 * pacc_n2];
        }
""","""        if (z + 1 < pacc_ze) {
            if (pacc_hxv1) pacc_hx1 = pacc_ff[3 * PACC_FS + pacc_rs];
            if (pacc_hyv1) pacc_hy1 = pacc_ff[4 * PACC_FS + pacc_rs];
        }
""")
def issue(zexpr, ind):
    # issue the loads of step zexpr (relative to pacc_at at that step) into slot pacc_ws
    out=[]
    for i,(g,d,arr,addr) in enumerate(loads):
        gg=g.replace('z + 1', f'{zexpr} + 1')
        a=addr.replace('pacc_at', f'(({zexpr}) - pacc_base) * pacc_pl + pacc_c')
        out.append(f"{ind}if ({gg}) pacc_cp4(&pacc_ff[{i} * PACC_FS + pacc_ws], {arr} + {a});")
    out.append(f"{ind}asm volatile(\"cp.async.commit_group;\\n\" ::);")
    out.append(f"{ind}pacc_ws = pacc_ws + PACC_NT >= PACC_FS ? pacc_ws + PACC_NT - PACC_FS : pacc_ws + PACC_NT;")
    return "\n".join(out)+"\n"
pro = """    extern __shared__ float pacc_ff[];
    const int pacc_tid = pacc_ty * PACC_BX + pacc_tx;
    int pacc_rs = pacc_tid, pacc_ws = pacc_tid;
    for (int pacc_d = 0; pacc_d < PACC_ASYNC; ++pacc_d) {
        const long long zz = pacc_zb + pacc_d;
""" + issue('zz','        ') + "    }\n"
src=src.replace("    #pragma unroll PACC_UNROLL\n", pro+"    #pragma unroll PACC_UNROLL\n",1)
step = issue('z + PACC_ASYNC','        ') + "        asm volatile(\"cp.async.wait_group %0;\\n\" :: \"n\"(PACC_ASYNC));\n"
src=src.replace("        const long long pacc_at = (z - pacc_base) * pacc_pl + pacc_c;\n","        const long long pacc_at = (z - pacc_base) * pacc_pl + pacc_c;\n"+step,1)
# advance read slot at end of loop
src=src.replace("        { const int pacc_o = pacc_so1_0;","        pacc_rs = pacc_rs + PACC_NT >= PACC_FS ? pacc_rs + PACC_NT - PACC_FS : pacc_rs + PACC_NT;\n        { const int pacc_o = pacc_so1_0;")
hdr = """#define PACC_NT (PACC_BX * PACC_BY)
#define PACC_FS ((PACC_ASYNC + 1) * PACC_NT)
__device__ __forceinline__ void pacc_cp4(float* s, const float* g) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\\n" :: "r"((unsigned)__cvta_generic_to_shared(s)), "l"(g));
}
"""
open('probe/async.cuh','w').write(hdr+src)
