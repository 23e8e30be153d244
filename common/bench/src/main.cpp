// The main() of every benchmark binary (compiled into each bench_<topic>).
#include "tcbench/bench/flags.hpp"
#include "tcbench/bench/harness.hpp"
#include "tcbench/bench/help.hpp"
#include "tcbench/bench/plan.hpp"
#include "tcbench/bench/registry.hpp"
#include "tcbench/bench/reporter.hpp"
#include "tcbench/clock_policy.hpp"
#include "tcbench/device_info.hpp"
#include "tcbench/environment.hpp"

#include <cstdio>
#include <string>
#include <vector>

// A Debug benchmark measures the compiler, not the GPU. CMake already refuses to add benchmarks
// to unoptimized builds; this catches any other way of building them.
#if !defined(__OPTIMIZE__)
#error "tcbench benchmarks must be built with optimization (use the release, ci or dev preset)"
#endif

namespace {

tcbench::bench::RunOptions run_options(const tcbench::bench::CommandLine& line) {
  tcbench::bench::RunOptions o;
  o.quick = line.quick;
  o.sampling.min_seconds = line.min_time_seconds.value_or(
      line.quick ? tcbench::bench::kQuickMinSeconds : tcbench::bench::kDefaultMinSeconds);
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tcbench;
  const std::string program = tcbench::printable(argc > 0 ? argv[0] : "tcbench");
  const bench::ParseResult parsed =
      bench::parse_command_line(std::vector<std::string>(argv, argv + argc));
  if (parsed.error) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), printable(*parsed.error).c_str());
    return 2;
  }
  if (parsed.line.help) {
    // tcbench's part first; then Google Benchmark prints its flags for the --help passed on.
    std::fputs(bench::help_text(program, bench::topic_help()).c_str(), stdout);
    std::fflush(stdout);
  }
  std::vector<std::string> args = parsed.line.passthrough;
  std::vector<char*> gbench_argv;
  for (std::string& a : args) gbench_argv.push_back(a.data());
  int gbench_argc = static_cast<int>(gbench_argv.size());
  benchmark::Initialize(&gbench_argc, gbench_argv.data());  // --help works without a GPU
  if (parsed.line.help) return 0;  // Google Benchmark 1.7 exits itself after its usage
  if (benchmark::ReportUnrecognizedArguments(gbench_argc, gbench_argv.data())) return 2;

  // Every TCBENCH_* variable a binary reads, checked before anything runs, GPU or not.
  if (const auto why = environment::problem()) {
    std::fprintf(stderr, "%s: %s.\n", program.c_str(), why->c_str());
    return 2;
  }
  if (parsed.line.filter) bench::set_name_filter(*parsed.line.filter);

  const bench::RunOptions options = run_options(parsed.line);
  const ClockPolicy policy = parsed.line.clock_policy;
  // Google Benchmark's own words (1.7) when the filter leaves nothing, then nothing to do.
  const auto nothing_matched = [&] {
    if (bench::registered_count() > 0 || !parsed.line.filter) return false;
    std::fprintf(stderr, "Failed to match any benchmarks against regex: %s\n",
                 printable(parsed.line.filter->spec()).c_str());
    return true;
  };
  try {
    if (parsed.line.plan) {
      // Each selected row's estimated seconds (plan.hpp), as JSON lines, for the GPU named
      // (--plan=H200: no device needed) or else this machine's; nothing runs.
      std::optional<DeviceInfo> device;
      std::optional<NamedGpu> gpu;
      if (parsed.line.plan_gpu) {
        gpu = named_gpu(*parsed.line.plan_gpu);
      } else {
        try {
          device.emplace(require_device());
        } catch (const NoDevice& e) {
          std::fprintf(stderr, "%s: %s; without one, name the GPU to plan for: --plan=H200 (%s).\n",
                       program.c_str(), e.what(), named_gpu_names().c_str());
          return 77;
        }
        gpu = bench::plan_gpu_of(device->spec);
      }
      const bench::Env env(options);
      bench::register_topic(env);
      benchmark::Shutdown();
      if (nothing_matched()) return 0;
      std::fputs(bench::plan_jsonl(bench::registered_names(), *gpu, options.sampling,
                                   parsed.line.repetitions)
                     .c_str(),
                 stdout);
      return 0;
    }
    // Before any thread starts (CUDA's, the power sampler's): they inherit the blocked signals,
    // so a SIGINT or SIGTERM reaches the thread that unlocks the clocks.
    if (policy != ClockPolicy::as_is && !parsed.line.list_tests) restore_clocks_on_signals();
    if (parsed.line.list_tests) {
      // Names only: no GPU needed, so users and CI can see and filter the suite anywhere. With
      // --benchmark_format=json, the names with their typed arguments and the schema.
      const bench::Env env(options);
      bench::register_topic(env);
      if (!nothing_matched()) {
        if (parsed.line.display_format == "json")
          std::fputs(bench::listing_json().c_str(), stdout);
        else
          benchmark::RunSpecifiedBenchmarks();
      }
      benchmark::Shutdown();
      return 0;
    }
    DeviceInfo device = require_device();
    // Held until every benchmark has run; unlocks the clocks when it ends, however it ends.
    const ClockLock clocks(policy, device.nvml, device.power.nvml);
    if (policy != ClockPolicy::as_is)
      std::fprintf(stderr, "%s: %s.\n", program.c_str(), clocks.note().c_str());
    device.power.set_clock_policy(clocks);
    bench::Env env(options, std::move(device));
    for (const auto& [key, value] : run_context(env.device(), options.quick))
      benchmark::AddCustomContext(key, value);
    bench::register_topic(env);
    // With --benchmark_out, every finished benchmark also goes to the row file beside it at
    // once (reporter.hpp): a run cut short keeps what it finished.
    if (!nothing_matched()) bench::run_benchmarks(parsed.line);
    benchmark::Shutdown();
  } catch (const NoDevice& e) {
    std::fprintf(stderr, "%s: %s; nothing to measure.\n", program.c_str(), e.what());
    return 77;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program.c_str(), e.what());
    return 1;
  }
  const int errors = bench::error_count();
  if (errors > 0) {
    std::fprintf(stderr, "%s: %d benchmark(s) failed; see the messages above.\n", program.c_str(),
                 errors);
    return 1;
  }
  return 0;
}
