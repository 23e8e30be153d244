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

if(NOT TCBENCH_HOST_STUDIES_ONLY)  # the host studies read no clocks
  # nvml.h: the declarations (types, enums, reason bits) of the NVML entry points tcbench loads
  # at run time with dlopen (NVML is never linked: listing benchmarks works without a driver).
  # From the pinned nvidia-nvml-dev wheel of the Python environment (scripts/requirements.txt:
  # the Python that configures, or the checkout's .venv), else from a CUDA toolkit that ships one
  # (cuda-nvml-dev), else the system's (Debian's libnvidia-ml-dev).
  set(tcbench_nvml_hints)
  if(Python3_EXECUTABLE)
    execute_process(COMMAND ${Python3_EXECUTABLE} -c
                            "import sysconfig; print(sysconfig.get_paths()['purelib'])"
                    OUTPUT_VARIABLE tcbench_purelib OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(tcbench_purelib)
      list(APPEND tcbench_nvml_hints ${tcbench_purelib}/nvidia/cu13/include)
    endif()
  endif()
  file(GLOB tcbench_venv_nvml ${PROJECT_SOURCE_DIR}/.venv/lib/python3*/site-packages/nvidia/cu13/include)
  list(APPEND tcbench_nvml_hints ${tcbench_venv_nvml} ${CUDAToolkit_INCLUDE_DIRS})
  find_path(TCBENCH_NVML_INCLUDE_DIR nvml.h HINTS ${tcbench_nvml_hints}
            DOC "folder holding nvml.h (the NVML header)")
  if(NOT TCBENCH_NVML_INCLUDE_DIR)
    message(FATAL_ERROR "tcbench: nvml.h not found (looked in: ${tcbench_nvml_hints}). Install "
                        "the pinned nvidia-nvml-dev wheel (scripts/tcbench run and test do, from "
                        "scripts/requirements.txt) or pass -DTCBENCH_NVML_INCLUDE_DIR=<folder>.")
  endif()
  message(STATUS "tcbench: nvml.h from ${TCBENCH_NVML_INCLUDE_DIR}")
endif()
