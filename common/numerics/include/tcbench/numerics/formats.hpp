// The narrow floating-point formats tcbench rounds through (FP16, BF16, FP8 E4M3FN, FP8 E5M2),
// as views of the element table (element.hpp, where their limits are): RNE conversion through
// CUDA's own host/device intrinsics, scaled FP8 casts with and without saturation, amax, and
// where a float value lands in a format.
//
// Sources: the CUDA Math API, cuda_fp8.h (__nv_cvt_float_to_fp8: RNE, __NV_NOSAT turns E4M3
// overflow into NaN, __NV_SATFINITE clamps to +-MAXNORM).
#pragma once

#include "tcbench/numerics/element.hpp"
#include "tcbench/numerics/enum_names.hpp"

#include <cstdint>
#include <span>
#include <string_view>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "tcbench/numerics/host_device.hpp"

namespace tcbench::numerics {

// The formats tcbench rounds through with CUDA's non-saturating conversions (loss scaling,
// where a value lands), and the FP8 formats of per-tensor scaling: views of the element table.
enum class Format : std::uint8_t { fp16, bf16, e4m3, e5m2 };
enum class Fp8Format : std::uint8_t { e4m3, e5m2 };
enum class Saturation : std::uint8_t { none, satfinite };

TCB_HD constexpr Element element(Format f) {
  switch (f) {
    case Format::fp16:
      return Element::fp16;
    case Format::bf16:
      return Element::bf16;
    case Format::e4m3:
      return Element::e4m3;
    case Format::e5m2:
      return Element::e5m2;
  }
  return Element::fp16;
}
TCB_HD constexpr Element element(Fp8Format f) {
  return f == Fp8Format::e4m3 ? Element::e4m3 : Element::e5m2;
}
inline constexpr Format kFormats[] = {Format::fp16, Format::bf16, Format::e4m3, Format::e5m2};
inline constexpr Fp8Format kFp8Formats[] = {Fp8Format::e4m3, Fp8Format::e5m2};
constexpr bool is_rounded_format(Element e) {
  return e == Element::fp16 || e == Element::bf16 || is_fp8(e);
}
static_assert(is_view(kFormats, is_rounded_format));
static_assert(is_view(kFp8Formats, is_fp8));

TCB_HD constexpr float fp8_max(Fp8Format f) {
  return limits(f).max;
}

// FP8 ---------------------------------------------------------------------------------------

TCB_HD inline __nv_fp8_interpretation_t cuda_kind(Fp8Format f) {
  return f == Fp8Format::e4m3 ? __NV_E4M3 : __NV_E5M2;
}
TCB_HD inline __nv_saturation_t cuda_saturation(Saturation s) {
  return s == Saturation::satfinite ? __NV_SATFINITE : __NV_NOSAT;
}

// Quantizing cast as Transformer Engine and cuBLASLt define it: the high-precision value is
// multiplied by `scale` and then rounded (RNE) to FP8. Without saturation an overflow becomes
// NaN in E4M3 (the format has no Inf) and Inf in E5M2.
TCB_HD inline __nv_fp8_storage_t scaled_cast_fp8(float x, float scale, Fp8Format f,
                                                 Saturation s = Saturation::satfinite) {
  return __nv_cvt_float_to_fp8(x * scale, cuda_saturation(s), cuda_kind(f));
}

// Every FP8 value is exact in FP16, so going through __half loses nothing.
TCB_HD inline float fp8_to_float(__nv_fp8_storage_t v, Fp8Format f) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(v, cuda_kind(f))));
}

// Dequantizing read: scale_inv is what cuBLASLt's A/B_SCALE_POINTER expects (1/scale).
TCB_HD inline float scaled_decode_fp8(__nv_fp8_storage_t v, float scale_inv, Fp8Format f) {
  return fp8_to_float(v, f) * scale_inv;
}

// Any format ----------------------------------------------------------------------------------

// The value x becomes after an RNE round trip through format f with no saturation: overflow
// gives Inf (FP16, BF16, E5M2) or NaN (E4M3), underflow gives a signed zero.
TCB_HD inline float round_trip(float x, Format f) {
  switch (f) {
    case Format::fp16:
      return __half2float(__float2half_rn(x));
    case Format::bf16:
      return __bfloat162float(__float2bfloat16_rn(x));
    case Format::e4m3:
      return fp8_to_float(__nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E4M3), Fp8Format::e4m3);
    case Format::e5m2:
      return fp8_to_float(__nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E5M2), Fp8Format::e5m2);
  }
  return x;
}

enum class Landing : std::uint8_t {
  zero,             // the input is +-0: nothing to lose
  normal,           // rounds to a normal value of the format
  subnormal,        // rounds to a nonzero subnormal: representable, with fewer significant bits
  flushed_to_zero,  // nonzero input that rounds to zero (underflow)
  overflow,         // finite input that rounds beyond the largest finite value
  not_finite,       // the input itself is Inf or NaN
};
inline constexpr int kLandingCount = 6;

// Decided on the rounded value, not on the input, so a value just below min_normal that rounds
// up to it counts as normal, exactly as the hardware conversion treats it.
TCB_HD inline Landing classify(float x, Format f) {
  if (!is_finite(x)) return Landing::not_finite;
  if (x == 0.0f) return Landing::zero;
  const float r = round_trip(x, f);
  if (!is_finite(r)) return Landing::overflow;
  if (r == 0.0f) return Landing::flushed_to_zero;
  if (fabsf(r) < limits(f).min_normal) return Landing::subnormal;
  return Landing::normal;
}

inline constexpr EnumName<Landing> kLandingNames[] = {
    {Landing::zero, "zero"},           {Landing::normal, "normal"},
    {Landing::subnormal, "subnormal"}, {Landing::flushed_to_zero, "flushed_to_zero"},
    {Landing::overflow, "overflow"},   {Landing::not_finite, "not_finite"}};
static_assert(names_every_enumerator(kLandingNames, Landing::not_finite));
constexpr std::string_view name(Landing l) {
  return name_in(kLandingNames, l);
}

// One step of an amax reduction. NaN is sticky so that a NaN anywhere in a tensor reaches the
// scaling logic, which then keeps its previous scale (Transformer Engine's rule).
TCB_HD inline float amax_step(float acc, float x) {
  const float a = fabsf(x);
  if (is_nan(acc) || is_nan(a)) return NAN;
  return a > acc ? a : acc;
}

// max |x| over the span; 0 for an empty span; NaN if any element is NaN.
float amax(std::span<const float> xs);

}  // namespace tcbench::numerics
