// Tensor-peak kernels, tcgen05 family (datacenter Blackwell, compute capability 10.0 and 10.3):
// one thread of a CTA (cta_group::1) or of the first CTA of a cluster of two (cta_group::2)
// issues tcgen05.mma with both operands from shared-memory descriptors into one 128 x 256 FP32
// (S32) accumulator in tensor memory (TMEM) per CTA: M = 128 x N = 256 on one CTA, M = 256 x
// N = 256 across the pair. Nothing else runs in the loop: the instructions of one thread are
// executed in order, so the next issues while the last runs. tcgen05.commit then arrives on an
// mbarrier when they are all done, and the four warps read the accumulator with tcgen05.ld
// (32x32b: warp w reads TMEM lanes 32w..32w+31, lane = row of D) after tcgen05.wait::ld.
//
// TMEM: tcgen05.alloc of 256 columns (the accumulator) or 512 (block-scaled kinds: the scale
// factors of A in columns 256-383 and of B in 384-511, written with tcgen05.st, every byte the
// same scale so that any scale-factor layout reads it), tcgen05.relinquish_alloc_permit, and
// tcgen05.dealloc before exit. Block scales: A 2.0, B 1.0 (the check expects the product x 2, so
// a kernel that ignored the scales fails it).
//
// Sources: PTX ISA, "TensorCore 5th Generation Family Instructions" (tcgen05.alloc, .mma,
// .commit, .ld, .st, .wait; tensor memory addressing; matrix and instruction descriptors, which
// tcbench/numerics/mma_descriptors.hpp builds and tests/host checks against CUTLASS's
// UMMA::SmemDescriptor/InstrDescriptor layouts); CUTLASS cute/arch/mma_sm100_umma.hpp,
// tmem_allocator_sm100.hpp and cutlass/arch/barrier.h for the instruction forms. Per-kind rates:
// common/facts/src/instruction_rates.cpp.
//
// This file is compiled for sm_100a and sm_103a only (kernels/CMakeLists.txt: arch-specific,
// because .kind::i8 exists on sm_100a but not on sm_103a, which a family build cannot express);
// the bodies are guarded by the arch feature macros, so any other target gets a trap.
#include "tcbench/error.hpp"
#include "tcbench/kernels/tensor_peak.hpp"
#include "tcbench/numerics/mma_descriptors.hpp"
#include "tcgen05_ops.cuh"
#include "tensor_peak_detail.hpp"

#include <algorithm>
#include <cstdint>

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM100_ALL)
#define TCB_HAS_TCGEN05_I8 1  // .kind::i8: sm_100a (and sm_110a), not sm_103a
#else
#define TCB_HAS_TCGEN05_I8 0
#endif
#if TCB_HAS_TCGEN05_I8
#define TCB_TC_I8(statement) statement
#else
#define TCB_TC_I8(statement) __trap()
#endif

namespace tcbench::kernels::detail {
namespace {

constexpr int kThreads = 128;                             // 4 warps: one per 32 TMEM lanes
constexpr int kSliceBytes = 32;                           // one K slice: two 16-byte core matrices
constexpr int kTileA = kTcgen05RowsPerCta * kSliceBytes;  // 4 KiB
constexpr int kTileB = kTcgen05N * kSliceBytes;           // 8 KiB (a pair reads 128 rows of each)
constexpr int kTileBytes = kTileA + 2 * kTileB;           // A, B, -B
constexpr std::uint32_t kSfaColumn = 256, kSfbColumn = 384, kSfColumns = 128;

__device__ inline long long global_nanos() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// ---- the instructions around the MMA (no-ops off sm_100a/sm_103a, whose kernels trap) -------
// The shared ones are in tcgen05_ops.cuh; these only the peak kernel uses.
using namespace tcgen05;

__device__ inline std::uint32_t cluster_rank() {
  std::uint32_t rank = 0;
  TCB_TC(asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank)));
  return rank;
}
__device__ inline bool elect_one() {
  std::uint32_t elected = 0;
  TCB_TC(asm volatile("{\n.reg .pred p;\nelect.sync _|p, 0xffffffff;\nselp.u32 %0, 1, 0, p;\n}"
                      : "=r"(elected)));
  return elected != 0;
}
// 8 columns of this warp's 32 lanes, all `word` (tcgen05.st 32x32b.x8).
__device__ inline void tmem_fill8(std::uint32_t taddr, std::uint32_t word) {
  TCB_TC(asm volatile(
      "tcgen05.st.sync.aligned.32x32b.x8.b32 [%0], {%1, %1, %1, %1, %1, %1, %1, %1};" ::"r"(taddr),
      "r"(word)
      : "memory"));
}
#define TCB_TC_MMA(G, kind)                                                            \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\ntcgen05.mma.cta_group::" #G ".kind::" kind \
  " [%0], %1, %2, %3, p;\n}\n"
