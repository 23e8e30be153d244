#include "tcbench/gemm_cublas.hpp"

#include "tcbench/error.hpp"
#include "tcbench/scale_value.hpp"

#include <algorithm>
#include <cstdint>
#include <span>

namespace tcbench {

// ---------------------------------------------------------------------------------------------
// The handle

namespace detail {
void BlasHandleTraits::destroy(handle_type h) noexcept {
  TCB_CUBLAS_NOEXCEPT(cublasDestroy(h));
}
}  // namespace detail

BlasHandle::BlasHandle(std::size_t workspace_bytes) {
  cublasHandle_t h = nullptr;
  TCB_CUBLAS_CTX(cublasCreate(&h), "creating the cuBLAS handle");
  handle_ = UniqueHandle<detail::BlasHandleTraits>(h);
  TCB_CUBLAS_CTX(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST),
                 "alpha and beta are host values");
  if (workspace_bytes > 0) workspace_ = DeviceBuffer<std::byte>(workspace_bytes);
}

void BlasHandle::bind(cudaStream_t stream, cublasMath_t mode) const {
  const cublasHandle_t h = get();
  TCB_CUBLAS_CTX(cublasSetStream(h, stream), "binding the cuBLAS handle to the harness's stream");
  if (workspace_.bytes() > 0)
    TCB_CUBLAS_CTX(cublasSetWorkspace(h, workspace_.get(), workspace_.bytes()),
                   "a " + std::to_string(workspace_.bytes()) + "-byte workspace");
  TCB_CUBLAS_CTX(cublasSetMathMode(h, mode), "math mode " + math_mode_name(mode));
}

// ---------------------------------------------------------------------------------------------
// Math per precision

namespace {

bool is_pedantic(cublasComputeType_t c) {
  return c == CUBLAS_COMPUTE_16F_PEDANTIC || c == CUBLAS_COMPUTE_32F_PEDANTIC ||
         c == CUBLAS_COMPUTE_64F_PEDANTIC || c == CUBLAS_COMPUTE_32I_PEDANTIC;
}

bool is_int32_compute(cublasComputeType_t c) {
  return c == CUBLAS_COMPUTE_32I || c == CUBLAS_COMPUTE_32I_PEDANTIC;
}

}  // namespace

BlasMath blas_math(cublasComputeType_t compute, cudaDataType_t scale) {
  BlasMath m;
  m.compute = compute;
  m.scale = scale;
  // cublas_api.h: CUBLAS_PEDANTIC_MATH is "the same as using the matching _PEDANTIC compute
  // type"; setting both keeps a handle shared with other code from opting into TF32 or BF16x9.
  if (is_pedantic(compute))
    m.math_mode = CUBLAS_PEDANTIC_MATH;
  else if (compute == CUBLAS_COMPUTE_32F_FAST_TF32)
    m.math_mode = CUBLAS_TF32_TENSOR_OP_MATH;
  else
    m.math_mode = CUBLAS_DEFAULT_MATH;
  return m;
}

BlasMath blas_math(Precision p) {
  return blas_math(info(p).compute, info(p).scale);
}

std::optional<std::string> cublas_unsupported(Precision p) {
  const PrecisionInfo& row = info(p);
  if (is_fp8_type(row.a))
    return "FP8 GEMMs are cuBLASLt-only: cublasGemmEx and cublasGemmStridedBatchedEx take no FP8 "
           "type (cuBLAS documentation, cublasGemmEx), so tcbench runs " +
           std::string(row.name) + " through cuBLASLt.";
  if (is_fp4_type(row.a) || is_fp6_type(row.a))
    return "Block-scaled " + std::string(row.name) +
           " GEMMs are cuBLASLt-only: cublasGemmEx takes no FP4 or FP6 type and no scale tensors "
           "(cuBLAS documentation, cublasGemmEx and cublasLtMatmul).";
  return std::nullopt;
}

