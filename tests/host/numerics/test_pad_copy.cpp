// The pad copy's element function against an independent construction (zero buffer, then
// memcpy of each source column), and its validation sentences.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "tcbench/numerics/pad_copy.hpp"

namespace tn = tcbench::numerics;

namespace {

template <typename Bits>
void check_against_memcpy(const tn::PadCopyShape& s) {
  ASSERT_FALSE(tn::pad_copy_invalid(s, sizeof(Bits)).has_value());
  std::vector<Bits> src(static_cast<std::size_t>(s.ld_src * s.cols));
  std::iota(src.begin(), src.end(), Bits{1});  // no zeros: padding must be told from data
  std::vector<Bits> expected(static_cast<std::size_t>(s.ld_dst * s.cols_pad), Bits{0});
  for (std::int64_t j = 0; j < s.cols; ++j)
    std::memcpy(&expected[j * s.ld_dst], &src[j * s.ld_src], s.rows * sizeof(Bits));
  std::vector<Bits> got(expected.size(), static_cast<Bits>(~Bits{0}));
  tn::pad_copy_host(src.data(), s, got.data());
  EXPECT_EQ(got, expected);
}

TEST(PadCopy, MatchesColumnWiseMemcpy) {
  // The benchmark's case: B (K x N = 4096 x 33, fp16) as 4096 x 40 and 4096 x 48.
  check_against_memcpy<std::uint16_t>({4096, 33, 4096, 4096, 40, 4096});
  check_against_memcpy<std::uint16_t>({4096, 33, 4096, 4096, 48, 4096});
  // Rows padded too (K 4095 -> 4096), with slack in the source's leading dimension that must
  // not be copied.
  check_against_memcpy<std::uint16_t>({4095, 7, 4100, 4096, 8, 4096});
  check_against_memcpy<std::uint8_t>({33, 5, 37, 48, 16, 48});
  check_against_memcpy<std::uint32_t>({3, 2, 3, 4, 3, 8});
}

TEST(PadCopy, ElementFunction) {
  const tn::PadCopyShape s{3, 2, 5, 4, 3, 8};
  EXPECT_EQ(tn::pad_source_index(s, 0, 0), 0);
  EXPECT_EQ(tn::pad_source_index(s, 2, 1), 2 + 5);
  EXPECT_EQ(tn::pad_source_index(s, 3, 0), -1);  // padded row
  EXPECT_EQ(tn::pad_source_index(s, 0, 2), -1);  // padded column
  EXPECT_EQ(tn::pad_source_index(s, 6, 1), -1);  // ld slack of the destination
}

TEST(PadCopy, RejectsWithASentence) {
  const auto why = [](tn::PadCopyShape s, int bytes) {
    return tn::pad_copy_invalid(s, bytes).value_or("");
  };
  EXPECT_NE(why({4096, 33, 4096, 4096, 40, 4096}, 3).find("1, 2 or 4 bytes"), std::string::npos);
  EXPECT_NE(why({0, 33, 4096, 4096, 40, 4096}, 2).find("positive"), std::string::npos);
  EXPECT_NE(why({4096, 33, 4000, 4096, 40, 4096}, 2).find("source leading"), std::string::npos);
  EXPECT_NE(why({4096, 33, 4096, 4096, 32, 4096}, 2).find("smaller than the source"),
            std::string::npos);
  EXPECT_NE(why({4096, 33, 4096, 4096, 40, 4000}, 2).find("destination leading"),
            std::string::npos);
  // 33 fp16 rows = 66 bytes: the very misalignment padding exists to remove.
  const auto odd = why({33, 4, 33, 33, 4, 33}, 2);
  EXPECT_NE(odd.find("multiple of 16"), std::string::npos);
  EXPECT_NE(odd.find("33x4 (ld 33) -> 33x4 (ld 33)"), std::string::npos);
  EXPECT_FALSE(tn::pad_copy_invalid({33, 4, 33, 40, 4, 40}, 2).has_value());
  EXPECT_FALSE(tn::pad_copy_invalid({33, 4, 33, 36, 4, 36}, 4).has_value());
}

TEST(PadCopy, Bytes) {
  // 4096 x 33 fp16 read, 4096 x 40 written: 270,336 + 327,680 bytes (the padding_cost figure).
  EXPECT_DOUBLE_EQ(tn::pad_copy_bytes({4096, 33, 4096, 4096, 40, 4096}, 2), 598016.0);
}

}  // namespace
