// tcbench_metrics: prints, as JSON, the hardware metrics tcbench reads on a chip, so that
// `tcbench profile` asks Nsight Compute for exactly the list the benchmarks collect in-process.
//
//   tcbench_metrics                 the current GPU's chip (needs a GPU)
//   tcbench_metrics --chip GH100    any chip in the table (no GPU needed)
//
// Exit codes: 0 printed; 2 bad arguments or a chip the table does not know; 77 no GPU.
#include "tcbench/device_info.hpp"
#include "tcbench/profiling/availability.hpp"
#include "tcbench/profiling/metric_table.hpp"
#include "tcbench/profiling/range_profiler.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

namespace {

constexpr int kUsage = 2, kNoDevice = 77;

void print_json(const tcbench::profiling::ChipMetrics& cm) {
  std::printf("{\"chip\": \"%.*s\", \"family\": \"%.*s\", \"metrics\": [",
              static_cast<int>(cm.chip.size()), cm.chip.data(), static_cast<int>(cm.family.size()),
              cm.family.data());
  for (std::size_t i = 0; i < cm.metrics.size(); ++i) {
    const auto& m = cm.metrics[i];
    std::printf("%s{\"counter\": \"%.*s\", \"name\": \"%.*s\"}", i ? ", " : "",
                static_cast<int>(m.counter.size()), m.counter.data(),
                static_cast<int>(m.name.size()), m.name.data());
  }
  std::printf("]}\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string chip;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--chip" && i + 1 < argc) {
      chip = argv[++i];
    } else {
      std::fprintf(stderr, "usage: tcbench_metrics [--chip NAME]\n");
      return kUsage;
    }
  }
  try {
    if (chip.empty()) {
      (void)tcbench::require_device();
      chip = tcbench::profiling::current_device_chip();
    }
    const auto table = tcbench::profiling::metrics_for_chip(chip);
    if (!table) {
      std::fprintf(stderr, "tcbench_metrics: %s.\n",
                   tcbench::profiling::unknown_chip_reason(chip).c_str());
      return kUsage;
    }
    print_json(*table);
    return 0;
  } catch (const tcbench::NoDevice& e) {
    std::fprintf(stderr, "tcbench_metrics: no CUDA GPU is visible (%s).\n", e.what());
    return kNoDevice;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tcbench_metrics: %s\n", e.what());
    return 1;
  }
}
