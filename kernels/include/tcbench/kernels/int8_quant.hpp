// The calibration and quantization pipeline on the GPU: the cost of getting into INT8. Each
// kernel is a grid-stride loop around a host-tested TCB_HD element function
// (tcbench/numerics/calibration.hpp, quantization.hpp, formats.hpp), so its results equal the
// host's bit for bit (tests/device/test_int8_kernels.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "tcbench/numerics/calibration.hpp"

namespace tcbench::kernels {

// Adds |x| of n values to counts[num_bins] over [0, range_max] (abs_histogram_bin), NaN/Inf to
// *non_finite, and raises the float at *max_seen_bits (as uint32 bits; start it at 0) to the
// largest finite |x|: what AbsHistogram::add_counts takes. Accumulates: zero the outputs first.
void abs_histogram(const float* x, std::size_t n, float range_max, int num_bins,
                   numerics::HistCount* counts, numerics::HistCount* non_finite,
                   unsigned* max_seen_bits, cudaStream_t stream);

// max |x| with amax_step's rules (NaN sticky) into *amax_bits (uint32 bits of the float; start
// it at 0).
void amax(const float* x, std::size_t n, unsigned* amax_bits, cudaStream_t stream);

// q[i] = quantize_int8(x[i], scale): one per-tensor scale.
void quantize_per_tensor(const float* x, std::size_t n, float scale, std::int8_t* q,
                         cudaStream_t stream);

// q[r * cols + c] = quantize_int8(w[r * cols + c], scales[r]): row-major [rows, cols] weights,
// one scale per row (output channel).
void quantize_per_channel(const float* w, std::size_t rows, std::size_t cols, const float* scales,
                          std::int8_t* q, cudaStream_t stream);

// x[i] = dequantize_int8(q[i], scale).
void dequantize(const std::int8_t* q, std::size_t n, float scale, float* x, cudaStream_t stream);

// The dequantizing epilogue as its own pass: y[i + j * ld] = dequantize_accumulator(
// acc[i + j * ld], scale_x, scale_w[i]) for a column-major m x n int32 GEMM result whose rows
// are output channels.
void dequantize_accumulators(const std::int32_t* acc, std::int64_t m, std::int64_t n,
                             std::int64_t ld, float scale_x, const float* scale_w, float* y,
                             cudaStream_t stream);

}  // namespace tcbench::kernels
