// tcbench_model: the GEMM time model (gemm_prediction.hpp, predict_time) on a file of GEMMs, for
// `tcbench model predict` and `tcbench model check`, without a GPU.
//
//   tcbench_model predict [--out FILE] IN.csv   (IN.csv "-": stdin)
//   tcbench_model gpus                           the GPUs and their peaks
//   tcbench_model constants                      the compiled-in constants, as CSV
//   tcbench_model vocabulary                     the precisions and output types it reads
//
// predict reads rows gpu,precision,m,n,k,batch,layout_a,layout_b (C[m,n] = A B, C row-major;
// layout_a mk = A stored [m][k], or km; layout_b kn or nk; gpu a peak-table name such as
// "H100 SXM" or a CUDA device name; precision a precision-table name), or rows gpu,name where name
// is a tcbench benchmark name of a GEMM ("alignment/cublaslt/fp16/m:4096/n:33/k:4096/layout:nn",
// cuBLAS's column-major convention, an optional /batch:N). The header line is optional for the
// first form: a first line with fields named gpu and precision (or gpu and name) is a header, and
// then the columns may come in any order, an optional c_type column (fp16, bf16, fp32, fp8, ...)
// names the output type, and other columns pass through; an input column named like an output
// column passes through as input_<name>. Without a header the first eight fields are the columns
// above in that order and the rest pass through. Fields are trimmed; names, precisions and
// layouts are matched without regard to case; an empty batch is 1. Each row is written back with
// benchmark (the equivalent tcbench benchmark name), predicted_tflops (useful 2mnk*batch per
// second; TOP/s for int8), predicted_us, bound_tflops (the roofline bound, not a prediction) and
// the tile, split-K, schedule, waves, regime, alignment and basis the model assumed; a row the
// model does not cover gets empty predictions and the reason in `note`.
//
// Exit codes: 0 written; 2 a usage error, an unreadable file, or a bad row (one sentence naming
// the line: an unknown GPU or precision, a size that is not a positive integer, a bad layout).
#include "tcbench/csv.hpp"
#include "tcbench/error.hpp"
#include "tcbench/gemm_prediction.hpp"
#include "tcbench/gemm_spec.hpp"
#include "tcbench/schema.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
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

// Output types by name (the c_type column); the first name of a type is the one it is printed as.
constexpr std::pair<std::string_view, cudaDataType_t> kTypes[] = {
    {"fp64", CUDA_R_64F},         {"fp32", CUDA_R_32F},         {"fp16", CUDA_R_16F},
    {"bf16", CUDA_R_16BF},        {"int32", CUDA_R_32I},        {"int8", CUDA_R_8I},
    {"fp8", CUDA_R_8F_E4M3},      {"fp8_e5m2", CUDA_R_8F_E5M2}, {"tf32", CUDA_R_32F},
    {"fp8_e4m3", CUDA_R_8F_E4M3}, {"float32", CUDA_R_32F},      {"float16", CUDA_R_16F},
    {"bfloat16", CUDA_R_16BF}};

std::optional<cudaDataType_t> type_named(std::string_view s) {
  const std::string l = lower(trim(s));
  for (const auto& [name, type] : kTypes)
    if (name == l) return type;
  return std::nullopt;
}