std::string math_mode_name(cublasMath_t mode) {
  switch (mode) {
    case CUBLAS_DEFAULT_MATH:
      return "CUBLAS_DEFAULT_MATH";
    case CUBLAS_TENSOR_OP_MATH:
      return "CUBLAS_TENSOR_OP_MATH";
    case CUBLAS_PEDANTIC_MATH:
      return "CUBLAS_PEDANTIC_MATH";
    case CUBLAS_TF32_TENSOR_OP_MATH:
      return "CUBLAS_TF32_TENSOR_OP_MATH";
    case CUBLAS_FP32_EMULATED_BF16X9_MATH:
      return "CUBLAS_FP32_EMULATED_BF16X9_MATH";
    case CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH:
      return "CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH";
    case CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION:
      return "CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION";
  }
  return "cublasMath_t(" + std::to_string(static_cast<int>(mode)) + ")";
}

// ---------------------------------------------------------------------------------------------
// Validation

namespace {

using Why = std::optional<std::string>;

// cublasGemmEx's real (non-complex) combinations (cuBLAS 13.x documentation, cublasGemmEx: compute
// type, scale type, Atype/Btype, Ctype), one per line.
struct BlasCombo {
  cudaDataType_t ab, c, scale;
  std::span<const cublasComputeType_t> compute;
};
constexpr cublasComputeType_t kCompute16[] = {CUBLAS_COMPUTE_16F, CUBLAS_COMPUTE_16F_PEDANTIC};
constexpr cublasComputeType_t kCompute32I[] = {CUBLAS_COMPUTE_32I, CUBLAS_COMPUTE_32I_PEDANTIC};
constexpr cublasComputeType_t kCompute32[] = {CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_PEDANTIC};
constexpr cublasComputeType_t kCompute32All[] = {
    CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_COMPUTE_32F_FAST_16F,
    CUBLAS_COMPUTE_32F_FAST_16BF, CUBLAS_COMPUTE_32F_FAST_TF32};
constexpr cublasComputeType_t kCompute64[] = {CUBLAS_COMPUTE_64F, CUBLAS_COMPUTE_64F_PEDANTIC};

// clang-format off
constexpr BlasCombo kBlasCombos[] = {
    {CUDA_R_16F,  CUDA_R_16F,  CUDA_R_16F, kCompute16},
    {CUDA_R_8I,   CUDA_R_32I,  CUDA_R_32I, kCompute32I},
    {CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, kCompute32},
    {CUDA_R_16F,  CUDA_R_16F,  CUDA_R_32F, kCompute32},
    {CUDA_R_8I,   CUDA_R_32F,  CUDA_R_32F, kCompute32},
    {CUDA_R_16BF, CUDA_R_32F,  CUDA_R_32F, kCompute32},
    {CUDA_R_16F,  CUDA_R_32F,  CUDA_R_32F, kCompute32},
    {CUDA_R_32F,  CUDA_R_32F,  CUDA_R_32F, kCompute32All},  // FAST_*: FP32 data only
    {CUDA_R_64F,  CUDA_R_64F,  CUDA_R_64F, kCompute64},
};
// clang-format on

bool in_blas_table(const GemmSpec& s) {
  if (s.a_type != s.b_type) return false;
  for (const BlasCombo& row : kBlasCombos) {
    if (row.ab != s.a_type || row.c != s.c_type || row.scale != s.scale_type) continue;
    if (std::find(row.compute.begin(), row.compute.end(), s.compute_type) != row.compute.end())
      return true;
  }
  return false;
}

std::string dims_text(const GemmProblem& p) {
  return "m=" + std::to_string(p.m) + " n=" + std::to_string(p.n) + " k=" + std::to_string(p.k);
}

std::string pair(const GemmSpec& s) {
  return data_type_name(s.a_type) + " x " + data_type_name(s.b_type);
}

Why rule_cublaslt_only(const GemmSpec& s) {
  if (is_fp8_type(s.a_type) || is_fp8_type(s.b_type))
    return "FP8 GEMMs (" + pair(s) +
           ") are cuBLASLt-only: cublasGemmEx and cublasGemmStridedBatchedEx take no FP8 type "
           "(cuBLAS documentation, cublasGemmEx).";
  if (s.is_narrow())
    return "FP4 and FP6 GEMMs (" + pair(s) +
           ") are cuBLASLt-only and block-scaled: cublasGemmEx takes neither their types nor "
           "scale tensors (cuBLAS documentation, cublasGemmEx).";
  if (s.scale_mode != ScaleMode::tensor || s.a_scale != nullptr || s.b_scale != nullptr ||
      s.d_scale != nullptr || s.amax_d != nullptr || s.fast_accum)
    return "Scale tensors, D scales, amax_D and fast accumulation are cuBLASLt matmul "
           "attributes; cublasGemmEx has only alpha and beta.";
  if (s.epilogue != CUBLASLT_EPILOGUE_DEFAULT || s.bias != nullptr)
    return "Epilogues and bias vectors are cuBLASLt matmul attributes; cublasGemmEx computes "
           "alpha op(A) op(B) + beta C only.";
  return std::nullopt;
}

// cublasGemmEx writes its result over C: tcbench's C (which aliases D) and D must be one matrix.
Why rule_c_is_d(const GemmSpec& s) {
  const GemmProblem& p = s.problem;
  if (s.c_type != s.d_type)
    return "cublasGemmEx writes D over C, so C and D must have one type; got C " +
           data_type_name(s.c_type) + " and D " + data_type_name(s.d_type) + ".";
  if (p.effective_ldc() != p.effective_ldd())
    return "cublasGemmEx writes D over C, so ldc and ldd must be equal; got ldc=" +
           std::to_string(p.effective_ldc()) + " ldd=" + std::to_string(p.effective_ldd()) + ".";
  if (s.batch_count > 1 && s.effective_stride_c() != s.effective_stride_d())
    return "cublasGemmStridedBatchedEx writes D over C, so their batch strides must be equal; "
           "got " +
           std::to_string(s.effective_stride_c()) + " and " +
           std::to_string(s.effective_stride_d()) + " elements.";
  return std::nullopt;
}

Why rule_blas_types(const GemmSpec& s) {
  if (in_blas_table(s)) return std::nullopt;
  return "A " + data_type_name(s.a_type) + ", B " + data_type_name(s.b_type) + ", C " +
         data_type_name(s.c_type) + " with " + compute_type_name(s.compute_type) + " and scale " +
         data_type_name(s.scale_type) +
         " is not a combination cublasGemmEx supports (cuBLAS documentation, cublasGemmEx).";
}

// cuBLAS documentation, cublasGemmEx: the CUBLAS_COMPUTE_32I path needs A and B 32-bit aligned and
// lda, ldb multiples of 4. For a strided batch every matrix must start aligned, so the strides of
// A and B (in 1-byte INT8 elements) must be multiples of 4 too.
Why rule_blas_int32(const GemmSpec& s) {
  if (!is_int32_compute(s.compute_type)) return std::nullopt;
  const GemmProblem& p = s.problem;
  if (p.effective_lda() % 4 != 0 || p.effective_ldb() % 4 != 0)
    return "cublasGemmEx with CUBLAS_COMPUTE_32I needs lda and ldb to be multiples of 4; got lda=" +
           std::to_string(p.effective_lda()) + " ldb=" + std::to_string(p.effective_ldb()) + " (" +
           dims_text(p) + ").";
  if (s.batch_count > 1 && (s.effective_stride_a() % 4 != 0 || s.effective_stride_b() % 4 != 0))
    return "cublasGemmStridedBatchedEx with CUBLAS_COMPUTE_32I needs every A and B of the batch "
           "4-byte aligned, so strides that are multiples of 4 INT8 elements; got stride_a=" +
           std::to_string(s.effective_stride_a()) +
           " stride_b=" + std::to_string(s.effective_stride_b()) + ".";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> why_cublas_invalid(const GemmSpec& s, int cc_major, int cc_minor) {
  if (auto why = s.why_shape_invalid("cuBLAS")) return why;
  if (auto why = rule_cublaslt_only(s)) return why;
  if (auto why = rule_c_is_d(s)) return why;
  if (auto why = rule_blas_types(s)) return why;
  if (auto why = s.why_gpu_lacks(cc_major, cc_minor)) return why;
  return rule_blas_int32(s);
}

std::optional<std::string> why_cublas_call_invalid(const GemmSpec& s, const void* a, const void* b,
                                                   const void* c, const void* d, double alpha,
                                                   double beta) {
  if (a == nullptr || b == nullptr || d == nullptr)
    return std::string("A cuBLAS GEMM needs A, B and D device pointers; got A ") +
           (a ? "set" : "null") + ", B " + (b ? "set" : "null") + ", D " + (d ? "set" : "null") +
           ".";
  if (c != nullptr && c != d)
    return "cublasGemmEx writes D over C: C must be D itself (or absent), not a separate matrix.";
  if (is_int32_compute(s.compute_type)) {
    const auto misaligned = [](const void* p) {
      return reinterpret_cast<std::uintptr_t>(p) % 4 != 0;
    };
    if (misaligned(a) || misaligned(b))
      return "cublasGemmEx with CUBLAS_COMPUTE_32I needs A and B 4-byte aligned; A starts at "
             "offset " +
             std::to_string(reinterpret_cast<std::uintptr_t>(a) % 4) + " and B at offset " +
             std::to_string(reinterpret_cast<std::uintptr_t>(b) % 4) + " of 4.";
    const auto zero_or_one = [](double v) { return v == 0.0 || v == 1.0; };
    if (!zero_or_one(alpha) || !zero_or_one(beta))
      return "cublasGemmEx with CUBLAS_COMPUTE_32I takes alpha and beta of 0 or 1 only; got "
             "alpha=" +
             std::to_string(alpha) + " beta=" + std::to_string(beta) +
             " (requantize through cuBLASLt's float alpha instead).";
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// BlasGemm

BlasGemm::BlasGemm(const BlasHandle& handle, GemmSpec spec, int cc_major, int cc_minor)
    : handle_(&handle),
      spec_(std::move(spec)),
      math_(blas_math(spec_.compute_type, spec_.scale_type)) {
  if (auto why = why_cublas_invalid(spec_, cc_major, cc_minor))
    throw InvalidArgument(*why + " [" + spec_.describe() + "]");
}

std::string_view BlasGemm::function() const noexcept {
  return batched() ? "cublasGemmStridedBatchedEx" : "cublasGemmEx";
}

std::string BlasGemm::label() const {
  return std::string(batched() ? "cuBLAS GemmStridedBatchedEx" : "cuBLAS GemmEx") + " (" +
         math_mode_name(math_.math_mode) + ")";
}

std::string BlasGemm::describe() const {
  return spec_.describe() + ", " + std::string(function()) + ", " + math_mode_name(math_.math_mode);
}

void BlasGemm::run(cudaStream_t stream, const void* a, const void* b, const void* c, void* d,
                   double alpha, double beta) const {
  if (auto why = why_cublas_call_invalid(spec_, a, b, c, d, alpha, beta))
    throw InvalidArgument(*why + " [" + describe() + "]");
  if (!*handle_)
    throw InvalidArgument("a cuBLAS GEMM needs a live BlasHandle [" + describe() + "]");
  const ScaleValue alpha_v = to_scale_value(alpha, spec_, "alpha");
  const ScaleValue beta_v = to_scale_value(beta, spec_, "beta");
  handle_->bind(stream, math_.math_mode);
  const GemmProblem& p = spec_.problem;
  const auto op = [](bool transposed) { return transposed ? CUBLAS_OP_T : CUBLAS_OP_N; };
  // why_cublas_invalid() checked that every dimension fits in int32.
  const auto i32 = [](std::int64_t v) { return static_cast<int>(v); };
  if (!batched()) {
    TCB_CUBLAS_CTX(cublasGemmEx(handle_->get(), op(p.trans_a), op(p.trans_b), i32(p.m), i32(p.n),
                                i32(p.k), alpha_v.get(), a, spec_.a_type, i32(p.effective_lda()), b,
                                spec_.b_type, i32(p.effective_ldb()), beta_v.get(), d, spec_.d_type,
                                i32(p.effective_ldd()), math_.compute, CUBLAS_GEMM_DEFAULT),
                   describe());
    return;
  }
  TCB_CUBLAS_CTX(
      cublasGemmStridedBatchedEx(
          handle_->get(), op(p.trans_a), op(p.trans_b), i32(p.m), i32(p.n), i32(p.k), alpha_v.get(),
          a, spec_.a_type, i32(p.effective_lda()), spec_.effective_stride_a(), b, spec_.b_type,
          i32(p.effective_ldb()), spec_.effective_stride_b(), beta_v.get(), d, spec_.d_type,
          i32(p.effective_ldd()), spec_.effective_stride_d(), spec_.batch_count, math_.compute,
          CUBLAS_GEMM_DEFAULT),
      describe());
}

}  // namespace tcbench
