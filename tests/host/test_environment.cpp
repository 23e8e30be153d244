// The TCBENCH_* variables (tcbench/environment.hpp): every one checked in one place, a bad value
// one sentence naming the variable, the value and what it takes. The shared main refuses such a
// value with exit 2 before the GPU check (CTest bad_environment.* and
// bad_input_no_gpu_check.bench_alignment); before that, TCBENCH_ALIGNMENT_N=33,x was ignored
// without a GPU (exit 77) and TCBENCH_COUNTERS=maybe read as "on".
#include "tcbench/environment.hpp"
#include "tcbench/error.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace tcbench::environment {
namespace {

class Environment : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const Variable& v : variables()) ::unsetenv(std::string(v.name).c_str());
  }
  void TearDown() override { SetUp(); }
};

TEST_F(Environment, NothingSetIsFine) {
  EXPECT_FALSE(problem());
  EXPECT_TRUE(alignment_n().empty());
  EXPECT_TRUE(counters_enabled());
  EXPECT_FALSE(nvml_library());
  EXPECT_DOUBLE_EQ(sustained_limit_s(), kDefaultSustainedLimitS);
  EXPECT_DOUBLE_EQ(idle_limit_s(), kDefaultIdleLimitS);
}

TEST_F(Environment, GoodValuesAreRead) {
  ::setenv("TCBENCH_ALIGNMENT_N", "33,100,1000", 1);
  ::setenv("TCBENCH_COUNTERS", "off", 1);
  ::setenv("TCBENCH_NVML_LIBRARY", "libnvidia-ml.so.1", 1);  // a name: dlopen searches it
  EXPECT_FALSE(problem()) << *problem();
  EXPECT_EQ(alignment_n(), (std::vector<std::int64_t>{33, 100, 1000}));
  EXPECT_FALSE(counters_enabled());
  EXPECT_EQ(nvml_library(), "libnvidia-ml.so.1");
  ::setenv("TCBENCH_COUNTERS", "yes", 1);
  EXPECT_TRUE(counters_enabled());
  ::setenv("TCBENCH_SUSTAINED_LIMIT_S", "12.5", 1);
  EXPECT_FALSE(problem()) << *problem();
  EXPECT_DOUBLE_EQ(sustained_limit_s(), 12.5);
  ::setenv("TCBENCH_IDLE_LIMIT_S", "4", 1);
  EXPECT_FALSE(problem()) << *problem();
  EXPECT_DOUBLE_EQ(idle_limit_s(), 4);
}

TEST_F(Environment, BadValuesAreOneSentence) {
  const std::vector<std::pair<std::pair<const char*, const char*>, std::string>> cases = {
      {{"TCBENCH_ALIGNMENT_N", "33,0"},
       "TCBENCH_ALIGNMENT_N='33,0': '0' is not a positive dimension that fits in int32 "
       "(TCBENCH_ALIGNMENT_N takes a comma-separated list of positive dimensions such as "
       "33,100,1000)"},
      {{"TCBENCH_ALIGNMENT_N", ""}, "TCBENCH_ALIGNMENT_N='': '' is not a positive dimension"},
      {{"TCBENCH_ALIGNMENT_N", "3000000000"}, "'3000000000' is not a positive dimension"},
      {{"TCBENCH_ALIGNMENT_N", "33,"}, "'' is not a positive dimension"},
      {{"TCBENCH_COUNTERS", "maybe"},
       "TCBENCH_COUNTERS='maybe': 'maybe' is neither on nor off (TCBENCH_COUNTERS takes on, "
       "off, 1, 0, yes or no)"},
      {{"TCBENCH_NVML_LIBRARY", "/no/such/libnvidia-ml.so"},
       "TCBENCH_NVML_LIBRARY='/no/such/libnvidia-ml.so': '/no/such/libnvidia-ml.so' does not "
       "exist"},
      {{"TCBENCH_NVML_LIBRARY", "/tmp"}, "'/tmp' is not a regular file"},
      {{"TCBENCH_SUSTAINED_LIMIT_S", "3"},
       "TCBENCH_SUSTAINED_LIMIT_S='3': '3' is not a number of seconds from 4 to 3600 "
       "(TCBENCH_SUSTAINED_LIMIT_S takes a number of seconds from 4 to 3600 such as 60)"},
      {{"TCBENCH_SUSTAINED_LIMIT_S", "60s"}, "'60s' is not a number of seconds"},
      {{"TCBENCH_SUSTAINED_LIMIT_S", "nan"}, "'nan' is not a number of seconds"},
      {{"TCBENCH_SUSTAINED_LIMIT_S", "1e9"}, "'1e9' is not a number of seconds"},
      {{"TCBENCH_IDLE_LIMIT_S", "1.5"},
       "TCBENCH_IDLE_LIMIT_S='1.5': '1.5' is not a number of seconds from 2 to 600 "
       "(TCBENCH_IDLE_LIMIT_S takes a number of seconds from 2 to 600 such as 10)"},
      {{"TCBENCH_IDLE_LIMIT_S", "601"}, "'601' is not a number of seconds from 2 to 600"},
  };
  for (const auto& [setting, words] : cases) {
    SetUp();
    ::setenv(setting.first, setting.second, 1);
    const auto why = problem();
    ASSERT_TRUE(why) << setting.first << "=" << setting.second << " was accepted";
    EXPECT_NE(why->find(words), std::string::npos) << *why;
  }
  SetUp();
  ::setenv("TCBENCH_ALIGNMENT_N", "33,x", 1);
  EXPECT_THROW(alignment_n(), InvalidArgument);
  ::setenv("TCBENCH_SUSTAINED_LIMIT_S", "", 1);
  EXPECT_THROW(sustained_limit_s(), InvalidArgument);
  ::setenv("TCBENCH_IDLE_LIMIT_S", "x", 1);
  EXPECT_THROW(idle_limit_s(), InvalidArgument);
}

// Issue 34: the value was echoed as it was, so an escape sequence in it reached the terminal.
TEST_F(Environment, TheValueInTheSentenceIsEscaped) {
  ::setenv("TCBENCH_ALIGNMENT_N",
           "33,\x1b[2K\r\xe2\x80\xae"
           "1\n",
           1);
  const auto why = problem();
  ASSERT_TRUE(why);
  EXPECT_EQ(why->rfind("TCBENCH_ALIGNMENT_N='33,\\x1b[2K\\r\\xe2\\x80\\xae1\\n': ", 0), 0u) << *why;
  for (const char ch : *why) EXPECT_TRUE(ch >= 0x20 && ch < 0x7f) << *why;
  EXPECT_EQ(printable(*why), *why);  // escaping twice changes nothing
}

}  // namespace
}  // namespace tcbench::environment
