// bench_fp8's scaling kernels (kernels/fp8_scaling.cu) as kernel cases, one factory per kernel
// (llm.c dev/cuda's one function per kernel version): the bytes one run moves, the run and its
// check against the host, side by side, and the {name, make} table the topic registers:
//   recipe_amax               amax of the input (TE's amax reduction)
//   recipe_cast               the scaled, saturating cast to E4M3
//   recipe_cast_record_amax   the delayed recipe's pass: cast with last step's scale, record amax
#pragma once

#include "tcbench/bench/harness.hpp"
#include "tcbench/kernels/fp8_scaling.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tcbench::bench {

inline constexpr float kPlantedAmax = 1.5f;  // above every uniform(-1, 1) element, exact in BF16
inline constexpr std::size_t kCastSample = std::size_t{1} << 16;  // outputs checked at each end

// Uniform(-1, 1) data with kPlantedAmax in its last element: a pass that drops the tail misses it.
template <typename In>
DeviceBuffer<In> recipe_input(const Env& env, std::size_t n, std::uint64_t seed) {
  DeviceBuffer<In> x(n);
  fill_random(x.get(), n, Distribution::uniform(-1.0f, 1.0f), seed, env.stream());
  const In planted = convert_sample<In>(kPlantedAmax);
  TCB_CUDA(cudaMemcpyAsync(x.get() + (n - 1), &planted, sizeof planted, cudaMemcpyHostToDevice,
                           env.stream()));
  return x;
}

inline std::optional<std::string> check_amax(const DeviceValue<unsigned>& bits, cudaStream_t s) {
  const float a = numerics::amax_from_bits(bits.get(s));
  if (a == kPlantedAmax) return std::nullopt;
  return "amax is " + std::to_string(a) + ", not the planted " + std::to_string(kPlantedAmax);
}

// What every case reads and writes: recipe_input, scaled by E4M3's max onto its range.
template <typename In>
struct RecipeBuffers {
  RecipeBuffers(const Env& env, std::size_t elements, std::uint64_t seed)
      : n(elements), x(recipe_input<In>(env, n, seed)), out(n) {
    state.scale.set(kScale, env.stream());
  }
  static constexpr float kScale = numerics::fp8_max(numerics::Fp8Format::e4m3);
  std::size_t n;
  DeviceBuffer<In> x;
  DeviceBuffer<__nv_fp8_storage_t> out;
  kernels::ScaleState state;
};

template <typename In>
KernelCase recipe_case(RecipeBuffers<In>& b, double out_bytes) {
  KernelCase k;
  k.bytes_moved = static_cast<double>(b.n) * (sizeof(In) + out_bytes);
  k.reset = [&b](cudaStream_t s) {
    TCB_CUDA(cudaMemsetAsync(b.out.get(), 0xFF, b.out.bytes(), s));
  };
  return k;
}
template <typename In>
std::optional<std::string> check_cast(RecipeBuffers<In>& b, cudaStream_t s) {
  return kernels::cast_mismatch(b.x.get(), b.out.get(), b.n, b.kScale, numerics::Fp8Format::e4m3,
                                kCastSample, s);
}

template <typename In>
KernelCase amax_case(RecipeBuffers<In>& b) {
  KernelCase k = recipe_case(b, 0.0);
  k.work = [&b](cudaStream_t s) {
    kernels::reset_amax(b.state.amax.ptr(), s);
    kernels::amax_reduce(b.x.get(), b.n, b.state.amax.ptr(), s);
  };
  k.check = [&b](cudaStream_t s) { return check_amax(b.state.amax, s); };
  return k;
}

template <typename In>
KernelCase cast_case(RecipeBuffers<In>& b) {
  KernelCase k = recipe_case(b, 1.0);
  k.work = [&b](cudaStream_t s) {
    kernels::scaled_cast(b.x.get(), b.n, b.state.scale.ptr(), numerics::Fp8Format::e4m3,
                         numerics::Saturation::satfinite, b.out.get(), s);
  };
  k.check = [&b](cudaStream_t s) { return check_cast(b, s); };
  return k;
}

template <typename In>
KernelCase cast_record_amax_case(RecipeBuffers<In>& b) {
  KernelCase k = recipe_case(b, 1.0);
  k.work = [&b](cudaStream_t s) {
    kernels::reset_amax(b.state.amax.ptr(), s);
    kernels::scaled_cast_record_amax(b.x.get(), b.n, b.state.scale.ptr(), numerics::Fp8Format::e4m3,
                                     b.out.get(), b.state.amax.ptr(), s);
  };
  k.check = [&b](cudaStream_t s) -> std::optional<std::string> {
    if (auto wrong = check_amax(b.state.amax, s)) return wrong;
    return check_cast(b, s);
  };
  return k;
}

template <typename In>
struct RecipeKernel {
  std::string_view name;
  KernelCase (*make)(RecipeBuffers<In>&);
};
template <typename In>
inline constexpr RecipeKernel<In> kRecipeKernels[] = {
    {"recipe_amax", amax_case<In>},
    {"recipe_cast", cast_case<In>},
    {"recipe_cast_record_amax", cast_record_amax_case<In>}};

}  // namespace tcbench::bench
