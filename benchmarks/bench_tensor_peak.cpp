// tensor_peak: what the tensor instructions themselves can do, the ceiling every other topic's
// pct_of_peak is read against.
//
// Own kernels that issue nothing but one tensor instruction in a loop (kernels/tensor_peak*.cu),
// one generation after another: mma.sync for f16 (f32 and f16 accumulate), bf16, tf32, s8 and
// (sm_89+) e4m3; on Hopper wgmma m64n256 for f16, bf16, e4m3 and s8; on GeForce Blackwell (12.x)
// mma.sync's FP8/FP6/FP4 kinds and their block-scaled forms; on datacenter Blackwell (10.0, 10.3)
// tcgen05.mma of every kind (f16, bf16, tf32, f8f6f4 with E4M3/E5M2/E2M3/E3M2/E2M1, i8 on 10.0,
// mxf8f6f4, NVFP4 and MXFP4) on one CTA and on a pair (cta_group::2). Every other GPU lists those
// rows and skips them with one sentence. Every kernel's accumulators are checked exactly against
// the host before it is timed. Counters: tflops (tops), pct_of_peak (the datasheet for known
// products, else the max-clock model), pct_of_clock_model (SMs x the clock measured in-kernel
// with clock64() x ops/clock), pct_of_max_clock_model (SMs x cudaDevAttrClockRate x ops/clock),
// pct_of_datasheet, clock_mhz_measured, clock_mhz_attribute, and the tensor-pipe counters. The
// ops/clock is the instruction's own where its kind has a row in the instruction-rate table
// (tcbench/instruction_rates.hpp: tcgen05 .kind::f8f6f4 runs FP4 at the FP8 rate), else its
// precision's. Published context: wgmma FP16 reached 96.4% of peak on an H800 and mma.sync only
// about 63-65% (Luo et al., arXiv 2501.12084).
//
//   build/release/bin/bench_tensor_peak
//   build/release/bin/bench_tensor_peak --benchmark_filter=tcgen05
#include "tcbench/bench/harness.hpp"
#include "tcbench/kernels/tensor_peak.hpp"
#include "tensor_counters.hpp"
#include "tensor_peak_rows.hpp"

#include <memory>
#include <string>
#include <vector>

namespace tcbench::bench {
namespace {

using kernels::PeakInstr;

constexpr std::string_view kTopic = "tensor_peak";

std::string peak_name(PeakInstr instr) {
  const kernels::PeakInstrInfo& i = kernels::info(instr);
  return BenchName(kTopic, i.variant, i.precision);
}

void add_peak(const Env& env, PeakInstr instr) {
  register_gpu_benchmark(peak_name(instr), [&env, instr](benchmark::State& st) {
    const DeviceInfo& dev = env.device();
    const std::unique_ptr<PeakRun> peak_run =
        prepare_peak_run(env, instr, env.quick() ? 0.002 : 0.01);
    const PeakRun& r = *peak_run;
    const kernels::PeakInstrInfo& info = r.info;
    const Peak peak = dev.peak(info.precision);
    const auto run = [&](cudaStream_t s) { r.enqueue(s); };
    // Registers only: no memory traffic for an L2 flush to matter. The clock is read right after
    // the last timed launch and kept with the window, which Google Benchmark's later sizing calls
    // reuse without launching (measure_window).
    MeasureOptions options;
    options.flush_l2 = false;
    options.read_after = [&] { return r.measured_mhz(env.stream()); };
    const Window w = measure_window(st, env, run, options);
    const SampleStats& t = w.seconds;
    const double ops = kernels::peak_ops(instr, r.launch);
    report_compute(st, env, info.precision, ops, t);

    const double achieved = ops / t.median / 1e12;  // TFLOP/s (TOP/s)
    const double mhz = *w.read_after;
    // SMs x the device's maximum clock x the instruction's own rate (its kind's, else its
    // precision's): what the loop is sized by and what pct_of_max_clock_model divides by.
    const double max_clock_model = r.max_clock_rate / 1e12;
    set_counter(st, counters::clock_mhz_measured, mhz);
    set_counter(st, counters::clock_mhz_attribute, dev.spec.sm_clock_mhz);
    set_counter(st, counters::instructions, kernels::peak_instructions(instr, r.launch));
    if (r.per_clock > 0) {
      const double at_measured = dev.spec.sm_count * mhz * 1e6 * r.per_clock / 1e12;
      set_counter(st, counters::pct_of_clock_model, 100.0 * achieved / at_measured);
      set_counter(st, counters::pct_of_max_clock_model, 100.0 * achieved / max_clock_model);
    }
    if (peak.datasheet)
      set_counter(st, counters::pct_of_datasheet, 100.0 * achieved / *peak.datasheet);
    st.SetLabel(with_counter_note(std::string(info.ptx) + "; clock of the last timed launch",
                                  add_tensor_counters(st, env, peak_name(instr), run, 1)));
  });
}

}  // namespace

TopicHelp topic_help() {
  return {
      "What the tensor instructions themselves can do, generation by generation: kernels "
      "issuing only mma.sync (f16, bf16, tf32, s8; e4m3 on sm_89 and later; FP8/FP6/FP4 and "
      "block-scaled kinds on GeForce Blackwell), wgmma on Hopper and tcgen05.mma on datacenter "
      "Blackwell (one CTA and a pair), each checked exactly against the host, measured against "
      "SMs x measured clock x ops per clock and against the datasheet: the ceiling the other "
      "topics' % of peak is read against.",
      "docs/concepts/tensor-util.md",
      "TCBENCH_COUNTERS=off  time without reading the tensor-pipe counters (tcbench profile "
      "sets it so that ncu owns them)"};
}

void register_topic(const Env& env) {
  for (PeakInstr instr : kernels::kAllPeakInstrs) add_peak(env, instr);
}

}  // namespace tcbench::bench
