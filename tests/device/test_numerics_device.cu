// The numerics element-wise functions run on the GPU must give bit-for-bit what the host tests
// checked: the same header code, compiled by nvcc for the device (where sm_89+ uses the
// hardware cvt.satfinite for FP8 and the host uses CUDA's software conversion). Skips without a
// GPU.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "tcbench/numerics/calibration.hpp"
#include "tcbench/numerics/formats.hpp"
#include "tcbench/numerics/fp8_scaling.hpp"
#include "tcbench/numerics/loss_scaling.hpp"
#include "tcbench/numerics/quantization.hpp"
#include "tcbench/numerics/tensor_accumulator.hpp"

namespace tn = tcbench::numerics;

namespace {

constexpr int kOut = 16;  // results per input

// Every element-wise function, one slot each; floats are compared by bits.
TCB_HD void evaluate(float x, float* out) {
  const float scale = 3.0f;
  out[0] =
      tn::fp8_to_float(tn::scaled_cast_fp8(x, scale, tn::Fp8Format::e4m3), tn::Fp8Format::e4m3);
  out[1] =
      tn::fp8_to_float(tn::scaled_cast_fp8(x, scale, tn::Fp8Format::e5m2), tn::Fp8Format::e5m2);
  out[2] = tn::fp8_to_float(tn::scaled_cast_fp8(x, 1.0f, tn::Fp8Format::e4m3, tn::Saturation::none),
                            tn::Fp8Format::e4m3);
  out[3] = tn::fp8_to_float(tn::scaled_cast_fp8(x, 1.0f, tn::Fp8Format::e5m2, tn::Saturation::none),
                            tn::Fp8Format::e5m2);
  out[4] = tn::round_trip(x, tn::Format::fp16);
  out[5] = tn::round_trip(x, tn::Format::bf16);
  out[6] = static_cast<float>(static_cast<int>(tn::classify(x, tn::Format::fp16)) +
                              8 * static_cast<int>(tn::classify(x, tn::Format::e4m3)));
  out[7] = static_cast<float>(tn::quantize_int8(x, 0.01f));
  out[8] = tn::fake_quant_int8(x, 1.27f);
  out[9] = tn::ste_grad_mask(x, 1.27f);
  bool found = false;
  out[10] = tn::check_and_unscale(x, 1.0f / 65536.0f, found);
  out[11] = found ? 1.0f : 0.0f;
  out[12] = tn::delayed_scale_from_amax(x, 448.0f, 1, 5.0f);
  out[13] = tn::current_scale_from_amax(x, 57344.0f, 0.0f, true);
  out[14] = static_cast<float>(tn::abs_histogram_bin(x, 4.0f, tn::kCalibBins));
  out[15] = tn::amax_step(0.5f, x);
}

__global__ void evaluate_kernel(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) evaluate(in[i], out + static_cast<std::size_t>(i) * kOut);
}

TEST(NumericsDevice, ElementwiseFunctionsMatchHost) {
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0)
    GTEST_SKIP() << "no CUDA device: "
                 << (err != cudaSuccess ? cudaGetErrorString(err) : "device count is 0");

  std::vector<float> in;
  std::mt19937 rng(99);
  std::uniform_int_distribution<std::uint32_t> bits;
  std::uniform_real_distribution<float> small(-600.0f, 600.0f);
  for (int i = 0; i < (1 << 18); ++i) {
    const std::uint32_t b = bits(rng);
    float f;
    std::memcpy(&f, &b, sizeof f);
    in.push_back(f);
    in.push_back(small(rng));
  }
  for (float s : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 448.0f, 464.0f, 57344.0f, 61440.0f,
                  65504.0f, 65520.0f, 0x1p-25f, 0x1p-10f, 0x1p-17f, 1.27f, -1.27f, 0.005f})
    in.push_back(s);
  const int n = static_cast<int>(in.size());

  float *d_in = nullptr, *d_out = nullptr;
  ASSERT_EQ(cudaMalloc(&d_in, in.size() * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_out, in.size() * kOut * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_in, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice),
            cudaSuccess);
  evaluate_kernel<<<(n + 255) / 256, 256>>>(d_in, d_out, n);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<float> dev(in.size() * kOut);
  ASSERT_EQ(cudaMemcpy(dev.data(), d_out, dev.size() * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);
  cudaFree(d_in);
  cudaFree(d_out);

  std::size_t mismatches = 0;
  float host[kOut];
  for (int i = 0; i < n; ++i) {
    evaluate(in[static_cast<std::size_t>(i)], host);
    for (int k = 0; k < kOut; ++k) {
      const float d = dev[static_cast<std::size_t>(i) * kOut + k];
      const bool both_nan = host[k] != host[k] && d != d;
      if (!both_nan && std::memcmp(&d, &host[k], sizeof d) != 0 && ++mismatches <= 10)
        ADD_FAILURE() << "slot " << k << " input " << std::hexfloat
                      << in[static_cast<std::size_t>(i)] << ": host " << host[k] << " device " << d;
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

// The accumulator emulator (tensor_accumulator.hpp) on the device gives what it gives on the
// host: every rounding, with and without promotion, on E4M3 dot products of 256 products.
constexpr int kDot = 256;
__host__ __device__ tn::AccumulatorModel emulator_model(int i) {
  const tn::AccRounding r[] = {tn::AccRounding::truncate, tn::AccRounding::floor,
                               tn::AccRounding::nearest_even};
  return {i % 2 == 0 ? 13 : 25, r[i % 3], 32, i % 4 == 3 ? 128 : 0};
}
TCB_HD float emulate_row(const float* a, const float* b, int i) {
  return tn::emulate_dot(
      emulator_model(i), [=](int l) { return static_cast<double>(a[l]) * b[l]; }, kDot);
}
__global__ void emulate_kernel(const float* a, const float* b, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = emulate_row(a + static_cast<std::size_t>(i) * kDot,
                         b + static_cast<std::size_t>(i) * kDot, i);
}

TEST(NumericsDevice, AccumulatorEmulatorMatchesHost) {
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0)
    GTEST_SKIP() << "no CUDA device: "
                 << (err != cudaSuccess ? cudaGetErrorString(err) : "device count is 0");
  constexpr int n = 4096;
  std::vector<float> a(static_cast<std::size_t>(n) * kDot), b(a.size());
  std::mt19937 rng(46);
  std::uniform_real_distribution<float> u(-448.0f, 448.0f);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = tn::round_trip(u(rng), tn::Format::e4m3);
    b[i] = tn::round_trip(u(rng) / 64, tn::Format::e4m3);
  }
  float *d_a = nullptr, *d_b = nullptr, *d_out = nullptr;
  ASSERT_EQ(cudaMalloc(&d_a, a.size() * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_b, b.size() * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_out, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_a, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_b, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice),
            cudaSuccess);
  emulate_kernel<<<n / 128, 128>>>(d_a, d_b, d_out, n);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<float> dev(n);
  ASSERT_EQ(cudaMemcpy(dev.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(d_a);
  cudaFree(d_b);
  cudaFree(d_out);
  int mismatches = 0;
  for (int i = 0; i < n; ++i) {
    const float host = emulate_row(a.data() + static_cast<std::size_t>(i) * kDot,
                                   b.data() + static_cast<std::size_t>(i) * kDot, i);
    if (std::memcmp(&host, &dev[static_cast<std::size_t>(i)], sizeof host) != 0 &&
        ++mismatches <= 5)
      ADD_FAILURE() << "row " << i << ": host " << host << ", device " << dev[i];
  }
  EXPECT_EQ(mismatches, 0);
}

}  // namespace
