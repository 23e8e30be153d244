// The GEMM precisions tcbench measures, named the way benchmark names, context keys
// (peak_<name>) and the Python tools spell them.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace tcbench {

enum class Precision {
  fp64,        // FP64 on CUDA cores (DMMA where the peak table says so)
  fp32,        // FP32 on CUDA cores (SIMT FFMA), the baseline every speed-up is measured from
  tf32,        // TF32 tensor cores, FP32 accumulate
  fp16,        // FP16 in, FP32 accumulate (HMMA)
  fp16_acc16,  // FP16 in, FP16 accumulate (HMMA; double rate on GeForce parts)
  bf16,        // BF16 in, FP32 accumulate (HMMA)
  int8,        // INT8 in, INT32 accumulate (IMMA)
  fp8,         // FP8 (E4M3/E5M2) in, FP32 accumulate (QGMMA on Hopper)
};

inline constexpr std::array<Precision, 8> kAllPrecisions = {
    Precision::fp64,       Precision::fp32, Precision::tf32, Precision::fp16,
    Precision::fp16_acc16, Precision::bf16, Precision::int8, Precision::fp8};

constexpr std::string_view name(Precision p) {
  switch (p) {
    case Precision::fp64:
      return "fp64";
    case Precision::fp32:
      return "fp32";
    case Precision::tf32:
      return "tf32";
    case Precision::fp16:
      return "fp16";
    case Precision::fp16_acc16:
      return "fp16_acc16";
    case Precision::bf16:
      return "bf16";
    case Precision::int8:
      return "int8";
    case Precision::fp8:
      return "fp8";
  }
  return "?";
}

constexpr std::optional<Precision> parse_precision(std::string_view s) {
  for (Precision p : kAllPrecisions)
    if (name(p) == s) return p;
  return std::nullopt;
}

// Integer precisions report TOP/s ("tops"), the rest TFLOP/s ("tflops").
constexpr bool is_integer(Precision p) {
  return p == Precision::int8;
}

}  // namespace tcbench
