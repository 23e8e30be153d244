#include "tcbench/numerics/gemm_time_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace tcbench::numerics {
namespace {

// The largest power of two, up to 16, dividing `elements` x `bits` / 8 bytes; 1 when the row
// does not even end on a byte (odd FP4 counts).
int alignment_of(std::int64_t elements, int bits) {
  const std::int64_t total_bits = elements * bits;
  if (total_bits % 8 != 0) return 1;
  const std::int64_t bytes = total_bits / 8;
  int a = 1;
  while (a < 16 && bytes % (2 * a) == 0) a *= 2;
  return a;
}

// Index of an alignment below 16 bytes in the constants' arrays: 1 -> 0, 2 -> 1, 4 -> 2, 8 -> 3.
int alignment_index(int bytes) {
  int i = 0;
  while (bytes > 1 && i < 3) {
    bytes /= 2;
    ++i;
  }
  return i;
}

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("predict_gemm_time: " + what);
}

double intensity(const TimeModelTile& t) {
  return static_cast<double>(t.m) * t.n / static_cast<double>(t.m + t.n);
}

// Split-K factors tried (cuBLASLt's heuristics use small ones; 1 is always tried).
constexpr int kSplits[] = {1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32};

}  // namespace

int alignment_bytes(std::int64_t dim, Element t) {
  if (dim <= 0)
    throw std::invalid_argument("alignment_bytes: the dimension must be positive, got " +
                                std::to_string(dim));
  const std::int64_t bytes = dim * element_bytes(t);
  int a = 1;
  while (a < 128 && bytes % (2 * a) == 0) a *= 2;
  return a;
}

int efficient_multiple(Element t) {
  return 16 / element_bytes(t);
}

OperandAlignment operand_alignment(const GemmTimeProblem& p) {
  OperandAlignment a;
  const std::int64_t lda = p.a_k_contiguous ? p.k : p.m;
  const std::int64_t ldb = p.b_n_contiguous ? p.n : p.k;
  a.a = alignment_of(lda, p.a_bits);
  a.b = alignment_of(ldb, p.b_bits);
  a.c = alignment_of(p.n, p.c_bits);
  if (p.batch > 1) {  // packed matrices: each one starts a whole matrix after the last
    a.a = std::min(a.a, alignment_of(p.m * p.k, p.a_bits));
    a.b = std::min(a.b, alignment_of(p.k * p.n, p.b_bits));
    a.c = std::min(a.c, alignment_of(p.m * p.n, p.c_bits));
  }
  return a;
}

double gemm_time_min_bytes(const GemmTimeProblem& p) {
  const double m = static_cast<double>(p.m), n = static_cast<double>(p.n),
               k = static_cast<double>(p.k);
  return static_cast<double>(p.batch) * (m * k * p.a_bits + k * n * p.b_bits + m * n * p.c_bits) /
         8.0;
}

double roofline_bound_flops_per_s(const GemmTimeProblem& p, const TimeModelGpu& gpu) {
  const double flops = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) *
                       static_cast<double>(p.k) * static_cast<double>(p.batch);
  const double t =
      std::max(flops / gpu.peak_flops_per_s, gemm_time_min_bytes(p) / gpu.dram_bytes_per_s);
  return flops / t;
}

TileQuantization quantize(const GemmTimeProblem& p, TimeModelTile tile, int sm_count, int split_k) {
  if (p.m <= 0 || p.n <= 0 || p.k <= 0 || p.batch <= 0 || tile.m <= 0 || tile.n <= 0 ||
      sm_count <= 0 || split_k <= 0)
    throw std::invalid_argument(
        "quantize: sizes, the tile, the SM count and split-K must be positive");
  TileQuantization q;
  const double tm = std::ceil(static_cast<double>(p.m) / tile.m);
  const double tn = std::ceil(static_cast<double>(p.n) / tile.n);
  q.tiles = tm * tn;
  q.ctas = q.tiles * static_cast<double>(p.batch) * split_k;
  q.waves = q.ctas / sm_count;
  q.tile_efficiency =
      (static_cast<double>(p.m) / (tm * tile.m)) * (static_cast<double>(p.n) / (tn * tile.n));
  q.wave_efficiency = q.waves / std::ceil(q.waves);
  return q;
}

