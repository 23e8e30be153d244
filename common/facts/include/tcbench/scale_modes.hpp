// How a narrow-precision GEMM's A and B are scaled: the small table beside the precision table
// (precision.hpp). A precision says what the elements are (fp8, fp4, ...); a scale mode says how
// fine their scales are, which cuBLASLt scale modes (cublasLtMatmulMatrixScale_t) carry them, in
// which scale type, how the operands are quantized (numerics/block_quantize.hpp) and on which
// compute capabilities cuBLAS documents the mode. GemmSpec::scale_mode picks a row;
// GemmSpec::why_invalid checks a spec against it; make_matmul_desc sets the modes.
//
// Source: cuBLAS documentation, "Narrow Precision Data Types Usage", the Scaling Mode Support
// Overview table and the sections after it
// (https://docs.nvidia.com/cuda/cublas/#narrow-precision-data-types-usage):
//   tensor-wide scaling 8.9+; outer-vector, 128-element 1D and 128x128 2D block scaling 9.0
//   (A and B may mix VEC128 and BLK128x128, except both BLK128x128; D 16F, 16BF or 32F only);
//   32-element 1D block scaling with UE8M0 scales for FP8 and 16-element with UE4M3 scales for
//   FP4, 10.0+ (cublasLtMatmul: block-scaled FP4 is E2M1 x E2M1 with VEC16_UE4M3 only).
#pragma once

#include "tcbench/numerics/block_quantize.hpp"
#include "tcbench/numerics/enum_names.hpp"

#include <cublasLt.h>
#include <library_types.h>

#include <cstddef>
#include <string_view>

namespace tcbench {

enum class ScaleMode : std::uint8_t {
  tensor,         // one FP32 scale per operand (Transformer Engine's per-tensor recipes)
  rowwise,        // one FP32 scale per row of A and per column of B (outer-vector)
  tile_1x128,     // one FP32 scale per 1x128 tile along K of A and of B
  block_128x128,  // A (weights) per 128x128 block, B (activations) per 1x128 tile: DeepSeek-V3
  mx,             // one E8M0 scale per 32 along K (OCP MX: MXFP8)
  nvfp4,          // one UE4M3 scale per 16 along K, plus the tensor scales in alpha (NVFP4)
};

struct ScaleModeInfo {
  ScaleMode id;
  std::string_view name;  // benchmark names: block_scaling/gemm_<name>/<precision>/...
  cublasLtMatmulMatrixScale_t a_mode, b_mode;
  cudaDataType_t scale_type;   // of the scale tensors' elements
  numerics::Granularity a, b;  // how A and B are quantized
  int min_cc;  // the compute capabilities cuBLAS documents it for (cc_number: 90 for 9.0)
  int max_cc;  // 0: no upper limit
};

// clang-format off
inline constexpr ScaleModeInfo kScaleModeTable[] = {
//  id                        name       A mode                                      B mode                                      scale type       A granularity                       B granularity                     min  max
  {ScaleMode::tensor,        "tensor",  CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F,     CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F,    CUDA_R_32F,      numerics::Granularity::tensor,        numerics::Granularity::tensor,      89,  0},
  {ScaleMode::rowwise,       "rowwise", CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F,  CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F, CUDA_R_32F,      numerics::Granularity::row,           numerics::Granularity::row,         90,  90},
  {ScaleMode::tile_1x128,    "1x128",   CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F,     CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F,    CUDA_R_32F,      numerics::Granularity::tile_1x128,    numerics::Granularity::tile_1x128,  90,  90},
  {ScaleMode::block_128x128, "128x128", CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F, CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F,    CUDA_R_32F,      numerics::Granularity::block_128x128, numerics::Granularity::tile_1x128,  90,  90},
  {ScaleMode::mx,            "mx",      CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0,    CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0,   CUDA_R_8F_UE8M0, numerics::Granularity::mx,            numerics::Granularity::mx,          100, 0},
  {ScaleMode::nvfp4,         "nvfp4",   CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3,    CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3,   CUDA_R_8F_UE4M3, numerics::Granularity::nvfp4,         numerics::Granularity::nvfp4,       100, 0},
};
// clang-format on

constexpr bool scale_modes_in_enum_order() {
  for (std::size_t i = 0; i < std::size(kScaleModeTable); ++i)
    if (static_cast<std::size_t>(kScaleModeTable[i].id) != i) return false;
  return static_cast<std::size_t>(ScaleMode::nvfp4) + 1 == std::size(kScaleModeTable);
}
static_assert(scale_modes_in_enum_order(), "kScaleModeTable rows must follow the enum's order");

constexpr const ScaleModeInfo& info(ScaleMode m) {
  return kScaleModeTable[static_cast<std::size_t>(m)];
}
constexpr std::string_view name(ScaleMode m) {
  return info(m).name;
}

}  // namespace tcbench
