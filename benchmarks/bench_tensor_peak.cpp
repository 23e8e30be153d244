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

#include <algorithm>
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

// Loop trips for a launch of about `seconds` at the model's peak rate (at least 64: the
// in-kernel clock needs a loop long enough to dwarf its own two reads).
std::int64_t trips_for(PeakInstr instr, int blocks, double peak_tflops, double seconds) {
  const kernels::PeakLaunch one{blocks, 1};
  const double ops_per_trip = kernels::peak_ops(instr, one) - kernels::peak_ops(instr, {blocks, 0});
  const double rate = peak_tflops > 0 ? peak_tflops * 1e12 : 100e12;
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(seconds * rate / ops_per_trip), 64,
                                  std::int64_t{1} << 24);
}

// Mean SM clock over the blocks of the last launch into `clocks`: cycles / nanoseconds, in MHz.
double measured_mhz(const DeviceBuffer<kernels::PeakClocks>& clocks, cudaStream_t stream) {
  double sum = 0;
  int n = 0;
  for (const kernels::PeakClocks& c : clocks.download(stream))
    if (c.nanos > 0) {
      sum += 1e3 * static_cast<double>(c.cycles) / static_cast<double>(c.nanos);
      ++n;
    }
  if (n == 0) throw Error("the tensor-peak kernel recorded no clock (every block read 0 ns)");
  return sum / n;
}

void add_peak(const Env& env, PeakInstr instr) {
  register_gpu_benchmark(peak_name(instr), [&env, instr](benchmark::State& st) {
    const DeviceInfo& dev = env.device();
    const kernels::PeakInstrInfo& info = kernels::info(instr);
    env.skip_unless(kernels::peak_unsupported_reason(instr, dev.spec.cc_major, dev.spec.cc_minor));
    env.skip_unless(kernels::peak_build_reason(instr));
    const Peak peak = dev.peak(info.precision);
    const int blocks = kernels::peak_blocks(instr, dev.spec.sm_count);
    if (blocks < 1)
      throw Error("the occupancy calculator fits no block of " + std::string(info.ptx) +
                  " on an SM");

    const std::vector<std::uint8_t> a = kernels::peak_input_a(instr);
    const std::vector<std::uint8_t> b = kernels::peak_input_b(instr);
    DeviceBuffer<std::uint8_t> da(a.size()), db(b.size());
    da.upload(a, env.stream());
    db.upload(b, env.stream());

    // Correctness first: a short loop whose every accumulator is known exactly (and stays inside
    // its accumulator's exact range: check_peak_output refuses a launch that would not). Its
    // clocks go to a buffer of their own: the reported clock is the timed launches' alone.
    const kernels::PeakLaunch check_launch{blocks, kernels::kPeakCheckTrips};
    {
      DeviceBuffer<std::uint8_t> out(kernels::peak_out_bytes(instr, check_launch));
      DeviceBuffer<kernels::PeakClocks> check_clocks(static_cast<std::size_t>(blocks));
      TCB_CUDA(cudaMemsetAsync(out.get(), 0xFF, out.bytes(), env.stream()));  // NaN
      kernels::launch_tensor_peak(
          instr, check_launch, {da.get(), db.get(), out.get(), check_clocks.get()}, env.stream());
      const kernels::PeakCheck check =
          kernels::check_peak_output(instr, check_launch, out.download(env.stream()));
      if (check.mismatches != 0)
        throw Error(std::string(info.ptx) + ": " + std::to_string(check.mismatches) + " of " +
                    std::to_string(check.checked) + " accumulators wrong, first " + check.first);
    }

    const double per_clock = kernels::peak_ops_per_clock_per_sm(
        instr, dev.spec.cc_major, dev.spec.cc_minor, is_geforce(dev.spec.name));
    // SMs x the device's maximum clock x the instruction's own rate (its kind's, else its
    // precision's): what the loop is sized by and what pct_of_max_clock_model divides by.
    const double max_clock_model =
        dev.spec.sm_count * dev.spec.sm_clock_mhz * 1e6 * per_clock / 1e12;
    const kernels::PeakLaunch launch{
        blocks, trips_for(instr, blocks, max_clock_model, env.quick() ? 0.002 : 0.01)};
    DeviceBuffer<std::uint8_t> out(kernels::peak_out_bytes(instr, launch));
    DeviceBuffer<kernels::PeakClocks> clocks(static_cast<std::size_t>(blocks));
    const kernels::PeakBuffers buffers{da.get(), db.get(), out.get(), clocks.get()};
    // Every runtime query (and tcgen05's cudaFuncSetAttribute) before the first event: a timed
    // launch only enqueues.
    const kernels::PeakPrepared prepared = kernels::prepare_tensor_peak(instr, launch);
    const auto run = [&](cudaStream_t s) { kernels::enqueue_tensor_peak(prepared, buffers, s); };
    // Registers only: no memory traffic for an L2 flush to matter. The clock is read right after
    // the last timed launch and kept with the window, which Google Benchmark's later sizing calls
    // reuse without launching (measure_window).
    MeasureOptions options;
    options.flush_l2 = false;
    options.read_after = [&] { return measured_mhz(clocks, env.stream()); };
    const Window w = measure_window(st, env, run, options);
    const SampleStats& t = w.seconds;
    const double ops = kernels::peak_ops(instr, launch);
    report_compute(st, env, info.precision, ops, t);

    const double achieved = ops / t.median / 1e12;  // TFLOP/s (TOP/s)
    const double mhz = *w.read_after;
    set_counter(st, counters::clock_mhz_measured, mhz);
    set_counter(st, counters::clock_mhz_attribute, dev.spec.sm_clock_mhz);
    set_counter(st, counters::instructions, kernels::peak_instructions(instr, launch));
    if (per_clock > 0) {
      const double at_measured = dev.spec.sm_count * mhz * 1e6 * per_clock / 1e12;
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
