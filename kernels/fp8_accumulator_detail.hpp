// Private to the accumulator kernels: the per-family launchers behind launch_acc_gemm().
#pragma once

#include "tcbench/kernels/fp8_accumulator.hpp"

namespace tcbench::kernels::detail {

// mma.sync family (fp8_accumulator_mma.cu): e4m3, f16 and bf16 inputs.
void launch_acc_mma(AccPath p, const AccGemm& g, cudaStream_t stream);
// wgmma (fp8_accumulator_wgmma_sm90a.cu; the kernel exists only in the sm_90a cubin).
void launch_acc_wgmma(const AccGemm& g, cudaStream_t stream);
// tcgen05 (fp8_accumulator_tcgen05_sm100a.cu; sm_100a and sm_103a cubins, linked when the build
// targets a Blackwell architecture: TCBENCH_TENSOR_PEAK_TCGEN05).
void launch_acc_tcgen05(const AccGemm& g, cudaStream_t stream);

}  // namespace tcbench::kernels::detail
