// tcbench_model: the GEMM time model (gemm_prediction.hpp, predict_v2) on a file of GEMMs, for
// `tcbench model predict` and `tcbench model check`, without a GPU.
//
//   tcbench_model predict [--constants FILE] [--out FILE] IN.csv   (IN.csv "-": stdin)
//   tcbench_model gpus                                              the GPUs and their peaks
//   tcbench_model constants                                         the embedded constants
//
// predict reads rows gpu,precision,m,n,k,batch,layout_a,layout_b (C[m,n] = A B, C row-major;
// layout_a mk = A stored [m][k], or km; layout_b kn or nk; gpu a peak-table name such as
// "H100 SXM" or a CUDA device name; precision a precision-table name). The header line is
// optional: a first line with fields named gpu and precision is a header, and then the columns
// may come in any order, an optional c_type column (fp16, bf16, fp32, fp8, ...) names the output
// type, and other columns pass through (one named like an output column is replaced). Without a
// header the first eight fields are the columns above in that order and the rest pass through.
// Fields are trimmed; names, precisions and layouts are matched without regard to case; an empty
// batch is 1. Each row is written back with predicted_tflops (useful 2mnk*batch per second; TOP/s
// for int8), predicted_us, bound_tflops (the roofline bound, not a prediction) and the tile,
// split-K, schedule, waves, regime, alignment and basis the model assumed; a row the model does not
// cover gets empty predictions and the reason in `note`.
//
// Exit codes: 0 written; 2 a usage error, an unreadable file, or a bad row (one sentence naming
// the line: an unknown GPU or precision, a size that is not a positive integer, a bad layout).
#include "tcbench/csv.hpp"
#include "tcbench/error.hpp"
#include "tcbench/gemm_prediction.hpp"
#include "tcbench/gemm_spec.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace tcbench;

constexpr std::size_t kMaxInputBytes = std::size_t{256} << 20;  // 256 MiB: millions of rows

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

std::string read_all(const std::string& path) {
  std::istream* in = &std::cin;
  std::ifstream file;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) throw InvalidArgument("cannot read " + path + ".");
    in = &file;
  }
  std::string text;
  char buf[1 << 16];
  while (in->read(buf, sizeof buf) || in->gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in->gcount()));
    if (text.size() > kMaxInputBytes)
      throw InvalidArgument((path == "-" ? std::string("standard input") : path) +
                            " is larger than 256 MiB; split it.");
  }
  return text;
}

// Precision names: the precision table's, plus the spellings PyTorch and NumPy users write.
std::optional<Precision> precision_named(std::string_view s) {
  const std::string l = lower(trim(s));
  if (auto p = parse_precision(l)) return p;
  static const std::map<std::string, Precision> aliases{
      {"float16", Precision::fp16},  {"half", Precision::fp16},
      {"bfloat16", Precision::bf16}, {"float32", Precision::fp32},
      {"float", Precision::fp32},    {"float64", Precision::fp64},
      {"double", Precision::fp64},   {"fp8_e4m3", Precision::fp8},
      {"e4m3", Precision::fp8},      {"float8_e4m3fn", Precision::fp8},
      {"nvfp4", Precision::fp4},     {"fp4_e2m1", Precision::fp4}};
  auto it = aliases.find(l);
  return it == aliases.end() ? std::nullopt : std::optional<Precision>(it->second);
}

// Output types by name (the c_type column).
std::optional<cudaDataType_t> type_named(std::string_view s) {
  const std::string l = lower(trim(s));
  static const std::map<std::string, cudaDataType_t> types{
      {"fp64", CUDA_R_64F},         {"fp32", CUDA_R_32F},    {"tf32", CUDA_R_32F},
      {"fp16", CUDA_R_16F},         {"bf16", CUDA_R_16BF},   {"int32", CUDA_R_32I},
      {"int8", CUDA_R_8I},          {"fp8", CUDA_R_8F_E4M3}, {"fp8_e4m3", CUDA_R_8F_E4M3},
      {"fp8_e5m2", CUDA_R_8F_E5M2}, {"float32", CUDA_R_32F}, {"float16", CUDA_R_16F},
      {"bfloat16", CUDA_R_16BF}};
  auto it = types.find(l);
  return it == types.end() ? std::nullopt : std::optional<cudaDataType_t>(it->second);
}

// A positive integer up to 2^40 (sizes); "4096.0" is accepted, "4096.5" is not.
std::optional<std::int64_t> positive_size(std::string_view s) {
  s = trim(s);
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) {
    double d = 0;
    auto [p2, ec2] = std::from_chars(s.data(), s.data() + s.size(), d);
    if (ec2 != std::errc() || p2 != s.data() + s.size() || !std::isfinite(d) ||
        d != std::floor(d) || d > 1099511627776.0)
      return std::nullopt;
    v = static_cast<std::int64_t>(d);
  }
  if (v <= 0 || v > (std::int64_t{1} << 40)) return std::nullopt;
  return v;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