GemmTimePrediction predict_gemm_time(const GemmTimeProblem& p, const TimeModelGpu& gpu,
                                     const TimeModelConstants& c) {
  require(p.m > 0 && p.n > 0 && p.k > 0 && p.batch > 0,
          "M, N, K and the batch must be positive, got " + std::to_string(p.m) + " x " +
              std::to_string(p.n) + " x " + std::to_string(p.k) + " x " + std::to_string(p.batch));
  require(p.a_bits > 0 && p.b_bits > 0 && p.c_bits > 0, "element sizes must be positive");
  require(gpu.sm_count > 0, "the GPU needs a positive SM count");
  require(gpu.peak_flops_per_s > 0 && gpu.dram_bytes_per_s > 0,
          "the GPU needs a positive rate and bandwidth");
  require(gpu.ceiling > 0 && gpu.ceiling <= 1, "the ceiling must be in (0, 1]");
  require(!c.tiles.empty(), "the constants name no tile");
  require(c.sustained_fraction > 0 && c.sustained_fraction <= 1 && c.sustained_us > 0,
          "the sustained fraction must be in (0, 1] and its time positive");

  GemmTimePrediction out;
  out.alignment = operand_alignment(p);
  out.bound_flops_per_s = roofline_bound_flops_per_s(p, gpu);
  const double flops = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) *
                       static_cast<double>(p.k) * static_cast<double>(p.batch);

  const OperandAlignment& al = out.alignment;
  double f_compute = 1;
  if (al.inputs() < 16)
    f_compute = std::min(f_compute, c.align_inputs[alignment_index(al.inputs())]);
  if (al.c < 16) f_compute = std::min(f_compute, c.align_output[alignment_index(al.c)]);
  const double f_memory = al.all() < 16 ? c.align_memory[alignment_index(al.all())] : 1.0;
  const double f_batch = p.batch > 1 ? c.batched_efficiency : 1.0;

  const double sm_rate = gpu.peak_flops_per_s / gpu.sm_count * gpu.ceiling * f_compute * f_batch;
  const double bandwidth = gpu.dram_bytes_per_s * c.bandwidth_efficiency;
  const double memory_s = gemm_time_min_bytes(p) / (bandwidth * f_memory);
  const double c_bytes = static_cast<double>(p.m) * static_cast<double>(p.n) *
                         static_cast<double>(p.batch) * p.c_bits / 8.0;
  const double k_step = std::max(1.0, std::floor(c.k_step_bytes * 8.0 / p.a_bits));
  const double latency_s = c.cta_latency_us * 1e-6;
  double ref_intensity = 0;
  for (const TimeModelTile& t : c.tiles) ref_intensity = std::max(ref_intensity, intensity(t));
  auto tile_speed = [&](const TimeModelTile& t) {
    if (c.tile_half <= 0) return 1.0;
    const double i = intensity(t);
    return (i / (i + c.tile_half)) / (ref_intensity / (ref_intensity + c.tile_half));
  };

  double best = std::numeric_limits<double>::infinity();
  for (const TimeModelTile& base : c.tiles) {
    for (const TimeModelTile t : {base, TimeModelTile{base.n, base.m}}) {
      const double speed = tile_speed(t);
      // Counts in double: a 2^40-sized problem has more tiles than an int64 holds.
      const double tiles = std::ceil(static_cast<double>(p.m) / t.m) *
                           std::ceil(static_cast<double>(p.n) / t.n) * static_cast<double>(p.batch);
      for (int s : kSplits) {
        if (s > 1 && static_cast<double>(p.k) / s < static_cast<double>(c.min_split_k_depth)) break;
        const double k_split = std::ceil(static_cast<double>(p.k) / s);
        const double k_padded = std::ceil(k_split / k_step) * k_step;
        const double cta_s = 2.0 * t.m * t.n * k_padded / (sm_rate * speed) + latency_s;
        const double ctas = tiles * s;
        const double waves = ctas / gpu.sm_count;
        const double full = std::ceil(waves);
        const double reduce_s = s > 1 ? 2.0 * s * static_cast<double>(p.m) *
                                                static_cast<double>(p.n) *
                                                static_cast<double>(p.batch) * 4.0 / bandwidth +
                                            c.split_k_fixed_us * 1e-6
                                      : 0.0;
        // Data-parallel waves; on sm_90+ also a stream-K schedule (no partial-wave step, a
        // fixup cost); below one wave stream-K is split-K, which the data-parallel loop tries.
        for (bool streamk : {false, true}) {
          if (streamk && !(c.stream_k && s == 1)) continue;
          // Under one wave every CTA still takes its whole time: the GPU is just not full.
          const double effective = streamk ? std::max(1.0, waves) * (1.0 + c.stream_k_overhead)
                                           : std::max(1.0, waves + c.wave_depth * (full - waves));
          const double math_s = effective * cta_s;
          // Long runs of math fall to the sustained (power-limited) rate.
          const double compute_s = math_s * (1.0 + (1.0 / c.sustained_fraction - 1.0) * math_s /
                                                       (math_s + c.sustained_us * 1e-6));
          // The last wave's output is written after its math: no later tile hides it.
          const double tail_s =
              std::min(c_bytes, static_cast<double>(gpu.sm_count) * t.m * t.n * p.c_bits / 8.0) /
              (bandwidth * f_memory);
          const double total =
              c.fixed_us * 1e-6 + std::max(compute_s + tail_s, memory_s) + reduce_s;
          if (total < best) {
            best = total;
            out.seconds = total;
            out.compute_seconds = compute_s + tail_s;
            out.memory_seconds = memory_s;
            out.reduce_seconds = reduce_s;
            out.tile = t;
            out.split_k = s;
            out.stream_k = streamk;
            out.waves = waves;
          }
        }
      }
    }
  }
  out.fixed_seconds = c.fixed_us * 1e-6;
  out.flops_per_s = flops / out.seconds;
  if (!(out.flops_per_s <= out.bound_flops_per_s)) {  // never faster than the bound (NaN too)
    out.flops_per_s = out.bound_flops_per_s;
    out.seconds = flops / out.bound_flops_per_s;
    out.at_bound = true;
  }
  if (out.fixed_seconds > 0.5 * out.seconds)
    out.regime = "launch";
  else
    out.regime = out.compute_seconds >= out.memory_seconds ? "compute" : "memory";
  return out;
}

}  // namespace tcbench::numerics
