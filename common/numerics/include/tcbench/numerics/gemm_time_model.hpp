// The GEMM time model: what a library GEMM of a given shape takes on a given GPU, with the
// effects published measurements show (docs/concepts/alignment.md, "The model"):
//   - an efficiency ceiling: the fraction of the datasheet rate the library reaches at all;
//   - tiles: the library's tile choice among both orientations of each candidate tile, each tile
//     as fast as its arithmetic intensity allows, K padded to the tile's K step;
//   - waves: tiles spread over the SMs, the last partial wave costing `wave_depth` of a full one
//     (1: the classic step, 0: none; under one wave a CTA still takes its whole time), and on
//     sm_90 and later a stream-K schedule that spreads the work evenly at a fixed overhead,
//     whichever is faster;
//   - split-K where the output is small and K long, with its reduction;
//   - alignment: the largest power of two (<= 16 bytes) dividing each operand's leading
//     dimension (and batch stride) picks a slower kernel below 16 bytes;
//   - a roofline memory time (least DRAM traffic over the bandwidth), the last wave's output
//     written after its math (no later tile hides it), a fixed cost per GEMM (launch and the
//     kernel's minimum time), a latency per CTA (pipeline fill and epilogue, paid once per wave
//     step), and batched GEMMs at their measured efficiency;
//   - a sustained rate: a long run of Tensor Core math draws the board to its power limit and
//     the clock down, so the compute time of a GEMM of compute time T at the ceiling grows by
//     1 + (1/sustained_fraction - 1) * T / (T + sustained_us): nothing for microsecond GEMMs, the
//     sustained fraction of the rate for long ones.
// The constants are data (gemm_model_constants.hpp: one set per architecture family, fitted on
// published measurements by tools/model/fit.py); this file only computes. The pure roofline
// bound (datasheet rate and bandwidth, nothing else) is returned beside the prediction, as a
// bound, never as a prediction; no prediction is faster than it.
#pragma once

#include "tcbench/numerics/element.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tcbench::numerics {

// One GEMM: C[m, n] = A[m, k] B[k, n] for each of `batch` matrices, C row-major (N-contiguous).
struct GemmTimeProblem {
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  int a_bits = 16, b_bits = 16, c_bits = 16;  // element sizes (FP4: 4, FP6: 6)
  bool a_k_contiguous = true;                 // layout_a "mk": A stored [m][k]; false: "km"
  bool b_n_contiguous = true;                 // layout_b "kn": B stored [k][n]; false: "nk"
};

// The alignment, in bytes (1, 2, 4, 8 or 16; 16 = the 16-byte rule holds), of each operand's
// leading dimension times its element size, and of its batch stride when batch > 1.
struct OperandAlignment {
  int a = 16, b = 16, c = 16;
  int inputs() const { return a < b ? a : b; }
  int all() const { return inputs() < c ? inputs() : c; }
};
OperandAlignment operand_alignment(const GemmTimeProblem& p);

// The largest power of two, up to 128, that divides dim * sizeof(t) bytes: one number for a
// dimension's class (>= 16: cuBLAS's Tensor Core rule holds; 128: the NVIDIA guide's A100
// multiple). Throws std::invalid_argument for dim <= 0.
int alignment_bytes(std::int64_t dim, Element t);
// 16 bytes' worth of `t` (the guide's Table 1: FP16 8, INT8 16, TF32 4, FP64 2): the multiple
// a dimension is padded to.
int efficient_multiple(Element t);

struct TimeModelTile {
  int m = 128, n = 128;
};

