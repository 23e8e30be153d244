// Element-wise conversion of FP32 activations to a GEMM's 16-bit input format, with the same
// round-to-nearest-even as the harness's input fill (convert_sample in random_fill.hpp), so a
// layer fed with converted activations sees exactly what a fill of those values would give.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>

namespace tcbench::kernels {

// out[i] = convert_sample<T>(in[i]) for T = __half or __nv_bfloat16. Asynchronous on `stream`.
void convert(const float* in, std::size_t n, __half* out, cudaStream_t stream);
void convert(const float* in, std::size_t n, __nv_bfloat16* out, cudaStream_t stream);

}  // namespace tcbench::kernels
