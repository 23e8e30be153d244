// Copy a column-major matrix into a zero-padded buffer with a 16-byte-aligned leading dimension
// (the pad copy the alignment benchmark charges to "run 33 as 40"). See
// tcbench/numerics/pad_copy.hpp for the shape and the element function.
#pragma once

#include "tcbench/numerics/pad_copy.hpp"

#include <cuda_runtime_api.h>

namespace tcbench::kernels {

// dst must be 16-byte aligned and hold ld_dst * cols_pad elements; src holds ld_src * cols.
// Throws InvalidArgument with pad_copy_invalid()'s sentence. Asynchronous on `stream`.
void pad_copy(const numerics::PadCopyShape& shape, int element_bytes, const void* src, void* dst,
              cudaStream_t stream);

}  // namespace tcbench::kernels
