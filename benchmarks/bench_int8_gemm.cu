// int8_gemm: INT8 inference on Tensor Cores after calibration and QAT (docs/concepts/
// int8-calibration.md). How much faster INT8 (IMMA, int32 accumulate, TN) runs than FP32, TF32,
// FP16 and BF16 on this GPU, on the layers of the MLP that the host study trains, calibrates and
// quantizes (tcbench/numerics/int8_study.hpp), and at what accuracy each INT8 variant gets there.
//
//   int8_gemm/cublaslt/<p>/m/n/k         cuBLASLt, p in fp32 (SIMT) tf32 fp16 bf16 int8 (-> int32)
//   int8_gemm/cublaslt_requant/int8/...  INT8 -> INT8 through a float alpha (the deployment GEMM)
//   int8_gemm/imma/int8/...              our WMMA (IMMA) kernel, int32 out
//   int8_gemm/mlp/<p>/tokens:N           the three layer GEMMs together; the int8 row carries the
//                                        host accuracy of every PTQ/QAT variant as counters
//   int8_gemm/<kernel>/int8/n:N          the quantization pipeline: gbps, pct_of_peak
//
// Layer GEMMs are D[out, tokens] = W[out, in] * X[tokens, in]^T: m = output features (the
// weights, K-contiguous, are the transposed A of "TN"), n = tokens, k = input features.
#include "tcbench/bench/harness.hpp"
#include "tcbench/kernels/gemm_imma.hpp"
#include "tcbench/kernels/int8_quant.hpp"
#include "tcbench/numerics/calibration.hpp"
#include "tcbench/numerics/formats.hpp"
#include "tcbench/numerics/int8_study.hpp"
#include "tcbench/numerics/quantization.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace tcbench::bench {
namespace {

namespace tn = tcbench::numerics;
namespace tk = tcbench::kernels;

constexpr const char* kTopic = "int8_gemm";
constexpr Precision kFloatPaths[] = {Precision::fp32, Precision::tf32, Precision::fp16,
                                     Precision::bf16};

struct Layer {
  std::int64_t out, in;
};

// The trained MLP's layers, from the study's own widths (64 -> 128 -> 128 -> 16).
std::vector<Layer> mlp_layers() {
  const std::vector<std::size_t> w = tn::Int8StudyOptions{}.widths;
  std::vector<Layer> layers;
  for (std::size_t i = 0; i + 1 < w.size(); ++i)
    layers.push_back({static_cast<std::int64_t>(w[i + 1]), static_cast<std::int64_t>(w[i])});
  return layers;
}

std::vector<std::int64_t> token_counts(const Env& env) {
  if (env.quick()) return {8192};
  return {32, 128, 512, 2048, 8192};
}

std::vector<std::int64_t> squares(const Env& env) {
  if (env.quick()) return {4096};
  return {1024, 4096, 8192};
}

// The host study runs once per process (a few seconds on the CPU), on first use.
const tn::Int8StudyResult& study() {
  static std::once_flag once;
  static tn::Int8StudyResult result;
  std::call_once(once, [] { result = tn::run_int8_study(); });
  return result;
}

void add_speedups(benchmark::State& state, const Env& env, std::int64_t m, std::int64_t n,
                  std::int64_t k, double seconds, Precision self) {
  for (Precision base : {Precision::fp32, Precision::fp16}) {
    if (base == self) continue;
    const double t = baseline_median_seconds(env, GemmCase::for_precision(base, m, n, k));
    state.counters[std::string("speedup_vs_") + std::string(name(base))] = t / seconds;
  }
}

void cublaslt(benchmark::State& state, const Env& env, Precision p, std::int64_t m, std::int64_t n,
              std::int64_t k) {
  const GemmResult r = run_cublaslt_gemm(state, env, GemmCase::for_precision(p, m, n, k));
  if (p != Precision::fp32) add_speedups(state, env, m, n, k, r.seconds.median, p);
}

// INT8 in, INT8 out: alpha = s_x * s_w / s_y requantizes the exact int32 sum in the epilogue.
// Here alpha maps about four standard deviations of a sum of k products of uniform integers in
// [-127, 127] (variance (127^2 / 3)^2 each) to 127, so few outputs saturate.
void cublaslt_requant(benchmark::State& state, const Env& env, std::int64_t m, std::int64_t n,
                      std::int64_t k) {
  GemmCase c = GemmCase::for_precision(Precision::int8, m, n, k);
  c.spec.c_type = c.spec.d_type = CUDA_R_8I;
  c.spec.scale_type = CUDA_R_32F;
  c.alpha = 127.0 / (4.0 * (127.0 * 127.0 / 3.0) * std::sqrt(static_cast<double>(k)));
  // Rounding to integers at an output spread of about 32 (127 / 4) leaves a relative RMS error
  // of 0.5 / sqrt(3) / 32 ~ 0.009 [derived]; the rare saturated outputs add little. 0.02 allows
  // for that and still fails a wrong alpha, layout or type by orders of magnitude.
  c.tolerance = 0.02;
  const GemmResult r = run_cublaslt_gemm(state, env, c);
  add_speedups(state, env, m, n, k, r.seconds.median, Precision::int8);
}

void own_imma(benchmark::State& state, const Env& env, std::int64_t m, std::int64_t n,
              std::int64_t k) {
  GemmCase c = GemmCase::for_precision(Precision::int8, m, n, k);
  const GemmProblem p = GemmProblem(c.spec.problem).resolve();
  if (auto why =
          tk::imma_unsupported_reason(env.device().spec.cc_major, env.device().spec.cc_minor, p))
    throw Skipped(*why);
  c.label = "WMMA int8->int32 (IMMA)";
  const GemmResult r = run_kernel_gemm(state, env, c, [](cudaStream_t s, const GemmOperands& o) {
    tk::gemm_imma(o.problem, o.a_as<std::int8_t>(), o.b_as<std::int8_t>(), o.d_as<std::int32_t>(),
                  s);
  });
  add_speedups(state, env, m, n, k, r.seconds.median, Precision::int8);
}

// The MLP's three layer GEMMs at one batch: the sum of their verified, L2-flushed cuBLASLt
// medians (each layer reads its inputs from DRAM, as a layer of a real network does).
void mlp(benchmark::State& state, const Env& env, Precision p, std::int64_t tokens) {
  auto total = [&](Precision q) {
    double s = 0.0;
    for (const Layer& l : mlp_layers())
      s += baseline_median_seconds(env, GemmCase::for_precision(q, l.out, tokens, l.in));
    return s;
  };
  const double seconds = total(p);
  for (auto _ : state) state.SetIterationTime(seconds);
  state.counters["speedup_vs_fp32"] = total(Precision::fp32) / seconds;
  state.counters["speedup_vs_fp16"] = total(Precision::fp16) / seconds;
  // Accuracy of what this path deploys, from the host evaluation of the same trained model.
  const tn::Int8StudyResult& r = study();
  if (p == Precision::int8) {
    for (const tn::Int8Variant& v : r.variants) {
      if (v.method != "ptq" && v.method != "qat") continue;
      state.counters["accuracy_" + v.name] = 100.0 * v.accuracy;
      state.counters["agreement_" + v.name] = 100.0 * v.agreement;
    }
  } else if (p == Precision::fp32 || p == Precision::fp16 || p == Precision::bf16) {
    const tn::Int8Variant& v = r.get(std::string(name(p)));
    state.counters["accuracy_" + v.name] = 100.0 * v.accuracy;
    state.counters["agreement_" + v.name] = 100.0 * v.agreement;
  }
  state.SetLabel("sum of the 3 layer GEMMs (cuBLASLt); accuracy from the host evaluation");
}

// --- The quantization pipeline -------------------------------------------------------------

enum class QuantKernel {
  abs_histogram,
  amax,
  quantize_per_tensor,
  quantize_per_channel,
  dequantize,
  dequantize_accumulators  // the IMMA GEMM's int32 result -> float, per-channel weight scales
};

const char* kernel_name(QuantKernel q) {
  switch (q) {
    case QuantKernel::abs_histogram:
      return "abs_histogram";
    case QuantKernel::amax:
      return "amax";
    case QuantKernel::quantize_per_tensor:
      return "quantize_per_tensor";
    case QuantKernel::quantize_per_channel:
      return "quantize_per_channel";
    case QuantKernel::dequantize:
      return "dequantize";
    case QuantKernel::dequantize_accumulators:
      return "dequantize_accumulators";
  }
  return "?";
}

// Verifies the kernel once against the host functions it wraps (bit for bit), then times it on
// activations with outliers. Bytes: every input read once and every output written once.
void quant_kernel(benchmark::State& state, const Env& env, QuantKernel which, std::size_t n) {
  const std::size_t cols = 4096, rows = n / cols;  // per-channel: [rows, 4096] weights
  require_memory(env, n * (sizeof(float) * 3 + 1), "the quantization buffers");
  DeviceBuffer<float> x(n), y(n), scales(rows);
  DeviceBuffer<std::int8_t> q(n);
  DeviceBuffer<std::int32_t> acc(which == QuantKernel::dequantize_accumulators ? n : 0);
  DeviceBuffer<tn::HistCount> counts(tn::kCalibBins), non_finite(1);
  DeviceBuffer<unsigned> bits(1);
  const cudaStream_t s = env.stream();
  fill_random(x.get(), n, Distribution::activations_with_outliers(), 0x1a7, s);
  const std::vector<float> host_x = x.download(s);
  std::vector<std::int32_t> host_acc;
  if (which == QuantKernel::dequantize_accumulators) {
    fill_random(acc.get(), n, Distribution::integers(-2000000, 2000000), 0x1a8, s);
    host_acc = acc.download(s);
  }
  const float range = 64.0f, scale = 4.0f / 127.0f;
  std::vector<float> host_scales(rows);
  for (std::size_t r = 0; r < rows; ++r)
    host_scales[r] = 0.02f + 0.001f * static_cast<float>(r % 64);
  scales.upload(host_scales, s);

  // The histogram and amax accumulate into their outputs: the timed runs skip the reset (the
  // counts only grow, far from overflowing 64 bits), so only the kernel is timed.
  auto run = [&](cudaStream_t st) {
    switch (which) {
      case QuantKernel::abs_histogram:
        tk::abs_histogram(x.get(), n, range, tn::kCalibBins, counts.get(), non_finite.get(),
                          bits.get(), st);
        break;
      case QuantKernel::amax:
        tk::amax(x.get(), n, bits.get(), st);
        break;
      case QuantKernel::quantize_per_tensor:
        tk::quantize_per_tensor(x.get(), n, scale, q.get(), st);
        break;
      case QuantKernel::quantize_per_channel:
        tk::quantize_per_channel(x.get(), rows, cols, scales.get(), q.get(), st);
        break;
      case QuantKernel::dequantize:
        tk::dequantize(q.get(), n, scale, y.get(), st);
        break;
      case QuantKernel::dequantize_accumulators:  // [rows, cols] column-major, rows = channels
        tk::dequantize_accumulators(
            acc.get(), static_cast<std::int64_t>(rows), static_cast<std::int64_t>(cols),
            static_cast<std::int64_t>(rows), scale, scales.get(), y.get(), st);
        break;
    }
  };

  // Verify once: poison the outputs, run, compare with the host functions. (dequantize reads
  // the int8 codes quantize_per_tensor makes; the timed runs reuse them.)
  TCB_CUDA(cudaMemsetAsync(q.get(), 0x80, q.bytes(), s));  // -128: never a quantize_int8 result
  TCB_CUDA(cudaMemsetAsync(y.get(), 0xFF, y.bytes(), s));
  TCB_CUDA(cudaMemsetAsync(counts.get(), 0, counts.bytes(), s));
  TCB_CUDA(cudaMemsetAsync(non_finite.get(), 0, non_finite.bytes(), s));
  TCB_CUDA(cudaMemsetAsync(bits.get(), 0, bits.bytes(), s));
  if (which == QuantKernel::dequantize) tk::quantize_per_tensor(x.get(), n, scale, q.get(), s);
  run(s);
  TCB_CUDA(cudaStreamSynchronize(s));
  auto from_bits = [](unsigned b) {
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
  };
  std::size_t mismatches = 0;
  switch (which) {
    case QuantKernel::abs_histogram: {
      tn::AbsHistogram host(range), dev(range);
      host.add(host_x);
      dev.add_counts(counts.download(s), from_bits(bits.download(s)[0]), non_finite.download(s)[0]);
      mismatches = host == dev ? 0 : 1;
      break;
    }
    case QuantKernel::amax:
      mismatches = from_bits(bits.download(s)[0]) == tn::amax(host_x) ? 0 : 1;
      break;
    case QuantKernel::quantize_per_tensor:
    case QuantKernel::quantize_per_channel: {
      const std::vector<std::int8_t> got = q.download(s);
      for (std::size_t i = 0; i < n; ++i) {
        const float sc = which == QuantKernel::quantize_per_tensor ? scale : host_scales[i / cols];
        mismatches += got[i] != tn::quantize_int8(host_x[i], sc);
      }
      break;
    }
    case QuantKernel::dequantize: {
      const std::vector<float> got = y.download(s);
      for (std::size_t i = 0; i < n; ++i) {
        const float want = tn::dequantize_int8(tn::quantize_int8(host_x[i], scale), scale);
        mismatches += std::memcmp(&got[i], &want, sizeof want) != 0;
      }
      break;
    }
    case QuantKernel::dequantize_accumulators: {
      const std::vector<float> got = y.download(s);
      for (std::size_t i = 0; i < n; ++i) {
        const float want = tn::dequantize_accumulator(host_acc[i], scale, host_scales[i % rows]);
        mismatches += std::memcmp(&got[i], &want, sizeof want) != 0;
      }
      break;
    }
  }
  if (mismatches != 0)
    throw Error(std::string(kernel_name(which)) + " differs from the host functions in " +
                std::to_string(mismatches) + " of " + std::to_string(n) + " results");

  const SampleStats t = measure(state, env, run);
  double bytes = 0.0;
  switch (which) {
    case QuantKernel::abs_histogram:
    case QuantKernel::amax:
      bytes = 4.0 * static_cast<double>(n);
      break;
    case QuantKernel::quantize_per_tensor:
    case QuantKernel::quantize_per_channel:
    case QuantKernel::dequantize:
      bytes = 5.0 * static_cast<double>(n);
      break;
    case QuantKernel::dequantize_accumulators:
      bytes = 8.0 * static_cast<double>(n);
      break;
  }
  report_bandwidth(state, env, bytes, t);
  state.SetLabel("bit-exact vs host numerics");
}

}  // namespace

