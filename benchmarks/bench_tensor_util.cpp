// tensor_util: sm__pipe_tensor_cycles_active beside TFLOP/s, from "no Tensor Cores" to
// "saturated", read in-process with CUPTI's range profiler after each configuration is timed.
//
// On one large problem: our SIMT FP32 kernel (FFMA only: the pipe should read ~0%), our WMMA
// FP16 kernel, cuBLASLt TF32/FP16/BF16/INT8/FP8; then a small GEMM that cannot fill the GPU and
// the STREAM triad (memory-bound, no tensor work). Each has tflops (tops, gbps), pct_of_peak and
// tensor_active_pct plus the chip's sub-pipes.
//
// Then what a training workload shows: train_step/<precision>/hidden:<h>/tokens:<b>, one whole
// step of tcbench's GPU trainer (common/gpu_studies/src/gpu_training.cpp: forward, backward,
// unscale-and-check, Adam) in FP16 with dynamic loss scaling, BF16, TF32 and FP32 (FFMA), for
// the loss-scaling topic's small MLP and a 4096-wide one over 4096 tokens. The step is timed
// back to back (tflops: its five GEMMs' FLOP / the median step), timed phase by phase with
// events (time_pct_<phase>, time_pct_gaps), and profiled in one CUPTI session with the step as
// one range and each phase nested in it (benchmarks/step_ranges.hpp): the step range's counters
// are the row's tensor_active_pct and sub-pipes, the phases' are tensor_active_pct_<phase>, and
// step_tensor_mix_pct / gemm_phases_ceiling_pct are the time-weighted mixes of those
// (studies/training_step_phases.hpp). See docs/concepts/tensor-util.md ("Whole step"); cross-check
// with Nsight Compute: scripts/tcbench profile build/release/bin/bench_tensor_util.
//
//   build/release/bin/bench_tensor_util --benchmark_filter='cublaslt/fp16'
//   build/release/bin/bench_tensor_util --benchmark_filter='train_step/'
//   build/release/bin/bench_tensor_util --quick
#include "tcbench/bench/harness.hpp"
#include "tcbench/kernels/gemm_simt.hpp"
#include "tcbench/kernels/gemm_wmma.hpp"
#include "tcbench/kernels/stream_triad.hpp"
#include "tcbench/profiling/range_profiler.hpp"
#include "tcbench/studies/gpu_training.hpp"
#include "tcbench/studies/phase_timer.hpp"
#include "tcbench/studies/training_step_phases.hpp"
#include "step_ranges.hpp"
#include "tensor_counters.hpp"

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>

