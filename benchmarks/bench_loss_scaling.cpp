// loss_scaling: why FP16 training needs loss scaling, shown with numbers.
//
// Three parts (docs/concepts/loss-scaling.md):
//   landing_<source>/<fp16|bf16>/scale_log2:<k>   where gradients land after scaling by 2^k
//       (log-normal model, and the MLP's own FP32 backward pass): underflow_pct, subnormal_pct,
//       overflow_pct, normal_pct, counted by a GPU kernel and checked against the host counts.
//   train_<mode>/<precision>/steps:<n>            the five-mode training run on cuBLASLt:
//       final_loss, underflow_pct, skipped_steps, final_scale, time_per_step_us, the loss curve
//       (loss_at_00..15) and scale history (scale_at_00..15).
//   unscale/fp32/elements:<n>                     the fused multi-tensor check-and-unscale over
//       parameter-shaped tensors: gbps, pct_of_peak of DRAM, and its time as % of one FP16
//       training step's GEMMs (unscale_pct_of_step).
//
//   build/release/bin/bench_loss_scaling --quick
//   build/release/bin/bench_loss_scaling --benchmark_filter='train_'
#include "tcbench/numerics/host_device.hpp"
#include "tcbench/bench/harness.hpp"
#include "tcbench/cuda_owners.hpp"
#include "tcbench/kernels/loss_scaling.hpp"
#include "tcbench/numerics/loss_scaling.hpp"
#include "tcbench/studies/gpu_training.hpp"
#include "tcbench/studies/mixed_precision_training.hpp"
#include "tcbench/random_fill.hpp"

#include <cmath>
#include <cstring>
#include <algorithm>
#include <string>
#include <vector>

