#include "tcbench/gemm_lt.hpp"

#include <cuda_fp16.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <source_location>
#include <sstream>

namespace tcbench {

// ---------------------------------------------------------------------------------------------
// Names

std::string data_type_name(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_16F:
      return "CUDA_R_16F";
    case CUDA_R_16BF:
      return "CUDA_R_16BF";
    case CUDA_R_32F:
      return "CUDA_R_32F";
    case CUDA_R_64F:
      return "CUDA_R_64F";
    case CUDA_R_8I:
      return "CUDA_R_8I";
    case CUDA_R_8U:
      return "CUDA_R_8U";
    case CUDA_R_32I:
      return "CUDA_R_32I";
    case CUDA_R_8F_E4M3:
      return "CUDA_R_8F_E4M3";
    case CUDA_R_8F_E5M2:
      return "CUDA_R_8F_E5M2";
    case CUDA_R_8F_UE8M0:
      return "CUDA_R_8F_UE8M0";
    case CUDA_R_4F_E2M1:
      return "CUDA_R_4F_E2M1";
    default:
      return "cudaDataType_t(" + std::to_string(static_cast<int>(t)) + ")";
  }
}

std::string compute_type_name(cublasComputeType_t t) {
  switch (t) {
    case CUBLAS_COMPUTE_16F:
      return "CUBLAS_COMPUTE_16F";
    case CUBLAS_COMPUTE_16F_PEDANTIC:
      return "CUBLAS_COMPUTE_16F_PEDANTIC";
    case CUBLAS_COMPUTE_32F:
      return "CUBLAS_COMPUTE_32F";
    case CUBLAS_COMPUTE_32F_PEDANTIC:
      return "CUBLAS_COMPUTE_32F_PEDANTIC";
    case CUBLAS_COMPUTE_32F_FAST_16F:
      return "CUBLAS_COMPUTE_32F_FAST_16F";
    case CUBLAS_COMPUTE_32F_FAST_16BF:
      return "CUBLAS_COMPUTE_32F_FAST_16BF";
    case CUBLAS_COMPUTE_32F_FAST_TF32:
      return "CUBLAS_COMPUTE_32F_FAST_TF32";
    case CUBLAS_COMPUTE_64F:
      return "CUBLAS_COMPUTE_64F";
    case CUBLAS_COMPUTE_64F_PEDANTIC:
      return "CUBLAS_COMPUTE_64F_PEDANTIC";
    case CUBLAS_COMPUTE_32I:
      return "CUBLAS_COMPUTE_32I";
    case CUBLAS_COMPUTE_32I_PEDANTIC:
      return "CUBLAS_COMPUTE_32I_PEDANTIC";
    default:
      return "cublasComputeType_t(" + std::to_string(static_cast<int>(t)) + ")";
  }
}

std::size_t data_type_bytes(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_8I:
    case CUDA_R_8U:
    case CUDA_R_8F_E4M3:
    case CUDA_R_8F_E5M2:
      return 1;
    case CUDA_R_16F:
    case CUDA_R_16BF:
      return 2;
    case CUDA_R_32F:
    case CUDA_R_32I:
      return 4;
    case CUDA_R_64F:
      return 8;
    default:
      return 0;
  }
}

