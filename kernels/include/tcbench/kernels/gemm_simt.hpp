// FP32 GEMM on CUDA cores (FFMA only): the baseline that tensor-core speed-ups are measured from.
#pragma once

#include "tcbench/gemm_problem.hpp"

#include <cuda_runtime_api.h>

namespace tcbench::kernels {

// D = A * B, column-major, NN only (p.trans_a = p.trans_b = false), p resolved. Any m, n, k.
// Enqueues on `stream` and makes no other runtime call, so event timing sees only the kernel.
void gemm_simt_fp32(const GemmProblem& p, const float* a, const float* b, float* d,
                    cudaStream_t stream);

}  // namespace tcbench::kernels
