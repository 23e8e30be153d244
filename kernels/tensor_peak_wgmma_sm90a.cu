// Tensor-peak kernels, wgmma family (Hopper, sm_90a only): one warpgroup per block issues
// wgmma.mma_async m64n256k16 (f16, bf16) or m64n256k32 (e4m3, s8) with both operands in shared
// memory (descriptors, no swizzle) into one 64x256 accumulator held in 128 registers per thread.
// Nothing else runs in the loop but the wgmma.fence/commit/wait each trip needs.
//
// Why wgmma: on Hopper only the warpgroup-level instructions reach the tensor cores' full rate;
// Luo et al. measured 96.4% of dense FP16 peak with wgmma m64n256k16 on an H800 versus about 65%
// with mma.sync (arXiv 2501.12084, "Dissecting the NVIDIA Hopper Architecture through
// Microbenchmarking and Multiple Level Analysis"). Instruction syntax, descriptor format and the
// accumulator fragment layout: PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate
// Instructions" (wgmma.mma_async, matrix descriptor, register fragment for D).
//
// This file is compiled for sm_90a only by the build (kernels/*_sm90a.cu); the bodies are also
// guarded by __CUDA_ARCH_FEAT_SM90_ALL so that any other target gets a trap, never wgmma.
#include "tcbench/error.hpp"
#include "tcbench/kernels/tensor_peak.hpp"
#include "tcbench/numerics/mma_descriptors.hpp"
#include "tensor_peak_detail.hpp"

#include <cstdint>

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TCB_HAS_WGMMA 1
#else
#define TCB_HAS_WGMMA 0
#endif

namespace tcbench::kernels::detail {
namespace {

constexpr int kThreads = 128;    // one warpgroup
constexpr int kTileBytesK = 32;  // 16 f16/bf16 or 32 e4m3/s8 elements: two 16-byte core rows
constexpr int kSmemA = kWgmmaM * kTileBytesK, kSmemB = kWgmmaN * kTileBytesK;

// The 128 accumulator registers as asm operands %0..%127.
#define TCB_WGMMA_D_REGS                                                                           \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "    \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "     \
  "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "     \
  "%56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, "     \
  "%74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, "     \
  "%92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, " \
  "%109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, "     \
  "%124, %125, %126, %127}"
#define TCB_WGMMA_D_F32                                                                           \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
      "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),    \
      "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),  \
      "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),  \
      "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),  \
      "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]),  \
      "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),  \
      "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),  \
      "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),  \
      "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]),  \
      "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]),  \
      "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]),  \
      "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]),  \
      "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]),  \
      "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]),          \
      "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]),         \
      "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]),         \
      "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]),         \
      "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
#define TCB_WGMMA_D_S32                                                                           \
  "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), \
      "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]),    \
      "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]),  \
      "+r"(d[22]), "+r"(d[23]), "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]),  \
      "+r"(d[29]), "+r"(d[30]), "+r"(d[31]), "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]),  \
      "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]), "+r"(d[40]), "+r"(d[41]), "+r"(d[42]),  \
      "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]), "+r"(d[48]), "+r"(d[49]),  \
      "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]), "+r"(d[56]),  \
      "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63]),  \
      "+r"(d[64]), "+r"(d[65]), "+r"(d[66]), "+r"(d[67]), "+r"(d[68]), "+r"(d[69]), "+r"(d[70]),  \
      "+r"(d[71]), "+r"(d[72]), "+r"(d[73]), "+r"(d[74]), "+r"(d[75]), "+r"(d[76]), "+r"(d[77]),  \
      "+r"(d[78]), "+r"(d[79]), "+r"(d[80]), "+r"(d[81]), "+r"(d[82]), "+r"(d[83]), "+r"(d[84]),  \
      "+r"(d[85]), "+r"(d[86]), "+r"(d[87]), "+r"(d[88]), "+r"(d[89]), "+r"(d[90]), "+r"(d[91]),  \
      "+r"(d[92]), "+r"(d[93]), "+r"(d[94]), "+r"(d[95]), "+r"(d[96]), "+r"(d[97]), "+r"(d[98]),  \
      "+r"(d[99]), "+r"(d[100]), "+r"(d[101]), "+r"(d[102]), "+r"(d[103]), "+r"(d[104]),          \
      "+r"(d[105]), "+r"(d[106]), "+r"(d[107]), "+r"(d[108]), "+r"(d[109]), "+r"(d[110]),         \
      "+r"(d[111]), "+r"(d[112]), "+r"(d[113]), "+r"(d[114]), "+r"(d[115]), "+r"(d[116]),         \
      "+r"(d[117]), "+r"(d[118]), "+r"(d[119]), "+r"(d[120]), "+r"(d[121]), "+r"(d[122]),         \
      "+r"(d[123]), "+r"(d[124]), "+r"(d[125]), "+r"(d[126]), "+r"(d[127])

