// Raw tensor-core throughput: kernels that do nothing but issue one tensor instruction from
// registers (mma.sync) or from shared memory descriptors (wgmma, Hopper) in a loop. Their
// TFLOP/s is the ceiling every other topic's pct_of_peak is read against.
//
// Each launch runs one wave (blocks = SMs x resident blocks per SM). Every warp (mma.sync) or
// warpgroup (wgmma) keeps several independent accumulator chains so the tensor pipe never waits
// for a result. The first thread of each block records clock64() and %globaltimer around its
// loop, so the SM clock during the run is measured, not assumed. Inputs are known small
// integers (tcbench/numerics/mma_fragments.hpp), so every accumulator's final value is known
// exactly and checked before anything is timed. Floating-point accumulators alternate +B and -B
// (each pair cancels), so |acc| never exceeds one instruction's k and the check holds under the
// documented accumulator models (tcbench/numerics/tensor_accumulator.hpp: FP8 on Hopper keeps
// about 13 fraction bits); that the loop issues the counted instructions is proven from the SASS
// (tests/sass: every hot loop holds the tensor instructions the FLOP count assumes).
#pragma once

#include "tcbench/precision.hpp"

#include <cuda_runtime_api.h>

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
};

inline constexpr PeakInstr kAllPeakInstrs[] = {PeakInstr::mma_f16_f32,    PeakInstr::mma_f16_f16,
                                               PeakInstr::mma_bf16_f32,   PeakInstr::mma_tf32_f32,
                                               PeakInstr::mma_s8_s32,     PeakInstr::mma_e4m3_f32,
                                               PeakInstr::wgmma_f16_f32,  PeakInstr::wgmma_bf16_f32,
                                               PeakInstr::wgmma_e4m3_f32, PeakInstr::wgmma_s8_s32};

struct PeakInstrInfo {
  std::string_view variant;  // benchmark-name part: "mma_m16n8k16", "wgmma_m64n256k16"
  std::string_view ptx;      // the instruction, for labels
  Precision precision;       // whose peak it is measured against
  int m, n, k;               // one instruction's shape
  bool wgmma;
  bool integer_accumulate;  // s32 accumulators: exact integer addition
  bool alternate;           // floating-point accumulators: pairs +B/-B cancel (peak_accumulator)
  int chains;               // independent accumulators per warp (mma) or warpgroup (wgmma)
  int threads_per_block;    // 128: 4 warps, or one warpgroup
  // Fraction bits of the accumulator model (tcbench/numerics/tensor_accumulator.hpp): 10 for
  // FP16, 23 for FP32 from 16/19-bit inputs, 13 for FP32 from e4m3 (Hopper's e8m13); unused for
  // integer accumulators.
  int acc_fraction_bits;
};
const PeakInstrInfo& info(PeakInstr instr);

// Why `instr` cannot run, or is not measured, on compute capability major.minor (nullopt: it
// runs). FP8 mma.sync is refused where ptxas emulates it (F2FP + HMMA + FADD: 9.x, 10.x, 11.x),
// since its loop would time FADDs, not an FP8 tensor instruction.
std::optional<std::string> peak_unsupported_reason(PeakInstr instr, int cc_major, int cc_minor);

struct PeakLaunch {
  int blocks = 0;               // one wave: SMs x peak_blocks_per_sm()
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

// Resident blocks per SM for `instr` on the current device (occupancy calculator).
int peak_blocks_per_sm(PeakInstr instr);

// Tensor instructions one launch issues, and its FLOP (OP for integer) count.
double peak_instructions(PeakInstr instr, const PeakLaunch& launch);
double peak_ops(PeakInstr instr, const PeakLaunch& launch);

// Per-block timing recorded by thread 0 of each block around the loop.
struct PeakClocks {
  long long cycles;  // clock64() delta
  long long nanos;   // %globaltimer delta
};

// Device buffers the kernel reads and writes; sized by peak_*_bytes().
struct PeakBuffers {
  const void* a = nullptr;       // the A tile in the instruction's input format, row-major m x k
  const void* b = nullptr;       // the B tile, column-major k x n (wgmma: 8 values, see .cu)
  void* out = nullptr;           // every accumulator of every warp(group), see peak_expected()
  PeakClocks* clocks = nullptr;  // one per block
};
std::vector<std::uint8_t> peak_input_a(PeakInstr instr);  // host bytes to upload
std::vector<std::uint8_t> peak_input_b(PeakInstr instr);
std::size_t peak_out_bytes(PeakInstr instr, const PeakLaunch& launch);

// Enqueues one launch. Throws InvalidArgument if `instr` cannot run on the current device
// (peak_unsupported_reason says why) or the launch is empty.
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
