// The second and third generations of the quantized mat-vecs
// (matvec_q.loom's matvec_*_v2, _v2w, _v3, _v3w) in CUDA C++, on top of
// kernels.cu (its helpers and first-generation kernels, included whole).
// loombench builds this file; when nvcc rejects it, it builds kernels.cu
// alone, so the measured kernels keep their nvcc side and these run
// against the copy rate only (a new kernel cannot take the others' nvcc
// comparisons down with it).
#include "kernels.cu"

// The second generation (matvec_q.loom's matvec_*_v2): two steps of loads
// issued before x is quantized, each step's loads issued after the
// arithmetic of the step two before it, and quantize_x4 with every x load
// first (columns 4tid + 4096k, clamped into the chunk, stored when inside).
__device__ __forceinline__ void quantize_four(float4 v, int i, int len, int tid, int *xq, float *xd, float *xs)
{
    float m = fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w)));
    for (int o = 4; o > 0; o >>= 1)
        m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
    float d = m / 127.0f;
    float id = m > 0.0f ? 127.0f / m : 0.0f;
    int q0 = __float2int_rn(v.x * id), q1 = __float2int_rn(v.y * id);
    int q2 = __float2int_rn(v.z * id), q3 = __float2int_rn(v.w * id);
    int s = q0 + q1 + q2 + q3;
    for (int o = 4; o > 0; o >>= 1)
        s += __shfl_xor_sync(0xffffffff, s, o);
    if (i < len) {
        xq[i >> 2] = (q0 & 255) | (q1 & 255) << 8 | (q2 & 255) << 16 | (q3 & 255) << 24;
        if (tid % 8 == 0) {
            xd[i >> 5] = d;
            xs[i >> 5] = d * (float)s;
        }
    }
}

__device__ __forceinline__ void quantize_x4(const float *x, int base, int len, int tid, int *xq, float *xd, float *xs)
{
    float4 v[4];
#pragma unroll
    for (int k = 0; k < 4; k++)
        v[k] = *(const float4 *)(x + base + min(tid * 4 + 4096 * k, len - 4));
#pragma unroll
    for (int k = 0; k < 4; k++)
        quantize_four(v[k], tid * 4 + 4096 * k, len, tid, xq, xd, xs);
}

// q8_dot adds one q8_0 step (four spans of 16 quants at chunk column cb…)
// to acc, as matvec_q8_0's loop body does.
__device__ __forceinline__ float q8_dot(const q8step &cur, const int *xq, const float *xd, int cb, float acc)
{
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
    return acc;
}

// matvec_q8_0_v2: matvec_q8_0's layout and geometry.
extern "C" __global__ void __launch_bounds__(1024) matvec_q8_0_v2(int rows, int cols, const int *q, const __half *d, const float *x, float *y)
{
    __shared__ __align__(16) int xq[MATVEC_CHUNK / 4];
    __shared__ float xd[MATVEC_CHUNK / 32], xs[MATVEC_CHUNK / 32];
    int r = blockIdx.x * 32 + threadIdx.y, lane = threadIdx.x;
    int tid = threadIdx.y * 32 + lane;
    int rl = min(r, rows - 1);
    float acc = 0.0f;
    const int *qr = q + (size_t)rl * (cols / 4);
    const __half *dr = d + (size_t)rl * (cols / 32);
    for (int c0 = 0; c0 < cols; c0 += MATVEC_CHUNK) {
        int len = min(cols - c0, MATVEC_CHUNK);
        q8step cur = q8_step(qr, dr, c0 + lane * 16);
        q8step nxt = cur;
        if (2048 < len)
            nxt = q8_step(qr, dr, c0 + lane * 16 + 2048);
        quantize_x4(x, c0, len, tid, xq, xd, xs);
        __syncthreads();
        for (int cb = lane * 16; cb < len; cb += 2048) {
            acc = q8_dot(cur, xq, xd, cb, acc);
            q8step after = nxt;
            if (cb + 4096 < len)
                after = q8_step(qr, dr, c0 + cb + 4096);
            cur = nxt;
            nxt = after;
        }
        __syncthreads();
    }
    for (int o = 16; o > 0; o >>= 1)
        acc += __shfl_xor_sync(0xffffffff, acc, o);
    if (lane == 0 && r < rows)
        y[r] = acc;
}

