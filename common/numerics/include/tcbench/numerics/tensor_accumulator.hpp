// How a tensor-core instruction adds into its accumulator, as published measurements model it,
// and the range in which a sum of small integers stays exact under that model.
//
// The model (Fasi, Higham, Mikaitis and Pranesh, "Numerical behavior of NVIDIA tensor cores",
// PeerJ Computer Science 7:e330, 2021, for V100/T4/A100; Khattak and Mikaitis, "Accurate models
// of NVIDIA tensor cores", arXiv 2512.07004, for A100/H100/B200): one instruction adds the
// accumulator and its k products in one step. Every addend is aligned to the largest exponent
// among them and truncated (rounded toward zero) to the accumulator's fraction bits, the aligned
// addends are summed exactly, and the sum is truncated to the same number of fraction bits. So a
// small addend next to a large accumulator is dropped, not rounded: once |acc| >= 2^(F + 1), a
// product of magnitude 1 vanishes ("swamping").
//
// Fraction bits F of the accumulators tcbench checks exactly:
//   FP16 accumulate (mma.sync .f16)       10: the FP16 format itself
//   FP32 accumulate, f16/bf16/tf32 inputs 23: FP32 (Fasi et al.; extra alignment bits only help)
//   FP32 accumulate, e4m3 inputs, Hopper  13: the e8m13 accumulator of QGMMA measured by Khattak
//                                         and Mikaitis; the DeepSeek-V3 technical report
//                                         (arXiv 2412.19437, section 3.3.2) says "around 14 bits"
//   s32 accumulate                        exact two's-complement integer addition
#pragma once

#include <span>

namespace tcbench::numerics {

// The model's sum of `addends` (the accumulator and one instruction's products) with
// `fraction_bits` fraction bits. Exact when every addend and the result are integers of
// magnitude below 2^(fraction_bits + 1). fraction_bits in [0, 40] (the sum is formed in double).
double aligned_truncated_sum(std::span<const double> addends, int fraction_bits);

// The largest magnitude an exact check lets an accumulator reach under a model with
// `fraction_bits` fraction bits: 2^fraction_bits, one bit below where the model starts dropping
// +-1 products (2^(fraction_bits + 1)), because the measured widths are "around" a value.
double exact_check_limit(int fraction_bits);

}  // namespace tcbench::numerics
