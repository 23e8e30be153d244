// The pad copy behind "run N = 33 as 40": a column-major matrix copied into a larger,
// zero-filled buffer whose leading dimension is a multiple of 16 bytes, so a GEMM can use the
// aligned path. Element functions are __host__ __device__: the kernel (kernels/pad_copy.cu) is
// a loop around pad_element(), and the host tests check the same code.
//
// Elements are copied as raw bits (uint8/16/32 for 1/2/4-byte types), so one kernel serves
// fp8, int8, fp16, bf16 and fp32/tf32; all-zero bits are +0 in every one of those formats.
#pragma once

#include "tcbench/numerics/host_device.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace tcbench::numerics {

struct PadCopyShape {
  std::int64_t rows = 0, cols = 0, ld_src = 0;          // source: rows x cols, ld_src >= rows
  std::int64_t rows_pad = 0, cols_pad = 0, ld_dst = 0;  // destination: rows_pad x cols_pad
};

// Where destination element (i, j) comes from in the source, or -1 where it is padding.
TCB_HD inline std::int64_t pad_source_index(const PadCopyShape& s, std::int64_t i, std::int64_t j) {
  return (i < s.rows && j < s.cols) ? i + j * s.ld_src : -1;
}

// Destination element (i, j): the source element, or zero bits in the padding. Rows between
// rows_pad and ld_dst are padding too (the kernel writes whole 16-byte chunks).
template <typename Bits>
TCB_HD inline Bits pad_element(const Bits* src, const PadCopyShape& s, std::int64_t i,
                               std::int64_t j) {
  const std::int64_t from = pad_source_index(s, i, j);
  return from < 0 ? Bits{0} : src[from];
}

// A sentence naming the values if the copy cannot run as the kernel does it: positive sizes,
// ld_src >= rows, a destination no smaller than the source, ld_dst >= rows_pad, element size
// 1, 2 or 4 bytes, and ld_dst * element_bytes a multiple of 16 (the point of padding, and what
// lets each thread store one 16-byte vector). nullopt if valid.
std::optional<std::string> pad_copy_invalid(const PadCopyShape& s, int element_bytes);

// Bytes the copy moves: the source read once, the whole destination (ld_dst x cols_pad) written.
double pad_copy_bytes(const PadCopyShape& s, int element_bytes);

// The host reference: fills dst[0 .. ld_dst * cols_pad) with pad_element().
template <typename Bits>
void pad_copy_host(const Bits* src, const PadCopyShape& s, Bits* dst) {
  for (std::int64_t j = 0; j < s.cols_pad; ++j)
    for (std::int64_t i = 0; i < s.ld_dst; ++i) dst[i + j * s.ld_dst] = pad_element(src, s, i, j);
}

}  // namespace tcbench::numerics