// matvec_q4_k_v2w: four lanes a super-block, lane l taking super-block l/4
// of each 2048-column step and in it all 32 quant bytes of sub-blocks 2g
// and 2g+1 (g = l%4) and the head; high nibbles used in place (×16).
// dp4a_us is dp4a of unsigned bytes a by signed bytes b (PTX
// dp4a.u32.s32; CUDA's __dp4a takes both signed or both unsigned): the
// high nibbles kept in place are bytes up to 240.
__device__ __forceinline__ int dp4a_us(unsigned a, int b, int c)
{
    int d;
    asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}

struct q4wstep {
    int4 q0, q1, h;
};

__device__ __forceinline__ q4wstep q4w_step(const unsigned char *wr, int gc, int qoff)
{
    const unsigned char *blk = wr + (size_t)(gc >> 8) * 144;
    q4wstep s;
    s.q0 = *(const int4 *)(blk + qoff);
    s.q1 = *(const int4 *)(blk + qoff + 16);
    s.h = *(const int4 *)blk;
    return s;
}

// q4w_block adds a lane's share of one q4_K super-block (all 32 values of
// sub-blocks 2g and 2g+1 at chunk column cb…) to acc, as matvec_q.loom's
// q4w_block.
__device__ __forceinline__ float q4w_block(const q4wstep &cur, const int *xq, const float *xd, const float *xs, int cb, bool low, int sh, int shm, unsigned ma, unsigned mb, float acc)
{
    const int4 *xa = (const int4 *)(xq + (cb >> 2));
    const int4 *xb = (const int4 *)(xq + ((cb + 32) >> 2));
    int4 xa0 = xa[0], xa1 = xa[1], xb0 = xb[0], xb1 = xb[1];
    float2 dx = *(const float2 *)(xd + (cb >> 5));
    float2 sx = *(const float2 *)(xs + (cb >> 5));
    int qw[8] = {cur.q0.x, cur.q0.y, cur.q0.z, cur.q0.w, cur.q1.x, cur.q1.y, cur.q1.z, cur.q1.w};
    int x0[8] = {xa0.x, xa0.y, xa0.z, xa0.w, xa1.x, xa1.y, xa1.z, xa1.w};
    int x1[8] = {xb0.x, xb0.y, xb0.z, xb0.w, xb1.x, xb1.y, xb1.z, xb1.w};
    int p = 0, o = 0;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        p = dp4a_us((unsigned)qw[i] & 0x0f0f0f0fu, x0[i], p);
        o = dp4a_us((unsigned)qw[i] & 0xf0f0f0f0u, x1[i], o);
    }
    unsigned w1 = cur.h.y, w2 = cur.h.z, w3 = cur.h.w;
    unsigned as = low ? w1 : w3, am = low ? w2 : w3;
    int sc0 = ((as >> sh) & ma) | ((w1 >> (sh + 2)) & mb);
    int sc1 = ((as >> (sh + 8)) & ma) | ((w1 >> (sh + 10)) & mb);
    int mn0 = ((am >> shm) & ma) | ((w2 >> (sh + 2)) & mb);
    int mn1 = ((am >> (shm + 8)) & ma) | ((w2 >> (sh + 10)) & mb);
    __half2 dm = *(const __half2 *)&cur.h.x;
    float t = fmaf((float)sc1 * 0.0625f * dx.y, (float)o, ((float)sc0 * dx.x) * (float)p);
    float m = fmaf((float)mn1, sx.y, (float)mn0 * sx.x);
    acc = fmaf(__low2float(dm), t, acc);
    return fmaf(-__high2float(dm), m, acc);
}

