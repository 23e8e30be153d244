// int8_gemm: INT8 inference on Tensor Cores after calibration and QAT (docs/concepts/
// int8-calibration.md). How much faster INT8 (IMMA, int32 accumulate) runs than FP32, TF32, FP16
// and BF16 on this GPU, on the layers of the MLP that the host study trains, calibrates and
// quantizes (tcbench/studies/int8_study.hpp), and at what accuracy each INT8 variant gets there.
//
//   int8_gemm/cublaslt/<p>/m/n/k/layout:tn   cuBLASLt, p in fp32 (SIMT) tf32 fp16 bf16 int8
//   int8_gemm/cublaslt_requant/int8/...      INT8 -> INT8 through a float alpha (deployment GEMM)
//   int8_gemm/imma/int8/...                  our WMMA (IMMA) kernel, int32 out
//   int8_gemm/mlp/<p>/tokens:N/layout:tn     the three layer GEMMs together; the int8 row carries
//                                            the host accuracy of every PTQ/QAT variant
//   int8_gemm/<kernel>/int8/elements:N       the quantization pipeline: gbps, pct_of_peak
//
// Layer GEMMs are D[out, tokens] = W[out, in] * X[tokens, in]^T: m = output features (the
// weights, K-contiguous, are the transposed A of "TN"), n = tokens, k = input features. Every
// precision runs that TN layout, so speedup_vs_fp32/fp16 compare one layout.
#include "tcbench/bench/harness.hpp"
#include "tcbench/kernels/gemm_wmma.hpp"
#include "tcbench/kernels/int8_quant.hpp"
#include "tcbench/numerics/calibration.hpp"
#include "tcbench/numerics/formats.hpp"
#include "tcbench/numerics/quantization.hpp"
#include "tcbench/studies/int8_study.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace tcbench::bench {
namespace {

namespace tn = tcbench::numerics;
namespace ts = tcbench::studies;
namespace tk = tcbench::kernels;
using P = Precision;

constexpr std::string_view kTopic = "int8_gemm";
constexpr P kPaths[] = {P::fp32, P::tf32, P::fp16, P::bf16, P::int8};

// The trained MLP's layers, from the study's own widths (64 -> 128 -> 128 -> 16).
std::vector<GemmShape> mlp_layers(std::int64_t tokens) {
  const std::vector<std::size_t> w = ts::Int8StudyOptions{}.widths;
  std::vector<GemmShape> layers;
  for (std::size_t i = 0; i + 1 < w.size(); ++i)
    layers.push_back(
        {static_cast<std::int64_t>(w[i + 1]), tokens, static_cast<std::int64_t>(w[i])});
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

// The layer GEMM in precision p: TN, speed-ups against FP32 and FP16 on the same problem.
GemmCase layer_case(P p, const GemmShape& s) {
  GemmCase c = default_case(p, s);
  c.spec.problem.trans_a = true;
  c.speedup_vs = {P::fp32, P::fp16};
  return c;
}

// INT8 in, INT8 out: alpha = s_x * s_w / s_y requantizes the exact int32 sum in the epilogue.
// Here alpha maps about four standard deviations of a sum of k products of uniform integers in
// [-127, 127] (variance (127^2 / 3)^2 each) to 127, so few outputs saturate.
GemmCase requant_case(P p, const GemmShape& s) {
  GemmCase c = layer_case(p, s);
  c.spec.c_type = c.spec.d_type = CUDA_R_8I;
  c.spec.scale_type = CUDA_R_32F;
  c.alpha = 127.0 / (4.0 * (127.0 * 127.0 / 3.0) * std::sqrt(static_cast<double>(s.k)));
  // Rounding to integers at an output spread of about 32 (127 / 4) leaves a relative RMS error
  // of 0.5 / sqrt(3) / 32 ~ 0.009 [derived]; the rare saturated outputs add little. 0.02 allows
  // for that and still fails a wrong alpha, layout or type by orders of magnitude.
  c.tolerance = 0.02;
  return c;
}

GemmCase imma_case(P p, const GemmShape& s) {
  GemmCase c = layer_case(p, s);
  c.label = "WMMA int8->int32 (IMMA)";
  return c;
}

// The host study runs once per process (about a second on the CPU), on first use.
const ts::Int8StudyResult& study() {
  return once<ts::Int8StudyResult>("int8_study", [] { return ts::run_int8_study(); });
}

void set_accuracy(benchmark::State& state, const ts::Int8Variant& v) {
  set_counter(state, counters::accuracy(v.name), 100.0 * v.accuracy);
  set_counter(state, counters::agreement(v.name), 100.0 * v.agreement);
}

// The MLP's three layer GEMMs at one batch: the sum of their verified, L2-flushed cuBLASLt
// medians (each layer reads its inputs from DRAM, as a layer of a real network does).
void mlp(benchmark::State& state, const Env& env, P p, std::int64_t tokens) {
  auto total = [&](P q) {
    double s = 0.0;
    for (const GemmShape& l : mlp_layers(tokens)) s += baseline_seconds(env, layer_case(p, l), q);
    return s;
  };
  const double seconds = total(p);
  report_precomputed(state, seconds);
  for (P base : layer_case(p, {}).speedup_vs)
    if (base != p) set_counter(state, counters::speedup_vs(base), total(base) / seconds);
  // Accuracy of what this path deploys, from the host evaluation of the same trained model.
  const ts::Int8StudyResult& r = study();
  if (p == P::int8) {
    for (const ts::Int8Variant& v : r.variants)
      if (v.method == "ptq" || v.method == "qat") set_accuracy(state, v);
  } else if (p == P::fp32 || p == P::fp16 || p == P::bf16) {
    set_accuracy(state, r.get(std::string(name(p))));
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
constexpr std::string_view kQuantKernelNames[] = {"abs_histogram",       "amax",
                                                  "quantize_per_tensor", "quantize_per_channel",
                                                  "dequantize",          "dequantize_accumulators"};

// Counts differing elements of two equally long arrays, by bits.
template <typename T>
std::size_t mismatches(const std::vector<T>& got, const std::vector<T>& want) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    bad += std::memcmp(&got[i], &want[i], sizeof(T)) != 0;
  return bad;
}

float from_bits(unsigned b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// Checked against the host functions it wraps (bit for bit) on activations with outliers, then
// timed. Bytes: every input read once and every output written once.
void quant_kernel(benchmark::State& state, const Env& env, QuantKernel which, std::size_t n,
                  const std::string& key) {
  const std::size_t cols = 4096, rows = n / cols;  // per-channel: [rows, 4096] weights
  require_memory(env, n * (sizeof(float) * 3 + 1), "the quantization buffers");
  DeviceBuffer<float> x(n), y(n), scales(rows);
  DeviceBuffer<std::int8_t> q(n);
  DeviceBuffer<std::int32_t> acc(which == QuantKernel::dequantize_accumulators ? n : 0);
  DeviceBuffer<tn::HistCount> counts(tn::kCalibBins), non_finite(1);
  DeviceValue<unsigned> bits;
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

  KernelCase k;
  k.bytes_moved = static_cast<double>(n) *
                  (which == QuantKernel::abs_histogram || which == QuantKernel::amax ? 4.0
                   : which == QuantKernel::dequantize_accumulators                   ? 8.0
                                                                                     : 5.0);
  // Poison the outputs (-128 is never a quantize_int8 result), zero the accumulating ones;
  // dequantize reads the codes quantize_per_tensor makes. The histogram and amax accumulate
  // into their outputs: the timed runs skip the reset (the counts only grow, far from
  // overflowing 64 bits), so only the kernel is timed.
  k.reset = [&](cudaStream_t st) {
    TCB_CUDA(cudaMemsetAsync(q.get(), 0x80, q.bytes(), st));
    TCB_CUDA(cudaMemsetAsync(y.get(), 0xFF, y.bytes(), st));
    TCB_CUDA(cudaMemsetAsync(counts.get(), 0, counts.bytes(), st));
    TCB_CUDA(cudaMemsetAsync(non_finite.get(), 0, non_finite.bytes(), st));
    bits.set(0, st);
    if (which == QuantKernel::dequantize) tk::quantize_per_tensor(x.get(), n, scale, q.get(), st);
  };
  k.work = [&](cudaStream_t st) {
    switch (which) {
      case QuantKernel::abs_histogram:
        tk::abs_histogram(x.get(), n, range, tn::kCalibBins, counts.get(), non_finite.get(),
                          bits.ptr(), st);
        break;
      case QuantKernel::amax:
        tk::amax(x.get(), n, bits.ptr(), st);
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
  k.check = [&](cudaStream_t st) -> std::optional<std::string> {
    std::size_t bad = 0;
    switch (which) {
      case QuantKernel::abs_histogram: {
        tn::AbsHistogram host(range), dev(range);
        host.add(host_x);
        dev.add_counts(counts.download(st), from_bits(bits.get(st)), non_finite.download(st)[0]);
        bad = host == dev ? 0 : 1;
        break;
      }
      case QuantKernel::amax:
        bad = from_bits(bits.get(st)) == tn::amax(host_x) ? 0 : 1;
        break;
      case QuantKernel::quantize_per_tensor:
      case QuantKernel::quantize_per_channel: {
        std::vector<std::int8_t> want(n);
        for (std::size_t i = 0; i < n; ++i)
          want[i] = tn::quantize_int8(
              host_x[i], which == QuantKernel::quantize_per_tensor ? scale : host_scales[i / cols]);
        bad = mismatches(q.download(st), want);
        break;
      }
      case QuantKernel::dequantize: {
        std::vector<float> want(n);
        for (std::size_t i = 0; i < n; ++i)
          want[i] = tn::dequantize_int8(tn::quantize_int8(host_x[i], scale), scale);
        bad = mismatches(y.download(st), want);
        break;
      }
      case QuantKernel::dequantize_accumulators: {
        std::vector<float> want(n);
        for (std::size_t i = 0; i < n; ++i)
          want[i] = tn::dequantize_accumulator(host_acc[i], scale, host_scales[i % rows]);
        bad = mismatches(y.download(st), want);
        break;
      }
    }
    if (bad == 0) return std::nullopt;
    return "differs from the host functions in " + std::to_string(bad) + " of " +
           std::to_string(n) + " results";
  };
  k.label = "bit-exact vs host numerics";
  run_kernel(state, env, key, k);
}

}  // namespace

TopicHelp topic_help() {
  return {
      "INT8 inference on Tensor Cores after calibration and QAT: how much faster INT8 GEMMs "
      "(IMMA, int32 accumulation, TN) run than FP32, TF32, FP16 and BF16 on the layers of "
      "the MLP the host study trains and quantizes, with each PTQ calibrator's and QAT's "
      "accuracy beside the speed-up, and what the quantization kernels cost.",
      "docs/concepts/int8-calibration.md"};
}

void register_topic(const Env& env) {
  std::vector<GemmShape> shapes;
  for (std::int64_t tokens : token_counts(env))
    for (const GemmShape& l : mlp_layers(tokens)) shapes.push_back(l);
  for (std::int64_t s : squares(env)) shapes.push_back({s, s, s});

  for (const GemmShape& s : shapes) {
    const std::array<GemmShape, 1> one{s};
    add_gemms(env, kTopic, "cublaslt", kPaths, one, layer_case);
    add_gemms(env, kTopic, "cublaslt_requant", std::array{P::int8}, one, requant_case);
    add_gemms(
        env, kTopic, "imma", std::array{P::int8}, one, imma_case,
        own_kernel(typed<P::int8>(tk::gemm_wmma_int8), [](const GpuSpec& g, const GemmCase& c) {
          return tk::wmma_unsupported_reason(g.cc_major, g.cc_minor, c.precision, c.spec.problem);
        }));
  }
  for (std::int64_t tokens : token_counts(env))
    for (P p : kPaths)
      register_gpu_benchmark(BenchName(kTopic, "mlp", p)
                                 .arg(Key::tokens, tokens)
                                 .arg(Key::layout, layout_name(layer_case(p, {}).spec.problem)),
                             [&env, p, tokens](benchmark::State& st) { mlp(st, env, p, tokens); });

  const std::size_t n = env.quick() ? (std::size_t{1} << 24) : (std::size_t{1} << 26);
  for (std::size_t i = 0; i < std::size(kQuantKernelNames); ++i) {
    const auto q = static_cast<QuantKernel>(i);
    const std::string name = BenchName(kTopic, kQuantKernelNames[i], P::int8)
                                 .arg(Key::elements, static_cast<std::int64_t>(n));
    register_gpu_benchmark(
        name, [&env, q, n, name](benchmark::State& st) { quant_kernel(st, env, q, n, name); });
  }
}

}  // namespace tcbench::bench
