// Pad copy: each thread writes one 16-byte chunk of a destination column (16 / sizeof(Bits)
// consecutive rows) with a single vector store; the source may be unaligned (ld 33 x 2 bytes
// is the case being fixed), so it is read element by element through pad_element().
#include "tcbench/numerics/host_device.hpp"
#include "tcbench/error.hpp"
#include "tcbench/kernels/pad_copy.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

namespace tcbench::kernels {
namespace {

namespace tn = tcbench::numerics;

template <typename Bits>
__global__ void pad_copy_kernel(tn::PadCopyShape s, const Bits* __restrict__ src,
                                Bits* __restrict__ dst) {
  constexpr int kVec = 16 / sizeof(Bits);
  const std::int64_t chunks_per_col = s.ld_dst / kVec;
  const std::int64_t chunks = chunks_per_col * s.cols_pad;
  for (std::int64_t c = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       c < chunks; c += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t j = c / chunks_per_col;
    const std::int64_t i0 = (c % chunks_per_col) * kVec;
    union {
      uint4 vec;
      Bits e[kVec];
    } chunk;
#pragma unroll
    for (int v = 0; v < kVec; ++v) chunk.e[v] = tn::pad_element(src, s, i0 + v, j);
    *reinterpret_cast<uint4*>(dst + i0 + j * s.ld_dst) = chunk.vec;
  }
}

template <typename Bits>
void launch(const tn::PadCopyShape& s, const void* src, void* dst, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const std::int64_t chunks =
      s.ld_dst / (16 / static_cast<std::int64_t>(sizeof(Bits))) * s.cols_pad;
  // Grid-stride: a few waves of blocks is enough to saturate DRAM; more only adds launch cost.
  const auto blocks =
      static_cast<unsigned>(std::min<std::int64_t>(numerics::ceil_div(chunks, kThreads), 65536));
  pad_copy_kernel<Bits>
      <<<blocks, kThreads, 0, stream>>>(s, static_cast<const Bits*>(src), static_cast<Bits*>(dst));
}

}  // namespace

void pad_copy(const tn::PadCopyShape& shape, int element_bytes, const void* src, void* dst,
              cudaStream_t stream) {
  if (const auto why = tn::pad_copy_invalid(shape, element_bytes)) throw InvalidArgument(*why);
  if (reinterpret_cast<std::uintptr_t>(dst) % 16 != 0)
    throw InvalidArgument("pad copy: the destination pointer is not 16-byte aligned");
  switch (element_bytes) {
    case 1:
      launch<std::uint8_t>(shape, src, dst, stream);
      break;
    case 2:
      launch<std::uint16_t>(shape, src, dst, stream);
      break;
    default:
      launch<std::uint32_t>(shape, src, dst, stream);
      break;
  }
  TCB_CUDA_LAUNCH("pad_copy " + std::to_string(shape.rows) + "x" + std::to_string(shape.cols) +
                  " -> " + std::to_string(shape.rows_pad) + "x" + std::to_string(shape.cols_pad) +
                  " (" + std::to_string(element_bytes) + "-byte elements)");
}

}  // namespace tcbench::kernels
