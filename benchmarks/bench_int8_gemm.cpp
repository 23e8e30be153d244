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
#include <functional>
#include <optional>
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
    if (base != p) report_speedup(state, base, total(base), seconds);
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
// One factory per kernel (llm.c dev/cuda's one function per kernel version): what one run moves,
// the run, and its check against the host functions it wraps (bit for bit), side by side; the
// table below is what the topic registers.

// The buffers every kernel case of one size reads and writes, and the host copies the checks
// compare with: activations with outliers; per-channel weights are [rows, 4096].
struct QuantBuffers {
  static constexpr std::size_t kCols = 4096;
  static constexpr float kRange = 64.0f, kScale = 4.0f / 127.0f;
  QuantBuffers(const Env& env, std::size_t elements, bool accumulators)
      : n(elements),
        rows(elements / kCols),
        x(n),
        y(n),
        scales(rows),
        q(n),
        acc(accumulators ? n : 0),
        counts(tn::kCalibBins),
        non_finite(1) {
    const cudaStream_t s = env.stream();
    fill_random(x.get(), n, Distribution::activations_with_outliers(), 0x1a7, s);
    host_x = x.download(s);
    if (accumulators) {
      fill_random(acc.get(), n, Distribution::integers(-2000000, 2000000), 0x1a8, s);
      host_acc = acc.download(s);
    }
    host_scales.resize(rows);
    for (std::size_t r = 0; r < rows; ++r)
      host_scales[r] = 0.02f + 0.001f * static_cast<float>(r % 64);
    scales.upload(host_scales, s);
  }
  // Poison the outputs (-128 is never a quantize_int8 result), zero the accumulating ones. The
  // histogram and amax accumulate into their outputs: the timed runs skip the reset (the counts
  // only grow, far from overflowing 64 bits), so only the kernel is timed.
  void poison(cudaStream_t st) {
    TCB_CUDA(cudaMemsetAsync(q.get(), 0x80, q.bytes(), st));
    TCB_CUDA(cudaMemsetAsync(y.get(), 0xFF, y.bytes(), st));
    TCB_CUDA(cudaMemsetAsync(counts.get(), 0, counts.bytes(), st));
    TCB_CUDA(cudaMemsetAsync(non_finite.get(), 0, non_finite.bytes(), st));
    bits.set(0, st);
  }
  std::size_t n, rows;
  DeviceBuffer<float> x, y, scales;
  DeviceBuffer<std::int8_t> q;
  DeviceBuffer<std::int32_t> acc;
  DeviceBuffer<tn::HistCount> counts, non_finite;
  DeviceValue<unsigned> bits;
  std::vector<float> host_x, host_scales;
  std::vector<std::int32_t> host_acc;
};

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

// The case around one kernel: `bytes_per_element` (every input read once and every output
// written once), the run, and the number of results that differ from the host's.
KernelCase quant_case(QuantBuffers& b, double bytes_per_element,
                      std::function<void(cudaStream_t)> work,
                      std::function<std::size_t(cudaStream_t)> bad_results) {
  KernelCase k;
  k.bytes_moved = static_cast<double>(b.n) * bytes_per_element;
  k.reset = [&b](cudaStream_t st) { b.poison(st); };
  k.work = std::move(work);
  k.check = [&b,
             bad_results = std::move(bad_results)](cudaStream_t st) -> std::optional<std::string> {
    const std::size_t bad = bad_results(st);
    if (bad == 0) return std::nullopt;
    return "differs from the host functions in " + std::to_string(bad) + " of " +
           std::to_string(b.n) + " results";
  };
  k.label = "bit-exact vs host numerics";
  return k;
}

KernelCase abs_histogram_case(QuantBuffers& b) {
  return quant_case(
      b, 4.0,
      [&b](cudaStream_t st) {
        tk::abs_histogram(b.x.get(), b.n, QuantBuffers::kRange, tn::kCalibBins, b.counts.get(),
                          b.non_finite.get(), b.bits.ptr(), st);
      },
      [&b](cudaStream_t st) -> std::size_t {
        tn::AbsHistogram host(QuantBuffers::kRange), dev(QuantBuffers::kRange);
        host.add(b.host_x);
        dev.add_counts(b.counts.download(st), from_bits(b.bits.get(st)),
                       b.non_finite.download(st)[0]);
        return host == dev ? 0 : 1;
      });
}

KernelCase amax_case(QuantBuffers& b) {
  return quant_case(
      b, 4.0, [&b](cudaStream_t st) { tk::amax(b.x.get(), b.n, b.bits.ptr(), st); },
      [&b](cudaStream_t st) -> std::size_t {
        return from_bits(b.bits.get(st)) == tn::amax(b.host_x) ? 0 : 1;
      });
}

