// The WMMA GEMM family (gemm_wmma.hpp): one warp-tile loop, two versions.
//   fp16/bf16  m16n16k16, FP32 accumulate, NN; the SASS test asserts HMMA
//   int8       m16n16k16 signed char, INT32 accumulate, TN; the SASS test asserts IMMA from sm_75
// Each CTA computes a 64x64 tile with four warps of 32x32, in BK = 32 deep steps through shared
// memory; edge tiles are zero-padded, then the accumulators go through a shared staging tile to
// a bounds-checked store.
//
// Alignment: load_matrix_sync and store_matrix_sync need 256-bit (32-byte) aligned pointers and
// leading dimensions that are multiples of 16 bytes (CUDA C++ Programming Guide, "Warp Matrix
// Functions"). Every fragment pointer below is at a multiple of 32 bytes; the static_asserts
// hold the arithmetic.
#include "tcbench/error.hpp"
#include "tcbench/kernels/gemm_wmma.hpp"

#include <mma.h>

#include <type_traits>

namespace tcbench::kernels {
namespace {

namespace wmma = nvcuda::wmma;

constexpr int kBM = 64, kBN = 64, kBK = 32;
constexpr int kWarpTile = 32;   // each warp owns a 32x32 output tile
constexpr int kFrag = 16;       // m16n16k16
constexpr int kThreads = 128;   // 2x2 warps
constexpr int kPadC = kBN + 4;  // staging rows: 68 x 4 bytes = 272, a multiple of 16
static_assert(kFrag * kPadC * 4 % 32 == 0, "staging fragment rows start 32-byte aligned");

// The warp tile's four MMAs for one kFrag-deep step: two A fragments (rows wm, wm + 16), two B
// fragments (columns wn, wn + 16), from the pointers load_a(i) and load_b(j).
template <typename FragA, typename FragB, typename Acc, typename PtrA, typename PtrB>
__device__ inline void warp_tile_step(Acc (&acc)[2][2], PtrA ptr_a, unsigned lda, PtrB ptr_b,
                                      unsigned ldb) {
  FragA fa[2];
  FragB fb[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(fa[i], ptr_a(i), lda);
#pragma unroll
  for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], ptr_b(j), ldb);
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
}

// Accumulators through shared memory (cs[i][j], row-major) to D, bounds-checked and converted.
template <typename Acc, typename C, typename Out, typename Convert>
__device__ inline void store_tile(Acc (&acc)[2][2], C (&cs)[kBM][kPadC], int wm, int wn,
                                  const GemmProblem& p, std::int64_t m0, std::int64_t n0, Out* d,
                                  Convert convert) {
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(&cs[wm + i * kFrag][wn + j * kFrag], acc[i][j], kPadC,
                              wmma::mem_row_major);
  __syncthreads();
  for (int e = threadIdx.x; e < kBM * kBN; e += kThreads) {
    const int i = e % kBM, j = e / kBM;
    const std::int64_t gi = m0 + i, gj = n0 + j;
    if (gi < p.m && gj < p.n) d[gi + gj * p.ldd] = convert(cs[i][j]);
  }
}

template <typename Acc>
__device__ inline void zero(Acc (&acc)[2][2]) {
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0);
}

// --- Version 1: FP16/BF16, FP32 accumulate, NN ------------------------------------------------

// Row padding keeps leading dimensions multiples of 8 elements (16 bytes) while breaking
// shared-memory bank conflicts between columns.
constexpr int kPadA = kBM + 8;  // A tile stored (BK, BM): element (i, l) at [l][i], 144 B rows
constexpr int kPadB = kBK + 8;  // B tile stored (BN, BK): element (l, j) at [j][l], 80 B rows
static_assert(kFrag * kPadA * 2 % 32 == 0 && kFrag * kPadB * 2 % 32 == 0 && kFrag * 2 % 32 == 0,
              "16-bit fragment pointers (rows and columns in steps of 16) are 32-byte aligned");

template <typename T>
__device__ inline T from_float(float v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(v);
  } else {
    return __float2bfloat16_rn(v);
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    gemm_wmma_kernel(GemmProblem p, const T* __restrict__ a, const T* __restrict__ b,
                     T* __restrict__ d) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    __trap();  // unreachable: the host refuses BF16 before sm_80 (wmma_unsupported_reason)
    return;
  } else
