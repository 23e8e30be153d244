// A first-order model of how a GEMM's shape costs Tensor Core efficiency: tile quantization
// (edge tiles do full work for partial output), wave quantization (the last wave of CTAs leaves
// SMs idle), and the alignment rules a dimension meets. It predicts the sawtooth the alignment
// benchmark measures. predict_gemm() adds a roofline bound (minimum DRAM traffic over the
// bandwidth), split-K and strided batches (CTAs = tiles x batch x splits: a batch is one more
// grid dimension, as in cuBLAS's and CUTLASS's batched kernels); it does not model K-edge waste,
// stream-K, L2 reuse, launch latency or the slower kernels cuBLASLt picks for unaligned shapes.
//
// Sources: NVIDIA "Matrix Multiplication Background User's Guide" (Sec. 2.2 Tensor Core
// requirements, Table 1; Sec. 3.1 tile quantization; Sec. 3.2 wave quantization, the A100
// example: 108 SMs, 256x128 tiles, one CTA per SM); cuBLAS documentation, "Tensor Core Usage"
// (dimensions and leading dimensions times element size multiples of 16 bytes).
#pragma once

#include "tcbench/numerics/element.hpp"

#include <cstdint>

namespace tcbench::numerics {

// Which alignment rules one GEMM dimension of `t` elements meets.
struct AlignmentClass {
  bool bytes16;   // dim * sizeof(t) is a multiple of 16 bytes: cuBLAS's Tensor Core rule
  bool bytes128;  // ... of 128 bytes: the guide's "on A100" multiples (64 fp16, 128 int8)
  bool mult8;
  bool mult16;
  bool mult64;
  bool mult128;
};
AlignmentClass classify_alignment(std::int64_t dim, Element t);
// The largest power of two, up to 128, that divides dim * sizeof(t) bytes: one number for the
// class (>= 16: the 16-byte rule holds; 128: the guide's A100 multiple). Throws
// std::invalid_argument for dim <= 0.
int alignment_bytes(std::int64_t dim, Element t);

// The guide's Table 1 multiples, in elements: 16 bytes' worth (FP16 8, INT8 16, TF32 4, FP64 2)
// and the A100 figure, 128 bytes' worth (FP16 64, INT8 128, TF32 32, FP64 16).
int efficient_multiple(Element t);
int a100_efficient_multiple(Element t);

struct TileShape {
  std::int64_t m = 256;  // BM: output rows per CTA
  std::int64_t n = 128;  // BN: output columns per CTA
};

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  Element type = Element::fp16;
  std::int64_t batch = 1;  // matrices of a strided-batched GEMM, each m x n x k
};

struct GpuShape {
  int sm_count = 0;
  int ctas_per_sm = 1;
};

struct GemmEfficiency {
  std::int64_t tiles_m = 0, tiles_n = 0, tiles = 0;  // per matrix
  double tile_efficiency = 0;  // useful M*N over the M*N the launched tiles compute
  std::int64_t batch = 1;      // matrices: the grid's third dimension
  std::int64_t split_k = 1;    // K partitions per output tile (cuBLASLt's SPLITK_NUM)
  std::int64_t ctas = 0;       // tiles * batch * split_k
  std::int64_t wave_size = 0;  // CTAs resident at once: sm_count * ctas_per_sm
  std::int64_t waves = 0;      // ceil(ctas / wave_size)
  double waves_exact = 0;      // ctas / wave_size (cuBLASLt reports this as wavesCount)
  double wave_efficiency = 0;  // ctas / (waves * wave_size)
  double predicted_relative_throughput = 0;  // tile_efficiency * wave_efficiency, in (0, 1]
  AlignmentClass align_m{}, align_n{}, align_k{};
};

// Throws std::invalid_argument for non-positive dimensions, batches, tiles, SM or CTA counts or
// splits.
GemmEfficiency model_gemm(const GemmShape& shape, TileShape tile, GpuShape gpu, int split_k = 1);

// A GPU's dense rate for the precision and its DRAM bandwidth (datasheet or measured).
struct GpuRates {
  double flops_per_s = 0;
  double bytes_per_s = 0;
};

// Least DRAM traffic of a GEMM: A (M x K) and B (K x N) read once in shape.type, D (M x N)
// written once in `output_bytes` per element, for each of the batch's matrices. Real kernels
// re-read operands that do not fit in L2; this is the roofline's floor.
double gemm_min_bytes(const GemmShape& shape, int output_bytes);

struct GemmTimePrediction {
  GemmEfficiency efficiency;
  double compute_seconds = 0;  // 2MNK x batch / (flops_per_s * tile_eff. * wave_eff.)
  double memory_seconds = 0;   // gemm_min_bytes / bytes_per_s
  double seconds = 0;          // the larger of the two
  bool memory_bound = false;
  double flops_per_s = 0;       // useful 2MNK x batch / seconds: the predicted throughput
  double relative_to_peak = 0;  // flops_per_s / rates.flops_per_s
};

// Time of one GEMM on the aligned path: the quantization model as a compute bound, the
// roofline as a memory bound. Throws std::invalid_argument for non-positive rates or sizes.
GemmTimePrediction predict_gemm(const GemmShape& shape, TileShape tile, GpuShape gpu,
                                GpuRates rates, int output_bytes, int split_k = 1);

}  // namespace tcbench::numerics
