#include "tcbench/scale_value.hpp"

#include "tcbench/error.hpp"

#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

namespace tcbench {

ScaleValue to_scale_value(double v, const GemmSpec& spec, const char* which) {
  const cudaDataType_t type = spec.scale_type;
  ScaleValue out;
  switch (type) {
    case CUDA_R_32F: {
      const float f = static_cast<float>(v);
      std::memcpy(out.bytes, &f, sizeof f);
      break;
    }
    case CUDA_R_64F:
      std::memcpy(out.bytes, &v, sizeof v);
      break;
    case CUDA_R_32I: {
      if (!(std::nearbyint(v) == v && v >= std::numeric_limits<std::int32_t>::min() &&
            v <= std::numeric_limits<std::int32_t>::max()))
        throw InvalidArgument(std::string(which) + "=" + std::to_string(v) +
                              " is not an int32 value, which a CUDA_R_32I scale type needs [" +
                              spec.describe() + "]");
      const auto i = static_cast<std::int32_t>(v);
      std::memcpy(out.bytes, &i, sizeof i);
      break;
    }
    case CUDA_R_16F: {
      const __half h = __float2half(static_cast<float>(v));
      std::memcpy(out.bytes, &h, sizeof h);
      break;
    }
    default:
      throw InvalidArgument("scale type " + data_type_name(type) + " is not supported by run() [" +
                            spec.describe() + "]");
  }
  return out;
}

}  // namespace tcbench