extern "C" __global__ void __launch_bounds__(1024) matvec_q4_k_v2w(int rows, int cols, const unsigned char *w, const float *x, float *y)
{
    __shared__ __align__(16) int xq[MATVEC_CHUNK / 4];
    __shared__ __align__(8) float xd[MATVEC_CHUNK / 32];
    __shared__ __align__(8) float xs[MATVEC_CHUNK / 32];
    int r = blockIdx.x * 32 + threadIdx.y, lane = threadIdx.x;
    int tid = threadIdx.y * 32 + lane;
    int rl = min(r, rows - 1);
    int nsb = cols / 256;
    int g = lane % 4;
    bool low = g < 2;
    int sh = 16 * (g % 2), qoff = 16 + 32 * g;
    int shm = low ? sh : sh + 4;
    unsigned ma = low ? 63 : 15, mb = low ? 0 : 48;
    int first = (lane / 4) * 256 + 64 * g;
    float acc = 0.0f;
    const unsigned char *wr = w + (size_t)rl * nsb * 144;
    for (int c0 = 0; c0 < cols; c0 += MATVEC_CHUNK) {
        int len = min(cols - c0, MATVEC_CHUNK);
        q4wstep cur = q4w_step(wr, c0 + first, qoff);
        q4wstep nxt = cur;
        if (2048 < len)
            nxt = q4w_step(wr, c0 + first + 2048, qoff);
        quantize_x4(x, c0, len, tid, xq, xd, xs);
        __syncthreads();
        for (int cb = first; cb < len; cb += 2048) {
            acc = q4w_block(cur, xq, xd, xs, cb, low, sh, shm, ma, mb, acc);
            q4wstep after = nxt;
            if (cb + 4096 < len)
                after = q4w_step(wr, c0 + cb + 4096, qoff);
            cur = nxt;
            nxt = after;
        }
        __syncthreads();
    }
    for (int o = 16; o > 0; o >>= 1)
        acc += __shfl_xor_sync(0xffffffff, acc, o);
    if (lane == 0 && r < rows)
        y[r] = acc;
}

// q4e_pair adds a lane's share of one q4_K super-block (quant word q, head
// hd; chunk column cc) to acc, as matvec_q.loom's q4e_pair: both scales of
// sub-blocks 2g, 2g+1 and the min of sub-block 2g + h, decoded by the
// lane's constants (shift sh, min shift shmh, high-bit shift th, masks
// ma, mb).
__device__ __forceinline__ float q4e_pair(int4 q, int4 hd, const int *xq, const float *xd, const float *xs, int cc, int h, bool low, int sh, int shmh, int th, unsigned ma, unsigned mb, float acc)
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

// matvec_q4_k_v2: matvec_q4_k's layout (eight lanes a super-block, two
// spans a step) with the scale bits decoded as matvec_q4_k_v2w does, high
// nibbles in place and two steps in flight; a lane's min is that of
// sub-block 2g + h.
extern "C" __global__ void __launch_bounds__(1024) matvec_q4_k_v2(int rows, int cols, const unsigned char *w, const float *x, float *y)
{
    __shared__ __align__(16) int xq[MATVEC_CHUNK / 4];
    __shared__ __align__(8) float xd[MATVEC_CHUNK / 32];
    __shared__ float xs[MATVEC_CHUNK / 32];
    int r = blockIdx.x * 32 + threadIdx.y, lane = threadIdx.x;
    int tid = threadIdx.y * 32 + lane;
    int rl = min(r, rows - 1);
    int nsb = cols / 256;
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
        q4step cur = q4_step(wr, c0 + first, qoff);
        q4step nxt = cur;
        if (2048 < len)
            nxt = q4_step(wr, c0 + first + 2048, qoff);
        quantize_x4(x, c0, len, tid, xq, xd, xs);
        __syncthreads();
        for (int cb = first; cb < len; cb += 2048) {
            acc = q4e_pair(cur.q[0], cur.h[0], xq, xd, xs, cb, h, low, sh, shmh, th, ma, mb, acc);
            acc = q4e_pair(cur.q[1], cur.h[1], xq, xd, xs, cb + 1024, h, low, sh, shmh, th, ma, mb, acc);
            q4step after = nxt;
            if (cb + 4096 < len)
                after = q4_step(wr, c0 + cb + 4096, qoff);
            cur = nxt;
            nxt = after;
        }
        __syncthreads();
    }
    for (int o = 16; o > 0; o >>= 1)
        acc += __shfl_xor_sync(0xffffffff, acc, o);
    if (lane == 0 && r < rows)
        y[r] = acc;
}

// The third generation (matvec_q.loom's matvec_*_v3): each block reads its
// 32 rows in memory order. Chunk k of a chunk of x (row k / steps, step
// k % steps, steps = len / 2048) goes to warp k % 32; each chunk's sum is
// reduced across the warp and added to part[row][warp], which only that
// warp writes; at the end warp r sums row r. Two chunks in flight and
// quantize_x4 as the second generation.
__device__ __forceinline__ void wave_next(int &lr, int &s, int dq, int dr, int steps)
{
    int s1 = s + dr;
    bool wrap = s1 >= steps;
    s = wrap ? s1 - steps : s1;
    lr = lr + dq + (wrap ? 1 : 0);
}

