// What one cuBLASLt GEMM computes: a GemmSpec (shape, element types, compute and scale types,
// epilogue, FP8 scaling) and the rules it must meet on a given compute capability. Pure host
// code: validation needs no GPU and no cuBLASLt handle. Descriptors and plans are gemm_lt.hpp.
//
// Column-major throughout: D = alpha * op(A) * op(B) + beta * C, op(A) is m x k, op(B) k x n,
// C and D m x n. "TN" means A transposed (stored k x m) and B not (stored k x n), i.e. both
// operands K-contiguous, which INT8 and (before Blackwell datacenter parts) FP8 require.
#pragma once

#include "tcbench/gemm_problem.hpp"
#include "tcbench/numerics/element.hpp"
#include "tcbench/precision.hpp"
#include "tcbench/scale_modes.hpp"

#include <cublasLt.h>
#include <library_types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tcbench {

// The element table's row of a cudaDataType_t (numerics/element.hpp; CUDA_R_32F is FP32);
// throws InvalidArgument for a type tcbench has no row for.
numerics::Element element_of(cudaDataType_t t);
// Lookups in that row ("cudaDataType_t(N)" and 0 for a type without one):
std::string data_type_name(cudaDataType_t t);          // "CUDA_R_8F_E4M3"
std::string compute_type_name(cublasComputeType_t t);  // "CUBLAS_COMPUTE_32F"
std::size_t data_type_bytes(cudaDataType_t t);         // 0 for the sub-byte FP6 and FP4 too
std::size_t data_type_bits(cudaDataType_t t);          // 4 for FP4, 6 for FP6, 8 * bytes else
std::string cc_string(int cc_major, int cc_minor);     // "9.0": the one cc formatter
// 90 for 9.0: the one number compute capabilities are compared by.
constexpr int cc_number(int cc_major, int cc_minor) {
  return cc_major * 10 + cc_minor;
}
bool is_fp8_type(cudaDataType_t t);
bool is_fp4_type(cudaDataType_t t);
bool is_fp6_type(cudaDataType_t t);
// FP8, FP6 or FP4: the types cuBLASLt scales (cuBLAS documentation, "Narrow Precision Data
// Types Usage").
bool is_narrow_type(cudaDataType_t t);

struct GemmSpec {
  GemmProblem problem;  // m, n, k, transposes, leading dimensions (0 = tightest)
  cudaDataType_t a_type = CUDA_R_32F, b_type = CUDA_R_32F, c_type = CUDA_R_32F, d_type = CUDA_R_32F;
  cublasComputeType_t compute_type = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale_type = CUDA_R_32F;  // type of alpha and beta
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;  // device vector of length m for the BIAS epilogues
  // FP8 tensor-wide scaling (device fp32 scalars; null means 1): D = d_scale * (alpha *
  // a_scale * b_scale * op(A) op(B) + beta * C), amax_d = max|D| before d_scale.
  // With a block scale mode (scale_mode, scale_modes.hpp) a_scale and b_scale are the device
  // scale tensors, in the layout and element type of the mode (numerics/scale_layout.hpp), and
  // a_scale_count / b_scale_count how many scale elements each holds, so that a tensor of the
  // wrong size or alignment is refused before cuBLASLt reads it.
  ScaleMode scale_mode = ScaleMode::tensor;
  const void* a_scale = nullptr;
  const void* b_scale = nullptr;
  std::int64_t a_scale_count = 0, b_scale_count = 0;
  const float* d_scale = nullptr;
  float* amax_d = nullptr;
  bool fast_accum = false;  // FP8 only: skip the periodic promotion of partial sums
  std::int32_t batch_count = 1;
  // Strided batch, in elements; 0: matrices packed back to back (ld x columns). Matrix i of A
  // starts at A + i * effective_stride_a(), and so on (cuBLASLt's STRIDED_BATCH_OFFSET and
  // cublasGemmStridedBatchedEx's strideA; for cuBLAS a stride of 0 would mean "the same matrix
  // for every i", so the libraries are always given the effective stride).
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0, stride_d = 0;

  // The configuration tcbench measures for precision p at m x n x k (tightest leading
  // dimensions): the types, compute and scale type and layout of p's row in the precision table
  // (precision.hpp); edit fields from there.
  static GemmSpec for_precision(Precision p, std::int64_t m, std::int64_t n, std::int64_t k);
  // for_precision with scale mode `mode` (scale_modes.hpp) and the scale-tensor sizes its layout
  // needs at m x n x k; the caller points a_scale and b_scale at tensors of that size.
  static GemmSpec for_scaling(Precision p, ScaleMode mode, std::int64_t m, std::int64_t n,
                              std::int64_t k);

  // The batch strides in elements: stride_x, or the packed ld x columns of one matrix when 0.
  std::int64_t effective_stride_a() const;
  std::int64_t effective_stride_b() const;
  std::int64_t effective_stride_c() const;
  std::int64_t effective_stride_d() const;
  // Useful FLOPs (or integer OPs) of one call: 2 m n k for each of the batch_count matrices.
  double flops() const;

  bool is_fp8() const;
  bool is_fp4() const;
  bool is_narrow() const;  // FP8, FP6 or FP4 operands
  bool is_int8() const;
  // The scale elements cuBLASLt reads for A and B under scale_mode (0 for tensor scaling).
  std::int64_t a_scale_elements() const;
  std::int64_t b_scale_elements() const;

  // A sentence naming the offending values, or nullopt if cuBLASLt should accept the spec on
  // a GPU of this compute capability.
  std::optional<std::string> why_invalid(int cc_major, int cc_minor) const;
  // The shape rules every GEMM library tcbench calls shares (positive sizes, leading dimensions
  // and sizes in int32, batch count and strides, batch outputs that do not overlap), as a
  // sentence naming `library` ("cuBLASLt", "cuBLAS"); why_invalid() asks it first.
  std::optional<std::string> why_shape_invalid(std::string_view library) const;
  // Why a GPU of compute capability cc_major.cc_minor lacks this spec's precision (BF16, TF32
  // before 8.0; FP8 before 8.9; FP4 before 10.0), as one sentence; both libraries ask it.
  std::optional<std::string> why_gpu_lacks(int cc_major, int cc_minor) const;
  // Throws InvalidArgument with why_invalid()'s sentence followed by describe().
  void validate(int cc_major, int cc_minor) const;
  // One line: sizes, types, ops, lds, compute/scale types, epilogue, flags.
  std::string describe() const;
};

}  // namespace tcbench