constexpr const char* kColumns[] = {"gpu", "precision", "m",        "n",
                                    "k",   "batch",     "layout_a", "layout_b"};
constexpr const char* kOutColumns[] = {"predicted_tflops", "predicted_us", "bound_tflops", "tile",
                                       "split_k",          "schedule",     "waves",        "regime",
                                       "alignment",        "ceiling",      "model_basis",  "note"};

[[noreturn]] void bad_row(const std::string& origin, std::size_t line, const std::string& what) {
  throw InvalidArgument(origin + " line " + std::to_string(line) + ": " + what + ".");
}

int predict(const std::string& in_path, const std::string& out_path,
            const std::string& constants_path) {
  const std::string origin = in_path == "-" ? "standard input" : in_path;
  std::optional<ModelConstants> own;
  if (!constants_path.empty())
    own = ModelConstants::parse(read_all(constants_path), constants_path);
  const ModelConstants& constants = own ? *own : ModelConstants::embedded();
  const std::vector<CsvRecord> records = parse_csv(read_all(in_path), origin);

  // Where each column is: by the header's names, or the documented order.
  std::map<std::string, std::size_t> at;
  std::vector<std::string> header;
  std::size_t first = 0;
  bool named_gpu = false, named_precision = false;
  if (!records.empty())
    for (const std::string& f : records[0].fields) {
      named_gpu = named_gpu || lower(trim(f)) == "gpu";
      named_precision = named_precision || lower(trim(f)) == "precision";
    }
  const bool has_header = named_gpu && named_precision;
  if (has_header) {
    for (std::size_t i = 0; i < records[0].fields.size(); ++i) {
      const std::string name = lower(trim(records[0].fields[i]));
      header.emplace_back(trim(records[0].fields[i]));
      if (!name.empty() && !at.emplace(name, i).second)
        bad_row(origin, records[0].line, "the header names column '" + name + "' twice");
    }
    for (const char* c : kColumns)
      if (!at.count(c)) bad_row(origin, records[0].line, std::string("the header lacks ") + c);
    first = 1;
  } else {
    for (std::size_t i = 0; i < std::size(kColumns); ++i) {
      at[kColumns[i]] = i;
      header.emplace_back(kColumns[i]);
    }
  }

  std::ostringstream out;
  std::size_t width = header.size();
  for (std::size_t r = first; r < records.size(); ++r)
    width = std::max(width, records[r].fields.size());
  for (std::size_t i = header.size(); i < width; ++i)
    header.push_back("extra_" + std::to_string(i + 1));
  // An input column named like an output column (an empty predicted_tflops to fill) is replaced.
  std::vector<bool> keep(header.size(), true);
  for (std::size_t i = 0; i < header.size(); ++i)
    for (const char* c : kOutColumns) keep[i] = keep[i] && lower(trim(header[i])) != c;
  bool first_column = true;
  for (std::size_t i = 0; i < header.size(); ++i)
    if (keep[i]) {
      out << (first_column ? "" : ",") << csv_field(header[i]);
      first_column = false;
    }
  for (const char* c : kOutColumns) out << "," << c;
  out << "\n";

  for (std::size_t r = first; r < records.size(); ++r) {
    const CsvRecord& rec = records[r];
    auto field = [&](const char* name) -> std::string_view {
      const std::size_t i = at.at(name);
      return i < rec.fields.size() ? trim(rec.fields[i]) : std::string_view{};
    };
    const ModelProduct* gpu = find_model_product(field("gpu"));
    if (gpu == nullptr)
      bad_row(origin, rec.line,
              "unknown GPU '" + std::string(field("gpu")) +
                  "' (tcbench_model gpus lists the names the model knows)");
    const auto precision = precision_named(field("precision"));
    if (!precision)
      bad_row(origin, rec.line,
              "unknown precision '" + std::string(field("precision")) +
                  "' (fp64, fp32, tf32, fp16, fp16_acc16, bf16, int8, fp8, fp4, fp6)");
    GemmQuery q;
    q.precision = *precision;
    const char* dims[] = {"m", "n", "k"};
    std::int64_t* dst[] = {&q.m, &q.n, &q.k};
    for (int d = 0; d < 3; ++d) {
      const auto v = positive_size(field(dims[d]));
      if (!v)
        bad_row(origin, rec.line,
                std::string(dims[d]) + " = '" + std::string(field(dims[d])) +
                    "' is not a positive integer up to 2^40");
      *dst[d] = *v;
    }
    if (!field("batch").empty()) {
      const auto b = positive_size(field("batch"));
      if (!b)
        bad_row(origin, rec.line,
                "batch = '" + std::string(field("batch")) + "' is not a positive integer");
      q.batch = *b;
    }
    const std::string la = lower(field("layout_a")), lb = lower(field("layout_b"));
    if (la != "mk" && la != "km")
      bad_row(origin, rec.line,
              "layout_a = '" + std::string(field("layout_a")) + "' is not mk or km");
    if (lb != "kn" && lb != "nk")
      bad_row(origin, rec.line,
              "layout_b = '" + std::string(field("layout_b")) + "' is not kn or nk");
    q.a_k_contiguous = la == "mk";
    q.b_n_contiguous = lb == "kn";
    if (at.count("c_type") && !field("c_type").empty()) {
      const auto t = type_named(field("c_type"));
      if (!t)
        bad_row(origin, rec.line,
                "c_type = '" + std::string(field("c_type")) + "' is not a type the model knows");
      q.c_type = *t;
    }

    const ModelPrediction p = predict_v2(gpu->spec, q, gpu->canonical, constants);
    first_column = true;
    for (std::size_t i = 0; i < header.size(); ++i)
      if (keep[i]) {
        out << (first_column ? "" : ",") << (i < rec.fields.size() ? csv_field(rec.fields[i]) : "");
        first_column = false;
      }
    const numerics::OperandAlignment& al = p.time.alignment;
    const std::string alignment =
        "a" + std::to_string(al.a) + " b" + std::to_string(al.b) + " c" + std::to_string(al.c);
    if (!p.not_covered.empty()) {
      out << ",,,,,,,,," << alignment << ",,," << csv_field("not covered: " + p.not_covered)
          << "\n";
      continue;
    }
    const numerics::GemmTimePredictionV2& t = p.time;
    out << "," << fixed(t.flops_per_s / 1e12, 3) << "," << fixed(t.seconds * 1e6, 3) << ","
        << fixed(t.bound_flops_per_s / 1e12, 3) << "," << t.tile.m << "x" << t.tile.n << ","
        << t.split_k << "," << (t.stream_k ? "stream-K" : "data-parallel") << ","
        << fixed(t.waves, 3) << "," << t.regime << "," << alignment << "," << fixed(p.ceiling, 4)
        << "," << csv_field(p.coverage) << "," << csv_field(p.note) << "\n";
  }
  const std::string text = out.str();
  if (out_path.empty() || out_path == "-") {
    std::cout << text;
    return std::cout.good() ? 0 : 1;
  }
  std::ofstream os(out_path, std::ios::binary);
  if (!os) throw InvalidArgument("cannot write " + out_path + ".");
  os << text;
  os.close();
  if (!os) throw InvalidArgument("writing " + out_path + " failed (disk full?).");
  return 0;
}

