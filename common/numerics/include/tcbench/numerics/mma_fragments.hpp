// Where each element of an mma.sync tile lives in a warp's registers, and the known inputs of
// the tensor-peak kernels with the result their accumulators must reach.
//
// Layouts from the PTX ISA, "Matrix Fragments for mma.m16n8k8 / m16n8k16 / m16n8k32"
// (docs.nvidia.com/cuda/parallel-thread-execution, section 9.7.14.5). For lane l, groupID
// g = l / 4 and threadID_in_group t = l % 4. With v elements per 32-bit register (1 for tf32,
// 2 for f16/bf16, 4 for s8/e4m3) and element e held in register r = e / v:
//   A (16 x 4v*2, row):  row = g + 8 * (r % 2),      col = v * t + e % v + 4v * (r / 2)
//   B (4v*2 x 8, col):   row = v * t + e % v + 4v * r, col = g
//   C/D (16 x 8):        row = g + 8 * (e / 2),      col = 2 * t + e % 2
// The kernels load fragments and store accumulators through these functions, so a wrong
// formula fails the device test's exact comparison; the host test checks each is a bijection.
#pragma once

#include "tcbench/numerics/host_device.hpp"

#include <cstdint>

namespace tcbench::numerics {

struct RowCol {
  int row, col;
};

// elements_per_reg: 1 (tf32, k = 8), 2 (f16/bf16, k = 16), 4 (s8, e4m3 and the 8-bit containers
// of .kind::f8f6f4, k = 32), 8 (packed e2m1 of .kind::mxf4nvf4, k = 64).
TCB_HD inline RowCol mma_a_element(int lane, int e, int elements_per_reg) {
  const int g = lane / 4, t = lane % 4, v = elements_per_reg, r = e / v;
  return {g + 8 * (r % 2), v * t + e % v + 4 * v * (r / 2)};
}

TCB_HD inline RowCol mma_b_element(int lane, int e, int elements_per_reg) {
  const int g = lane / 4, t = lane % 4, v = elements_per_reg, r = e / v;
  return {v * t + e % v + 4 * v * r, g};
}

// The 16 x 8 accumulator, 4 elements per lane (f32/s32: 4 registers; f16: 2 registers f16x2).
TCB_HD inline RowCol mma_c_element(int lane, int e) {
  const int g = lane / 4, t = lane % 4;
  return {g + 8 * (e / 2), 2 * t + e % 2};
}

// Known inputs: small integers in {-1, 0, 1}, exact in every input format (tf32, f16, bf16,
// e4m3, s8), so every product is exact and, while the accumulator stays inside its model's exact
// range (tensor_accumulator.hpp: below 2^13 for Hopper's FP8 accumulator, not FP32's 2^24), so is
// every sum. They are not all zero, so the tensor cores never run on zeros.
TCB_HD inline int peak_input_a(int row, int col) {
  return (row + 2 * col) % 3 - 1;
}
TCB_HD inline int peak_input_b(int row, int col) {
  return (2 * row + col + 1) % 3 - 1;
}

// The tensor-peak loop runs `iterations` times two instructions per accumulator chain, the
// second with B (integer accumulators: exact, the sum grows) or, for every floating-point
// accumulator, with -B so that the pair cancels exactly and |acc| never exceeds |product|; then
// one more with B. `product` is one element of A * B. Returns what that accumulator element must
// hold afterwards.
TCB_HD inline double peak_accumulator(double product, std::int64_t iterations, bool alternate) {
  return alternate ? product : static_cast<double>(2 * iterations + 1) * product;
}

}  // namespace tcbench::numerics