#endif
  {
    __shared__ __align__(32) T as[kBK][kPadA];
    __shared__ __align__(32) T bs[kBN][kPadB];
    __shared__ __align__(32) float cs[kBM][kPadC];
    const int tid = threadIdx.x, warp = tid / 32;
    const int wm = (warp % 2) * kWarpTile, wn = (warp / 2) * kWarpTile;
    const std::int64_t m0 = blockIdx.x * static_cast<std::int64_t>(kBM);
    const std::int64_t n0 = blockIdx.y * static_cast<std::int64_t>(kBN);
    const T zero_t = from_float<T>(0.0f);

    wmma::fragment<wmma::accumulator, kFrag, kFrag, kFrag, float> acc[2][2];
    zero(acc);
    for (std::int64_t k0 = 0; k0 < p.k; k0 += kBK) {
      for (int e = tid; e < kBM * kBK; e += kThreads) {
        const int i = e % kBM, l = e / kBM;
        const std::int64_t gi = m0 + i, gl = k0 + l;
        as[l][i] = (gi < p.m && gl < p.k) ? a[gi + gl * p.lda] : zero_t;
      }
      for (int e = tid; e < kBN * kBK; e += kThreads) {
        const int l = e % kBK, j = e / kBK;
        const std::int64_t gl = k0 + l, gj = n0 + j;
        bs[j][l] = (gl < p.k && gj < p.n) ? b[gl + gj * p.ldb] : zero_t;
      }
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < kBK; kk += kFrag)
        warp_tile_step<wmma::fragment<wmma::matrix_a, kFrag, kFrag, kFrag, T, wmma::col_major>,
                       wmma::fragment<wmma::matrix_b, kFrag, kFrag, kFrag, T, wmma::col_major>>(
            acc, [&](int i) { return &as[kk][wm + i * kFrag]; }, kPadA,
            [&](int j) { return &bs[wn + j * kFrag][kk]; }, kPadB);
      __syncthreads();
    }
    store_tile(acc, cs, wm, wn, p, m0, n0, d, [](float v) { return from_float<T>(v); });
  }
}

// --- Version 2: INT8, INT32 accumulate, TN ----------------------------------------------------

// Each 16-deep K slice of a tile is its own sub-array with 32-byte rows (16 values, 16 bytes of
// padding that also spread rows over banks), so every fragment pointer is 32-byte aligned: one
// 48-byte row holding the whole BK = 32 would put the second slice's fragments 16 bytes off.
constexpr int kSlices = kBK / kFrag;
constexpr int kSliceRow = 32;  // bytes per row of a slice
static_assert(kSliceRow % 32 == 0 && kSliceRow >= kFrag, "int8 slice rows are 32-byte multiples");

__global__ void __launch_bounds__(kThreads)
    gemm_wmma_int8_kernel(GemmProblem p, const signed char* __restrict__ a,
                          const signed char* __restrict__ b, int* __restrict__ d) {
  __shared__ __align__(32) signed char as[kSlices][kBM][kSliceRow];  // A(i, l): K-contiguous
  __shared__ __align__(32) signed char bs[kSlices][kBN][kSliceRow];  // B(l, j): K-contiguous
  __shared__ __align__(32) int cs[kBM][kPadC];
  const int tid = threadIdx.x, warp = tid / 32;
  const int wm = (warp % 2) * kWarpTile, wn = (warp / 2) * kWarpTile;
  const std::int64_t m0 = blockIdx.x * static_cast<std::int64_t>(kBM);
  const std::int64_t n0 = blockIdx.y * static_cast<std::int64_t>(kBN);

  wmma::fragment<wmma::accumulator, kFrag, kFrag, kFrag, int> acc[2][2];
  zero(acc);
  for (std::int64_t k0 = 0; k0 < p.k; k0 += kBK) {
    // Consecutive threads read consecutive K: coalesced, since both operands are K-contiguous.
    for (int e = tid; e < kBM * kBK; e += kThreads) {
      const int l = e % kBK, i = e / kBK;
      const std::int64_t gi = m0 + i, gl = k0 + l;
      as[l / kFrag][i][l % kFrag] =
          (gi < p.m && gl < p.k) ? a[gl + gi * p.lda] : static_cast<signed char>(0);
    }
    for (int e = tid; e < kBN * kBK; e += kThreads) {
      const int l = e % kBK, j = e / kBK;
      const std::int64_t gl = k0 + l, gj = n0 + j;
      bs[l / kFrag][j][l % kFrag] =
          (gl < p.k && gj < p.n) ? b[gl + gj * p.ldb] : static_cast<signed char>(0);
    }
    __syncthreads();
#pragma unroll
    for (int s = 0; s < kSlices; ++s)
      warp_tile_step<
          wmma::fragment<wmma::matrix_a, kFrag, kFrag, kFrag, signed char, wmma::row_major>,
          wmma::fragment<wmma::matrix_b, kFrag, kFrag, kFrag, signed char, wmma::col_major>>(
          acc, [&](int i) { return &as[s][wm + i * kFrag][0]; }, kSliceRow,
          [&](int j) { return &bs[s][wn + j * kFrag][0]; }, kSliceRow);
    __syncthreads();
  }
  store_tile(acc, cs, wm, wn, p, m0, n0, d, [](int v) { return v; });
}

