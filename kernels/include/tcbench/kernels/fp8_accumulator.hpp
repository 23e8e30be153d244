// tcbench's own accumulator kernels: D = A B^T with A (m x k) and B (n x k) both K-contiguous
// ("TN"), D (m x n, row-major) in FP32, on one tensor-core path each, with an optional promotion
// of the running sum to FP32 every `promote` products of K (DeepSeek-V3's N_C). They exist to
// show what each path's accumulator does to a dot product (bit detection, tcbench/numerics/
// accumulator_probes.hpp; error as K grows): plain loops that stage every K slice from global
// memory, instruction-level comparisons, not GEMM records.
//
//   mma_sync       mma.sync.m16n8k32 e4m3 -> f32 (QMMA; native on 8.9 and 12.x only)
//   mma_sync_f16   mma.sync.m16n8k16 f16 -> f32 (HMMA, 8.0+): the control, full FP32
//   mma_sync_bf16  mma.sync.m16n8k16 bf16 -> f32 (HMMA, 8.0+): the control
//   wgmma          wgmma.m64n64k32 e4m3 -> f32 (QGMMA, 9.0: the sm_90a library)
//   tcgen05        tcgen05.mma.cta_group::1.kind::f8f6f4 m128n64k32 e4m3 -> f32 in TMEM
//                  (UTCQMMA, 10.0 and 10.3: the sm_100a library)
// Where a path cannot run, acc_path_unsupported says why in one sentence: the tensor-peak
// table's rule for the same instruction (kernels/tensor_peak_table.cu), so it has one home.
#pragma once

#include "tcbench/numerics/element.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tcbench::kernels {

enum class AccPath : std::uint8_t { mma_e4m3, mma_f16, mma_bf16, wgmma_e4m3, tcgen05_e4m3 };
inline constexpr AccPath kAccPaths[] = {AccPath::mma_e4m3, AccPath::mma_f16, AccPath::mma_bf16,
                                        AccPath::wgmma_e4m3, AccPath::tcgen05_e4m3};

struct AccPathInfo {
  AccPath path;
  std::string_view name;  // benchmark variant part: "mma_sync", "wgmma", ...
  std::string_view ptx;   // the instruction, for labels
  numerics::Element input;
  int k;               // products one instruction adds
  int tile_m, tile_n;  // one CTA's output tile: m and n must be multiples
  bool control;        // a 16-bit path whose accumulator is FP32's (the comparison)
};
const AccPathInfo& info(AccPath p);

// Why the path cannot run on a GPU of compute capability major.minor, or is not in this build;
// nullopt when it can.
std::optional<std::string> acc_path_unsupported(AccPath p, int cc_major, int cc_minor);

struct AccGemm {
  const void* a = nullptr;  // m x k elements of the path's input type, row-major
  const void* b = nullptr;  // n x k, row-major
  float* d = nullptr;       // m x n, row-major
  int m = 0, n = 0, k = 0;
  int promote = 0;  // products of K per promotion to FP32 (a multiple of the path's k); 0: none
};

// Why `g` is not a problem the path's kernel takes (tile multiples, k a multiple of 32,
// promotion a multiple of the instruction's k, 16-byte aligned pointers), or nullopt.
std::optional<std::string> why_invalid(AccPath p, const AccGemm& g);

// Launches the path's kernel on `stream` (asynchronous). Throws InvalidArgument for an invalid
// problem; the caller checks acc_path_unsupported first.
void launch_acc_gemm(AccPath p, const AccGemm& g, cudaStream_t stream);

}  // namespace tcbench::kernels
