// Scale rules finer than one scale per tensor, each from its source, as element functions the
// host (studies, tests) and the quantization kernels share:
//
//   group current scaling  one FP32 scale per group: per row or column ("row-wise", PyTorch's
//                          rowwise FP8), per 1x128 tile or 128x128 block (DeepSeek-V3,
//                          arXiv:2412.19437 section 3.3.1: "the maximum absolute value online for
//                          each 1x128 activation tile or 128x128 weight block", scale = amax/448).
//                          The quantizing multiplier is current_scale_from_amax(amax, fp8_max)
//                          (fp8_scaling.hpp), the stored dequantizing scale its inverse.
//   MX                     OCP Microscaling Formats v1.0, section 6.3: per block of 32, the shared
//                          exponent floor(log2(amax)) - emax_elem as an E8M0 scale X, elements
//                          quantize_to_element_format(V_i / X), normal values beyond the format's
//                          max clamped; a NaN in the block makes X NaN (section 5: every value of
//                          the block then reads NaN). An amax of 0 or a shared exponent below
//                          E8M0's range gives 2^-127, one above it (or an Inf) NaN: E8M0 spans
//                          2^-127 ... 2^127 and has no Inf. The `round_up` variant is cuBLAS's
//                          UE8M0 block quantization (cuBLAS documentation, "1D Block
//                          Quantization": amax / max_elem rounded up to a power of two, so no
//                          element is clamped).
//   NVFP4                  E2M1 elements, one UE4M3 scale per 16 elements relative to a per-tensor
//                          FP32 scale: s_enc = 6 * 448 / amax(tensor); block scale
//                          e4m3(amax(block) / 6 * s_enc); element e2m1(x * s_enc / block scale);
//                          value = element * block scale / s_enc (NVIDIA, "Pretraining Large
//                          Language Models with NVFP4", arXiv:2509.25149, section 2 and appendix;
//                          cuBLAS documentation, "1D Block Quantization" for UE4M3 scales: the
//                          tensor-wide scale_D^in = Amax(e2m1) Amax(e4m3) / Amax(D)).
#pragma once

#include "tcbench/numerics/fp8_scaling.hpp"
#include "tcbench/numerics/host_device.hpp"
#include "tcbench/numerics/narrow_formats.hpp"

#include <cstdint>

namespace tcbench::numerics {

inline constexpr int kMxBlock = 32;     // OCP MX v1.0: k = 32 for every concrete MX format
inline constexpr int kNvfp4Block = 16;  // NVFP4
inline constexpr int kTile = 128;       // DeepSeek-V3's 1x128 tiles and 128x128 blocks

// Group current scaling -----------------------------------------------------------------------
// The multiplier that maps a group's amax onto the format's max (1 for an amax of 0, Inf or NaN),
// and the FP32 dequantizing scale a block-scaled GEMM multiplies by (its inverse).
TCB_HD inline float group_scale(float amax, ElementFormat f) {
  return current_scale_from_amax(amax, limits(f).max);
}
TCB_HD inline std::uint8_t group_encode(float x, float scale, ElementFormat f) {
  return encode(x * scale, f);
}

// MX ------------------------------------------------------------------------------------------
enum class MxRule : std::uint8_t { ocp, round_up };

TCB_HD inline std::uint8_t mx_scale_code(float amax, ElementFormat f, MxRule rule) {
  if (is_nan(amax) || !is_finite(amax)) return kE8m0Nan;
  if (rule == MxRule::round_up) {
    if (amax == 0.0f) return 0;
    return encode_e8m0(amax / limits(f).max, E8m0Rounding::up);
  }
  if (amax == 0.0f) return 0;  // floor(log2(0)) = -inf: the smallest scale
  const int shared = ilogbf(amax) - element_info(f).emax;
  if (shared < -kE8m0Bias) return 0;
  if (shared > kE8m0Bias) return kE8m0Nan;
  return static_cast<std::uint8_t>(shared + kE8m0Bias);
}
// V_i / X (exact: X is a power of two) rounded into the element format; saturating, so normal
// values beyond the max are clamped as the spec asks.
TCB_HD inline std::uint8_t mx_encode(float x, std::uint8_t scale_code, ElementFormat f) {
  if (scale_code == kE8m0Nan) return encode(NAN, f);
  return encode(ldexpf(x, kE8m0Bias - static_cast<int>(scale_code)), f);
}
TCB_HD inline float mx_decode(std::uint8_t code, std::uint8_t scale_code, ElementFormat f) {
  if (scale_code == kE8m0Nan) return NAN;
  return ldexpf(decode(code, f), static_cast<int>(scale_code) - kE8m0Bias);
}

// NVFP4 ---------------------------------------------------------------------------------------
inline constexpr float kNvfp4Max = limits(ElementFormat::e2m1).max;  // E2M1's elements
inline constexpr float kNvfp4ScaleMax =
    static_cast<float>(element_info(Element::ue4m3).max);  // UE4M3's block scales

// s_enc: 6 * 448 / amax of the tensor; 1 for an amax of 0, Inf or NaN; FLT_MAX if it overflows.
TCB_HD inline float nvfp4_tensor_scale(float amax) {
  if (!(amax > 0.0f) || !is_finite(amax)) return 1.0f;
  const float s = kNvfp4Max * kNvfp4ScaleMax / amax;
  return is_finite(s) ? s : FLT_MAX;
}
TCB_HD inline std::uint8_t nvfp4_scale_code(float block_amax, float tensor_scale) {
  return encode_ue4m3(block_amax / kNvfp4Max * tensor_scale);
}
TCB_HD inline std::uint8_t nvfp4_encode(float x, std::uint8_t scale_code, float tensor_scale) {
  const float s = decode_ue4m3(scale_code);
  if (s == 0.0f) return 0;  // the block is all (near) zero: its scale underflowed E4M3
  return encode(x * (tensor_scale / s), ElementFormat::e2m1);
}
TCB_HD inline float nvfp4_decode(std::uint8_t code, std::uint8_t scale_code, float tensor_scale) {
  return decode(code, ElementFormat::e2m1) * decode_ue4m3(scale_code) / tensor_scale;
}

}  // namespace tcbench::numerics