void register_topic(const Env& env) {
  std::vector<std::array<std::int64_t, 3>> shapes;  // m, n, k
  for (std::int64_t tokens : token_counts(env))
    for (const Layer& l : mlp_layers()) shapes.push_back({l.out, tokens, l.in});
  for (std::int64_t s : squares(env)) shapes.push_back({s, s, s});

  for (const auto& [m, n, k] : shapes) {
    for (Precision p : kFloatPaths)
      register_gpu_benchmark(
          env, gemm_name(kTopic, "cublaslt", p, m, n, k),
          [&env, p, m, n, k](benchmark::State& st) { cublaslt(st, env, p, m, n, k); });
    register_gpu_benchmark(
        env, gemm_name(kTopic, "cublaslt", Precision::int8, m, n, k),
        [&env, m, n, k](benchmark::State& st) { cublaslt(st, env, Precision::int8, m, n, k); });
    register_gpu_benchmark(
        env, gemm_name(kTopic, "cublaslt_requant", Precision::int8, m, n, k),
        [&env, m, n, k](benchmark::State& st) { cublaslt_requant(st, env, m, n, k); });
    register_gpu_benchmark(env, gemm_name(kTopic, "imma", Precision::int8, m, n, k),
                           [&env, m, n, k](benchmark::State& st) { own_imma(st, env, m, n, k); });
  }
  for (std::int64_t tokens : token_counts(env))
    for (Precision p :
         {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16, Precision::int8})
      register_gpu_benchmark(env,
                             std::string(kTopic) + "/mlp/" + std::string(name(p)) +
                                 "/tokens:" + std::to_string(tokens),
                             [&env, p, tokens](benchmark::State& st) { mlp(st, env, p, tokens); });

  const std::size_t n = env.quick() ? (std::size_t{1} << 24) : (std::size_t{1} << 26);
  for (QuantKernel q : {QuantKernel::abs_histogram, QuantKernel::amax,
                        QuantKernel::quantize_per_tensor, QuantKernel::quantize_per_channel,
                        QuantKernel::dequantize, QuantKernel::dequantize_accumulators})
    register_gpu_benchmark(
        env, std::string(kTopic) + "/" + kernel_name(q) + "/int8/n:" + std::to_string(n),
        [&env, q, n](benchmark::State& st) { quant_kernel(st, env, q, n); });
}

}  // namespace tcbench::bench
