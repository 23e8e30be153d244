// The accumulator kernels' table: one row per path, where each runs (the tensor-peak table's
// rule for the same instruction), the problems each takes, and which family launches it.
#include "fp8_accumulator_detail.hpp"
#include "tcbench/error.hpp"
#include "tcbench/kernels/fp8_accumulator.hpp"
#include "tcbench/kernels/tensor_peak.hpp"

#include <array>
#include <cstdint>
#include <string>

namespace tcbench::kernels {
namespace {

using E = numerics::Element;
constexpr std::array<AccPathInfo, std::size(kAccPaths)> kInfo{{
    {AccPath::mma_e4m3, "mma_sync", "mma.sync.m16n8k32.f32.e4m3.e4m3.f32", E::e4m3, 32, 32, 16,
     false},
    {AccPath::mma_f16, "mma_sync_f16", "mma.sync.m16n8k16.f32.f16.f16.f32", E::fp16, 16, 32, 16,
     true},
    {AccPath::mma_bf16, "mma_sync_bf16", "mma.sync.m16n8k16.f32.bf16.bf16.f32", E::bf16, 16, 32, 16,
     true},
    {AccPath::wgmma_e4m3, "wgmma", "wgmma.m64n64k32.f32.e4m3.e4m3", E::e4m3, 32, 64, 64, false},
    {AccPath::tcgen05_e4m3, "tcgen05",
     "tcgen05.mma.cta_group::1.kind::f8f6f4 m128n64k32 f32.e4m3.e4m3", E::e4m3, 32, 128, 64, false},
}};

// The tensor-peak instruction whose availability rule this path shares.
PeakInstr peak_twin(AccPath p) {
  switch (p) {
    case AccPath::mma_e4m3:
      return PeakInstr::mma_e4m3_f32;
    case AccPath::mma_f16:
      return PeakInstr::mma_f16_f32;
    case AccPath::mma_bf16:
      return PeakInstr::mma_bf16_f32;
    case AccPath::wgmma_e4m3:
      return PeakInstr::wgmma_e4m3_f32;
    case AccPath::tcgen05_e4m3:
      return PeakInstr::tc1_e4m3;
  }
  return PeakInstr::mma_e4m3_f32;
}

bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

}  // namespace

const AccPathInfo& info(AccPath p) {
  return kInfo.at(static_cast<std::size_t>(p));
}

std::optional<std::string> acc_path_unsupported(AccPath p, int cc_major, int cc_minor) {
  if (auto why = peak_build_reason(peak_twin(p))) return why;
  return peak_unsupported_reason(peak_twin(p), cc_major, cc_minor);
}

std::optional<std::string> why_invalid(AccPath p, const AccGemm& g) {
  const AccPathInfo& i = info(p);
  const std::string shape =
      std::to_string(g.m) + " x " + std::to_string(g.n) + " x " + std::to_string(g.k);
  if (g.m <= 0 || g.n <= 0 || g.k <= 0 || g.m % i.tile_m != 0 || g.n % i.tile_n != 0 ||
      g.k % 32 != 0)
    return std::string(i.name) + " takes m a multiple of " + std::to_string(i.tile_m) + ", n of " +
           std::to_string(i.tile_n) + " and k of 32; got " + shape;
  if (g.promote < 0 || g.promote % i.k != 0)
    return std::string(i.name) +
           " promotes every multiple of its instruction's k = " + std::to_string(i.k) +
           " products, not every " + std::to_string(g.promote);
  if (!aligned16(g.a) || !aligned16(g.b) || !aligned16(g.d) || g.a == nullptr || g.b == nullptr ||
      g.d == nullptr)
    return std::string(i.name) + " needs A, B and D on 16-byte boundaries (" + shape + ")";
  return std::nullopt;
}

void launch_acc_gemm(AccPath p, const AccGemm& g, cudaStream_t stream) {
  if (auto why = why_invalid(p, g)) throw InvalidArgument("launch_acc_gemm: " + *why);
  switch (p) {
    case AccPath::mma_e4m3:
    case AccPath::mma_f16:
    case AccPath::mma_bf16:
      return detail::launch_acc_mma(p, g, stream);
    case AccPath::wgmma_e4m3:
      return detail::launch_acc_wgmma(g, stream);
    case AccPath::tcgen05_e4m3:
#if defined(TCBENCH_TENSOR_PEAK_TCGEN05)
      return detail::launch_acc_tcgen05(g, stream);
#else
      throw InvalidArgument("launch_acc_gemm: " + *peak_build_reason(PeakInstr::tc1_e4m3));
#endif
  }
}

}  // namespace tcbench::kernels
