// What padding one GEMM dimension to a multiple costs, and when the model says it pays.
//
// Running N = 33 as 40 (a multiple of 8, 16 bytes of FP16) or 48 (16) makes every operand meet
// cuBLAS's Tensor Core alignment rule, at the price of (a) the FLOPs on the zero rows/columns
// and (b) a copy of each input operand that holds the dimension into a zero-filled, padded
// buffer. Output columns/rows beyond the original are simply not read back: D is column-major,
// so its first N columns are the answer in place (for M or K padding the consumer reads D with
// the padded leading dimension).
//
// Padding wins when   t_gemm(padded) + t_copy  <  t_gemm(unpadded); the GEMM time model
// (gemm_time_model.hpp) prices both GEMMs, docs/concepts/alignment.md tabulates it.
#pragma once

#include "tcbench/numerics/element.hpp"
#include "tcbench/numerics/enum_names.hpp"

#include <cstdint>

namespace tcbench::numerics {

enum class GemmDim : std::uint8_t { m, n, k };
inline constexpr EnumName<GemmDim> kGemmDimNames[] = {
    {GemmDim::m, "M"}, {GemmDim::n, "N"}, {GemmDim::k, "K"}};
static_assert(names_every_enumerator(kGemmDimNames, GemmDim::k));
constexpr std::string_view name(GemmDim d) {
  return name_in(kGemmDimNames, d);
}

// The smallest multiple of `multiple` that is >= value (value, multiple > 0).
std::int64_t round_up(std::int64_t value, std::int64_t multiple);

// One GEMM: C[m, n] = A[m, k] B[k, n], each of the batch's matrices in `type`.
struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  Element type = Element::fp16;
  std::int64_t batch = 1;
};

struct PaddingCost {
  GemmShape original, padded;
  double useful_flops = 0;         // 2*M*N*K of the original problem
  double padded_flops = 0;         // 2*M*N*K of the padded problem
  double extra_flops = 0;          // padded - useful
  double extra_flop_fraction = 0;  // extra / useful
  // The pad copy: every input operand that holds the dimension (N: B; M: A; K: A and B) is
  // read once at its original size and written once at its padded size.
  double copy_read_bytes = 0;
  double copy_write_bytes = 0;
  double copy_bytes = 0;
};
// Throws std::invalid_argument unless padded_extent >= the dimension's extent.
PaddingCost padding_cost(const GemmShape& shape, GemmDim dim, std::int64_t padded_extent);

}  // namespace tcbench::numerics
