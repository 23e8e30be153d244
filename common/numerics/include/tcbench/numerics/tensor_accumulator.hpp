// How a tensor-core instruction adds into its accumulator, as published measurements model it:
// the one home of that model, for the exact checks of the tensor-peak kernels, the FP8
// accumulator study (its emulator, host and device) and the accumulator estimator
// (accumulator_probes.hpp).
//
// The model (Fasi, Higham, Mikaitis and Pranesh, "Numerical behavior of NVIDIA tensor cores",
// PeerJ Computer Science 7:e330, 2021, for V100/T4/A100; Khattak and Mikaitis, "Accurate models
// of NVIDIA tensor cores", arXiv 2512.07004, for A100/H100/B200; DeepSeek-V3 technical report,
// arXiv 2412.19437, sections 3.3.2 and 3.5.2, for H800's FP8): one step adds the running sum and
// `block` products at once. Every addend is aligned to the largest exponent among them and the
// bits below `fraction_bits` under that exponent are dropped; the aligned addends are summed
// exactly, and the sum goes back to min(fraction_bits, 23) fraction bits under its own leading
// bit (the accumulator is FP32 or narrower). So a small addend next to a large accumulator is
// dropped, not rounded: once |acc| >= 2^(F + 1), a product of magnitude 1 vanishes ("swamping").
//
// Published widths (fraction bits F; none measured by tcbench unless a result file says so):
//   FP16 accumulate (mma.sync .f16)       10: the FP16 format itself
//   FP32 accumulate, f16/bf16/tf32 inputs 23: FP32 (Fasi et al.; extra alignment bits only help)
//   FP32 accumulate, e4m3 inputs, Ada and 13: "1 sign bit, 8 exponent bits, and 13 mantissa
//     Hopper mma.sync                        bits", the rest truncated (SageAttention2, arXiv
//                                            2411.10958, as quoted in thu-ml/SageAttention#287)
//   FP32 accumulate, e4m3, Hopper wgmma   13: Khattak and Mikaitis (e8m13); DeepSeek-V3 says
//                                         "around 14 bits" on H800, 32 products aligned together
//   tcgen05.mma .kind::f8f6f4 (B200)      25: a user's bit detection, deepseek-ai/DeepGEMM#176
//   s32 accumulate                        exact two's-complement integer addition
//
// Promotion (DeepSeek-V3 section 3.3.2, and DeepGEMM): every N_C products the partial sum is
// added to an FP32 register on the CUDA cores and the tensor-core accumulator starts again at 0.
#pragma once