namespace tcbench::bench {
namespace {

constexpr std::string_view kTopic = "tensor_util";
using P = Precision;

// The large problem every path runs; --quick keeps CI smoke runs short.
GemmShape large(bool quick) {
  return quick ? GemmShape{2048, 2048, 2048} : GemmShape{8192, 8192, 8192};
}
// 256^3 in 128x128 tiles is 4 CTAs: a few percent of any GPU's SMs, whatever the library does.
constexpr GemmShape kSmall{256, 256, 256};

// A runner that reads the tensor-pipe counters of the timed GEMM (after timing, replayed inside
// one CUPTI range) and notes in the label when they could not be read.
RunGemm profiled(RunGemm run, std::string key) {
  return [run = std::move(run), key = std::move(key)](benchmark::State& st, const Env& env,
                                                      const GemmCase& gemm) {
    std::optional<std::string> skipped;
    GemmCase c = gemm;
    c.after_timing = [&env, &key, &skipped](benchmark::State& s,
                                            const std::function<void(cudaStream_t)>& run_once) {
      skipped = add_tensor_counters(s, env, key, run_once);
    };
    GemmResult r = run(st, env, c);
    st.SetLabel(with_counter_note(r.algo ? r.algo->impl.impl_name : c.label, skipped));
    return r;
  };
}

void add_profiled(const Env& env, std::string_view variant, P p, const GemmShape& s,
                  MakeCase make = default_case, RunGemm run = run_cublaslt) {
  const std::array<P, 1> one{p};
  const std::array<GemmShape, 1> shape{s};
  const std::string key = BenchName(kTopic, variant, p).gemm(make(p, s).spec.problem);
  add_gemms(env, kTopic, variant, one, shape, make, profiled(std::move(run), key));
}

// The memory-bound point: the triad streams three arrays far larger than any L2.
void add_memory(const Env& env, bool quick) {
  const std::size_t n = quick ? (std::size_t{1} << 24) : (std::size_t{1} << 27);
  const std::string name =
      BenchName(kTopic, "memory", P::fp32).arg(Key::elements, static_cast<std::int64_t>(n));
  register_gpu_benchmark(name, [&env, n, name](benchmark::State& st) {
    require_memory(env, 3 * n * sizeof(float), "three STREAM triad arrays");
    DeviceBuffer<float> a(n), b(n), c(n);
    // Inputs: a deterministic non-zero fill; the output is checked below, not assumed.
    fill_random(b.get(), n, Distribution::uniform(-1, 1), 21, env.stream());
    fill_random(c.get(), n, Distribution::uniform(-1, 1), 22, env.stream());
    KernelCase k;
    k.bytes_moved = kernels::stream_triad_bytes(n);
    k.reset = [&](cudaStream_t s) { TCB_CUDA(cudaMemsetAsync(a.get(), 0xFF, a.bytes(), s)); };
    k.work = [&](cudaStream_t s) { kernels::stream_triad(b.get(), c.get(), a.get(), 3.0f, n, s); };
    // Spot-check against the host element function (bit for bit) before timing.
    k.check = [&](cudaStream_t s) -> std::optional<std::string> {
      for (const std::size_t i : {std::size_t{0}, n / 3, n - 1}) {
        float got = 0, bi = 0, ci = 0;
        TCB_CUDA(cudaMemcpyAsync(&got, a.get() + i, sizeof(float), cudaMemcpyDeviceToHost, s));
        TCB_CUDA(cudaMemcpyAsync(&bi, b.get() + i, sizeof(float), cudaMemcpyDeviceToHost, s));
        TCB_CUDA(cudaMemcpyAsync(&ci, c.get() + i, sizeof(float), cudaMemcpyDeviceToHost, s));
        TCB_CUDA(cudaStreamSynchronize(s));
        if (!(got == kernels::triad(bi, ci, 3.0f)))
          return "element " + std::to_string(i) + " is " + std::to_string(got) + ", expected " +
                 std::to_string(kernels::triad(bi, ci, 3.0f));
      }
      return std::nullopt;
    };
    k.label = "STREAM triad";
    run_kernel(st, env, name, k);
    st.SetLabel(with_counter_note(k.label, add_tensor_counters(st, env, name, k.work)));
  });
}

// The whole training step ---------------------------------------------------------------------

namespace ts = tcbench::studies;

struct StepPath {
  P precision;
  ts::TrainingMode mode;
  ts::GpuMath math;
  std::string_view label;
};
// The loss-scaling topic's FP16 trainer with GradScaler's dynamic scale, BF16, TF32 and the FFMA
// path (no Tensor Cores), which the metric must tell apart from the other three.
constexpr std::array<StepPath, 4> kStepPaths{{
    {P::fp16, ts::TrainingMode::fp16_dynamic, ts::GpuMath::standard,
     "FP16 storage, dynamic loss scaling"},
    {P::bf16, ts::TrainingMode::bf16, ts::GpuMath::standard, "BF16 storage, no loss scaling"},
    {P::tf32, ts::TrainingMode::fp32, ts::GpuMath::tf32, "FP32 storage, TF32 GEMMs"},
    {P::fp32, ts::TrainingMode::fp32, ts::GpuMath::standard, "FP32 storage, FFMA GEMMs"},
}};
// The transformer-block-sized width: 4096 -> 4096 -> 4096 over 4096 tokens (5 GEMMs of 4096^3).
constexpr int kBlockWidth = 4096, kBlockTokens = 4096;
// Steps timed phase by phase (events at every boundary; the shares are ratios of their sums).
constexpr std::size_t kPhaseSteps = 20;
// The first loss against the FP64 one: 16-bit rounding errors average out over the outputs
// (tests/device/test_gpu_training.cpp, docs/concepts/tensor-util.md).
constexpr double kFirstLossTolerance = 1e-3;
// The NVTX range around the checked first step, for `tcbench profile --nvtx-range tcbench_step`.
constexpr const char* kNvtxStep = "tcbench_step";

std::array<ts::TrainingConfig, 2> step_widths() {
  return {ts::small_mlp_config(), ts::block_sized_config(kBlockWidth, kBlockTokens)};
}

// Each phase in its own profiler range, nested in the step's.
class PhaseRanges final : public ts::PhaseObserver {
 public:
  explicit PhaseRanges(profiling::RangeMarks& marks) : marks_(marks) {}
  void begin(ts::StepPhase p, cudaStream_t) override { marks_.push(ts::name(p)); }
  void end(ts::StepPhase, cudaStream_t) override { marks_.pop(); }

