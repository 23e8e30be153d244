#include "tcbench/numerics/formats.hpp"

namespace tcbench::numerics {

std::string_view name(Format f) {
  switch (f) {
    case Format::fp16:
      return "fp16";
    case Format::bf16:
      return "bf16";
    case Format::e4m3:
      return "e4m3";
    case Format::e5m2:
      return "e5m2";
  }
  return "?";
}

std::string_view name(Landing l) {
  switch (l) {
    case Landing::zero:
      return "zero";
    case Landing::normal:
      return "normal";
    case Landing::subnormal:
      return "subnormal";
    case Landing::flushed_to_zero:
      return "flushed_to_zero";
    case Landing::overflow:
      return "overflow";
    case Landing::not_finite:
      return "not_finite";
  }
  return "?";
}

float amax(std::span<const float> xs) {
  float acc = 0.0f;
  for (float x : xs) acc = amax_step(acc, x);
  return acc;
}

}  // namespace tcbench::numerics
