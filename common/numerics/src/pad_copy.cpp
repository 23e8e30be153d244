#include "tcbench/numerics/pad_copy.hpp"

namespace tcbench::numerics {

namespace {
std::string describe(const PadCopyShape& s) {
  return std::to_string(s.rows) + "x" + std::to_string(s.cols) + " (ld " +
         std::to_string(s.ld_src) + ") -> " + std::to_string(s.rows_pad) + "x" +
         std::to_string(s.cols_pad) + " (ld " + std::to_string(s.ld_dst) + ")";
}
}  // namespace

std::optional<std::string> pad_copy_invalid(const PadCopyShape& s, int element_bytes) {
  const std::string shape = "pad copy " + describe(s) + ": ";
  if (element_bytes != 1 && element_bytes != 2 && element_bytes != 4)
    return shape + "elements must be 1, 2 or 4 bytes, got " + std::to_string(element_bytes);
  if (s.rows <= 0 || s.cols <= 0) return shape + "rows and columns must be positive";
  if (s.ld_src < s.rows) return shape + "the source leading dimension is smaller than its rows";
  if (s.rows_pad < s.rows || s.cols_pad < s.cols)
    return shape + "the padded matrix is smaller than the source";
  if (s.ld_dst < s.rows_pad)
    return shape + "the destination leading dimension is smaller than its rows";
  if (s.ld_dst * element_bytes % 16 != 0)
    return shape + "the destination leading dimension times " + std::to_string(element_bytes) +
           " bytes is not a multiple of 16";
  return std::nullopt;
}

double pad_copy_bytes(const PadCopyShape& s, int element_bytes) {
  return (static_cast<double>(s.rows) * static_cast<double>(s.cols) +
          static_cast<double>(s.ld_dst) * static_cast<double>(s.cols_pad)) *
         element_bytes;
}

}  // namespace tcbench::numerics
