// The FP32 SIMT GEMM (kernels/gemm_simt.cu).
//   SimtLayout: host-only proofs about the tile geometry the kernel uses (tcbench::kernels::simt):
//     every output is owned by exactly one thread, the loaders cover each tile once, and every
//     shared-memory access is free of bank conflicts. They run everywhere, GPU or not.
//   SimtKernel: on a GPU, the kernel equals the host sequence (gemm_simt_fp32_host) bit for bit
//     at edge shapes, and never writes outside the m x n matrix (padding rows stay poisoned).
#include "gpu_test.hpp"

#include "tcbench/cuda_owners.hpp"
#include "tcbench/kernels/gemm_simt.hpp"
#include "tcbench/random_fill.hpp"

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cstdint>
#include <set>
#include <vector>

namespace tcbench {
namespace {

using namespace kernels::simt;

constexpr int kWarp = 32, kBanks = 32;

// Shared-memory wavefronts one warp-wide access needs, in the usual model: 32 banks of 4 bytes,
// 128 bytes served per wavefront, so an access of `words` 4-byte words per thread (1, 2 or 4) is
// served in groups of 32 / words threads; within a group, each bank serves one distinct word per
// wavefront (threads reading the same word share it: broadcast). The minimum is `words`. The
// 128-bytes-per-cycle figure and "LDS.128 needs 4 requests": NVIDIA developer forums, "Unexpected
// shared memory bank conflict" (forums.developer.nvidia.com/t/77228), answer by NVIDIA staff.
int wavefronts(const std::array<int, kWarp>& word_offset, int words) {
  const int group = kWarp / words;
  int total = 0;
  for (int first = 0; first < kWarp; first += group) {
    std::array<std::set<int>, kBanks> words_in_bank;
    for (int t = first; t < first + group; ++t)
      for (int w = 0; w < words; ++w) {
        const int word = word_offset[t] + w;
        words_in_bank[word % kBanks].insert(word);
      }
    std::size_t worst = 1;
    for (const auto& s : words_in_bank) worst = std::max(worst, s.size());
    total += static_cast<int>(worst);
  }
  return total;
}

TEST(SimtLayout, WavefrontModelSeesConflicts) {
  std::array<int, kWarp> same_bank{}, consecutive{}, broadcast{};
  for (int t = 0; t < kWarp; ++t) {
    same_bank[t] = t * kBanks;
    consecutive[t] = t;
    broadcast[t] = 0;
  }
  EXPECT_EQ(wavefronts(same_bank, 1), 32);
  EXPECT_EQ(wavefronts(consecutive, 1), 1);
  EXPECT_EQ(wavefronts(broadcast, 4), 4);
}

TEST(SimtLayout, EveryOutputOfTheTileHasExactlyOneThread) {
  std::vector<int> owners(kBlockM * kBlockN, 0);
  for (int tid = 0; tid < kThreads; ++tid)
    for (int r = 0; r < kThreadM; ++r)
      for (int c = 0; c < kThreadN; ++c) {
        const int row = fragment_row(tid, r), col = fragment_col(tid, c);
        ASSERT_GE(row, 0);
        ASSERT_LT(row, kBlockM);
        ASSERT_GE(col, 0);
        ASSERT_LT(col, kBlockN);
        ++owners[row + col * kBlockM];
      }
  for (int i = 0; i < kBlockM * kBlockN; ++i) ASSERT_EQ(owners[i], 1) << "tile element " << i;
}

TEST(SimtLayout, LoadersCoverEachTileOnce) {
  std::vector<int> a(kBlockK * kBlockM, 0), b(kBlockK * kBlockN, 0);
  for (int tid = 0; tid < kThreads; ++tid)
    for (int pass = 0; pass < kLoadsPerThread; ++pass) {
      const TileIndex ia = a_load_index(tid, pass), ib = b_load_index(tid, pass);
      ASSERT_TRUE(ia.k >= 0 && ia.k < kBlockK && ia.mn >= 0 && ia.mn < kBlockM);
      ASSERT_TRUE(ib.k >= 0 && ib.k < kBlockK && ib.mn >= 0 && ib.mn < kBlockN);
      ++a[ia.k * kBlockM + ia.mn];
      ++b[ib.k * kBlockN + ib.mn];
    }
  for (int v : a) ASSERT_EQ(v, 1);
  for (int v : b) ASSERT_EQ(v, 1);
}

// Consecutive threads read consecutive addresses in global memory: A along m (column-major A is
// m-contiguous), B along k (column-major B is k-contiguous), so a warp's loads coalesce.
TEST(SimtLayout, GlobalLoadsAreContiguousPerWarp) {
  for (int tid = 0; tid + 1 < kThreads; ++tid) {
    if ((tid + 1) % kWarp == 0) continue;
    for (int pass = 0; pass < kLoadsPerThread; ++pass) {
      const TileIndex a0 = a_load_index(tid, pass), a1 = a_load_index(tid + 1, pass);
      if (a1.mn != 0) {
        EXPECT_TRUE(a1.k == a0.k && a1.mn == a0.mn + 1) << tid;
      }
      const TileIndex b0 = b_load_index(tid, pass), b1 = b_load_index(tid + 1, pass);
      if (b1.k != 0) {
        EXPECT_TRUE(b1.mn == b0.mn && b1.k == b0.k + 1) << tid;
      }
    }
  }
}

TEST(SimtLayout, SharedStoresAreConflictFree) {
  for (int warp = 0; warp < kThreads / kWarp; ++warp)
    for (int pass = 0; pass < kLoadsPerThread; ++pass) {
      std::array<int, kWarp> a{}, b{};
      for (int lane = 0; lane < kWarp; ++lane) {
        const int tid = warp * kWarp + lane;
        const TileIndex ia = a_load_index(tid, pass), ib = b_load_index(tid, pass);
        a[lane] = a_smem_offset(ia.k, ia.mn);
        b[lane] = b_smem_offset(ib.k, ib.mn);
      }
      EXPECT_EQ(wavefronts(a, 1), 1) << "A store, warp " << warp << " pass " << pass;
      EXPECT_EQ(wavefronts(b, 1), 1) << "B store, warp " << warp << " pass " << pass;
    }
}

// The padding is what makes the transposing B store conflict-free: without it (row stride 128,
// as in the previous kernel's layout) the same store needs 8 wavefronts.
TEST(SimtLayout, BStoreWithoutPaddingWouldConflict) {
  static_assert(kBStride != kBlockN);
  std::array<int, kWarp> unpadded{};
  for (int lane = 0; lane < kWarp; ++lane) {
    const TileIndex ib = b_load_index(lane, 0);
    unpadded[lane] = ib.k * kBlockN + ib.mn;
  }
  EXPECT_EQ(wavefronts(unpadded, 1), 8);
}

TEST(SimtLayout, FragmentReadsAreAlignedConflictFreeLds128) {
  for (int warp = 0; warp < kThreads / kWarp; ++warp)
    for (int k = 0; k < kBlockK; ++k)
      for (int q = 0; q < kThreadM; q += 4) {
        std::array<int, kWarp> a{}, b{};
        for (int lane = 0; lane < kWarp; ++lane) {
          const int tid = warp * kWarp + lane;
          a[lane] = a_smem_offset(k, fragment_row(tid, q));
          b[lane] = b_smem_offset(k, fragment_col(tid, q));
          ASSERT_EQ(a[lane] % 4, 0) << "A read not 16-byte aligned";
          ASSERT_EQ(b[lane] % 4, 0) << "B read not 16-byte aligned";
          for (int w = 1; w < 4; ++w) {  // the 4 words of one LDS.128 are the thread's next rows
            EXPECT_EQ(fragment_row(tid, q + w), fragment_row(tid, q) + w);
            EXPECT_EQ(fragment_col(tid, q + w), fragment_col(tid, q) + w);
          }
        }
        EXPECT_EQ(wavefronts(a, 4), 4) << "A read, warp " << warp << " k " << k << " q " << q;
        EXPECT_EQ(wavefronts(b, 4), 4) << "B read, warp " << warp << " k " << k << " q " << q;
      }
}

// The host sequence is the product: small integers make every fma exact, so it must equal the
// textbook sum, with the leading dimensions honoured.
TEST(SimtHost, HostSequenceIsTheProduct) {
  GemmProblem p;
  p.m = 5;
  p.n = 4;
  p.k = 3;
  p.lda = 7;
  p.ldb = 3;
  p.ldd = 6;
  p.resolve();
  std::vector<float> a(7 * 3), b(3 * 4), d(6 * 4, -1.0f);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
  kernels::gemm_simt_fp32_host(p, a.data(), b.data(), d.data());
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 6; ++i) {
      double want = -1.0;  // rows m..ldd-1 untouched
      if (i < 5) {
        want = 0.0;
        for (int l = 0; l < 3; ++l) want += double(a[i + l * 7]) * double(b[l + j * 3]);
      }
      EXPECT_EQ(d[i + j * 6], want) << i << "," << j;
    }
}

// ---- on a GPU ----

struct Shape {
  std::int64_t m, n, k, lda = 0, ldb = 0, ldd = 0;
};

void PrintTo(const Shape& s, std::ostream* os) {
  *os << s.m << "x" << s.n << "x" << s.k << " ld " << s.lda << "/" << s.ldb << "/" << s.ldd;
}

class SimtKernel : public ::testing::TestWithParam<Shape> {};

TEST_P(SimtKernel, EqualsHostSequenceBitForBitAndWritesOnlyTheMatrix) {
  TCB_REQUIRE_GPU(dev);
  const Shape s = GetParam();
  GemmProblem p;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.lda = s.lda;
  p.ldb = s.ldb;
  p.ldd = s.ldd;
  p.resolve();
  std::vector<float> a(checked_elements(p.lda, p.k)), b(checked_elements(p.ldb, p.n));
  fill_random_host<float>(a, Distribution::uniform(-1, 1), 21);
  fill_random_host<float>(b, Distribution::uniform(-1, 1), 22);
  std::vector<float> want(checked_elements(p.ldd, p.n), 0.0f);
  kernels::gemm_simt_fp32_host(p, a.data(), b.data(), want.data());

  Stream stream;
  DeviceBuffer<float> da(a.size()), db(b.size()), dd(want.size());
  da.upload(a, stream.get());
  db.upload(b, stream.get());
  TCB_CUDA(cudaMemsetAsync(dd.get(), 0xFF, dd.bytes(), stream.get()));  // NaN everywhere
  kernels::gemm_simt_fp32(p, da.get(), db.get(), dd.get(), stream.get());
  const std::vector<float> got = dd.download(stream.get());

  std::int64_t wrong = 0, touched_padding = 0;
  for (std::int64_t j = 0; j < p.n; ++j)
    for (std::int64_t i = 0; i < p.ldd; ++i) {
      const std::size_t at = static_cast<std::size_t>(i + j * p.ldd);
      if (i < p.m) {
        // == (not bit equality) so that +0 and -0 compare equal; NaN never does.
        if (!(got[at] == want[at]) && wrong++ < 5)
          ADD_FAILURE() << "D(" << i << ", " << j << ") = " << got[at] << ", host " << want[at];
      } else if (std::bit_cast<std::uint32_t>(got[at]) != 0xFFFFFFFFu) {
        ++touched_padding;
      }
    }
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(touched_padding, 0) << "the kernel wrote rows m..ldd-1";
}

INSTANTIATE_TEST_SUITE_P(
    EdgeShapes, SimtKernel,
    ::testing::Values(Shape{1, 1, 1},         // one element, one partial slice
                      Shape{257, 259, 263},   // 3x3 CTAs, partial tiles in m, n and k
                      Shape{128, 128, 8},     // exactly one tile, one slice
                      Shape{129, 127, 13},    // k not a multiple of 8
                      Shape{300, 200, 7},     // k below one slice
                      Shape{64, 1000, 1},     // k = 1, many CTAs in n
                      Shape{520, 390, 1000},  // many slices through both buffers
                      Shape{257, 259, 263, 260, 270, 300}));  // leading dims above the minimum

}  // namespace
}  // namespace tcbench