// A type's name in that vocabulary; the CUDA name for a type it has none for (FP4, FP6).
std::string type_name_of(cudaDataType_t t) {
  for (const auto& [name, type] : kTypes)
    if (type == t) return std::string(name);
  return data_type_name(t);
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
constexpr const char* kOutColumns[] = {
    "benchmark", "predicted_tflops", "predicted_us", "bound_tflops", "tile",
    "split_k",   "schedule",         "waves",        "regime",       "alignment",
    "ceiling",   "model_basis",      "note"};

[[noreturn]] void bad_row(const std::string& origin, std::size_t line, const std::string& what) {
  throw InvalidArgument(origin + " line " + std::to_string(line) + ": " + what + ".");
}

// A field as a message quotes it: control bytes (a NUL among them) escaped, so the sentence is
// never cut short or changed by what the file holds.
std::string quoted(std::string_view field) {
  return "'" + printable(field) + "'";
}

std::string precision_list() {
  std::string out;
  for (const PrecisionInfo& row : kPrecisionTable)
    out += (out.empty() ? "" : ", ") + std::string(row.name);
  return out;
}

// A GEMM benchmark name (topic/variant/precision/m:M/n:N/k:K/layout:L[/batch:B]), in cuBLAS's
// column-major convention, as the query the model takes; nullopt with the reason in `why`.
std::optional<GemmQuery> query_of_name(std::string_view name, std::string& why) {
  std::vector<std::string_view> parts;
  for (std::size_t at = 0; at <= name.size();) {
    const std::size_t slash = std::min(name.find('/', at), name.size());
    parts.push_back(name.substr(at, slash - at));
    at = slash + 1;
  }
  if (parts.size() < 4) {
    why = "is not topic/variant/precision/m:M/n:N/k:K/layout:L";
    return std::nullopt;
  }
  const auto p = precision_named(parts[2]);
  if (!p) {
    why = "names no precision of the table (" + precision_list() + ")";
    return std::nullopt;
  }
  std::map<std::string, std::string> args;
  for (std::size_t i = 3; i < parts.size(); ++i) {
    const auto colon = parts[i].find(':');
    if (colon == std::string_view::npos ||
        !args.emplace(parts[i].substr(0, colon), parts[i].substr(colon + 1)).second) {
      why = "has an argument that is not key:value, or a key twice";
      return std::nullopt;
    }
  }
  std::int64_t dims[3] = {0, 0, 0}, batch = 1;
  const char* keys[] = {"m", "n", "k"};
  for (int d = 0; d < 3; ++d) {
    const auto v = args.count(keys[d]) ? positive_size(args[keys[d]]) : std::nullopt;
    if (!v) {
      why = std::string("has no positive ") + keys[d] + ":<size up to 2^40>";
      return std::nullopt;
    }
    dims[d] = *v;
  }
  if (args.count("batch")) {
    const auto b = positive_size(args["batch"]);
    if (!b || *b > (std::int64_t{1} << 31) - 1) {
      why = "has a batch that is not a positive 32-bit count";
      return std::nullopt;
    }
    batch = *b;
  }
  const std::string layout = args.count("layout") ? lower(args["layout"]) : "";
  if (layout != "nn" && layout != "nt" && layout != "tn" && layout != "tt") {
    why = "has no layout:nn|nt|tn|tt";
    return std::nullopt;
  }
  GemmSpec spec = GemmSpec::for_precision(*p, dims[0], dims[1], dims[2]);
  spec.problem.trans_a = layout[0] == 't';
  spec.problem.trans_b = layout[1] == 't';
  spec.batch_count = static_cast<std::int32_t>(batch);
  return query_of(spec, *p);
}

// The tcbench benchmark name a row-major query is (bench_alignment's cuBLASLt rows): the inverse
// of query_of, D = B^T A^T column-major.
std::string benchmark_name(const GemmQuery& q) {
  GemmProblem problem;
  problem.m = q.n;
  problem.n = q.m;
  problem.k = q.k;
  problem.trans_a = !q.b_n_contiguous;
  problem.trans_b = !q.a_k_contiguous;
  BenchName name("alignment", "cublaslt", q.precision);
  name.gemm(problem);
  if (q.batch > 1) name.arg(Key::batch, q.batch);
  return name.str();
}

int predict(const std::string& in_path, const std::string& out_path) {
  const std::string origin = in_path == "-" ? "standard input" : in_path;
  const ModelConstants& constants = ModelConstants::embedded();
  const std::vector<CsvRecord> records = parse_csv(read_all(in_path), origin);

  // Where each column is: by the header's names, or the documented order.
  std::map<std::string, std::size_t> at;
  std::vector<std::string> header;
  std::size_t first = 0;
  bool named_gpu = false, named_precision = false, named_name = false;
  if (!records.empty())
    for (const std::string& f : records[0].fields) {
      named_gpu = named_gpu || lower(trim(f)) == "gpu";
      named_precision = named_precision || lower(trim(f)) == "precision";
      named_name = named_name || lower(trim(f)) == "name";
    }
  const bool has_header = named_gpu && (named_precision || named_name);
  const bool by_name = has_header && !named_precision;
  if (has_header) {
    for (std::size_t i = 0; i < records[0].fields.size(); ++i) {
      const std::string name = lower(trim(records[0].fields[i]));
      header.emplace_back(trim(records[0].fields[i]));
      if (!name.empty() && !at.emplace(name, i).second)
        bad_row(origin, records[0].line, "the header names column " + quoted(name) + " twice");
    }
    if (!by_name)
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
  // An input column named like an output column passes through under input_<name>; a name that
  // is taken too gets a number.
  std::vector<std::string> out_header;
  std::set<std::string> taken(std::begin(kOutColumns), std::end(kOutColumns));
  for (const std::string& h : header) {
    std::string name = h;
    if (taken.count(lower(name)))
      for (int i = 1; taken.count(lower(name)); ++i)
        name = "input_" + h + (i > 1 ? "_" + std::to_string(i) : "");
    taken.insert(lower(name));
    out_header.push_back(name);
  }
  for (std::size_t i = 0; i < out_header.size(); ++i)
    out << (i ? "," : "") << csv_field(out_header[i]);
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
              "unknown GPU " + quoted(field("gpu")) +
                  " (tcbench_model gpus lists the names the model knows)");
    GemmQuery q;
    if (by_name) {
      std::string why;
      const auto named = query_of_name(field("name"), why);
      if (!named) bad_row(origin, rec.line, "name " + quoted(field("name")) + " " + why);
      q = *named;
    } else {
      const auto precision = precision_named(field("precision"));
      if (!precision)
        bad_row(origin, rec.line,
                "unknown precision " + quoted(field("precision")) + " (" + precision_list() + ")");
      q.precision = *precision;
      const char* dims[] = {"m", "n", "k"};
      std::int64_t* dst[] = {&q.m, &q.n, &q.k};
      for (int d = 0; d < 3; ++d) {
        const auto v = positive_size(field(dims[d]));
        if (!v)
          bad_row(origin, rec.line,
                  std::string(dims[d]) + " = " + quoted(field(dims[d])) +
                      " is not a positive integer up to 2^40");
        *dst[d] = *v;
      }
      if (!field("batch").empty()) {
        const auto b = positive_size(field("batch"));
        if (!b)
          bad_row(origin, rec.line,
                  "batch = " + quoted(field("batch")) + " is not a positive integer");
        q.batch = *b;
      }
      const std::string la = lower(field("layout_a")), lb = lower(field("layout_b"));
      if (la != "mk" && la != "km")
        bad_row(origin, rec.line, "layout_a = " + quoted(field("layout_a")) + " is not mk or km");
      if (lb != "kn" && lb != "nk")
        bad_row(origin, rec.line, "layout_b = " + quoted(field("layout_b")) + " is not kn or nk");
      q.a_k_contiguous = la == "mk";
      q.b_n_contiguous = lb == "kn";
    }
    if (at.count("c_type") && !field("c_type").empty()) {
      const auto t = type_named(field("c_type"));
      if (!t)
        bad_row(origin, rec.line,
                "c_type = " + quoted(field("c_type")) + " is not a type the model knows");
      q.c_type = *t;
    }

    const ModelPrediction p = predict_time(gpu->spec, q, gpu->canonical, constants);
    for (std::size_t i = 0; i < header.size(); ++i)
      out << (i ? "," : "") << (i < rec.fields.size() ? csv_field(rec.fields[i]) : "");
    out << "," << csv_field(benchmark_name(q));
    const numerics::OperandAlignment& al = p.time.alignment;
    const std::string alignment =
        "a" + std::to_string(al.a) + " b" + std::to_string(al.b) + " c" + std::to_string(al.c);
    if (!p.not_covered.empty()) {
      out << ",,,,,,,,," << alignment << ",,," << csv_field("not covered: " + p.not_covered)
          << "\n";
      continue;
    }
    const numerics::GemmTimePrediction& t = p.time;
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
  if (!os) throw InvalidArgument("cannot write " + printable(out_path) + ".");
  os << text;
  os.close();
  if (!os) throw InvalidArgument("writing " + printable(out_path) + " failed (disk full?).");
  return 0;
}

int list_gpus() {
  std::cout << "gpu,device,family,sm_count,memory_gbps,geforce,precision,peak_tflops\n";
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
                << g.spec.sm_count << "," << fixed(peak_memory_gbps(g.spec), 1) << ","
                << (is_geforce(g.spec.name) ? 1 : 0) << "," << name(p) << ","
                << fixed(pk.denominator(), 2) << "\n";
    }
  }
  return 0;
}

