// The element and scale formats of block-scaled ("microscaling") GEMMs, beside the FP8 formats of
// formats.hpp (their limits are rows of element.hpp): FP8 E4M3/E5M2, FP6 E3M2/E2M3 and FP4 E2M1
// as block elements, E8M0 (a power of two) and UE4M3 (E4M3 without its sign) as block scales. Every
// conversion is CUDA's own host-and-device one (cuda_fp8.h, cuda_fp6.h, cuda_fp4.h), so the host
// tests, the studies and the kernels round alike, and tests/scripts/test_narrow_formats.py checks
// every code of every format against ml_dtypes through the tcbench_formats tool.
//
// Sources: OCP Microscaling Formats (MX) Specification v1.0 (2023), section 5 (element formats,
// their emax, E8M0: bias 127, 0xFF is NaN, no Inf, no zero); CUDA Math API cuda_fp4.h/cuda_fp6.h
// (RNE or round-to-zero; out-of-range values saturate to MAXNORM, NaN becomes +MAXNORM) and
// cuda_fp8.h (__nv_cvt_float_to_e8m0: round toward zero or toward +Inf to a power of two, clipped
// to [2^-127, 2^127] with __NV_SATFINITE, NaN -> 0xFF); cuBLAS documentation, "Narrow Precision
// Data Types Usage" (CUDA_R_8F_UE4M3 is E4M3 with the sign bit ignored).
#pragma once

#include "tcbench/numerics/element.hpp"
#include "tcbench/numerics/formats.hpp"
#include "tcbench/numerics/host_device.hpp"

#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>

#include <cstdint>

namespace tcbench::numerics {

// The element formats of OCP MX v1.0 Table 1 (MXFP8, MXFP6, MXFP4) and of NVFP4 (E2M1): a view
// of the element table (element.hpp holds their bits, emax and limits).
enum class ElementFormat : std::uint8_t { e4m3, e5m2, e3m2, e2m3, e2m1 };

TCB_HD constexpr Element element(ElementFormat f) {
  switch (f) {
    case ElementFormat::e4m3:
      return Element::e4m3;
    case ElementFormat::e5m2:
      return Element::e5m2;
    case ElementFormat::e3m2:
      return Element::e3m2;
    case ElementFormat::e2m3:
      return Element::e2m3;
    case ElementFormat::e2m1:
      return Element::e2m1;
  }
  return Element::e4m3;
}
inline constexpr ElementFormat kElementFormats[] = {ElementFormat::e4m3, ElementFormat::e5m2,
                                                    ElementFormat::e3m2, ElementFormat::e2m3,
                                                    ElementFormat::e2m1};
static_assert(is_view(kElementFormats, is_narrow));

// Codes a format has: 2^bits.
TCB_HD constexpr int code_count(ElementFormat f) {
  return 1 << element_info(f).bits;
}

// x rounded to nearest even in format f, saturating: FP8 with __NV_SATFINITE (NaN stays NaN),
// FP6 and FP4 as CUDA converts them (they have no Inf and no NaN: out-of-range values become
// +-MAXNORM and NaN becomes +MAXNORM). The code sits in the low `bits` bits.
TCB_HD inline std::uint8_t encode(float x, ElementFormat f) {
  switch (f) {
    case ElementFormat::e4m3:
      return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
    case ElementFormat::e5m2:
      return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2);
    case ElementFormat::e3m2:
      return __nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundNearest);
    case ElementFormat::e2m3:
      return __nv_cvt_float_to_fp6(x, __NV_E2M3, cudaRoundNearest);
    case ElementFormat::e2m1:
      return __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest);
  }
  return 0;
}

// The value of a code (its low `bits` bits); every value of these formats is exact in FP16.
TCB_HD inline float decode(std::uint8_t code, ElementFormat f) {
  switch (f) {
    case ElementFormat::e4m3:
      return __half2float(__half(__nv_cvt_fp8_to_halfraw(code, __NV_E4M3)));
    case ElementFormat::e5m2:
      return __half2float(__half(__nv_cvt_fp8_to_halfraw(code, __NV_E5M2)));
    case ElementFormat::e3m2:
      return __half2float(__half(__nv_cvt_fp6_to_halfraw(code & 0x3Fu, __NV_E3M2)));
    case ElementFormat::e2m3:
      return __half2float(__half(__nv_cvt_fp6_to_halfraw(code & 0x3Fu, __NV_E2M3)));
    case ElementFormat::e2m1:
      return __half2float(__half(__nv_cvt_fp4_to_halfraw(code & 0x0Fu, __NV_E2M1)));
  }
  return 0.0f;
}

TCB_HD inline float round_trip(float x, ElementFormat f) {
  return decode(encode(x, f), f);
}

// E8M0 ---------------------------------------------------------------------------------------
// 2^(code - 127) for codes 0..254; 0xFF is NaN.
inline constexpr std::uint8_t kE8m0Nan = 0xFF;
inline constexpr int kE8m0Bias = 127;

enum class E8m0Rounding : std::uint8_t { toward_zero, up };

// |x| to a power of two (toward zero, or up as cuBLAS's UE8M0 block quantization does),
// clipped to [2^-127, 2^127] (__NV_SATFINITE, so +-Inf gives 2^127); NaN gives 0xFF.
TCB_HD inline std::uint8_t encode_e8m0(float x, E8m0Rounding r) {
  return __nv_cvt_float_to_e8m0(x, __NV_SATFINITE,
                                r == E8m0Rounding::up ? cudaRoundPosInf : cudaRoundZero);
}
TCB_HD inline float decode_e8m0(std::uint8_t code) {
  return __bfloat162float(__nv_bfloat16(__nv_cvt_e8m0_to_bf16raw(code)));
}

// UE4M3 --------------------------------------------------------------------------------------
// E4M3 whose sign bit is ignored: the block scale of NVFP4 (cuBLAS CUDA_R_8F_UE4M3).
TCB_HD inline std::uint8_t encode_ue4m3(float x) {
  return static_cast<std::uint8_t>(__nv_cvt_float_to_fp8(fabsf(x), __NV_SATFINITE, __NV_E4M3) &
                                   0x7Fu);
}
TCB_HD inline float decode_ue4m3(std::uint8_t code) {
  return decode(static_cast<std::uint8_t>(code & 0x7Fu), ElementFormat::e4m3);
}

}  // namespace tcbench::numerics