namespace {

const char* op_name(cublasOperation_t op) {
  switch (op) {
    case CUBLAS_OP_N:
      return "N";
    case CUBLAS_OP_T:
      return "T";
    case CUBLAS_OP_C:
      return "C";
    default:
      return "?";
  }
}

bool is_fp8_type(cudaDataType_t t) {
  return t == CUDA_R_8F_E4M3 || t == CUDA_R_8F_E5M2;
}

// Epilogue bits (cublasLt.h): BIAS reads the bias vector, BGRAD variants write it, AUX
// variants read or write an auxiliary matrix that GemmSpec does not model.
constexpr unsigned kEpilogueBias = CUBLASLT_EPILOGUE_BIAS;
constexpr unsigned kEpilogueBgradBits = 16u | CUBLASLT_EPILOGUE_BGRADA | CUBLASLT_EPILOGUE_BGRADB;
constexpr unsigned kEpilogueAux = 128u;

// Non-FP8 combinations cuBLASLt lists under cublasLtMatmul "Datatypes Supported" (cuBLAS 13.x
// docs #cublasltmatmul; INT8 rows also in concepts.md A.1). FP8 is checked in code below
// because its C/D choices depend on A and B.
struct TypeCombo {
  cudaDataType_t a, b, c, d, scale;
  std::array<cublasComputeType_t, 5> compute;  // unused slots repeat the first entry
};

constexpr std::array<TypeCombo, 10> kTypeCombos{{
    {CUDA_R_64F,
     CUDA_R_64F,
     CUDA_R_64F,
     CUDA_R_64F,
     CUDA_R_64F,
     {CUBLAS_COMPUTE_64F, CUBLAS_COMPUTE_64F_PEDANTIC, CUBLAS_COMPUTE_64F, CUBLAS_COMPUTE_64F,
      CUBLAS_COMPUTE_64F}},
    {CUDA_R_32F,
     CUDA_R_32F,
     CUDA_R_32F,
     CUDA_R_32F,
     CUDA_R_32F,
     {CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_COMPUTE_32F_FAST_TF32,
      CUBLAS_COMPUTE_32F_FAST_16F, CUBLAS_COMPUTE_32F_FAST_16BF}},
    {CUDA_R_16F,
     CUDA_R_16F,
     CUDA_R_16F,
     CUDA_R_16F,
     CUDA_R_16F,
     {CUBLAS_COMPUTE_16F, CUBLAS_COMPUTE_16F_PEDANTIC, CUBLAS_COMPUTE_16F, CUBLAS_COMPUTE_16F,
      CUBLAS_COMPUTE_16F}},
    {CUDA_R_16F,
     CUDA_R_16F,
     CUDA_R_16F,
     CUDA_R_16F,
     CUDA_R_32F,
     {CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F,
      CUBLAS_COMPUTE_32F}},
    {CUDA_R_16F,
     CUDA_R_16F,
     CUDA_R_32F,
     CUDA_R_32F,
     CUDA_R_32F,
     {CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F,
      CUBLAS_COMPUTE_32F}},
    {CUDA_R_16BF,
     CUDA_R_16BF,
     CUDA_R_16BF,
     CUDA_R_16BF,
     CUDA_R_32F,
     {CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F,
      CUBLAS_COMPUTE_32F}},
    {CUDA_R_16BF,
     CUDA_R_16BF,
     CUDA_R_32F,
     CUDA_R_32F,
     CUDA_R_32F,
     {CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F,
      CUBLAS_COMPUTE_32F}},
    // INT8 -> INT32 with integer alpha/beta: the IMMA path tcbench measures.
    {CUDA_R_8I,
     CUDA_R_8I,
     CUDA_R_32I,
     CUDA_R_32I,
     CUDA_R_32I,
     {CUBLAS_COMPUTE_32I, CUBLAS_COMPUTE_32I_PEDANTIC, CUBLAS_COMPUTE_32I, CUBLAS_COMPUTE_32I,
      CUBLAS_COMPUTE_32I}},
    // INT8 -> INT8 requantized through a float alpha (s_A * s_B / s_D).
    {CUDA_R_8I,
     CUDA_R_8I,
     CUDA_R_8I,
     CUDA_R_8I,
     CUDA_R_32F,
     {CUBLAS_COMPUTE_32I, CUBLAS_COMPUTE_32I_PEDANTIC, CUBLAS_COMPUTE_32I, CUBLAS_COMPUTE_32I,
      CUBLAS_COMPUTE_32I}},
    // INT8 in, float compute and output; not listed under the IMMA rules (not a tensor path).
    {CUDA_R_8I,
     CUDA_R_8I,
     CUDA_R_32F,
     CUDA_R_32F,
     CUDA_R_32F,
     {CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F,
      CUBLAS_COMPUTE_32F}},
}};

bool in_type_table(const GemmSpec& s) {
  for (const TypeCombo& row : kTypeCombos) {
    if (row.a != s.a_type || row.b != s.b_type || row.c != s.c_type || row.d != s.d_type ||
        row.scale != s.scale_type)
      continue;
    if (std::find(row.compute.begin(), row.compute.end(), s.compute_type) != row.compute.end())
      return true;
  }
  return false;
}

// Tensor-wide FP8 (cuBLAS docs #cublasltmatmul, FP8 table; concepts.md B.2): C is BF16, FP16 or
// FP32; with FP32 C, D is FP32; otherwise D is C's type or an FP8 type, E5M2 output only when
// an input is E5M2.
std::optional<std::string> fp8_output_problem(const GemmSpec& s) {
  const bool any_e5m2 = s.a_type == CUDA_R_8F_E5M2 || s.b_type == CUDA_R_8F_E5M2;
  const std::string pair = data_type_name(s.a_type) + " x " + data_type_name(s.b_type);
  if (s.c_type != CUDA_R_16BF && s.c_type != CUDA_R_16F && s.c_type != CUDA_R_32F)
    return "An FP8 GEMM (" + pair + ") takes C as CUDA_R_16BF, CUDA_R_16F or CUDA_R_32F, not " +
           data_type_name(s.c_type) + ".";
  bool d_ok = false;
  if (s.c_type == CUDA_R_32F) {
    d_ok = s.d_type == CUDA_R_32F;
  } else {
    d_ok = s.d_type == s.c_type || s.d_type == CUDA_R_8F_E4M3 ||
           (any_e5m2 && s.d_type == CUDA_R_8F_E5M2);
  }
  if (!d_ok)
    return "An FP8 GEMM (" + pair + ") with C " + data_type_name(s.c_type) + " cannot write D as " +
           data_type_name(s.d_type) + "; D must be " +
           (s.c_type == CUDA_R_32F
                ? std::string("CUDA_R_32F")
                : data_type_name(s.c_type) +
                      (any_e5m2 ? ", CUDA_R_8F_E4M3 or CUDA_R_8F_E5M2" : " or CUDA_R_8F_E4M3")) +
           ".";
  return std::nullopt;
}

bool uses_bf16(const GemmSpec& s) {
  return s.a_type == CUDA_R_16BF || s.b_type == CUDA_R_16BF || s.c_type == CUDA_R_16BF ||
         s.d_type == CUDA_R_16BF || s.compute_type == CUBLAS_COMPUTE_32F_FAST_16BF;
}

std::string cc_string(int major, int minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string epilogue_name(cublasLtEpilogue_t e) {
  switch (e) {
    case CUBLASLT_EPILOGUE_DEFAULT:
      return "default";
    case CUBLASLT_EPILOGUE_RELU:
      return "relu";
    case CUBLASLT_EPILOGUE_BIAS:
      return "bias";
    case CUBLASLT_EPILOGUE_RELU_BIAS:
      return "relu_bias";
    case CUBLASLT_EPILOGUE_GELU:
      return "gelu";
    case CUBLASLT_EPILOGUE_GELU_BIAS:
      return "gelu_bias";
    default:
      return std::to_string(static_cast<unsigned>(e));
  }
}

constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();

}  // namespace

// ---------------------------------------------------------------------------------------------
// Owners

namespace detail {
void LtHandleTraits::destroy(handle_type h) noexcept {
  TCB_CUBLAS_NOEXCEPT(cublasLtDestroy(h));
}
void MatmulDescTraits::destroy(handle_type h) noexcept {
  TCB_CUBLAS_NOEXCEPT(cublasLtMatmulDescDestroy(h));
}
void MatrixLayoutTraits::destroy(handle_type h) noexcept {
  TCB_CUBLAS_NOEXCEPT(cublasLtMatrixLayoutDestroy(h));
}
cublasStatus_t MatmulDescTraits::set(handle_type h, attribute_type a, const void* buf,
                                     std::size_t size) {
  return cublasLtMatmulDescSetAttribute(h, a, buf, size);
}
cublasStatus_t MatmulDescTraits::get(handle_type h, attribute_type a, void* buf, std::size_t size,
                                     std::size_t* written) {
  return cublasLtMatmulDescGetAttribute(h, a, buf, size, written);
}
cublasStatus_t MatrixLayoutTraits::set(handle_type h, attribute_type a, const void* buf,
                                       std::size_t size) {
  return cublasLtMatrixLayoutSetAttribute(h, a, buf, size);
}
cublasStatus_t MatrixLayoutTraits::get(handle_type h, attribute_type a, void* buf, std::size_t size,
                                       std::size_t* written) {
  return cublasLtMatrixLayoutGetAttribute(h, a, buf, size, written);
}
void MatmulPreferenceTraits::destroy(handle_type h) noexcept {
  TCB_CUBLAS_NOEXCEPT(cublasLtMatmulPreferenceDestroy(h));
}
}  // namespace detail

LtHandle::LtHandle() {
  TCB_CUBLAS_CTX(cublasLtCreate(&h_), "creating the cuBLASLt handle");
}

MatmulDesc::MatmulDesc(cublasComputeType_t compute, cudaDataType_t scale) {
  TCB_CUBLAS_CTX(cublasLtMatmulDescCreate(&h_, compute, scale),
                 "compute " + compute_type_name(compute) + ", scale " + data_type_name(scale));
}

MatrixLayout::MatrixLayout(cudaDataType_t type, std::uint64_t rows, std::uint64_t cols,
                           std::int64_t ld) {
  TCB_CUBLAS_CTX(cublasLtMatrixLayoutCreate(&h_, type, rows, cols, ld),
                 data_type_name(type) + " " + std::to_string(rows) + "x" + std::to_string(cols) +
                     " ld=" + std::to_string(ld));
}

MatmulPreference::MatmulPreference(std::size_t max_workspace_bytes) {
  TCB_CUBLAS(cublasLtMatmulPreferenceCreate(&h_));
  const std::uint64_t bytes = max_workspace_bytes;
  TCB_CUBLAS_CTX(cublasLtMatmulPreferenceSetAttribute(h_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                      &bytes, sizeof(bytes)),
                 "max workspace " + std::to_string(bytes) + " bytes");
}

std::size_t MatmulPreference::max_workspace_bytes() const {
  std::uint64_t bytes = 0;
  std::size_t written = 0;
  TCB_CUBLAS(cublasLtMatmulPreferenceGetAttribute(h_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                  &bytes, sizeof(bytes), &written));
  return static_cast<std::size_t>(bytes);
}

// ---------------------------------------------------------------------------------------------
// GemmSpec

GemmSpec GemmSpec::for_precision(Precision p, std::int64_t m, std::int64_t n, std::int64_t k) {
  GemmSpec s;
  s.m = m;
  s.n = n;
  s.k = k;
  auto all = [&s](cudaDataType_t t) { s.a_type = s.b_type = s.c_type = s.d_type = t; };
  switch (p) {
    case Precision::fp64:
      all(CUDA_R_64F);
      s.compute_type = CUBLAS_COMPUTE_64F;
      s.scale_type = CUDA_R_64F;
      break;
    case Precision::fp32:
      all(CUDA_R_32F);
      s.compute_type = CUBLAS_COMPUTE_32F_PEDANTIC;
      s.scale_type = CUDA_R_32F;
      break;
    case Precision::tf32:
      all(CUDA_R_32F);
      s.compute_type = CUBLAS_COMPUTE_32F_FAST_TF32;
      s.scale_type = CUDA_R_32F;
      break;
    case Precision::fp16:
      all(CUDA_R_16F);
      s.compute_type = CUBLAS_COMPUTE_32F;
      s.scale_type = CUDA_R_32F;
      break;
    case Precision::fp16_acc16:
      all(CUDA_R_16F);
      s.compute_type = CUBLAS_COMPUTE_16F;
      s.scale_type = CUDA_R_16F;
      break;
    case Precision::bf16:
      all(CUDA_R_16BF);
      s.compute_type = CUBLAS_COMPUTE_32F;
      s.scale_type = CUDA_R_32F;
      break;
    case Precision::int8:
      s.a_type = s.b_type = CUDA_R_8I;
      s.c_type = s.d_type = CUDA_R_32I;
      s.compute_type = CUBLAS_COMPUTE_32I;
      s.scale_type = CUDA_R_32I;
      s.trans_a = CUBLAS_OP_T;
      break;
    case Precision::fp8:
      s.a_type = s.b_type = CUDA_R_8F_E4M3;
      s.c_type = s.d_type = CUDA_R_16BF;
      s.compute_type = CUBLAS_COMPUTE_32F;
      s.scale_type = CUDA_R_32F;
      s.trans_a = CUBLAS_OP_T;
      break;
  }
  return s;
}

bool GemmSpec::is_fp8() const {
  return is_fp8_type(a_type) || is_fp8_type(b_type);
}
bool GemmSpec::is_int8() const {
  return a_type == CUDA_R_8I || b_type == CUDA_R_8I;
}

std::optional<std::string> GemmSpec::why_invalid(int cc_major, int cc_minor) const {
  const std::string cc = cc_string(cc_major, cc_minor);
  const int cc_num = cc_major * 10 + cc_minor;
  auto dims = [this] {
    return "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k);
  };

  // Sizes.
  if (m <= 0 || n <= 0 || k <= 0) return "m, n and k must be positive; got " + dims() + ".";
  if (m > kInt32Max || n > kInt32Max || k > kInt32Max)
    return "cuBLASLt takes dimensions that fit in int32; got " + dims() + ".";
  if (batch_count < 1)
    return "batch_count must be at least 1; got " + std::to_string(batch_count) + ".";
  if (stride_a < 0 || stride_b < 0 || stride_c < 0 || stride_d < 0)
    return "Batch strides must not be negative; got stride_a=" + std::to_string(stride_a) +
           " stride_b=" + std::to_string(stride_b) + " stride_c=" + std::to_string(stride_c) +
           " stride_d=" + std::to_string(stride_d) + ".";
  if (trans_a == CUBLAS_OP_C || trans_b == CUBLAS_OP_C)
    return "Conjugate transposes are meaningless for real GEMMs; use CUBLAS_OP_T.";

  // Leading dimensions: column-major, so each must cover the stored matrix's rows.
  struct Ld {
    const char* name;
    std::int64_t ld, rows;
    const char* what;
  };
  const std::string a_shape = trans_a == CUBLAS_OP_N ? "m x k" : "k x m (A transposed)";
  const std::string b_shape = trans_b == CUBLAS_OP_N ? "k x n" : "n x k (B transposed)";
  const Ld lds[] = {{"lda", effective_lda(), a_rows(), "A"},
                    {"ldb", effective_ldb(), b_rows(), "B"},
                    {"ldc", effective_ldc(), m, "C"},
                    {"ldd", effective_ldd(), m, "D"}};
  for (const Ld& l : lds) {
    if (l.ld < l.rows) {
      const std::string shape = l.what[0] == 'A' ? a_shape : l.what[0] == 'B' ? b_shape : "m x n";
      return std::string(l.name) + "=" + std::to_string(l.ld) + " is smaller than the " +
             std::to_string(l.rows) + " rows of " + l.what + " as stored (" + shape + ", " +
             dims() + ").";
    }
    if (l.ld > kInt32Max)
      return std::string(l.name) + "=" + std::to_string(l.ld) + " does not fit in int32.";
  }

  // Types.
  if (is_fp8()) {
    if (a_type == CUDA_R_8F_E5M2 && b_type == CUDA_R_8F_E5M2)
      return "E5M2 x E5M2 is not a supported FP8 GEMM; make A or B E4M3 (E4M3 x E5M2 and E5M2 x "
             "E4M3 are supported).";
    if (!is_fp8_type(a_type) || !is_fp8_type(b_type))
      return "An FP8 GEMM needs both A and B in FP8; got A " + data_type_name(a_type) + " and B " +
             data_type_name(b_type) + ".";
    if (compute_type != CUBLAS_COMPUTE_32F || scale_type != CUDA_R_32F)
      return "An FP8 GEMM needs compute type CUBLAS_COMPUTE_32F and scale type CUDA_R_32F; got " +
             compute_type_name(compute_type) + " and " + data_type_name(scale_type) + ".";
    if (auto problem = fp8_output_problem(*this)) return problem;
  } else if (!in_type_table(*this)) {
    return "A " + data_type_name(a_type) + ", B " + data_type_name(b_type) + ", C " +
           data_type_name(c_type) + ", D " + data_type_name(d_type) + " with " +
           compute_type_name(compute_type) + " and scale " + data_type_name(scale_type) +
           " is not a type combination cuBLASLt supports.";
  }

  // What the architecture has.
  if (is_fp8() && cc_num < 89)
    return "FP8 GEMMs need compute capability 8.9 or newer (Ada, Hopper, Blackwell); this GPU is " +
           cc + ".";
  if (uses_bf16(*this) && cc_major < 8)
    return "BF16 needs compute capability 8.0 or newer; this GPU is " + cc + ".";
  if (compute_type == CUBLAS_COMPUTE_32F_FAST_TF32 && cc_major < 8)
    return "TF32 (CUBLAS_COMPUTE_32F_FAST_TF32) needs compute capability 8.0 or newer; this GPU "
           "is " +
           cc + ".";

  // INT8 with regular (COL) ordering: cuBLAS docs #cublasltmatmul, concepts.md A.2.
  if (is_int8()) {
    if (trans_a != CUBLAS_OP_T || trans_b != CUBLAS_OP_N)
      return std::string("INT8 GEMMs require the TN layout (A transposed, B not); got transa=") +
             op_name(trans_a) + " transb=" + op_name(trans_b) + ".";
    if (m % 4 != 0 || k % 4 != 0)
      return "INT8 GEMMs need m and k to be multiples of 4; got " + dims() + ".";
    if (effective_lda() % 4 != 0 || effective_ldb() % 4 != 0 || effective_ldc() % 4 != 0 ||
        effective_ldd() % 4 != 0)
      return "INT8 GEMMs need lda, ldb, ldc and ldd to be multiples of 4; got lda=" +
             std::to_string(effective_lda()) + " ldb=" + std::to_string(effective_ldb()) +
             " ldc=" + std::to_string(effective_ldc()) + " ldd=" + std::to_string(effective_ldd()) +
             ".";
    if (epilogue != CUBLASLT_EPILOGUE_DEFAULT)
      return "INT8 GEMMs support only the default epilogue; got " + epilogue_name(epilogue) + ".";
  }

  // FP8: cuBLAS docs #cublasltmatmul "tensor- or block-scaled FP8 kernels", concepts.md B.1.
  if (is_fp8()) {
    if ((trans_a != CUBLAS_OP_T || trans_b != CUBLAS_OP_N) && cc_major != 10)
      return std::string("FP8 GEMMs on compute capability ") + cc +
             " require the TN layout (A transposed, B not); got transa=" + op_name(trans_a) +
             " transb=" + op_name(trans_b) + ". Only compute capability 10.x accepts others.";
    if (m % 16 != 0 || k % 16 != 0 || n % 8 != 0)
      return "FP8 GEMMs need m and k to be multiples of 16 and n a multiple of 8; got " + dims() +
             ".";
    const std::pair<const char*, std::int64_t> ld_bytes[] = {
        {"lda", effective_lda() * static_cast<std::int64_t>(data_type_bytes(a_type))},
        {"ldb", effective_ldb() * static_cast<std::int64_t>(data_type_bytes(b_type))},
        {"ldc", effective_ldc() * static_cast<std::int64_t>(data_type_bytes(c_type))},
        {"ldd", effective_ldd() * static_cast<std::int64_t>(data_type_bytes(d_type))}};
    for (const auto& [ld_name, bytes] : ld_bytes)
      if (bytes % 16 != 0)
        return std::string(
                   "FP8 GEMMs need every leading dimension to span a multiple of 16 "
                   "bytes; ") +
               ld_name + " spans " + std::to_string(bytes) + " bytes.";
  } else {
    if (a_scale != nullptr || b_scale != nullptr || d_scale != nullptr || amax_d != nullptr)
      return "A/B/D scale and amax_D pointers are tensor-wide FP8 scaling; this GEMM has A " +
             data_type_name(a_type) + " and B " + data_type_name(b_type) + ".";
    if (fast_accum)
      return "fast_accum is an FP8 option; this GEMM has A " + data_type_name(a_type) + " and B " +
             data_type_name(b_type) + ".";
  }

  // Epilogues.
  const auto epi = static_cast<unsigned>(epilogue);
  if ((epi & kEpilogueAux) != 0)
    return "Epilogue " + epilogue_name(epilogue) +
           " needs an auxiliary matrix, which GemmSpec does not carry.";
  if ((epi & (kEpilogueBias | kEpilogueBgradBits)) != 0 && bias == nullptr)
    return "Epilogue " + epilogue_name(epilogue) + " needs a bias vector; bias is null.";

  return std::nullopt;
}

void GemmSpec::validate(int cc_major, int cc_minor) const {
  if (auto why = why_invalid(cc_major, cc_minor))
    throw InvalidArgument(*why + " [" + describe() + "]");
}

std::string GemmSpec::describe() const {
  std::ostringstream os;
  os << "GEMM m=" << m << " n=" << n << " k=" << k;
  if (batch_count != 1) os << " batch=" << batch_count;
  os << ": A " << data_type_name(a_type) << " op " << op_name(trans_a) << " lda=" << effective_lda()
     << ", B " << data_type_name(b_type) << " op " << op_name(trans_b) << " ldb=" << effective_ldb()
     << ", C " << data_type_name(c_type) << " ldc=" << effective_ldc() << ", D "
     << data_type_name(d_type) << " ldd=" << effective_ldd() << ", "
     << compute_type_name(compute_type) << ", scale " << data_type_name(scale_type);
  if (epilogue != CUBLASLT_EPILOGUE_DEFAULT) os << ", epilogue " << epilogue_name(epilogue);
  if (a_scale || b_scale || d_scale) {
    os << ", scales";
    if (a_scale) os << " A";
    if (b_scale) os << " B";
    if (d_scale) os << " D";
  }
  if (amax_d) os << ", amax_D";
  if (fast_accum) os << ", fast_accum";
  return os.str();
}

// ---------------------------------------------------------------------------------------------
// Descriptors

MatmulDesc make_matmul_desc(const GemmSpec& spec) {
  MatmulDesc desc(spec.compute_type, spec.scale_type);
  desc.set_attribute(CUBLASLT_MATMUL_DESC_TRANSA, static_cast<std::int32_t>(spec.trans_a));
  desc.set_attribute(CUBLASLT_MATMUL_DESC_TRANSB, static_cast<std::int32_t>(spec.trans_b));
  desc.set_attribute(CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<std::uint32_t>(spec.epilogue));
  if (spec.bias != nullptr) desc.set_attribute(CUBLASLT_MATMUL_DESC_BIAS_POINTER, spec.bias);
  if (spec.a_scale != nullptr)
    desc.set_attribute(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                       static_cast<const void*>(spec.a_scale));
  if (spec.b_scale != nullptr)
    desc.set_attribute(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                       static_cast<const void*>(spec.b_scale));
  if (spec.d_scale != nullptr)
    desc.set_attribute(CUBLASLT_MATMUL_DESC_D_SCALE_POINTER,
                       static_cast<const void*>(spec.d_scale));
  if (spec.amax_d != nullptr)
    desc.set_attribute(CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, static_cast<void*>(spec.amax_d));
  // Only FP8 kernels read the flag; leaving it unset elsewhere keeps other descriptors default.
  if (spec.is_fp8())
    desc.set_attribute(CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                       static_cast<std::int8_t>(spec.fast_accum ? 1 : 0));
  return desc;
}

MatrixLayout make_layout(cudaDataType_t type, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                         std::int32_t batch_count, std::int64_t batch_stride) {
  if (rows <= 0 || cols <= 0 || ld < rows)
    throw InvalidArgument("matrix layout " + std::to_string(rows) + "x" + std::to_string(cols) +
                          " with ld=" + std::to_string(ld) +
                          " is invalid: sizes must be positive and ld >= rows.");
  MatrixLayout layout(type, static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols), ld);
  if (batch_count > 1) {
    layout.set_attribute(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, batch_count);
    layout.set_attribute(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                         batch_stride != 0 ? batch_stride : ld * cols);
  }
  return layout;
}

