// The number formats tcbench knows, ONE row each: the only place a format's limits are written
// (the CTest elements.one_table checks that no other file spells them). Every other vocabulary
// reads it: cudaDataType_t names, bytes and bits (gemm_spec.hpp), unit roundoffs (verify.cpp),
// element sizes (the efficiency model), the float limits of the formats the scaling and rounding
// code works in (formats.hpp), the block-scaled formats (narrow_formats.hpp) and the storage
// types' sizes (gemm_types.hpp, static_assert). A new format is one row here plus, when GEMMs
// store it, one TCB_STORAGE_TYPE_ line in gemm_types.hpp.
//
// Each value is the format's definition: IEEE 754-2008 (binary64, binary32, binary16); bfloat16
// = the top 16 bits of binary32; TF32 = binary32 with 10 mantissa bits (stored in 32); FP8 per
// Micikevicius et al., "FP8 Formats for Deep Learning", arXiv:2209.05433, Table 1, and the OCP
// 8-bit FP spec; FP6, FP4 and E8M0 per the OCP Microscaling Formats (MX) Specification v1.0,
// section 5; UE4M3 = E4M3 with the sign bit ignored (cuBLAS, "Narrow Precision Data Types
// Usage"). tests/scripts/test_narrow_formats.py checks every row against ml_dtypes and numpy
// (finfo, iinfo), tests/host/numerics/test_element.cpp against std::numeric_limits and CUDA's
// own conversions of the extreme bit patterns. Models: CUTLASS library/types.h (NumericTypeID:
// one enumerator per format), Transformer Engine's dtype_tols (one lookup per dtype).
#pragma once

#include "tcbench/numerics/host_device.hpp"

#include <library_types.h>

#include <concepts>
#include <iterator>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace tcbench::numerics {

enum class Element : std::uint8_t {
  fp64,
  fp32,
  tf32,
  fp16,
  bf16,
  e4m3,
  e5m2,
  e3m2,
  e2m3,
  e2m1,
  ue8m0,
  ue4m3,
  int8,
  int32,
};
inline constexpr int kElementCount = static_cast<int>(Element::int32) + 1;

struct ElementInfo {
  Element id;
  // Two rows share another's type, and find_element gives the other: TF32 is stored as
  // CUDA_R_32F, and library_types.h defines CUDA_R_8F_UE4M3 as CUDA_R_8F_E4M3.
  cudaDataType_t cuda;
  std::string_view name;       // "e4m3": benchmark names, tools, messages
  std::string_view cuda_name;  // "CUDA_R_8F_E4M3"
  int bits;                    // storage bits of one element (FP4 packs two to a byte)
  int emax;                    // floor(log2(max)): OCP MX v1.0 Table 1's emax_elem for FP8..FP4
  double max;                  // largest finite magnitude
  double min_normal;           // smallest normal magnitude (integers: 1)
  double min_subnormal;        // smallest nonzero magnitude (no subnormals: min_normal)
  double epsilon;              // distance from 1 to the next value (integers: 1)
  double unit_roundoff;        // relative error of round to nearest: epsilon / 2 (integers: 0)
  bool integer;                // exact arithmetic, saturating conversion
};

// UE4M3 is E4M3 without its sign: its row is E4M3's, renamed, so E4M3's limits are written once.
constexpr ElementInfo unsigned_twin(ElementInfo r, Element id, cudaDataType_t cuda,
                                    std::string_view name, std::string_view cuda_name) {
  r.id = id;
  r.cuda = cuda;
  r.name = name;
  r.cuda_name = cuda_name;
  return r;
}