#define TCB_TC_MMA_SCALED(G, kind)                                                     \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\ntcgen05.mma.cta_group::" #G ".kind::" kind \
  " [%0], %1, %2, %3, [%5], [%6], p;\n}\n"
#define TCB_TC_KIND(Name, BODY, kind, scaled, s32)                                               \
  struct Name {                                                                                  \
    static constexpr bool kBlockScaled = scaled, kS32 = s32;                                     \
    template <int G>                                                                             \
    __device__ static void mma(std::uint32_t d, std::uint64_t a, std::uint64_t b,                \
                               std::uint32_t idesc, std::uint32_t accumulate, std::uint32_t sfa, \
                               std::uint32_t sfb) {                                              \
      if constexpr (!scaled && G == 1)                                                           \
        BODY(asm volatile(TCB_TC_MMA(1, kind)::"r"(d), "l"(a), "l"(b), "r"(idesc),               \
                          "r"(accumulate)));                                                     \
      else if constexpr (!scaled)                                                                \
        BODY(asm volatile(TCB_TC_MMA(2, kind)::"r"(d), "l"(a), "l"(b), "r"(idesc),               \
                          "r"(accumulate)));                                                     \
      else if constexpr (G == 1)                                                                 \
        BODY(asm volatile(TCB_TC_MMA_SCALED(1, kind)::"r"(d), "l"(a), "l"(b), "r"(idesc),        \
                          "r"(accumulate), "r"(sfa), "r"(sfb)));                                 \
      else                                                                                       \
        BODY(asm volatile(TCB_TC_MMA_SCALED(2, kind)::"r"(d), "l"(a), "l"(b), "r"(idesc),        \
                          "r"(accumulate), "r"(sfa), "r"(sfb)));                                 \
      (void)sfa, (void)sfb;                                                                      \
    }                                                                                            \
  }

TCB_TC_KIND(TcF16, TCB_TC, "f16", false, false);
TCB_TC_KIND(TcTf32, TCB_TC, "tf32", false, false);
TCB_TC_KIND(TcF8f6f4, TCB_TC, "f8f6f4", false, false);
TCB_TC_KIND(TcI8, TCB_TC_I8, "i8", false, true);
TCB_TC_KIND(TcMxf8f6f4, TCB_TC, "mxf8f6f4.block_scale.scale_vec::1X", true, false);
TCB_TC_KIND(TcNvf4, TCB_TC, "mxf4nvf4.block_scale.scale_vec::4X", true, false);
TCB_TC_KIND(TcMxf4, TCB_TC, "mxf4nvf4.block_scale.scale_vec::2X", true, false);

// ---- the kernel ------------------------------------------------------------------------------

