#include "tcbench/numerics/accumulator_probes.hpp"

#include "tcbench/numerics/narrow_formats.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

namespace tcbench::numerics {
namespace {

// The exponent of a format's smallest normal value (its values are exact in float).
int min_normal_exponent(Element e) {
  int exp = 0;
  std::frexp(element_info(e).min_normal, &exp);
  return exp - 1;
}

std::string power(int exponent) {
  return exponent == 0 ? "L" : "2^" + std::to_string(-exponent) + " L";
}

// Probes are written one product at a time: product i of the probe being built is +-2^e, as
// a = 2^floor(e/2) times b = 2^ceil(e/2), both normal in the input format.
class Builder {
 public:
  Builder(AccumulatorProbes& p, int emin, int emax) : p_(p), emin_(emin), emax_(emax) {}

  void begin(AccumulatorProbe probe) {
    p_.probes.push_back(probe);
    p_.a.resize(p_.a.size() + static_cast<std::size_t>(p_.length), 0.0f);
    p_.b.resize(p_.b.size() + static_cast<std::size_t>(p_.length), 0.0f);
  }
  // Product i = sign * significand * 2^(s - t) (t = 0 for L); the significand (in [1, 2)) is
  // a's, so it must be exact in the format.
  void put(int i, int t, int sign = 1, float significand = 1.0f) {
    const int e = p_.large_exponent - t;
    const int ea = e >= 0 ? e / 2 : -((-e + 1) / 2);  // floor(e / 2)
    const int eb = e - ea;
    if (ea < emin_ || eb > emax_ || i < 0 || i >= p_.length)
      throw std::logic_error("accumulator probes: product 2^" + std::to_string(e) +
                             " at position " + std::to_string(i) + " does not fit the format");
    const std::size_t at =
        (p_.probes.size() - 1) * static_cast<std::size_t>(p_.length) + static_cast<std::size_t>(i);
    p_.a[at] = static_cast<float>(sign) * significand * std::ldexp(1.0f, ea);
    p_.b[at] = std::ldexp(1.0f, eb);
    AccumulatorProbe& probe = p_.probes.back();
    probe.used = std::max(probe.used, i + 1);
  }

 private:
  AccumulatorProbes& p_;
  int emin_, emax_;
};

// Small products that sum to 2^-bits L: two of 2^-(bits + 1) L while that shows in FP32 beside
// L, else as many 2^-(bits + 1) L as make one FP32 ulp of L (2^-23).
int small_count(int bits) {
  return bits < kFp32FractionBits ? 2 : 1 << (bits + 1 - kFp32FractionBits);
}

bool same(float got, float want) {
  return got == want;  // NaN never matches; +0 and -0 do
}

// The family the estimator searches, in an order that rejects most models on short probes.
std::vector<AccumulatorModel> candidate_models() {
  std::vector<AccumulatorModel> out;
  for (int bits = kMinProbedBits; bits <= kMaxProbedBits; ++bits)
    for (AccRounding r : kAccRoundings)
      for (int block = 2; block <= 128; block *= 2)
        for (int promotion : {0, 16, 32, 64, 128, 256, 512})
          if (promotion == 0 || promotion % block == 0) out.push_back({bits, r, block, promotion});
  return out;
}

float emulate_probe(const AccumulatorProbes& p, std::size_t i, const AccumulatorModel& m) {
  return emulate_dot(
      m, [&](int k) { return p.product(i, k); }, p.probes[i].used);
}

std::string float_text(float x) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(x));
  return buf;
}

std::string list(const std::vector<int>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i)
    out += (i == 0 ? "" : i + 1 == values.size() ? " or " : ", ") + std::to_string(values[i]);
  return out;
}

std::string describe_model(const AccumulatorModel& m) {
  return std::to_string(m.fraction_bits) + " fraction bits, " + std::string(name(m.rounding)) +
         ", " + std::to_string(m.block) + " products per step, " +
         (m.promotion == 0 ? "no promotion"
                           : "promotion every " + std::to_string(m.promotion) + " products");
}

}  // namespace

std::string AccumulatorProbes::describe(std::size_t i) const {
  const AccumulatorProbe& p = probes.at(i);
  const std::string small = std::to_string(p.count) + " x " + power(p.t);
  switch (p.kind) {
    case ProbeKind::single_small:
      return "single_small (L, " + power(p.t) + ")";
    case ProbeKind::many_small:
      return "many_small (L, " + small + ")";
    case ProbeKind::negative_small:
      return "negative_small (L, -" + power(p.t) + ")";
    case ProbeKind::negative_large:
      return "negative_large (-L, " + power(p.t) + ")";
    case ProbeKind::above_half:
      return "above_half (L, " + power(kFp32FractionBits + 1) + " + " + power(p.t) + ")";
    case ProbeKind::odd_small:
      return "odd_small (L, 3 x 11/8 " + power(p.t - 3) + ")";
    case ProbeKind::carry:
      return "carry (" + power(p.t) + ", " + power(p.t - 1) + ", L, L)";
    case ProbeKind::tie:
      return "tie (" + power(p.t) + ", L, L)";
    case ProbeKind::before_large:
      return "before_large (" + small + ", L at " + std::to_string(p.position) + ")";
    case ProbeKind::after_large:
      return "after_large (L, " + small + " from " + std::to_string(p.position) + ")";
  }
  return "?";
}

