# Google Benchmark and GoogleTest come from the distribution (libbenchmark-dev, libgtest-dev);
# FetchContent is only the fallback for a machine that lacks them.
include(FetchContent)

find_package(benchmark 1.7 QUIET)
if(NOT benchmark_FOUND AND TCBENCH_BUILD_BENCHMARKS)
  message(STATUS "tcbench: Google Benchmark package not found, fetching v1.7.1")
  set(BENCHMARK_ENABLE_TESTING OFF CACHE BOOL "" FORCE)
  set(BENCHMARK_ENABLE_GTEST_TESTS OFF CACHE BOOL "" FORCE)
  FetchContent_Declare(benchmark GIT_REPOSITORY https://github.com/google/benchmark.git
                       GIT_TAG v1.7.1)
  FetchContent_MakeAvailable(benchmark)
endif()

if(TCBENCH_BUILD_TESTS)
  find_package(GTest 1.12 QUIET)
  if(NOT GTest_FOUND)
    message(STATUS "tcbench: GoogleTest package not found, fetching v1.12.1")
    FetchContent_Declare(googletest GIT_REPOSITORY https://github.com/google/googletest.git
                         GIT_TAG release-1.12.1)
    FetchContent_MakeAvailable(googletest)
  endif()
  include(GoogleTest)
endif()