// a_rows: 8 x 16 bytes (row r of every A core matrix); b_rows: 16 x 16 (B, then -B; the same
// rows twice for integer accumulators). sf_a/sf_b: the 32-bit words every scale column holds.
template <class Kind, int G>
__global__ void __launch_bounds__(kThreads, 1)
    tensor_peak_tcgen05_kernel(const std::uint8_t* __restrict__ a_rows,
                               const std::uint8_t* __restrict__ b_rows, double* __restrict__ out,
                               PeakClocks* __restrict__ clocks, long long iterations,
                               std::uint32_t idesc, std::uint32_t sf_a, std::uint32_t sf_b) {
  extern __shared__ __align__(1024) std::uint8_t smem[];
  __shared__ std::uint32_t tmem_slot;
  __shared__ __align__(8) std::uint64_t done;
  constexpr std::uint32_t kColumns = Kind::kBlockScaled ? 512 : 256;
  std::uint8_t* const a_tile = smem;
  std::uint8_t* const b_tile = smem + kTileA;
  std::uint8_t* const b_negated = b_tile + kTileB;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  // Every 16 bytes of a tile: the row (offset / 16) % 8 of its core matrix.
  const uint4* a_src = reinterpret_cast<const uint4*>(a_rows);
  const uint4* b_src = reinterpret_cast<const uint4*>(b_rows);
  for (int o = threadIdx.x; o < kTileA / kSmemRowBytes; o += kThreads)
    reinterpret_cast<uint4*>(a_tile)[o] = a_src[o % kSmemRowValues];
  for (int o = threadIdx.x; o < kTileB / kSmemRowBytes; o += kThreads) {
    reinterpret_cast<uint4*>(b_tile)[o] = b_src[o % kSmemRowValues];
    reinterpret_cast<uint4*>(b_negated)[o] = b_src[kSmemRowValues + o % kSmemRowValues];
  }
  // Generic-proxy stores must be visible to the async proxy the tensor core reads through.
  TCB_TC(asm volatile("fence.proxy.async.shared::cta;" ::: "memory"));
  // A pair allocates its TMEM together: both CTAs are running before either asks.
  if constexpr (G == 2) sync_all<G>();
  if (warp == 0) {
    tmem_alloc<G>(&tmem_slot, kColumns);
    tmem_relinquish<G>();
  }
  if (threadIdx.x == 0) {
    TCB_TC(asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_address(&done))
                        : "memory"));
    TCB_TC(asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"));
  }
  sync_all<G>();
  const std::uint32_t tmem = tmem_slot;
  const std::uint32_t lanes = numerics::tmem_address(0, 32u * static_cast<std::uint32_t>(warp), 0);
  if constexpr (Kind::kBlockScaled) {
    for (std::uint32_t c = 0; c < kSfColumns; c += 8) {
      tmem_fill8(tmem + lanes + kSfaColumn + c, sf_a);
      tmem_fill8(tmem + lanes + kSfbColumn + c, sf_b);
    }
    TCB_TC(asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory"));
    sync_all<G>();
  }

  long long cycles0 = 0, nanos0 = 0;
  if (threadIdx.x == 0) {
    cycles0 = clock64();
    nanos0 = global_nanos();
  }
  // The pair's first CTA issues for both (cta_group::2).
  if (warp == 0 && (G == 1 || cluster_rank() == 0)) {
    if (elect_one()) {
      using numerics::kKMajorLeadingBytes, numerics::kKMajorStrideBytes;
      const std::uint64_t da = numerics::umma_smem_descriptor(
          smem_address(a_tile), kKMajorLeadingBytes, kKMajorStrideBytes);
      const std::uint64_t db = numerics::umma_smem_descriptor(
          smem_address(b_tile), kKMajorLeadingBytes, kKMajorStrideBytes);
      const std::uint64_t db_second = numerics::umma_smem_descriptor(
          smem_address(b_negated), kKMajorLeadingBytes, kKMajorStrideBytes);
      const std::uint32_t sfa = tmem + kSfaColumn, sfb = tmem + kSfbColumn;
      // The first instruction overwrites D (D = A B); each trip then adds -B and +B (or B
      // twice for integer accumulators): 2 x iterations + 1 instructions, D = A B at the end
      // (or (2 x iterations + 1) A B), as numerics::peak_accumulator says. One trip per loop
      // body: the SASS test counts one trip's two tcgen05.mma in the hot loop.
      Kind::template mma<G>(tmem, da, db, idesc, 0, sfa, sfb);
#pragma unroll 1
      for (long long it = 0; it < iterations; ++it) {
        Kind::template mma<G>(tmem, da, db_second, idesc, 1, sfa, sfb);
        Kind::template mma<G>(tmem, da, db, idesc, 1, sfa, sfb);
      }
      commit<G>(&done);
    }
    __syncwarp();
  }
  wait_parity(&done, 0);
  fence_after_sync();
  if (threadIdx.x == 0) clocks[blockIdx.x] = {clock64() - cycles0, global_nanos() - nanos0};

  // Row `row` of this CTA's 128 rows of D, 256 columns, as doubles: block b holds rows 128 b ...
  // of the output, so a pair's two CTAs (blocks 2c and 2c + 1, ranks 0 and 1: the grid is
  // one-dimensional) together hold its 256 x 256 tile.
  const int row = 32 * warp + lane;
  double* row_out =
      out + (static_cast<std::size_t>(blockIdx.x) * kTcgen05RowsPerCta + row) * kTcgen05N;
  for (std::uint32_t c = 0; c < kTcgen05N; c += 8) {
    std::uint32_t r[8];
    tmem_load8(tmem + lanes + c, r);
#pragma unroll
    for (int j = 0; j < 8; ++j)
      row_out[c + j] = Kind::kS32 ? static_cast<double>(static_cast<std::int32_t>(r[j]))
                                  : static_cast<double>(__uint_as_float(r[j]));
  }
  sync_all<G>();  // every TMEM read (of both CTAs of a pair) before the deallocation
  if (warp == 0) tmem_dealloc<G>(tmem, kColumns);
}

