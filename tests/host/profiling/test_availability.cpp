// The sentences users see when counters cannot be read, and the CUPTI status names tcbench
// prints, against CUPTI's own names (cuptiGetResultString) as the independent source.
#include "tcbench/error.hpp"
#include "tcbench/profiling/availability.hpp"

#include <cupti_result.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace tcbench::profiling {
namespace {

bool contains(const std::optional<std::string>& s, std::string_view part) {
  return s.has_value() && s->find(part) != std::string::npos;
}

TEST(Availability, PermissionSaysHowToFixIt) {
  const auto why = unavailable_reason(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
  EXPECT_TRUE(contains(why, "NVreg_RestrictProfilingToAdminUsers=0")) << why.value_or("-");
  EXPECT_TRUE(contains(why, "root"));
  EXPECT_TRUE(contains(unavailable_reason(CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES),
                       "NVreg_RestrictProfilingToAdminUsers=0"));
}

TEST(Availability, AnotherProfilerIsNamed) {
  EXPECT_TRUE(contains(unavailable_reason(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED), "ncu"));
  EXPECT_TRUE(contains(unavailable_reason(CUPTI_ERROR_HARDWARE_BUSY), "busy"));
}

TEST(Availability, OneSentenceNoTrailingFullStop) {
  // The harness prints "skipped: <sentence>"; the sentence ends without its own full stop.
  for (CUptiResult s : {CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, CUPTI_ERROR_HARDWARE_BUSY,
                        CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
                        CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED, CUPTI_ERROR_INVALID_CHIP_NAME}) {
    const std::string why = unavailable_reason(s).value();
    EXPECT_NE(why.back(), '.') << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  }
}

TEST(Availability, BugsAreNotEnvironmentProblems) {
  EXPECT_FALSE(unavailable_reason(CUPTI_ERROR_INVALID_PARAMETER).has_value());
  EXPECT_FALSE(unavailable_reason(CUPTI_ERROR_INVALID_METRIC_NAME).has_value());
  EXPECT_FALSE(unavailable_reason(CUPTI_SUCCESS).has_value());
  EXPECT_EQ(available(CUPTI_ERROR_INVALID_PARAMETER), CUPTI_ERROR_INVALID_PARAMETER);
  EXPECT_THROW(available(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES), CountersUnavailable);
}

TEST(Availability, EnvironmentSwitch) {
  ::unsetenv("TCBENCH_COUNTERS");
  EXPECT_FALSE(disabled_by_environment().has_value());
  ::setenv("TCBENCH_COUNTERS", "off", 1);
  EXPECT_TRUE(contains(disabled_by_environment(), "TCBENCH_COUNTERS=off"));
  ::setenv("TCBENCH_COUNTERS", "on", 1);
  EXPECT_FALSE(disabled_by_environment().has_value());
  ::unsetenv("TCBENCH_COUNTERS");
}

TEST(CuptiCheck, StatusNamesMatchCupti) {
  int named = 0;
  for (int code = 0; code <= 46; ++code) {
    const auto status = static_cast<CUptiResult>(code);
    const char* cupti = nullptr;
    // CUPTI 13.0 has no string for a few codes (36, OLD_PROFILER_API_INITIALIZED); ours still
    // names them from the header.
    if (cuptiGetResultString(status, &cupti) != CUPTI_SUCCESS) continue;
    EXPECT_STREQ(status_name(status), cupti) << code;
    ++named;
  }
  EXPECT_GE(named, 40);
  const char* unknown = nullptr;
  ASSERT_EQ(cuptiGetResultString(CUPTI_ERROR_UNKNOWN, &unknown), CUPTI_SUCCESS);
  EXPECT_STREQ(status_name(CUPTI_ERROR_UNKNOWN), unknown);
}

TEST(CuptiCheck, MacroNamesStatusAndCall) {
  try {
    TCB_CUPTI(CUPTI_ERROR_INVALID_PARAMETER);
    FAIL();
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("CUPTI call failed with CUPTI_ERROR_INVALID_PARAMETER"), std::string::npos)
        << what;
  }
  TCB_CUPTI_NOEXCEPT(CUPTI_SUCCESS);  // must neither throw nor print
}

}  // namespace
}  // namespace tcbench::profiling
