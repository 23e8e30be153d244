// Private to the tensor-peak kernels: the per-family launchers behind launch_tensor_peak().
#pragma once

#include "tcbench/kernels/tensor_peak.hpp"

namespace tcbench::kernels::detail {

// mma.sync family (tensor_peak_mma.cu).
int mma_chains();
int mma_blocks_per_sm(PeakInstr instr);
void launch_mma_peak(PeakInstr instr, const PeakLaunch& launch, const PeakBuffers& buffers,
                     cudaStream_t stream);

// GeForce Blackwell's mma.sync kinds (tensor_peak_mma_blackwell.cu: the family-specific library,
// whose kernels hold the instructions in their sm_120f cubin only and trap in sm_100f/sm_110f;
// linked when the build targets a Blackwell architecture: TCBENCH_TENSOR_PEAK_BLACKWELL).
int mma_blackwell_blocks_per_sm(PeakInstr instr);
void launch_mma_blackwell_peak(PeakInstr instr, const PeakLaunch& launch,
                               const PeakBuffers& buffers, cudaStream_t stream);

// wgmma family (tensor_peak_wgmma_sm90a.cu; the kernels exist only in the sm_90a cubin).
// Shared-memory tiles are filled in-kernel: every 16-byte row of a core matrix (8 rows x 16
// bytes, the unit wgmma's descriptors address) holds one value, chosen by the row's index
// within its core matrix, so A[m][k] = value_a(m % 8) and B[k][n] = value_b(n % 8) whatever the
// descriptor strides are. The values are peak_input_a(i, 0) and peak_input_b(0, j).
inline constexpr int kWgmmaM = 64, kWgmmaN = 256;
int wgmma_blocks_per_sm(PeakInstr instr);
void launch_wgmma_peak(PeakInstr instr, const PeakLaunch& launch, const PeakBuffers& buffers,
                       cudaStream_t stream);

// tcgen05 family (tensor_peak_tcgen05_sm100a.cu: sm_100a and sm_103a cubins; linked when the
// build targets a Blackwell architecture: TCBENCH_TENSOR_PEAK_TCGEN05). The same rule as wgmma
// for the shared-memory tiles, with the rows given whole: the host sends 8 16-byte rows of A
// (row r: every element a(r)) and 16 of B (8 of b(r), then 8 of -b(r)) in the kind's packing
// (numerics::smem_row), and the kernel copies row (offset / 16) % 8 into every 16 bytes.
inline constexpr int kTcgen05N = 256, kTcgen05RowsPerCta = 128;
inline constexpr int kSmemRowBytes = 16, kSmemRowValues = 8;
// prepare_tcgen05_peak sets the kernel's dynamic shared memory (cudaFuncSetAttribute) and returns
// the size; launch_tcgen05_peak only enqueues with it (prepare_tensor_peak's rule).
int tcgen05_blocks(PeakInstr instr, int sm_count);
int prepare_tcgen05_peak(PeakInstr instr);
void launch_tcgen05_peak(const PeakPrepared& prepared, const PeakBuffers& buffers,
                         cudaStream_t stream);

}  // namespace tcbench::kernels::detail
