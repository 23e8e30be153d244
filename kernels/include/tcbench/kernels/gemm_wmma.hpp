// Our own tensor-core GEMMs through WMMA, one family in one file (kernels/gemm_wmma.cu), versions
// side by side: FP16/BF16 in, FP32 accumulate, NN (HMMA); INT8 in, INT32 accumulate, TN (IMMA).
// 64x64 block tiles of four 32x32 warp tiles, single-buffered: plain on purpose, to show what a
// straightforward tensor-core kernel reaches next to cuBLASLt. Any m, n, k (edge tiles are
// zero-padded); the INT8 result is exact.
#pragma once

#include "tcbench/gemm_problem.hpp"
#include "tcbench/precision.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string>

namespace tcbench::kernels {

// Why the WMMA GEMM cannot run precision p on problem `problem` on this GPU (fp16 and bf16 need
// NN, bf16 compute capability 8.0; int8 needs TN and 7.5), or nullopt.
std::optional<std::string> wmma_unsupported_reason(int cc_major, int cc_minor, Precision p,
                                                   const GemmProblem& problem);

// D = A B, FP32 accumulate, D in T (T = __half or __nv_bfloat16); NN.
template <typename T>
void gemm_wmma(const GemmProblem& p, const T* a, const T* b, T* d, cudaStream_t stream);

// D = A B in int32 (exact); TN (A and B K-contiguous, as cuBLASLt's IMMA path).
void gemm_wmma_int8(const GemmProblem& p, const std::int8_t* a, const std::int8_t* b,
                    std::int32_t* d, cudaStream_t stream);

}  // namespace tcbench::kernels
