#include "tcbench/gemm_prediction.hpp"

#include "tcbench/error.hpp"
#include "tcbench/gemm_spec.hpp"

#include <array>
#include <map>
#include <vector>
#include <cctype>
#include <string>

namespace tcbench {

GpuRates gpu_rates(const GpuSpec& gpu, Precision p) {
  const Peak pk = peak(gpu, p);
  return {pk.supported ? pk.denominator() * 1e12 : 0.0, peak_memory_gbps(gpu) * 1e9};
}

}  // namespace tcbench

namespace tcbench {
namespace {

std::string normalized(std::string_view s) {
  std::string out;
  bool blank = false;
  for (char ch : s) {
    if (ch == ' ' || ch == '\t' || ch == '_') {
      blank = !out.empty();
      continue;
    }
    if (blank) out.push_back(' ');
    blank = false;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
  }
  return out;
}

// Bits per element as the model needs them (gemm_spec's data_type_bits), refusing a type it has
// no size for.
int model_bits(cudaDataType_t t) {
  const std::size_t bits = data_type_bits(t);
  if (bits == 0)
    throw InvalidArgument("the GEMM time model has no element size for " + data_type_name(t));
  return static_cast<int>(bits);
}

}  // namespace

std::span<const ModelProduct> model_products() {
  // Memory clock in MHz such that 2 x clock x bus / 8 is the datasheet bandwidth (the way
  // peak_memory_gbps reads a device). SM counts and boost clocks as in peaks.cpp's sources.
  static const std::array<ModelProduct, 13> products{{
      {"T4", {"Tesla T4", 7, 5, 40, 1590, 5000, 256}, "T4 datasheet: 320 GB/s GDDR6"},
      {"A100 SXM",
       {"NVIDIA A100-SXM4-80GB", 8, 0, 108, 1410, 1593, 5120},
       "A100 datasheet: 2039 GB/s HBM2e (80 GB)"},
      {"A100 SXM",
       {"NVIDIA A100-SXM4-40GB", 8, 0, 108, 1410, 1215, 5120},
       "A100 datasheet: 1555 GB/s HBM2 (40 GB)"},
      {"A100 PCIe",
       {"NVIDIA A100 80GB PCIe", 8, 0, 108, 1410, 1512, 5120},
       "A100 datasheet: 1935 GB/s HBM2e (80 GB PCIe)"},
      {"A100 PCIe",
       {"NVIDIA A100-PCIE-40GB", 8, 0, 108, 1410, 1215, 5120},
       "A100 datasheet: 1555 GB/s HBM2 (40 GB PCIe)"},
      {"A10", {"NVIDIA A10", 8, 6, 72, 1695, 6250, 384}, "A10 datasheet: 600 GB/s GDDR6"},
      {"L4", {"NVIDIA L4", 8, 9, 58, 2040, 6250, 192}, "L4 datasheet: 300 GB/s GDDR6"},
      {"L40S", {"NVIDIA L40S", 8, 9, 142, 2520, 9000, 384}, "L40S datasheet: 864 GB/s GDDR6"},
      {"RTX 4090",
       {"NVIDIA GeForce RTX 4090", 8, 9, 128, 2520, 10500, 384},
       "Ada whitepaper: 1008 GB/s GDDR6X"},
      {"H100 SXM",
       {"NVIDIA H100 80GB HBM3", 9, 0, 132, 1980, 2619, 5120},
       "H100 datasheet: 3.35 TB/s HBM3"},
      {"H100 PCIe",
       {"NVIDIA H100 PCIe", 9, 0, 114, 1755, 1563, 5120},
       "H100 datasheet: 2 TB/s HBM2e (PCIe)"},
      {"H200", {"NVIDIA H200", 9, 0, 132, 1980, 3125, 6144}, "H200 datasheet: 4.8 TB/s HBM3e"},
      {"B200",
       {"NVIDIA B200", 10, 0, 148, 1965, 3906, 8192},
       "HGX B200 datasheet: 8 TB/s HBM3e per GPU"},
  }};
  return products;
}

const ModelProduct* find_model_product(std::string_view name) {
  // The names other tables give the same parts (the best-shape table's "H200 SXM", the SXM
  // generation in a name): each maps to exactly one peak-table product, never a guess between
  // two (a bare "H100" or "A100" stays unknown: SXM and PCIe differ).
  static constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
      {"h100 sxm5", "H100 SXM"},
      {"h200 sxm", "H200"},
      {"b200 sxm", "B200"},
      {"a100 sxm4", "A100 SXM"},
      {"nvidia h100 sxm", "H100 SXM"},
      {"nvidia h200", "H200"},
      {"nvidia b200", "B200"}};
  std::string want = normalized(name);
  if (want.empty()) return nullptr;
  for (const auto& [alias, canonical] : kAliases)
    if (want == alias) want = normalized(canonical);
  for (const ModelProduct& p : model_products())
    if (normalized(p.canonical) == want || normalized(p.spec.name) == want) return &p;
  return nullptr;
}

