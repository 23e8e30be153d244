// Host side of the tensor-peak kernels: which instruction runs where, the known inputs, the
// operation count, and the exact check of every accumulator (the CPU reference of this family).
#include "tcbench/error.hpp"
#include "tcbench/gemm_spec.hpp"
#include "tcbench/kernels/tensor_peak.hpp"
#include "tcbench/numerics/mma_fragments.hpp"
#include "tcbench/numerics/tensor_accumulator.hpp"
#include "tensor_peak_detail.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <string>

namespace tcbench::kernels {
namespace {

using P = Precision;

// Columns: variant, PTX, precision, m, n, k, wgmma, integer accumulate, alternate, chains,
// threads per block, accumulator fraction bits (tensor_accumulator.hpp; 0 for s32, unused).
// Every floating-point accumulator alternates +B/-B, so |acc| <= k = 32 at most: far below the
// exact limit of its model (FP8 on Hopper: 2^13), whatever the loop's length.
constexpr std::array<PeakInstrInfo, 10> kInfo{{
    {"mma_m16n8k16", "mma.sync.m16n8k16.f32.f16.f16.f32", P::fp16, 16, 8, 16, false, false, true, 8,
     128, 23},
    {"mma_m16n8k16", "mma.sync.m16n8k16.f16.f16.f16.f16", P::fp16_acc16, 16, 8, 16, false, false,
     true, 8, 128, 10},
    {"mma_m16n8k16", "mma.sync.m16n8k16.f32.bf16.bf16.f32", P::bf16, 16, 8, 16, false, false, true,
     8, 128, 23},
    {"mma_m16n8k8", "mma.sync.m16n8k8.f32.tf32.tf32.f32", P::tf32, 16, 8, 8, false, false, true, 8,
     128, 23},
    {"mma_m16n8k32", "mma.sync.m16n8k32.s32.s8.s8.s32", P::int8, 16, 8, 32, false, true, false, 8,
     128, 0},
    // Ada and GeForce Blackwell (QMMA): the accumulator width is unpublished; Hopper's 13 bits
    // is the narrowest measured for e4m3, so it is the model here too.
    {"mma_m16n8k32", "mma.sync.m16n8k32.f32.e4m3.e4m3.f32", P::fp8, 16, 8, 32, false, false, true,
     8, 128, 13},
    {"wgmma_m64n256k16", "wgmma.m64n256k16.f32.f16.f16", P::fp16, 64, 256, 16, true, false, true, 1,
     128, 23},
    {"wgmma_m64n256k16", "wgmma.m64n256k16.f32.bf16.bf16", P::bf16, 64, 256, 16, true, false, true,
     1, 128, 23},
    {"wgmma_m64n256k32", "wgmma.m64n256k32.f32.e4m3.e4m3", P::fp8, 64, 256, 32, true, false, true,
     1, 128, 13},
    {"wgmma_m64n256k32", "wgmma.m64n256k32.s32.s8.s8", P::int8, 64, 256, 32, true, true, false, 1,
     128, 0},
}};

// Bytes per input element: tf32 is stored as FP32 bits, s8/e4m3 as one byte.
int input_bytes(PeakInstr instr) {
  switch (info(instr).precision) {
    case P::tf32:
      return 4;
    case P::int8:
    case P::fp8:
      return 1;
    default:
      return 2;
  }
}

// The raw bits of a small integer in the instruction's input format, little-endian.
void append_bits(std::vector<std::uint8_t>& out, PeakInstr instr, int value) {
  const auto v = static_cast<float>(value);
  std::uint32_t bits = 0;
  switch (info(instr).precision) {
    case P::tf32:
      std::memcpy(&bits, &v, sizeof(bits));
      break;
    case P::bf16:
      bits = static_cast<__nv_bfloat16_raw>(__nv_bfloat16(v)).x;
      break;
    case P::int8:
      bits = static_cast<std::uint8_t>(static_cast<std::int8_t>(value));
      break;
    case P::fp8:
      bits = __nv_fp8_e4m3(v).__x;
      break;
    default:  // fp16, fp16_acc16
      bits = static_cast<__half_raw>(__half(v)).x;
      break;
  }
  for (int i = 0; i < input_bytes(instr); ++i)
    out.push_back(static_cast<std::uint8_t>(bits >> (8 * i)));
}

std::string cc_text(int major, int minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

std::size_t units(PeakInstr instr, const PeakLaunch& launch) {
  const PeakInstrInfo& i = info(instr);
  const int per_block = i.wgmma ? i.threads_per_block / 128 : i.threads_per_block / 32;
  return static_cast<std::size_t>(launch.blocks) * static_cast<std::size_t>(per_block);
}

// One accumulator element of the result: the exact product of the known inputs.
double product(PeakInstr instr, int row, int col) {
  const PeakInstrInfo& i = info(instr);
  if (i.wgmma)  // A[m][k] = a(m % 8), B[k][n] = b(n % 8): see tensor_peak_detail.hpp
    return static_cast<double>(i.k) * numerics::peak_input_a(row % 8, 0) *
           numerics::peak_input_b(0, col % 8);
  double sum = 0;
  for (int k = 0; k < i.k; ++k)
    sum += numerics::peak_input_a(row, k) * numerics::peak_input_b(k, col);
  return sum;
}

}  // namespace

const PeakInstrInfo& info(PeakInstr instr) {
  return kInfo.at(static_cast<std::size_t>(instr));
}

std::optional<std::string> peak_unsupported_reason(PeakInstr instr, int cc_major, int cc_minor) {
  const int cc = cc_number(cc_major, cc_minor);
  const PeakInstrInfo& i = info(instr);
  if (i.wgmma) {
    if (cc != 90)
      return "wgmma exists only on Hopper (compute capability 9.0, built as sm_90a); this GPU "
             "is " +
             cc_text(cc_major, cc_minor);
    return std::nullopt;
  }
  if (i.precision == P::fp8 && cc < 89)
    return "FP8 (e4m3) mma.sync needs compute capability 8.9 or newer; this GPU is " +
           cc_text(cc_major, cc_minor);
  // Native QMMA on 8.9 and 12.x; in between ptxas emulates it (tests/sass/sass_rules.json).
  if (i.precision == P::fp8 && cc_major == 9)
    return "FP8 mma.sync is emulated through FP16 on compute capability " +
           cc_text(cc_major, cc_minor) + "; Hopper's FP8 tensor path is wgmma";
  if (i.precision == P::fp8 && (cc_major == 10 || cc_major == 11))
    return "FP8 mma.sync is emulated through FP16 on compute capability " +
           cc_text(cc_major, cc_minor) +
           "; Blackwell's FP8 tensor path is tcgen05, which tcbench does not measure yet";
  if (cc < 80)
    return "tcbench's mma.sync peak kernels use the sm_80 shapes (m16n8k16, m16n8k8 tf32, "
           "m16n8k32); this GPU is " +
           cc_text(cc_major, cc_minor);
  return std::nullopt;
}

int peak_blocks_per_sm(PeakInstr instr) {
  // More than 4 blocks of 4 warps (32 accumulator chains per SM sub-partition) adds nothing
  // but output to check.
  if (info(instr).wgmma) return detail::wgmma_blocks_per_sm(instr);
  return std::min(4, detail::mma_blocks_per_sm(instr));
}

double peak_instructions(PeakInstr instr, const PeakLaunch& launch) {
  return static_cast<double>(units(instr, launch)) * info(instr).chains *
         (2.0 * static_cast<double>(launch.iterations) + 1.0);
}

double peak_check_magnitude(PeakInstr instr, const PeakLaunch& launch) {
  const PeakInstrInfo& i = info(instr);
  const double per_instruction = i.k;  // k products of magnitude <= 1
  return i.alternate ? per_instruction
                     : (2.0 * static_cast<double>(launch.iterations) + 1.0) * per_instruction;
}

double peak_exact_limit(PeakInstr instr) {
  const PeakInstrInfo& i = info(instr);
  if (i.integer_accumulate) return static_cast<double>(std::numeric_limits<std::int32_t>::max());
  return numerics::exact_check_limit(i.acc_fraction_bits);
}

double peak_ops(PeakInstr instr, const PeakLaunch& launch) {
  const PeakInstrInfo& i = info(instr);
  return peak_instructions(instr, launch) * 2.0 * i.m * i.n * i.k;
}

std::vector<std::uint8_t> peak_input_a(PeakInstr instr) {
  const PeakInstrInfo& i = info(instr);
  std::vector<std::uint8_t> out;
  if (i.wgmma) {
    for (int r = 0; r < 8; ++r) append_bits(out, instr, numerics::peak_input_a(r, 0));
    return out;
  }
  for (int r = 0; r < i.m; ++r)  // row-major m x k
    for (int c = 0; c < i.k; ++c) append_bits(out, instr, numerics::peak_input_a(r, c));
  return out;
}

std::vector<std::uint8_t> peak_input_b(PeakInstr instr) {
  const PeakInstrInfo& i = info(instr);
  std::vector<std::uint8_t> out;
  if (i.wgmma) {
    for (int c = 0; c < 8; ++c) append_bits(out, instr, numerics::peak_input_b(0, c));
    return out;
  }
  for (int c = 0; c < i.n; ++c)  // column-major k x n
    for (int r = 0; r < i.k; ++r) append_bits(out, instr, numerics::peak_input_b(r, c));
  return out;
}

std::size_t peak_out_bytes(PeakInstr instr, const PeakLaunch& launch) {
  const PeakInstrInfo& i = info(instr);
  return units(instr, launch) * static_cast<std::size_t>(i.chains) *
         static_cast<std::size_t>(i.m * i.n) * sizeof(double);
}

void launch_tensor_peak(PeakInstr instr, const PeakLaunch& launch, const PeakBuffers& buffers,
                        cudaStream_t stream) {
  int device = 0, major = 0, minor = 0;
  TCB_CUDA(cudaGetDevice(&device));
  TCB_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  TCB_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (auto why = peak_unsupported_reason(instr, major, minor)) throw InvalidArgument(*why);
  if (launch.blocks < 1 || launch.iterations < 0)
    throw InvalidArgument("tensor peak launch needs blocks >= 1 and iterations >= 0, got " +
                          std::to_string(launch.blocks) + " and " +
                          std::to_string(launch.iterations));
  if (info(instr).wgmma)
    detail::launch_wgmma_peak(instr, launch, buffers, stream);
  else
    detail::launch_mma_peak(instr, launch, buffers, stream);
  TCB_CUDA_LAUNCH("tensor peak " + std::string(info(instr).ptx) + ", " +
                  std::to_string(launch.blocks) + " blocks");
}

PeakCheck check_peak_output(PeakInstr instr, const PeakLaunch& launch,
                            std::span<const std::uint8_t> out) {
  const PeakInstrInfo& i = info(instr);
  const std::size_t tile = static_cast<std::size_t>(i.m * i.n);
  const std::size_t tiles = units(instr, launch) * static_cast<std::size_t>(i.chains);
  if (out.size() != tiles * tile * sizeof(double))
    throw InvalidArgument("check_peak_output: " + std::to_string(out.size()) + " bytes, expected " +
                          std::to_string(tiles * tile * sizeof(double)));
  if (peak_check_magnitude(instr, launch) > peak_exact_limit(instr))
    throw InvalidArgument(
        "check_peak_output: " + std::string(i.ptx) + " after " + std::to_string(launch.iterations) +
        " trips could reach |acc| = " + std::to_string(peak_check_magnitude(instr, launch)) +
        ", beyond the exact range of its accumulator (" + std::to_string(peak_exact_limit(instr)) +
        ")");
  std::vector<double> expected(tile);
  for (int r = 0; r < i.m; ++r)
    for (int c = 0; c < i.n; ++c)
      expected[static_cast<std::size_t>(r * i.n + c)] =
          numerics::peak_accumulator(product(instr, r, c), launch.iterations, i.alternate);
  PeakCheck check;
  for (std::size_t t = 0; t < tiles; ++t)
    for (std::size_t e = 0; e < tile; ++e) {
      double got;
      std::memcpy(&got, out.data() + (t * tile + e) * sizeof(double), sizeof(double));
      ++check.checked;
      if (got == expected[e]) continue;  // exact: NaN never passes
      if (check.mismatches++ == 0)
        check.first = "tile " + std::to_string(t) + " element (" + std::to_string(e / i.n) + ", " +
                      std::to_string(e % i.n) + "): got " + std::to_string(got) + ", expected " +
                      std::to_string(expected[e]);
    }
  return check;
}

}  // namespace tcbench::kernels
