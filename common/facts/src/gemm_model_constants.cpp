#include "tcbench/gemm_model_constants.hpp"

#include "tcbench/csv.hpp"
#include "tcbench/error.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <set>
#include <sstream>

namespace tcbench {

// data/model/gemm_model.csv, embedded by CMake (gemm_model_constants_data.cpp.in).
extern const char kEmbeddedModelConstants[];

namespace {

constexpr std::array<std::pair<ArchFamily, std::string_view>, 6> kFamilies{{
    {ArchFamily::turing, "turing"},
    {ArchFamily::ampere, "ampere"},
    {ArchFamily::ada, "ada"},
    {ArchFamily::hopper, "hopper"},
    {ArchFamily::blackwell, "blackwell"},
    {ArchFamily::blackwell_rtx, "blackwell_rtx"},
}};

bool is_family(std::string_view s) {
  for (const auto& [f, n] : kFamilies)
    if (n == s) return true;
  return false;
}

// The numeric fields of a family, with where each lives in TimeModelConstants.
struct NumericField {
  std::string_view name;
  double numerics::TimeModelConstants::*member;
};
constexpr NumericField kNumeric[] = {
    {"fixed_us", &numerics::TimeModelConstants::fixed_us},
    {"tile_half", &numerics::TimeModelConstants::tile_half},
    {"wave_depth", &numerics::TimeModelConstants::wave_depth},
    {"stream_k_overhead", &numerics::TimeModelConstants::stream_k_overhead},
    {"split_k_fixed_us", &numerics::TimeModelConstants::split_k_fixed_us},
    {"bandwidth_efficiency", &numerics::TimeModelConstants::bandwidth_efficiency},
    {"batched_efficiency", &numerics::TimeModelConstants::batched_efficiency},
};
constexpr std::string_view kAlignClasses[] = {"1", "2", "4", "8"};
constexpr std::string_view kAlignArrays[] = {"align_inputs_", "align_output_", "align_memory_"};
constexpr std::string_view kOtherFamilyFields[] = {"inherit", "stream_k", "k_step_bytes",
                                                   "min_split_k_depth", "tiles"};

bool is_family_field(std::string_view n) {
  for (const NumericField& f : kNumeric)
    if (f.name == n) return true;
  for (std::string_view a : kAlignArrays)
    for (std::string_view c : kAlignClasses)
      if (n.size() == a.size() + c.size() && n.substr(0, a.size()) == a && n.substr(a.size()) == c)
        return true;
  for (std::string_view o : kOtherFamilyFields)
    if (o == n) return true;
  return n.starts_with("ceiling_best_");
}

bool parse_double(std::string_view s, double& out) {
  s = trim(s);
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end && std::isfinite(out);
}

[[noreturn]] void bad(std::string_view origin, std::size_t line, const std::string& what) {
  throw InvalidArgument(std::string(origin) + " line " + std::to_string(line) + ": " + what + ".");
}

// "256x128 128x128" -> tiles; InvalidArgument for anything else.
std::vector<numerics::TimeModelTile> parse_tiles(std::string_view text, std::string_view origin) {
  std::vector<numerics::TimeModelTile> out;
  std::istringstream in{std::string(text)};
  std::string item;
  while (in >> item) {
    const auto x = item.find('x');
    numerics::TimeModelTile t;
    const char* s = item.data();
    auto [p1, e1] = std::from_chars(s, s + (x == std::string::npos ? item.size() : x), t.m);
    if (x == std::string::npos || e1 != std::errc() || p1 != s + x) {
      throw InvalidArgument(std::string(origin) + ": tile '" + item + "' is not BMxBN.");
    }
    auto [p2, e2] = std::from_chars(s + x + 1, s + item.size(), t.n);
    if (e2 != std::errc() || p2 != s + item.size() || t.m <= 0 || t.n <= 0 || t.m > 1024 ||
        t.n > 1024)
      throw InvalidArgument(std::string(origin) + ": tile '" + item +
                            "' is not BMxBN with sizes 1..1024.");
    out.push_back(t);
  }
  return out;
}

std::string_view ceiling_key_precision(Precision p) {
  // FP16 runs at the BF16 tensor rate on every family tcbench knows; the table has BF16 rows.
  return (p == Precision::fp16 || p == Precision::fp16_acc16) ? name(Precision::bf16) : name(p);
}

}  // namespace

std::string_view embedded_model_constants_text() {
  return kEmbeddedModelConstants;
}

std::string_view name(ArchFamily f) {
  for (const auto& [fam, n] : kFamilies)
    if (fam == f) return n;
  return "unknown";
}

ArchFamily family_of(int cc_major, int cc_minor) {
  if (cc_major == 7 && cc_minor == 5) return ArchFamily::turing;
  if (cc_major == 8 && cc_minor == 9) return ArchFamily::ada;
  if (cc_major == 8) return ArchFamily::ampere;
  if (cc_major == 9) return ArchFamily::hopper;
  if (cc_major == 10 || cc_major == 11) return ArchFamily::blackwell;
  if (cc_major == 12) return ArchFamily::blackwell_rtx;
  throw InvalidArgument("the GEMM time model has no architecture family for compute capability " +
                        std::to_string(cc_major) + "." + std::to_string(cc_minor));
}

const ModelConstants::Value* ModelConstants::find(std::string_view scope,
                                                  std::string_view key) const {
  auto it = rows_.find({std::string(scope), std::string(key)});
  return it == rows_.end() ? nullptr : &it->second;
}

ModelConstants ModelConstants::parse(std::string_view csv, std::string_view origin) {
  ModelConstants out;
  out.origin_ = origin;
  const std::vector<CsvRecord> records = parse_csv(csv, origin);
  if (records.empty()) throw InvalidArgument(std::string(origin) + " is empty.");
  const std::vector<std::string> header{"scope", "name", "value", "provenance"};
  std::vector<std::string> got;
  for (const std::string& f : records.front().fields) got.emplace_back(trim(f));
  if (got != header)
    bad(origin, records.front().line, "the header must be scope,name,value,provenance");
  for (std::size_t r = 1; r < records.size(); ++r) {
    const CsvRecord& rec = records[r];
    if (rec.fields.size() != 4) bad(origin, rec.line, "a row needs 4 fields");
    const std::string scope(trim(rec.fields[0])), key(trim(rec.fields[1]));
    const std::string value(trim(rec.fields[2])), prov(trim(rec.fields[3]));
    if (prov.empty()) bad(origin, rec.line, "'" + key + "' has no provenance");
    if (scope == "measurement") {
      // How host-timed sources measured (`tcbench model check` adds their per-call overhead to
      // the model's device time); the model itself does not read these rows.
      if (!key.starts_with("host_overhead_us:"))
        bad(origin, rec.line, "scope measurement holds only host_overhead_us:<series>");
    } else if (scope == "all") {
      if (key != "typical_over_best") bad(origin, rec.line, "scope all has no field '" + key + "'");
    } else if (is_family(scope)) {
      if (!is_family_field(key)) bad(origin, rec.line, "no family field '" + key + "'");
    } else if (!key.starts_with("ceiling_best_")) {
      bad(origin, rec.line, "a GPU scope ('" + scope + "') holds only ceiling_best_<precision>");
    }
    if (key.starts_with("ceiling_best_") && !parse_precision(key.substr(13)))
      bad(origin, rec.line, "'" + key + "' names no precision of the precision table");
    double number = 0;
    const bool textual = key == "inherit" || key == "tiles";
    if (!textual && !parse_double(value, number))
      bad(origin, rec.line, "'" + key + "' = '" + value + "' is not a finite number");
    if (key == "inherit" && !is_family(value))
      bad(origin, rec.line, "inherit names no family ('" + value + "')");
    if (key == "tiles" && parse_tiles(value, origin).empty())
      bad(origin, rec.line, "tiles names no tile");
    if (!out.rows_.emplace(std::pair{scope, key}, Value{value, prov}).second)
      bad(origin, rec.line, "'" + scope + "', '" + key + "' is given twice");
  }
  if (!out.find("all", "typical_over_best"))
    throw InvalidArgument(std::string(origin) + " has no typical_over_best row.");
  for (const auto& [f, n] : kFamilies) {  // every inherit chain ends, and names every field
    std::set<std::string> seen;
    for (std::string s(n); !s.empty();) {
      if (!seen.insert(s).second)
        throw InvalidArgument(std::string(origin) + ": the inherit chain of " + std::string(n) +
                              " loops.");
      const Value* v = out.find(s, "inherit");
      s = v ? v->text : "";
    }
    (void)out.family(f);
  }
  return out;
}

const ModelConstants& ModelConstants::embedded() {
  static const ModelConstants table = parse(kEmbeddedModelConstants, "data/model/gemm_model.csv");
  return table;
}

numerics::TimeModelConstants ModelConstants::family(ArchFamily f, std::string* basis) const {
  // The chain of scopes a field is looked up in: the family, then what it inherits from.
  std::vector<std::string> chain;
  for (std::string s(name(f)); !s.empty() && chain.size() < kFamilies.size();) {
    chain.push_back(s);
    const Value* v = find(s, "inherit");
    s = v ? v->text : "";
  }
  std::set<std::string> used;
  auto lookup = [&](std::string_view key) -> const Value* {
    for (const std::string& s : chain)
      if (const Value* v = find(s, key)) {
        used.insert(s);
        return v;
      }
    throw InvalidArgument(std::string(origin_) + ": family " + std::string(name(f)) +
                          " (and what it inherits from) has no '" + std::string(key) + "'.");
  };
  auto number = [&](std::string_view key) {
    double d = 0;
    parse_double(lookup(key)->text, d);
    return d;
  };
  numerics::TimeModelConstants c;
  for (const NumericField& nf : kNumeric) c.*nf.member = number(nf.name);
  c.stream_k = number("stream_k") != 0;
  c.k_step_bytes = static_cast<int>(number("k_step_bytes"));
  c.min_split_k_depth = static_cast<std::int64_t>(number("min_split_k_depth"));
  for (int i = 0; i < 4; ++i) {
    c.align_inputs[i] = number(std::string(kAlignArrays[0]) + std::string(kAlignClasses[i]));
    c.align_output[i] = number(std::string(kAlignArrays[1]) + std::string(kAlignClasses[i]));
    c.align_memory[i] = number(std::string(kAlignArrays[2]) + std::string(kAlignClasses[i]));
  }
  c.tiles = parse_tiles(lookup("tiles")->text, origin_);
  if (basis != nullptr) {
    *basis = std::string(name(f)) + "'s constants";
    used.erase(std::string(name(f)));
    if (!used.empty()) {
      *basis += ", with ";
      bool first = true;
      for (const std::string& u : used) {
        *basis += (first ? "" : ", ") + u + "'s";
        first = false;
      }
      *basis += " for the rest";
    }
  }
  return c;
}

ModelConstants::Ceiling ModelConstants::ceiling(std::string_view gpu, ArchFamily f,
                                                Precision p) const {
  const std::string own = "ceiling_best_" + std::string(ceiling_key_precision(p));
  const std::string bf16 = "ceiling_best_bf16";
  std::vector<std::string> scopes{std::string(gpu)};
  for (std::string s(name(f)); !s.empty() && scopes.size() <= kFamilies.size();) {
    scopes.push_back(s);
    const Value* v = find(s, "inherit");
    s = v ? v->text : "";
  }
  double typical = 0;
  parse_double(find("all", "typical_over_best")->text, typical);
  for (const std::string& key : {own, bf16})
    for (const std::string& s : scopes)
      if (const Value* v = find(s, key)) {
        Ceiling c;
        parse_double(v->text, c.best);
        c.typical = std::min(1.0, c.best * typical);
        c.basis = s + " " + key.substr(13) + " (" + v->provenance + ")";
        return c;
      }
  throw InvalidArgument(std::string(origin_) + " has no ceiling for " + std::string(gpu) + " (" +
                        std::string(name(f)) + ") " + std::string(name(p)) + ".");
}

}  // namespace tcbench