namespace {

// Why cuBLASLt would refuse the shape, by the rules gemm_spec.cpp applies to what tcbench runs,
// in the query's row-major terms (cuBLASLt sees D^T: its m is the query's n, its n the query's
// m): the narrow floating-point types (the precision table's K-major, non-integer rows: FP8, FP6,
// FP4) need every leading dimension a multiple of 16 bytes and cuBLASLt's m and k multiples of
// 16, its n of 8; the integer ones (INT8) need its m and k multiples of 4.
std::string refused(const GemmQuery& q, const numerics::OperandAlignment& a) {
  const Precision p = q.precision;
  if (info(p).a_k_major && !info(p).integer) {
    if (a.all() < 16)
      return std::string("cuBLASLt refuses ") + std::string(name(p)) +
             " GEMMs with a leading dimension that is not a multiple of 16 bytes (A " +
             std::to_string(a.a) + ", B " + std::to_string(a.b) + ", C " + std::to_string(a.c) +
             " bytes)";
    if (q.n % 16 != 0 || q.k % 16 != 0 || q.m % 8 != 0)
      return std::string("cuBLASLt refuses ") + std::string(name(p)) +
             " GEMMs unless n and k are multiples of 16 and m of 8 (its m, k and n of the "
             "transposed problem)";
  }
  if (info(p).integer && (a.inputs() < 4 || q.n % 4 != 0 || q.k % 4 != 0))
    return "cuBLASLt and cublasGemmEx refuse " + std::string(name(p)) +
           " GEMMs unless n and k are multiples of 4 and the leading dimensions of A and B too";
  return {};
}

}  // namespace

GemmQuery query_of(const GemmSpec& spec, Precision p) {
  GemmQuery q;
  q.precision = p;
  q.m = spec.problem.n;
  q.n = spec.problem.m;
  q.k = spec.problem.k;
  q.batch = spec.batch_count;
  q.a_k_contiguous = !spec.problem.trans_b;
  q.b_n_contiguous = !spec.problem.trans_a;
  q.c_type = spec.d_type;
  return q;
}

namespace {

numerics::GemmTimeProblem problem_of(const GemmQuery& q) {
  const PrecisionInfo& row = info(q.precision);
  return {q.m,
          q.n,
          q.k,
          q.batch,
          model_bits(row.a),
          model_bits(row.b),
          model_bits(q.c_type.value_or(row.d)),
          q.a_k_contiguous,
          q.b_n_contiguous};
}

void require_positive(const GemmQuery& q) {
  if (q.m <= 0 || q.n <= 0 || q.k <= 0 || q.batch <= 0)
    throw InvalidArgument("M, N, K and the batch must be positive, got " + std::to_string(q.m) +
                          " x " + std::to_string(q.n) + " x " + std::to_string(q.k) + " x " +
                          std::to_string(q.batch));
}

}  // namespace

