// The one include of a topic file (benchmarks/bench_<topic>.cpp): the shared environment,
// registration and names, timing and reporting, the GEMM helper and the kernel helper. A topic
// states its problem and its work; the harness does the rest. See docs/architecture.md and
// docs/methodology.md.
#pragma once

#include "tcbench/bench/env.hpp"
#include "tcbench/bench/gemm_bench.hpp"
#include "tcbench/bench/help.hpp"
#include "tcbench/bench/kernel_bench.hpp"
#include "tcbench/bench/measure.hpp"
#include "tcbench/bench/once.hpp"
#include "tcbench/bench/registry.hpp"
#include "tcbench/schema.hpp"