// The vocabulary the model reads, for the Python tools (which read this instead of a copy of
// the C++ tables): each precision's input element size, output type, whether it counts integer
// operations and whether tcbench runs it with A K-contiguous (TN), from the precision table; and
// each output type name the c_type column takes, with its size.
int list_vocabulary() {
  std::cout << "kind,name,bits,output_type,integer,a_k_major\n";
  for (const PrecisionInfo& row : kPrecisionTable)
    std::cout << "precision," << row.name << "," << data_type_bits(row.a) << ","
              << type_name_of(row.d) << "," << (row.integer ? 1 : 0) << ","
              << (row.a_k_major ? 1 : 0) << "\n";
  for (const auto& [name, type] : kTypes)
    std::cout << "type," << name << "," << data_type_bits(type) << ",,,\n";
  return 0;
}

// Every message may quote its input (an argument, a row's field): escaped (error.hpp).
int usage(const char* program, const std::string& why) {
  const std::string name = printable(program);
  std::fprintf(stderr,
               "%s: %s\nusage: %s predict [--out FILE] IN.csv | gpus | constants | "
               "vocabulary\n",
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
      std::cout << ModelConstants::embedded().csv();
      return 0;
    }
    if (cmd == "vocabulary")
      return argc == 2 ? list_vocabulary() : usage(program, "vocabulary takes no argument");
    if (cmd != "predict") return usage(program, "unknown command '" + cmd + "'");
    std::string in, out;
    for (int i = 2; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--out" && i + 1 < argc)
        out = argv[++i];
      else if (!a.empty() && a[0] == '-' && a != "-")
        return usage(program, "unknown or incomplete argument '" + a + "'");
      else if (in.empty())
        in = a;
      else
        return usage(program, "more than one input file");
    }
    if (in.empty()) return usage(program, "predict needs an input file (or - for stdin)");
    return predict(in, out);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: %s\n", printable(program).c_str(), printable(e.what()).c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", printable(program).c_str(), printable(e.what()).c_str());
    return 2;
  }
}
