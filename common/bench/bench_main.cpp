// The main() of every benchmark binary.
#include "tcbench/bench.hpp"

#include <cstdio>
#include <cstring>
#include <string>

// A Debug benchmark measures the compiler, not the GPU. CMake already refuses to add benchmarks
// to unoptimized builds; this catches any other way of building them.
#if !defined(__OPTIMIZE__)
#error "tcbench benchmarks must be built with optimization (use the release, ci or dev preset)"
#endif

#ifndef TCBENCH_VERSION
#define TCBENCH_VERSION "unknown"
#endif
#ifndef TCBENCH_GIT_SHA
#define TCBENCH_GIT_SHA "unknown"
#endif

namespace {
// Removes `flag` from argv (Google Benchmark rejects flags it does not know); true if present.
bool take_flag(int& argc, char** argv, const char* flag) {
  bool found = false;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], flag) == 0) {
      found = true;
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  return found;
}
}  // namespace

int main(int argc, char** argv) {
  const std::string program = argc > 0 ? argv[0] : "tcbench";
  const bool quick = take_flag(argc, argv, "--quick");
  benchmark::Initialize(&argc, argv);  // --help works without a GPU
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  try {
    const tcbench::DeviceInfo device = tcbench::require_device();
    benchmark::AddCustomContext("tcbench_version", TCBENCH_VERSION);
    benchmark::AddCustomContext("git_sha", TCBENCH_GIT_SHA);
    benchmark::AddCustomContext("tcbench_quick", quick ? "true" : "false");
    for (const auto& [key, value] : device.context()) benchmark::AddCustomContext(key, value);

    tcbench::bench::register_topic(tcbench::bench::Env{device, quick});
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  } catch (const tcbench::NoDevice& e) {
    std::fprintf(stderr, "%s: %s; nothing to measure.\n", program.c_str(), e.what());
    return 77;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program.c_str(), e.what());
    return 1;
  }
  const int errors = tcbench::bench::error_count();
  if (errors > 0) {
    std::fprintf(stderr, "%s: %d benchmark(s) failed; see the messages above.\n", program.c_str(),
                 errors);
    return 1;
  }
  return 0;
}
