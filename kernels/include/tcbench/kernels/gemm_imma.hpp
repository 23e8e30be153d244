// INT8 GEMM on tensor cores through the WMMA API (signed char, m16n16k16: IMMA), int32
// accumulate and output. The layout is cuBLASLt's IMMA layout, "TN": A stored k x m (each output
// row's K values contiguous, like a row-major [out, in] weight), B stored k x n.
#pragma once

#include "tcbench/gemm_problem.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string>

namespace tcbench::kernels {

// Why gemm_imma cannot run problem p on compute capability major.minor, or nullopt if it can.
// IMMA needs sm_75 (Turing); the kernel implements TN only (any m, n, k: edges are zero-padded).
std::optional<std::string> imma_unsupported_reason(int cc_major, int cc_minor,
                                                   const GemmProblem& p);

// D (int32, m x n, column-major) = op(A) * op(B) with A, B int8, TN, p resolved. Exact: every
// int8 x int8 product and their int32 sum are representable (|sum| < 2^31 for k < 2^17).
void gemm_imma(const GemmProblem& p, const std::int8_t* a, const std::int8_t* b, std::int32_t* d,
               cudaStream_t stream);

}  // namespace tcbench::kernels
