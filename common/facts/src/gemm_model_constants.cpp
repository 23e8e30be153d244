#include "tcbench/gemm_model_constants.hpp"

#include "tcbench/csv.hpp"
#include "tcbench/error.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <set>
#include <sstream>

namespace tcbench {

// The generated table (gemm_model_constants_table.cpp, written by tools/model/fit.py).
extern const std::span<const ConstantRow> kModelConstantRows;

namespace {

constexpr std::array<std::pair<ArchFamily, std::string_view>, 6> kFamilies{{
    {ArchFamily::turing, "turing"},
    {ArchFamily::ampere, "ampere"},
    {ArchFamily::ada, "ada"},
    {ArchFamily::hopper, "hopper"},
    {ArchFamily::blackwell, "blackwell"},
    {ArchFamily::blackwell_rtx, "blackwell_rtx"},
}};
constexpr std::array<ArchFamily, 6> kFamilyList{ArchFamily::turing,    ArchFamily::ampere,
                                                ArchFamily::ada,       ArchFamily::hopper,
                                                ArchFamily::blackwell, ArchFamily::blackwell_rtx};

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
    {"cta_latency_us", &numerics::TimeModelConstants::cta_latency_us},
    {"sustained_fraction", &numerics::TimeModelConstants::sustained_fraction},
    {"sustained_us", &numerics::TimeModelConstants::sustained_us},
    {"tile_half", &numerics::TimeModelConstants::tile_half},
    {"wave_depth", &numerics::TimeModelConstants::wave_depth},
    {"stream_k_overhead", &numerics::TimeModelConstants::stream_k_overhead},
    {"split_k_fixed_us", &numerics::TimeModelConstants::split_k_fixed_us},
    {"bandwidth_efficiency", &numerics::TimeModelConstants::bandwidth_efficiency},
    {"batched_efficiency", &numerics::TimeModelConstants::batched_efficiency},
};
constexpr std::string_view kAlignClasses[] = {"1", "2", "4", "8"};
constexpr std::string_view kAlignArrays[] = {"align_inputs_", "align_output_", "align_memory_"};
constexpr std::string_view kOtherNumbers[] = {"stream_k", "k_step_bytes", "min_split_k_depth"};
constexpr std::string_view kCeiling = "ceiling_";

// A family field's base name (without ":<precision>"), if it is one.
bool is_family_field(std::string_view n) {
  if (n == "tiles" || n == "inherit") return true;
  for (const NumericField& f : kNumeric)
    if (f.name == n) return true;
  for (std::string_view a : kAlignArrays)
    for (std::string_view c : kAlignClasses)
      if (n.size() == a.size() + c.size() && n.starts_with(a) && n.substr(a.size()) == c)
        return true;
  for (std::string_view o : kOtherNumbers)
    if (o == n) return true;
  return false;
}

bool parse_double(std::string_view s, double& out) {
  s = trim(s);
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end && std::isfinite(out);
}

double number(std::string_view s) {
  double d = 0;
  parse_double(s, d);  // checked when the rows were taken
  return d;
}

// "256x128 128x128" -> tiles; InvalidArgument for anything else.
std::vector<numerics::TimeModelTile> parse_tiles(std::string_view text, const std::string& where) {
  std::vector<numerics::TimeModelTile> out;
  std::istringstream in{std::string(text)};
  std::string item;
  while (in >> item) {
    const auto x = item.find('x');
    numerics::TimeModelTile t;
    const char* s = item.data();
    const char* e = s + item.size();
    bool ok = x != std::string::npos;
    if (ok) {
      auto [p1, e1] = std::from_chars(s, s + x, t.m);
      auto [p2, e2] = std::from_chars(s + x + 1, e, t.n);
      ok = e1 == std::errc() && p1 == s + x && e2 == std::errc() && p2 == e && t.m > 0 && t.n > 0 &&
           t.m <= 1024 && t.n <= 1024;
    }
    if (!ok)
      throw InvalidArgument(where + ": tile '" + item + "' is not BMxBN with sizes 1..1024.");
    out.push_back(t);
  }
  if (out.empty()) throw InvalidArgument(where + ": tiles names no tile.");
  return out;
}

// The precision whose ceiling rows stand in for p's: FP16 runs at the BF16 rate on every family
// tcbench knows.
Precision ceiling_key(Precision p) {
  return (p == Precision::fp16 || p == Precision::fp16_acc16) ? Precision::bf16 : p;
}

}  // namespace

std::string_view name(ArchFamily f) {
  for (const auto& [fam, n] : kFamilies)
    if (fam == f) return n;
  return "unknown";
}

