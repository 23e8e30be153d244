#include "tcbench/studies/block_scaling_study.hpp"

#include "tcbench/numerics/formats.hpp"
#include "tcbench/numerics/random.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>

namespace tcbench::studies {
namespace {

namespace tn = tcbench::numerics;
using tn::ElementFormat;
using tn::Granularity;

struct Data {
  std::vector<float> x, x_prev, w, g, g_prev;
};

std::vector<float> activations(const ScalingStudyConfig& c, std::uint64_t seed) {
  tn::RandomStream rng(seed);
  std::vector<float> x(static_cast<std::size_t>(c.tokens * c.hidden));
  for (float& v : x) v = static_cast<float>(rng.normal());
  // Outlier channels spread over the hidden dimension (every 1x128 tile sees at most one).
  for (int o = 0; o < c.outlier_channels; ++o) {
    const std::int64_t ch = (o * c.hidden) / std::max(1, c.outlier_channels) + 37;
    for (std::int64_t t = 0; t < c.tokens; ++t)
      x[static_cast<std::size_t>(t * c.hidden + ch % c.hidden)] *= c.outlier_scale;
  }
  return x;
}

std::vector<float> gradients(const ScalingStudyConfig& c, std::uint64_t seed) {
  tn::RandomStream rng(seed);
  std::vector<float> g(static_cast<std::size_t>(c.tokens * c.hidden));
  for (float& v : g) {  // two draws in a fixed order (operands of * are unsequenced)
    const double sign_and_size = rng.normal(), log_spread = rng.normal();
    v = static_cast<float>(sign_and_size * std::exp(2.0 * log_spread) * 1e-6);
  }
  return g;
}

Data make_data(const ScalingStudyConfig& c) {
  Data d;
  d.x = activations(c, c.seed);
  d.x_prev = activations(c, c.seed + 1);
  d.g = gradients(c, c.seed + 2);
  d.g_prev = gradients(c, c.seed + 3);
  // Last step's tensors: other draws, 1 / growth the size (the amax a delayed recipe scales by).
  for (std::vector<float>* prev : {&d.x_prev, &d.g_prev})
    for (float& v : *prev) v /= c.growth;
  tn::RandomStream rng(c.seed + 4);
  d.w.resize(static_cast<std::size_t>(c.out * c.hidden));
  const double sd = 1.0 / std::sqrt(static_cast<double>(c.hidden));
  for (float& v : d.w) v = static_cast<float>(rng.normal() * sd);
  return d;
}

float amax_of(const std::vector<float>& v) {
  return tn::amax(v);
}

struct Quantized {
  std::vector<float> values;
  double bytes = 0;  // total storage, scales included
};

Quantized quantize(const ScalingOption& o, const std::vector<float>& x,
                   const std::vector<float>& prev, std::int64_t rows, std::int64_t cols,
                   Granularity g) {
  Quantized q;
  if (o.bf16) {
    q.values.resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) q.values[i] = tn::round_trip(x[i], tn::Format::bf16);
    q.bytes = 2.0 * static_cast<double>(x.size());
    return q;
  }
  std::optional<float> amax;
  if (o.delayed) amax = amax_of(prev);
  const tn::QuantizedMatrix m = tn::quantize(x, rows, cols, g, o.format, o.rule, amax);
  q.values = m.dequantized();
  q.bytes = m.bytes_per_element() * static_cast<double>(x.size());
  return q;
}

ErrorPair error(const std::vector<float>& q, const std::vector<float>& x) {
  double diff = 0, ref = 0, worst = 0, amax = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double d = static_cast<double>(q[i]) - static_cast<double>(x[i]);
    diff += d * d;
    ref += static_cast<double>(x[i]) * x[i];
    worst = std::max(worst, std::fabs(d));
    amax = std::max(amax, std::fabs(static_cast<double>(x[i])));
  }
  return {ref > 0 ? std::sqrt(diff / ref) : 0.0, amax > 0 ? worst / amax : 0.0};
}

// D = X W^T in FP64: tokens x out.
std::vector<double> gemm(const std::vector<float>& x, const std::vector<float>& w,
                         const ScalingStudyConfig& c) {
  std::vector<double> d(static_cast<std::size_t>(c.tokens * c.out));
  for (std::int64_t t = 0; t < c.tokens; ++t)
    for (std::int64_t o = 0; o < c.out; ++o) {
      const float* xr = x.data() + t * c.hidden;
      const float* wr = w.data() + o * c.hidden;
      double acc = 0;
      for (std::int64_t h = 0; h < c.hidden; ++h)
        acc += static_cast<double>(xr[h]) * static_cast<double>(wr[h]);
      d[static_cast<std::size_t>(t * c.out + o)] = acc;
    }
  return d;
}