// One CTA per SM: the tensor core and its 512 TMEM columns are the SM's, and a second CTA would
// wait in tcgen05.alloc. Asking for more than half the SM's shared memory guarantees it.
int dynamic_smem_bytes() {
  int device = 0, per_sm = 0, optin = 0;
  TCB_CUDA(cudaGetDevice(&device));
  TCB_CUDA(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  TCB_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return std::min(optin, std::max(kTileBytes, per_sm / 2 + 1024));
}

// Sets the kernel's dynamic shared memory: a runtime call, made before timing (prepare).
template <class Kind, int G>
int set_smem() {
  const int smem = dynamic_smem_bytes();
  TCB_CUDA(cudaFuncSetAttribute(tensor_peak_tcgen05_kernel<Kind, G>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  return smem;
}

cudaLaunchConfig_t config(int blocks, int group, int smem, cudaLaunchAttribute& cluster,
                          cudaStream_t s) {
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = static_cast<unsigned>(group);
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(blocks));
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = static_cast<std::size_t>(smem);
  cfg.stream = s;
  cfg.attrs = &cluster;
  cfg.numAttrs = 1;
  return cfg;
}

// Enqueues only: prepare_tcgen05_peak set the shared-memory size on the kernel before.
template <class Kind, int G>
void launch(const PeakPrepared& p, const PeakBuffers& buf, cudaStream_t s) {
  if (p.launch.blocks % G != 0 || p.dynamic_smem_bytes <= 0)
    throw InvalidArgument("launch_tcgen05_peak: " + std::to_string(p.launch.blocks) +
                          " blocks in clusters of " + std::to_string(G) +
                          " need a prepared launch (prepare_tensor_peak)");
  cudaLaunchAttribute cluster{};
  const cudaLaunchConfig_t cfg = config(p.launch.blocks, G, p.dynamic_smem_bytes, cluster, s);
  TCB_CUDA(cudaLaunchKernelEx(
      &cfg, tensor_peak_tcgen05_kernel<Kind, G>, static_cast<const std::uint8_t*>(buf.a),
      static_cast<const std::uint8_t*>(buf.b), static_cast<double*>(buf.out), buf.clocks,
      static_cast<long long>(p.launch.iterations), p.tcgen05.idesc, p.tcgen05.sf_a,
      p.tcgen05.sf_b));
}

template <class Kind, int G>
int blocks(int sm_count) {
  if (G == 1) return sm_count;
  cudaLaunchAttribute cluster{};
  const cudaLaunchConfig_t cfg = config(G, G, set_smem<Kind, G>(), cluster, nullptr);
  int clusters = 0;
  TCB_CUDA(cudaOccupancyMaxActiveClusters(&clusters, tensor_peak_tcgen05_kernel<Kind, G>, &cfg));
  return G * clusters;
}

// Which kernel runs an instruction: its .kind and CTA group (the rows of one kind differ in the
// instruction descriptor and the operand bytes only).
template <template <class, int> class Action>
auto dispatch(PeakInstr instr) {
  const PeakInstrInfo& i = info(instr);
  const bool pair = i.cta_group == 2;
  switch (i.kind.value_or(TensorKind::mma_f8f6f4)) {
    case TensorKind::tcgen05_f16:
      return pair ? Action<TcF16, 2>::run : Action<TcF16, 1>::run;
    case TensorKind::tcgen05_tf32:
      return pair ? Action<TcTf32, 2>::run : Action<TcTf32, 1>::run;
    case TensorKind::tcgen05_f8f6f4:
      return pair ? Action<TcF8f6f4, 2>::run : Action<TcF8f6f4, 1>::run;
    case TensorKind::tcgen05_i8:
      return pair ? Action<TcI8, 2>::run : Action<TcI8, 1>::run;
    case TensorKind::tcgen05_mxf8f6f4:
      return pair ? Action<TcMxf8f6f4, 2>::run : Action<TcMxf8f6f4, 1>::run;
    case TensorKind::tcgen05_mxf4nvf4:  // NVFP4 (UE4M3 per 16: 4X) or MXFP4 (UE8M0 per 32: 2X)
      if (peak_tcgen05_operands(instr).scale_vec == 4)
        return pair ? Action<TcNvf4, 2>::run : Action<TcNvf4, 1>::run;
      return pair ? Action<TcMxf4, 2>::run : Action<TcMxf4, 1>::run;
    default:
      throw InvalidArgument("tcgen05 peak: " + std::string(i.ptx) +
                            " is not a tcgen05 instruction");
  }
}

template <class Kind, int G>
struct Launch {
  static void run(const PeakPrepared& p, const PeakBuffers& b, cudaStream_t s) {
    launch<Kind, G>(p, b, s);
  }
};
template <class Kind, int G>
struct Blocks {
  static int run(int sm_count) { return blocks<Kind, G>(sm_count); }
};
template <class Kind, int G>
struct Prepare {
  static int run() { return set_smem<Kind, G>(); }
};

}  // namespace

int tcgen05_blocks(PeakInstr instr, int sm_count) {
  return dispatch<Blocks>(instr)(sm_count);
}

int prepare_tcgen05_peak(PeakInstr instr) {
  return dispatch<Prepare>(instr)();
}

void launch_tcgen05_peak(const PeakPrepared& p, const PeakBuffers& buf, cudaStream_t s) {
  dispatch<Launch>(p.instr)(p, buf, s);
}

}  // namespace tcbench::kernels::detail
