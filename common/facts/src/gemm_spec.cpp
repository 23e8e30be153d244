#include "tcbench/gemm_spec.hpp"

#include "tcbench/error.hpp"
#include "tcbench/numerics/scale_layout.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <span>
#include <sstream>
#include <utility>

namespace tcbench {

// ---------------------------------------------------------------------------------------------
// Names

numerics::Element element_of(cudaDataType_t t) {
  if (const auto e = numerics::find_element(t)) return *e;
  throw InvalidArgument("tcbench has no element row for " + data_type_name(t));
}

std::string data_type_name(cudaDataType_t t) {
  if (const auto e = numerics::find_element(t))
    return std::string(numerics::element_info(*e).cuda_name);
  return "cudaDataType_t(" + std::to_string(static_cast<int>(t)) + ")";
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

std::size_t data_type_bits(cudaDataType_t t) {
  const auto e = numerics::find_element(t);
  return e ? static_cast<std::size_t>(numerics::element_info(*e).bits) : 0;
}

std::size_t data_type_bytes(cudaDataType_t t) {
  return data_type_bits(t) % 8 == 0 ? data_type_bits(t) / 8 : 0;
}

std::string cc_string(int cc_major, int cc_minor) {
  return std::to_string(cc_major) + "." + std::to_string(cc_minor);
}

namespace {
// The row's family, false for a type without a row.
bool in_family(cudaDataType_t t, bool (*family)(numerics::Element)) {
  const auto e = numerics::find_element(t);
  return e && family(*e);
}
}  // namespace

bool is_fp8_type(cudaDataType_t t) {
  return in_family(t, numerics::is_fp8);
}
bool is_fp4_type(cudaDataType_t t) {
  return in_family(t, numerics::is_fp4);
}
bool is_fp6_type(cudaDataType_t t) {
  return in_family(t, numerics::is_fp6);
}
bool is_narrow_type(cudaDataType_t t) {
  return in_family(t, numerics::is_narrow);
}

namespace {

const char* op_name(bool transposed) {
  return transposed ? "T" : "N";
}

// Epilogue bits (cublasLt.h): BIAS reads the bias vector, BGRAD variants write it, AUX
// variants read or write an auxiliary matrix that GemmSpec does not model. 16 is the bit that
// CUBLASLT_EPILOGUE_DGELU_BGRAD and CUBLASLT_EPILOGUE_DRELU_BGRAD add to their DGELU/DRELU base
// (BGRADA = 256, BGRADB = 512 are the other two bias-gradient bits).
constexpr unsigned kEpilogueBias = CUBLASLT_EPILOGUE_BIAS;
constexpr unsigned kEpilogueBgradFromAux = 16u;
constexpr unsigned kEpilogueBgradBits =
    kEpilogueBgradFromAux | CUBLASLT_EPILOGUE_BGRADA | CUBLASLT_EPILOGUE_BGRADB;
constexpr unsigned kEpilogueAux = 128u;

// Non-FP8 combinations cuBLASLt lists under cublasLtMatmul "Datatypes Supported" (cuBLAS 13.x
// docs, https://docs.nvidia.com/cuda/cublas/#cublasltmatmul). FP8 is checked in code below because
// its C/D choices depend on A and B. One row per line: A, B, C, D, scale type, the compute types.
struct TypeCombo {
  cudaDataType_t a, b, c, d, scale;
  std::span<const cublasComputeType_t> compute;
};

constexpr cublasComputeType_t kCompute64[] = {CUBLAS_COMPUTE_64F, CUBLAS_COMPUTE_64F_PEDANTIC};
constexpr cublasComputeType_t kCompute32[] = {
    CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_COMPUTE_32F_FAST_TF32,
    CUBLAS_COMPUTE_32F_FAST_16F, CUBLAS_COMPUTE_32F_FAST_16BF};
constexpr cublasComputeType_t kCompute32Plain[] = {CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_PEDANTIC};
constexpr cublasComputeType_t kCompute16[] = {CUBLAS_COMPUTE_16F, CUBLAS_COMPUTE_16F_PEDANTIC};
constexpr cublasComputeType_t kCompute32I[] = {CUBLAS_COMPUTE_32I, CUBLAS_COMPUTE_32I_PEDANTIC};

// clang-format off
constexpr TypeCombo kTypeCombos[] = {
    {CUDA_R_64F,  CUDA_R_64F,  CUDA_R_64F,  CUDA_R_64F,  CUDA_R_64F, kCompute64},
    {CUDA_R_32F,  CUDA_R_32F,  CUDA_R_32F,  CUDA_R_32F,  CUDA_R_32F, kCompute32},
    {CUDA_R_16F,  CUDA_R_16F,  CUDA_R_16F,  CUDA_R_16F,  CUDA_R_16F, kCompute16},
    {CUDA_R_16F,  CUDA_R_16F,  CUDA_R_16F,  CUDA_R_16F,  CUDA_R_32F, kCompute32Plain},
    {CUDA_R_16F,  CUDA_R_16F,  CUDA_R_32F,  CUDA_R_32F,  CUDA_R_32F, kCompute32Plain},
    {CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, kCompute32Plain},
    {CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F,  CUDA_R_32F,  CUDA_R_32F, kCompute32Plain},
    {CUDA_R_8I,   CUDA_R_8I,   CUDA_R_32I,  CUDA_R_32I,  CUDA_R_32I, kCompute32I},      // IMMA, int32 out
    {CUDA_R_8I,   CUDA_R_8I,   CUDA_R_8I,   CUDA_R_8I,   CUDA_R_32F, kCompute32I},      // requantized through a float alpha
    {CUDA_R_8I,   CUDA_R_8I,   CUDA_R_32F,  CUDA_R_32F,  CUDA_R_32F, kCompute32Plain},  // not an IMMA path
};
// clang-format on

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

// Tensor-wide FP8 (cuBLAS docs, cublasLtMatmul, the FP8 type table:
// https://docs.nvidia.com/cuda/cublas/#cublasltmatmul): C is BF16, FP16 or FP32; with FP32 C, D is
// FP32; otherwise D is C's type or an FP8 type, E5M2 output only when an input is E5M2.
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

using Why = std::optional<std::string>;

std::string dims(const GemmProblem& p) {
  return "m=" + std::to_string(p.m) + " n=" + std::to_string(p.n) + " k=" + std::to_string(p.k);
}

// One function per rule; why_invalid() asks them in order and returns the first sentence.

// Block-scaled FP4 (cuBLAS docs, cublasLtMatmul, "To use block-scaled FP4 kernels" and its type
// table): E2M1 x E2M1, C BF16, FP16 or FP32; D C's type or E2M1 (FP32 C: FP32 D). FP6 has no
// cuBLASLt GEMM.
Why fp4_fp6_types_problem(const GemmSpec& s) {
  const std::string pair = data_type_name(s.a_type) + " x " + data_type_name(s.b_type);
  if (is_fp6_type(s.a_type) || is_fp6_type(s.b_type))
    return "cuBLASLt has no FP6 GEMM (" + pair +
           "): its block-scaled kernels take FP8 and FP4 (cuBLAS documentation, cublasLtMatmul "
           "datatypes).";
  if (!is_fp4_type(s.a_type) || !is_fp4_type(s.b_type))
    return "A block-scaled FP4 GEMM needs both A and B in CUDA_R_4F_E2M1; got " + pair + ".";
  if (s.compute_type != CUBLAS_COMPUTE_32F || s.scale_type != CUDA_R_32F)
    return "An FP4 GEMM needs compute type CUBLAS_COMPUTE_32F and scale type CUDA_R_32F; got " +
           compute_type_name(s.compute_type) + " and " + data_type_name(s.scale_type) + ".";
  const bool c_ok = s.c_type == CUDA_R_16BF || s.c_type == CUDA_R_16F || s.c_type == CUDA_R_32F;
  const bool d_ok = s.c_type == CUDA_R_32F ? s.d_type == CUDA_R_32F
                                           : s.d_type == s.c_type || s.d_type == CUDA_R_4F_E2M1;
  if (!c_ok || !d_ok)
    return "An FP4 GEMM takes C as CUDA_R_16BF, CUDA_R_16F or CUDA_R_32F and writes D as C's type "
           "(or CUDA_R_4F_E2M1 with 16-bit C); got C " +
           data_type_name(s.c_type) + ", D " + data_type_name(s.d_type) + ".";
  return std::nullopt;
}

Why rule_types(const GemmSpec& s) {
  if (s.is_narrow() && !s.is_fp8()) return fp4_fp6_types_problem(s);
  if (s.is_fp8()) {
    if (s.a_type == CUDA_R_8F_E5M2 && s.b_type == CUDA_R_8F_E5M2)
      return "E5M2 x E5M2 is not a supported FP8 GEMM; make A or B E4M3 (E4M3 x E5M2 and E5M2 x "
             "E4M3 are supported).";
    if (!is_fp8_type(s.a_type) || !is_fp8_type(s.b_type))
      return "An FP8 GEMM needs both A and B in FP8; got A " + data_type_name(s.a_type) +
             " and B " + data_type_name(s.b_type) + ".";
    if (s.compute_type != CUBLAS_COMPUTE_32F || s.scale_type != CUDA_R_32F)
      return "An FP8 GEMM needs compute type CUBLAS_COMPUTE_32F and scale type CUDA_R_32F; got " +
             compute_type_name(s.compute_type) + " and " + data_type_name(s.scale_type) + ".";
    return fp8_output_problem(s);
  }
  if (!in_type_table(s))
    return "A " + data_type_name(s.a_type) + ", B " + data_type_name(s.b_type) + ", C " +
           data_type_name(s.c_type) + ", D " + data_type_name(s.d_type) + " with " +
           compute_type_name(s.compute_type) + " and scale " + data_type_name(s.scale_type) +
           " is not a type combination cuBLASLt supports.";
  return std::nullopt;
}

// INT8 with regular (COL) ordering: cuBLAS docs, cublasLtMatmul, the IMMA "regular data
// ordering" requirements (https://docs.nvidia.com/cuda/cublas/#cublasltmatmul). The int8-out
// variant (requantizing through a float alpha) follows the same layout rules.
Why rule_int8(const GemmSpec& s) {
  if (!s.is_int8()) return std::nullopt;
  const GemmProblem& p = s.problem;
  if (!p.trans_a || p.trans_b)
    return std::string("INT8 GEMMs require the TN layout (A transposed, B not); got transa=") +
           op_name(p.trans_a) + " transb=" + op_name(p.trans_b) + ".";
  if (p.m % 4 != 0 || p.k % 4 != 0)
    return "INT8 GEMMs need m and k to be multiples of 4; got " + dims(p) + ".";
  if (p.effective_lda() % 4 != 0 || p.effective_ldb() % 4 != 0 || p.effective_ldc() % 4 != 0 ||
      p.effective_ldd() % 4 != 0)
    return "INT8 GEMMs need lda, ldb, ldc and ldd to be multiples of 4; got lda=" +
           std::to_string(p.effective_lda()) + " ldb=" + std::to_string(p.effective_ldb()) +
           " ldc=" + std::to_string(p.effective_ldc()) +
           " ldd=" + std::to_string(p.effective_ldd()) + ".";
  if (s.epilogue != CUBLASLT_EPILOGUE_DEFAULT)
    return "INT8 GEMMs support only the default epilogue; got " + epilogue_name(s.epilogue) + ".";
  return std::nullopt;
}

// FP8: cuBLAS docs, cublasLtMatmul, "tensor- or block-scaled FP8 kernels"
// (https://docs.nvidia.com/cuda/cublas/#cublasltmatmul).
// FP4 likewise ("To use block-scaled FP4 kernels": TN on every architecture, 16-byte alignment).
Why rule_fp8(const GemmSpec& s, int cc_major, int cc_minor) {
  const GemmProblem& p = s.problem;
  if (!s.is_narrow()) {
    if (s.a_scale != nullptr || s.b_scale != nullptr || s.d_scale != nullptr || s.amax_d != nullptr)
      return "A/B/D scale and amax_D pointers are narrow-precision (FP8/FP4) scaling; this GEMM "
             "has A " +
             data_type_name(s.a_type) + " and B " + data_type_name(s.b_type) + ".";
    if (s.scale_mode != ScaleMode::tensor)
      return "Scale mode " + std::string(name(s.scale_mode)) +
             " is for FP8 and FP4 GEMMs; this GEMM has A " + data_type_name(s.a_type) + " and B " +
             data_type_name(s.b_type) + ".";
    if (s.fast_accum)
      return "fast_accum is an FP8 option; this GEMM has A " + data_type_name(s.a_type) +
             " and B " + data_type_name(s.b_type) + ".";
    return std::nullopt;
  }
  if (s.is_fp4() && (!p.trans_a || p.trans_b))
    return std::string("FP4 GEMMs require the TN layout (A transposed, B not); got transa=") +
           op_name(p.trans_a) + " transb=" + op_name(p.trans_b) + ".";
  if ((!p.trans_a || p.trans_b) && cc_major != 10)
    return "FP8 GEMMs on compute capability " + cc_string(cc_major, cc_minor) +
           " require the TN layout (A transposed, B not); got transa=" + op_name(p.trans_a) +
           " transb=" + op_name(p.trans_b) + ". Only compute capability 10.x accepts others.";
  if (p.m % 16 != 0 || p.k % 16 != 0 || p.n % 8 != 0)
    return "FP8 GEMMs need m and k to be multiples of 16 and n a multiple of 8; got " + dims(p) +
           ".";
  const auto bytes = [](std::int64_t ld, cudaDataType_t t) {
    return ld * static_cast<std::int64_t>(data_type_bits(t)) / 8;
  };
  const std::pair<const char*, std::int64_t> ld_bytes[] = {
      {"lda", bytes(p.effective_lda(), s.a_type)},
      {"ldb", bytes(p.effective_ldb(), s.b_type)},
      {"ldc", bytes(p.effective_ldc(), s.c_type)},
      {"ldd", bytes(p.effective_ldd(), s.d_type)}};
  for (const auto& [ld_name, n_bytes] : ld_bytes)
    if (n_bytes % 16 != 0)
      return std::string(s.is_fp4() ? "FP4" : "FP8") +
             " GEMMs need every leading dimension to span a multiple of 16 bytes; " + ld_name +
             " spans " + std::to_string(n_bytes) + " bytes.";
  return std::nullopt;
}

std::string scale_sentence(const GemmSpec& s) {
  return "Scale mode " + std::string(name(s.scale_mode)) + " (" + data_type_name(s.a_type) + " x " +
         data_type_name(s.b_type) + ")";
}

// Scale modes: the cuBLAS documentation's "Narrow Precision Data Types Usage" (scale_modes.hpp):
// which types take which mode, on which compute capabilities, with which outputs, and the size
// and alignment of the scale tensors (numerics/scale_layout.hpp).
Why rule_scaling(const GemmSpec& s, int cc_major, int cc_minor) {
  if (!s.is_narrow()) return std::nullopt;
  const ScaleModeInfo& m = info(s.scale_mode);
  const bool fp8 = s.is_fp8();
  if (s.scale_mode == ScaleMode::nvfp4 && fp8)
    return scale_sentence(s) +
           " is FP4's: cuBLAS pairs VEC16_UE4M3 scales with CUDA_R_4F_E2M1 elements only.";
  if (s.is_fp4() && s.scale_mode != ScaleMode::nvfp4)
    return scale_sentence(s) +
           ": cuBLASLt runs FP4 (E2M1) only with 16-element UE4M3 block scales (NVFP4, "
           "VEC16_UE4M3); it documents no MXFP4 (VEC32_UE8M0) or tensor-scaled FP4 GEMM.";
  const int cc = cc_number(cc_major, cc_minor);
  if (cc < m.min_cc || (m.max_cc != 0 && cc > m.max_cc))
    return scale_sentence(s) + " is documented by cuBLAS for compute capability " +
           cc_string(m.min_cc / 10, m.min_cc % 10) +
           (m.max_cc == 0          ? std::string(" and newer")
            : m.max_cc == m.min_cc ? std::string(" only")
                                   : " to " + cc_string(m.max_cc / 10, m.max_cc % 10)) +
           "; this GPU is " + cc_string(cc_major, cc_minor) + ".";
  if (s.scale_mode == ScaleMode::tensor) return std::nullopt;
  const bool hopper_mode = s.scale_mode == ScaleMode::rowwise ||
                           s.scale_mode == ScaleMode::tile_1x128 ||
                           s.scale_mode == ScaleMode::block_128x128;
  if (hopper_mode) {
    if (s.d_type != CUDA_R_16F && s.d_type != CUDA_R_16BF && s.d_type != CUDA_R_32F)
      return scale_sentence(s) + " writes D as CUDA_R_16F, CUDA_R_16BF or CUDA_R_32F only; got " +
             data_type_name(s.d_type) + ".";
    if (s.d_scale != nullptr || s.amax_d != nullptr)
      return scale_sentence(s) + " takes no D scale and no amax_D.";
  }
  if ((s.scale_mode == ScaleMode::tile_1x128 || s.scale_mode == ScaleMode::block_128x128) &&
      (s.problem.m % 4 != 0 || s.problem.n % 4 != 0))
    return scale_sentence(s) + " needs m and n to be multiples of 4; got " + dims(s.problem) + ".";
  struct ScaleTensor {
    const char* which;
    const void* ptr;
    std::int64_t given, needed;
  };
  const ScaleTensor tensors[] = {{"A", s.a_scale, s.a_scale_count, s.a_scale_elements()},
                                 {"B", s.b_scale, s.b_scale_count, s.b_scale_elements()}};
  for (const ScaleTensor& t : tensors) {
    if (t.ptr == nullptr)
      return scale_sentence(s) + " needs " + t.which + "'s scale tensor; the pointer is null.";
    const auto misalign = reinterpret_cast<std::uintptr_t>(t.ptr) % numerics::kScaleAlignBytes;
    if (misalign != 0)
      return scale_sentence(s) + ": " + t.which +
             "'s scale tensor must start 16-byte aligned; it starts at offset " +
             std::to_string(misalign) + " of 16.";
    if (t.given != t.needed)
      return scale_sentence(s) + ": " + t.which + "'s scale tensor must hold " +
             std::to_string(t.needed) + " scales for " + dims(s.problem) +
             " (the cuBLAS layout, padded tiles included); it holds " + std::to_string(t.given) +
             ".";
  }
  return std::nullopt;
}

Why rule_epilogue(const GemmSpec& s) {
  const auto epi = static_cast<unsigned>(s.epilogue);
  if ((epi & kEpilogueAux) != 0)
    return "Epilogue " + epilogue_name(s.epilogue) +
           " needs an auxiliary matrix, which GemmSpec does not carry.";
  if ((epi & (kEpilogueBias | kEpilogueBgradBits)) != 0 && s.bias == nullptr)
    return "Epilogue " + epilogue_name(s.epilogue) + " needs a bias vector; bias is null.";
  return std::nullopt;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// GemmSpec

GemmSpec GemmSpec::for_precision(Precision p, std::int64_t m, std::int64_t n, std::int64_t k) {
  const PrecisionInfo& row = info(p);
  GemmSpec s;
  s.problem.m = m;
  s.problem.n = n;
  s.problem.k = k;
  s.problem.trans_a = row.a_k_major;
  s.a_type = row.a;
  s.b_type = row.b;
  s.c_type = row.c;
  s.d_type = row.d;
  s.compute_type = row.compute;
  s.scale_type = row.scale;
  return s;
}

GemmSpec GemmSpec::for_scaling(Precision p, ScaleMode mode, std::int64_t m, std::int64_t n,
                               std::int64_t k) {
  GemmSpec s = for_precision(p, m, n, k);
  s.scale_mode = mode;
  s.a_scale_count = s.a_scale_elements();
  s.b_scale_count = s.b_scale_elements();
  return s;
}

bool GemmSpec::is_fp8() const {
  return is_fp8_type(a_type) || is_fp8_type(b_type);
}
bool GemmSpec::is_fp4() const {
  return is_fp4_type(a_type) || is_fp4_type(b_type);
}
bool GemmSpec::is_narrow() const {
  return is_narrow_type(a_type) || is_narrow_type(b_type);
}

namespace {
// Scale elements of one operand (outer = m for A, n for B; inner = k) under granularity g.
std::int64_t scale_elements(numerics::Granularity g, std::int64_t outer, std::int64_t inner) {
  namespace tn = numerics;
  switch (g) {
    case tn::Granularity::tensor:
      return 0;
    case tn::Granularity::row:
      return outer;
    case tn::Granularity::tile_1x128:
      return tn::vec128_elements(outer, inner);
    case tn::Granularity::block_128x128:
      return tn::blk128_elements(outer, inner);
    case tn::Granularity::mx:
      return tn::block_scale_elements(outer, inner, tn::kMxBlock);
    case tn::Granularity::nvfp4:
      return tn::block_scale_elements(outer, inner, tn::kNvfp4Block);
  }
  return 0;
}
}  // namespace

std::int64_t GemmSpec::effective_stride_a() const {
  return stride_a != 0 ? stride_a : problem.effective_lda() * problem.a_cols();
}
std::int64_t GemmSpec::effective_stride_b() const {
  return stride_b != 0 ? stride_b : problem.effective_ldb() * problem.b_cols();
}
std::int64_t GemmSpec::effective_stride_c() const {
  return stride_c != 0 ? stride_c : problem.effective_ldc() * problem.n;
}
std::int64_t GemmSpec::effective_stride_d() const {
  return stride_d != 0 ? stride_d : problem.effective_ldd() * problem.n;
}
double GemmSpec::flops() const {
  return problem.flops() * static_cast<double>(batch_count);
}

std::optional<std::string> GemmSpec::why_shape_invalid(std::string_view library) const {
  const GemmProblem& p = problem;
  if (std::string why = p.why_invalid(); !why.empty()) return why;
  if (p.m > kInt32Max || p.n > kInt32Max || p.k > kInt32Max)
    return std::string(library) + " takes dimensions that fit in int32; got " + dims(p) + ".";
  const std::pair<const char*, std::int64_t> lds[] = {{"lda", p.effective_lda()},
                                                      {"ldb", p.effective_ldb()},
                                                      {"ldc", p.effective_ldc()},
                                                      {"ldd", p.effective_ldd()}};
  for (const auto& [ld_name, ld] : lds)
    if (ld > kInt32Max)
      return std::string(ld_name) + "=" + std::to_string(ld) + " does not fit in int32.";
  if (batch_count < 1)
    return "batch_count must be at least 1; got " + std::to_string(batch_count) + ".";
  if (stride_a < 0 || stride_b < 0 || stride_c < 0 || stride_d < 0)
    return "Batch strides must not be negative; got stride_a=" + std::to_string(stride_a) +
           " stride_b=" + std::to_string(stride_b) + " stride_c=" + std::to_string(stride_c) +
           " stride_d=" + std::to_string(stride_d) + ".";
  // Inputs may overlap (even repeat); outputs written by different matrices of one call may not.
  if (batch_count > 1) {
    const std::pair<const char*, std::pair<std::int64_t, std::int64_t>> outputs[] = {
        {"C", {effective_stride_c(), p.effective_ldc() * p.n}},
        {"D", {effective_stride_d(), p.effective_ldd() * p.n}}};
    for (const auto& [what, strides] : outputs)
      if (strides.first < strides.second)
        return std::string("The batch stride of ") + what + " (" + std::to_string(strides.first) +
               " elements) is smaller than one " + what + " matrix (" +
               std::to_string(strides.second) + " elements): the " + std::to_string(batch_count) +
               " outputs would overlap.";
  }
  return std::nullopt;
}

std::int64_t GemmSpec::a_scale_elements() const {
  return scale_elements(info(scale_mode).a, problem.m, problem.k);
}
std::int64_t GemmSpec::b_scale_elements() const {
  return scale_elements(info(scale_mode).b, problem.n, problem.k);
}
bool GemmSpec::is_int8() const {
  return a_type == CUDA_R_8I || b_type == CUDA_R_8I;
}

std::optional<std::string> GemmSpec::why_gpu_lacks(int cc_major, int cc_minor) const {
  const GemmSpec& s = *this;
  const std::string cc = cc_string(cc_major, cc_minor);
  if (s.is_fp8() && cc_number(cc_major, cc_minor) < 89)
    return "FP8 GEMMs need compute capability 8.9 or newer (Ada, Hopper, Blackwell); this GPU is " +
           cc + ".";
  if (s.is_fp4() && cc_number(cc_major, cc_minor) < 100)
    return "FP4 GEMMs need compute capability 10.0 or newer (Blackwell); this GPU is " + cc + ".";
  if (uses_bf16(s) && cc_major < 8)
    return "BF16 needs compute capability 8.0 or newer; this GPU is " + cc + ".";
  if (s.compute_type == CUBLAS_COMPUTE_32F_FAST_TF32 && cc_major < 8)
    return "TF32 (CUBLAS_COMPUTE_32F_FAST_TF32) needs compute capability 8.0 or newer; this GPU "
           "is " +
           cc + ".";
  return std::nullopt;
}

std::optional<std::string> GemmSpec::why_invalid(int cc_major, int cc_minor) const {
  if (auto why = why_shape_invalid("cuBLASLt")) return why;
  if (auto why = rule_types(*this)) return why;
  if (auto why = why_gpu_lacks(cc_major, cc_minor)) return why;
  if (auto why = rule_int8(*this)) return why;
  if (auto why = rule_fp8(*this, cc_major, cc_minor)) return why;
  if (auto why = rule_scaling(*this, cc_major, cc_minor)) return why;
  return rule_epilogue(*this);
}

void GemmSpec::validate(int cc_major, int cc_minor) const {
  if (auto why = why_invalid(cc_major, cc_minor))
    throw InvalidArgument(*why + " [" + describe() + "]");
}

std::string GemmSpec::describe() const {
  const GemmProblem& p = problem;
  std::ostringstream os;
  os << "GEMM m=" << p.m << " n=" << p.n << " k=" << p.k;
  if (batch_count != 1)
    os << " batch=" << batch_count << " (strides A " << effective_stride_a() << ", B "
       << effective_stride_b() << ", C " << effective_stride_c() << ", D " << effective_stride_d()
       << ")";
  os << ": A " << data_type_name(a_type) << " op " << op_name(p.trans_a)
     << " lda=" << p.effective_lda() << ", B " << data_type_name(b_type) << " op "
     << op_name(p.trans_b) << " ldb=" << p.effective_ldb() << ", C " << data_type_name(c_type)
     << " ldc=" << p.effective_ldc() << ", D " << data_type_name(d_type)
     << " ldd=" << p.effective_ldd() << ", " << compute_type_name(compute_type) << ", scale "
     << data_type_name(scale_type);
  if (epilogue != CUBLASLT_EPILOGUE_DEFAULT) os << ", epilogue " << epilogue_name(epilogue);
  if (scale_mode != ScaleMode::tensor) os << ", scale mode " << name(scale_mode);
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

}  // namespace tcbench