AccumulatorProbes make_accumulator_probes(Element input, int length) {
  if (input != Element::e4m3 && input != Element::e5m2 && input != Element::fp16 &&
      input != Element::bf16)
    throw std::invalid_argument(
        "accumulator probes are built for e4m3, e5m2, fp16 or bf16 inputs, "
        "not " +
        std::string(name(input)));
  if (length < kProbeLength || length % 32 != 0)
    throw std::invalid_argument(
        "accumulator probes need a length that is a multiple of 32, at "
        "least " +
        std::to_string(kProbeLength) + "; got " + std::to_string(length));
  const int emin = min_normal_exponent(input), emax = element_info(input).emax;
  AccumulatorProbes p;
  p.input = input;
  p.length = length;
  // L as large as the format allows, but 4L stays far inside FP32 and the smallest product,
  // 2^-(kMaxProbedBits) L, stays normal.
  p.large_exponent = std::min(2 * emax, 30);
  if (p.large_exponent - kMaxProbedBits < 2 * emin)
    throw std::logic_error("accumulator probes: " + std::string(name(input)) +
                           " cannot hold the smallest probe product");
  Builder b(p, emin, emax);
  using K = ProbeKind;

  for (int t = 1; t <= kFp32FractionBits; ++t) {
    b.begin({K::single_small, t});
    b.put(0, 0);
    b.put(1, t);
  }
  for (int j = 1; kFp32FractionBits + j <= kMaxProbedBits; ++j) {
    b.begin({K::many_small, kFp32FractionBits + j, 1 << j});
    b.put(0, 0);
    for (int i = 1; i <= 1 << j; ++i) b.put(i, kFp32FractionBits + j);
  }
  for (int t = kMinProbedBits + 1; t <= kMaxProbedBits; ++t) {
    b.begin({K::negative_small, t});
    b.put(0, 0);
    b.put(1, t, -1);
  }
  // -L then +2^-t L: truncation toward zero and floor differ on the negative sum's rounding
  // even when every bit survives alignment (t <= F).
  for (int t = kFp32FractionBits + 1; t <= kMaxProbedBits; ++t) {
    b.begin({K::negative_large, t});
    b.put(0, 0, -1);
    b.put(1, t);
  }
  // u(24) + u(t) as one product (a's significand 1 + 2^(24 - t)), as far as the format's
  // mantissa holds it.
  const int mantissa = -static_cast<int>(std::lround(std::log2(element_info(input).epsilon)));
  for (int t = kFp32FractionBits + 2;
       t <= std::min(kMaxProbedBits, kFp32FractionBits + 1 + mantissa); ++t) {
    b.begin({K::above_half, t});
    b.put(0, 0);
    b.put(1, kFp32FractionBits + 1, 1, 1.0f + std::ldexp(1.0f, kFp32FractionBits + 1 - t));
  }
  // 11/8 = 1.011b needs 3 mantissa bits: E4M3, FP16, BF16.
  for (int t = kFp32FractionBits + 1; mantissa >= 3 && t <= kMaxProbedBits; ++t) {
    b.begin({K::odd_small, t, 3});
    b.put(0, 0);
    for (int i = 1; i <= 3; ++i) b.put(i, t - 3, 1, 1.375f);
  }
  for (int w = kMinProbedBits; w <= kFp32FractionBits; ++w) {
    b.begin({K::carry, w});
    b.put(0, w);
    b.put(1, w - 1);
    b.put(2, 0);
    b.put(3, 0);
    b.begin({K::tie, w});
    b.put(0, w);
    b.put(1, 0);
    b.put(2, 0);
  }
  for (int bits = kMinProbedBits; bits < kMaxProbedBits; ++bits) {
    const int n = small_count(bits);
    for (int q = 2; q <= 256; q *= 2) {
      if (q < n) continue;
      b.begin({K::before_large, bits + 1, n, q});
      for (int i = 0; i < n; ++i) b.put(i, bits + 1);
      b.put(q, 0);
    }
    for (int q = 16; q <= 512; q *= 2) {
      b.begin({K::after_large, bits + 1, n, q});
      b.put(0, 0);
      for (int i = 0; i < n; ++i) b.put(q + i, bits + 1);
    }
  }
  return p;
}

