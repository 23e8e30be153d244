#include "tcbench/schema.hpp"

#include "tcbench/error.hpp"
#include "tcbench/json.hpp"

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <regex>
#include <system_error>
#include <utility>

namespace tcbench {

// ---------------------------------------------------------------------------------------------
// Names

namespace {

using KT = KeyType;
constexpr KeyInfo kKeys[] = {
    {Key::m, "m", KT::integer, "GEMM rows of D"},
    {Key::n, "n", KT::integer, "GEMM columns of D (only ever a GEMM dimension)"},
    {Key::k, "k", KT::integer, "GEMM depth"},
    {Key::layout, "layout", KT::text, "GEMM layout, op(A) op(B): nn, nt, tn, tt (after m, n, k)"},
    {Key::batch, "batch", KT::integer, "batched GEMMs: matrices per call"},
    {Key::tokens, "tokens", KT::integer, "tokens (batch x sequence) of a layer"},
    {Key::hidden, "hidden", KT::integer, "hidden size of a transformer block"},
    {Key::elements, "elements", KT::integer, "elements of a memory-bound kernel"},
    {Key::steps, "steps", KT::integer, "training steps"},
    {Key::scale_log2, "scale_log2", KT::integer, "a loss scale 2^k"},
    {Key::accum, "accum", KT::text, "FP8 accumulation: fast or split"},
    {Key::layer, "layer", KT::text, "which layer of a block a GEMM shape is"},
    {Key::in, "in", KT::text, "input type of a scaling kernel"},
    {Key::recipe, "recipe", KT::text, "FP8 scaling recipe"},
    {Key::history, "history", KT::integer, "FP8 delayed scaling: amax history length"},
    {Key::margin, "margin", KT::integer,
     "FP8 delayed scaling: margin (powers of two below the format's max)"},
    {Key::promote, "promote", KT::integer,
     "FP8 accumulation: products of K per promotion to FP32 (0: none)"},
    {Key::regime, "regime", KT::text,
     "burst (the first launches after idle) or sustained (at the steady state)"},
};

constexpr bool keys_in_enum_order() {
  for (std::size_t i = 0; i < std::size(kKeys); ++i)
    if (static_cast<std::size_t>(kKeys[i].key) != i) return false;
  return static_cast<std::size_t>(Key::regime) + 1 == std::size(kKeys);
}
static_assert(keys_in_enum_order(), "kKeys rows must follow the enum's order, one per key");

constexpr std::array<Key, std::size(kKeys)> kAllKeys = [] {
  std::array<Key, std::size(kKeys)> out{};
  for (std::size_t i = 0; i < std::size(kKeys); ++i) out[i] = kKeys[i].key;
  return out;
}();

// A name component: no separator, no blank, nothing a regular expression or a shell would read
// as syntax beyond '.', '-' and '_'.
bool is_plain(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

std::string checked(std::string_view what, std::string_view s) {
  if (!is_plain(s))
    throw InvalidArgument("benchmark name " + std::string(what) + " '" + std::string(s) +
                          "' must be letters, digits, '_', '-' or '.'");
  return std::string(s);
}

}  // namespace

std::span<const KeyInfo> key_table() {
  return kKeys;
}

const KeyInfo& info(Key k) {
  return kKeys[static_cast<std::size_t>(k)];
}

std::string_view key_name(Key k) {
  return info(k).name;
}

std::span<const Key> all_keys() {
  return kAllKeys;
}

std::string_view layout_name(const GemmProblem& p) {
  if (p.trans_a) return p.trans_b ? "tt" : "tn";
  return p.trans_b ? "nt" : "nn";
}

namespace {

// The decimal text BenchName writes for a whole number, or nullopt for any other text.
std::optional<std::int64_t> whole_number(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || std::to_string(v) != s)
    return std::nullopt;
  return v;
}

}  // namespace

BenchName::BenchName(std::string_view topic, std::string_view variant, Precision p)
    : topic_(checked("topic", topic)), variant_(checked("variant", variant)), third_(name(p)) {
  s_ = topic_ + "/" + variant_ + "/" + third_;
}

BenchName::BenchName(std::string_view topic, std::string_view variant, std::string_view mix)
    : topic_(checked("topic", topic)),
      variant_(checked("variant", variant)),
      third_(checked("mix", mix)) {
  s_ = topic_ + "/" + variant_ + "/" + third_;
}

BenchName& BenchName::arg(Key key, std::string_view value) {
  std::string text = checked(key_name(key), value);
  if (info(key).type == KeyType::integer && !whole_number(text))
    throw InvalidArgument("benchmark name key " + std::string(key_name(key)) +
                          " takes a whole number, not '" + text + "'");
  s_.append("/").append(key_name(key)).append(":").append(text);
  args_.emplace_back(key, std::move(text));
  return *this;
}

BenchName& BenchName::arg(Key key, std::int64_t value) {
  if (info(key).type != KeyType::integer)
    throw InvalidArgument("benchmark name key " + std::string(key_name(key)) +
                          " takes a word, not the number " + std::to_string(value));
  return arg(key, std::to_string(value));
}

BenchName& BenchName::gemm(const GemmProblem& p) {
  return arg(Key::m, p.m).arg(Key::n, p.n).arg(Key::k, p.k).arg(Key::layout, layout_name(p));
}

std::optional<std::string_view> BenchName::value(Key key) const {
  for (const auto& [k, text] : args_)
    if (k == key) return std::string_view(text);
  return std::nullopt;
}

std::string BenchName::args_json() const {
  std::string out = "{\"topic\":" + json_string(topic_) + ",\"variant\":" + json_string(variant_) +
                    ",\"precision\":" + json_string(third_);
  for (const auto& [key, text] : args_)
    out += "," + json_string(key_name(key)) + ":" +
           (info(key).type == KeyType::integer ? text : json_string(text));
  return out + "}";
}

std::optional<BenchName> BenchName::parse(std::string_view name) {
  constexpr std::string_view kManualTime = "/manual_time";
  if (name.ends_with(kManualTime)) name.remove_suffix(kManualTime.size());
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t slash = name.find('/', start);
    parts.push_back(name.substr(start, slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (parts.size() < 3) return std::nullopt;
  for (std::size_t i = 0; i < 3; ++i)
    if (parts[i].find(':') != std::string_view::npos || !is_plain(parts[i])) return std::nullopt;
  BenchName out(parts[0], parts[1], parts[2]);
  for (std::size_t i = 3; i < parts.size(); ++i) {
    const std::size_t colon = parts[i].find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    const std::string_view key = parts[i].substr(0, colon);
    const KeyInfo* row = nullptr;
    for (const KeyInfo& r : kKeys)
      if (r.name == key) row = &r;
    const std::string_view value = parts[i].substr(colon + 1);
    if (row == nullptr || !is_plain(value)) return std::nullopt;
    if (row->type == KeyType::integer && !whole_number(value)) return std::nullopt;
    out.arg(row->key, value);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Counters

namespace {

bool is_family(const CounterDef& d) {
  return d.name.find('<') != std::string_view::npos;
}

bool matches(const CounterDef& d, const std::string& name) {
  return std::regex_match(name, std::regex(std::string(d.pattern), std::regex::ECMAScript));
}

}  // namespace

Counter::Counter(const CounterDef& d) : name_(d.name), def_(&d) {
  if (is_family(d))
    throw InvalidArgument("counter " + std::string(d.name) +
                          " is a family; name a member with family_member()");
}

Counter family_member(const CounterDef& family, std::string_view suffix) {
  const std::string_view stem = family.name.substr(0, family.name.find('<'));
  std::string name = std::string(stem) + std::string(suffix);
  if (!is_family(family) || !matches(family, name))
    throw InvalidArgument("'" + name + "' is not a member of the counter family " +
                          std::string(family.name));
  return Counter(family, std::move(name));
}

namespace counters {

std::optional<Counter> find_counter(std::string_view name) {
  const std::string text(name);
  for (const CounterDef* d : all_counter_defs()) {
    if (!matches(*d, text)) continue;
    if (!is_family(*d)) return Counter(*d);
    const std::string_view stem = d->name.substr(0, d->name.find('<'));
    return family_member(*d, name.substr(stem.size()));
  }
  return std::nullopt;
}

Counter speedup_vs(Precision base) {
  return family_member(speedup_vs_family, name(base));
}
Counter accuracy(std::string_view variant) {
  return family_member(accuracy_family, variant);
}
Counter agreement(std::string_view variant) {
  return family_member(agreement_family, variant);
}
namespace {
std::string two_digits(int point) {
  if (point < 0 || point > 99)
    throw InvalidArgument("curve point " + std::to_string(point) + " is not in 0..99");
  char s[4];
  std::snprintf(s, sizeof s, "%02d", point);
  return s;
}
}  // namespace
Counter loss_at(int point) {
  return family_member(loss_at_family, two_digits(point));
}
Counter scale_at(int point) {
  return family_member(scale_at_family, two_digits(point));
}
Counter clock_at(int point) {
  return family_member(clock_at_family, two_digits(point));
}
Counter power_at(int point) {
  return family_member(power_at_family, two_digits(point));
}
Counter tensor_active_in(std::string_view phase) {
  return family_member(tensor_active_phase_family, phase);
}
Counter time_share(std::string_view phase) {
  return family_member(time_pct_family, phase);
}
const CounterDef& rate(Precision p) {
  return is_integer(p) ? tops : tflops;
}
const CounterDef& rate_per_w(Precision p) {
  return is_integer(p) ? tops_per_w : tflops_per_w;
}

}  // namespace counters

namespace {

using namespace counters;
#define TCB_ADDRESS_(id, ...) &id,
constexpr std::array kCounterDefs = {
    // Every fixed counter of the list, in its order, then the families.
    TCB_COUNTERS_(TCB_ADDRESS_)
        // families
        & speedup_vs_family,
    &accuracy_family,
    &agreement_family,
    &loss_at_family,
    &scale_at_family,
    &tensor_active_phase_family,
    &time_pct_family,
    &clock_at_family,
    &power_at_family};
#undef TCB_ADDRESS_

}  // namespace

std::span<const CounterDef* const> all_counter_defs() {
  return kCounterDefs;
}

// ---------------------------------------------------------------------------------------------
// Clock-event reasons

std::span<const ThrottleReason> throttle_reasons() {
  return kThrottleReasons;
}

static_assert(
    [] {
      for (std::size_t i = 0; i < std::size(kThrottleReasons); ++i)
        if (!std::has_single_bit(kThrottleReasons[i].bit) ||
            (i > 0 && kThrottleReasons[i].bit <= kThrottleReasons[i - 1].bit))
          return false;
      return true;
    }(),
    "one bit per reason, in bit order");

std::string throttle_names(std::uint64_t mask) {
  if (mask == 0) return "none";
  std::string out;
  for (int b = 0; b < 64; ++b) {
    const std::uint64_t m = std::uint64_t{1} << b;
    if ((mask & m) == 0) continue;
    std::string name = "bit_" + std::to_string(b);
    for (const ThrottleReason& r : kThrottleReasons)
      if (r.bit == m) name = std::string(r.name);
    out += (out.empty() ? "" : ",") + name;
  }
  return out;
}

std::string throttle_reason_table() {
  std::string out;
  for (const ThrottleReason& r : kThrottleReasons) {
    char hex[24];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(r.bit));
    out += (out.empty() ? "" : ",") + std::string(r.name) + ":" + hex;
  }
  return out;
}

}  // namespace tcbench
