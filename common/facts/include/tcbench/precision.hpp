// The GEMM precisions tcbench measures: ONE table, one row per precision. Everything that
// depends on a precision reads its row: GemmSpec::for_precision (types, compute and scale
// type, layout), GemmTypes<P> (the storage types at compile time), the error model (verify.cpp:
// its unit roundoffs follow from the row's compute and output types), the peak table's GeForce
// rule (peaks.cpp), the counters (tflops or tops) and the names the tools read
// (`tcbench_context --schema`, checked against scripts/tcbench_tools/schema.py).
//
// Adding a precision is one row here plus its peak rates in peaks.cpp (one column per row there,
// checked at compile time) and its test. See docs/architecture.md.
#pragma once

#include <cublas_api.h>
#include <library_types.h>

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace tcbench {

enum class Precision {
  fp64,        // FP64 on CUDA cores (DMMA where the peak table says so)
  fp32,        // FP32 on CUDA cores (SIMT FFMA), the baseline every speed-up is measured from
  tf32,        // TF32 tensor cores, FP32 accumulate
  fp16,        // FP16 in, FP32 accumulate (HMMA)
  fp16_acc16,  // FP16 in, FP16 accumulate (HMMA; double rate on GeForce parts)
  bf16,        // BF16 in, FP32 accumulate (HMMA)
  int8,        // INT8 in, INT32 accumulate (IMMA)
  fp8,         // FP8 (E4M3/E5M2) in, FP32 accumulate (QGMMA on Hopper)
  fp4,         // FP4 (E2M1) in, block-scaled (NVFP4; Blackwell), FP32 accumulate
  fp6,         // FP6 (E2M3/E3M2) in, block-scaled (MXFP6; Blackwell): no cuBLASLt GEMM, a peak
};

// One row: the configuration tcbench measures for a precision.
struct PrecisionInfo {
  Precision id;
  std::string_view name;  // benchmark names, context keys (peak_<name>), the Python tools
  // Element types of A, B, C and D (C aliases D: tcbench GEMMs run with beta = 0).
  cudaDataType_t a, b, c, d;
  cublasComputeType_t compute;  // fp32 is PEDANTIC: plain COMPUTE_32F lets cuBLAS opt into
                                // TF32 or BF16x9 emulation; the baseline must stay FFMA
  cudaDataType_t scale;         // the type of alpha and beta
  // Layout rule: A must be K-contiguous (transposed, "TN"), as IMMA, FP8 and FP4 tensor cores need
  // (cuBLAS documentation, cublasLtMatmul: "regular ordering" INT8, FP8 and FP4 requirements).
  bool a_k_major;
  bool integer;  // TOP/s ("tops") instead of TFLOP/s ("tflops"); exact accumulation
  // GeForce boards of architectures that have them run this precision's tensor math at half the
  // datacenter rate (FP32 accumulation: tf32, fp16, bf16, fp8, fp6); FP16-accumulate, INT8 and
  // FP4 do not (RTX 5090: 3352 sparse FP4 "AI TOPS" = 170 SMs x 2.407 GHz x 4096 x 2, the
  // full GB20x rate; peaks.cpp).
  bool halved_on_geforce;
};

// clang-format off
inline constexpr std::array kPrecisionTable = {
//               id                     name          A               B               C               D               compute                      scale        a_k_major integer halved_on_geforce
  PrecisionInfo{Precision::fp64,       "fp64",       CUDA_R_64F,     CUDA_R_64F,     CUDA_R_64F,     CUDA_R_64F,     CUBLAS_COMPUTE_64F,          CUDA_R_64F,  false, false, false},
  PrecisionInfo{Precision::fp32,       "fp32",       CUDA_R_32F,     CUDA_R_32F,     CUDA_R_32F,     CUDA_R_32F,     CUBLAS_COMPUTE_32F_PEDANTIC, CUDA_R_32F,  false, false, false},
  PrecisionInfo{Precision::tf32,       "tf32",       CUDA_R_32F,     CUDA_R_32F,     CUDA_R_32F,     CUDA_R_32F,     CUBLAS_COMPUTE_32F_FAST_TF32,CUDA_R_32F,  false, false, true},
  PrecisionInfo{Precision::fp16,       "fp16",       CUDA_R_16F,     CUDA_R_16F,     CUDA_R_16F,     CUDA_R_16F,     CUBLAS_COMPUTE_32F,          CUDA_R_32F,  false, false, true},
  PrecisionInfo{Precision::fp16_acc16, "fp16_acc16", CUDA_R_16F,     CUDA_R_16F,     CUDA_R_16F,     CUDA_R_16F,     CUBLAS_COMPUTE_16F,          CUDA_R_16F,  false, false, false},
  PrecisionInfo{Precision::bf16,       "bf16",       CUDA_R_16BF,    CUDA_R_16BF,    CUDA_R_16BF,    CUDA_R_16BF,    CUBLAS_COMPUTE_32F,          CUDA_R_32F,  false, false, true},
  PrecisionInfo{Precision::int8,       "int8",       CUDA_R_8I,      CUDA_R_8I,      CUDA_R_32I,     CUDA_R_32I,     CUBLAS_COMPUTE_32I,          CUDA_R_32I,  true,  true,  false},
  PrecisionInfo{Precision::fp8,        "fp8",        CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF,    CUDA_R_16BF,    CUBLAS_COMPUTE_32F,          CUDA_R_32F,  true,  false, true},
  PrecisionInfo{Precision::fp4,        "fp4",        CUDA_R_4F_E2M1, CUDA_R_4F_E2M1, CUDA_R_16BF,    CUDA_R_16BF,    CUBLAS_COMPUTE_32F,          CUDA_R_32F,  true,  false, false},
  PrecisionInfo{Precision::fp6,        "fp6",        CUDA_R_6F_E2M3, CUDA_R_6F_E2M3, CUDA_R_16BF,    CUDA_R_16BF,    CUBLAS_COMPUTE_32F,          CUDA_R_32F,  true,  false, true},
};
// clang-format on

inline constexpr std::size_t kNumPrecisions = kPrecisionTable.size();

constexpr std::size_t index_of(Precision p) {
  return static_cast<std::size_t>(p);
}

constexpr const PrecisionInfo& info(Precision p) {
  return kPrecisionTable[index_of(p)];
}

// Rows are in enumerator order, so info(p) is an index, and every enumerator has its row.
constexpr bool table_is_in_enum_order() {
  for (std::size_t i = 0; i < kNumPrecisions; ++i)
    if (index_of(kPrecisionTable[i].id) != i) return false;
  return true;
}
static_assert(table_is_in_enum_order(), "kPrecisionTable rows must follow the enum's order");

inline constexpr std::array<Precision, kNumPrecisions> kAllPrecisions = [] {
  std::array<Precision, kNumPrecisions> all{};
  for (std::size_t i = 0; i < kNumPrecisions; ++i) all[i] = kPrecisionTable[i].id;
  return all;
}();

constexpr std::string_view name(Precision p) {
  return info(p).name;
}

constexpr std::optional<Precision> parse_precision(std::string_view s) {
  for (const PrecisionInfo& row : kPrecisionTable)
    if (row.name == s) return row.id;
  return std::nullopt;
}

// Integer precisions report TOP/s ("tops"), the rest TFLOP/s ("tflops").
constexpr bool is_integer(Precision p) {
  return info(p).integer;
}

}  // namespace tcbench