dim3 grid_for(const GemmProblem& p, const char* what) {
  const dim3 grid(static_cast<unsigned>((p.m + kBM - 1) / kBM),
                  static_cast<unsigned>((p.n + kBN - 1) / kBN));
  if (grid.y > 65535)
    throw InvalidArgument(std::string(what) + ": n too large for the launch grid: " + p.describe());
  return grid;
}

}  // namespace

std::optional<std::string> wmma_unsupported_reason(int cc_major, int cc_minor, Precision p,
                                                   const GemmProblem& problem) {
  const std::string cc = std::to_string(cc_major) + "." + std::to_string(cc_minor);
  const bool nn = !problem.trans_a && !problem.trans_b;
  const bool tn = problem.trans_a && !problem.trans_b;
  switch (p) {
    case Precision::fp16:
    case Precision::bf16:
      if (p == Precision::bf16 && cc_major < 8)
        return "BF16 tensor cores need compute capability 8.0 or newer; this GPU is " + cc;
      if (!nn) return "the FP16/BF16 WMMA GEMM takes the NN layout only, got " + problem.describe();
      return std::nullopt;
    case Precision::int8:
      if (cc_major * 10 + cc_minor < 75)
        return "INT8 tensor cores (IMMA) need compute capability 7.5 or newer; this GPU is " + cc;
      if (!tn)
        return "the INT8 WMMA GEMM takes the TN layout only (A transposed, B not, both "
               "K-contiguous), got " +
               problem.describe();
      return std::nullopt;
    default:
      return "the WMMA GEMM implements fp16, bf16 and int8 only, not " + std::string(name(p));
  }
}

template <typename T>
void gemm_wmma(const GemmProblem& p, const T* a, const T* b, T* d, cudaStream_t stream) {
  if (p.trans_a || p.trans_b)
    throw InvalidArgument("gemm_wmma supports NN only, got " + p.describe());
  gemm_wmma_kernel<T><<<grid_for(p, "gemm_wmma"), kThreads, 0, stream>>>(p, a, b, d);
  TCB_CUDA_LAUNCH("gemm_wmma " + p.describe());
}

template void gemm_wmma<__half>(const GemmProblem&, const __half*, const __half*, __half*,
                                cudaStream_t);
template void gemm_wmma<__nv_bfloat16>(const GemmProblem&, const __nv_bfloat16*,
                                       const __nv_bfloat16*, __nv_bfloat16*, cudaStream_t);

void gemm_wmma_int8(const GemmProblem& p, const std::int8_t* a, const std::int8_t* b,
                    std::int32_t* d, cudaStream_t stream) {
  if (!p.trans_a || p.trans_b)
    throw InvalidArgument("gemm_wmma_int8 supports TN only, got " + p.describe());
  gemm_wmma_int8_kernel<<<grid_for(p, "gemm_wmma_int8"), kThreads, 0, stream>>>(
      p, reinterpret_cast<const signed char*>(a), reinterpret_cast<const signed char*>(b), d);
  TCB_CUDA_LAUNCH("gemm_wmma_int8 " + p.describe());
}

}  // namespace tcbench::kernels