GemmLayouts make_layouts(const GemmSpec& s) {
  return GemmLayouts{
      make_layout(s.a_type, s.a_rows(), s.a_cols(), s.effective_lda(), s.batch_count, s.stride_a),
      make_layout(s.b_type, s.b_rows(), s.b_cols(), s.effective_ldb(), s.batch_count, s.stride_b),
      make_layout(s.c_type, s.m, s.n, s.effective_ldc(), s.batch_count, s.stride_c),
      make_layout(s.d_type, s.m, s.n, s.effective_ldd(), s.batch_count, s.stride_d)};
}

NumericalImpl decode_numerical_impl(std::uint64_t flags) {
  NumericalImpl out;
  out.flags = flags;
  const std::uint64_t op = flags & CUBLASLT_NUMERICAL_IMPL_FLAGS_OP_TYPE_MASK;
  const std::uint64_t input = flags & CUBLASLT_NUMERICAL_IMPL_FLAGS_OP_INPUT_TYPE_MASK;
  const std::uint64_t acc = flags & CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_TYPE_MASK;
  out.uses_tensor_cores = (flags & CUBLASLT_NUMERICAL_IMPL_FLAGS_TENSOR_OP_MASK) != 0;

  constexpr std::uint64_t kFp8Inputs =
      CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8F_E4M3 | CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8F_E5M2;
  std::string cls;
  // cuBLASLt has no FP8 op-type bit: FP8 kernels report HMMA with FP8 inputs, and that is the
  // QMMA (Ada) / QGMMA (Hopper) class the benchmarks want to name.
  if ((op & CUBLASLT_NUMERICAL_IMPL_FLAGS_HMMA) != 0 && (input & kFp8Inputs) != 0)
    cls = "QMMA";
  else if ((op & CUBLASLT_NUMERICAL_IMPL_FLAGS_HMMA) != 0)
    cls = "HMMA";
  else if ((op & CUBLASLT_NUMERICAL_IMPL_FLAGS_IMMA) != 0)
    cls = "IMMA";
  else if ((op & CUBLASLT_NUMERICAL_IMPL_FLAGS_DMMA) != 0)
    cls = "DMMA";
  else if ((op & CUBLASLT_NUMERICAL_IMPL_FLAGS_FMA) != 0)
    cls = "FMA";
  else if (op != 0) {
    std::ostringstream os;
    os << "MMA(0x" << std::hex << op << ")";
    cls = os.str();
  } else {
    cls = "unknown";
  }

  static constexpr std::pair<std::uint64_t, const char*> kInputs[] = {
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_16F, "fp16"},
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_16BF, "bf16"},
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_TF32, "tf32"},
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_32F, "fp32"},
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_64F, "fp64"},
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8I, "int8"},
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8F_E4M3, "e4m3"},
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8F_E5M2, "e5m2"}};
  static constexpr std::pair<std::uint64_t, const char*> kAccs[] = {
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_16F, "fp16"},
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32F, "fp32"},
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_64F, "fp64"},
      {CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32I, "int32"}};
  std::string in, ac;
  for (const auto& [bit, label] : kInputs)
    if ((input & bit) != 0) in += (in.empty() ? "" : "+") + std::string(label);
  for (const auto& [bit, label] : kAccs)
    if ((acc & bit) != 0) ac += (ac.empty() ? "" : "+") + std::string(label);

  out.impl_name = cls;
  if (!in.empty() || !ac.empty())
    out.impl_name += " " + (in.empty() ? "?" : in) + "->" + (ac.empty() ? "?" : ac);
  return out;
}