std::span<const ArchFamily> all_families() {
  return kFamilyList;
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

std::vector<std::string> ModelConstants::chain(ArchFamily f) const {
  std::vector<std::string> out;
  for (std::string s(name(f)); !s.empty() && out.size() < kFamilies.size();) {
    out.push_back(s);
    const Value* v = find(s, "inherit");
    s = v ? v->text : "";
  }
  return out;
}

ModelConstants::ModelConstants(std::span<const ConstantRow> rows, std::string_view origin)
    : origin_(origin) {
  std::size_t index = 0;
  for (const ConstantRow& r : rows) {
    ++index;
    const std::string where = std::string(origin) + " row " + std::to_string(index);
    const std::string scope(trim(r.scope)), key(trim(r.name));
    const std::string value(trim(r.value)), prov(trim(r.provenance));
    auto bad = [&](const std::string& what) { throw InvalidArgument(where + ": " + what + "."); };
    if (scope.empty() || key.empty()) bad("a row needs a scope and a name");
    if (prov.empty()) bad("'" + key + "' has no provenance");
    const auto colon = key.find(':');
    const std::string base = key.substr(0, colon);
    if (scope == "measurement") {
      // How host-timed sources measured (`tcbench model check` adds their per-call overhead to
      // the model's device time); the model itself does not read these rows.
      if (base != "host_overhead_us" || colon == std::string::npos || colon + 1 == key.size())
        bad("scope measurement holds only host_overhead_us:<series>");
    } else if (base.starts_with(kCeiling)) {
      if (colon != std::string::npos || !parse_precision(base.substr(kCeiling.size())))
        bad("'" + key + "' names no precision of the precision table");
    } else if (!is_family(scope)) {
      bad("a GPU scope ('" + scope + "') holds only ceiling_<precision>");
    } else if (!is_family_field(base)) {
      bad("no family field '" + base + "'");
    } else if (colon != std::string::npos &&
               (base == "inherit" || !parse_precision(key.substr(colon + 1)))) {
      bad("'" + key + "': only a field may carry a precision, and it must name one");
    }
    double d = 0;
    if (base == "inherit") {
      if (!is_family(value)) bad("inherit names no family ('" + value + "')");
    } else if (base == "tiles") {
      (void)parse_tiles(value, where);
    } else if (!parse_double(value, d)) {
      bad("'" + key + "' = '" + value + "' is not a finite number");
    } else if (base.starts_with(kCeiling) && !(d > 0 && d <= 1)) {
      bad("'" + key + "' = " + value + " is not a fraction in (0, 1]");
    }
    if (!rows_.emplace(std::pair{scope, key}, Value{value, prov}).second)
      bad("'" + scope + "', '" + key + "' is given twice");
    order_.emplace_back(scope, key);
  }
  for (const auto& [f, n] : kFamilies) {  // every inherit chain ends, and names every field
    std::set<std::string> seen;
    for (std::string s(n); !s.empty();) {
      if (!seen.insert(s).second)
        throw InvalidArgument(std::string(origin) + ": the inherit chain of " + std::string(n) +
                              " loops.");
      const Value* v = find(s, "inherit");
      s = v ? v->text : "";
    }
    (void)family(f, Precision::bf16);
  }
}

const ModelConstants& ModelConstants::embedded() {
  static const ModelConstants table(kModelConstantRows, "the compiled-in model constants");
  return table;
}

numerics::TimeModelConstants ModelConstants::family(
    ArchFamily f, Precision p, std::map<std::string, std::string>* borrowed) const {
  const std::vector<std::string> scopes = chain(f);
  const std::string suffix = ":" + std::string(name(p));
  auto lookup = [&](std::string_view key) -> std::string_view {
    for (const std::string& s : scopes)
      for (const std::string& k : {std::string(key) + suffix, std::string(key)})
        if (const Value* v = find(s, k)) {
          if (borrowed != nullptr && s != scopes.front()) (*borrowed)[std::string(key)] = s;
          return v->text;
        }
    throw InvalidArgument(std::string(origin_) + ": family " + std::string(name(f)) +
                          " (and what it inherits from) has no '" + std::string(key) + "'.");
  };
  numerics::TimeModelConstants c;
  for (const NumericField& nf : kNumeric) c.*nf.member = number(lookup(nf.name));
  c.stream_k = number(lookup("stream_k")) != 0;
  c.k_step_bytes = static_cast<int>(number(lookup("k_step_bytes")));
  c.min_split_k_depth = static_cast<std::int64_t>(number(lookup("min_split_k_depth")));
  for (int i = 0; i < 4; ++i) {
    c.align_inputs[i] =
        number(lookup(std::string(kAlignArrays[0]) + std::string(kAlignClasses[i])));
    c.align_output[i] =
        number(lookup(std::string(kAlignArrays[1]) + std::string(kAlignClasses[i])));
    c.align_memory[i] =
        number(lookup(std::string(kAlignArrays[2]) + std::string(kAlignClasses[i])));
  }
  c.tiles = parse_tiles(lookup("tiles"), std::string(origin_));
  return c;
}

ModelConstants::Ceiling ModelConstants::ceiling(std::string_view gpu, ArchFamily f,
                                                Precision p) const {
  std::vector<std::string> scopes{std::string(gpu)};
  for (const std::string& s : chain(f)) scopes.push_back(s);
  const Precision want = ceiling_key(p);
  for (Precision key : {want, Precision::bf16}) {
    for (const std::string& s : scopes)
      if (const Value* v = find(s, std::string(kCeiling) + std::string(name(key)))) {
        Ceiling c;
        c.value = number(v->text);
        c.own = key == want && (s == gpu || s == scopes[1]);
        c.basis = s + " " + std::string(name(key));
        if (key != want) c.basis += " (transferred: no " + std::string(name(want)) + " ceiling)";
        return c;
      }
  }
  throw InvalidArgument(std::string(origin_) + " has no ceiling for " + std::string(gpu) + " (" +
                        std::string(name(f)) + ") " + std::string(name(p)) + ".");
}

std::map<std::string, double> ModelConstants::host_overheads() const {
  std::map<std::string, double> out;
  for (const auto& [key, v] : rows_)
    if (key.first == "measurement")
      out[key.second.substr(key.second.find(':') + 1)] = number(v.text);
  return out;
}

std::string ModelConstants::csv() const {
  std::string out = "scope,name,value,provenance\n";
  for (const auto& key : order_) {
    const Value& v = rows_.at(key);
    out += csv_field(key.first) + "," + csv_field(key.second) + "," + csv_field(v.text) + "," +
           csv_field(v.provenance) + "\n";
  }
  return out;
}

}  // namespace tcbench
