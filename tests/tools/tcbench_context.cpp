// Prints, without a GPU, what tcbench's C++ writes into every result file, so that the Python
// side (fixtures, tools' tests) is checked against the one real source of the schema.
//
//   tcbench_context [--name N] [--cc 9.0] [--sms 132] [--sm-clock 1980] [--mem-clock 2619]
//                   [--bus 5120] [--l2 52428800] [--driver 13000] [--runtime 13000]
//                   [--cublaslt 130000] [--quick]      -> the run context as a JSON object
//   tcbench_context --compute-capabilities            -> "7.5;8.0;..." (the peak table's)
//   tcbench_context --schema                          -> names, precisions, counters (JSON)
//   tcbench_context --peak-loops                      -> per tensor-peak kernel, the tensor
//       instructions one loop trip issues per warp (mma.sync), warpgroup (wgmma) or CTA group
//       (tcgen05: the issuing thread of a CTA or of a pair), as the FLOP count
//       (kernels::peak_instructions) assumes: {"mma_m16n8k16/fp16": 16, ...} (JSON); the SASS
//       test checks every hot loop against it
#include "tcbench/device_info.hpp"
#include "tcbench/json.hpp"
#include "tcbench/kernels/tensor_peak.hpp"
#include "tcbench/peaks.hpp"
#include "tcbench/schema.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

int main(int argc, char** argv) {
  using namespace tcbench;
  DeviceInfo info;
  info.spec = GpuSpec{"NVIDIA H100 80GB HBM3", 9, 0, 132, 1980.0, 2619.0, 5120};
  info.l2_bytes = 50u << 20;
  info.driver_version = 13000;
  info.runtime_version = 13000;
  info.cublaslt_version = 130000;
  info.pci_bus_id = "00000000:17:00.0";
  info.uuid = "GPU-00000000-0000-0000-0000-000000000000";
  info.mig_mode = "disabled";
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    auto need = [&]() -> const char* {
      if (!value) {
        std::fprintf(stderr, "tcbench_context: %s needs a value\n", argv[i]);
        std::exit(2);
      }
      ++i;
      return value;
    };
    if (arg == "--schema") {
      std::fputs(schema_json().c_str(), stdout);
      return 0;
    } else if (arg == "--compute-capabilities") {
      std::string out;
      for (const auto& [major, minor] : peak_table_compute_capabilities())
        out += (out.empty() ? "" : ";") + std::to_string(major) + "." + std::to_string(minor);
      std::printf("%s\n", out.c_str());
      return 0;
    } else if (arg == "--peak-loops") {
      std::printf("{");
      const char* sep = "";
      for (kernels::PeakInstr instr : kernels::kAllPeakInstrs) {
        const kernels::PeakInstrInfo& peak = kernels::info(instr);
        // Two blocks (a tcgen05 pair is one issuer), one trip more: the instructions per trip,
        // over the issuing warps, warpgroups or CTA groups.
        const double per_trip =
            kernels::peak_instructions(instr, {2, 1}) - kernels::peak_instructions(instr, {2, 0});
        const double units = 2 * kernels::peak_issuers_per_block(instr);
        std::printf("%s\n  %s: %.0f", sep,
                    json_string(std::string(peak.variant) + "/" + std::string(name(peak.precision)))
                        .c_str(),
                    per_trip / units);
        sep = ",";
      }
      std::printf("\n}\n");
      return 0;
    } else if (arg == "--quick") {
      quick = true;
    } else if (arg == "--name") {
      info.spec.name = need();
    } else if (arg == "--cc") {
      const std::string cc = need();
      info.spec.cc_major = std::atoi(cc.c_str());
      info.spec.cc_minor = std::atoi(cc.substr(cc.find('.') + 1).c_str());
    } else if (arg == "--sms") {
      info.spec.sm_count = std::atoi(need());
    } else if (arg == "--sm-clock") {
      info.spec.sm_clock_mhz = std::atof(need());
    } else if (arg == "--mem-clock") {
      info.spec.mem_clock_mhz = std::atof(need());
    } else if (arg == "--bus") {
      info.spec.mem_bus_bits = std::atoi(need());
    } else if (arg == "--l2") {
      info.l2_bytes = static_cast<std::size_t>(std::atoll(need()));
    } else if (arg == "--driver") {
      info.driver_version = std::atoi(need());
    } else if (arg == "--runtime") {
      info.runtime_version = std::atoi(need());
    } else if (arg == "--cublaslt") {
      info.cublaslt_version = static_cast<std::size_t>(std::atoll(need()));
    } else {
      std::fprintf(stderr, "tcbench_context: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  std::printf("{");
  bool first = true;
  for (const auto& [key, value] : run_context(info, quick)) {
    std::printf("%s\n  %s: %s", first ? "" : ",", json_string(key).c_str(),
                json_string(value).c_str());
    first = false;
  }
  std::printf("\n}\n");
  return 0;
}