__device__ __forceinline__ void wave_add(float *part, float acc, int lr, int ty, int lane)
{
    for (int o = 16; o > 0; o >>= 1)
        acc += __shfl_xor_sync(0xffffffff, acc, o);
    if (lane == 0)
        part[lr * 32 + ty] += acc;
}

__device__ __forceinline__ void wave_store(const float *part, float *y, int rows, int r0, int ty, int lane)
{
    float v = part[ty * 32 + lane];
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffff, v, o);
    if (lane == 0 && r0 + ty < rows)
        y[r0 + ty] = v;
}

extern "C" __global__ void __launch_bounds__(1024) matvec_q8_0_v3(int rows, int cols, const int *q, const __half *d, const float *x, float *y)
{
    __shared__ __align__(16) int xq[MATVEC_CHUNK / 4];
    __shared__ float xd[MATVEC_CHUNK / 32], xs[MATVEC_CHUNK / 32];
    __shared__ float part[32 * 32];
    int ty = threadIdx.y, lane = threadIdx.x;
    int tid = ty * 32 + lane;
    int r0 = blockIdx.x * 32, rlast = rows - 1;
    part[tid] = 0.0f;
    int first = lane * 16;
    for (int c0 = 0; c0 < cols; c0 += MATVEC_CHUNK) {
        int len = min(cols - c0, MATVEC_CHUNK);
        int steps = len / 2048, dq = 32 / steps, dr = 32 % steps;
        int lr = ty / steps, s = ty % steps;
        int ra = min(r0 + lr, rlast);
        q8step cur = q8_step(q + (size_t)ra * (cols / 4), d + (size_t)ra * (cols / 32), c0 + s * 2048 + first);
        int lr1 = lr, s1 = s;
        wave_next(lr1, s1, dq, dr, steps);
        q8step nxt = cur;
        if (1 < steps) {
            int rb = min(r0 + lr1, rlast);
            nxt = q8_step(q + (size_t)rb * (cols / 4), d + (size_t)rb * (cols / 32), c0 + s1 * 2048 + first);
        }
        quantize_x4(x, c0, len, tid, xq, xd, xs);
        __syncthreads();
        for (int t = 0; t < steps; t++) {
            int cb = s * 2048 + first;
            wave_add(part, q8_dot(cur, xq, xd, cb, 0.0f), lr, ty, lane);
            wave_next(lr, s, dq, dr, steps);
            q8step after = nxt;
            if (t + 2 < steps) {
                int lm = lr, sm = s;
                wave_next(lm, sm, dq, dr, steps);
                int rn = min(r0 + lm, rlast);
                after = q8_step(q + (size_t)rn * (cols / 4), d + (size_t)rn * (cols / 32), c0 + sm * 2048 + first);
            }
            cur = nxt;
            nxt = after;
        }
        __syncthreads();
    }
    wave_store(part, y, rows, r0, ty, lane);
}

