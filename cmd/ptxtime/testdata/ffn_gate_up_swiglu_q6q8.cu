// The same algorithm as Loom's corpus/authoring/ffn_gate_up_swiglu_q6q8.loom, in CUDA
// for nvcc: a subgroup a (row, channel), q6_K gate and up weights against q8 input,
// 14 blocks of 2 parts fully unrolled, dp4a products scaled, silu(gate) * up.
// Timed against the Loom kernel's builds with cmd/ptxtime (BENCHMARKS.md, "Loom's
// authoring kernels against nvcc twins"):
//   nvcc -O3 -arch=sm_90 -ptx ffn_gate_up_swiglu_q6q8.cu -o twin.ptx
//   ptxtime -entry ffn_gate_up_swiglu_q6q8 -grid 31,1184 -block 512 \
//     -p buf:124992 -p buf:55695360 -p buf:55695360 -p buf:2349056 \
//     .../corpus/authoring/ffn_gate_up_swiglu_q6q8.loom twin.ptx
#include <cuda_fp16.h>
#include <stdint.h>

__device__ __forceinline__ int q6_signed(uint32_t code) {
  uint32_t low5 = code & 0x1F1F1F1Fu, bit5 = code & 0x20202020u;
  uint32_t high = bit5 | (bit5 << 1) | (bit5 << 2);
  return (int)(low5 | (high ^ 0xE0E0E0E0u));
}

__device__ __forceinline__ float part_dot(float acc, const uint8_t *__restrict__ w, const uint32_t *__restrict__ q8w,
                                          const __half *__restrict__ q8h, int row_i16, int q8_i32_row, int q8_f16_row,
                                          int block, int part, int lane, int vh_index, int vh_shift, int bq8_offset,
                                          int q8_qword, int scale_lane_base) {
  const uint16_t *w16 = reinterpret_cast<const uint16_t *>(w);
  int bi16 = row_i16 + block * 105;
  // vector<2xi16> loads: the blocks are 210 bytes, so only 2-byte alignment is known.
  const uint16_t *pl = w16 + bi16 + lane * 2, *ph = w16 + bi16 + 64 + vh_index * 2;
  uint32_t vl_raw = pl[0] | (uint32_t)pl[1] << 16;
  uint32_t vh = ph[0] | (uint32_t)ph[1] << 16;
  float d = __half2float(reinterpret_cast<const __half *>(w16)[bi16 + 104]);
  int ps = part * 4;
  uint32_t vil = (vl_raw >> ps) & 0x0F0F0F0Fu;
  uint32_t vih = ((vh >> (vh_shift + ps)) << 4) & 0x30303030u;
  int s = q6_signed(vil | vih);
  int q8_block = block * 8 + part * 2 + bq8_offset;
  int q8 = (int)q8w[q8_i32_row + q8_block * 9 + q8_qword];
  int dot = __dp4a(s, q8, 0);
  float scale = (float)(int8_t)w[row_i16 * 2 + block * 210 + 192 + scale_lane_base + ps];
  float q8d = __half2float(q8h[q8_f16_row + q8_block * 18]);
  return acc + (float)dot * scale * d * q8d;
}

extern "C" __global__ void __launch_bounds__(512) ffn_gate_up_swiglu_q6q8(
    const uint8_t *__restrict__ q8_input, const uint8_t *__restrict__ gate, const uint8_t *__restrict__ up,
    float *__restrict__ output) {
  int row = blockIdx.x;
  int channel = blockIdx.y * 16 + (threadIdx.x >> 5);
  int lane = threadIdx.x & 31;
  int q8_i32_row = row * 1008, q8_f16_row = row * 2016;
  int m8 = lane & 7, m16 = lane & 15, d16 = lane >> 4;
  int vh_index = d16 * 8 + m8, vh_shift = (m16 >> 3) * 2, bq8_offset = d16 * 4 + (m16 >> 3);
  int q8_qword = m8 + 1, scale_lane_base = d16 * 8 + (m16 >> 2);
  const uint32_t *q8w = reinterpret_cast<const uint32_t *>(q8_input);
  const __half *q8h = reinterpret_cast<const __half *>(q8_input);
  int row_i16 = channel * 1470;
  float g = 0.f, u = 0.f;
#pragma unroll
  for (int block = 0; block < 14; block++) {
#pragma unroll
    for (int part = 0; part < 2; part++) {
      g = part_dot(g, gate, q8w, q8h, row_i16, q8_i32_row, q8_f16_row, block, part, lane, vh_index, vh_shift, bq8_offset, q8_qword, scale_lane_base);
      u = part_dot(u, up, q8w, q8h, row_i16, q8_i32_row, q8_f16_row, block, part, lane, vh_index, vh_shift, bq8_offset, q8_qword, scale_lane_base);
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    g += __shfl_xor_sync(0xffffffffu, g, o);
    u += __shfl_xor_sync(0xffffffffu, u, o);
  }
  if (lane == 0) output[row * 18944 + channel] = g / (1.f + __expf(-g)) * u;
}
