# One place that says how a tcbench target is compiled, added and tested.

# How every tcbench target compiles: warnings for our own code only (never for third-party
# headers; -Werror via TCBENCH_WERROR), line info and relaxed constexpr for CUDA.
function(tcbench_target_defaults target)
  set(cxx_warnings -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)
  # GCC 12 reports -Wrestrict false positives inside std::string concatenation at -O3
  # (GCC bug 105329); they are noise, not findings.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    list(APPEND cxx_warnings -Wno-restrict)
  endif()
  set(cuda_host_warnings -Wall,-Wextra,-Wshadow)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${cxx_warnings}>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${cuda_host_warnings}>)
  if(TCBENCH_WERROR)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Werror>
      $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Werror>)
  endif()
  # Line info costs nothing at run time and lets profilers map SASS back to source.
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo --expt-relaxed-constexpr>)
endfunction()

# True when this build is optimized; benchmarks refuse anything else (a Debug benchmark is a lie).
function(tcbench_build_is_optimized out_var)
  set(optimized FALSE)
  if(CMAKE_BUILD_TYPE MATCHES "^(Release|RelWithDebInfo|MinSizeRel)$")
    set(optimized TRUE)
  endif()
  set(${out_var} ${optimized} PARENT_SCOPE)
endfunction()

# tcbench_add_benchmark(benchmarks/bench_<topic>.cpp): one file -> one binary named after it,
# which is also a CTest smoke test (quick sizes, tiny time budget, 77 = skipped: no GPU).
function(tcbench_add_benchmark source)
  get_filename_component(name ${source} NAME_WE)
  add_executable(${name} ${source} ${TCBENCH_BENCH_MAIN})
  target_link_libraries(${name} PRIVATE tcbench_gpu_studies tcbench_bench)
  tcbench_target_defaults(${name})
  set_property(GLOBAL APPEND PROPERTY TCBENCH_BENCHMARK_TARGETS ${name})
  if(TCBENCH_BUILD_TESTS)
    add_test(NAME smoke.${name}
             COMMAND ${name} --quick --benchmark_min_time=0.01 --benchmark_repetitions=1)
    set_tests_properties(smoke.${name} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 LABELS smoke)
    # Listing needs no GPU: it must work (exit 0, names printed) on every machine, CI included.
    add_test(NAME list.${name} COMMAND ${name} --benchmark_list_tests)
    set_tests_properties(list.${name} PROPERTIES PASS_REGULAR_EXPRESSION "/" LABELS list)
    add_test(NAME list_quick.${name} COMMAND ${name} --quick --benchmark_list_tests)
    set_tests_properties(list_quick.${name} PROPERTIES PASS_REGULAR_EXPRESSION "/" LABELS list)
    # --plan=H200: each quick row's estimated seconds as JSON lines, without a GPU; a count of
    # 0 would mean the quick list is empty.
    add_test(NAME plan.${name} COMMAND ${name} --quick --plan=H200)
    set_tests_properties(plan.${name} PROPERTIES LABELS list PASS_REGULAR_EXPRESSION
      "^{\"gpu\": \"H200\", [^\n]*\"min_seconds\": 0.05[0-9]*, \"repetitions\": 1, \"rows\": [1-9][0-9]*, \"seconds\": [0-9.]+}\n{\"name\": ")
    # A usage error is exit 2 with one sentence, before (and without) any GPU check.
    add_test(NAME usage.${name} COMMAND ${name} "--benchmark_filter=(")
    set_tests_properties(usage.${name} PROPERTIES WILL_FAIL TRUE LABELS list
                         FAIL_REGULAR_EXPRESSION "no CUDA GPU|nothing to measure")
    # A filter that backtracks exponentially in std::regex is matched in linear time: listing
    # with it ends at once (TIMEOUT 30 fails the test if it hangs), in exit 0.
    add_test(NAME filter_bounded.${name} COMMAND ${name} --benchmark_list_tests "--benchmark_filter=(.*)*x")
    set_tests_properties(filter_bounded.${name} PROPERTIES TIMEOUT 30 LABELS list)
    # A TCBENCH_* variable with a value it does not take is exit 2 before the GPU check.
    add_test(NAME bad_environment.${name}
             COMMAND sh -c "TCBENCH_COUNTERS=maybe $<TARGET_FILE:${name}> --quick; test $? -eq 2")
    set_tests_properties(bad_environment.${name} PROPERTIES LABELS list)
  endif()
  install(TARGETS ${name} RUNTIME DESTINATION bin)
endfunction()

# tcbench_add_test(tests/host/test_x.cpp [DEVICE] [STUDIES] [BENCH]): one file -> one GoogleTest
# binary whose cases CTest discovers. DEVICE tests link the kernels and the GPU studies and skip
# themselves without a GPU; STUDIES tests link the host studies; BENCH tests the harness.
function(tcbench_add_test source)
  cmake_parse_arguments(ARG "DEVICE;BENCH;STUDIES" "PREFIX" "" ${ARGN})
  get_filename_component(stem ${source} NAME_WE)
  set(name ${ARG_PREFIX}${stem})
  add_executable(${name} ${source})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/common)
  target_link_libraries(${name} PRIVATE tcbench_runtime GTest::gtest GTest::gtest_main)
  if(ARG_DEVICE)
    target_link_libraries(${name} PRIVATE tcbench_gpu_studies)
  endif()
  if(ARG_STUDIES)
    target_link_libraries(${name} PRIVATE tcbench_studies)
  endif()
  if(ARG_BENCH)
    target_link_libraries(${name} PRIVATE tcbench_bench)
  endif()
  tcbench_target_defaults(${name})
  # Discovery runs the binary at test time, not build time, so a crash shows up as a failed test.
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60 TEST_PREFIX ${name}.
                       PROPERTIES LABELS "${ARG_PREFIX}tests")
endfunction()
