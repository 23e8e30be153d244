// FP16/BF16 GEMM on tensor cores through the WMMA API (HMMA), FP32 accumulate.
#pragma once

#include "tcbench/gemm_problem.hpp"
#include "tcbench/precision.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <optional>
#include <string>

namespace tcbench::kernels {

// Why gemm_wmma<T> cannot run on a GPU of compute capability major.minor, or nullopt if it can.
// (BF16 WMMA needs sm_80; FP16 WMMA runs on every architecture tcbench supports.)
std::optional<std::string> wmma_unsupported_reason(int cc_major, int cc_minor, Precision p);

// D = A * B with T inputs and output, FP32 accumulation. Column-major, NN only, p resolved;
// any m, n, k (edge tiles are zero-padded in shared memory). T is __half or __nv_bfloat16.
template <typename T>
void gemm_wmma(const GemmProblem& p, const T* a, const T* b, T* d, cudaStream_t stream);

}  // namespace tcbench::kernels
