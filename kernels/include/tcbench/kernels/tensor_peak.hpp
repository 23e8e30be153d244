// Raw tensor-core throughput: kernels that do nothing but issue one tensor instruction in a
// loop, from registers (mma.sync), from shared-memory descriptors into registers (wgmma, Hopper)
// or into tensor memory (tcgen05.mma, datacenter Blackwell). Their TFLOP/s is the ceiling every
// other topic's pct_of_peak is read against, instruction generation by instruction generation
// (docs/concepts/tensor-util.md, "The instruction ladder").
//
// Each launch runs one wave (blocks = SMs x resident blocks per SM; tcgen05: one CTA per SM, or
// one cluster of two per SM pair for cta_group::2). Every warp (mma.sync) or warpgroup (wgmma)
// keeps several independent accumulator chains so the tensor pipe never waits for a result; a
// tcgen05 CTA issues from one thread into one TMEM accumulator (the instructions of one thread
// are pipelined in order). The first thread of each block records clock64() and %globaltimer
// around its loop, so the SM clock during the run is measured, not assumed. Inputs are known
// small integers (tcbench/numerics/mma_fragments.hpp), so every accumulator's final value is
// known exactly and checked before anything is timed. Floating-point accumulators alternate +B
// and -B (each pair cancels), so |acc| never exceeds one instruction's k (times the block scales)
// and the check holds under the documented accumulator models (tcbench/numerics/
// tensor_accumulator.hpp: FP8 on Hopper keeps about 13 fraction bits); that the loop issues the
// counted instructions is proven from the SASS (tests/sass: every hot loop holds the tensor
// instructions the FLOP count assumes).
#pragma once

