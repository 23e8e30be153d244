#include "tcbench/instruction_rates.hpp"

#include <array>

namespace tcbench {
namespace {

using K = TensorKind;

// The per-SM rates are the peak table's (peaks.cpp, the same datasheets) wherever a kind runs at
// its precision's rate, so that a tcgen05 row and the cuBLASLt rows of other topics are read
// against the same figure; the sources say where a kind differs from its precision.
constexpr std::string_view kB200 =
    "HGX B200 (nvidia.com/en-us/data-center/hgx) dense figures over 148 SMs at the implied "
    "~1.86 GHz tensor clock, as peaks.cpp's GB100 row; CUTLASS media/docs/cpp/"
    "blackwell_functionality.md (tcgen05.mma throughput per kind vs Hopper's GH100 rates)";
constexpr std::string_view kB300 =
    "HGX B300 tensor floating-point rates as B200 (peaks.cpp's GB110 row); the kinds as on "
    "GB100 (CUTLASS media/docs/cpp/blackwell_functionality.md)";
constexpr std::string_view kGb20x =
    "RTX Blackwell GPU architecture whitepaper (RTX 5090: 170 SMs x 2.407 GHz), as peaks.cpp's "
    "GB20x row";

constexpr std::array<InstructionRate, 17> kRates{{
    // GB100: "2x Hopper" for f16 (GH100 4096), tf32 (2048), i8 (8192), f8f6f4 and mxf8f6f4
    // (FP8 8192) -- every input type of f8f6f4, FP6 and FP4 included -- and "4x Hopper Fp8"
    // for mxf4nvf4; the datasheet's 2.25 PF FP16, 1.1 PF TF32, 4.5 PF FP8/FP6/INT8 and 9 PF FP4
    // (dense) over 148 SMs at ~1.86 GHz agree.
    {K::tcgen05_f16, 10, 0, 8192, false, kB200},
    {K::tcgen05_tf32, 10, 0, 4096, false, kB200},
    {K::tcgen05_f8f6f4, 10, 0, 16384, false, kB200},
    {K::tcgen05_i8, 10, 0, 16384, false, kB200},
    {K::tcgen05_mxf8f6f4, 10, 0, 16384, false, kB200},
    {K::tcgen05_mxf4nvf4, 10, 0, 32768, false, kB200},
    // GB110 (B300): no .kind::i8 (PTX ISA: sm_100a and sm_110a only; ptxas refuses it for
    // sm_103a); NVFP4 at 1.5x GB100: NVIDIA technical blog "Inside NVIDIA Blackwell Ultra"
    // (2025), 15 PF dense NVFP4 from 160 SMs.
    {K::tcgen05_f16, 10, 3, 8192, false, kB300},
    {K::tcgen05_tf32, 10, 3, 4096, false, kB300},
    {K::tcgen05_f8f6f4, 10, 3, 16384, false, kB300},
    {K::tcgen05_mxf8f6f4, 10, 3, 16384, false, kB300},
    {K::tcgen05_mxf4nvf4, 10, 3, 49152, false,
     "NVIDIA technical blog \"Inside NVIDIA Blackwell Ultra\" (2025): 15 PF dense NVFP4 from "
     "160 SMs, 1.5x GB100's rate per SM"},
    // GB20x: FP8 (and FP6) with FP32 accumulate 2048 per SM per clock, halved on GeForce; FP4
    // 4096 (RTX 5090's 3352 sparse FP4 TOPS = 170 x 2.407 GHz x 4096 x 2), not halved. FP6 and
    // FP4 through .kind::f8f6f4 compile to the same QMMA.16832 as E4M3 (tests/sass), so they are
    // taken at the FP8 rate, as is the block-scaled QMMA.SF of .kind::mxf8f6f4 (assumed: no
    // separate figure is published); .kind::mxf4nvf4 is the OMMA.SF FP4 path.
    {K::mma_f8f6f4, 12, 0, 2048, true, kGb20x},
    {K::mma_mxf8f6f4, 12, 0, 2048, true, kGb20x},
    {K::mma_mxf4nvf4, 12, 0, 4096, false, kGb20x},
    // GB10 (DGX Spark): the GB20x SM (1 PF sparse FP4 from 48 SMs), no GeForce halving.
    {K::mma_f8f6f4, 12, 1, 2048, false, "DGX Spark (GB10): the GB20x SM, as peaks.cpp's row"},
    {K::mma_mxf8f6f4, 12, 1, 2048, false, "DGX Spark (GB10): the GB20x SM, as peaks.cpp's row"},
    {K::mma_mxf4nvf4, 12, 1, 4096, false,
     "DGX Spark (GB10): 1 PF sparse FP4 from 48 SMs, as peaks.cpp's row"},
}};

}  // namespace

std::string_view kind_name(TensorKind kind) {
  switch (kind) {
    case K::tcgen05_f16:
      return "tcgen05.mma.kind::f16";
    case K::tcgen05_tf32:
      return "tcgen05.mma.kind::tf32";
    case K::tcgen05_f8f6f4:
      return "tcgen05.mma.kind::f8f6f4";
    case K::tcgen05_i8:
      return "tcgen05.mma.kind::i8";
    case K::tcgen05_mxf8f6f4:
      return "tcgen05.mma.kind::mxf8f6f4.block_scale";
    case K::tcgen05_mxf4nvf4:
      return "tcgen05.mma.kind::mxf4nvf4.block_scale";
    case K::mma_f8f6f4:
      return "mma.sync.kind::f8f6f4";
    case K::mma_mxf8f6f4:
      return "mma.sync.kind::mxf8f6f4.block_scale";
    case K::mma_mxf4nvf4:
      return "mma.sync.kind::mxf4nvf4.block_scale";
  }
  return "?";
}

std::span<const InstructionRate> instruction_rates() {
  return kRates;
}

double instruction_ops_per_clock_per_sm(TensorKind kind, int cc_major, int cc_minor, bool geforce) {
  for (const InstructionRate& r : kRates)
    if (r.kind == kind && r.cc_major == cc_major && r.cc_minor == cc_minor)
      return geforce && r.halved_on_geforce ? r.ops / 2 : r.ops;
  return 0;
}

}  // namespace tcbench