int list_gpus() {
  std::cout << "gpu,device,family,sm_count,memory_gbps,precision,peak_tflops\n";
  for (const ModelProduct& g : model_products()) {
    std::string family = "none";
    try {
      family = std::string(name(family_of(g.spec.cc_major, g.spec.cc_minor)));
    } catch (const InvalidArgument&) {
    }
    for (Precision p : kAllPrecisions) {
      const Peak pk = peak(g.spec, p);
      if (!pk.supported) continue;
      std::cout << csv_field(g.canonical) << "," << csv_field(g.spec.name) << "," << family << ","
                << g.spec.sm_count << "," << fixed(peak_memory_gbps(g.spec), 1) << "," << name(p)
                << "," << fixed(pk.denominator(), 2) << "\n";
    }
  }
  return 0;
}

// Every message may quote its input (an argument, a row's field): escaped (error.hpp).
int usage(const char* program, const std::string& why) {
  const std::string name = printable(program);
  std::fprintf(stderr,
               "%s: %s\nusage: %s predict [--constants FILE] [--out FILE] IN.csv | gpus | "
               "constants\n",
               name.c_str(), printable(why).c_str(), name.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const char* program = argc > 0 ? argv[0] : "tcbench_model";
  if (argc < 2) return usage(program, "no command");
  const std::string cmd = argv[1];
  try {
    if (cmd == "gpus") return argc == 2 ? list_gpus() : usage(program, "gpus takes no argument");
    if (cmd == "constants") {
      if (argc != 2) return usage(program, "constants takes no argument");
      (void)ModelConstants::embedded();  // it parses, or the build would be broken
      std::cout << embedded_model_constants_text();
      return 0;
    }
    if (cmd != "predict") return usage(program, "unknown command '" + cmd + "'");
    std::string in, out, constants;
    for (int i = 2; i < argc; ++i) {
      const std::string a = argv[i];
      if ((a == "--out" || a == "--constants") && i + 1 < argc)
        (a == "--out" ? out : constants) = argv[++i];
      else if (!a.empty() && a[0] == '-' && a != "-")
        return usage(program, "unknown or incomplete argument '" + a + "'");
      else if (in.empty())
        in = a;
      else
        return usage(program, "more than one input file");
    }
    if (in.empty()) return usage(program, "predict needs an input file (or - for stdin)");
    return predict(in, out, constants);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: %s\n", printable(program).c_str(), printable(e.what()).c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", printable(program).c_str(), printable(e.what()).c_str());
    return 2;
  }
}