// quantize_int8 of every element with scale_of(i), as the host computes it.
template <typename ScaleOf>
std::vector<std::int8_t> host_quantized(const QuantBuffers& b, ScaleOf scale_of) {
  std::vector<std::int8_t> want(b.n);
  for (std::size_t i = 0; i < b.n; ++i) want[i] = tn::quantize_int8(b.host_x[i], scale_of(i));
  return want;
}

KernelCase quantize_per_tensor_case(QuantBuffers& b) {
  return quant_case(
      b, 5.0,
      [&b](cudaStream_t st) {
        tk::quantize_per_tensor(b.x.get(), b.n, QuantBuffers::kScale, b.q.get(), st);
      },
      [&b](cudaStream_t st) {
        return mismatches(b.q.download(st),
                          host_quantized(b, [](std::size_t) { return QuantBuffers::kScale; }));
      });
}

KernelCase quantize_per_channel_case(QuantBuffers& b) {
  return quant_case(
      b, 5.0,
      [&b](cudaStream_t st) {
        tk::quantize_per_channel(b.x.get(), b.rows, QuantBuffers::kCols, b.scales.get(), b.q.get(),
                                 st);
      },
      [&b](cudaStream_t st) {
        return mismatches(b.q.download(st), host_quantized(b, [&b](std::size_t i) {
                            return b.host_scales[i / QuantBuffers::kCols];
                          }));
      });
}

// Reads the codes quantize_per_tensor makes (in its reset, so only dequantize is timed).
KernelCase dequantize_case(QuantBuffers& b) {
  KernelCase k = quant_case(
      b, 5.0,
      [&b](cudaStream_t st) {
        tk::dequantize(b.q.get(), b.n, QuantBuffers::kScale, b.y.get(), st);
      },
      [&b](cudaStream_t st) {
        std::vector<float> want(b.n);
        for (std::size_t i = 0; i < b.n; ++i)
          want[i] = tn::dequantize_int8(tn::quantize_int8(b.host_x[i], QuantBuffers::kScale),
                                        QuantBuffers::kScale);
        return mismatches(b.y.download(st), want);
      });
  k.reset = [&b](cudaStream_t st) {
    b.poison(st);
    tk::quantize_per_tensor(b.x.get(), b.n, QuantBuffers::kScale, b.q.get(), st);
  };
  return k;
}

// The IMMA GEMM's int32 result -> float with per-channel weight scales: [rows, cols]
// column-major, rows = channels.
KernelCase dequantize_accumulators_case(QuantBuffers& b) {
  const auto rows = static_cast<std::int64_t>(b.rows);
  return quant_case(
      b, 8.0,
      [&b, rows](cudaStream_t st) {
        tk::dequantize_accumulators(b.acc.get(), rows, std::int64_t{QuantBuffers::kCols}, rows,
                                    QuantBuffers::kScale, b.scales.get(), b.y.get(), st);
      },
      [&b](cudaStream_t st) {
        std::vector<float> want(b.n);
        for (std::size_t i = 0; i < b.n; ++i)
          want[i] = tn::dequantize_accumulator(b.host_acc[i], QuantBuffers::kScale,
                                               b.host_scales[i % b.rows]);
        return mismatches(b.y.download(st), want);
      });
}

struct QuantKernel {
  std::string_view name;
  KernelCase (*make)(QuantBuffers&);
  bool accumulators = false;  // reads an int32 GEMM result
};
constexpr QuantKernel kQuantKernels[] = {
    {"abs_histogram", abs_histogram_case},
    {"amax", amax_case},
    {"quantize_per_tensor", quantize_per_tensor_case},
    {"quantize_per_channel", quantize_per_channel_case},
    {"dequantize", dequantize_case},
    {"dequantize_accumulators", dequantize_accumulators_case, true},
};

void quant_kernel(benchmark::State& state, const Env& env, const QuantKernel& kernel, std::size_t n,
                  const std::string& key) {
  require_memory(env, n * (sizeof(float) * 3 + 1), "the quantization buffers");
  QuantBuffers b(env, n, kernel.accumulators);
  run_kernel(state, env, key, kernel.make(b));
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
  for (const QuantKernel& k : kQuantKernels) {
    const std::string name =
        BenchName(kTopic, k.name, P::int8).arg(Key::elements, static_cast<std::int64_t>(n));
    register_gpu_benchmark(
        name, [&env, &k, n, name](benchmark::State& st) { quant_kernel(st, env, k, n, name); });
  }
}

}  // namespace tcbench::bench