ErrorPair error(const std::vector<double>& q, const std::vector<double>& x) {
  double diff = 0, ref = 0, worst = 0, amax = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double d = q[i] - x[i];
    diff += d * d;
    ref += x[i] * x[i];
    worst = std::max(worst, std::fabs(d));
    amax = std::max(amax, std::fabs(x[i]));
  }
  return {ref > 0 ? std::sqrt(diff / ref) : 0.0, amax > 0 ? worst / amax : 0.0};
}

}  // namespace

std::vector<ScalingOption> scaling_options() {
  using G = Granularity;
  using F = ElementFormat;
  return {
      {"bf16", "BF16, no scale", G::tensor, G::tensor, F::e4m3, tn::MxRule::ocp, false, true},
      {"fp8_tensor_delayed", "E4M3, per tensor, delayed (last step's amax)", G::tensor, G::tensor,
       F::e4m3, tn::MxRule::ocp, true},
      {"fp8_tensor", "E4M3, per tensor, current", G::tensor, G::tensor, F::e4m3},
      {"fp8_rowwise", "E4M3, per row (token / output channel)", G::row, G::row, F::e4m3},
      {"fp8_128x128", "E4M3, W 128x128 blocks, X 1x128 tiles (DeepSeek-V3)", G::tile_1x128,
       G::block_128x128, F::e4m3},
      {"fp8_1x128", "E4M3, 1x128 tiles", G::tile_1x128, G::tile_1x128, F::e4m3},
      {"mxfp8", "MXFP8: E4M3, E8M0 per 32 (OCP rule)", G::mx, G::mx, F::e4m3},
      {"mxfp8_round_up", "MXFP8, scale rounded up (cuBLAS rule)", G::mx, G::mx, F::e4m3,
       tn::MxRule::round_up},
      {"mxfp6_e2m3", "MXFP6: E2M3, E8M0 per 32", G::mx, G::mx, F::e2m3},
      {"mxfp6_e3m2", "MXFP6: E3M2, E8M0 per 32", G::mx, G::mx, F::e3m2},
      {"mxfp4", "MXFP4: E2M1, E8M0 per 32 (OCP rule)", G::mx, G::mx, F::e2m1},
      {"mxfp4_round_up", "MXFP4, scale rounded up (cuBLAS rule)", G::mx, G::mx, F::e2m1,
       tn::MxRule::round_up},
      {"nvfp4", "NVFP4: E2M1, UE4M3 per 16, FP32 per tensor", G::nvfp4, G::nvfp4, F::e2m1},
  };
}

std::vector<ScalingRow> block_scaling_study(const ScalingStudyConfig& c) {
  if (c.tokens <= 0 || c.hidden <= 0 || c.out <= 0)
    throw std::invalid_argument("block_scaling_study: sizes must be positive");
  const Data d = make_data(c);
  const std::vector<double> exact = gemm(d.x, d.w, c);
  std::vector<ScalingRow> rows;
  double bf16_gemm = 0;
  for (const ScalingOption& o : scaling_options()) {
    ScalingRow r;
    r.option = o;
    const Quantized x = quantize(o, d.x, d.x_prev, c.tokens, c.hidden, o.x);
    const Quantized w = quantize(o, d.w, d.w, c.out, c.hidden, o.w);
    const Quantized g = quantize(o, d.g, d.g_prev, c.tokens, c.hidden, o.x);
    r.bytes_per_element = (x.bytes + w.bytes) / static_cast<double>(d.x.size() + d.w.size());
    r.activations = error(x.values, d.x);
    r.weights = error(w.values, d.w);
    r.gradients = error(g.values, d.g);
    r.gemm = error(gemm(x.values, w.values, c), exact);
    if (o.bf16) bf16_gemm = r.gemm.rel;
    r.gemm_vs_bf16 = bf16_gemm > 0 ? r.gemm.rel / bf16_gemm : 0.0;
    rows.push_back(r);
  }
  return rows;
}

std::string markdown_table(const std::vector<ScalingRow>& rows) {
  std::string out =
      "| option | bytes / element | activations (outliers) | weights | gradients | GEMM X·Wᵀ | "
      "GEMM error / BF16's |\n|---|---|---|---|---|---|---|\n";
  char buf[512];
  auto pair = [](const ErrorPair& e) {
    char s[64];
    std::snprintf(s, sizeof s, "%.2e / %.2e", e.rel, e.worst);
    return std::string(s);
  };
  for (const ScalingRow& r : rows) {
    std::snprintf(buf, sizeof buf, "| %s | %.4f | %s | %s | %s | %s | %.1f |\n",
                  std::string(r.option.what).c_str(), r.bytes_per_element,
                  pair(r.activations).c_str(), pair(r.weights).c_str(), pair(r.gradients).c_str(),
                  pair(r.gemm).c_str(), r.gemm_vs_bf16);
    out += buf;
  }
  return out;
}

}  // namespace tcbench::studies
