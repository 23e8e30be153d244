// The mma.sync tensor-peak kernel, shared by the portable instructions (tensor_peak_mma.cu) and
// GeForce Blackwell's FP8/FP6/FP4 kinds (tensor_peak_mma_blackwell.cu, sm_120f): every warp holds
// one A and one B fragment in registers and issues its Op's mma.sync into kChains independent
// accumulators in a loop, nothing else.
//
// An Op gives: kARegs/kBRegs/kCRegs (32-bit registers of A, B and the accumulator), kPerReg
// (elements per register: k = 8 * kPerReg), kBytes (bytes per element in the host's tile),
// kBits (bits per element in a register: 8 * kBytes, or 4 for packed FP4), kNegate (the bits that
// flip the sign of every element of a B register), Acc, mma(d, a, b) and element(d, e).
//
// The templates sit in an unnamed namespace on purpose: each including file instantiates them
// for its own Ops, with internal linkage, and the kernels keep the mangled names the SASS rules
// match (tests/sass/sass_rules.json: tensor_peak_mma_kernelINS2_<Op>).
#pragma once

#include "tcbench/error.hpp"
#include "tcbench/kernels/tensor_peak.hpp"
#include "tcbench/numerics/mma_fragments.hpp"

#include <cstddef>
#include <cstdint>

namespace tcbench::kernels::detail {
namespace {  // NOLINT(google-build-namespaces): per-file kernels, see above

constexpr int kChains = 8;     // independent accumulators per warp: hides the HMMA latency
constexpr int kThreads = 128;  // 4 warps, one per SM sub-partition

__device__ inline long long global_nanos() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Reads element `index` (raw bits, Op::kBytes wide) of a tile.
template <class Op>
__device__ inline std::uint32_t raw_element(const std::uint8_t* tile, int index) {
  const std::uint8_t* p = tile + static_cast<std::size_t>(index) * Op::kBytes;
  if constexpr (Op::kBytes == 4) return *reinterpret_cast<const std::uint32_t*>(p);
  if constexpr (Op::kBytes == 2) return *reinterpret_cast<const std::uint16_t*>(p);
  return *p;
}

template <class Op>
__global__ void __launch_bounds__(kThreads)
    tensor_peak_mma_kernel(const std::uint8_t* __restrict__ a, const std::uint8_t* __restrict__ b,
                           double* __restrict__ out, PeakClocks* __restrict__ clocks,
                           long long iterations, bool alternate) {
  constexpr int kK = 8 * Op::kPerReg;  // the instruction's k: 8, 16, 32 or 64
  constexpr int kBits = Op::kBits;
  const int lane = threadIdx.x % 32;

  // Fragments, packed lower element in the lower bits, as the PTX ISA specifies.
  std::uint32_t ra[Op::kARegs] = {}, rb[Op::kBRegs] = {}, rb_second[Op::kBRegs];
  for (int e = 0; e < Op::kARegs * Op::kPerReg; ++e) {
    const numerics::RowCol rc = numerics::mma_a_element(lane, e, Op::kPerReg);
    ra[e / Op::kPerReg] |= raw_element<Op>(a, rc.row * kK + rc.col) << (kBits * (e % Op::kPerReg));
  }
  for (int e = 0; e < Op::kBRegs * Op::kPerReg; ++e) {
    const numerics::RowCol rc = numerics::mma_b_element(lane, e, Op::kPerReg);
    rb[e / Op::kPerReg] |= raw_element<Op>(b, rc.col * kK + rc.row) << (kBits * (e % Op::kPerReg));
  }
  // -B for the alternating (floating-point) accumulators: every element's sign bit flipped.
#pragma unroll
  for (int r = 0; r < Op::kBRegs; ++r) rb_second[r] = alternate ? rb[r] ^ Op::kNegate : rb[r];

  typename Op::Acc acc[kChains][Op::kCRegs] = {};
  long long cycles0 = 0, nanos0 = 0;
  __syncthreads();
  if (threadIdx.x == 0) {
    cycles0 = clock64();
    nanos0 = global_nanos();
  }
  // One trip per loop body: the SASS test counts one trip's mma.sync in the hot loop, so ptxas
  // folding identical products (as it does for emulated FP8 on sm_90) cannot hide in unrolling.
  // 16 tensor instructions per trip dwarf the loop's 4 or 5 counter and branch instructions.
#pragma unroll 1
  for (long long it = 0; it < iterations; ++it) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) Op::mma(acc[c], ra, rb);
#pragma unroll
    for (int c = 0; c < kChains; ++c) Op::mma(acc[c], ra, rb_second);
  }
#pragma unroll
  for (int c = 0; c < kChains; ++c) Op::mma(acc[c], ra, rb);
  __syncthreads();
  if (threadIdx.x == 0) clocks[blockIdx.x] = {clock64() - cycles0, global_nanos() - nanos0};

  // out[warp][chain][row][col], 16 x 8 per chain, as doubles (exact for every accumulator).
  const std::size_t warp = blockIdx.x * (kThreads / 32) + threadIdx.x / 32;
#pragma unroll
  for (int c = 0; c < kChains; ++c)
    for (int e = 0; e < 4; ++e) {
      const numerics::RowCol rc = numerics::mma_c_element(lane, e);
      out[((warp * kChains + c) * 16 + rc.row) * 8 + rc.col] = Op::element(acc[c], e);
    }
}

template <class Op>
void launch(const PeakLaunch& launch, const PeakBuffers& buf, bool alternate, cudaStream_t s) {
  if (alternate && Op::kNegate == 0)
    throw InvalidArgument("launch_mma_peak: this instruction's inputs have no sign bit to flip");
  tensor_peak_mma_kernel<Op><<<launch.blocks, kThreads, 0, s>>>(
      static_cast<const std::uint8_t*>(buf.a), static_cast<const std::uint8_t*>(buf.b),
      static_cast<double*>(buf.out), buf.clocks, launch.iterations, alternate);
}

template <class Op>
int blocks_per_sm() {
  int blocks = 0;
  TCB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, tensor_peak_mma_kernel<Op>,
                                                         kThreads, 0));
  return blocks;
}

}  // namespace
}  // namespace tcbench::kernels::detail
