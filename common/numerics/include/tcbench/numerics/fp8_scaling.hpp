// FP8 per-tensor scaling recipes as NVIDIA Transformer Engine defines them.
//   delayed scaling: scale from a history of past amaxes,
//                    scale = (fp8_max / amax) / 2^margin, amax = max (or most recent) of history
//   current scaling: scale from the amax of the tensor being cast, fp8_max / amax
// Formats: E4M3 (max 448) for forward tensors, E5M2 (max 57344) for gradients under HYBRID.
// `scale` multiplies the high-precision tensor before the cast; scale_inv = 1/scale is what
// dequantizes (cuBLASLt's A/B_SCALE_POINTER).
//
// Sources: NVIDIA/TransformerEngine transformer_engine/common/recipe/__init__.py (DelayedScaling
// defaults, Format), transformer_engine/pytorch/quantization.py (_default_sf_compute,
// _update_amax_history), transformer_engine/common/recipe/delayed_scaling.cu,
// transformer_engine/common/recipe/recipe_common.cuh (compute_scale_from_amax), and
// docs/features/low_precision_training/fp8_delayed_scaling/fp8_delayed_scaling.rst.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "tcbench/numerics/enum_names.hpp"
#include "tcbench/numerics/formats.hpp"
#include "tcbench/numerics/host_device.hpp"

