// CUDA C++ versions of the Loom kernels in ../kernels, written as a CUDA
// programmer would write the same algorithms, for loombench's side-by-side
// runs. Parameter lists match the PTX entries loom/ptx emits for the Loom
// kernels: index values are 32-bit ints, f32 scalars floats and buffers
// 64-bit device pointers, in launch-signature order (the driver checks the
// sizes at every launch through hip.Args). Each kernel's comment names its
// launch geometry, which is the Loom kernel's launch config.
#include <cuda_fp16.h>

#include "entry.cuh"

// sgemm_f32: C = A·B, row-major, m and n multiples of 128, k of 8.
// Grid (n/128, m/128), block (16, 16). Each thread holds an 8x8 tile as
// four 4x4 quadrants (rows 4ty and 64+4ty, columns 4tx and 64+4tx); two
// shared stages of an 8-deep slice (A transposed), the next slice fetched
// into registers while the current one is multiplied out.
extern "C" __global__ void __launch_bounds__(256) sgemm_f32(int m, int n, int k, const float *a, const float *b, float *c)
{
    entry_wait();
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

// rmsnorm_f32: grid (rows), block (256); cols a multiple of 1024. Restrict
// pointers, as the Loom form's buffer.assume.noalias.
extern "C" __global__ void rmsnorm_f32(int rows, int cols, float eps, const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ y)
{
    entry_wait();
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



// softmax_trip folds eight columns at c into the running maximum mx and
// the sum rescaled to it.
__device__ __forceinline__ void softmax_trip(const float *xr, int c, float &mx, float &sum)
{
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

// softmax_store writes the eight normalised columns at c.
__device__ __forceinline__ void softmax_store(const float *xr, float *yr, int c, float rowmax, float inv)
{
    float4 a = *(const float4 *)(xr + c);
    float4 b = *(const float4 *)(xr + c + 4);
    *(float4 *)(yr + c) = make_float4(expf(a.x - rowmax) * inv, expf(a.y - rowmax) * inv,
                                      expf(a.z - rowmax) * inv, expf(a.w - rowmax) * inv);
    *(float4 *)(yr + c + 4) = make_float4(expf(b.x - rowmax) * inv, expf(b.y - rowmax) * inv,
                                          expf(b.z - rowmax) * inv, expf(b.w - rowmax) * inv);
}

// softmax_row combines the invocations' running maxima mx and sums into
// the row's maximum and the reciprocal of its sum rescaled to it.
__device__ __forceinline__ void softmax_row(float mx, float sum, float *scratch, float &rowmax, float &inv)
{
    rowmax = block_max(mx, scratch);
    inv = 1.0f / block_sum(sum * expf(mx - rowmax), scratch);
}

// softmax_f32: grid (rows), block (256); cols a multiple of 2048. Eight
// columns per thread at a time: running maximum and rescaled sum in one
// sweep, normalisation in a second.
extern "C" __global__ void softmax_f32(int rows, int cols, const float *x, float *y)
{
    entry_wait();
    __shared__ float scratch[32];
    const float *xr = x + (size_t)blockIdx.x * cols;
    float *yr = y + (size_t)blockIdx.x * cols;
    float mx = -3.4028234663852886e38f, sum = 0.0f;
    for (int c = threadIdx.x * 8; c < cols; c += 2048)
        softmax_trip(xr, c, mx, sum);
    float rowmax, inv;
    softmax_row(mx, sum, scratch, rowmax, inv);
    for (int c = threadIdx.x * 8; c < cols; c += 2048)
        softmax_store(xr, yr, c, rowmax, inv);
}

// softmax_f32_loop: softmax_f32 with both sweeps kept as loops.
extern "C" __global__ void softmax_f32_loop(int rows, int cols, const float *x, float *y)
{
    entry_wait();
    __shared__ float scratch[32];
    const float *xr = x + (size_t)blockIdx.x * cols;
    float *yr = y + (size_t)blockIdx.x * cols;
    float mx = -3.4028234663852886e38f, sum = 0.0f;
#pragma unroll 1
    for (int c = threadIdx.x * 8; c < cols; c += 2048)
        softmax_trip(xr, c, mx, sum);
    float rowmax, inv;
    softmax_row(mx, sum, scratch, rowmax, inv);
#pragma unroll 1
    for (int c = threadIdx.x * 8; c < cols; c += 2048)
        softmax_store(xr, yr, c, rowmax, inv);
}

// softmax_f32_back: softmax_f32 with its second sweep run backwards from
// the row's end.
extern "C" __global__ void softmax_f32_back(int rows, int cols, const float *x, float *y)
{
    entry_wait();
    __shared__ float scratch[32];
    const float *xr = x + (size_t)blockIdx.x * cols;
    float *yr = y + (size_t)blockIdx.x * cols;
    float mx = -3.4028234663852886e38f, sum = 0.0f;
    for (int c = threadIdx.x * 8; c < cols; c += 2048)
        softmax_trip(xr, c, mx, sum);
    float rowmax, inv;
    softmax_row(mx, sum, scratch, rowmax, inv);
    int mirror = cols - 2048 + (int)threadIdx.x * 16;
    for (int i = threadIdx.x * 8; i < cols; i += 2048)
        softmax_store(xr, yr, mirror - i, rowmax, inv);
}

// rope_f32: grid (heads/8, tokens), block (32, 8); heads of 128 values,
// cos and sin tables of tokens x 64.
extern "C" __global__ void rope_f32(int tokens, int heads, const float *x, const float *cs, const float *sn, float *y)
{
    entry_wait();
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

// The quantized mat-vecs quantize x to q8 blocks of 32 in shared memory
// (a chunk of up to 16384 columns at a time) and take integer dot products
// by dp4a (column indices are non-negative: divisions by powers of two
// are shifts, as in the Loom kernels); 1024 threads of four values each,
// eight per block (the block maximum by shuffles).
#define MATVEC_CHUNK 16384

// quantize_four quantizes the four values v of chunk columns i… (eight
// lanes a block of 32).
__device__ __forceinline__ void quantize_four(float4 v, int i, int tid, int *xq, float *xd, float *xs)
{
    float m = fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w)));
    for (int o = 4; o > 0; o >>= 1)
        m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
    float d = m / 127.0f;
    float id = m > 0.0f ? 127.0f / m : 0.0f;
    int q0 = __float2int_rn(v.x * id), q1 = __float2int_rn(v.y * id);
    int q2 = __float2int_rn(v.z * id), q3 = __float2int_rn(v.w * id);
    xq[i >> 2] = (q0 & 255) | (q1 & 255) << 8 | (q2 & 255) << 16 | (q3 & 255) << 24;
    int s = q0 + q1 + q2 + q3;
    for (int o = 4; o > 0; o >>= 1)
        s += __shfl_xor_sync(0xffffffff, s, o);
    if (tid % 8 == 0) {
        xd[i >> 5] = d;
        xs[i >> 5] = d * (float)s;
    }
}

// x_load4 and quantize_x4 quantize one chunk of x in two parts (as
// matvec_q.loom's): every load of x issued before the first step's weight
// loads, quantized after them; columns 4tid + 4096k (k < 4) that lie in
// the chunk (a warp's 128 columns are all in or all out, len being a
// multiple of 2048).
struct xvec {
    float4 v[4];
};

__device__ __forceinline__ xvec x_load4(const float *x, int base, int len, int tid)
{
    xvec r;
#pragma unroll
    for (int k = 0; k < 4; k++)
        r.v[k] = tid * 4 + 4096 * k < len ? *(const float4 *)(x + base + tid * 4 + 4096 * k) : make_float4(0, 0, 0, 0);
    return r;
}

__device__ __forceinline__ void quantize_x4(const xvec &v, int len, int tid, int *xq, float *xd, float *xs)
{
#pragma unroll
    for (int k = 0; k < 4; k++)
        if (tid * 4 + 4096 * k < len)
            quantize_four(v.v[k], tid * 4 + 4096 * k, tid, xq, xd, xs);
}

// matvec_q8_0: grid ((rows+31)/32), block (32, 32); cols a multiple of 2048.
// q: rows x cols int8, d: rows x cols/32 f16 scales. One warp per row,
// lane l takes quants 16l… of each 512-column span, four spans a step;
// the next step's loads are issued before this step's arithmetic, the
// first step's after x's loads and before x is quantized.
// ld_nt / ld_nt_half load weights read once, without allocating their
// lines in L1: what matvec_q.loom's cache_temporal = non_temporal on the
// weight loads becomes in our PTX (loom/ptx/cache.go).
__device__ __forceinline__ int4 ld_nt(const void *p)
{
    int4 v;
    asm("ld.global.L1::no_allocate.v4.s32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

__device__ __forceinline__ __half ld_nt_half(const __half *p)
{
    unsigned short b;
    asm("ld.global.L1::no_allocate.b16 %0, [%1];" : "=h"(b) : "l"(p));
    return __ushort_as_half(b);
}

// prefetch_l2 pulls the 128-byte line at p into L2: a hint, issued
// before entry_wait where the Loom kernel's view.prefetch is (loom/ptx
// issues a prefetch the entry reaches before any access ahead of the wait).
__device__ __forceinline__ void prefetch_l2(const void *p)
{
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

struct q8step {
    int4 q[4];
    __half d[4];
};

__device__ __forceinline__ q8step q8_step(const int *qr, const __half *dr, int gc)
{
    q8step s;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        s.q[j] = ld_nt(qr + ((gc + 512 * j) >> 2));
        s.d[j] = ld_nt_half(dr + ((gc + 512 * j) >> 5));
    }
    return s;
}

extern "C" __global__ void __launch_bounds__(1024) matvec_q8_0(int rows, int cols, const int *q, const __half *d, const float *x, float *y)
{
    __shared__ __align__(16) int xq[MATVEC_CHUNK / 4];
    __shared__ float xd[MATVEC_CHUNK / 32], xs[MATVEC_CHUNK / 32];
    int r = blockIdx.x * 32 + threadIdx.y, lane = threadIdx.x;
    int tid = threadIdx.y * 32 + lane;
    int rl = min(r, rows - 1);
    // The first step's quants (2048 bytes, lanes 0-15) and scales (one
    // line), as the Loom kernel prefetches them ahead of the wait.
    if (lane < 16)
        prefetch_l2((const char *)q + (size_t)rl * cols + lane * 128);
    if (lane == 0)
        prefetch_l2(d + (size_t)rl * (cols / 32));
    entry_wait();
    float acc = 0.0f;
    const int *qr = q + (size_t)rl * (cols / 4);
    const __half *dr = d + (size_t)rl * (cols / 32);
    for (int c0 = 0; c0 < cols; c0 += MATVEC_CHUNK) {
        int len = min(cols - c0, MATVEC_CHUNK);
        xvec xv = x_load4(x, c0, len, tid);
        q8step cur = q8_step(qr, dr, c0 + lane * 16);
        quantize_x4(xv, len, tid, xq, xd, xs);
        __syncthreads();
        for (int cb = lane * 16; cb < len; cb += 2048) {
            q8step nxt = cur;
            if (cb + 2048 < len)
                nxt = q8_step(qr, dr, c0 + cb + 2048);
#pragma unroll
            for (int j = 0; j < 4; j++) {
                int c = cb + 512 * j;
                int4 xw = *(const int4 *)(xq + (c >> 2));
                int s = __dp4a(cur.q[j].x, xw.x, 0);
                s = __dp4a(cur.q[j].y, xw.y, s);
                s = __dp4a(cur.q[j].z, xw.z, s);
                s = __dp4a(cur.q[j].w, xw.w, s);
                acc = fmaf(__half2float(cur.d[j]) * xd[c >> 5], (float)s, acc);
            }
            cur = nxt;
        }
        __syncthreads();
    }
    for (int o = 16; o > 0; o >>= 1)
        acc += __shfl_xor_sync(0xffffffff, acc, o);
    if (lane == 0 && r < rows)
        y[r] = acc;
}

// matvec_q4_k: grid ((rows+31)/32), block (32, 32); cols a multiple of 2048;
// w: rows x cols/256 blocks of 144 bytes (ggml block_q4_K). One warp per
// row, eight lanes per super-block (16 quant bytes and the 16-byte head
// each; each super-block by q4l_pair), two spans of four super-blocks a
// step, pipelined as matvec_q8_0.
struct q4step {
    int4 q[2], h[2];
};

__device__ __forceinline__ q4step q4_step(const unsigned char *wr, int gc, int qoff)
{
    q4step s;
#pragma unroll
    for (int u = 0; u < 2; u++) {
        const unsigned char *blk = wr + (size_t)((gc + 1024 * u) >> 8) * 144;
        s.q[u] = ld_nt(blk + qoff);
        s.h[u] = ld_nt(blk);
    }
    return s;
}

// dp4a_us is dp4a of unsigned bytes a by signed bytes b (PTX
// dp4a.u32.s32; CUDA's __dp4a takes both signed or both unsigned): the
// high nibbles kept in place are bytes up to 240.
__device__ __forceinline__ int dp4a_us(unsigned a, int b, int c)
{
    int d;
    asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}

// q4l_pair adds a lane's share of one q4_K super-block (quant word q, head
// hd; chunk column cc) to acc, as matvec_q.loom's q4l_pair: both scales of
// sub-blocks 2g, 2g+1 and the min of sub-block 2g + h, decoded by one form
// with the lane's constants (shift sh, min shift shmh, high-bit shift th,
// masks ma, mb), the high nibbles in place.
__device__ __forceinline__ float q4l_pair(int4 q, int4 hd, const int *xq, const float *xd, const float *xs, int cc, int h, bool low, int sh, int shmh, int th, unsigned ma, unsigned mb, float acc)
{
    int4 xa = *(const int4 *)(xq + (cc >> 2));
    int4 xb = *(const int4 *)(xq + ((cc + 32) >> 2));
    float2 dx = *(const float2 *)(xd + ((cc >> 6) << 1));
    float sxm = xs[((cc >> 6) << 1) + h];
    int qw[4] = {q.x, q.y, q.z, q.w};
    int x0[4] = {xa.x, xa.y, xa.z, xa.w}, x1[4] = {xb.x, xb.y, xb.z, xb.w};
    int p = 0, o = 0;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        p = dp4a_us((unsigned)qw[i] & 0x0f0f0f0fu, x0[i], p);
        o = dp4a_us((unsigned)qw[i] & 0xf0f0f0f0u, x1[i], o);
    }
    unsigned w1 = hd.y, w2 = hd.z, w3 = hd.w;
    unsigned as = low ? w1 : w3, am = low ? w2 : w3;
    int sc0 = ((as >> sh) & ma) | ((w1 >> (sh + 2)) & mb);
    int sc1 = ((as >> (sh + 8)) & ma) | ((w1 >> (sh + 10)) & mb);
    int mn = ((am >> shmh) & ma) | ((w2 >> th) & mb);
    __half2 dm = *(const __half2 *)&hd.x;
    float t = fmaf((float)sc1 * 0.0625f * dx.y, (float)o, ((float)sc0 * dx.x) * (float)p);
    acc = fmaf(__low2float(dm), t, acc);
    return fmaf(-__high2float(dm), (float)mn * sxm, acc);
}

extern "C" __global__ void __launch_bounds__(1024) matvec_q4_k(int rows, int cols, const unsigned char *w, const float *x, float *y)
{
    __shared__ __align__(16) int xq[MATVEC_CHUNK / 4];
    __shared__ __align__(8) float xd[MATVEC_CHUNK / 32];
    __shared__ float xs[MATVEC_CHUNK / 32];
    int r = blockIdx.x * 32 + threadIdx.y, lane = threadIdx.x;
    int tid = threadIdx.y * 32 + lane;
    int rl = min(r, rows - 1);
    int nsb = cols / 256;
    if (lane < 9) // the first step's eight super-blocks, as in matvec_q8_0
        prefetch_l2(w + (size_t)rl * nsb * 144 + lane * 128);
    entry_wait();
    int part = lane % 8, g = part / 2, h = part % 2;
    bool low = g < 2;
    int sh = 16 * (g % 2), qoff = 16 + 32 * g + 16 * h;
    int shmh = (low ? sh : sh + 4) + 8 * h, th = sh + 2 + 8 * h;
    unsigned ma = low ? 63 : 15, mb = low ? 0 : 48;
    int first = (lane / 8) * 256 + 64 * g + 16 * h;
    float acc = 0.0f;
    const unsigned char *wr = w + (size_t)rl * nsb * 144;
    for (int c0 = 0; c0 < cols; c0 += MATVEC_CHUNK) {
        int len = min(cols - c0, MATVEC_CHUNK);
        xvec xv = x_load4(x, c0, len, tid);
        q4step cur = q4_step(wr, c0 + first, qoff);
        quantize_x4(xv, len, tid, xq, xd, xs);
        __syncthreads();
        for (int cb = first; cb < len; cb += 2048) {
            q4step nxt = cur;
            if (cb + 2048 < len)
                nxt = q4_step(wr, c0 + cb + 2048, qoff);
            acc = q4l_pair(cur.q[0], cur.h[0], xq, xd, xs, cb, h, low, sh, shmh, th, ma, mb, acc);
            acc = q4l_pair(cur.q[1], cur.h[1], xq, xd, xs, cb + 1024, h, low, sh, shmh, th, ma, mb, acc);
            cur = nxt;
        }
        __syncthreads();
    }
    for (int o = 16; o > 0; o >>= 1)
        acc += __shfl_xor_sync(0xffffffff, acc, o);
    if (lane == 0 && r < rows)
        y[r] = acc;
}