std::vector<std::uint8_t> exact_bytes(Element input, std::span<const float> values) {
  const bool fp8 = input == Element::e4m3 || input == Element::e5m2;
  if (!fp8 && input != Element::fp16 && input != Element::bf16)
    throw std::invalid_argument("exact_bytes: no byte encoding for " + std::string(name(input)));
  const std::size_t size = fp8 ? 1 : 2;
  std::vector<std::uint8_t> out(values.size() * size);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float v = values[i];
    std::uint16_t code = 0;
    float back = 0;
    if (fp8) {
      const ElementFormat f = input == Element::e4m3 ? ElementFormat::e4m3 : ElementFormat::e5m2;
      code = encode(v, f);
      back = decode(static_cast<std::uint8_t>(code), f);
    } else if (input == Element::fp16) {
      const __half h = __float2half_rn(v);
      code = static_cast<__half_raw>(h).x;
      back = __half2float(h);
    } else {
      const __nv_bfloat16 h = __float2bfloat16_rn(v);
      code = static_cast<__nv_bfloat16_raw>(h).x;
      back = __bfloat162float(h);
    }
    if (!(back == v))
      throw std::invalid_argument("exact_bytes: " + float_text(v) + " is not exact in " +
                                  std::string(name(input)));
    out[i * size] = static_cast<std::uint8_t>(code & 0xFFu);
    if (size == 2) out[i * size + 1] = static_cast<std::uint8_t>(code >> 8);
  }
  return out;
}

std::vector<float> emulate_probes(const AccumulatorProbes& probes, const AccumulatorModel& m) {
  if (const auto why = why_invalid(m)) throw std::invalid_argument(*why);
  std::vector<float> out(probes.probes.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = emulate_probe(probes, i, m);
  return out;
}

std::string AccumulatorEstimate::describe() const {
  if (refused) return "not determined: " + reason;
  std::string s = (at_least ? "at least " : "") + std::to_string(fraction_bits) +
                  " fraction bits, " + std::string(name(rounding)) + ", ";
  s += block ? std::to_string(*block) + " products per step"
             : "steps of " + list(blocks) + " products (the probes cannot tell)";
  s += ", ";
  if (!promotion)
    s += "promotion every " + list(promotions) + " products (the probes cannot tell)";
  else if (*promotion == 0)
    s += "no promotion within K = " + std::to_string(length);
  else
    s += "promotion to FP32 every " + std::to_string(*promotion) + " products";
  return s;
}

AccumulatorEstimate estimate_accumulator(const AccumulatorProbes& probes,
                                         std::span<const float> results) {
  if (results.size() != probes.probes.size())
    throw std::invalid_argument("estimate_accumulator: " + std::to_string(results.size()) +
                                " results for " + std::to_string(probes.probes.size()) + " probes");
  AccumulatorEstimate est;
  est.length = probes.length;
  for (std::size_t i = 0; i < results.size(); ++i)
    if (!std::isfinite(results[i])) {
      est.reason = "probe " + probes.describe(i) + " gave " + float_text(results[i]) +
                   ", not a finite number";
      return est;
    }

  std::vector<AccumulatorModel> matches;
  AccumulatorModel closest{};
  std::size_t closest_matched = 0, closest_miss = 0;
  float closest_want = 0;
  for (const AccumulatorModel& m : candidate_models()) {
    std::size_t i = 0;
    float want = 0;
    for (; i < results.size(); ++i) {
      want = emulate_probe(probes, i, m);
      if (!same(results[i], want)) break;
    }
    if (i == results.size()) {
      matches.push_back(m);
    } else if (i >= closest_matched) {
      closest = m;
      closest_matched = i;
      closest_miss = i;
      closest_want = want;
    }
  }
  if (matches.empty()) {
    est.reason = "no accumulator model of " + std::to_string(kMinProbedBits) + " to " +
                 std::to_string(kMaxProbedBits) +
                 " fraction bits (truncate, floor or nearest_even; 2 to 128 products per step; "
                 "promotion every 16 to 512 products or none) reproduces the outputs: probe " +
                 probes.describe(closest_miss) + " gave " + float_text(results[closest_miss]) +
                 " where the closest model (" + describe_model(closest) + ") gives " +
                 float_text(closest_want);
    return est;
  }
  std::set<int> bits, blocks, promotions;
  std::set<AccRounding> roundings;
  for (const AccumulatorModel& m : matches) {
    bits.insert(m.fraction_bits);
    roundings.insert(m.rounding);
    blocks.insert(m.block);
    promotions.insert(m.promotion);
  }
  if (bits.size() > 1) {
    est.reason = "the probes cannot tell the fraction bits apart: " +
                 list(std::vector<int>(bits.begin(), bits.end())) + " all reproduce them";
    return est;
  }
  if (roundings.size() > 1) {
    std::string names;
    for (AccRounding r : roundings) names += (names.empty() ? "" : " or ") + std::string(name(r));
    est.reason = "the probes cannot tell the rounding apart: " + names + " both reproduce them";
    return est;
  }
  est.refused = false;
  est.model = matches.front();
  est.fraction_bits = *bits.begin();
  est.at_least = est.fraction_bits >= kMaxProbedBits;
  est.rounding = *roundings.begin();
  est.blocks.assign(blocks.begin(), blocks.end());
  est.promotions.assign(promotions.begin(), promotions.end());
  if (blocks.size() == 1) est.block = *blocks.begin();
  if (promotions.size() == 1) est.promotion = *promotions.begin();
  return est;
}

}  // namespace tcbench::numerics
