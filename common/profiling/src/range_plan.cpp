#include "tcbench/profiling/range_plan.hpp"

#include "tcbench/error.hpp"
#include "tcbench/profiling/availability.hpp"

#include <algorithm>
#include <set>

namespace tcbench::profiling {
namespace {

bool plain(std::string_view s) {
  return !s.empty() && std::ranges::all_of(s, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

}  // namespace

std::vector<std::string> RangePlan::metric_names() const {
  std::vector<std::string> out;
  for (const Metric& m : metrics) out.emplace_back(m.name);
  return out;
}

std::vector<std::string> range_paths(std::span<const RangeSpec> ranges) {
  if (ranges.empty()) throw InvalidArgument("a range plan needs at least one range");
  std::vector<std::string> paths, open;  // open: the path of the last range on each level
  std::set<std::string> seen;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const RangeSpec& r = ranges[i];
    const std::string which = "range " + std::to_string(i) + " ('" + r.name + "')";
    if (!plain(r.name))
      throw InvalidArgument(which + ": a range name is letters, digits, '_' or '-'");
    const int deepest = static_cast<int>(open.size()) + 1;
    if (r.level < 1 || r.level > deepest || (i == 0 && r.level != 1))
      throw InvalidArgument(which + " is at level " + std::to_string(r.level) +
                            "; it can be at 1.." + std::to_string(i == 0 ? 1 : deepest) +
                            " (one below the range it is nested in at most)");
    open.resize(static_cast<std::size_t>(r.level - 1));
    std::string path = open.empty() ? r.name : open.back() + std::string(kRangeDelimiter) + r.name;
    if (!seen.insert(path).second)
      throw InvalidArgument(which + ": the path '" + path + "' repeats");
    open.push_back(path);
    paths.push_back(std::move(path));
  }
  return paths;
}

RangePlan plan_ranges(ProfilerHost& host, std::span<const RangeSpec> ranges) {
  RangePlan plan;
  plan.paths = range_paths(ranges);
  plan.chip = host.chip();
  const std::optional<ChipMetrics> table = metrics_for_chip(plan.chip);
  if (!table) throw CountersUnavailable(unknown_chip_reason(plan.chip));
  plan.ranges.assign(ranges.begin(), ranges.end());
  plan.metrics = table->metrics;
  for (const RangeSpec& r : ranges) plan.nesting_levels = std::max(plan.nesting_levels, r.level);
  const std::vector<std::string> names = plan.metric_names();
  plan.config_image = host.config_image(names);
  plan.config_passes = ProfilerHost::passes(plan.config_image);
  return plan;
}

}  // namespace tcbench::profiling
