// Percentiles of a set of numbers, the one formula tcbench uses: linear interpolation between
// order statistics (numpy's default "linear" method), so a median here is numpy.median's.
// The sample statistics of a timing (runtime's compute_stats) and the steady-state rule's
// window medians (steady_state.hpp) both read it.
#pragma once

#include <span>
#include <vector>

namespace tcbench::numerics {

// The q-quantile (0 <= q <= 1) of `sorted`, which must be sorted ascending and not empty.
double percentile_of_sorted(std::span<const double> sorted, double q);

// The median of `values` (any order); throws std::invalid_argument when there are none.
double median(std::vector<double> values);

}  // namespace tcbench::numerics
