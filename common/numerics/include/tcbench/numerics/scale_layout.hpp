// Where cuBLASLt reads each block scale of an operand: the scale-tensor layouts of
// cublasLtMatmulMatrixScale_t as index functions (scale element -> offset in scale elements),
// with the sizes a caller must allocate. Pure arithmetic, host and device.
//
// An operand is described as cuBLAS does for scales: `outer` is M for A and N for B, `inner` is
// K (the dimension the blocks run along). Source: cuBLAS documentation, section "Narrow Precision
// Data Types Usage" (https://docs.nvidia.com/cuda/cublas/#narrow-precision-data-types-usage):
//   - OUTER_VEC_32F: a vector of M (A) or N (B) scales.
//   - VEC16_UE4M3 / VEC32_UE8M0, "1D Block Scaling Factors Layout"
//     (https://docs.nvidia.com/cuda/cublas/#d-block-scaling-factors-layout): 128x4 tiles of scales
//     (128 outer indices x 4 blocks along K), one 512-byte tile each; inside a tile
//     offset = (outer % 32) * 16 + (outer / 32) * 4 + inner; tiles in row-major order, the tile
//     with top-left scale (sf_outer, sf_inner) at (sf_inner + sf_outer * sf_inner_dim) * 128, with
//     sf_inner_dim the scales per row rounded up to 4 and sf_outer counted in tiles (128 rows:
//     that is what makes consecutive tile rows 512 * sf_inner_dim / 4 bytes apart). Partial tiles
//     are allocated in full and padded with zero scales. The layout ignores transposition.
//   - VEC128_32F (section "128-element 1D and 128x128 2D Block Scaling For FP8 Data Types",
//     "Scaling factors layouts"): M-major for A with shape M x L (N x L for B), L = ceil(K / 128):
//     the scale of (outer i, block b) at i + b * outer.
//   - BLK128x128_32F: K-major with shape L4 x ceil(outer / 128), L4 = L rounded up to 4 (the
//     stride between columns must be a multiple of 4): the scale of (block row p, block b) at
//     b + p * L4.
//   Scale tensors start 16-byte aligned; for VEC128/BLK128x128, M and N must be multiples of 4.
#pragma once

#include "tcbench/numerics/host_device.hpp"

#include <cstdint>

namespace tcbench::numerics {

inline constexpr std::int64_t kScaleTileOuter = 128;  // rows of a 128x4 scale tile
inline constexpr std::int64_t kScaleTileInner = 4;    // blocks (scales along K) of a tile
inline constexpr std::int64_t kScaleTileElements = kScaleTileOuter * kScaleTileInner;  // 512
inline constexpr std::int64_t kScaleAlignBytes = 16;

// Unchecked (constexpr, device-callable); gemm_padding.hpp's round_up is the checked host one.
TCB_HD constexpr std::int64_t padded_to(std::int64_t a, std::int64_t to) {
  return ceil_div(a, to) * to;
}

// VEC16_UE4M3 / VEC32_UE8M0 ---------------------------------------------------------------------
// Offset inside one 128x4 tile (outer < 128, inner < 4).
TCB_HD constexpr std::int64_t tile_offset(std::int64_t outer, std::int64_t inner) {
  return (outer % 32) * 16 + (outer / 32) * 4 + inner;
}
// The documented inverse: offset -> (outer, inner).
TCB_HD constexpr std::int64_t tile_outer(std::int64_t offset) {
  return ((offset % 16) / 4) * 32 + offset / 16;
}
TCB_HD constexpr std::int64_t tile_inner(std::int64_t offset) {
  return offset % 4;
}
// Scales per row as the layout stores them (the blocks along K, rounded up to whole tiles).
TCB_HD constexpr std::int64_t sf_inner_dim(std::int64_t inner, std::int64_t block) {
  return padded_to(ceil_div(inner, block), kScaleTileInner);
}
// Offset of the scale of block `b` (along K) of row `outer`, for an operand whose K extent is
// `inner` elements in blocks of `block`.
TCB_HD constexpr std::int64_t block_scale_offset(std::int64_t outer, std::int64_t b,
                                                 std::int64_t inner, std::int64_t block) {
  const std::int64_t dim = sf_inner_dim(inner, block);
  // The documentation's (sf_inner + sf_outer * sf_inner_dim) * 128, sf_inner = the tile's first
  // block, sf_outer = the tile row.
  const std::int64_t sf_inner = (b / kScaleTileInner) * kScaleTileInner;
  const std::int64_t tile_start = (sf_inner + (outer / kScaleTileOuter) * dim) * kScaleTileOuter;
  return tile_start + tile_offset(outer % kScaleTileOuter, b % kScaleTileInner);
}
// Scale elements to allocate (whole tiles).
TCB_HD constexpr std::int64_t block_scale_elements(std::int64_t outer, std::int64_t inner,
                                                   std::int64_t block) {
  return padded_to(outer, kScaleTileOuter) * sf_inner_dim(inner, block);
}

// VEC128_32F ------------------------------------------------------------------------------------
TCB_HD constexpr std::int64_t vec128_blocks(std::int64_t inner) {
  return ceil_div(inner, std::int64_t{128});
}
TCB_HD constexpr std::int64_t vec128_offset(std::int64_t outer_index, std::int64_t b,
                                            std::int64_t outer) {
  return outer_index + b * outer;
}
TCB_HD constexpr std::int64_t vec128_elements(std::int64_t outer, std::int64_t inner) {
  return outer * vec128_blocks(inner);
}

// BLK128x128_32F --------------------------------------------------------------------------------
TCB_HD constexpr std::int64_t blk128_ld(std::int64_t inner) {
  return padded_to(vec128_blocks(inner), 4);
}
TCB_HD constexpr std::int64_t blk128_offset(std::int64_t p, std::int64_t b, std::int64_t inner) {
  return b + p * blk128_ld(inner);
}
TCB_HD constexpr std::int64_t blk128_elements(std::int64_t outer, std::int64_t inner) {
  return blk128_ld(inner) * ceil_div(outer, std::int64_t{128});
}

}  // namespace tcbench::numerics