namespace tcbench::bench {
namespace {

namespace tn = tcbench::numerics;
namespace ts = tcbench::studies;
constexpr std::string_view kTopic = "loss_scaling";

// 1. Where gradients land --------------------------------------------------------------------

// Where the gradients come from: one row per source, the benchmark's variant beside its data.
// Host-made and cached: the same inputs on every GPU, so the counts are comparable exactly.
struct GradientSource {
  std::string_view name;
  const std::vector<float>& (*gradients)();
};
const std::vector<float>& lognormal_gradients() {
  static const std::vector<float> g = tn::lognormal_gradients(1'000'000, 7);
  return g;
}
const std::vector<float>& mlp_gradients() {
  static const std::vector<float> g = [] {
    const int at[] = {0, 100, 399};
    return ts::fp32_backward_gradients(ts::TrainingConfig{}, at);
  }();
  return g;
}
constexpr GradientSource kSources[] = {{"landing_lognormal", lognormal_gradients},
                                       {"landing_mlp", mlp_gradients}};

void landing(benchmark::State& state, const Env& env, const GradientSource& source,
             tn::Format format, int log2) {
  const std::vector<float>& g = source.gradients();
  const cudaStream_t stream = env.stream();
  DeviceBuffer<float> grads(g.size());
  grads.upload(g, stream);
  // Both formats are counted in one pass; slot (0, f) holds this benchmark's format.
  DeviceBuffer<unsigned long long> counts(2 * tn::kLandingCount);
  const float scale = std::ldexp(1.0f, log2);
  auto work = [&](cudaStream_t s) {
    kernels::count_landings(grads.get(), g.size(), std::span(&scale, 1), counts.get(), s);
  };
  // Correct first: the device counts must equal the host's exactly.
  work(stream);
  const std::vector<unsigned long long> got = counts.download(stream);
  const tn::LandingCounts want = tn::count_landings(g, scale, format);
  const std::size_t f = format == tn::Format::fp16 ? 0 : 1;
  for (int l = 0; l < tn::kLandingCount; ++l)
    if (got[f * tn::kLandingCount + l] != want[static_cast<std::size_t>(l)])
      throw Error("count_landings disagrees with the host for " +
                  std::string(tn::name(static_cast<tn::Landing>(l))) + ": device " +
                  std::to_string(got[f * tn::kLandingCount + l]) + ", host " +
                  std::to_string(want[static_cast<std::size_t>(l)]));
  measure(state, env, work);
  const double n = static_cast<double>(g.size());
  auto pct = [&](tn::Landing l) {
    return 100.0 * static_cast<double>(want[static_cast<std::size_t>(l)]) / n;
  };
  set_counter(state, counters::underflow_pct, pct(tn::Landing::flushed_to_zero));
  set_counter(state, counters::subnormal_pct, pct(tn::Landing::subnormal));
  set_counter(state, counters::overflow_pct, pct(tn::Landing::overflow));
  set_counter(state, counters::normal_pct, pct(tn::Landing::normal));
  set_counter(state, counters::values, n);
}

// 2. Training with and without scaling --------------------------------------------------------

ts::TrainingConfig training_config(bool quick) {
  ts::TrainingConfig cfg;
  cfg.steps = quick ? 100 : 400;
  return cfg;
}

constexpr int kCurvePoints = 16;

// One run per mode and process (Google Benchmark may call a body more than once), checked
// against the host before it is reported.
const ts::GpuTrainingResult& gpu_run(const Env& env, ts::TrainingMode mode) {
  return once<ts::GpuTrainingResult>("loss_scaling_train|" + std::string(ts::name(mode)), [&] {
    const ts::TrainingConfig cfg = training_config(env.quick());
    ts::GpuTrainingResult r =
        ts::train_on_gpu(env.lt(), env.gpu().cc_major, env.gpu().cc_minor, cfg, mode, env.stream());
    if (r.run.stopped) throw Error(*r.run.stopped);
    // Correct first: the first loss is the forward pass of the same weights and data as the
    // host's; FP16 GEMMs and the device tanhf change it by well under 0.1 %.
    ts::TrainingConfig one = cfg;
    one.steps = 1;
    const float host0 = ts::train_host(one, mode).steps[0].loss;
    const float gpu0 = r.run.steps.at(0).loss;
    if (!(std::fabs(gpu0 - host0) <= 1e-3f * host0))
      throw Error("the GPU's first loss " + std::to_string(gpu0) + " differs from the host's " +
                  std::to_string(host0) + " by more than 0.1 %");
    for (const ts::TrainingStep& s : r.run.steps)
      if (!std::isfinite(s.loss)) throw Error("a training loss was not finite");
    return r;
  });
}

void train(benchmark::State& state, const Env& env, ts::TrainingMode mode) {
  env.skip_unless(ts::training_unsupported_reason(env.gpu().cc_major, env.gpu().cc_minor,
                                                  training_config(env.quick()), mode));
  const ts::GpuTrainingResult& r = gpu_run(env, mode);
  report_precomputed(state, r.seconds_per_step);
  const auto& steps = r.run.steps;
  set_counter(state, counters::final_loss, r.run.final_loss());
  set_counter(state, counters::underflow_pct, r.run.underflow_pct());
  set_counter(state, counters::skipped_steps, r.run.skipped_steps());
  set_counter(state, counters::final_scale, steps.back().scale_used);
  set_counter(state, counters::time_per_step_us, r.seconds_per_step * 1e6);
  set_counter(state, counters::gemm_us_per_step, r.gemm_seconds_per_step * 1e6);
  set_counter(state, counters::steps_run, static_cast<double>(steps.size()));
  set_counter(state, counters::curve_points, kCurvePoints);
  const double last = static_cast<double>(steps.size() - 1);
  for (int i = 0; i < kCurvePoints; ++i) {
    const auto at = static_cast<std::size_t>(std::lround(i * last / (kCurvePoints - 1)));
    set_counter(state, counters::loss_at(i), steps[at].loss);
    set_counter(state, counters::scale_at(i), steps[at].scale_used);
  }
  state.SetLabel(r.gemm_impl);
}

// 3. The cost of scaling ----------------------------------------------------------------------

// A parameter set of `total` FP32 gradients shaped like transformer layers of hidden size 1024:
// QKV (3h x h), output projection (h x h), MLP up (4h x h) and down (h x 4h) weights, their
// biases and two LayerNorm weight/bias pairs, repeated and cut at `total`. Each tensor starts
// on a 16-byte boundary, as allocations do.
std::vector<kernels::GradTensor> parameter_set(float* base, std::size_t total) {
  constexpr std::size_t h = 1024;
  const std::size_t layer[] = {3 * h * h, 3 * h, h * h, h, 4 * h * h, 4 * h,
                               4 * h * h, h,     h,     h, h,         h};
  std::vector<kernels::GradTensor> tensors;
  std::size_t at = 0;
  for (std::size_t i = 0; at < total; ++i) {
    const std::size_t n = std::min(layer[i % std::size(layer)], total - at);
    tensors.push_back({base + at, n});
    at += (n + 3) / 4 * 4;
  }
  return tensors;
}

constexpr std::uint64_t kGradSeed = 0x6AD5;
constexpr std::int64_t kStepHidden = 4096, kStepTokens = 16384;

// The fused check-and-unscale over `elements` parameter-shaped FP32 gradients. Alternating
// 1/2^16 and 2^16 keeps the values where they started (both exact powers of two, far from FP32's
// limits), so every timed run works on the same nonzero gradients.
struct UnscaleBuffers {
  UnscaleBuffers(cudaStream_t stream, std::size_t count)
      : elements(count),
        grads(count + 4 * 4096),  // room for 16-byte alignment of every tensor
        tensors(parameter_set(grads.get(), count)),
        op(tensors),
        inv(2),
        found(1) {
    fill_random(grads.get(), grads.size(), kDist, kGradSeed, stream);
    inv.upload(std::vector<float>{tn::inverse_scale(65536.0f), 65536.0f}, stream);
    TCB_CUDA(cudaMemsetAsync(found.get(), 0, sizeof(float), stream));
  }
  static constexpr Distribution kDist = Distribution::uniform(-1.0f, 1.0f);
  std::size_t elements;
  DeviceBuffer<float> grads;
  std::vector<kernels::GradTensor> tensors;
  kernels::MultiTensorUnscale op;
  DeviceBuffer<float> inv, found;
  int parity = 0;
};

// Correct first: the checked run (1/2^16) against the host on a strided sample of about 2^20
// elements (gathered with one 2D copy), no Inf found; then an Inf planted in the last tensor
// must be found, and the runs after it restore the values.
std::optional<std::string> check_unscale(UnscaleBuffers& b, cudaStream_t st) {
  const std::size_t stride = std::max<std::size_t>(1, b.elements / (std::size_t{1} << 20));
  const std::size_t count = tn::ceil_div(b.elements, stride);
  std::vector<float> sample(count);
  TCB_CUDA(cudaMemcpy2DAsync(sample.data(), sizeof(float), b.grads.get(), stride * sizeof(float),
                             sizeof(float), count, cudaMemcpyDeviceToHost, st));
  if (b.found.download(st)[0] != 0.0f) return "it reported Inf/NaN in finite gradients";
  const float inv_host = tn::inverse_scale(65536.0f);
  for (std::size_t j = 0; j < count; ++j) {
    bool f = false;
    const float want =
        tn::check_and_unscale(random_value(b.kDist, kGradSeed, j * stride), inv_host, f);
    if (std::memcmp(&want, &sample[j], sizeof want) != 0)
      return "element " + std::to_string(j * stride) + " is " + std::to_string(sample[j]) +
             ", the host's " + std::to_string(want);
  }
  b.op.run(b.inv.get() + 1, b.found.get(), st);  // back to the filled values
  float* const last = b.grads.get() + (b.elements - 1);
  float keep = 0;
  const float inf = INFINITY;
  TCB_CUDA(cudaMemcpyAsync(&keep, last, sizeof keep, cudaMemcpyDeviceToHost, st));
  TCB_CUDA(cudaMemcpyAsync(last, &inf, sizeof inf, cudaMemcpyHostToDevice, st));
  b.op.run(b.inv.get(), b.found.get(), st);
  const bool caught = b.found.download(st)[0] == 1.0f;
  b.op.run(b.inv.get() + 1, b.found.get(), st);
  TCB_CUDA(cudaMemcpyAsync(last, &keep, sizeof keep, cudaMemcpyHostToDevice, st));
  TCB_CUDA(cudaMemsetAsync(b.found.get(), 0, sizeof(float), st));
  TCB_CUDA(cudaStreamSynchronize(st));
  b.parity = 0;
  if (!caught) return "it missed an Inf in the last element";
  return std::nullopt;
}

KernelCase unscale_case(UnscaleBuffers& b) {
  KernelCase k;
  k.bytes_moved = 8.0 * static_cast<double>(b.elements);  // read + write, FP32
  k.work = [&b](cudaStream_t st) {
    b.op.run(b.inv.get() + b.parity, b.found.get(), st);
    b.parity ^= 1;
  };
  k.check = [&b](cudaStream_t st) { return check_unscale(b, st); };
  k.label = "fused multi-tensor check-and-unscale, bit-exact vs the host";
  return k;
}

void unscale(benchmark::State& state, const Env& env, std::size_t elements) {
  require_memory(env, checked_bytes<float>(elements + 4 * 4096) + (std::size_t{64} << 20),
                 std::to_string(elements) + " FP32 gradients");
  UnscaleBuffers b(env.stream(), elements);
  const SampleStats t =
      run_kernel(state, env, "loss_scaling_unscale|" + std::to_string(elements), unscale_case(b));

  // One FP16 training step's GEMMs for this many parameters: 3 GEMMs (forward, data gradient,
  // weight gradient) of 2 * h * T * h FLOP per h x h weight, timed as one cuBLASLt GEMM of
  // h x T x h and scaled by the number of such weights.
  const double one_gemm = baseline_median_seconds(
      env, GemmCase::for_precision(Precision::fp16, kStepHidden, kStepTokens, kStepHidden));
  const double weights = static_cast<double>(elements) / (kStepHidden * kStepHidden);
  const double step_gemm = 3.0 * weights * one_gemm;
  set_counter(state, counters::step_gemm_ms, step_gemm * 1e3);
  set_counter(state, counters::unscale_pct_of_step, 100.0 * t.median / step_gemm);
  set_counter(state, counters::tokens_per_step, kStepTokens);
  set_counter(state, counters::tensors, static_cast<double>(b.tensors.size()));
}

}  // namespace

TopicHelp topic_help() {
  return {
      "Why FP16 training needs loss scaling: where gradients land (underflow, subnormal, "
      "overflow) after scaling by 2^k in FP16 and BF16, five training runs (FP32; FP16 "
      "without, with static and with dynamic scaling; BF16 without) with their loss curves, "
      "and the cost of the fused check-and-unscale kernel.",
      "docs/concepts/loss-scaling.md"};
}

void register_topic(const Env& env) {
  const tn::Format formats[] = {tn::Format::fp16, tn::Format::bf16};
  for (const GradientSource& source : kSources)
    for (tn::Format f : formats)
      for (int k : tn::kSweepScaleLog2) {
        const Precision p = *parse_precision(tn::name(f));  // the GEMM precision of that format
        register_gpu_benchmark(
            BenchName(kTopic, source.name, p).arg(Key::scale_log2, k),
            [&env, &source, f, k](benchmark::State& st) { landing(st, env, source, f, k); });
      }
  const int steps = training_config(env.quick()).steps;
  for (ts::TrainingMode m : ts::kTrainingModes)
    register_gpu_benchmark(
        BenchName(kTopic, "train_" + std::string(ts::name(m)), ts::precision_of(m))
            .arg(Key::steps, steps),
        [&env, m](benchmark::State& st) { train(st, env, m); });
  std::vector<std::size_t> sizes{10'000'000};
  if (!env.quick()) sizes = {10'000'000, 100'000'000, 1'000'000'000};
  for (std::size_t n : sizes)
    register_gpu_benchmark(BenchName(kTopic, "unscale", Precision::fp32)
                               .arg(Key::elements, static_cast<std::int64_t>(n)),
                           [&env, n](benchmark::State& st) { unscale(st, env, n); });
}

}  // namespace tcbench::bench
