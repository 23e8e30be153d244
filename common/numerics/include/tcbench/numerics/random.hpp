// Deterministic random numbers, identical on host and device: the one random source of tcbench
// (benchmark inputs, the host studies' data and initial weights, the GPU studies' inputs).
//
// Every value is a pure function of (seed, index): a counter-based hash (SplitMix64's finalizer,
// Steele, Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014), so a
// device fill and a host fill of the same seed give the same values, any element can be
// recomputed, and the host tests cover exactly what the fill kernel produces (the device fill is
// tcbench/random_fill.hpp). A study that draws one value after another uses a RandomStream:
// draw i is random_value(d, seed, i). Model: llm.c dev/cuda's one make_random_float.
#pragma once

#include "tcbench/numerics/host_device.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace tcbench::numerics {

struct Distribution {
  enum class Kind {
    uniform,         // U[lo, hi)
    normal,          // N(mean = lo, stddev = hi)
    outliers,        // N(0, 1), with one element in `outlier_every` scaled by `outlier_scale`:
                     // the activation-with-outliers shape that breaks max calibration
    integer_uniform  // integers uniform in [lo, hi]: exact in every format that holds them
  };
  Kind kind = Kind::uniform;
  float lo = -1.0f;
  float hi = 1.0f;
  std::uint32_t outlier_every = 1024;
  float outlier_scale = 50.0f;

  static constexpr Distribution uniform(float lo, float hi) { return {Kind::uniform, lo, hi}; }
  static constexpr Distribution normal(float mean, float stddev) {
    return {Kind::normal, mean, stddev};
  }
  static constexpr Distribution integers(int lo, int hi) {
    return {Kind::integer_uniform, static_cast<float>(lo), static_cast<float>(hi)};
  }
  static constexpr Distribution activations_with_outliers(std::uint32_t every = 1024,
                                                          float scale = 50.f) {
    return {Kind::outliers, 0.0f, 1.0f, every, scale};
  }
};

namespace detail {
// SplitMix64 finalizer: a bijective 64-bit mix, good enough for test inputs and cheap on GPUs.
TCB_HD inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
// Uniform in [0, 1) with 24 random bits, so it is exactly representable as a float.
TCB_HD inline float unit_float(std::uint64_t bits) {
  return static_cast<float>(bits >> 40) * 0x1p-24f;  // not a format limit: 2^-24 per bit step
}
}  // namespace detail

// The value of element `index` of a fill with `seed`.
TCB_HD inline float random_value(const Distribution& d, std::uint64_t seed, std::uint64_t index) {
  const std::uint64_t h = detail::mix64(seed * 0xD1B54A32D192ED03ull ^ detail::mix64(index));
  switch (d.kind) {
    case Distribution::Kind::uniform:
      return d.lo + (d.hi - d.lo) * detail::unit_float(h);
    case Distribution::Kind::integer_uniform: {
      const auto span = static_cast<std::uint64_t>(d.hi - d.lo + 1.0f);
      return d.lo + static_cast<float>((h >> 11) % span);
    }
    case Distribution::Kind::normal:
    case Distribution::Kind::outliers: {
      // Box-Muller on two independent 24-bit uniforms; u1 in (0, 1] keeps log finite.
      const float u1 = 1.0f - detail::unit_float(h);
      const float u2 = detail::unit_float(detail::mix64(h));
      const float z = sqrtf(-2.0f * logf(u1)) * cosf(6.2831853f * u2);
      if (d.kind == Distribution::Kind::normal) return d.lo + d.hi * z;
      const bool outlier = (detail::mix64(h ^ 0x5851F42D4C957F2Dull) % d.outlier_every) == 0;
      return outlier ? z * d.outlier_scale : z;
    }
  }
  return 0.0f;
}

// Converts a sample to the storage type. Integers round to nearest and saturate; FP8 saturates
// (the __nv_fp8 constructors use SATFINITE).
template <typename T>
TCB_HD inline T convert_sample(float v) {
  if constexpr (std::is_same_v<T, std::int8_t>) {
    const float r = rintf(fminf(fmaxf(v, -128.0f), 127.0f));
    return static_cast<std::int8_t>(r);
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return static_cast<std::int32_t>(rintf(v));
  } else if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(v);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(v);
  } else {
    return T(v);
  }
}

// The same values on the host.
template <typename T>
void fill_random_host(std::span<T> out, const Distribution& d, std::uint64_t seed) {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = convert_sample<T>(random_value(d, seed, i));
}

// Draws one after another from random_value: draw i of a stream with `seed` is
// random_value(d, seed, i), whatever d, so a stream is as reproducible as a fill, on every
// platform and compiler (std::normal_distribution is implementation-defined; this is not).
class RandomStream {
 public:
  explicit RandomStream(std::uint64_t seed) : seed_(seed) {}
  float draw(const Distribution& d) { return random_value(d, seed_, index_++); }
  float uniform(float lo = 0.0f, float hi = 1.0f) { return draw(Distribution::uniform(lo, hi)); }
  float normal(float mean = 0.0f, float stddev = 1.0f) {
    return draw(Distribution::normal(mean, stddev));
  }
  // An integer uniform in [0, n), n at most 2^24 (exact in the float the draw is).
  std::size_t below(std::size_t n) {
    if (n == 0 || n > (std::size_t{1} << 24))
      throw std::invalid_argument("RandomStream::below: n = " + std::to_string(n) +
                                  " is not in [1, 2^24]");
    return static_cast<std::size_t>(draw(Distribution::integers(0, static_cast<int>(n) - 1)));
  }
  // Where the next draw comes from, so a test can recompute it with random_value.
  std::uint64_t seed() const { return seed_; }
  std::uint64_t index() const { return index_; }

 private:
  std::uint64_t seed_;
  std::uint64_t index_ = 0;
};

}  // namespace tcbench::numerics