#include "tcbench/instruction_rates.hpp"
#include "tcbench/numerics/mma_descriptors.hpp"
#include "tcbench/precision.hpp"

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tcbench::kernels {

enum class PeakInstr {
  mma_f16_f32,     // mma.sync.m16n8k16 f16 x f16 -> f32            (HMMA, sm_80+)
  mma_f16_f16,     // mma.sync.m16n8k16 f16 x f16 -> f16            (HMMA, sm_80+)
  mma_bf16_f32,    // mma.sync.m16n8k16 bf16 x bf16 -> f32          (HMMA, sm_80+)
  mma_tf32_f32,    // mma.sync.m16n8k8 tf32 x tf32 -> f32           (HMMA, sm_80+)
  mma_s8_s32,      // mma.sync.m16n8k32 s8 x s8 -> s32              (IMMA, sm_80+)
  mma_e4m3_f32,    // mma.sync.m16n8k32 e4m3 x e4m3 -> f32          (sm_89+)
  wgmma_f16_f32,   // wgmma.m64n256k16 f16 x f16 -> f32           (HGMMA, sm_90a only)
  wgmma_bf16_f32,  // wgmma.m64n256k16 bf16 x bf16 -> f32         (HGMMA, sm_90a only)
  wgmma_e4m3_f32,  // wgmma.m64n256k32 e4m3 x e4m3 -> f32         (QGMMA, sm_90a only)
  wgmma_s8_s32,    // wgmma.m64n256k32 s8 x s8 -> s32             (IGMMA, sm_90a only)
  // GeForce Blackwell (12.x, sm_120f): mma.sync's FP8/FP6/FP4 kinds, m16n8k32 (QMMA) and the
  // block-scaled forms (QMMA.SF, and OMMA.SF m16n8k64 for FP4).
  mma_f8f6f4_e5m2,    // .kind::f8f6f4 e5m2 x e5m2 -> f32
  mma_f8f6f4_e2m3,    // .kind::f8f6f4 e2m3 x e2m3 -> f32 (FP6)
  mma_f8f6f4_e3m2,    // .kind::f8f6f4 e3m2 x e3m2 -> f32 (FP6)
  mma_f8f6f4_e2m1,    // .kind::f8f6f4 e2m1 x e2m1 -> f32 (FP4 in 8-bit containers)
  mma_mxf8f6f4_e4m3,  // .kind::mxf8f6f4.block_scale.scale_vec::1X e4m3, ue8m0 scales
  mma_mxf4nvf4_nvf4,  // .kind::mxf4nvf4.block_scale.scale_vec::4X m16n8k64 e2m1, ue4m3 scales
  mma_mxf4nvf4_mxf4,  // .kind::mxf4nvf4.block_scale.scale_vec::2X m16n8k64 e2m1, ue8m0 scales
  // Datacenter Blackwell (10.0, 10.3; sm_100a/sm_103a): tcgen05.mma from shared-memory
  // descriptors into TMEM, M = 128 on one CTA and M = 256 on a cluster of two (cta_group::2),
  // N = 256; the 2-CTA forms follow the 1-CTA ones.
  tc1_f16,
  tc1_bf16,
  tc1_tf32,
  tc1_e4m3,
  tc1_e5m2,
  tc1_e2m3,
  tc1_e3m2,
  tc1_e2m1,
  tc1_s8,
  tc1_mxf8_e4m3,
  tc1_nvf4,
  tc1_mxf4,
  tc2_f16,
  tc2_bf16,
  tc2_tf32,
  tc2_e4m3,
  tc2_e5m2,
  tc2_e2m3,
  tc2_e3m2,
  tc2_e2m1,
  tc2_s8,
  tc2_mxf8_e4m3,
  tc2_nvf4,
  tc2_mxf4,
};

inline constexpr int kNumPeakInstrs = static_cast<int>(PeakInstr::tc2_mxf4) + 1;
inline constexpr auto kAllPeakInstrs = [] {
  std::array<PeakInstr, kNumPeakInstrs> all{};
  for (int i = 0; i < kNumPeakInstrs; ++i) all[static_cast<std::size_t>(i)] = PeakInstr(i);
  return all;
}();

// Which instruction generation: how the kernel issues it and how its hot loop is counted.
enum class PeakFamily : std::uint8_t {
  mma_sync,  // warp-level, registers in and out
  wgmma,     // warpgroup-level, shared memory in, registers out (Hopper)
  tcgen05,   // single-thread issue, shared memory in, tensor memory out (Blackwell 10.x)
};

struct PeakInstrInfo {
  std::string_view variant;  // benchmark-name part: "mma_m16n8k16", "tcgen05_f16_m128n256k16"
  std::string_view ptx;      // the instruction, for labels
  Precision precision;       // whose peak it is measured against
  int m, n, k;               // one instruction's shape (tcgen05 cta_group::2: the pair's M)
  PeakFamily family;
  numerics::MmaInput input;  // A's and B's element type
  bool integer_accumulate;   // s32 accumulators: exact integer addition
  bool alternate;            // floating-point accumulators: pairs +B/-B cancel (peak_accumulator)
  int chains;                // independent accumulators per warp (mma), warpgroup or CTA group
  int threads_per_block;     // 128: 4 warps, one warpgroup, or the 4 warps that read TMEM
  // Fraction bits of the accumulator model (tcbench/numerics/tensor_accumulator.hpp): 10 for
  // FP16, 23 for FP32 from 16/19-bit inputs, 13 for FP32 from 8-bit and narrower inputs (Hopper's
  // e8m13, the narrowest measured); unused for integer accumulators.
  int acc_fraction_bits;
  int cta_group = 1;               // CTAs one instruction spans (tcgen05 cta_group::2: 2)
  double scale = 1.0;              // product of the A and B block scales the kernel sets (2 or 1)
  std::optional<TensorKind> kind;  // its own rate row (instruction_rates.hpp), else the precision's
};
const PeakInstrInfo& info(PeakInstr instr);

// Operands from shared memory (wgmma, tcgen05): every 16-byte row of a core matrix holds one
// value, chosen by the row's index in its core matrix, so A[m][k] = a(m % 8) and B[k][n] =
// b(n % 8) whatever the strides (tensor_peak_detail.hpp).
inline bool smem_operands(const PeakInstrInfo& i) {
  return i.family != PeakFamily::mma_sync;
}

// Why `instr` cannot run, or is not measured, on compute capability major.minor (nullopt: it
// runs), one sentence. FP8 mma.sync is refused where ptxas emulates it (F2FP + HMMA + FADD: 9.x,
// 10.x, 11.x), since its loop would time FADDs, not an FP8 tensor instruction.
std::optional<std::string> peak_unsupported_reason(PeakInstr instr, int cc_major, int cc_minor);

// Why this build has no code for `instr` (nullopt: it has): the Blackwell kernels are built only
// when TCBENCH_CUDA_ARCHS names a Blackwell architecture (kernels/CMakeLists.txt).
std::optional<std::string> peak_build_reason(PeakInstr instr);

// Dense ops per clock per SM the SMs x clock model uses for `instr`: its kind's own rate where
// the instruction-rate table has one, else its precision's (peaks.hpp); 0 where neither exists.
double peak_ops_per_clock_per_sm(PeakInstr instr, int cc_major, int cc_minor, bool geforce);

struct PeakLaunch {
  int blocks = 0;               // one wave: peak_blocks()
  std::int64_t iterations = 0;  // loop trips; each trip issues 2 instructions per chain
};

// Loop trips of the exact checks: the benchmark's check before timing, and the device test's
// (odd, so that an unrolled loop's remainder runs too). The host test (test_tensor_peak.cpp)
// replays both under the accumulator models.
inline constexpr std::int64_t kPeakCheckTrips = 1000;
inline constexpr std::int64_t kPeakTestTrips = 257;

// The largest |accumulator| a launch can reach with the known inputs (|a|, |b| <= 1): k for the
// alternating accumulators, (2 * iterations + 1) * k for the growing integer ones; and the
// largest an exact check allows for `instr`: INT32_MAX for s32, else
// numerics::exact_check_limit(acc_fraction_bits) (8192 for Hopper's FP8 accumulator).
double peak_check_magnitude(PeakInstr instr, const PeakLaunch& launch);
double peak_exact_limit(PeakInstr instr);

// The block scales every block-scaled row sets, A 2.0 and B 1.0, as E8M0 codes (MX kinds: 2^(code
// - 127)) and UE4M3 codes (NVFP4); the check expects the product x 2 (PeakInstrInfo::scale).
inline constexpr std::uint8_t kPeakScaleAE8m0 = 0x80, kPeakScaleBE8m0 = 0x7F;
inline constexpr std::uint8_t kPeakScaleAUe4m3 = 0x40, kPeakScaleBUe4m3 = 0x38;

// What a tcgen05 row passes its kernel: the instruction descriptor (numerics::
// umma_instr_descriptor), the 32-bit word every scale-factor column of A and of B holds (each byte
// one scale: A 2.0, B 1.0 in the kind's scale format; 0 for unscaled kinds) and the scale vector
// (4X: UE4M3 per 16 elements, 2X or 1X: UE8M0 per 32; 0 for unscaled kinds). Throws
// InvalidArgument for an instruction of another family.
struct PeakTcgen05Operands {
  std::uint32_t idesc = 0, sf_a = 0, sf_b = 0;
  int scale_vec = 0;
};
PeakTcgen05Operands peak_tcgen05_operands(PeakInstr instr);

// Blocks of one wave of `instr` on the current device: SMs x resident blocks per SM (occupancy
// calculator; tcgen05: one CTA per SM, or 2 x the clusters of two that fit at once).
int peak_blocks(PeakInstr instr, int sm_count);

// Tensor instructions one launch issues, and its FLOP (OP for integer) count.
double peak_instructions(PeakInstr instr, const PeakLaunch& launch);
// The units that issue them: warps (mma.sync), warpgroups (wgmma) or CTA groups (tcgen05: one
// CTA, or a cluster of two), per block; tcbench_context --peak-loops divides by it.
double peak_issuers_per_block(PeakInstr instr);
double peak_ops(PeakInstr instr, const PeakLaunch& launch);

// Per-block timing recorded by thread 0 of each block around the loop.
struct PeakClocks {
  long long cycles;  // clock64() delta
  long long nanos;   // %globaltimer delta
};

// Device buffers the kernel reads and writes; sized by peak_*_bytes().
struct PeakBuffers {
  // mma.sync: the A tile, row-major m x k, and the B tile, column-major k x n, one element per
  // 1, 2 or 4 bytes (FP6/FP4: the code in its register container). wgmma: 8 values of A and of B.
  // tcgen05: 8 16-byte core-matrix rows of A, and 8 of B then 8 of -B (see tensor_peak_detail).
  const void* a = nullptr;
  const void* b = nullptr;
  void* out = nullptr;           // every accumulator of every warp(group), see peak_expected()
  PeakClocks* clocks = nullptr;  // one per block
};
std::vector<std::uint8_t> peak_input_a(PeakInstr instr);  // host bytes to upload
std::vector<std::uint8_t> peak_input_b(PeakInstr instr);
std::size_t peak_out_bytes(PeakInstr instr, const PeakLaunch& launch);

// A launch with every question to the runtime asked once, before any timing: the device's compute
// capability, and for tcgen05 the shared-memory size, which cudaFuncSetAttribute sets on the
// kernel here. enqueue_tensor_peak then only enqueues (the launch and cudaGetLastError), so the
// GPU does not idle between a benchmark's events while the host asks. Throws InvalidArgument if
// `instr` cannot run on the current device (peak_unsupported_reason says why) or the launch is
// empty.
struct PeakPrepared {
  PeakInstr instr{};
  PeakLaunch launch;
  int dynamic_smem_bytes = 0;     // tcgen05: the size set on its kernel; else 0
  PeakTcgen05Operands tcgen05{};  // tcgen05: its descriptor and scales
};
PeakPrepared prepare_tensor_peak(PeakInstr instr, const PeakLaunch& launch);
void enqueue_tensor_peak(const PeakPrepared& prepared, const PeakBuffers& buffers,
                         cudaStream_t stream);
// Both at once, for launches that are not timed (the checks, the device tests).
void launch_tensor_peak(PeakInstr instr, const PeakLaunch& launch, const PeakBuffers& buffers,
                        cudaStream_t stream);

// Checks downloaded accumulators against the exact host result: the number of elements that
// differ (0 = correct) and the first difference, as a sentence. Throws InvalidArgument for a
// launch whose accumulators could leave the exact range (peak_check_magnitude above
// peak_exact_limit): a check a correct GPU could fail is refused, not run.
struct PeakCheck {
  std::size_t mismatches = 0;
  std::size_t checked = 0;
  std::string first;
};
PeakCheck check_peak_output(PeakInstr instr, const PeakLaunch& launch,
                            std::span<const std::uint8_t> out);

}  // namespace tcbench::kernels
