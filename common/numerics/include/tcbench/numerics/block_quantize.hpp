// One operand quantized with one granularity, on the host: the reference the quantization
// kernels are compared with bit for bit, and what the block-scaling study measures.
//
// An operand is K-major: `rows` rows (M of A, N of B; cuBLAS's "outer") of `cols` elements along
// K, element (r, c) at r * cols + c. Scales are kept logically here (row-major over rows x blocks,
// or block rows x blocks); to_cublas_scales() lays them out as cuBLASLt reads them
// (scale_layout.hpp).
#pragma once

#include "tcbench/numerics/block_scaling.hpp"
#include "tcbench/numerics/enum_names.hpp"
#include "tcbench/numerics/narrow_formats.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace tcbench::numerics {

enum class Granularity : std::uint8_t {
  tensor,         // one FP32 scale (current scaling; a given amax for delayed scaling)
  row,            // one FP32 scale per row: per token of A, per output channel of B (row-wise)
  tile_1x128,     // one FP32 scale per 1x128 tile along K (DeepSeek-V3 activations)
  block_128x128,  // one FP32 scale per 128x128 block (DeepSeek-V3 weights)
  mx,             // one E8M0 scale per 32 along K (OCP MX)
  nvfp4,          // one UE4M3 scale per 16 along K, and an FP32 tensor scale (NVFP4; E2M1 only)
};
inline constexpr EnumName<Granularity> kGranularityNames[] = {
    {Granularity::tensor, "tensor"},
    {Granularity::row, "row"},
    {Granularity::tile_1x128, "1x128"},
    {Granularity::block_128x128, "128x128"},
    {Granularity::mx, "mx"},
    {Granularity::nvfp4, "nvfp4"}};
static_assert(names_every_enumerator(kGranularityNames, Granularity::nvfp4));
constexpr std::string_view name(Granularity g) {
  return name_in(kGranularityNames, g);
}

// Elements along K that share a scale (0: the whole row or tensor).
constexpr std::int64_t block_of(Granularity g) {
  switch (g) {
    case Granularity::tile_1x128:
    case Granularity::block_128x128:
      return kTile;
    case Granularity::mx:
      return kMxBlock;
    case Granularity::nvfp4:
      return kNvfp4Block;
    default:
      return 0;
  }
}

struct QuantizedMatrix {
  std::int64_t rows = 0, cols = 0;
  Granularity granularity = Granularity::tensor;
  ElementFormat format = ElementFormat::e4m3;
  MxRule rule = MxRule::ocp;
  std::vector<std::uint8_t> codes;  // rows x cols, one code per byte
  // FP32 dequantizing scales: 1 (tensor), rows (row), rows x blocks (1x128),
  // block rows x blocks (128x128), row-major; empty for mx and nvfp4.
  std::vector<float> scales;
  // E8M0 (mx) or UE4M3 (nvfp4) codes, rows x blocks, row-major.
  std::vector<std::uint8_t> scale_codes;
  float tensor_scale = 1.0f;  // NVFP4's s_enc

  std::int64_t blocks() const;                        // scales per row along K
  float value(std::int64_t r, std::int64_t c) const;  // dequantized
  std::vector<float> dequantized() const;
  // Storage per element, scales included: bits / 8 + scale bytes / elements.
  double bytes_per_element() const;
};

// Quantizes x (rows x cols, K-major). `tensor_amax` replaces the tensor's own amax for
// Granularity::tensor (delayed scaling: last step's amax). Throws std::invalid_argument for a
// size mismatch, an empty matrix, or nvfp4 with a format other than E2M1.
QuantizedMatrix quantize(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                         Granularity g, ElementFormat f, MxRule rule = MxRule::ocp,
                         std::optional<float> tensor_amax = std::nullopt);

// The scale tensor of q as cuBLASLt reads it (scale_layout.hpp), as raw bytes: FP32 scales for
// row (OUTER_VEC_32F), 1x128 (VEC128_32F) and 128x128 (BLK128x128_32F), codes for mx
// (VEC32_UE8M0) and nvfp4 (VEC16_UE4M3), zero-padded. Throws for tensor (a scalar, no tensor).
std::vector<std::uint8_t> to_cublas_scales(const QuantizedMatrix& q);

// FP4 stores two elements per byte, element 2i in the low nibble (cuda_fp4.h's fp4x2: .x low).
std::vector<std::uint8_t> pack_fp4(std::span<const std::uint8_t> codes);

}  // namespace tcbench::numerics
