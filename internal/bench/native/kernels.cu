// CUDA C++ versions of the Loom kernels in ../kernels, written as a CUDA
// programmer would write the same algorithms, for loombench's side-by-side
// runs. Parameter lists match the PTX entries loom/ptx emits for the Loom
// kernels: index values are 32-bit ints, f32 scalars floats and buffers
// 64-bit device pointers, in launch-signature order (the driver checks the
// sizes at every launch through hip.Args). Each kernel's comment names its
// launch geometry, which is the Loom kernel's launch config.
#include <cuda_fp16.h>

// sgemm_f32: C = A·B, row-major, m and n multiples of 128, k of 8.
// Grid (n/128, m/128), block (16, 16). Each thread holds an 8x8 tile as
// four 4x4 quadrants (rows 4ty and 64+4ty, columns 4tx and 64+4tx); two
// shared stages of an 8-deep slice (A transposed), the next slice fetched
// into registers while the current one is multiplied out.
extern "C" __global__ void __launch_bounds__(256) sgemm_f32(int m, int n, int k, const float *a, const float *b, float *c)
{
    __shared__ __align__(16) float ta[2][8][128];
    __shared__ __align__(16) float tb[2][8][128];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row0 = blockIdx.y * 128, col0 = blockIdx.x * 128;
    int tid = ty * 16 + tx;
    int arow = tid / 2, ak = (tid % 2) * 4;
    int brow = tid / 32, bcol = (tid % 32) * 4;
    const float *ga = a + (size_t)(row0 + arow) * k + ak;
    const float *gb = b + (size_t)brow * n + col0 + bcol;
    float4 a4 = *(const float4 *)ga;
    float4 b4 = *(const float4 *)gb;
    ta[0][ak + 0][arow] = a4.x;
    ta[0][ak + 1][arow] = a4.y;
    ta[0][ak + 2][arow] = a4.z;
    ta[0][ak + 3][arow] = a4.w;
    *(float4 *)&tb[0][brow][bcol] = b4;
    __syncthreads();
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++)
            acc[i][j] = 0.0f;
    int tm = ty * 4, tn = tx * 4;
    int ktiles = k / 8;
    for (int t = 0; t < ktiles; t++) {
        int cur = t % 2, nxt = 1 - cur;
        bool more = t + 1 < ktiles;
        float4 an = make_float4(0, 0, 0, 0), bn = make_float4(0, 0, 0, 0);
        if (more) {
            an = *(const float4 *)(ga + (t + 1) * 8);
            bn = *(const float4 *)(gb + (size_t)(t + 1) * 8 * n);
        }
#pragma unroll
        for (int kk = 0; kk < 8; kk++) {
            float4 alo = *(const float4 *)&ta[cur][kk][tm];
            float4 ahi = *(const float4 *)&ta[cur][kk][tm + 64];
            float4 blo = *(const float4 *)&tb[cur][kk][tn];
            float4 bhi = *(const float4 *)&tb[cur][kk][tn + 64];
            float av[8] = {alo.x, alo.y, alo.z, alo.w, ahi.x, ahi.y, ahi.z, ahi.w};
            float bv[8] = {blo.x, blo.y, blo.z, blo.w, bhi.x, bhi.y, bhi.z, bhi.w};
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++)
                    acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
        if (more) {
            ta[nxt][ak + 0][arow] = an.x;
            ta[nxt][ak + 1][arow] = an.y;
            ta[nxt][ak + 2][arow] = an.z;
            ta[nxt][ak + 3][arow] = an.w;
            *(float4 *)&tb[nxt][brow][bcol] = bn;
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 8; i++) {
        int r = row0 + (i < 4 ? tm + i : 64 + tm + i - 4);
        float *cr = c + (size_t)r * n + col0;
        *(float4 *)(cr + tn) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        *(float4 *)(cr + tn + 64) = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
    }
}

// Block-wide sum and max over 256 threads: warp shuffles, then one warp
// over the eight partials in shared memory.
__device__ float block_sum(float v, float *scratch)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffff, v, o);
    int w = threadIdx.x / 32, l = threadIdx.x % 32;
    __syncthreads();
    if (l == 0)
        scratch[w] = v;
    __syncthreads();
    v = l < blockDim.x / 32 ? scratch[l] : 0.0f;
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}

__device__ float block_max(float v, float *scratch)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
    int w = threadIdx.x / 32, l = threadIdx.x % 32;
    __syncthreads();
    if (l == 0)
        scratch[w] = v;
    __syncthreads();
    v = l < blockDim.x / 32 ? scratch[l] : -3.4028234663852886e38f;
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
    return v;
}