#include "tcbench/numerics/enum_names.hpp"
#include "tcbench/numerics/host_device.hpp"

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tcbench::numerics {

// How bits below the kept ones are dropped. truncate: toward zero, on the magnitude, when the
// addends are aligned and when the sum is normalized (Fasi et al.). floor: toward minus infinity
// in both places, what a two's-complement datapath's "sign-fill right shifting" (DeepSeek-V3,
// section 3.5.2) does to negative values. nearest_even: aligned addends truncated toward zero,
// the sum rounded to nearest, ties to even.
enum class AccRounding : std::uint8_t { truncate, floor, nearest_even };
inline constexpr EnumName<AccRounding> kAccRoundingNames[] = {
    {AccRounding::truncate, "truncate"},
    {AccRounding::floor, "floor"},
    {AccRounding::nearest_even, "nearest_even"}};
static_assert(names_every_enumerator(kAccRoundingNames, AccRounding::nearest_even));
constexpr std::string_view name(AccRounding r) {
  return name_in(kAccRoundingNames, r);
}
inline constexpr AccRounding kAccRoundings[] = {AccRounding::truncate, AccRounding::floor,
                                                AccRounding::nearest_even};

// The FP32 accumulator's fraction bits: a step's sum never keeps more.
inline constexpr int kFp32FractionBits = 23;

struct AccumulatorModel {
  int fraction_bits = kFp32FractionBits;  // F: kept under the leading bit of a step's largest
  AccRounding rounding = AccRounding::truncate;
  int block = 32;     // products per step (added with the running sum)
  int promotion = 0;  // every `promotion` products (a multiple of block) the running sum is
                      // added to an FP32 register and restarts at 0; 0: never
};

// Why a model cannot be emulated (fraction bits outside [0, 40], a block below 1, a promotion
// interval that is not a multiple of the block), or nullopt.
std::optional<std::string> why_invalid(const AccumulatorModel& m);

namespace detail {
// The exponent of the leading bit of x (finite, nonzero): 2^e <= |x| < 2^(e + 1).
TCB_HD inline int leading_exponent(double x) {
  int e = 0;
  frexp(x, &e);
  return e - 1;
}
// x to a multiple of `quantum` (a power of two): exact in double for the magnitudes used here.
TCB_HD inline double to_multiple(double x, double quantum, AccRounding r) {
  const double q = x / quantum;
  switch (r) {
    case AccRounding::floor:
      return ::floor(q) * quantum;
    case AccRounding::nearest_even:
      return rint(q) * quantum;  // the default rounding mode: to nearest, ties to even
    case AccRounding::truncate:
      break;
  }
  return trunc(q) * quantum;
}
}  // namespace detail

// x rounded with `r` to `bits` fraction bits under its own leading bit (0 stays 0).
TCB_HD inline double round_to_fraction_bits(double x, int bits, AccRounding r) {
  if (x == 0) return 0;
  return detail::to_multiple(x, ldexp(1.0, detail::leading_exponent(x) - bits), r);
}

// One step: `acc` plus products product(begin) .. product(end - 1) (each exact in double), as the
// model adds them. Exact in double while fraction_bits + log2(end - begin + 1) + 1 <= 53.
template <class Product>
TCB_HD double accumulate_step(double acc, Product&& product, int begin, int end, int fraction_bits,
                              AccRounding r) {
  double largest = fabs(acc);
  for (int i = begin; i < end; ++i) largest = fmax(largest, fabs(product(i)));
  if (largest == 0) return 0;
  const double quantum = ldexp(1.0, detail::leading_exponent(largest) - fraction_bits);
  // Alignment drops toward zero, except in a two's-complement (floor) datapath.
  const AccRounding align = r == AccRounding::floor ? AccRounding::floor : AccRounding::truncate;
  double sum = detail::to_multiple(acc, quantum, align);
  for (int i = begin; i < end; ++i) sum += detail::to_multiple(product(i), quantum, align);
  const int kept = fraction_bits < kFp32FractionBits ? fraction_bits : kFp32FractionBits;
  return round_to_fraction_bits(sum, kept, r);
}

// The state of one accumulator along K: the tensor-core running sum, the FP32 register
// promotion adds it to, and how many products went in.
struct AccumulatorState {
  double acc = 0;
  float total = 0;
  std::int64_t products = 0;
};

// Adds the next `count` products (product(0) .. product(count - 1)) in the model's steps, which
// start at multiples of `block` counted from the first product ever added.
template <class Product>
TCB_HD void accumulate(AccumulatorState& s, const AccumulatorModel& m, Product&& product,
                       int count) {
  int i = 0;
  while (i < count) {
    const auto in_step = static_cast<int>(s.products % m.block);
    const int end = i + m.block - in_step < count ? i + m.block - in_step : count;
    s.acc = accumulate_step(s.acc, product, i, end, m.fraction_bits, m.rounding);
    s.products += end - i;
    i = end;
    if (m.promotion > 0 && s.products % m.promotion == 0) {
      s.total = s.total + static_cast<float>(s.acc);  // an FP32 add, rounded to nearest
      s.acc = 0;
    }
  }
}

// What the path writes after the products so far: the running sum, or with promotion the FP32
// register plus what the accumulator holds since the last promotion.
TCB_HD inline float accumulated_value(const AccumulatorState& s, const AccumulatorModel& m) {
  if (m.promotion > 0) return s.total + static_cast<float>(s.acc);
  return static_cast<float>(s.acc);
}

// The dot product of `count` products under model m, from a zero accumulator.
template <class Product>
TCB_HD float emulate_dot(const AccumulatorModel& m, Product&& product, int count) {
  AccumulatorState s;
  accumulate(s, m, product, count);
  return accumulated_value(s, m);
}

// The model's sum of `addends` (the accumulator and one instruction's products) in one step,
// truncated, with `fraction_bits` fraction bits (the result keeps at most 23). Exact when every
// addend and the result are integers of magnitude below 2^(fraction_bits + 1). Host code:
// throws std::invalid_argument for fraction_bits outside [0, 40].
double aligned_truncated_sum(std::span<const double> addends, int fraction_bits);

// The largest magnitude an exact check lets an accumulator reach under a model with
// `fraction_bits` fraction bits: 2^fraction_bits, one bit below where the model starts dropping
// +-1 products (2^(fraction_bits + 1)), because the measured widths are "around" a value.
double exact_check_limit(int fraction_bits);

}  // namespace tcbench::numerics
