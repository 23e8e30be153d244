// Host side of the tensor-peak kernels: the known inputs, the operation count, the launch, and
// the exact check of every accumulator (the CPU reference of this family). The instruction table,
// where each runs and the tcgen05 descriptors are in tensor_peak_table.cu.
#include "tcbench/error.hpp"
#include "tcbench/kernels/tensor_peak.hpp"
#include "tcbench/numerics/mma_fragments.hpp"
#include "tcbench/numerics/mma_operands.hpp"
#include "tcbench/numerics/tensor_accumulator.hpp"
#include "tensor_peak_detail.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

namespace tcbench::kernels {
namespace {

using numerics::MmaInput;

// Bytes per element of an mma.sync or wgmma tile: tf32 is stored as FP32 bits, 16-bit types in
// two bytes, everything narrower in one (FP6/FP4: the code in its register container, or the
// bare 4-bit code for .kind::mxf4nvf4, whose kernel packs eight to a register).
int input_bytes(const PeakInstrInfo& i) {
  return std::max(1, numerics::mma_input_bits(i.input) / 8);
}

// The raw bits of a small integer in the instruction's input format, little-endian.
void append_bits(std::vector<std::uint8_t>& out, const PeakInstrInfo& i, int value) {
  std::uint32_t bits = numerics::mma_input_code(i.input, value);
  if (i.kind == TensorKind::mma_f8f6f4 || i.kind == TensorKind::mma_mxf8f6f4)
    bits = numerics::mma_sync_container_byte(i.input, bits);
  for (int b = 0; b < input_bytes(i); ++b)
    out.push_back(static_cast<std::uint8_t>(bits >> (8 * b)));
}

// How a tcgen05 row's shared-memory operands are packed: FP4 two to a byte for .kind::mxf4nvf4,
// FP6/FP4 sixteen to 16 padded bytes under .kind::f8f6f4 and .kind::mxf8f6f4, else whole bytes.
numerics::SmemPacking packing(const PeakInstrInfo& i) {
  if (i.kind == TensorKind::tcgen05_mxf4nvf4) return numerics::SmemPacking::packed4;
  if (numerics::mma_input_bits(i.input) < 8) return numerics::SmemPacking::padded16;
  return numerics::SmemPacking::bytes;
}

// Appends the 16-byte core-matrix row whose every element is `value` (negated: -value's code).
void append_row(std::vector<std::uint8_t>& out, const PeakInstrInfo& i, int value, bool negate) {
  std::uint32_t code = numerics::mma_input_code(i.input, value);
  if (negate) code ^= numerics::mma_sign_bit(i.input);
  for (std::uint8_t byte : numerics::smem_row(i.input, code, packing(i))) out.push_back(byte);
}

std::size_t units(PeakInstr instr, const PeakLaunch& launch) {
  return static_cast<std::size_t>(static_cast<double>(launch.blocks) *
                                  peak_issuers_per_block(instr));
}

// One accumulator element of the result: the exact product of the known inputs (and scales).
double product(PeakInstr instr, int row, int col) {
  const PeakInstrInfo& i = info(instr);
  if (smem_operands(i))  // A[m][k] = a(m % 8), B[k][n] = b(n % 8): see tensor_peak_detail.hpp
    return i.scale * static_cast<double>(i.k) * numerics::peak_input_a(row % 8, 0) *
           numerics::peak_input_b(0, col % 8);
  double sum = 0;
  for (int k = 0; k < i.k; ++k)
    sum += numerics::peak_input_a(row, k) * numerics::peak_input_b(k, col);
  return i.scale * sum;
}

}  // namespace

double peak_issuers_per_block(PeakInstr instr) {
  const PeakInstrInfo& i = info(instr);
  switch (i.family) {
    case PeakFamily::mma_sync:
      return i.threads_per_block / 32;
    case PeakFamily::wgmma:
      return i.threads_per_block / 128;
    case PeakFamily::tcgen05:
      return 1.0 / i.cta_group;
  }
  return 0;
}

int peak_blocks(PeakInstr instr, int sm_count) {
  const PeakInstrInfo& i = info(instr);
  if (auto why = peak_build_reason(instr)) throw InvalidArgument(*why);
  // More than 4 blocks of 4 warps (32 accumulator chains per SM sub-partition) adds nothing
  // but output to check.
  switch (i.family) {
    case PeakFamily::wgmma:
      return sm_count * detail::wgmma_blocks_per_sm(instr);
    case PeakFamily::tcgen05:
#if defined(TCBENCH_TENSOR_PEAK_TCGEN05)
      return detail::tcgen05_blocks(instr, sm_count);
#else
      break;
#endif
    case PeakFamily::mma_sync:
#if defined(TCBENCH_TENSOR_PEAK_BLACKWELL)
      if (i.kind) return sm_count * std::min(4, detail::mma_blackwell_blocks_per_sm(instr));
#endif
      return sm_count * std::min(4, detail::mma_blocks_per_sm(instr));
  }
  return 0;
}

double peak_instructions(PeakInstr instr, const PeakLaunch& launch) {
  return static_cast<double>(units(instr, launch)) * info(instr).chains *
         (2.0 * static_cast<double>(launch.iterations) + 1.0);
}

double peak_check_magnitude(PeakInstr instr, const PeakLaunch& launch) {
  const PeakInstrInfo& i = info(instr);
  const double per_instruction = i.k * i.scale;  // k products of magnitude <= 1, scaled
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
  if (i.family == PeakFamily::tcgen05) {
    for (int r = 0; r < 8; ++r) append_row(out, i, numerics::peak_input_a(r, 0), false);
    return out;
  }
  if (i.family == PeakFamily::wgmma) {
    for (int r = 0; r < 8; ++r) append_bits(out, i, numerics::peak_input_a(r, 0));
    return out;
  }
  for (int r = 0; r < i.m; ++r)  // row-major m x k
    for (int c = 0; c < i.k; ++c) append_bits(out, i, numerics::peak_input_a(r, c));
  return out;
}

std::vector<std::uint8_t> peak_input_b(PeakInstr instr) {
  const PeakInstrInfo& i = info(instr);
  std::vector<std::uint8_t> out;
  if (i.family == PeakFamily::tcgen05) {  // B's 8 rows, then the second instruction's
    for (int negate = 0; negate < 2; ++negate)
      for (int c = 0; c < 8; ++c)
        append_row(out, i, numerics::peak_input_b(0, c), negate == 1 && i.alternate);
    return out;
  }
  if (i.family == PeakFamily::wgmma) {
    for (int c = 0; c < 8; ++c) append_bits(out, i, numerics::peak_input_b(0, c));
    return out;
  }
  for (int c = 0; c < i.n; ++c)  // column-major k x n
    for (int r = 0; r < i.k; ++r) append_bits(out, i, numerics::peak_input_b(r, c));
  return out;
}

std::size_t peak_out_bytes(PeakInstr instr, const PeakLaunch& launch) {
  const PeakInstrInfo& i = info(instr);
  return units(instr, launch) * static_cast<std::size_t>(i.chains) *
         static_cast<std::size_t>(i.m * i.n) * sizeof(double);
}

PeakPrepared prepare_tensor_peak(PeakInstr instr, const PeakLaunch& launch) {
  int device = 0, major = 0, minor = 0;
  TCB_CUDA(cudaGetDevice(&device));
  TCB_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  TCB_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (auto why = peak_unsupported_reason(instr, major, minor)) throw InvalidArgument(*why);
  if (auto why = peak_build_reason(instr)) throw InvalidArgument(*why);
  const PeakInstrInfo& i = info(instr);
  if (launch.blocks < 1 || launch.iterations < 0 || launch.blocks % i.cta_group != 0)
    throw InvalidArgument("tensor peak launch of " + std::string(i.ptx) +
                          " needs blocks >= 1 (a multiple of " + std::to_string(i.cta_group) +
                          ") and iterations >= 0, got " + std::to_string(launch.blocks) + " and " +
                          std::to_string(launch.iterations));
  PeakPrepared p{instr, launch};
#if defined(TCBENCH_TENSOR_PEAK_TCGEN05)
  if (i.family == PeakFamily::tcgen05) {
    p.dynamic_smem_bytes = detail::prepare_tcgen05_peak(instr);
    p.tcgen05 = peak_tcgen05_operands(instr);
  }
#endif
  return p;
}

void enqueue_tensor_peak(const PeakPrepared& p, const PeakBuffers& buffers, cudaStream_t stream) {
  const PeakInstrInfo& i = info(p.instr);
  switch (i.family) {
    case PeakFamily::wgmma:
      detail::launch_wgmma_peak(p.instr, p.launch, buffers, stream);
      break;
    case PeakFamily::tcgen05:
#if defined(TCBENCH_TENSOR_PEAK_TCGEN05)
      detail::launch_tcgen05_peak(p, buffers, stream);
#endif
      break;
    case PeakFamily::mma_sync:
#if defined(TCBENCH_TENSOR_PEAK_BLACKWELL)
      if (i.kind) {
        detail::launch_mma_blackwell_peak(p.instr, p.launch, buffers, stream);
        break;
      }
#endif
      detail::launch_mma_peak(p.instr, p.launch, buffers, stream);
      break;
  }
  // The context is built only when the launch failed: nothing but the check runs otherwise.
  TCB_CUDA_LAUNCH("tensor peak " + std::string(i.ptx) + ", " + std::to_string(p.launch.blocks) +
                  " blocks");
}

void launch_tensor_peak(PeakInstr instr, const PeakLaunch& launch, const PeakBuffers& buffers,
                        cudaStream_t stream) {
  enqueue_tensor_peak(prepare_tensor_peak(instr, launch), buffers, stream);
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
