// Private to the tensor-peak kernels: the per-family launchers behind launch_tensor_peak().
#pragma once

#include "tcbench/kernels/tensor_peak.hpp"

namespace tcbench::kernels::detail {

// mma.sync family (tensor_peak_mma.cu).
int mma_chains();
int mma_blocks_per_sm(PeakInstr instr);
void launch_mma_peak(PeakInstr instr, const PeakLaunch& launch, const PeakBuffers& buffers,
                     cudaStream_t stream);

// wgmma family (tensor_peak_wgmma_sm90a.cu; the kernels exist only in the sm_90a cubin).
// Shared-memory tiles are filled in-kernel: every 16-byte row of a core matrix (8 rows x 16
// bytes, the unit wgmma's descriptors address) holds one value, chosen by the row's index
// within its core matrix, so A[m][k] = value_a(m % 8) and B[k][n] = value_b(n % 8) whatever the
// descriptor strides are. The values are peak_input_a(i, 0) and peak_input_b(0, j).
inline constexpr int kWgmmaM = 64, kWgmmaN = 256;
int wgmma_blocks_per_sm(PeakInstr instr);
void launch_wgmma_peak(PeakInstr instr, const PeakLaunch& launch, const PeakBuffers& buffers,
                       cudaStream_t stream);

}  // namespace tcbench::kernels::detail