// ---------------------------------------------------------------------------------------------
// GemmPlan

GemmPlan::GemmPlan(const LtHandle& handle, GemmSpec spec, int cc_major, int cc_minor,
                   GemmPlanOptions options)
    : handle_(handle.get()), spec_(std::move(spec)) {
  spec_.validate(cc_major, cc_minor);
  const std::string ctx = describe();
  if (handle_ == nullptr) throw InvalidArgument("GemmPlan needs a live LtHandle [" + ctx + "]");
  if (options.max_algorithms < 1)
    throw InvalidArgument("GemmPlan needs max_algorithms >= 1; got " +
                          std::to_string(options.max_algorithms) + " [" + ctx + "]");
  if (options.workspace != nullptr &&
      reinterpret_cast<std::uintptr_t>(options.workspace) % 256 != 0)
    throw InvalidArgument("a caller-provided cuBLASLt workspace must be 256-byte aligned [" + ctx +
                          "]");

  try {
    desc_ = make_matmul_desc(spec_);
    layouts_ = make_layouts(spec_);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string(e.what()) + " [" + ctx + "]");
  }

  const std::size_t ws_limit =
      options.workspace != nullptr ? options.workspace_bytes : options.max_workspace_bytes;
  MatmulPreference pref(ws_limit);

  std::vector<cublasLtMatmulHeuristicResult_t> results(
      static_cast<std::size_t>(options.max_algorithms));
  int returned = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      handle_, desc_.get(), layouts_.a.get(), layouts_.b.get(), layouts_.c.get(), layouts_.d.get(),
      pref.get(), options.max_algorithms, results.data(), &returned);
  // NOT_SUPPORTED is how the heuristic says "nothing fits"; that deserves its own sentence.
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || (status == CUBLAS_STATUS_SUCCESS && returned == 0))
    throw Error("cuBLASLt's heuristic returned no algorithm (workspace limit " +
                std::to_string(ws_limit) + " bytes) for " + ctx);
  if (status != CUBLAS_STATUS_SUCCESS)
    detail::throw_api_error("cuBLAS", status_name(status), "cublasLtMatmulAlgoGetHeuristic",
                            std::source_location::current(), ctx);

  std::size_t max_ws = 0;
  for (int i = 0; i < returned; ++i) {
    const cublasLtMatmulHeuristicResult_t& r = results[static_cast<std::size_t>(i)];
    if (r.state != CUBLAS_STATUS_SUCCESS) continue;
    std::uint64_t flags = 0;
    std::size_t written = 0;
    TCB_CUBLAS_CTX(
        cublasLtMatmulAlgoCapGetAttribute(&r.algo, CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS, &flags,
                                          sizeof(flags), &written),
        ctx);
    AlgoCandidate c;
    c.algo = r.algo;
    c.workspace_bytes = r.workspaceSize;
    c.waves_count = r.wavesCount;
    c.impl = decode_numerical_impl(flags);
    candidates_.push_back(std::move(c));
    max_ws = std::max(max_ws, r.workspaceSize);
  }
  if (candidates_.empty())
    throw Error("cuBLASLt's heuristic returned " + std::to_string(returned) +
                " algorithms, none usable, for " + ctx);

  // One allocation sized for every candidate, so select() never allocates.
  if (options.workspace != nullptr) {
    workspace_ = options.workspace;
    workspace_bytes_ = options.workspace_bytes;
  } else if (max_ws > 0) {
    owned_workspace_ = DeviceBuffer<std::byte>(max_ws);
    workspace_ = owned_workspace_.get();
    workspace_bytes_ = max_ws;
  }
}