 private:
  profiling::RangeMarks& marks_;
};

// NVTX push/pop ranges (nothing without a tool attached): "tcbench_step" and a range per phase.
class NvtxRange {
 public:
  explicit NvtxRange(const char* name) { nvtxRangePushA(name); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
  ~NvtxRange() { nvtxRangePop(); }
};
class PhaseNvtx final : public ts::PhaseObserver {
 public:
  void begin(ts::StepPhase p, cudaStream_t) override { nvtxRangePushA(ts::name(p).data()); }
  void end(ts::StepPhase, cudaStream_t) override { nvtxRangePop(); }
};

// What the checked first step leaves for the label.
struct StepCheck {
  float loss = 0;
  double reference = 0;
  std::string gemm_impl;
};

// Correct first: the first step of a fresh trainer is finite, takes its update and stores
// gradients that are not mostly zero, and its loss is within 0.1 % of the FP64 forward pass.
StepCheck check_first_step(const Env& env, ts::GpuTrainer& trainer, const ts::TrainingConfig& cfg,
                           const std::string& name) {
  const GpuSpec& gpu = env.gpu();
  const double ref = once<double>(
      "tensor_util_step_fp64|" + std::to_string(cfg.hidden) + "|" + std::to_string(cfg.batch),
      [&] { return ts::fp64_first_loss(env.lt(), gpu.cc_major, gpu.cc_minor, cfg, env.stream()); });
  ts::TrainingStep s;
  {
    const NvtxRange step(kNvtxStep);
    PhaseNvtx phases;
    s = trainer.step(&phases);
  }
  if (!std::isfinite(s.loss) || !(std::fabs(s.loss - ref) <= kFirstLossTolerance * ref))
    throw Error(name + ": the first step's loss " + std::to_string(s.loss) +
                " differs from the FP64 forward pass's " + std::to_string(ref) + " by more than " +
                std::to_string(100 * kFirstLossTolerance) + " %");
  if (s.skipped || s.tally.non_finite != 0)
    throw Error(name + ": the first step's gradients held Inf/NaN (" +
                std::to_string(s.tally.non_finite) + " stored non-finite)");
  if (2 * s.tally.flushed > s.tally.stored)
    throw Error(name + ": " + std::to_string(s.tally.flushed) + " of " +
                std::to_string(s.tally.stored) +
                " stored gradients flushed to zero; the step would be timed on zeros");
  return {s.loss, ref, trainer.gemm_impl()};
}

void train_step(benchmark::State& st, const Env& env, const ts::TrainingConfig& cfg,
                const StepPath& path, const std::string& name) {
  const GpuSpec& gpu = env.gpu();
  env.skip_unless(
      ts::training_unsupported_reason(gpu.cc_major, gpu.cc_minor, cfg, path.mode, path.math));
  require_memory(
      env,
      std::max(ts::GpuTrainer::device_bytes(cfg, path.mode), ts::fp64_first_loss_bytes(cfg)) +
          (std::size_t{256} << 20),
      "a " + std::to_string(cfg.hidden) + "-wide training step");
  // Made on first use: a body whose results are all recalled (Google Benchmark's second call)
  // makes none.
  std::optional<ts::GpuTrainer> made;
  const auto trainer = [&]() -> ts::GpuTrainer& {
    if (!made)
      made.emplace(env.lt(), gpu.cc_major, gpu.cc_minor, cfg, path.mode, env.stream(), path.math);
    return *made;
  };
  const StepCheck& first = once<StepCheck>("tensor_util_step_check|" + name, [&] {
    return check_first_step(env, trainer(), cfg, name);
  });

  // The step back to back, as training runs it (no L2 flush between steps).
  MeasureOptions back_to_back;
  back_to_back.flush_l2 = false;
  const SampleStats t = measure(
      st, env, [&](cudaStream_t) { (void)trainer().step(); }, back_to_back);
  const double flops = ts::step_gemm_flops(cfg);
  report_compute(st, env, path.precision, flops, t);
  set_counter(st, counters::step_gflop, flops * 1e-9);

  // Where the time goes, on the GPU's timeline.
  const ts::PhaseShares& shares = once<ts::PhaseShares>("tensor_util_step_phases|" + name, [&] {
    ts::PhaseTimer timer(kPhaseSteps);
    for (std::size_t i = 0; i < kPhaseSteps; ++i) (void)trainer().step(&timer);
    return ts::phase_shares(timer.timelines());
  });
  for (ts::StepPhase p : ts::kStepPhases)
    set_counter(st, counters::time_share(ts::name(p)), shares.pct[ts::index(p)]);
  set_counter(st, counters::time_share(ts::kGapsName), shares.gaps_pct);

  // The tensor pipe over the whole step and over each phase, in one session (a failure keeps
  // the step's timing and shares above: tensor_counters.hpp).
  const auto& read = read_counters_once<profiling::RangeCounters>("step_ranges|" + name, [&] {
    ts::GpuTrainer& tr = trainer();  // made outside the profiled ranges
    bool update_skipped = false;
    profiling::RangeCounters got =
        profiling::collect_range_counters(step_ranges(), [&](profiling::RangeMarks& marks) {
          PhaseRanges phases(marks);
          marks.push(kStepRange);
          update_skipped = tr.step(&phases).skipped || update_skipped;
          marks.pop();
        });
    if (update_skipped)
      throw Error(name +
                  ": a profiled step skipped its update (Inf/NaN gradients), so its optimizer "
                  "range held no work");
    (void)got.at(kStepRange);
    for (ts::StepPhase p : ts::kStepPhases)
      if (!got.at(phase_range_path(p)).value(counters::tensor_active_pct.name))
        throw Error(name + ": the " + std::string(ts::name(p)) + " range has no tensor_active_pct");
    return got;
  });
  const std::optional<std::string> skipped = note_of(st, read);
  if (read.values) {
    const profiling::RangeCounters& rc = *read.values;
    for (const profiling::CounterValue& v : rc.at(kStepRange).values)
      set_counter(st, counter_for_metric(v.counter), v.value);
    set_counter(st, counters::profile_passes, static_cast<double>(rc.passes));
    ts::PerPhase<double> phase_pct{};
    for (ts::StepPhase p : ts::kStepPhases) {
      const double v = *rc.at(phase_range_path(p)).value(counters::tensor_active_pct.name);
      phase_pct[ts::index(p)] = v;
      set_counter(st, counters::tensor_active_in(ts::name(p)), v);
    }
    set_counter(st, counters::step_tensor_mix_pct, ts::time_weighted_mix(shares, phase_pct));
    set_counter(st, counters::gemm_phases_ceiling_pct, ts::gemm_phases_ceiling(shares, phase_pct));
  }
  st.SetLabel(with_counter_note(std::string(path.label) + "; " + first.gemm_impl, skipped));
}

void add_train_steps(const Env& env) {
  for (const ts::TrainingConfig& cfg : step_widths())
    for (const StepPath& path : kStepPaths) {
      const std::string name = BenchName(kTopic, "train_step", path.precision)
                                   .arg(Key::hidden, cfg.hidden)
                                   .arg(Key::tokens, cfg.batch);
      register_gpu_benchmark(name, [&env, cfg, &path, name](benchmark::State& st) {
        train_step(st, env, cfg, path, name);
      });
    }
}

}  // namespace

TopicHelp topic_help() {
  return {
      "Whether a high sm__pipe_tensor_cycles_active means the Tensor Cores are heavily used: "
      "the counter, read in-process through CUPTI after each GEMM is timed, beside TFLOP/s "
      "and % of peak, from a SIMT FP32 kernel (no tensor work) through WMMA to cuBLASLt "
      "TF32/FP16/BF16/INT8/FP8, a small GEMM and the STREAM triad.",
      "docs/concepts/tensor-util.md",
      "TCBENCH_COUNTERS=off  time without reading the tensor-pipe counters (tcbench profile "
      "sets it so that ncu owns them)"};
}

void register_topic(const Env& env) {
  const GemmShape s = large(env.quick());
  add_profiled(env, "simt", P::fp32, s, labelled_case("SIMT FFMA"),
               own_kernel(typed<P::fp32>(kernels::gemm_simt_fp32)));
  add_profiled(env, "wmma", P::fp16, s, labelled_case("WMMA (HMMA) fp32 acc"),
               own_kernel(typed<P::fp16>(kernels::gemm_wmma<__half>),
                          [](const GpuSpec& g, const GemmCase& c) {
                            return kernels::wmma_unsupported_reason(g.cc_major, g.cc_minor,
                                                                    c.precision, c.spec.problem);
                          }));
  for (P p : {P::tf32, P::fp16, P::bf16, P::int8, P::fp8}) add_profiled(env, "cublaslt", p, s);
  add_profiled(env, "cublaslt_small", P::fp16, kSmall);
  add_memory(env, env.quick());
  add_train_steps(env);
}

}  // namespace tcbench::bench
