// Dense rates of the tensor instructions whose throughput is not their precision's GEMM rate
// (peaks.hpp): Blackwell's tcgen05.mma kinds and GeForce Blackwell's mma.sync FP8/FP6/FP4 kinds.
// A kind runs every input type it takes at one rate (tcgen05 .kind::f8f6f4 runs FP4 at the FP8
// rate; only .kind::mxf4nvf4 reaches the FP4 figure of the datasheet), so the per-instruction
// rate is what SMs x clock x rate must use for those rows. One row per (kind, compute
// capability), each with its public source; a kind without a row for a compute capability does
// not exist there (tcgen05 .kind::i8 on 10.3: the PTX ISA gives it to sm_100a and sm_110a only).
#pragma once

#include <span>
#include <string_view>

namespace tcbench {

enum class TensorKind {
  tcgen05_f16,       // tcgen05.mma .kind::f16: F16/BF16 in, F32 accumulate
  tcgen05_tf32,      // .kind::tf32
  tcgen05_f8f6f4,    // .kind::f8f6f4: E4M3, E5M2, E2M3, E3M2, E2M1 (unscaled)
  tcgen05_i8,        // .kind::i8: S8/U8 in, S32 accumulate
  tcgen05_mxf8f6f4,  // .kind::mxf8f6f4.block_scale (UE8M0 per 32 elements)
  tcgen05_mxf4nvf4,  // .kind::mxf4nvf4.block_scale (NVFP4 UE4M3 per 16, MXFP4 UE8M0 per 32)
  mma_f8f6f4,        // mma.sync .kind::f8f6f4 m16n8k32 (sm_120)
  mma_mxf8f6f4,      // mma.sync .kind::mxf8f6f4.block_scale m16n8k32 (sm_120)
  mma_mxf4nvf4,      // mma.sync .kind::mxf4nvf4.block_scale m16n8k64 (sm_120)
};

struct InstructionRate {
  TensorKind kind;
  int cc_major, cc_minor;
  double ops;              // dense FLOP per clock per SM
  bool halved_on_geforce;  // GeForce boards run it at half rate (FP32 accumulate of FP8/FP6)
  std::string_view source;
};

// "tcgen05.mma.kind::f16" ...: the label of a kind.
std::string_view kind_name(TensorKind kind);

std::span<const InstructionRate> instruction_rates();

// Dense ops per clock per SM of `kind` on cc_major.cc_minor (halved on GeForce where the row
// says so); 0 when the kind does not exist there.
double instruction_ops_per_clock_per_sm(TensorKind kind, int cc_major, int cc_minor, bool geforce);

}  // namespace tcbench
