// The device fill of tcbench's one random source (numerics/random.hpp): fill_random writes
// exactly the values fill_random_host computes, element i = random_value(d, seed, i). Benchmarks
// never time on zeros.
#pragma once

#include "tcbench/numerics/random.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tcbench {

using numerics::convert_sample;
using numerics::Distribution;
using numerics::fill_random_host;
using numerics::random_value;

// Fills device memory; asynchronous on `stream`. Instantiated for float, double, __half,
// __nv_bfloat16, int8_t, int32_t, __nv_fp8_e4m3 and __nv_fp8_e5m2.
template <typename T>
void fill_random(T* device_ptr, std::size_t count, const Distribution& d, std::uint64_t seed,
                 cudaStream_t stream);

}  // namespace tcbench
