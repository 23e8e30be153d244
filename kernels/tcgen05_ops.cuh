#pragma once
// The tcgen05 instructions around an MMA (tensor-memory allocation, commit, fences, the mbarrier
// wait, the 32x32b load), shared by the tensor-peak and FP8-accumulator kernels. They exist on
// sm_100a and sm_103a only; elsewhere each is __trap(), and the kernels refuse to launch there.

#include <cstdint>

#if defined(__CUDA_ARCH__) && \
    (defined(__CUDA_ARCH_FEAT_SM100_ALL) || defined(__CUDA_ARCH_FEAT_SM103_ALL))
#define TCB_HAS_TCGEN05 1
#else
#define TCB_HAS_TCGEN05 0
#endif
#if TCB_HAS_TCGEN05
#define TCB_TC(statement) statement
#else
#define TCB_TC(statement) __trap()
#endif

namespace tcbench::kernels::detail::tcgen05 {

__device__ inline std::uint32_t smem_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

template <int G>
__device__ inline void tmem_alloc(std::uint32_t* slot, std::uint32_t columns) {
  if constexpr (G == 1)
    TCB_TC(asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(
                            smem_address(slot)),
                        "r"(columns)));
  else
    TCB_TC(asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(
                            smem_address(slot)),
                        "r"(columns)));
}
template <int G>
__device__ inline void tmem_relinquish() {
  if constexpr (G == 1)
    TCB_TC(asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;"));
  else
    TCB_TC(asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;"));
}
template <int G>
__device__ inline void tmem_dealloc(std::uint32_t tmem, std::uint32_t columns) {
  if constexpr (G == 1)
    TCB_TC(asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(tmem),
                        "r"(columns)));
  else
    TCB_TC(asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;" ::"r"(tmem),
                        "r"(columns)));
}
// Arrives on the mbarrier (each CTA's, for a pair) when every MMA this thread issued is done.
template <int G>
__device__ inline void commit(std::uint64_t* barrier) {
  if constexpr (G == 1)
    TCB_TC(asm volatile(
        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(
            smem_address(barrier))
        : "memory"));
  else
    TCB_TC(
        asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster."
                     "multicast::cluster.b64 [%0], %1;" ::"r"(smem_address(barrier)),
                     "h"(static_cast<unsigned short>(0b11))
                     : "memory"));
}
__device__ inline void fence_before_sync() {
  TCB_TC(asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory"));
}
__device__ inline void fence_after_sync() {
  TCB_TC(asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory"));
}
// Every thread of the CTA (G == 1) or of the pair (G == 2), with tcgen05's ordering around it.
template <int G>
__device__ inline void sync_all() {
  fence_before_sync();
  if constexpr (G == 1) {
    __syncthreads();
  } else {
    TCB_TC(
        asm volatile("barrier.cluster.arrive.release.aligned;\n"
                     "barrier.cluster.wait.acquire.aligned;" ::
                         : "memory"));
  }
  fence_after_sync();
}
__device__ inline void wait_parity(std::uint64_t* barrier, std::uint32_t parity) {
  std::uint32_t done = 0;
  while (!done)
    TCB_TC(
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done)
                     : "r"(smem_address(barrier)), "r"(parity)
                     : "memory"));
}
// 8 columns of this warp's 32 lanes (tcgen05.ld 32x32b.x8, then tcgen05.wait::ld).
__device__ inline void tmem_load8(std::uint32_t taddr, std::uint32_t (&r)[8]) {
  TCB_TC(
      asm volatile("tcgen05.ld.sync.aligned.32x32b.x8.b32 {%0, %1, %2, %3, %4, %5, %6, %7}, "
                   "[%8];\ntcgen05.wait::ld.sync.aligned;"
                   : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]),
                     "=r"(r[6]), "=r"(r[7])
                   : "r"(taddr)
                   : "memory"));
}

}  // namespace tcbench::kernels::detail::tcgen05