void GemmPlan::select(int algo_index) {
  if (algo_index < 0 || algo_index >= static_cast<int>(candidates_.size()))
    throw InvalidArgument("algorithm index " + std::to_string(algo_index) + " is out of range; " +
                          "the heuristic returned " + std::to_string(candidates_.size()) +
                          " candidates [" + describe() + "]");
  selected_ = algo_index;
}

namespace {

// alpha/beta in the descriptor's scale type; 8 bytes covers every scale type tcbench uses.
struct ScaleValue {
  alignas(8) unsigned char bytes[8] = {};
  const void* get() const { return bytes; }
};

// The spec is only described when throwing: run() sits inside timed loops.
ScaleValue to_scale_value(double v, const GemmSpec& spec, const char* which) {
  const cudaDataType_t type = spec.scale_type;
  ScaleValue out;
  switch (type) {
    case CUDA_R_32F: {
      const float f = static_cast<float>(v);
      std::memcpy(out.bytes, &f, sizeof f);
      break;
    }
    case CUDA_R_64F:
      std::memcpy(out.bytes, &v, sizeof v);
      break;
    case CUDA_R_32I: {
      if (!(std::nearbyint(v) == v && v >= std::numeric_limits<std::int32_t>::min() &&
            v <= std::numeric_limits<std::int32_t>::max()))
        throw InvalidArgument(std::string(which) + "=" + std::to_string(v) +
                              " is not an int32 value, which a CUDA_R_32I scale type needs [" +
                              spec.describe() + "]");
      const auto i = static_cast<std::int32_t>(v);
      std::memcpy(out.bytes, &i, sizeof i);
      break;
    }
    case CUDA_R_16F: {
      const __half h = __float2half(static_cast<float>(v));
      std::memcpy(out.bytes, &h, sizeof h);
      break;
    }
    default:
      throw InvalidArgument("scale type " + data_type_name(type) + " is not supported by run() [" +
                            spec.describe() + "]");
  }
  return out;
}

}  // namespace

