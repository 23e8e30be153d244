// Deterministic random inputs, identical on host and device.
//
// Every element is a pure function of (seed, index): a counter-based hash, so a device fill and a
// host fill of the same seed give the same values, any element can be recomputed, and the host
// tests cover exactly what the fill kernel produces. Benchmarks never time on zeros.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

namespace tcbench {

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

  static Distribution uniform(float lo, float hi) { return {Kind::uniform, lo, hi}; }
  static Distribution normal(float mean, float stddev) { return {Kind::normal, mean, stddev}; }
  static Distribution integers(int lo, int hi) {
    return {Kind::integer_uniform, static_cast<float>(lo), static_cast<float>(hi)};
  }
  static Distribution activations_with_outliers(std::uint32_t every = 1024, float scale = 50.f) {
    return {Kind::outliers, 0.0f, 1.0f, every, scale};
  }
};

namespace detail {
// SplitMix64 finalizer: a bijective 64-bit mix, good enough for test inputs and cheap on GPUs.
__host__ __device__ inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
// Uniform in [0, 1) with 24 random bits, so it is exactly representable as a float.
__host__ __device__ inline float unit_float(std::uint64_t bits) {
  return static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);
}
}  // namespace detail

// The value of element `index` of a fill with `seed`.
__host__ __device__ inline float random_value(const Distribution& d, std::uint64_t seed,
                                              std::uint64_t index) {
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
__host__ __device__ inline T convert_sample(float v) {
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

// Fills device memory; asynchronous on `stream`. Instantiated for float, double, __half,
// __nv_bfloat16, int8_t, int32_t, __nv_fp8_e4m3 and __nv_fp8_e5m2.
template <typename T>
void fill_random(T* device_ptr, std::size_t count, const Distribution& d, std::uint64_t seed,
                 cudaStream_t stream);

// The same values on the host.
template <typename T>
void fill_random_host(std::span<T> out, const Distribution& d, std::uint64_t seed) {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = convert_sample<T>(random_value(d, seed, i));
}

}  // namespace tcbench
