// The CUDA twin of ../kernels/attention.loom for loombench's side-by-side
// runs, in a file of its own: nvcc builds each .cu file of the nvcc side
// separately, so a file that does not build costs only its own kernels'
// comparisons. Parameters as kernels.cu describes.
#include <cuda_fp16.h>
#include "entry.cuh"

// attn_decode_f16: grid (seq/128, kvh), block (256). Each workgroup takes
// 128 positions of kv head blockIdx.y for its four query heads; each
// half-warp (16 threads, eight dimensions each) walks positions base + 2i
// + half, i < 8, with an online softmax per query head, then the 16
// half-warps' states merge in shared memory and the block writes its
// partial: o[h][chunk][g] = acc[128], m, l. K and V are read with
// ld_nt16 (attention.loom's cache_temporal = non_temporal).
__device__ __forceinline__ uint4 ld_nt16(const void *p)
{
    uint4 v;
    asm("ld.global.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

__device__ __forceinline__ void halves8(uint4 w, float *f)
{
    unsigned u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int i = 0; i < 4; i++) {
        float2 t = __half22float2(*(const __half2 *)&u[i]);
        f[2 * i] = t.x;
        f[2 * i + 1] = t.y;
    }
}

extern "C" __global__ void __launch_bounds__(256) attn_decode_f16(int kvh, int seq, float scale, const float *q, const __half *k, const __half *v, float *o)
{
    entry_wait();
    __shared__ __align__(16) float sacc[16][4][128];
    __shared__ float sst[16][4][2];
    int c = blockIdx.x, h = blockIdx.y, chunks = seq / 128;
    int sg = threadIdx.x / 32, lane = threadIdx.x % 32, half = lane / 16, dl = lane % 16, d0 = dl * 8;
    int hw = sg * 2 + half;
    float qr[4][8], acc[4][8], m[4], l[4];
#pragma unroll
    for (int g = 0; g < 4; g++) {
        const float4 *qp = (const float4 *)(q + (size_t)(h * 4 + g) * 128 + d0);
        float4 a = qp[0], b = qp[1];
        float t[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
        for (int j = 0; j < 8; j++) {
            qr[g][j] = t[j] * scale;
            acc[g][j] = 0.0f;
        }
        m[g] = -3.4028234663852886e38f;
        l[g] = 0.0f;
    }
    int p0 = c * 128 + sg * 16 + half;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        int p = p0 + 2 * i;
        size_t row = ((size_t)h * seq + p) * 128 + d0;
        float kf[8], vf[8];
        halves8(ld_nt16(k + row), kf);
        halves8(ld_nt16(v + row), vf);
#pragma unroll
        for (int g = 0; g < 4; g++) {
            float s = 0.0f;
#pragma unroll
            for (int j = 0; j < 8; j++)
                s = fmaf(qr[g][j], kf[j], s);
#pragma unroll
            for (int off = 8; off > 0; off >>= 1)
                s += __shfl_xor_sync(0xffffffff, s, off);
            float mn = fmaxf(m[g], s);
            float corr = expf(m[g] - mn), pe = expf(s - mn);
            l[g] = fmaf(l[g], corr, pe);
#pragma unroll
            for (int j = 0; j < 8; j++)
                acc[g][j] = fmaf(pe, vf[j], acc[g][j] * corr);
            m[g] = mn;
        }
    }
#pragma unroll
    for (int g = 0; g < 4; g++) {
        *(float4 *)&sacc[hw][g][d0] = make_float4(acc[g][0], acc[g][1], acc[g][2], acc[g][3]);
        *(float4 *)&sacc[hw][g][d0 + 4] = make_float4(acc[g][4], acc[g][5], acc[g][6], acc[g][7]);
        if (dl == 0) {
            sst[hw][g][0] = m[g];
            sst[hw][g][1] = l[g];
        }
    }
    __syncthreads();
    int g = threadIdx.x / 64, d = (threadIdx.x % 64) * 2;
    float big = -3.4028234663852886e38f;
#pragma unroll
    for (int w = 0; w < 16; w++)
        big = fmaxf(big, sst[w][g][0]);
    float ls = 0.0f, a0 = 0.0f, a1 = 0.0f;
#pragma unroll
    for (int w = 0; w < 16; w++) {
        float f = expf(sst[w][g][0] - big);
        ls = fmaf(sst[w][g][1], f, ls);
        float2 aw = *(const float2 *)&sacc[w][g][d];
        a0 = fmaf(aw.x, f, a0);
        a1 = fmaf(aw.y, f, a1);
    }
    float *out = o + ((size_t)(h * chunks + c) * 4 + g) * 130;
    *(float2 *)(out + d) = make_float2(a0, a1);
    if (d == 0) {
        out[128] = big;
        out[129] = ls;
    }
}