void GemmPlan::run(cudaStream_t stream, const void* a, const void* b, const void* c, void* d,
                   double alpha, double beta) const {
  if (a == nullptr || b == nullptr || d == nullptr)
    throw InvalidArgument("GemmPlan::run needs A, B and D device pointers [" + describe() + "]");
  if (c == nullptr && beta != 0.0)
    throw InvalidArgument("GemmPlan::run got beta=" + std::to_string(beta) + " but no C [" +
                          describe() + "]");
  const ScaleValue alpha_v = to_scale_value(alpha, spec_, "alpha");
  const ScaleValue beta_v = to_scale_value(beta, spec_, "beta");
  const AlgoCandidate& algo = selected();
  // With beta == 0 C is never read, but cuBLASLt still wants a pointer; D is a valid one.
  const void* c_ptr = c != nullptr ? c : d;
  TCB_CUBLAS_CTX(
      cublasLtMatmul(handle_, desc_.get(), alpha_v.get(), a, layouts_.a.get(), b, layouts_.b.get(),
                     beta_v.get(), c_ptr, layouts_.c.get(), d, layouts_.d.get(), &algo.algo,
                     workspace_, workspace_bytes_, stream),
      describe() + ", algorithm " + std::to_string(selected_) + " (" + algo.impl.impl_name + ")");
}

}  // namespace tcbench
