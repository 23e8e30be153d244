#include "tcbench/studies/fp8_accumulation.hpp"

#include "tcbench/numerics/fp8_scaling.hpp"
#include "tcbench/numerics/random.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace tcbench::studies {
namespace {

namespace tn = tcbench::numerics;

constexpr std::uint64_t kWeightSeed = 0xACC0, kActivationSeed = 0xACC1;

// x quantized to E4M3 with per-tensor current scaling: the E4M3 values and 1 / scale.
float quantize(const std::vector<float>& x, std::vector<float>& out) {
  const tn::CurrentScaled s = tn::current_scaling(x, tn::Fp8Format::e4m3);
  out.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    out[i] = tn::fp8_to_float(tn::scaled_cast_fp8(x[i], s.scale, tn::Fp8Format::e4m3),
                              tn::Fp8Format::e4m3);
  return s.scale_inv;
}

using tn::AccRounding;
constexpr tn::AccumulatorModel hopper(int promotion) {
  return {13, AccRounding::truncate, 32, promotion};
}
const AccumulationCase kCases[] = {
    {"accum_fp64", std::nullopt, true, "exact accumulation (FP64): the E4M3 rounding alone"},
    {"accum_fp32", std::nullopt, false, "IEEE FP32, one product at a time (CUDA cores)"},
    {"accum_13bits", hopper(0), false,
     "13 fraction bits, truncated, 32 products per step: Ada/Hopper FP8 as published "
     "(SageAttention2; Khattak and Mikaitis; DeepSeek-V3)"},
    {"accum_13bits", hopper(64), false, "13 bits, promoted to FP32 every 64 products"},
    {"accum_13bits", hopper(128), false,
     "13 bits, promoted to FP32 every 128 products (DeepSeek-V3's N_C)"},
    {"accum_13bits", hopper(256), false, "13 bits, promoted to FP32 every 256 products"},
    {"accum_13bits", hopper(512), false, "13 bits, promoted to FP32 every 512 products"},
    {"accum_25bits", tn::AccumulatorModel{25, AccRounding::truncate, 32, 0}, false,
     "25 fraction bits, 32 products per step: B200's tcgen05 FP8 as published "
     "(deepseek-ai/DeepGEMM#176; truncation assumed, unpublished)"},
};

}  // namespace

Fp8Operands fp8_study_operands(std::int64_t m, std::int64_t n, std::int64_t k) {
  if (m < 1 || n < 1 || k < 1)
    throw std::invalid_argument("fp8_study_operands: " + std::to_string(m) + " x " +
                                std::to_string(n) + " x " + std::to_string(k) +
                                " is not a GEMM shape");
  Fp8Operands o;
  o.m = m;
  o.n = n;
  o.k = k;
  o.a32.resize(static_cast<std::size_t>(m * k));
  o.b32.resize(static_cast<std::size_t>(n * k));
  const auto a = static_cast<float>(std::sqrt(3.0 / static_cast<double>(k)));
  tn::fill_random_host(std::span<float>(o.a32), tn::Distribution::uniform(-a, a), kWeightSeed);
  tn::fill_random_host(std::span<float>(o.b32), tn::Distribution::uniform(-1.0f, 1.0f),
                       kActivationSeed);
  o.a_scale_inv = quantize(o.a32, o.a8);
  o.b_scale_inv = quantize(o.b32, o.b8);
  return o;
}

std::span<const AccumulationCase> accumulation_cases() {
  return kCases;
}

std::vector<std::vector<AccumulationError>> accumulation_errors(std::int64_t m, std::int64_t n) {
  constexpr std::int64_t kMaxK = kAccumulationKs[std::size(kAccumulationKs) - 1];
  const Fp8Operands o = fp8_study_operands(m, n, kMaxK);
  const double dequantize = static_cast<double>(o.a_scale_inv) * o.b_scale_inv;
  constexpr std::size_t kPoints = std::size(kAccumulationKs);
  // Squared sums per case and K: error vs the E4M3 values, vs the originals; and the references.
  struct Sums {
    double err2[kPoints] = {}, err2_unquantized[kPoints] = {};
  };
  std::vector<Sums> sums(std::size(kCases));
  double ref2[kPoints] = {}, ref2_unquantized[kPoints] = {};
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const float* a8 = o.a8.data() + i * kMaxK;
      const float* b8 = o.b8.data() + j * kMaxK;
      const float* a32 = o.a32.data() + i * kMaxK;
      const float* b32 = o.b32.data() + j * kMaxK;
      // Exact references at each K: FP64 sums (exact for E4M3 products at this K).
      double exact[kPoints], original[kPoints];
      double q = 0, x = 0;
      std::int64_t at = 0;
      for (std::size_t p = 0; p < kPoints; ++p) {
        for (; at < kAccumulationKs[p]; ++at) {
          q += static_cast<double>(a8[at]) * b8[at];
          x += static_cast<double>(a32[at]) * b32[at];
        }
        exact[p] = q;
        original[p] = x;
        ref2[p] += q * q;
        ref2_unquantized[p] += x * x;
      }
      for (std::size_t c = 0; c < std::size(kCases); ++c) {
        const AccumulationCase& ac = kCases[c];
        tn::AccumulatorState s;
        float fp32 = 0;
        at = 0;
        for (std::size_t p = 0; p < kPoints; ++p) {
          const std::int64_t end = kAccumulationKs[p];
          double value = exact[p];
          if (ac.model) {
            const float* pa = a8 + at;
            const float* pb = b8 + at;
            tn::accumulate(
                s, *ac.model, [&](int l) { return static_cast<double>(pa[l]) * pb[l]; },
                static_cast<int>(end - at));
            value = tn::accumulated_value(s, *ac.model);
          } else if (!ac.fp64) {
            for (std::int64_t l = at; l < end; ++l) fp32 += a8[l] * b8[l];  // exact products
            value = fp32;
          }
          at = end;
          sums[c].err2[p] += (value - exact[p]) * (value - exact[p]);
          const double user = value * dequantize - original[p];
          sums[c].err2_unquantized[p] += user * user;
        }
      }
    }
  std::vector<std::vector<AccumulationError>> out(std::size(kCases));
  for (std::size_t c = 0; c < std::size(kCases); ++c)
    for (std::size_t p = 0; p < kPoints; ++p)
      out[c].push_back({kAccumulationKs[p], std::sqrt(sums[c].err2[p] / ref2[p]),
                        std::sqrt(sums[c].err2_unquantized[p] / ref2_unquantized[p])});
  return out;
}

}  // namespace tcbench::studies