__device__ inline long long global_nanos() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Matrix descriptor of a K-major, unswizzled tile: numerics::wgmma_smem_descriptor (host-tested
// bit for bit against the PTX ISA's format and CUTLASS's GmmaDescriptor layout).
__device__ inline std::uint64_t smem_descriptor(const void* p) {
  return numerics::wgmma_smem_descriptor(static_cast<std::uint32_t>(__cvta_generic_to_shared(p)),
                                         numerics::kKMajorLeadingBytes,
                                         numerics::kKMajorStrideBytes);
}

__device__ inline void wgmma_fence() {
#if TCB_HAS_WGMMA
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
}
__device__ inline void wgmma_commit() {
#if TCB_HAS_WGMMA
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#endif
}
template <int N>
__device__ inline void wgmma_wait() {
#if TCB_HAS_WGMMA
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
#endif
}

#if TCB_HAS_WGMMA
#define TCB_WGMMA_BODY(asm_statement) asm_statement
#else
#define TCB_WGMMA_BODY(asm_statement) ((void)d, (void)da, (void)db, __trap())
#endif

// One Op per instruction: its input width, accumulator type and PTX, with both operands from
// shared-memory descriptors and the accumulator always added to (scale-d = 1). `tail` holds the
// immediates after scale-d: scale-a/b and transpose flags for f16/bf16, scale-a/b for e4m3,
// nothing for s8. kAlternate: the loop's second instruction reads -B (floating-point
// accumulators, whose exact range is narrow: tensor_accumulator.hpp), from a tile whose every
// element has its sign bit (the top bit of its last byte) flipped.
#define TCB_WGMMA_OP(Name, bytes, alternate, AccType, D_OPERANDS, shape_types, tail)    \
  struct Name {                                                                         \
    static constexpr int kBytes = bytes;                                                \
    static constexpr bool kAlternate = alternate;                                       \
    using Acc = AccType;                                                                \
    __device__ static void mma(AccType (&d)[128], std::uint64_t da, std::uint64_t db) { \
      TCB_WGMMA_BODY(                                                                   \
          asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                    \
                       "wgmma.mma_async.sync.aligned." shape_types " " TCB_WGMMA_D_REGS \
                       ", %128, %129, p" tail ";\n}\n"                                  \
                       : D_OPERANDS                                                     \
                       : "l"(da), "l"(db), "r"(1)));                                    \
    }                                                                                   \
  }

TCB_WGMMA_OP(WgmmaF16, 2, true, float, TCB_WGMMA_D_F32, "m64n256k16.f32.f16.f16", ", 1, 1, 0, 0");
TCB_WGMMA_OP(WgmmaBf16, 2, true, float, TCB_WGMMA_D_F32, "m64n256k16.f32.bf16.bf16",
             ", 1, 1, 0, 0");
TCB_WGMMA_OP(WgmmaE4m3, 1, true, float, TCB_WGMMA_D_F32, "m64n256k32.f32.e4m3.e4m3", ", 1, 1");
TCB_WGMMA_OP(WgmmaS8, 1, false, int, TCB_WGMMA_D_S32, "m64n256k32.s32.s8.s8", "");

// Fills a tile: byte o belongs to core-matrix row (o / 16) % 8, whose value is values[row];
// `negate` flips each element's sign bit.
template <class Op>
__device__ inline void fill_tile(std::uint8_t* tile, int bytes, const std::uint8_t* values,
                                 bool negate = false) {
  for (int o = threadIdx.x * Op::kBytes; o < bytes; o += kThreads * Op::kBytes) {
    const int row = (o / 16) % 8;
#pragma unroll
    for (int i = 0; i < Op::kBytes; ++i) {
      const bool sign_byte = negate && i == Op::kBytes - 1;
      tile[o + i] =
          static_cast<std::uint8_t>(values[row * Op::kBytes + i] ^ (sign_byte ? 0x80 : 0));
    }
  }
}

