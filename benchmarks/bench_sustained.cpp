// sustained: burst and sustained, what a GEMM gets in its first moments after idle and what a
// training job gets once the power cap bites.
//
// Each headline GEMM (cuBLASLt BF16, FP16, TF32, FP8 and INT8 at 8192^3, compute-bound on every
// GPU tcbench targets) and each wgmma (Hopper) and tcgen05 pair (datacenter Blackwell) peak
// kernel of those precisions has two rows, named regime:burst and regime:sustained. Both wait
// until NVML reads the idle GPU's clock and power flat; burst then times the first launches,
// sustained launches back to back until the steady-state rule holds and times 2 s after it
// (tcbench/bench/regime.hpp, docs/concepts/sustained.md). Every row carries the SM clock,
// power, temperature and reasons NVML saw in its window, the energy, and the clock policy as
// found; a sustained row also carries how long it took to settle and its clock and power trace.
// Published context: cuBLAS BF16 on an H200 at its 700 W cap, ~700 TFLOP/s sustained against
// ~760 burst, with clocks at 1.2-1.4 GHz (tile-ai/TileOPs, src/tileops/perf/profiles/h200.yaml).
// --quick skips every row: each takes seconds of idle and up to TCBENCH_SUSTAINED_LIMIT_S of load.
//
//   build/release/bin/bench_sustained --benchmark_filter=cublaslt/bf16/
//   TCBENCH_SUSTAINED_LIMIT_S=20 build/release/bin/bench_sustained
#include "tcbench/bench/harness.hpp"
#include "tcbench/kernels/tensor_peak.hpp"
#include "tensor_peak_rows.hpp"

#include <memory>
#include <string>
#include <vector>

namespace tcbench::bench {
namespace {

constexpr std::string_view kTopic = "sustained";
using P = Precision;
using kernels::PeakInstr;

// BF16 first: gpu_check's budget reaches it before the others.
constexpr P kGemmPrecisions[] = {P::bf16, P::fp16, P::tf32, P::fp8, P::int8};
constexpr GemmShape kShape{8192, 8192, 8192};
// The tensor-peak kernels of the same precisions: wgmma on Hopper, tcgen05 CTA pairs on
// datacenter Blackwell (elsewhere each row skips with its kernel's sentence).
constexpr PeakInstr kPeaks[] = {
    PeakInstr::wgmma_bf16_f32, PeakInstr::wgmma_f16_f32, PeakInstr::wgmma_e4m3_f32,
    PeakInstr::wgmma_s8_s32,   PeakInstr::tc2_bf16,      PeakInstr::tc2_f16,
    PeakInstr::tc2_tf32,       PeakInstr::tc2_e4m3,      PeakInstr::tc2_s8};
constexpr Regime kRegimes[] = {Regime::burst, Regime::sustained};
// One peak launch: long enough for the in-kernel clock, short enough for a burst of 10.
constexpr double kPeakLaunchSeconds = 0.002;

void skip_in_quick(const Env& env) {
  if (env.quick())
    throw Skipped(
        "--quick skips the burst and sustained rows: each idles the GPU for seconds "
        "and loads it for up to TCBENCH_SUSTAINED_LIMIT_S (60 s); run without --quick");
}

void add_gemm(const Env& env, P p, Regime regime) {
  GemmCase probe = GemmCase::for_precision(p, kShape.m, kShape.n, kShape.k);
  const std::string name = BenchName(kTopic, "cublaslt", p)
                               .gemm(probe.spec.problem)
                               .arg(Key::regime, bench::name(regime));
  register_gpu_benchmark(name, [&env, p, regime](benchmark::State& st) {
    skip_in_quick(env);
    GemmCase c = GemmCase::for_precision(p, kShape.m, kShape.n, kShape.k);
    c.timing.regime = regime;
    run_cublaslt(st, env, c);
  });
}

void add_peak(const Env& env, PeakInstr instr, Regime regime) {
  const kernels::PeakInstrInfo& info = kernels::info(instr);
  const std::string name =
      BenchName(kTopic, info.variant, info.precision).arg(Key::regime, bench::name(regime));
  register_gpu_benchmark(name, [&env, instr, regime](benchmark::State& st) {
    skip_in_quick(env);
    const std::unique_ptr<PeakRun> peak_run = prepare_peak_run(env, instr, kPeakLaunchSeconds);
    const PeakRun& r = *peak_run;
    const kernels::PeakInstrInfo& i = r.info;
    const auto run = [&](cudaStream_t s) { r.enqueue(s); };
    MeasureOptions options;
    options.flush_l2 = false;
    options.regime = regime;
    // The last timed launch's own clock (clock64 over %globaltimer, mean over blocks), beside
    // NVML's.
    options.read_after = [&] { return r.measured_mhz(env.stream()); };
    const Window w = measure_window(st, env, run, options);
    report_compute(st, env, i.precision, kernels::peak_ops(instr, r.launch), w.seconds);
    if (w.read_after) set_counter(st, counters::clock_mhz_measured, *w.read_after);
    st.SetLabel(with_regime(std::string(i.ptx), w.regime));
  });
}

}  // namespace

TopicHelp topic_help() {
  return {
      "Burst and sustained: what a GEMM gets in its first moments after idle, and what a "
      "training job gets once the power cap bites. cuBLASLt BF16, FP16, TF32, FP8 and INT8 at "
      "8192^3, and the wgmma and tcgen05 peak kernels, each timed as a burst after the GPU idles "
      "and as a sustained window after the clock and power settle (or a limit passes), with the "
      "clock, power, temperature, throttle reasons and energy NVML saw. --quick skips them.",
      "docs/concepts/sustained.md",
      "TCBENCH_SUSTAINED_LIMIT_S=60  the longest a sustained row loads the GPU looking for its "
      "steady state (4 to 3600 s)\n"
      "TCBENCH_IDLE_LIMIT_S=10  the longest each row waits for the GPU to idle first (2 to 600 s; "
      "never longer than the sustained limit)"};
}

void register_topic(const Env& env) {
  for (P p : kGemmPrecisions)
    for (Regime r : kRegimes) add_gemm(env, p, r);
  for (PeakInstr instr : kPeaks)
    for (Regime r : kRegimes) add_peak(env, instr, r);
}

}  // namespace tcbench::bench
