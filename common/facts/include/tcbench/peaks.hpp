// Dense peak throughput and memory bandwidth of a GPU: the denominators of pct_of_peak.
//
// The model is SMs x clock x ops/clock/SM from a per-architecture table. Published datasheet
// figures are usually computed at a lower "tensor" clock than the maximum SM clock the device
// reports (H100 SXM: 989 TF = 132 SMs x 4096 FLOP/clk x 1.83 GHz, while the device reports
// 1.98 GHz). So for products we recognise by name, pct_of_peak divides by the datasheet figure
// (comparable with published numbers) and the max-clock figure is kept beside it.
#pragma once

#include "tcbench/precision.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tcbench {

// What the peak model needs to know about a GPU; DeviceInfo fills it from the runtime.
struct GpuSpec {
  std::string name;  // as cudaGetDeviceProperties reports it, e.g. "NVIDIA H100 80GB HBM3"
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  double sm_clock_mhz = 0;   // maximum SM clock (cudaDevAttrClockRate)
  double mem_clock_mhz = 0;  // memory clock (cudaDevAttrMemoryClockRate), DDR: 2 transfers/clk
  int mem_bus_bits = 0;
};

struct Peak {
  bool supported = false;  // false: this GPU has no such path (e.g. fp8 on sm_80)
  // SMs x maximum SM clock x dense ops/clk/SM, in TFLOP/s (TOP/s for int8).
  double max_clock = 0;
  // Published dense figure, when the product is recognised and its datasheet lists this
  // precision.
  std::optional<double> datasheet;
  // "datasheet: <product> (<document>)" or "max-clock model". Static storage.
  std::string_view source = "max-clock model";

  // What pct_of_peak divides by: the datasheet figure when known, else the max-clock model.
  double denominator() const { return datasheet.value_or(max_clock); }
};

Peak peak(const GpuSpec& gpu, Precision p);

// Dense FLOP (or integer OP) per clock per SM for the GEMM path tcbench uses for `p`
// (Tensor Cores for tf32/fp16/bf16/int8/fp8, DMMA for fp64 where it exists, FFMA for fp32).
// 0 when the architecture has no such path or the compute capability is not in the table.
double ops_per_clock_per_sm(int cc_major, int cc_minor, Precision p, bool geforce);

// SMs x `sm_clock_mhz` x dense ops/clk/SM, in TFLOP/s (TOP/s for int8): the peak at the clock
// the GPU actually ran (pct_of_peak_at_clock), 0 when the GPU has no path for `p`.
double peak_at_clock(const GpuSpec& gpu, Precision p, double sm_clock_mhz);

// GeForce parts run tensor math with FP32 accumulation (and TF32) at half the rate of the
// datacenter/workstation parts built from the same chip.
bool is_geforce(std::string_view device_name);

// The compute capabilities the per-architecture table knows: every one of them must be able to
// load every portable kernel (the ELF rule of tests/sass).
std::vector<std::pair<int, int>> peak_table_compute_capabilities();

// 2 x memory clock x bus width / 8, in GB/s (1e9 bytes/s).
double peak_memory_gbps(const GpuSpec& gpu);

// Canonical product name ("H100 SXM", "A100 SXM", ...) if the device name is in the datasheet
// table, matched exactly as CUDA reports it (so "NVIDIA A10" is not "NVIDIA A100-...", and MIG
// instances, whose names carry a suffix, fall back to the model).
std::optional<std::string_view> known_product(std::string_view device_name);

// A GPU of the datasheet table, named without the device (--plan=H200): its compute capability,
// SMs, datasheet DRAM bandwidth and dense peaks. What a plan for a GPU not at hand needs.
struct NamedGpu {
  std::string_view canonical;  // "H200"
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  double dram_gbps = 0;  // datasheet memory bandwidth, GB/s (1e9 bytes/s)
  std::string_view source;
  double tflops[kNumPrecisions] = {};  // dense TFLOP/s (TOP/s for int8); 0 = not published
};

// The GPU `name` names: a canonical product name, with case, spaces, '-' and '_' ignored
// ("H200", "h100-sxm", "A100_PCIe"), or CUDA's exact device name. nullopt for any other.
std::optional<NamedGpu> named_gpu(std::string_view name);
// The canonical names named_gpu knows, comma-separated (for a message).
std::string named_gpu_names();

}  // namespace tcbench