template <class Op>
__global__ void __launch_bounds__(kThreads)
    tensor_peak_wgmma_kernel(const std::uint8_t* __restrict__ a_values,
                             const std::uint8_t* __restrict__ b_values, double* __restrict__ out,
                             PeakClocks* __restrict__ clocks, long long iterations) {
  // Off sm_90a every Op::mma traps (the host launches wgmma kernels on 9.0 only), so no other
  // target ever contains a wgmma instruction.
  __shared__ __align__(128) std::uint8_t a_tile[kSmemA];
  __shared__ __align__(128) std::uint8_t b_tile[kSmemB];
  __shared__ __align__(128) std::uint8_t b_negated_tile[Op::kAlternate ? kSmemB : 128];
  fill_tile<Op>(a_tile, kSmemA, a_values);
  fill_tile<Op>(b_tile, kSmemB, b_values);
  if constexpr (Op::kAlternate) {
    fill_tile<Op>(b_negated_tile, kSmemB, b_values, true);
  }
  // Generic-proxy stores must be visible to the async proxy that wgmma reads through.
#if TCB_HAS_WGMMA
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
  __syncthreads();

  // K-major, no swizzle: core matrix (i, j) at (2 i + j) * 128 bytes, i along M (N), j along K.
  const std::uint64_t da = smem_descriptor(a_tile);
  const std::uint64_t db = smem_descriptor(b_tile);
  const std::uint64_t db_second = Op::kAlternate ? smem_descriptor(b_negated_tile) : db;
  typename Op::Acc d[128] = {};

  long long cycles0 = 0, nanos0 = 0;
  if (threadIdx.x == 0) {
    cycles0 = clock64();
    nanos0 = global_nanos();
  }
  // One trip per loop body, as in the mma.sync kernels (the SASS test counts one trip).
#pragma unroll 1
  for (long long it = 0; it < iterations; ++it) {
    // wgmma.fence before each trip's wgmmas, as CUTLASS's mainloops call warpgroup_arrive()
    // before each k-block: the PTX ISA requires it between other accesses to the accumulator
    // registers and a wgmma; without it ptxas injects one (C7519) or serializes the wgmmas
    // (C751x, which the build refuses: cmake/ptxas_guard.sh).
    wgmma_fence();
    // Two instructions per trip on the same accumulator: same-shape wgmmas are ordered by the
    // hardware, so the next group issues while this one runs (wait for all but one group).
    Op::mma(d, da, db);
    Op::mma(d, da, db_second);
    wgmma_commit();
    wgmma_wait<1>();
  }
  wgmma_fence();
  Op::mma(d, da, db);
  wgmma_commit();
  wgmma_wait<0>();
  __syncthreads();
  if (threadIdx.x == 0) clocks[blockIdx.x] = {clock64() - cycles0, global_nanos() - nanos0};

  // Accumulator fragment (PTX ISA, wgmma D layout for m64nNk*): warp w, lane l, register i:
  // row = 16 w + l / 4 + 8 ((i / 2) % 2), col = 8 (i / 4) + 2 (l % 4) + i % 2.
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  double* block_out = out + static_cast<std::size_t>(blockIdx.x) * kWgmmaM * kWgmmaN;
#pragma unroll
  for (int i = 0; i < 128; ++i) {
    const int row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2);
    const int col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
    block_out[row * kWgmmaN + col] = static_cast<double>(d[i]);
  }
}

template <class Op>
void launch(const PeakLaunch& l, const PeakBuffers& buf, bool alternate, cudaStream_t s) {
  if (alternate != Op::kAlternate)
    throw InvalidArgument(
        "launch_wgmma_peak: the instruction table and the kernel disagree on "
        "whether its loop alternates +B/-B");
  tensor_peak_wgmma_kernel<Op><<<l.blocks, kThreads, 0, s>>>(
      static_cast<const std::uint8_t*>(buf.a), static_cast<const std::uint8_t*>(buf.b),
      static_cast<double*>(buf.out), buf.clocks, l.iterations);
}

template <class Op>
int blocks_per_sm() {
  int blocks = 0;
  TCB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, tensor_peak_wgmma_kernel<Op>,
                                                         kThreads, 0));
  return blocks;
}

}  // namespace

void launch_wgmma_peak(PeakInstr instr, const PeakLaunch& l, const PeakBuffers& buf,
                       cudaStream_t s) {
  const bool alt = info(instr).alternate;
  switch (instr) {
    case PeakInstr::wgmma_f16_f32:
      return launch<WgmmaF16>(l, buf, alt, s);
    case PeakInstr::wgmma_bf16_f32:
      return launch<WgmmaBf16>(l, buf, alt, s);
    case PeakInstr::wgmma_e4m3_f32:
      return launch<WgmmaE4m3>(l, buf, alt, s);
    case PeakInstr::wgmma_s8_s32:
      return launch<WgmmaS8>(l, buf, alt, s);
    default:
      throw InvalidArgument("launch_wgmma_peak: not a wgmma instruction");
  }
}

int wgmma_blocks_per_sm(PeakInstr instr) {
  switch (instr) {
    case PeakInstr::wgmma_f16_f32:
      return blocks_per_sm<WgmmaF16>();
    case PeakInstr::wgmma_bf16_f32:
      return blocks_per_sm<WgmmaBf16>();
    case PeakInstr::wgmma_e4m3_f32:
      return blocks_per_sm<WgmmaE4m3>();
    case PeakInstr::wgmma_s8_s32:
      return blocks_per_sm<WgmmaS8>();
    default:
      throw InvalidArgument("wgmma_blocks_per_sm: not a wgmma instruction");
  }
}

}  // namespace tcbench::kernels::detail
