// What tcbench knows about the GPU it runs on, read once per process.
#pragma once

#include "tcbench/clock_policy.hpp"
#include "tcbench/error.hpp"
#include "tcbench/gemm_spec.hpp"
#include "tcbench/nvml.hpp"
#include "tcbench/peaks.hpp"
#include "tcbench/precision.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tcbench {

// What NVML says about the GPU's power and clock settings, and the clock policy of the run, as
// the run context's strings (docs/methodology.md, "Clocks, power and energy"). A value NVML
// cannot give reads "unsupported" or "unknown (<the call> returned <status>)".
struct PowerContext {
  std::string nvml = "unknown (not queried)";  // "available (<library>)" or why not
  std::string power_limit_w = "unknown", power_limit_default_w = "unknown";
  std::string app_sm_clock_mhz = "unknown", app_sm_clock_default_mhz = "unknown";
  std::string max_sm_clock_mhz = "unknown";  // NVML's maximum SM clock
  std::string locked_sm_clock_mhz = "none";  // what this run locked ("1980", "tdp")
  std::string persistence_mode = "unknown", ecc_mode = "unknown";
  std::string clock_policy = "as-is", clock_policy_requested = "as-is";
  std::string clock_policy_note = "clocks as the driver sets them (no lock requested)";

  // Everything NVML can tell about `device` (empty: NVML unavailable, `nvml` says why).
  static PowerContext read(const std::optional<nvml::Device>& device, std::string nvml_status);
  // The policy the run applied (ClockLock says what it did).
  void set_clock_policy(const ClockLock& lock);
  std::vector<std::pair<std::string, std::string>> keys() const;
};

struct DeviceInfo {
  int ordinal = 0;  // the CUDA ordinal in this process (after CUDA_VISIBLE_DEVICES)
  GpuSpec spec;     // name, compute capability, SMs, clocks, bus width
  // Which physical GPU ran: "0000:17:00.0", "GPU-8f1c...", and "enabled"/"disabled"/"unknown"
  // (MIG, read through NVML when the driver's library is there).
  std::string pci_bus_id, uuid, mig_mode = "unknown";
  std::size_t l2_bytes = 0;
  // The same GPU through NVML (empty when NVML is unavailable; power.nvml says why): the power
  // sampler and the clock policy use it.
  std::optional<nvml::Device> nvml;
  PowerContext power;
  int driver_version = 0;  // e.g. 13000 for 13.0
  int runtime_version = 0;
  std::size_t cublaslt_version = 0;

  std::string compute_capability() const;  // "9.0"
  int cc() const { return cc_number(spec.cc_major, spec.cc_minor); }
  Peak peak(Precision p) const { return tcbench::peak(spec, p); }
  double peak_gbps() const { return peak_memory_gbps(spec); }
  // Bytes free on the device right now (cudaMemGetInfo).
  std::size_t free_mem_bytes() const;
  // The run context's device keys (docs/methodology.md, "What a result file holds"; without
  // tcbench_version/git_sha), ready for AddCustomContext.
  std::vector<std::pair<std::string, std::string>> context() const;
};

// Reads the current device. Throws NoDevice, with the driver's reason, when there is none, and
// DeviceUnusable when there is a GPU or a driver that cannot be used (see
// classify_device_count_failure): this is the one place that decides "no GPU".
DeviceInfo require_device();

// What a failed cudaGetDeviceCount means. Only "no device" and "no driver loaded" are a skip
// (skip = true, exit 77); anything else (a driver too old for CUDA 13, a driver/library
// mismatch, a stopped fabric manager, ...) is a broken box that must fail, with a sentence that
// says what to fix. `driver_version` is cudaDriverGetVersion's answer (0 when no driver loads).
struct DeviceCountFailure {
  bool skip = false;
  std::string sentence;
};
DeviceCountFailure classify_device_count_failure(cudaError_t status, int driver_version);

// The run's full context: tcbench_version, git_sha, tcbench_quick and every key of
// DeviceInfo::context(). The one source of the schema: benchmarks write it, the fixture
// generator prints it (tcbench_context), and the Python tools' tests compare key sets with it.
std::vector<std::pair<std::string, std::string>> run_context(const DeviceInfo& device, bool quick);

// "13.0" from a CUDA driver or runtime version integer (13000 -> "13.0", 12090 -> "12.9").
std::string format_cuda_version(int version);

}  // namespace tcbench
