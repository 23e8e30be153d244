// alpha and beta as the bytes a GEMM library reads: the value converted to the scale type of
// the GEMM (float, double, int32 or half: the precision table's scale column). cuBLASLt's and
// cuBLAS's run() both convert through here, so the two APIs are handed the same scalars.
#pragma once

#include "tcbench/gemm_spec.hpp"

#include <library_types.h>

namespace tcbench {

struct ScaleValue {
  alignas(8) unsigned char bytes[8] = {};  // 8 bytes covers every scale type tcbench uses
  const void* get() const { return bytes; }
};

// `v` in spec.scale_type. Throws InvalidArgument, naming `which` ("alpha") and the spec, for a
// scale type tcbench does not run and for a value CUDA_R_32I cannot hold exactly. The spec is
// only described when throwing: run() sits inside timed loops.
ScaleValue to_scale_value(double v, const GemmSpec& spec, const char* which);

}  // namespace tcbench
