// How many bits a tensor-core path keeps in its accumulator, found from outputs: dot products
// built so that their exact value needs a known number of bits, run through the path, and the
// one accumulator model (tensor_accumulator.hpp) that reproduces every output bit for bit.
//
// Each probe is one dot product of `length` products a[i] * b[i], every a and b a power of two
// exact in the input format (normal values only), so every product is exact. A large product
// L = 2^s and small ones u(t) = 2^(s - t):
//   single_small    L, then u(t): u(t) survives when the path keeps t or more fraction bits
//   many_small      L, then 2^j copies of u(23 + j): together one FP32 ulp of L, which shows
//                   in an FP32 output only when each copy survived (23 + j bits kept)
//   negative_small  L, then -u(t): toward zero drops it, a floor (two's complement) takes 2^-F L
//   negative_large  -L, then u(t), t > 23: the negative sum's rounding to FP32 when u(t) survives
//   above_half      L, then one product u(24) + u(t), t > 24: just above half an FP32 ulp of L
//                   if bit u(t) survived alignment, so round-to-nearest rounds up only then
//   odd_small       L, then 3 products of 11 u(t) / 8 (t > 23): their sum crosses an FP32 ulp
//                   of L only if each kept its lowest bit u(t), so a truncating or floor
//                   rounding of every step's sum shows t <= F even for steps of 4 products
//   carry           u(w), u(w - 1), L, L: 2L + 1.5 ulp when F = w; truncation keeps 1 ulp,
//                   round-to-nearest-even 2
//   tie             u(w), L, L: 2L + half an ulp; both modes keep 2L (round half away would not)
//   before_large    n small products, then L at position `position`: the small ones survive as
//                   a sum when they were added before L joined (another step or promotion)
//   after_large     L, then n small products from `position` on: they survive only when the
//                   running sum was promoted to FP32 before them (a fresh accumulator)
// The last two, swept over the position in K, find the products per step and the promotion
// interval. Inspired by the published bit detections (SageAttention2, arXiv 2411.10958: a
// zero product beside an accumulator of known bits; deepseek-ai/DeepGEMM#176: many small
// products summed); nothing here copies their code.
//
// The estimator tries every model of the family (fraction bits 4 to 27, three roundings, steps
// of 2 to 128 products, promotion every 16 to 512 products or never) and keeps those that
// reproduce every output. It reports what they agree on and refuses what they do not: a
// result it cannot explain, or fraction bits or rounding the outputs cannot tell apart.
#pragma once

#include "tcbench/numerics/element.hpp"
#include "tcbench/numerics/tensor_accumulator.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tcbench::numerics {

enum class ProbeKind : std::uint8_t {
  single_small,
  many_small,
  negative_small,
  negative_large,
  above_half,
  odd_small,
  carry,
  tie,
  before_large,
  after_large,
};
inline constexpr EnumName<ProbeKind> kProbeKindNames[] = {
    {ProbeKind::single_small, "single_small"},
    {ProbeKind::many_small, "many_small"},
    {ProbeKind::negative_small, "negative_small"},
    {ProbeKind::negative_large, "negative_large"},
    {ProbeKind::above_half, "above_half"},
    {ProbeKind::odd_small, "odd_small"},
    {ProbeKind::carry, "carry"},
    {ProbeKind::tie, "tie"},
    {ProbeKind::before_large, "before_large"},
    {ProbeKind::after_large, "after_large"}};
static_assert(names_every_enumerator(kProbeKindNames, ProbeKind::after_large));
constexpr std::string_view name(ProbeKind k) {
  return name_in(kProbeKindNames, k);
}

struct AccumulatorProbe {
  ProbeKind kind;
  int t = 0;         // the small products are 2^-t of L (many_small: 23 + j)
  int count = 1;     // how many small products
  int position = 0;  // before_large: L's position; after_large: the first small product's
  int used = 0;      // products up to the last nonzero one (the rest are zeros)
};

// The fewest and most fraction bits the probes tell apart: a path that keeps kMaxProbedBits or
// more reads "at least kMaxProbedBits" (many_small stops at 16 copies, one step of 17 products).
inline constexpr int kMinProbedBits = 4;
inline constexpr int kMaxProbedBits = 27;
// Probes are this long unless asked otherwise: room for after_large at position 512.
inline constexpr int kProbeLength = 1024;

struct AccumulatorProbes {
  Element input = Element::e4m3;  // every a and b value is exact in it
  int length = kProbeLength;      // products per probe
  int large_exponent = 0;         // s: L = 2^s
  std::vector<AccumulatorProbe> probes;
  std::vector<float> a, b;  // probes.size() x length, probe-major
  double product(std::size_t probe, int i) const {
    const std::size_t at = probe * static_cast<std::size_t>(length) + static_cast<std::size_t>(i);
    return static_cast<double>(a[at]) * static_cast<double>(b[at]);
  }
  // "after_large (L at 0, 8 x 2^-26 L from 128)"
  std::string describe(std::size_t probe) const;
};

// The probes for a path whose inputs are `input` (e4m3, e5m2, fp16 or bf16), each `length`
// products long (a multiple of 32, at least 1024). Throws std::invalid_argument otherwise.
AccumulatorProbes make_accumulator_probes(Element input, int length = kProbeLength);

// Values of `input` (e4m3, e5m2, fp16 or bf16) as the bytes a kernel reads (one or two per
// element, little-endian). Throws std::invalid_argument for a value the format does not hold
// exactly: probe and study operands are exact by construction.
std::vector<std::uint8_t> exact_bytes(Element input, std::span<const float> values);

// The model's output for every probe.
std::vector<float> emulate_probes(const AccumulatorProbes& probes, const AccumulatorModel& m);

struct AccumulatorEstimate {
  bool refused = true;
  int length = kProbeLength;  // the probes' K (promotion is looked for within it)
  std::string reason;         // refused: why, in one sentence
  int fraction_bits = 0;
  bool at_least = false;  // the path keeps kMaxProbedBits or more: the probes cannot tell more
  AccRounding rounding = AccRounding::truncate;
  std::optional<int> block;      // products per step; nullopt: the probes cannot tell
  std::optional<int> promotion;  // products per FP32 promotion, 0: none within the probes' K;
                                 // nullopt: cannot tell
  std::vector<int> blocks, promotions;  // every value some matching model has
  // A model that reproduces every probe (for emulating the path).
  AccumulatorModel model;
  // "13 fraction bits, truncate, 32 products per step, no promotion within K = 1024".
  std::string describe() const;
};

// Which models of the family reproduce `results` (results[i]: the path's FP32 output for probe
// i, bit for bit). Throws std::invalid_argument when results and probes differ in number.
AccumulatorEstimate estimate_accumulator(const AccumulatorProbes& probes,
                                         std::span<const float> results);

}  // namespace tcbench::numerics
