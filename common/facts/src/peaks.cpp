#include "tcbench/peaks.hpp"

#include <utility>
#include <vector>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>

namespace tcbench {
namespace {

// One number per row of the precision table, in its order (fp64, fp32, tf32, fp16, fp16_acc16,
// bf16, int8, fp8, fp4, fp6). The constructor takes exactly that many: a precision added to the
// table without its column here fails to compile instead of reading 0 ("no such path").
struct Rates {
  std::array<double, kNumPrecisions> value{};
  template <typename... V>
  constexpr Rates(V... v) : value{static_cast<double>(v)...} {  // NOLINT(google-explicit-*)
    static_assert(sizeof...(V) == kNumPrecisions,
                  "give one rate per row of the precision table (precision.hpp)");
  }
  constexpr double operator[](Precision p) const { return value[index_of(p)]; }
};

struct ArchRates {
  int cc_major, cc_minor;
  Rates ops;  // dense FLOP (OP for int8) per clock per SM; 0 = no such path
  // GeForce boards of this architecture exist and halve the FP32-accumulate tensor rates
  // (tf32, fp16, bf16, fp8); FP16-accumulate and INT8 stay at full rate.
  bool geforce_half_rate;
};

// Per-SM rates are derived from the datasheets/whitepapers cited on each line:
// datasheet TFLOP/s / (SMs x clock). Where a datasheet figure implies a lower clock than the
// boost clock (Hopper, Blackwell tensor figures) the rate is the power of two that the implied
// clock makes exact, which is what the SM can issue.
constexpr std::array<ArchRates, 10> kArchTable{{
    // Turing TU10x: T4 datasheet 65 FP16 / 130 INT8 / 8.1 FP32 at 40 SMs x 1.59 GHz; FP64 is
    // 1/32 of FP32. Turing whitepaper: RTX 2080 Ti 56.9 TF FP16 with FP32 accumulate, half of
    // the FP16-accumulate rate. No TF32, BF16 or FP8.
    {7, 5, {4, 128, 0, 1024, 1024, 0, 2048, 0, 0, 0}, true},
    // GA100: A100 datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf) 19.5 FP64
    // Tensor (DMMA), 19.5 FP32, 156 TF32, 312 FP16/BF16, 624 INT8 at 108 SMs x 1.41 GHz.
    {8, 0, {128, 128, 1024, 2048, 2048, 2048, 4096, 0, 0, 0}, false},
    // GA10x: A10 datasheet 31.2 FP32 / 62.5 TF32 / 125 FP16 / 250 INT8 at 72 SMs x 1.695 GHz.
    // GeForce Ampere (RTX 3090: 35.6 TF32, 71 FP16-FP32acc, 142 FP16-FP16acc) at half rate.
    {8, 6, {4, 256, 512, 1024, 1024, 1024, 2048, 0, 0, 0}, true},
    // GA10B (Jetson Orin): Jetson AGX Orin technical brief, 170 sparse INT8 TOPS from 16 SMs
    // x 1.3 GHz, i.e. A100-class tensor cores with GA10x-style FP32.
    {8, 7, {4, 256, 1024, 2048, 2048, 2048, 4096, 0, 0, 0}, false},
    // AD10x: L40S datasheet 91.6 FP32 / 183 TF32 / 362 FP16 / 733 INT8 and FP8 at 142 SMs x
    // 2.52 GHz; L4 datasheet agrees at 58 SMs x 2.04 GHz. Ada whitepaper appendix: RTX 4090
    // 82.6 TF32, 165.2 FP16-FP32acc, 330.3 FP16-FP16acc and FP8-FP32acc, 660.6 INT8.
    {8, 9, {4, 256, 512, 1024, 1024, 1024, 2048, 2048, 0, 0}, true},
    // GH100: H100 datasheet (nvidia.com/en-us/data-center/h100) 67 FP64 Tensor and 67 FP32 at
    // 132 SMs x 1.98 GHz; 989 TF FP16/BF16, 1979 INT8/FP8 at the implied 1.83 GHz. No FP4/FP6
    // (Turing to Hopper: 0 in both columns).
    {9, 0, {256, 256, 2048, 4096, 4096, 4096, 8192, 8192, 0, 0}, false},
    // GB100: HGX B200 page 37 FP64 / 75 FP32 at 148 SMs x ~1.965 GHz; 1.1 PF TF32, 2.25 PF
    // FP16/BF16, 4.5 PF INT8/FP8 at the implied ~1.86 GHz tensor clock; its "FP4 Tensor Core
    // 18 PFLOPS" and "FP8/FP6 Tensor Core 9 PFLOPS" (with sparsity) are 9 PF FP4 and 4.5 PF FP6
    // dense: 32768 and 16384 per SM per clock at the same clock.
    {10, 0, {128, 256, 4096, 8192, 8192, 8192, 16384, 16384, 32768, 16384}, false},
    // GB110 (B300, Blackwell Ultra): HGX B300 figures as tabulated by verda.com and
    // glennklockwood.com [3rd-party]: 1.25 TF FP64, 0.15 POPS INT8 (both cut back), tensor
    // floating-point rates as B200. FP4: NVIDIA technical blog "Inside NVIDIA Blackwell Ultra"
    // (2025), 15 PF dense NVFP4 from 160 SMs: 1.5x GB100's 32768 per SM per clock (at ~1.9 GHz).
    // FP6: no separate figure is published; the FP8 rate, which Blackwell datasheets give FP6
    // ("FP8/FP6 Tensor Core"), is assumed.
    {10, 3, {4, 256, 4096, 8192, 8192, 8192, 512, 16384, 49152, 16384}, false},
    // GB20x: RTX Blackwell whitepaper, RTX 5090 (170 SMs x 2.407 GHz) 419 FP16-FP16acc,
    // 209.5 FP16-FP32acc, 838 INT8; workstation parts run FP32 accumulate at full rate. FP4: the
    // RTX 5090's 3352 "AI TOPS" (sparse FP4) = 170 x 2.407 GHz x 4096 x 2, so 4096 dense, not
    // halved on GeForce. FP6 at the FP8 rate (assumed, as for GB110).
    {12, 0, {4, 256, 512, 1024, 1024, 1024, 2048, 2048, 4096, 2048}, true},
    // GB10 (DGX Spark): 1 PF sparse FP4 from 48 SMs, i.e. the GB20x SM (FP4 4096 dense).
    {12, 1, {4, 256, 512, 1024, 1024, 1024, 2048, 2048, 4096, 2048}, false},
}};

const ArchRates* find_arch(int cc_major, int cc_minor) {
  for (const ArchRates& a : kArchTable)
    if (a.cc_major == cc_major && a.cc_minor == cc_minor) return &a;
  return nullptr;
}

}  // namespace

std::vector<std::pair<int, int>> peak_table_compute_capabilities() {
  std::vector<std::pair<int, int>> out;
  for (const ArchRates& a : kArchTable) out.emplace_back(a.cc_major, a.cc_minor);
  return out;
}

namespace {

// Published dense figures, TFLOP/s (TOP/s for int8); 0 = not published for this precision.
struct Product {
  std::string_view canonical;
  std::array<std::string_view, 2> cuda_names;  // exact cudaDeviceProp::name strings
  int sm_count;                                // a different count (MIG, odd SKU) drops the row
  Rates tflops;  // fp64, fp32, tf32, fp16, fp16_acc16, bf16, int8, fp8, fp4, fp6
  std::string_view source;
  // For --plan without the device (named_gpu): the compute capability, and the DRAM bandwidth in
  // GB/s from the same datasheet (the smaller one where a row covers two memory sizes).
  int cc_major, cc_minor;
  double dram_gbps;
};

constexpr std::array<Product, 11> kProducts{{
    {"T4",
     {"Tesla T4", ""},
     40,
     {0, 8.1, 0, 65, 65, 0, 130, 0, 0, 0},
     "datasheet: T4 (NVIDIA T4 Tensor Core GPU datasheet, nvidia.com/en-us/data-center/tesla-t4)",
     7,
     5,
     320},
    {"A100 SXM",
     {"NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-40GB"},
     108,
     {19.5, 19.5, 156, 312, 312, 312, 624, 0, 0, 0},
     "datasheet: A100 SXM (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf)",
     8,
     0,
     1555},
    {"A100 PCIe",
     {"NVIDIA A100-PCIE-40GB", "NVIDIA A100 80GB PCIe"},
     108,
     {19.5, 19.5, 156, 312, 312, 312, 624, 0, 0, 0},
     "datasheet: A100 PCIe (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf)",
     8,
     0,
     1555},
    {"A10",
     {"NVIDIA A10", ""},
     72,
     {0, 31.2, 62.5, 125, 125, 125, 250, 0, 0, 0},
     "datasheet: A10 (nvidia.com/en-us/data-center/products/a10-gpu)",
     8,
     6,
     600},
    {"L4",
     {"NVIDIA L4", ""},
     58,
     {0, 30.3, 60, 121, 121, 121, 242.5, 242.5, 0, 0},
     "datasheet: L4 (nvidia.com/en-us/data-center/l4, sparse figures halved)",
     8,
     9,
     300},
    {"L40S",
     {"NVIDIA L40S", ""},
     142,
     {0, 91.6, 183, 362.05, 362.05, 362.05, 733, 733, 0, 0},
     "datasheet: L40S (nvidia.com/en-us/data-center/l40s)",
     8,
     9,
     864},
    {"RTX 4090",
     {"NVIDIA GeForce RTX 4090", ""},
     128,
     {0, 82.6, 82.6, 165.2, 330.3, 165.2, 660.6, 330.3, 0, 0},
     "datasheet: RTX 4090 (NVIDIA Ada GPU architecture whitepaper, appendix table)",
     8,
     9,
     1008},
    {"H100 SXM",
     {"NVIDIA H100 80GB HBM3", ""},
     132,
     {67, 67, 494.7, 989.4, 989.4, 989.4, 1979, 1979, 0, 0},
     "datasheet: H100 SXM (nvidia.com/en-us/data-center/h100, sparse figures halved)",
     9,
     0,
     3350},
    {"H100 PCIe",
     {"NVIDIA H100 PCIe", ""},
     114,
     {51, 51, 378, 756, 756, 756, 1513, 1513, 0, 0},
     "datasheet: H100 PCIe (nvidia.com/en-us/data-center/h100, sparse figures halved)",
     9,
     0,
     2000},
    {"H200",
     {"NVIDIA H200", ""},
     132,
     {67, 67, 494.7, 989.4, 989.4, 989.4, 1979, 1979, 0, 0},
     "datasheet: H200 SXM (nvidia.com/en-us/data-center/h200, sparse figures halved)",
     9,
     0,
     4800},
    {"B200",
     {"NVIDIA B200", ""},
     148,
     {37, 75, 1100, 2250, 2250, 2250, 4500, 4500, 9000, 4500},
     "datasheet: B200 (nvidia.com/en-us/data-center/hgx, HGX B200, sparse figures halved; FP4 18 "
     "and FP8/FP6 9 PFLOPS sparse; 8 TB/s per GPU)",
     10,
     0,
     8000},
}};

const Product* find_product(std::string_view device_name) {
  // Drivers have been seen to pad names; trailing blanks must not defeat an exact match.
  while (!device_name.empty() && std::isspace(static_cast<unsigned char>(device_name.back())))
    device_name.remove_suffix(1);
  if (device_name.empty()) return nullptr;
  for (const Product& p : kProducts)
    for (std::string_view n : p.cuda_names)
      if (!n.empty() && n == device_name) return &p;
  return nullptr;
}

}  // namespace

namespace {
// "H100 SXM" and "h100-sxm" alike: lower case, without ' ', '-' and '_'.
std::string folded(std::string_view s) {
  std::string out;
  for (const char c : s)
    if (c != ' ' && c != '-' && c != '_')
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace

std::optional<NamedGpu> named_gpu(std::string_view name) {
  const Product* found = find_product(name);
  for (const Product& p : kProducts)
    if (found == nullptr && !name.empty() && folded(p.canonical) == folded(name)) found = &p;
  if (found == nullptr) return std::nullopt;
  NamedGpu out{found->canonical, found->cc_major,  found->cc_minor,
               found->sm_count,  found->dram_gbps, found->source};
  for (const Precision p : kAllPrecisions) out.tflops[index_of(p)] = found->tflops[p];
  return out;
}

std::string named_gpu_names() {
  std::string out;
  for (const Product& p : kProducts) out += (out.empty() ? "" : ", ") + std::string(p.canonical);
  return out;
}

double ops_per_clock_per_sm(int cc_major, int cc_minor, Precision p, bool geforce) {
  const ArchRates* arch = find_arch(cc_major, cc_minor);
  if (arch == nullptr) return 0;
  double ops = arch->ops[p];
  if (geforce && arch->geforce_half_rate && info(p).halved_on_geforce) ops /= 2;
  return ops;
}

bool is_geforce(std::string_view device_name) {
  // Only "GeForce": workstation RTX parts ("NVIDIA RTX A6000", "Quadro RTX 8000", "NVIDIA RTX
  // 6000 Ada Generation") and TITAN RTX run FP32 accumulation at full rate.
  constexpr std::string_view kMarker = "geforce";
  auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  auto it = std::search(device_name.begin(), device_name.end(), kMarker.begin(), kMarker.end(),
                        [&](char a, char b) { return lower(a) == b; });
  return it != device_name.end();
}

double peak_memory_gbps(const GpuSpec& gpu) {
  return 2.0 * gpu.mem_clock_mhz * 1e6 * static_cast<double>(gpu.mem_bus_bits) / 8.0 / 1e9;
}

std::optional<std::string_view> known_product(std::string_view device_name) {
  if (const Product* p = find_product(device_name)) return p->canonical;
  return std::nullopt;
}

double peak_at_clock(const GpuSpec& gpu, Precision p, double sm_clock_mhz) {
  const double ops = ops_per_clock_per_sm(gpu.cc_major, gpu.cc_minor, p, is_geforce(gpu.name));
  if (ops <= 0 || !(sm_clock_mhz > 0)) return 0;
  return static_cast<double>(gpu.sm_count) * sm_clock_mhz * 1e6 * ops / 1e12;
}

Peak peak(const GpuSpec& gpu, Precision p) {
  Peak out;
  out.max_clock = peak_at_clock(gpu, p, gpu.sm_clock_mhz);
  if (out.max_clock <= 0) {
    out.max_clock = 0;
    return out;
  }
  out.supported = true;
  const Product* product = find_product(gpu.name);
  if (product != nullptr && product->sm_count == gpu.sm_count) {
    const double published = product->tflops[p];
    if (published > 0) {
      out.datasheet = published;
      out.source = product->source;
    }
  }
  return out;
}

}  // namespace tcbench
