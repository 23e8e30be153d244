// The results schema (tcbench/schema.hpp) on its own: every definition is well formed, names are
// unique, families accept their members and refuse the rest, the precision family lists exactly
// the precision table's rows, and the JSON that `tcbench_context --schema` prints holds them all.
#include "tcbench/schema.hpp"

#include "tcbench/error.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

namespace tcbench {
namespace {

bool full_match(std::string_view pattern, const std::string& s) {
  return std::regex_match(s, std::regex(std::string(pattern)));
}

TEST(Schema, EveryCounterIsWellFormedAndUnique) {
  std::set<std::string> names;
  for (const CounterDef* d : all_counter_defs()) {
    const std::string name(d->name);
    EXPECT_TRUE(names.insert(name).second) << "duplicate counter " << name;
    EXPECT_FALSE(d->doc.empty()) << name;
    EXPECT_LE(d->low, d->high) << name;
    const bool family = name.find('<') != std::string::npos;
    if (!family) {
      EXPECT_TRUE(full_match(d->pattern, name)) << name << " does not match " << d->pattern;
      EXPECT_EQ(Counter(*d).name(), name);
    } else {
      EXPECT_THROW((void)Counter(*d), InvalidArgument) << name;
    }
  }
  // No fixed counter may also be a member of a family: the tools would not know its range.
  for (const CounterDef* fixed : all_counter_defs()) {
    if (fixed->name.find('<') != std::string_view::npos) continue;
    for (const CounterDef* fam : all_counter_defs()) {
      if (fam->name.find('<') == std::string_view::npos) continue;
      EXPECT_FALSE(full_match(fam->pattern, std::string(fixed->name)))
          << fixed->name << " matches the family " << fam->name;
    }
  }
}

TEST(Schema, SpeedupFamilyListsExactlyThePrecisionTable) {
  for (Precision p : kAllPrecisions)
    EXPECT_EQ(counters::speedup_vs(p).name(), "speedup_vs_" + std::string(name(p)));
  EXPECT_THROW(family_member(counters::speedup_vs_family, "fp2"), InvalidArgument);
  std::string alternatives;
  for (Precision p : kAllPrecisions)
    alternatives += (alternatives.empty() ? "" : "|") + std::string(name(p));
  EXPECT_EQ(counters::speedup_vs_family.pattern, "^speedup_vs_(" + alternatives + ")$");
}

TEST(Schema, FamiliesTakeOnlyTheirMembers) {
  EXPECT_EQ(counters::loss_at(7).name(), "loss_at_07");
  EXPECT_EQ(counters::scale_at(15).name(), "scale_at_15");
  EXPECT_THROW(counters::loss_at(100), InvalidArgument);
  EXPECT_EQ(counters::accuracy("ptq_p99.9").name(), "accuracy_ptq_p99.9");
  EXPECT_THROW(counters::accuracy("PTQ max"), InvalidArgument);
  EXPECT_EQ(counters::rate(Precision::int8).name, "tops");
  EXPECT_EQ(counters::rate(Precision::fp16).name, "tflops");
}

TEST(Schema, JsonHoldsEveryCounterKeyAndPrecision) {
  const std::string json = schema_json();
  for (const CounterDef* d : all_counter_defs())
    EXPECT_NE(json.find("\"name\": \"" + std::string(d->name) + "\""), std::string::npos)
        << d->name;
  for (Key k : all_keys())
    EXPECT_NE(json.find("\"" + std::string(key_name(k)) + "\""), std::string::npos);
  for (Precision p : kAllPrecisions)
    EXPECT_NE(json.find("{\"name\": \"" + std::string(name(p)) + "\""), std::string::npos);
  EXPECT_NE(json.find("\"high\": null"), std::string::npos);  // unbounded, not "inf"
  EXPECT_EQ(json.find("inf"), std::string::npos);
}

}  // namespace
}  // namespace tcbench