extern "C" __global__ void __launch_bounds__(1024) matvec_q4_k_v3(int rows, int cols, const unsigned char *w, const float *x, float *y)
{
    __shared__ __align__(16) int xq[MATVEC_CHUNK / 4];
    __shared__ __align__(8) float xd[MATVEC_CHUNK / 32];
    __shared__ float xs[MATVEC_CHUNK / 32];
    __shared__ float part[32 * 32];
    int ty = threadIdx.y, lane = threadIdx.x;
    int tid = ty * 32 + lane;
    int r0 = blockIdx.x * 32, rlast = rows - 1;
    part[tid] = 0.0f;
    int nsb = cols / 256;
    int pt = lane % 8, g = pt / 2, h = pt % 2;
    bool low = g < 2;
    int sh = 16 * (g % 2), qoff = 16 + 32 * g + 16 * h;
    int shmh = (low ? sh : sh + 4) + 8 * h, th = sh + 2 + 8 * h;
    unsigned ma = low ? 63 : 15, mb = low ? 0 : 48;
    int first = (lane / 8) * 256 + 64 * g + 16 * h;
    for (int c0 = 0; c0 < cols; c0 += MATVEC_CHUNK) {
        int len = min(cols - c0, MATVEC_CHUNK);
        int steps = len / 2048, dq = 32 / steps, dr = 32 % steps;
        int lr = ty / steps, s = ty % steps;
        int ra = min(r0 + lr, rlast);
        q4step cur = q4_step(w + (size_t)ra * nsb * 144, c0 + s * 2048 + first, qoff);
        int lr1 = lr, s1 = s;
        wave_next(lr1, s1, dq, dr, steps);
        q4step nxt = cur;
        if (1 < steps) {
            int rb = min(r0 + lr1, rlast);
            nxt = q4_step(w + (size_t)rb * nsb * 144, c0 + s1 * 2048 + first, qoff);
        }
        quantize_x4(x, c0, len, tid, xq, xd, xs);
        __syncthreads();
        for (int t = 0; t < steps; t++) {
            int cb = s * 2048 + first;
            float acc = q4e_pair(cur.q[0], cur.h[0], xq, xd, xs, cb, h, low, sh, shmh, th, ma, mb, 0.0f);
            acc = q4e_pair(cur.q[1], cur.h[1], xq, xd, xs, cb + 1024, h, low, sh, shmh, th, ma, mb, acc);
            wave_add(part, acc, lr, ty, lane);
            wave_next(lr, s, dq, dr, steps);
            q4step after = nxt;
            if (t + 2 < steps) {
                int lm = lr, sm = s;
                wave_next(lm, sm, dq, dr, steps);
                int rn = min(r0 + lm, rlast);
                after = q4_step(w + (size_t)rn * nsb * 144, c0 + sm * 2048 + first, qoff);
            }
            cur = nxt;
            nxt = after;
        }
        __syncthreads();
    }
    wave_store(part, y, rows, r0, ty, lane);
}

// matvec_q4_k_v3w: matvec_q4_k_v3's order with matvec_q4_k_v2w's chunks.
extern "C" __global__ void __launch_bounds__(1024) matvec_q4_k_v3w(int rows, int cols, const unsigned char *w, const float *x, float *y)
{
    __shared__ __align__(16) int xq[MATVEC_CHUNK / 4];
    __shared__ __align__(8) float xd[MATVEC_CHUNK / 32];
    __shared__ __align__(8) float xs[MATVEC_CHUNK / 32];
    __shared__ float part[32 * 32];
    int ty = threadIdx.y, lane = threadIdx.x;
    int tid = ty * 32 + lane;
    int r0 = blockIdx.x * 32, rlast = rows - 1;
    part[tid] = 0.0f;
    int nsb = cols / 256;
    int g = lane % 4;
    bool low = g < 2;
    int sh = 16 * (g % 2), qoff = 16 + 32 * g;
    int shm = low ? sh : sh + 4;
    unsigned ma = low ? 63 : 15, mb = low ? 0 : 48;
    int first = (lane / 4) * 256 + 64 * g;
    for (int c0 = 0; c0 < cols; c0 += MATVEC_CHUNK) {
        int len = min(cols - c0, MATVEC_CHUNK);
        int steps = len / 2048, dq = 32 / steps, dr = 32 % steps;
        int lr = ty / steps, s = ty % steps;
        int ra = min(r0 + lr, rlast);
        q4wstep cur = q4w_step(w + (size_t)ra * nsb * 144, c0 + s * 2048 + first, qoff);
        int lr1 = lr, s1 = s;
        wave_next(lr1, s1, dq, dr, steps);
        q4wstep nxt = cur;
        if (1 < steps) {
            int rb = min(r0 + lr1, rlast);
            nxt = q4w_step(w + (size_t)rb * nsb * 144, c0 + s1 * 2048 + first, qoff);
        }
        quantize_x4(x, c0, len, tid, xq, xd, xs);
        __syncthreads();
        for (int t = 0; t < steps; t++) {
            int cb = s * 2048 + first;
            wave_add(part, q4w_block(cur, xq, xd, xs, cb, low, sh, shm, ma, mb, 0.0f), lr, ty, lane);
            wave_next(lr, s, dq, dr, steps);
            q4wstep after = nxt;
            if (t + 2 < steps) {
                int lm = lr, sm = s;
                wave_next(lm, sm, dq, dr, steps);
                int rn = min(r0 + lm, rlast);
                after = q4w_step(w + (size_t)rn * nsb * 144, c0 + sm * 2048 + first, qoff);
            }
            cur = nxt;
            nxt = after;
        }
        __syncthreads();
    }
    wave_store(part, y, rows, r0, ty, lane);
}