namespace tcbench::numerics {

// Per-tensor scaling rules: a scale from past amaxes (DelayedScaling) or from the tensor being
// cast (Float8CurrentScaling).
enum class ScaleRule : std::uint8_t { delayed, current };
inline constexpr EnumName<ScaleRule> kScaleRuleNames[] = {{ScaleRule::delayed, "delayed"},
                                                          {ScaleRule::current, "current"}};
static_assert(names_every_enumerator(kScaleRuleNames, ScaleRule::current));
constexpr std::string_view name(ScaleRule r) {
  return name_in(kScaleRuleNames, r);
}

// The FP8 recipes a GEMM layer runs with (the FP8 block study's options): a scaling rule and an
// accumulation. Transformer Engine's forward default is fast accumulation; delayed_split is
// delayed scaling with split (promoted) accumulation.
enum class Fp8Recipe : std::uint8_t { delayed, current, delayed_split };
inline constexpr EnumName<Fp8Recipe> kFp8RecipeNames[] = {
    {Fp8Recipe::delayed, "delayed"},
    {Fp8Recipe::current, "current"},
    {Fp8Recipe::delayed_split, "delayed_split"}};
static_assert(names_every_enumerator(kFp8RecipeNames, Fp8Recipe::delayed_split));
constexpr std::string_view name(Fp8Recipe r) {
  return name_in(kFp8RecipeNames, r);
}
constexpr ScaleRule scale_rule(Fp8Recipe r) {
  return r == Fp8Recipe::current ? ScaleRule::current : ScaleRule::delayed;
}
constexpr bool fast_accumulation(Fp8Recipe r) {
  return r != Fp8Recipe::delayed_split;
}

enum class RecipeFormat : std::uint8_t { e4m3, e5m2, hybrid };
enum class TensorRole : std::uint8_t { forward, backward };  // activations/weights vs gradients

TCB_HD constexpr Fp8Format fp8_format_for(RecipeFormat r, TensorRole role) {
  if (r == RecipeFormat::e4m3) return Fp8Format::e4m3;
  if (r == RecipeFormat::e5m2) return Fp8Format::e5m2;
  return role == TensorRole::forward ? Fp8Format::e4m3 : Fp8Format::e5m2;
}

// Delayed-scaling update for one tensor. amax 0, Inf or NaN keeps prev_scale; a scale that
// overflows (amax tiny) becomes FLT_MAX.
TCB_HD inline float delayed_scale_from_amax(float amax, float fp8_max, int margin,
                                            float prev_scale) {
  if (!(amax > 0.0f) || !is_finite(amax)) return prev_scale;
  const float sf = ldexpf(fp8_max / amax, -margin);
  return is_finite(sf) ? sf : FLT_MAX;
}

// Current-scaling scale (TE compute_scale_from_amax): amax is first raised to amax_epsilon;
// amax 0, Inf or NaN gives 1; an overflowing scale gives FLT_MAX; power_of_2 truncates the
// scale to a power of two (drops the mantissa) so scaling is exact.
TCB_HD inline float current_scale_from_amax(float amax, float fp8_max, float amax_epsilon = 0.0f,
                                            bool power_of_2 = false) {
  if (amax < amax_epsilon) amax = amax_epsilon;
  if (!(amax > 0.0f) || !is_finite(amax)) return 1.0f;
  float sf = fp8_max / amax;
  if (!is_finite(sf)) sf = FLT_MAX;
  if (power_of_2) {
    int e = 0;
    frexpf(sf, &e);            // sf = m * 2^e with m in [0.5, 1)
    sf = ldexpf(1.0f, e - 1);  // the largest power of two <= sf
  }
  return sf;
}

// amax as an unsigned integer whose order is the order of amax_step, so that a kernel can merge
// partial amaxes with one atomicMax on the bits: a non-negative float's IEEE pattern grows with
// its value, +Inf is 0x7f800000, and every NaN is mapped to 0x7fc00000, above all of them
// (NaN stays sticky, as amax_step has it). `a` is an amax (|x| >= 0, or NaN).
inline constexpr unsigned kAmaxNanBits = 0x7fc00000u;
TCB_HD inline unsigned amax_to_bits(float a) {
  if (is_nan(a)) return kAmaxNanBits;
#if defined(__CUDA_ARCH__)
  return __float_as_uint(fabsf(a));
#else
  const float m = fabsf(a);
  unsigned u = 0;
  __builtin_memcpy(&u, &m, sizeof u);
  return u;
#endif
}
TCB_HD inline float amax_from_bits(unsigned bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float f = 0;
  __builtin_memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

enum class AmaxReduction : std::uint8_t { max, most_recent };

struct DelayedScalingConfig {
  int amax_history_len = 1024;
  AmaxReduction amax_compute = AmaxReduction::max;
  int margin = 0;
  RecipeFormat format = RecipeFormat::hybrid;
};

// The scaling state of one tensor. Slot 0 of the history is the staging slot the current
// step's amax is recorded into; update() computes the new scale from the history first, then
// rolls it: [a_N, a_1 .. a_{N-1}] -> [0, a_2 .. a_N] (oldest dropped, newest at the end).
class DelayedScaler {
 public:
  // Throws std::invalid_argument for a history length < 1, a negative margin, or pure E5M2
  // (Transformer Engine asserts "Pure E5M2 training is not supported").
  DelayedScaler(DelayedScalingConfig cfg, TensorRole role);

  // Records this step's amax; several calls in one step keep the largest (NaN sticks).
  void record_amax(float amax);
  // Ends the step: new scale from the history, then roll. Returns the new scale.
  float update();

  float scale() const { return scale_; }
  float scale_inv() const { return 1.0f / scale_; }
  Fp8Format format() const { return format_; }
  float fp8_max() const { return numerics::fp8_max(format_); }
  std::span<const float> amax_history() const { return history_; }
  const DelayedScalingConfig& config() const { return cfg_; }

 private:
  DelayedScalingConfig cfg_;
  Fp8Format format_;
  std::vector<float> history_;
  float scale_ = 1.0f;
};

// Current scaling over a whole tensor: scale from its own amax (two passes: amax, then cast).
struct CurrentScaled {
  float amax;
  float scale;
  float scale_inv;
};
CurrentScaled current_scaling(std::span<const float> xs, Fp8Format f, float amax_epsilon = 0.0f,
                              bool power_of_2 = false);

// Casts xs with `scale` (RNE, saturating as TE's casts do) into out.
void cast_to_fp8(std::span<const float> xs, float scale, Fp8Format f,
                 std::span<__nv_fp8_storage_t> out, Saturation sat = Saturation::satfinite);

}  // namespace tcbench::numerics