// rmsnorm_f32: grid (rows), block (256); cols a multiple of 1024.
extern "C" __global__ void rmsnorm_f32(int rows, int cols, float eps, const float *x, const float *w, float *y)
{
    __shared__ float scratch[32];
    const float *xr = x + (size_t)blockIdx.x * cols;
    float *yr = y + (size_t)blockIdx.x * cols;
    float acc = 0.0f;
    for (int c = threadIdx.x * 4; c < cols; c += 1024) {
        float4 v = *(const float4 *)(xr + c);
        acc = fmaf(v.x, v.x, acc);
        acc = fmaf(v.y, v.y, acc);
        acc = fmaf(v.z, v.z, acc);
        acc = fmaf(v.w, v.w, acc);
    }
    float inv = rsqrtf(block_sum(acc, scratch) / (float)cols + eps);
    for (int c = threadIdx.x * 4; c < cols; c += 1024) {
        float4 v = *(const float4 *)(xr + c);
        float4 g = *(const float4 *)(w + c);
        *(float4 *)(yr + c) = make_float4(v.x * inv * g.x, v.y * inv * g.y, v.z * inv * g.z, v.w * inv * g.w);
    }
}

// softmax_f32: grid (rows), block (256); cols a multiple of 2048. Eight
// columns per thread at a time: running maximum and rescaled sum in one
// sweep, normalisation in a second.
extern "C" __global__ void softmax_f32(int rows, int cols, const float *x, float *y)
{
    __shared__ float scratch[32];
    const float *xr = x + (size_t)blockIdx.x * cols;
    float *yr = y + (size_t)blockIdx.x * cols;
    float mx = -3.4028234663852886e38f, sum = 0.0f;
    for (int c = threadIdx.x * 8; c < cols; c += 2048) {
        float4 a = *(const float4 *)(xr + c);
        float4 b = *(const float4 *)(xr + c + 4);
        float v[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
        float vm = mx;
#pragma unroll
        for (int i = 0; i < 8; i++)
            vm = fmaxf(vm, v[i]);
        sum *= expf(mx - vm);
#pragma unroll
        for (int i = 0; i < 8; i++)
            sum += expf(v[i] - vm);
        mx = vm;
    }
    float rowmax = block_max(mx, scratch);
    float rowsum = block_sum(sum * expf(mx - rowmax), scratch);
    float inv = 1.0f / rowsum;
    for (int c = threadIdx.x * 8; c < cols; c += 2048) {
        float4 a = *(const float4 *)(xr + c);
        float4 b = *(const float4 *)(xr + c + 4);
        *(float4 *)(yr + c) = make_float4(expf(a.x - rowmax) * inv, expf(a.y - rowmax) * inv,
                                          expf(a.z - rowmax) * inv, expf(a.w - rowmax) * inv);
        *(float4 *)(yr + c + 4) = make_float4(expf(b.x - rowmax) * inv, expf(b.y - rowmax) * inv,
                                              expf(b.z - rowmax) * inv, expf(b.w - rowmax) * inv);
    }
}

// rope_f32: grid (heads/8, tokens), block (32, 8); heads of 128 values,
// cos and sin tables of tokens x 64.
extern "C" __global__ void rope_f32(int tokens, int heads, const float *x, const float *cs, const float *sn, float *y)
{
    int t = blockIdx.y, h = blockIdx.x * 8 + threadIdx.y;
    size_t at = ((size_t)t * heads + h) * 128 + threadIdx.x * 4;
    float4 v = *(const float4 *)(x + at);
    float2 c = *(const float2 *)(cs + t * 64 + threadIdx.x * 2);
    float2 s = *(const float2 *)(sn + t * 64 + threadIdx.x * 2);
    float4 o;
    o.x = fmaf(v.x, c.x, -(v.y * s.x));
    o.y = fmaf(v.x, s.x, v.y * c.x);
    o.z = fmaf(v.z, c.y, -(v.w * s.y));
    o.w = fmaf(v.z, s.y, v.w * c.y);
    *(float4 *)(y + at) = o;
}

// matvec_q8_0: grid ((rows+7)/8), block (32, 8); cols a multiple of 2048.
// q: rows x cols int8, d: rows x cols/32 f16 scales. Each step takes four
// 512-column spans, unrolled so their loads are in flight together.
extern "C" __global__ void matvec_q8_0(int rows, int cols, const int *q, const __half *d, const float *x, float *y)
{
    int r = blockIdx.x * 8 + threadIdx.y;
    float acc = 0.0f;
    if (r < rows) {
        const int *qr = q + (size_t)r * (cols / 4);
        const __half *dr = d + (size_t)r * (cols / 32);
        for (int cb = threadIdx.x * 16; cb < cols; cb += 2048)
#pragma unroll
        for (int j = 0; j < 4; j++) {
            int c = cb + 512 * j;
            int4 qs = *(const int4 *)(qr + c / 4);
            float scale = __half2float(dr[c / 32]);
            int w[4] = {qs.x, qs.y, qs.z, qs.w};
            float dot = 0.0f;
#pragma unroll
            for (int i = 0; i < 4; i++) {
                float4 xs = *(const float4 *)(x + c + 4 * i);
                dot = fmaf((float)((w[i] << 24) >> 24), xs.x, dot);
                dot = fmaf((float)((w[i] << 16) >> 24), xs.y, dot);
                dot = fmaf((float)((w[i] << 8) >> 24), xs.z, dot);
                dot = fmaf((float)(w[i] >> 24), xs.w, dot);
            }
            acc = fmaf(scale, dot, acc);
        }
    }
    for (int o = 16; o > 0; o >>= 1)
        acc += __shfl_xor_sync(0xffffffff, acc, o);
    if (threadIdx.x == 0 && r < rows)
        y[r] = acc;
}

// matvec_q4_k: grid ((rows+7)/8), block (32, 8); cols a multiple of 2048;
// w: rows x cols/256 blocks of 144 bytes (ggml block_q4_K). Each step
// takes two spans of four super-blocks, unrolled.
extern "C" __global__ void matvec_q4_k(int rows, int cols, const unsigned char *w, const float *x, float *y)
{
    int r = blockIdx.x * 8 + threadIdx.y;
    int lane = threadIdx.x;
    float acc = 0.0f;
    if (r < rows) {
        int nsb = cols / 256;
        int part = lane % 8, g = part / 2, h = part % 2;
        int j0 = 2 * g, j1 = j0 + 1;
        bool low = g < 2;
        for (int sb0 = lane / 8; sb0 < nsb; sb0 += 8)
#pragma unroll
        for (int u = 0; u < 2; u++) {
            int sb = sb0 + 4 * u;
            const unsigned char *blk = w + ((size_t)r * nsb + sb) * 144;
            int4 qs = *(const int4 *)(blk + 16 + 32 * g + 16 * h);
            float d = __half2float(*(const __half *)blk);
            float dmin = __half2float(*(const __half *)(blk + 2));
            const unsigned char *s = blk + 4;
            int u0 = s[j0], u1 = s[j1], u0p = s[j0 + 4], u1p = s[j1 + 4];
            int u0m = blk[max(j0, 4)], u1m = blk[max(j1, 4)];
            int sc0 = low ? (u0 & 63) : ((u0p & 15) | ((u0m >> 6) << 4));
            int mn0 = low ? (u0p & 63) : ((u0p >> 4) | ((u0 >> 6) << 4));
            int sc1 = low ? (u1 & 63) : ((u1p & 15) | ((u1m >> 6) << 4));
            int mn1 = low ? (u1p & 63) : ((u1p >> 4) | ((u1 >> 6) << 4));
            int xb = sb * 256 + 32 * j0 + 16 * h;
            int wd[4] = {qs.x, qs.y, qs.z, qs.w};
            float dl = 0, dh = 0, sx0 = 0, sx1 = 0;
#pragma unroll
            for (int i = 0; i < 4; i++) {
                float4 x0 = *(const float4 *)(x + xb + 4 * i);
                float4 x1 = *(const float4 *)(x + xb + 4 * i + 32);
                unsigned v = wd[i];
                dl = fmaf((float)(v & 15), x0.x, dl);
                dl = fmaf((float)((v >> 8) & 15), x0.y, dl);
                dl = fmaf((float)((v >> 16) & 15), x0.z, dl);
                dl = fmaf((float)((v >> 24) & 15), x0.w, dl);
                dh = fmaf((float)((v >> 4) & 15), x1.x, dh);
                dh = fmaf((float)((v >> 12) & 15), x1.y, dh);
                dh = fmaf((float)((v >> 20) & 15), x1.z, dh);
                dh = fmaf((float)(v >> 28), x1.w, dh);
                sx0 += x0.x + x0.y + x0.z + x0.w;
                sx1 += x1.x + x1.y + x1.z + x1.w;
            }
            acc = fmaf(d * sc0, dl, acc);
            acc = fmaf(-(dmin * mn0), sx0, acc);
            acc = fmaf(d * sc1, dh, acc);
            acc = fmaf(-(dmin * mn1), sx1, acc);
        }
    }
    for (int o = 16; o > 0; o >>= 1)
        acc += __shfl_xor_sync(0xffffffff, acc, o);
    if (lane == 0 && r < rows)
        y[r] = acc;
}
