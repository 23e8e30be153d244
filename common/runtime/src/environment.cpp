#include "tcbench/environment.hpp"

#include "tcbench/error.hpp"

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <sys/stat.h>

namespace tcbench::environment {
namespace {

// A comma-separated list of positive dimensions that fit in int32; the first bad item, or the list.
struct Dimensions {
  std::vector<std::int64_t> values;
  std::optional<std::string> bad;
};

Dimensions parse_dimensions(std::string_view text) {
  Dimensions out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string_view item = text.substr(pos, comma - pos);
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || end != item.data() + item.size() || v <= 0 || v > INT32_MAX) {
      out.bad = "'" + std::string(item) + "' is not a positive dimension that fits in int32";
      return out;
    }
    out.values.push_back(v);
    pos = comma + 1;
  }
  return out;
}

std::optional<std::string> check_dimensions(std::string_view value) {
  return parse_dimensions(value).bad;
}

bool is_off(std::string_view v) {
  return v == "off" || v == "0" || v == "no";
}
bool is_on(std::string_view v) {
  return v == "on" || v == "1" || v == "yes";
}

std::optional<std::string> check_switch(std::string_view value) {
  if (is_on(value) || is_off(value)) return std::nullopt;
  return "'" + std::string(value) + "' is neither on nor off";
}

// A path (with a '/') must name an existing file; a bare name is dlopen's to search.
std::optional<std::string> check_library(std::string_view value) {
  if (value.empty() || value.find('/') == std::string_view::npos) return std::nullopt;
  struct stat st {};
  if (::stat(std::string(value).c_str(), &st) != 0)
    return "'" + std::string(value) + "' does not exist";
  if (!S_ISREG(st.st_mode)) return "'" + std::string(value) + "' is not a regular file";
  return std::nullopt;
}

// Seconds for a limit: a plain decimal number from `low` to `high`.
std::optional<double> parse_seconds(std::string_view text, double low, double high) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !(v >= low && v <= high))
    return std::nullopt;
  return v;
}

// The sustained rows' limit: from 4 s (two of the steady-state rule's 2 s windows) to 3600 s.
std::optional<double> parse_limit(std::string_view text) {
  return parse_seconds(text, 4, 3600);
}

std::optional<std::string> check_limit(std::string_view value) {
  if (parse_limit(value)) return std::nullopt;
  return "'" + std::string(value) + "' is not a number of seconds from 4 to 3600";
}

// The idle wait's limit: from 2 s (the idle rule's two 1 s windows) to 600 s.
std::optional<double> parse_idle(std::string_view text) {
  return parse_seconds(text, 2, 600);
}

std::optional<std::string> check_idle(std::string_view value) {
  if (parse_idle(value)) return std::nullopt;
  return "'" + std::string(value) + "' is not a number of seconds from 2 to 600";
}

constexpr Variable kVariables[] = {
    {kAlignmentN, "a comma-separated list of positive dimensions such as 33,100,1000",
     check_dimensions},
    {kCounters, "on, off, 1, 0, yes or no", check_switch},
    {kIdleLimit, "a number of seconds from 2 to 600 such as 10", check_idle},
    {kNvmlLibrary, "the path of an NVML shared library, or a library name for dlopen",
     check_library},
    {kSustainedLimit, "a number of seconds from 4 to 3600 such as 60", check_limit},
};

// The value (and the reason, which quotes it) escaped: it is printed as the binary's error.
std::string sentence(const Variable& v, std::string_view value, const std::string& why) {
  return std::string(v.name) + "='" + printable(value) + "': " + printable(why) + " (" +
         std::string(v.name) + " takes " + std::string(v.takes) + ")";
}

const Variable& variable(std::string_view name) {
  for (const Variable& v : kVariables)
    if (v.name == name) return v;
  throw InvalidArgument("tcbench::environment: " + std::string(name) + " is not in kVariables");
}

}  // namespace

std::span<const Variable> variables() {
  return kVariables;
}

std::optional<std::string> value(std::string_view name) {
  const char* raw = std::getenv(std::string(name).c_str());
  if (raw == nullptr) return std::nullopt;
  return std::string(raw);
}

std::optional<std::string> problem() {
  for (const Variable& v : kVariables) {
    const auto set = value(v.name);
    if (!set) continue;
    if (auto why = v.check(*set)) return sentence(v, *set, *why);
  }
  return std::nullopt;
}

std::vector<std::int64_t> alignment_n() {
  const auto set = value(kAlignmentN);
  if (!set) return {};
  Dimensions d = parse_dimensions(*set);
  if (d.bad) throw InvalidArgument(sentence(variable(kAlignmentN), *set, *d.bad));
  return d.values;
}

bool counters_enabled() {
  const auto set = value(kCounters);
  return !set || !is_off(*set);
}

std::optional<std::string> nvml_library() {
  const auto set = value(kNvmlLibrary);
  if (!set || set->empty()) return std::nullopt;
  return set;
}

double sustained_limit_s() {
  const auto set = value(kSustainedLimit);
  if (!set) return kDefaultSustainedLimitS;
  const auto v = parse_limit(*set);
  if (!v) throw InvalidArgument(sentence(variable(kSustainedLimit), *set, *check_limit(*set)));
  return *v;
}

double idle_limit_s() {
  const auto set = value(kIdleLimit);
  if (!set) return kDefaultIdleLimitS;
  const auto v = parse_idle(*set);
  if (!v) throw InvalidArgument(sentence(variable(kIdleLimit), *set, *check_idle(*set)));
  return *v;
}

}  // namespace tcbench::environment