// The table is a function so that kernels can read it (a namespace-scope constexpr array is host
// memory to nvcc), and its rows are constants: a row built at run time would construct its
// string_views in device code, which nvcc compiles to nothing (the E5M2 block-quantize kernels
// lost every load, store and conversion that way; their SASS rules caught it).
TCB_HD constexpr ElementInfo element_info(Element e) {
  using E = Element;
  // clang-format off
  constexpr ElementInfo kE4m3{E::e4m3, CUDA_R_8F_E4M3, "e4m3", "CUDA_R_8F_E4M3", 8, 8, 448.0, 0x1p-6, 0x1p-9, 0x1p-3, 0x1p-4, false};
  constexpr ElementInfo kRows[] = {
    // {id, cudaDataType_t, name, cuda name, bits, emax, max, min normal, min subnormal, epsilon, unit roundoff, integer}
    {E::fp64,  CUDA_R_64F,      "fp64",  "CUDA_R_64F",      64, 1023, 0x1.fffffffffffffp+1023, 0x1p-1022, 0x1p-1074, 0x1p-52, 0x1p-53, false},
    {E::fp32,  CUDA_R_32F,      "fp32",  "CUDA_R_32F",      32, 127,  0x1.fffffep+127,        0x1p-126,  0x1p-149,  0x1p-23, 0x1p-24, false},
    {E::tf32,  CUDA_R_32F,      "tf32",  "CUDA_R_32F",      32, 127,  0x1.ffcp+127,           0x1p-126,  0x1p-136,  0x1p-10, 0x1p-11, false},
    {E::fp16,  CUDA_R_16F,      "fp16",  "CUDA_R_16F",      16, 15,   65504.0,                0x1p-14,   0x1p-24,   0x1p-10, 0x1p-11, false},
    {E::bf16,  CUDA_R_16BF,     "bf16",  "CUDA_R_16BF",     16, 127,  0x1.fep+127,            0x1p-126,  0x1p-133,  0x1p-7,  0x1p-8,  false},
    kE4m3,
    {E::e5m2,  CUDA_R_8F_E5M2,  "e5m2",  "CUDA_R_8F_E5M2",  8,  15,   57344.0,                0x1p-14,   0x1p-16,   0x1p-2,  0x1p-3,  false},
    {E::e3m2,  CUDA_R_6F_E3M2,  "e3m2",  "CUDA_R_6F_E3M2",  6,  4,    28.0,                   0x1p-2,    0x1p-4,    0x1p-2,  0x1p-3,  false},
    {E::e2m3,  CUDA_R_6F_E2M3,  "e2m3",  "CUDA_R_6F_E2M3",  6,  2,    7.5,                    1.0,       0x1p-3,    0x1p-3,  0x1p-4,  false},
    {E::e2m1,  CUDA_R_4F_E2M1,  "e2m1",  "CUDA_R_4F_E2M1",  4,  2,    6.0,                    1.0,       0.5,       0.5,     0.25,    false},
    {E::ue8m0, CUDA_R_8F_UE8M0, "ue8m0", "CUDA_R_8F_UE8M0", 8,  127,  0x1p127,                0x1p-127,  0x1p-127,  1.0,     0.5,     false},
    unsigned_twin(kE4m3, E::ue4m3, CUDA_R_8F_UE4M3, "ue4m3", "CUDA_R_8F_UE4M3"),
    {E::int8,  CUDA_R_8I,       "int8",  "CUDA_R_8I",       8,  6,    127.0,                  1.0,       1.0,       1.0,     0.0,     true},
    {E::int32, CUDA_R_32I,      "int32", "CUDA_R_32I",      32, 30,   2147483647.0,           1.0,       1.0,       1.0,     0.0,     true},
  };
  // clang-format on
  static_assert(std::size(kRows) == kElementCount, "one row per Element");
  return kRows[static_cast<int>(e)];
}

constexpr std::string_view name(Element e) {
  return element_info(e).name;
}

// The first row with this cudaDataType_t (CUDA_R_32F is FP32, not TF32; CUDA_R_8F_UE4M3 is
// E4M3); nullopt for a type tcbench has no row for.
constexpr std::optional<Element> find_element(cudaDataType_t t) {
  for (int i = 0; i < kElementCount; ++i)
    if (element_info(static_cast<Element>(i)).cuda == t) return static_cast<Element>(i);
  return std::nullopt;
}

constexpr std::optional<Element> parse_element(std::string_view s) {
  for (int i = 0; i < kElementCount; ++i)
    if (element_info(static_cast<Element>(i)).name == s) return static_cast<Element>(i);
  return std::nullopt;
}

// Bytes of one element in memory (TF32: 4, stored as FP32). Host code: throws
// std::invalid_argument for the sub-byte formats (FP6, FP4), whose size is their storage type's
// (gemm_types.hpp), rather than give a size that is not one.
constexpr int element_bytes(Element e) {
  const int bits = element_info(e).bits;
  if (bits % 8 != 0)
    throw std::invalid_argument("element_bytes: " + std::string(name(e)) +
                                " elements are smaller than a byte");
  return bits / 8;
}

