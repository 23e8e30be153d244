// The pad-copy kernel against the host reference, bit for bit, for 1-, 2- and 4-byte elements;
// the destination is poisoned first so an unwritten chunk shows. Skips without a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <random>
#include <vector>

#include "gpu_test.hpp"
#include "tcbench/cuda_owners.hpp"
#include "tcbench/error.hpp"
#include "tcbench/kernels/pad_copy.hpp"

namespace tn = tcbench::numerics;

namespace {

template <typename Bits>
void check(const tn::PadCopyShape& s) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<unsigned> bits(0, 0xFFFFFFFFu);
  std::vector<Bits> src(static_cast<std::size_t>(s.ld_src * s.cols));
  for (auto& v : src) v = static_cast<Bits>(bits(rng));
  std::vector<Bits> expected(static_cast<std::size_t>(s.ld_dst * s.cols_pad));
  tn::pad_copy_host(src.data(), s, expected.data());

  tcbench::DeviceBuffer<Bits> d_src(src.size()), d_dst(expected.size());
  d_src.upload(src);
  TCB_CUDA(cudaMemset(d_dst.get(), 0xFF, d_dst.bytes()));
  tcbench::kernels::pad_copy(s, sizeof(Bits), d_src.get(), d_dst.get(), nullptr);
  TCB_CUDA(cudaDeviceSynchronize());
  std::vector<Bits> got(expected.size());
  TCB_CUDA(cudaMemcpy(got.data(), d_dst.get(), d_dst.bytes(), cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, expected) << sizeof(Bits) << "-byte elements, " << s.rows << "x" << s.cols;
}

TEST(PadCopyDevice, MatchesHostBitExact) {
  TCB_REQUIRE_GPU(dev);
  check<std::uint16_t>({4096, 33, 4096, 4096, 40, 4096});  // fp16/bf16 B, N 33 -> 40
  check<std::uint16_t>({4096, 33, 4096, 4096, 48, 4096});  // ... -> 48
  check<std::uint16_t>({4095, 9, 4101, 4096, 16, 4104});   // K 4095 -> 4096, ld slack
  check<std::uint8_t>({4096, 33, 4096, 4096, 48, 4096});   // int8/fp8
  check<std::uint8_t>({33, 5, 37, 48, 16, 64});
  check<std::uint32_t>({4096, 33, 4096, 4096, 36, 4096});  // tf32
  check<std::uint32_t>({3, 2, 3, 4, 3, 8});
}

TEST(PadCopyDevice, RejectsBeforeLaunching) {
  TCB_REQUIRE_GPU(dev);
  tcbench::DeviceBuffer<std::uint16_t> buf(4096);
  // ld 33 fp16 = 66 bytes: not a 16-byte multiple.
  EXPECT_THROW(tcbench::kernels::pad_copy({33, 4, 33, 33, 4, 33}, 2, buf.get(), buf.get(), nullptr),
               tcbench::InvalidArgument);
  // A destination pointer off the 16-byte grid.
  EXPECT_THROW(tcbench::kernels::pad_copy({8, 4, 8, 8, 4, 8}, 2, buf.get(), buf.get() + 1, nullptr),
               tcbench::InvalidArgument);
}

}  // namespace
