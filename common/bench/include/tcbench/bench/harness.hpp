// The one include of a topic file (benchmarks/bench_<topic>.cu): the shared environment,
// registration, timing and reporting, and the GEMM helper. A topic states its problem and its
// work; the harness does the rest. See docs/methodology.md.
#pragma once

#include "tcbench/bench/env.hpp"
#include "tcbench/bench/gemm_bench.hpp"
#include "tcbench/bench/measure.hpp"
#include "tcbench/bench/registry.hpp"
