// A benchmark binary that needs no GPU, for tests/scripts/test_row_file.py: the harness's command
// line, registration and reporters (the row file beside --benchmark_out), with bodies that sleep
// instead of measuring, so a test can stop it in the middle of a run and check what it kept.
//
//   tcbench_row_probe --probe-rows=N --probe-ms=M [Google Benchmark / tcbench flags]
//
// Row i is "probe/sleep/fp32/elements:<i>": it sleeps M ms once per body call, reports M ms as
// its time and i + 1 as its gbps.
#include "tcbench/bench/flags.hpp"
#include "tcbench/bench/measure.hpp"
#include "tcbench/bench/registry.hpp"
#include "tcbench/bench/reporter.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  using namespace tcbench;
  int rows = 10, ms = 50;
  std::vector<std::string> args;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--probe-rows=", 0) == 0)
      rows = std::atoi(a.c_str() + 13);
    else if (a.rfind("--probe-ms=", 0) == 0)
      ms = std::atoi(a.c_str() + 11);
    else
      args.push_back(a);
  }
  const bench::ParseResult parsed = bench::parse_command_line(args);
  if (parsed.error) {
    std::fprintf(stderr, "tcbench_row_probe: %s\n", parsed.error->c_str());
    return 2;
  }
  std::vector<std::string> pass = parsed.line.passthrough;
  std::vector<char*> gbench_argv;
  for (std::string& a : pass) gbench_argv.push_back(a.data());
  int gbench_argc = static_cast<int>(gbench_argv.size());
  benchmark::Initialize(&gbench_argc, gbench_argv.data());
  if (parsed.line.filter) bench::set_name_filter(*parsed.line.filter);
  for (int i = 0; i < rows; ++i) {
    const std::string name = "probe/sleep/fp32/elements:" + std::to_string(i);
    bench::register_gpu_benchmark(name, [i, ms](benchmark::State& st) {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      bench::report_precomputed(st, ms * 1e-3);
      bench::set_counter(st, counters::gbps, i + 1.0);
    });
  }
  bench::run_benchmarks(parsed.line);
  benchmark::Shutdown();
  return 0;
}