ModelPrediction predict_time(const GpuSpec& gpu, const GemmQuery& q, std::string_view product,
                             const ModelConstants& constants) {
  require_positive(q);
  ModelPrediction out;
  const numerics::GemmTimeProblem problem = problem_of(q);
  out.time.alignment = numerics::operand_alignment(problem);
  const GpuRates rates = gpu_rates(gpu, q.precision);
  const std::string canonical(product.empty() ? known_product(gpu.name).value_or(gpu.name)
                                              : product);
  if (!(rates.flops_per_s > 0)) {
    out.not_covered =
        canonical + " has no " + std::string(name(q.precision)) + " path in tcbench's peak table";
    return out;
  }
  if (std::string why = refused(q, out.time.alignment); !why.empty()) {
    out.not_covered = why;
    return out;
  }
  try {
    out.family = family_of(gpu.cc_major, gpu.cc_minor);
  } catch (const InvalidArgument& e) {
    out.not_covered = e.what();
    return out;
  }
  std::map<std::string, std::string> borrowed;  // field -> the family it came from
  const numerics::TimeModelConstants c = constants.family(out.family, q.precision, &borrowed);
  const ModelConstants::Ceiling ceiling = constants.ceiling(canonical, out.family, q.precision);
  out.ceiling = ceiling.value;
  out.ceiling_basis = ceiling.basis;
  const numerics::TimeModelGpu model_gpu{gpu.sm_count, rates.flops_per_s, rates.bytes_per_s,
                                         ceiling.value};
  out.time = numerics::predict_gemm_time(problem, model_gpu, c);

  // What the number stands on: the family's own fitted constants and ceiling, or what was
  // transferred from elsewhere (of what this GEMM uses: the alignment classes it has, split-K
  // only when split, ...), or the bound.
  const numerics::GemmTimePrediction& t = out.time;
  const numerics::OperandAlignment& al = t.alignment;
  auto used = [&](const std::string& field) {
    auto cls = [&](std::string_view prefix, int bytes) {
      return bytes < 16 && field == std::string(prefix) + std::to_string(bytes);
    };
    if (field.starts_with("align_inputs_")) return cls("align_inputs_", al.inputs());
    if (field.starts_with("align_output_")) return cls("align_output_", al.c);
    if (field.starts_with("align_memory_")) return cls("align_memory_", al.all());
    if (field == "batched_efficiency") return q.batch > 1;
    if (field == "min_split_k_depth" || field == "split_k_fixed_us") return t.split_k > 1;
    if (field == "stream_k_overhead") return t.stream_k;
    return true;
  };
  std::map<std::string, std::vector<std::string>> from;  // family -> fields, as used here
  for (const auto& [field, scope] : borrowed)
    if (used(field)) from[scope].push_back(field);
  out.constants_basis = std::string(name(out.family)) + "'s constants";
  std::string words;
  for (const auto& [scope, fields] : from) {
    words += (words.empty() ? "" : "; ") + std::string("transferred from ") + scope + ": ";
    for (std::size_t i = 0; i < fields.size() && i < 3; ++i) words += (i ? ", " : "") + fields[i];
    if (fields.size() > 3) words += " and " + std::to_string(fields.size() - 3) + " more";
  }
  if (!words.empty()) out.constants_basis += ", " + words;
  if (!ceiling.own)
    words += std::string(words.empty() ? "" : "; ") + "the ceiling of " + ceiling.basis;
  if (t.at_bound)
    out.coverage = "bound: the model's time was under the roofline's; the bound is returned";
  else
    out.coverage = words.empty() ? "fitted" : words;
  if (info(q.precision).a_k_major && (!q.a_k_contiguous || q.b_n_contiguous) &&
      out.family != ArchFamily::blackwell)
    out.note = "cuBLASLt runs " + std::string(name(q.precision)) +
               " with A and B K-contiguous "
               "(layouts mk, nk) only; the transpose a caller needs first is not in the time";
  return out;
}

QuantizationBound quantization_bound(const GpuSpec& gpu, const GemmQuery& q,
                                     numerics::TimeModelTile tile, int split_k) {
  require_positive(q);
  const GpuRates rates = gpu_rates(gpu, q.precision);
  if (!(rates.flops_per_s > 0) || !(rates.bytes_per_s > 0))
    throw InvalidArgument("no " + std::string(name(q.precision)) + " rate or bandwidth for " +
                          gpu.name + " in the peak table, so no quantization bound");
  const numerics::GemmTimeProblem problem = problem_of(q);
  QuantizationBound out;
  out.quantization = numerics::quantize(problem, tile, gpu.sm_count, split_k);
  const numerics::TimeModelGpu g{gpu.sm_count, rates.flops_per_s * out.quantization.efficiency(),
                                 rates.bytes_per_s, 1.0};
  out.flops_per_s = numerics::roofline_bound_flops_per_s(problem, g);
  return out;
}

}  // namespace tcbench