// Families, by the rows they name.
TCB_HD constexpr bool is_fp8(Element e) {
  return e == Element::e4m3 || e == Element::e5m2;
}
TCB_HD constexpr bool is_fp6(Element e) {
  return e == Element::e3m2 || e == Element::e2m3;
}
TCB_HD constexpr bool is_fp4(Element e) {
  return e == Element::e2m1;
}
// FP8, FP6 or FP4: the element formats of OCP MX v1.0 Table 1 and NVFP4, the types cuBLASLt
// scales (cuBLAS documentation, "Narrow Precision Data Types Usage").
TCB_HD constexpr bool is_narrow(Element e) {
  return is_fp8(e) || is_fp6(e) || is_fp4(e);
}
// The block-scale formats: E8M0 (MX) and UE4M3 (NVFP4).
TCB_HD constexpr bool is_block_scale(Element e) {
  return e == Element::ue8m0 || e == Element::ue4m3;
}

// What every row must satisfy, whatever its values: rows in enumerator order, one row per
// cudaDataType_t (but the two that share one), emax = floor(log2(max)), the unit roundoff half of
// epsilon (0 for integers), and subnormal <= normal <= 1 <= max.
constexpr bool row_is_consistent(const ElementInfo& r, Element e) {
  if (r.id != e || r.name.empty() || r.cuda_name.empty() || r.bits <= 0) return false;
  const bool shares = e == Element::tf32 || e == Element::ue4m3;
  if (!shares && find_element(r.cuda) != e) return false;
  double p = 1.0;
  for (int i = 0; i < r.emax; ++i) p *= 2.0;
  if (!(p <= r.max && r.max / 2.0 < p)) return false;
  if (r.unit_roundoff != (r.integer ? 0.0 : r.epsilon / 2.0)) return false;
  return 0.0 < r.min_subnormal && r.min_subnormal <= r.min_normal && r.min_normal <= 1.0 &&
         1.0 <= r.max;
}
constexpr bool every_row_is_consistent() {
  for (int i = 0; i < kElementCount; ++i) {
    const auto e = static_cast<Element>(i);
    if (!row_is_consistent(element_info(e), e)) return false;
  }
  return true;
}
static_assert(every_row_is_consistent(), "a row of element_info() contradicts itself");

// ---------------------------------------------------------------------------------------------
// Views: an enum that names some rows, for functions that take only those formats (a cast to
// FP8 takes an Fp8Format). A view's enumerators keep their own values (0, 1, ...: kernel names
// and the SASS rules carry them); element(view) names the row of each, and the view's list of
// every enumerator, checked by is_view, says it is exactly the rows a family names. Its names
// and limits are the rows'.

template <typename S>
concept ElementView = std::is_enum_v<S> && requires(S s) {
  { element(s) } -> std::same_as<Element>;
};

template <ElementView S>
TCB_HD constexpr ElementInfo element_info(S s) {
  return element_info(element(s));
}
template <ElementView S>
constexpr std::string_view name(S s) {
  return element_info(element(s)).name;
}

// True when `all` lists the view's enumerators in order (all[i] has value i), they name
// distinct rows, each row is in `family`, and every row of `family` is one of them.
template <ElementView S, std::size_t N>
constexpr bool is_view(const S (&all)[N], bool (*family)(Element)) {
  int in_family = 0;
  for (int i = 0; i < kElementCount; ++i) in_family += family(static_cast<Element>(i)) ? 1 : 0;
  if (in_family != static_cast<int>(N)) return false;
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(all[i]) != i || !family(element(all[i]))) return false;
    for (std::size_t j = 0; j < i; ++j)
      if (element(all[j]) == element(all[i])) return false;
  }
  return true;
}

// The enumerator of a view that names row e; nullopt when the view lacks it.
template <ElementView S, std::size_t N>
constexpr std::optional<S> view_of(const S (&all)[N], Element e) {
  for (S s : all)
    if (element(s) == e) return s;
  return std::nullopt;
}
template <ElementView S, std::size_t N>
constexpr std::optional<S> parse_view(const S (&all)[N], std::string_view s) {
  for (S v : all)
    if (name(v) == s) return v;
  return std::nullopt;
}

// The limits of a row as floats, for the formats the scaling and rounding code computes in
// (every value of FP16, BF16, FP8, FP6 and FP4 is exact in float).
struct FormatLimits {
  float max;
  float min_normal;
  float min_subnormal;
  float epsilon;
};
template <ElementView S>
TCB_HD constexpr FormatLimits limits(S s) {
  const ElementInfo r = element_info(element(s));
  return {static_cast<float>(r.max), static_cast<float>(r.min_normal),
          static_cast<float>(r.min_subnormal), static_cast<float>(r.epsilon)};
}

}  // namespace tcbench::numerics
