// The same algorithm as Loom's corpus/authoring/mlp_down_projection_residual_bf16.loom,
// written in CUDA for nvcc: two rows a workgroup of 592 invocations, 32 columns an
// invocation, a workgroup sum of each row, the leader adding the residual.
// Timed against the Loom kernel's builds with cmd/ptxtime (BENCHMARKS.md, "Loom's
// authoring kernels against nvcc twins"), rows R even:
//   nvcc -O3 -arch=sm_90 -ptx mlp_down_projection_residual_bf16.cu -o twin.ptx
//   ptxtime -entry mlp_down_projection_residual_bf16 -grid R/2 -block 592 \
//     -p i32:R -p buf:75776 -p buf:R*37888 -p buf:R*4 -p buf:R*4 \
//     .../corpus/authoring/mlp_down_projection_residual_bf16.loom twin.ptx
#include <cuda_bf16.h>
#include <stdint.h>

__device__ __forceinline__ float bf16lo(uint32_t w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float bf16hi(uint32_t w) { return __uint_as_float(w & 0xffff0000u); }

__device__ __forceinline__ float dot32(const float4 *in, const uint4 *w) {
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < 4; i++) {
    uint4 q = w[i];
    float4 a = in[2 * i], b = in[2 * i + 1];
    s += a.x * bf16lo(q.x) + a.y * bf16hi(q.x) + a.z * bf16lo(q.y) + a.w * bf16hi(q.y);
    s += b.x * bf16lo(q.z) + b.y * bf16hi(q.z) + b.z * bf16lo(q.w) + b.w * bf16hi(q.w);
  }
  return s;
}

__device__ __forceinline__ float warpsum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return __shfl_sync(0xffffffffu, v, 0);
}

extern "C" __global__ void __launch_bounds__(592) mlp_down_projection_residual_bf16(
    int rows, const float *__restrict__ input, const uint16_t *__restrict__ weight,
    const float *__restrict__ residual, float *__restrict__ output) {
  __shared__ float part[2][19];
  int r0 = blockIdx.x * 2;
  int lane = threadIdx.x;
  int col = lane * 32;
  float4 in[8];
  const float4 *ip = reinterpret_cast<const float4 *>(input + col);
#pragma unroll
  for (int i = 0; i < 8; i++) in[i] = ip[i];
  const uint4 *w0 = reinterpret_cast<const uint4 *>(weight + (size_t)r0 * 18944 + col);
  const uint4 *w1 = reinterpret_cast<const uint4 *>(weight + (size_t)(r0 + 1) * 18944 + col);
  uint4 q0[4], q1[4];
#pragma unroll
  for (int i = 0; i < 4; i++) { q0[i] = w0[i]; q1[i] = w1[i]; }
  float s0 = warpsum(dot32(in, q0));
  float s1 = warpsum(dot32(in, q1));
  int warp = lane >> 5;
  if ((lane & 31) == 0) { part[0][warp] = s0; part[1][warp] = s1; }
  __syncthreads();
  float d0 = 0.f, d1 = 0.f;
#pragma unroll
  for (int i = 0; i < 19; i++) { d0 += part[0][i]; d1 += part[1][i]; }
  if (lane == 0) {
    float2 o = make_float2(residual[r0] + d0, residual[r0 + 1] + d1);
    *reinterpret_cast<float2 *>(output + r0) = o;
  }
}
