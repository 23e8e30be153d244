// Private to the accumulator kernels: the per-family launchers behind launch_acc_gemm().
#pragma once

#include "tcbench/kernels/fp8_accumulator.hpp"
#include "tcbench/numerics/mma_descriptors.hpp"

#include <cstddef>
#include <cstdint>

namespace tcbench::kernels::detail {

// mma.sync family (fp8_accumulator_mma.cu): e4m3, f16 and bf16 inputs.
void launch_acc_mma(AccPath p, const AccGemm& g, cudaStream_t stream);
// wgmma (fp8_accumulator_wgmma_sm90a.cu; the kernel exists only in the sm_90a cubin).
void launch_acc_wgmma(const AccGemm& g, cudaStream_t stream);
// tcgen05 (fp8_accumulator_tcgen05_sm100a.cu; sm_100a and sm_103a cubins, linked when the build
// targets a Blackwell architecture: TCBENCH_TENSOR_PEAK_TCGEN05).
void launch_acc_tcgen05(const AccGemm& g, cudaStream_t stream);

#ifdef __CUDACC__
// Rows [row0, row0 + rows) of a K-contiguous matrix, bytes [k0, k0 + 32) of each, into a K-major
// shared-memory slice (the wgmma and tcgen05 kernels' operand layout): one 16-byte load and
// store per thread and chunk, by a block of Threads threads.
template <int Threads>
__device__ inline void stage_kmajor_slice(std::uint8_t* slice, const std::uint8_t* m, int k,
                                          int row0, int rows, int k0) {
  for (int c = threadIdx.x; c < rows * 2; c += Threads) {
    const int row = c / 2, half = c % 2;
    const uint4 v = *reinterpret_cast<const uint4*>(m + static_cast<std::size_t>(row0 + row) * k +
                                                    k0 + 16 * half);
    *reinterpret_cast<uint4*>(slice + numerics::kmajor_smem_offset(row, 16 * half)) = v;
  }
}
#endif

}  // namespace tcbench::kernels::detail