// One architecture family's constants (gemm_model_constants.hpp names every field).
struct TimeModelConstants {
  double fixed_us = 0;            // launch and tail of one GEMM (CUDA events around one call)
  double cta_latency_us = 0;      // per CTA: pipeline fill and epilogue, once per wave step
  double sustained_fraction = 1;  // of the ceiling's rate, held by long runs (power limit)
  double sustained_us = 1000;     // compute time at which half of that drop has happened
  double tile_half = 0;           // intensity BM*BN/(BM+BN) at which a tile runs at half speed
  double wave_depth = 1;          // cost of a partial last wave, as a fraction of a full one
  bool stream_k = false;          // a stream-K/persistent schedule is available (sm_90+)
  double stream_k_overhead = 0;   // its fixup cost, a fraction of the compute time
  int k_step_bytes = 64;          // K is padded to this many bytes per tile step
  std::int64_t min_split_k_depth = 256;  // split-K keeps at least this many K per split
  double split_k_fixed_us = 0;           // the reduction's own fixed cost
  double bandwidth_efficiency = 1;       // achieved / datasheet DRAM bandwidth
  double batched_efficiency = 1;         // compute-rate factor of a strided batch (batch > 1)
  // Rate factors below the 16-byte rule, indexed by alignment 1, 2, 4, 8 bytes (index 0..3):
  // compute rate for misaligned inputs (A or B), for a misaligned output (C), and the DRAM
  // bandwidth factor for any misaligned operand.
  double align_inputs[4] = {1, 1, 1, 1};
  double align_output[4] = {1, 1, 1, 1};
  double align_memory[4] = {1, 1, 1, 1};
  std::vector<TimeModelTile> tiles;  // candidate CTA tiles; both orientations are tried
};

// What the model is given about the GPU, for the problem's precision.
struct TimeModelGpu {
  int sm_count = 0;
  double peak_flops_per_s = 0;  // dense datasheet rate for the precision
  double dram_bytes_per_s = 0;  // datasheet bandwidth
  double ceiling = 1;           // fraction of peak_flops_per_s the library reaches, typical shape
};

struct GemmTimePrediction {
  double seconds = 0;
  double flops_per_s = 0;        // useful 2*m*n*k*batch / seconds
  double bound_flops_per_s = 0;  // the roofline bound: min(peak, bandwidth x intensity)
  // compute_seconds includes the last wave's output write; the total is fixed + max(compute,
  // memory) + reduce.
  double compute_seconds = 0, memory_seconds = 0, reduce_seconds = 0, fixed_seconds = 0;
  TimeModelTile tile;
  int split_k = 1;
  bool stream_k = false;
  double waves = 0;  // CTAs / SMs for the chosen tile and split
  OperandAlignment alignment;
  std::string regime;     // "compute", "memory" or "launch" (the fixed cost is most of the time)
  bool at_bound = false;  // the model's time was below the bound's: the bound's time is returned
};

// Throws std::invalid_argument for non-positive sizes, element sizes, SM counts, rates or
// ceilings, or an empty tile list.
GemmTimePrediction predict_gemm_time(const GemmTimeProblem& p, const TimeModelGpu& gpu,
                                     const TimeModelConstants& c);

// Tile and wave quantization of one tile and split-K choice (the NVIDIA "Matrix Multiplication
// Background" guide, sections 3.1 and 3.2): the useful fraction of the launched tiles' output,
// and of the waves' CTA slots (one CTA per SM). bench_alignment evaluates it with the tile
// cuBLASLt chose. Counts are doubles: 2^40-sized problems stay finite.
struct TileQuantization {
  double tiles = 0;            // per matrix
  double ctas = 0;             // tiles x batch x split-K
  double waves = 0;            // ctas / SMs (cuBLASLt reports this as wavesCount)
  double tile_efficiency = 0;  // m*n over the launched tiles' area
  double wave_efficiency = 0;  // ctas over the slots of the waves they need
  double efficiency() const { return tile_efficiency * wave_efficiency; }
};
// Throws std::invalid_argument for non-positive sizes, tiles, SM counts or splits.
TileQuantization quantize(const GemmTimeProblem& p, TimeModelTile tile, int sm_count,
                          int split_k = 1);

// The pure bound alone: 2mnk*batch over max(flops / peak, least bytes / bandwidth).
double roofline_bound_flops_per_s(const GemmTimeProblem& p, const TimeModelGpu& gpu);

// Least DRAM traffic: A and B read once, C written once, per matrix, in bytes.
double gemm_time_min_bytes(const GemmTimeProblem& p);

}  // namespace tcbench::numerics
