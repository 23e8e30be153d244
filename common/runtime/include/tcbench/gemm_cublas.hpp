// cuBLAS GEMMs beside cuBLASLt's (gemm_lt.hpp): cublasGemmEx and cublasGemmStridedBatchedEx, the
// API most users meet Tensor Cores through, directly or via their framework.
//
// The same GemmSpec (gemm_spec.hpp) says what to compute. How cuBLAS computes it follows from the
// precision table's row (precision.hpp): the row's compute type is what cublasGemmEx takes, its
// scale type what alpha and beta are, and the handle's math mode is derived from the compute type
// (blas_math). cuBLAS chooses its kernel itself (CUBLAS_GEMM_DEFAULT): unlike cuBLASLt's plan there
// is no heuristic to ask and no algorithm to read back, which is the point of measuring both.
//
// A spec is checked against what the cuBLAS documentation lists for cublasGemmEx before cuBLAS
// sees it (why_cublas_invalid), so an unsupported combination is a sentence, not a bare
// CUBLAS_STATUS_NOT_SUPPORTED. Validation needs no GPU; the handle and run() do.
#pragma once

#include "tcbench/cuda_owners.hpp"
#include "tcbench/gemm_spec.hpp"
#include "tcbench/precision.hpp"
#include "tcbench/unique_handle.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tcbench {

namespace detail {
struct BlasHandleTraits {
  using handle_type = cublasHandle_t;
  static void destroy(handle_type h) noexcept;
};
}  // namespace detail

// The workspace tcbench gives cuBLAS: the same 32 MiB cuBLASLt's plans may use
// (GemmPlanOptions::max_workspace_bytes), and the size the cuBLAS documentation recommends for
// Hopper (cublasSetWorkspace), so the two APIs differ in how they choose a kernel, not in the
// scratch memory they may use.
inline constexpr std::size_t kBlasWorkspaceBytes = std::size_t{32} << 20;

// The cuBLAS library context and the workspace it runs with, owned together. Creating it needs a
// GPU (cublasCreate fails without one); call require_device() first for a clean NoDevice.
class BlasHandle {
 public:
  // cublasCreate (host pointer mode: alpha and beta are host values) and a workspace of
  // `workspace_bytes` device bytes (cudaMalloc: 256-byte aligned, as cublasSetWorkspace needs).
  explicit BlasHandle(std::size_t workspace_bytes = kBlasWorkspaceBytes);
  // Takes ownership of a handle created elsewhere, without a workspace (nullptr: an empty owner).
  explicit BlasHandle(cublasHandle_t adopt) noexcept : handle_(adopt) {}

  cublasHandle_t get() const noexcept { return handle_.get(); }
  explicit operator bool() const noexcept { return static_cast<bool>(handle_); }
  std::size_t workspace_bytes() const noexcept { return workspace_.bytes(); }

  // Makes the next cuBLAS calls run on `stream`, in the owned workspace, in math mode `mode`.
  // cublasSetStream resets the workspace to cuBLAS's default pool (cuBLAS documentation,
  // cublasSetStream), so the workspace is set after the stream, every time.
  void bind(cudaStream_t stream, cublasMath_t mode) const;

 private:
  // Declared first, destroyed last: the handle is destroyed before the memory it points at.
  DeviceBuffer<std::byte> workspace_;
  UniqueHandle<detail::BlasHandleTraits> handle_;
};

// How cuBLAS runs a precision, derived from its row of the precision table.
struct BlasMath {
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;  // the row's compute type, as cublasGemmEx
                                                     // takes it
  // *_PEDANTIC compute -> CUBLAS_PEDANTIC_MATH (no TF32, no BF16x9 emulation, whatever the
  // environment says), CUBLAS_COMPUTE_32F_FAST_TF32 -> CUBLAS_TF32_TENSOR_OP_MATH, otherwise
  // CUBLAS_DEFAULT_MATH (what a user's handle has).
  cublasMath_t math_mode = CUBLAS_DEFAULT_MATH;
  cudaDataType_t scale = CUDA_R_32F;  // the type of alpha and beta (the row's scale type)
};
BlasMath blas_math(cublasComputeType_t compute, cudaDataType_t scale);
// blas_math(row.compute, row.scale) of p's row.
BlasMath blas_math(Precision p);
// Why cuBLAS cannot run precision p at all ("FP8 GEMMs are cuBLASLt-only ..."), or nullopt.
std::optional<std::string> cublas_unsupported(Precision p);

std::string math_mode_name(cublasMath_t mode);  // "CUBLAS_PEDANTIC_MATH"

// A sentence naming the offending values, or nullopt if cublasGemmEx (batch_count 1) or
// cublasGemmStridedBatchedEx should accept the spec on a GPU of this compute capability: the
// shared shape rules, then the cuBLAS documentation's cublasGemmEx type table, its
// CUBLAS_COMPUTE_32I rules (lda and ldb multiples of 4; every matrix of a batch 4-byte aligned),
// the architecture, and what only cuBLASLt has (FP8, FP4 and FP6, block scaling, epilogues, a D
// apart from C).
std::optional<std::string> why_cublas_invalid(const GemmSpec& spec, int cc_major, int cc_minor);

// The rules of one call: device pointers for A, B and D, C either absent or D itself (cuBLAS
// writes its result over C), A and B 4-byte aligned for CUBLAS_COMPUTE_32I, alpha and beta
// representable in the scale type and, for CUBLAS_COMPUTE_32I, each 0 or 1 (cuBLAS
// documentation, cublasGemmEx). Host-only; run() asks it before every call.
std::optional<std::string> why_cublas_call_invalid(const GemmSpec& spec, const void* a,
                                                   const void* b, const void* c, const void* d,
                                                   double alpha, double beta);

// One cuBLAS GEMM: a validated spec and the math it runs in, on a handle that must outlive it.
class BlasGemm {
 public:
  // Throws InvalidArgument with why_cublas_invalid()'s sentence and the spec. Nothing here
  // touches cuBLAS: an empty handle is refused by run().
  BlasGemm(const BlasHandle& handle, GemmSpec spec, int cc_major, int cc_minor);

  const GemmSpec& spec() const noexcept { return spec_; }
  const BlasMath& math() const noexcept { return math_; }
  bool batched() const noexcept { return spec_.batch_count > 1; }
  // "cublasGemmEx" or "cublasGemmStridedBatchedEx".
  std::string_view function() const noexcept;
  // "cuBLAS GemmEx (CUBLAS_DEFAULT_MATH)", "cuBLAS GemmStridedBatchedEx (CUBLAS_PEDANTIC_MATH)".
  std::string label() const;

  // D = alpha op(A) op(B) + beta D on `stream`, asynchronously: binds the handle (stream,
  // workspace, math mode), checks the call (why_cublas_call_invalid; an empty handle is an
  // InvalidArgument too) and calls cuBLAS. `c` may be null or d (cuBLAS's C is its output).
  void run(cudaStream_t stream, const void* a, const void* b, const void* c, void* d,
           double alpha = 1.0, double beta = 0.0) const;

  std::string describe() const;  // the spec, the function and the math mode

 private:
  const BlasHandle* handle_ = nullptr;
  GemmSpec spec_;
  BlasMath math_;
};

}  // namespace tcbench
