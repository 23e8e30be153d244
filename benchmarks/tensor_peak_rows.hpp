// A tensor-peak kernel made ready to time, shared by bench_tensor_peak (the instructions' ceiling)
// and bench_sustained (the same kernels as a burst and at the steady state): the skips, the exact
// check before timing, a launch sized for the clock model, and the in-kernel clock of the last
// timed launch. One home, so both topics time the same thing the same way.
#pragma once

#include "tcbench/bench/harness.hpp"
#include "tcbench/kernels/tensor_peak.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tcbench::bench {

// Loop trips for a launch of about `seconds` at `rate_ops` operations per second (SMs x max
// clock x the instruction's rate; 100 T/s when unknown), at least 64: the in-kernel clock needs a
// loop long enough to dwarf its own two reads.
inline std::int64_t peak_trips_for(kernels::PeakInstr instr, int blocks, double rate_ops,
                                   double seconds) {
  const double per_trip =
      kernels::peak_ops(instr, {blocks, 1}) - kernels::peak_ops(instr, {blocks, 0});
  const double rate = rate_ops > 0 ? rate_ops : 100e12;
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(seconds * rate / per_trip), 64,
                                  std::int64_t{1} << 24);
}

// Mean SM clock over the blocks of the last launch into `clocks`: cycles / nanoseconds, in MHz.
inline double peak_measured_mhz(const DeviceBuffer<kernels::PeakClocks>& clocks,
                                cudaStream_t stream) {
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

// One peak kernel on this GPU, checked and sized; `enqueue` is what a timed sample runs (every
// runtime query and tcgen05's cudaFuncSetAttribute happen here, before the first event).
struct PeakRun {
  const kernels::PeakInstrInfo& info;
  kernels::PeakLaunch launch;
  double per_clock = 0;       // ops per clock per SM of the instruction's kind
  double max_clock_rate = 0;  // SMs x the device's maximum clock x per_clock, ops/s
  DeviceBuffer<std::uint8_t> a, b, out;
  DeviceBuffer<kernels::PeakClocks> clocks;  // the timed launches' clocks only
  kernels::PeakPrepared prepared;

  void enqueue(cudaStream_t s) const {
    kernels::enqueue_tensor_peak(prepared, {a.get(), b.get(), out.get(), clocks.get()}, s);
  }
  double measured_mhz(cudaStream_t s) const { return peak_measured_mhz(clocks, s); }
};

// Skips (one sentence) where the instruction or its build is missing; then correctness first: a
// short loop whose every accumulator is known exactly, outputs poisoned, clocks in a buffer of
// their own; then a launch of about `seconds` at the max-clock model.
inline std::unique_ptr<PeakRun> prepare_peak_run(const Env& env, kernels::PeakInstr instr,
                                                 double seconds) {
  const DeviceInfo& dev = env.device();
  const kernels::PeakInstrInfo& info = kernels::info(instr);
  env.skip_unless(kernels::peak_unsupported_reason(instr, dev.spec.cc_major, dev.spec.cc_minor));
  env.skip_unless(kernels::peak_build_reason(instr));
  const int blocks = kernels::peak_blocks(instr, dev.spec.sm_count);
  if (blocks < 1)
    throw Error("the occupancy calculator fits no block of " + std::string(info.ptx) + " on an SM");
  const std::vector<std::uint8_t> ha = kernels::peak_input_a(instr);
  const std::vector<std::uint8_t> hb = kernels::peak_input_b(instr);
  DeviceBuffer<std::uint8_t> da(ha.size()), db(hb.size());
  da.upload(ha, env.stream());
  db.upload(hb, env.stream());
  {
    const kernels::PeakLaunch check_launch{blocks, kernels::kPeakCheckTrips};
    DeviceBuffer<std::uint8_t> out(kernels::peak_out_bytes(instr, check_launch));
    DeviceBuffer<kernels::PeakClocks> check_clocks(static_cast<std::size_t>(blocks));
    TCB_CUDA(cudaMemsetAsync(out.get(), 0xFF, out.bytes(), env.stream()));  // NaN
    kernels::launch_tensor_peak(instr, check_launch,
                                {da.get(), db.get(), out.get(), check_clocks.get()}, env.stream());
    const kernels::PeakCheck check =
        kernels::check_peak_output(instr, check_launch, out.download(env.stream()));
    if (check.mismatches != 0)
      throw Error(std::string(info.ptx) + ": " + std::to_string(check.mismatches) + " of " +
                  std::to_string(check.checked) + " accumulators wrong, first " + check.first);
  }
  const double per_clock = kernels::peak_ops_per_clock_per_sm(
      instr, dev.spec.cc_major, dev.spec.cc_minor, is_geforce(dev.spec.name));
  const double max_clock_rate = dev.spec.sm_count * dev.spec.sm_clock_mhz * 1e6 * per_clock;
  const kernels::PeakLaunch launch{blocks, peak_trips_for(instr, blocks, max_clock_rate, seconds)};
  DeviceBuffer<std::uint8_t> out(kernels::peak_out_bytes(instr, launch));
  DeviceBuffer<kernels::PeakClocks> clocks(static_cast<std::size_t>(blocks));
  const kernels::PeakPrepared prepared = kernels::prepare_tensor_peak(instr, launch);
  return std::unique_ptr<PeakRun>(new PeakRun{info, launch, per_clock, max_clock_rate,
                                              std::move(da), std::move(db), std::move(out),
                                              std::move(clocks), prepared});
}

}  // namespace tcbench::bench
