// The STREAM triad kernel against the host, bit for bit (the same fused multiply-add), at a size
// with a tail that the vector loop does not cover. Skips without a GPU.
#include "gpu_test.hpp"

#include "tcbench/cuda_owners.hpp"
#include "tcbench/kernels/stream_triad.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace tcbench::kernels {
namespace {

TEST(StreamTriad, MatchesTheHostBitForBit) {
  TCB_REQUIRE_GPU(dev);
  const std::size_t n = (1 << 20) + 3;
  std::vector<float> b(n), c(n);
  for (std::size_t i = 0; i < n; ++i) {
    b[i] = 0.25f * static_cast<float>(i % 1000) - 100.0f;
    c[i] = std::ldexp(1.0f + static_cast<float>(i % 7) / 7.0f, static_cast<int>(i % 11) - 5);
  }
  DeviceBuffer<float> db(n), dc(n), da(n);
  db.upload(b);
  dc.upload(c);
  Stream stream;  // non-blocking: the poison must go on it, not on the legacy default stream
  TCB_CUDA(cudaMemsetAsync(da.get(), 0xFF, da.bytes(), stream.get()));  // NaN if left unwritten
  stream_triad(db.get(), dc.get(), da.get(), 3.0f, n, stream.get());
  const std::vector<float> a = da.download(stream.get());
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float want = triad(b[i], c[i], 3.0f);
    if (std::memcmp(&a[i], &want, sizeof(float)) != 0) ++wrong;
  }
  EXPECT_EQ(wrong, 0u);
}

TEST(StreamTriadHost, ElementIsOneFusedMultiplyAdd) {
  // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 needs 25 bits: a separate multiply would round the
  // 2^-24 away before the add and return 0; one fused rounding keeps it.
  const float x = 1.0f + std::ldexp(1.0f, -12), b = -(1.0f + std::ldexp(1.0f, -11));
  EXPECT_EQ(triad(b, x, x), std::ldexp(1.0f, -24));
  EXPECT_EQ(stream_triad_bytes(10), 120.0);
}

}  // namespace
}  // namespace tcbench::kernels
