// CUDA C++ versions of two Loom corpus kernels, written as a CUDA programmer
// would write the same algorithm, for BenchmarkVersusNvcc
// (loom/ptx/bench_nvcc_test.go). The parameter lists match the PTX entries
// loom/ptx emits for the Loom kernels: index values are 32-bit ints and
// buffers 64-bit device pointers, in launch-signature order.
// TestVersusNvccSignatures checks that the two stay in step.

#define TILE 16

// matmul_f32 is loom/testdata/matmul_tiled.loom: C = A * B for row-major
// A (m x k), B (k x n), C (m x n). Each 16x16 block computes one 16x16 tile
// of C, staging 16x16 tiles of A and B in shared memory between barriers;
// elements outside the matrices load as zero. Launch: grid
// ((n+15)/16, (m+15)/16, 1), block (16, 16, 1).
extern "C" __global__ void matmul_f32(int m, int n, int k,
                                      const float *a, const float *b, float *c)
{
    __shared__ float ta[TILE][TILE];
    __shared__ float tb[TILE][TILE];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int col = blockIdx.x * TILE + tx;
    int row = blockIdx.y * TILE + ty;
    int ktiles = (k + TILE - 1) / TILE;
    float sum = 0.0f;
    for (int t = 0; t < ktiles; ++t) {
        int acol = t * TILE + tx;
        int brow = t * TILE + ty;
        ta[ty][tx] = (row < m && acol < k) ? a[row * k + acol] : 0.0f;
        tb[ty][tx] = (brow < k && col < n) ? b[brow * n + col] : 0.0f;
        __syncthreads();
        for (int e = 0; e < TILE; ++e)
            sum = fmaf(ta[ty][e], tb[e][tx], sum);
        __syncthreads();
    }
    if (row < m && col < n)
        c[row * n + col] = sum;
}

// gelu_tanh_f32 is loom/testdata/gelu_tanh.loom:
// dst[i] = 0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 * x^3))),
// x = src[i], one element per thread for i < n. Launch: grid
// ((n+255)/256, 1, 1), block (256, 1, 1).
extern "C" __global__ void gelu_tanh_f32(int n, const float *src, float *dst)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = src[i];
        float x3 = x * x * x;
        float inner = fmaf(0.044715f, x3, x);
        float t = tanhf(0.7978845608028654f * inner);
        dst[i] = (0.5f * x) * (1.0f + t);
    }
}
