// The tensor-core accumulator model: alignment to the largest addend and truncation toward zero,
// on cases worked by hand from the model's definition (tensor_accumulator.hpp).
#include "tcbench/numerics/tensor_accumulator.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

namespace tcbench::numerics {
namespace {

double sum(std::vector<double> addends, int bits) {
  return aligned_truncated_sum(addends, bits);
}

TEST(TensorAccumulator, SmallIntegersAreExact) {
  EXPECT_EQ(sum({0, 1, 1, -1, 1}, 13), 2.0);
  EXPECT_EQ(sum({8191, 1}, 13), 8192.0);
  EXPECT_EQ(sum({16352, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                 1,     1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
                13),
            16384.0);  // every addend below 2^14: 13 fraction bits hold every integer
  EXPECT_EQ(sum({}, 13), 0.0);
  EXPECT_EQ(sum({3, -3}, 13), 0.0);
}

TEST(TensorAccumulator, OnesVanishBesideAnAccumulatorOf2To14With13FractionBits) {
  // 2^14 has its lowest kept bit at 2^(14 - 13) = 2: each +1 truncates to 0 (FP32 would add).
  std::vector<double> addends(33, 1.0);
  addends[0] = 16384;
  EXPECT_EQ(sum(addends, 13), 16384.0);
  EXPECT_EQ(sum(addends, 23), 16416.0);
  addends[0] = -16384;  // toward zero on both signs: -16384 + 32 * 1 -> the ones still vanish
  EXPECT_EQ(sum(addends, 13), -16384.0);
}

TEST(TensorAccumulator, TruncatesTowardZeroNotToNearest) {
  // 1 + 0.75 * 2^-10 with 10 fraction bits: the small addend loses all its bits below 2^-10.
  EXPECT_EQ(sum({1.0, 0.75 * std::ldexp(1.0, -10)}, 10), 1.0);
  // The result is truncated too: 2047 + 2 = 2049 needs 11 fraction bits; with 10 -> 2048.
  EXPECT_EQ(sum({2047, 2}, 10), 2048.0);
  EXPECT_EQ(sum({-2047, -2}, 10), -2048.0);
  EXPECT_EQ(sum({2047, 2}, 11), 2049.0);
}

TEST(TensorAccumulator, CheckLimitIsOneBitBelowSwamping) {
  EXPECT_EQ(exact_check_limit(13), 8192.0);
  EXPECT_EQ(exact_check_limit(10), 1024.0);
  EXPECT_EQ(exact_check_limit(23), 8388608.0);
  // At the limit the model still adds 1 exactly; at twice the limit it no longer does.
  EXPECT_EQ(sum({exact_check_limit(13), 1}, 13), 8193.0);
  EXPECT_EQ(sum({2 * exact_check_limit(13), 1}, 13), 16384.0);
}

TEST(TensorAccumulator, RefusesAWidthItCannotModel) {
  EXPECT_THROW(sum({1}, -1), std::invalid_argument);
  EXPECT_THROW(sum({1}, 41), std::invalid_argument);
}

}  // namespace
}  // namespace tcbench::numerics
