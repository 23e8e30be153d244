// cuBLASLt's scale-tensor layouts (numerics/scale_layout.hpp) against the cuBLAS documentation,
// "Narrow Precision Data Types Usage": the 128x4 tile formula and its documented inverse, the
// row-major order of tiles, whole-tile padding, and the VEC128 (M-major) and BLK128x128 (K-major,
// stride a multiple of 4) shapes. tests/scripts/test_narrow_formats.py checks the same offsets
// against an independent numpy construction of the layout.
#include "tcbench/numerics/scale_layout.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>

namespace tn = tcbench::numerics;

namespace {

TEST(ScaleLayout, TileFormulaOnTheDocumentedCorners) {
  // offset = (outer % 32) * 16 + (outer / 32) * 4 + inner
  EXPECT_EQ(tn::tile_offset(0, 0), 0);
  EXPECT_EQ(tn::tile_offset(0, 3), 3);
  EXPECT_EQ(tn::tile_offset(1, 0), 16);  // the next row of the picture: 16 bytes on
  EXPECT_EQ(tn::tile_offset(32, 0), 4);  // rows 32..63 interleave beside rows 0..31
  EXPECT_EQ(tn::tile_offset(96, 1), 13);
  EXPECT_EQ(tn::tile_offset(31, 3), 499);
  EXPECT_EQ(tn::tile_offset(127, 3), 511);  // the last byte of the 512-byte tile
}

TEST(ScaleLayout, TileFormulaAndItsDocumentedInverseAreOneBijection) {
  std::set<std::int64_t> seen;
  for (std::int64_t outer = 0; outer < 128; ++outer)
    for (std::int64_t inner = 0; inner < 4; ++inner) {
      const std::int64_t o = tn::tile_offset(outer, inner);
      ASSERT_GE(o, 0);
      ASSERT_LT(o, 512);
      EXPECT_TRUE(seen.insert(o).second) << outer << "," << inner;
      EXPECT_EQ(tn::tile_outer(o), outer);
      EXPECT_EQ(tn::tile_inner(o), inner);
    }
  EXPECT_EQ(seen.size(), 512u);
}

TEST(ScaleLayout, TilesAreRowMajorWholeAndPadded) {
  // K = 512 in blocks of 32: 16 scales per row, 4 tiles per tile row.
  EXPECT_EQ(tn::sf_inner_dim(512, 32), 16);
  EXPECT_EQ(tn::block_scale_offset(0, 4, 512, 32), 512);        // second tile of the first row
  EXPECT_EQ(tn::block_scale_offset(128, 0, 512, 32), 4 * 512);  // first tile of the second row
  EXPECT_EQ(tn::block_scale_offset(129, 5, 512, 32), 4 * 512 + 512 + tn::tile_offset(1, 1));
  // One tile covers 128 x 64 elements with VEC16 and 128 x 128 with VEC32.
  for (std::int64_t r = 0; r < 128; ++r) {
    EXPECT_LT(tn::block_scale_offset(r, 63 / 16, 4096, 16), 512);
    EXPECT_LT(tn::block_scale_offset(r, 127 / 32, 4096, 32), 512);
    EXPECT_GE(tn::block_scale_offset(r, 64 / 16, 4096, 16), 512);
  }
  // 130 rows x K = 48 (3 blocks of 16): two tile rows of one tile each, allocated whole.
  EXPECT_EQ(tn::block_scale_elements(130, 48, 16), 256 * 4);
  std::set<std::int64_t> seen;
  for (std::int64_t r = 0; r < 256; ++r)
    for (std::int64_t b = 0; b < 4; ++b) {
      const std::int64_t o = tn::block_scale_offset(r, b, 48, 16);
      ASSERT_LT(o, tn::block_scale_elements(130, 48, 16));
      EXPECT_TRUE(seen.insert(o).second);
    }
}

TEST(ScaleLayout, Vec128IsOuterMajorAndBlk128IsKMajorWithAStrideOfFour) {
  // VEC128: M x L, M-major: consecutive rows are adjacent.
  EXPECT_EQ(tn::vec128_blocks(1000), 8);
  EXPECT_EQ(tn::vec128_elements(256, 1000), 256 * 8);
  EXPECT_EQ(tn::vec128_offset(1, 0, 256), 1);
  EXPECT_EQ(tn::vec128_offset(0, 1, 256), 256);
  // BLK128x128: L4 x ceil(M / 128), K-major, the column stride L rounded up to 4.
  EXPECT_EQ(tn::blk128_ld(1000), 8);
  EXPECT_EQ(tn::blk128_ld(640), 8);  // L = 5 -> 8
  EXPECT_EQ(tn::blk128_elements(300, 640), 8 * 3);
  EXPECT_EQ(tn::blk128_offset(2, 4, 640), 4 + 2 * 8);
}

}  // namespace
