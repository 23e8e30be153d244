// The descriptors the asynchronous tensor instructions read their operands through, built by
// constexpr host-and-device functions so that the host tests (tests/host/numerics/
// test_mma_descriptors.cpp) check, bit for bit, the very values the kernels pass:
//
//   wgmma (Hopper) shared-memory matrix descriptor, 64 bits. PTX ISA, "Matrix Descriptor Format"
//   (wgmma.mma_async); CUTLASS cute/arch/mma_sm90_desc.hpp, union GmmaDescriptor:
//     [0,14)  start address >> 4        [16,30) leading-dimension byte offset >> 4
//     [32,46) stride-dimension byte offset >> 4
//     [49,52) base offset (128B/64B swizzle only)   [62,64) layout: none 0, 128B 1, 64B 2, 32B 3
//
//   tcgen05 (Blackwell, compute capability 10.x) shared-memory descriptor, 64 bits. PTX ISA,
//   "Shared Memory Descriptor" (tcgen05 matrix descriptors); CUTLASS cute/arch/mma_sm100_desc.hpp,
//   union UMMA::SmemDescriptor: the wgmma fields, plus
//     [46,48) version: 1 on SM100 (the PTX ISA's "fixed constant value of 0b001" in bits 46-48)
//     [52]    leading-dimension stride mode (0 relative, 1 absolute)
//     [61,64) layout: none 0, 128B with 32B atom 1, 128B 2, 64B 4, 32B 6
//
//   tcgen05.mma instruction descriptor, 32 bits. PTX ISA, "Instruction descriptor" tables for
//   .kind::tf32/f16/f8f6f4/i8 and for .kind::mxf8f6f4/mxf4/mxf4nvf4; CUTLASS
//   cute/arch/mma_sm100_desc.hpp, union UMMA::InstrDescriptor and InstrDescriptorBlockScaled:
//     dense kinds           [0,2) sparsity selector  [2] sparse  [3] saturate (i8)
//                           [4,6) D type: F16 0, F32 1, S32 2
//     block-scaled kinds    [0,2) sparsity selector  [2] sparse  [4,6) B scale-factor id
//     both                  [7,10) A type  [10,13) B type  [13] negate A  [14] negate B
//                           [15] A MN-major  [16] B MN-major  [17,23) N >> 3  [24,29) M >> 4
//     dense kinds           [30,32) maximum shift (.ws only)
//     block-scaled kinds    [23] scale type: UE4M3 0, UE8M0 1  [29,31) A scale-factor id
//                           [31] K: 0 = the kind's dense K (mxf4nvf4 1 = K 96)
//   Types: f16 kind F16 0, BF16 1; tf32 kind TF32 2; f8f6f4 and mxf8f6f4 E4M3 0, E5M2 1, E2M3 3,
//   E3M2 4, E2M1 5; i8 kind U8 0, S8 1; mxf4 and mxf4nvf4 E2M1 1.
#pragma once

#include "tcbench/numerics/host_device.hpp"

#include <cstdint>

namespace tcbench::numerics {

// ---- wgmma (sm_90a) -------------------------------------------------------------------------

enum class WgmmaSwizzle : std::uint8_t { none = 0, b128 = 1, b64 = 2, b32 = 3 };

// Addresses and byte offsets are shared-memory byte values; the descriptor keeps bits [4,18) of
// each (16-byte units, 256 KiB of address space), as the format has it.
TCB_HD constexpr std::uint64_t wgmma_smem_descriptor(std::uint32_t smem_address,
                                                     std::uint32_t leading_byte_offset,
                                                     std::uint32_t stride_byte_offset,
                                                     WgmmaSwizzle swizzle = WgmmaSwizzle::none,
                                                     std::uint32_t base_offset = 0) {
  return static_cast<std::uint64_t>((smem_address & 0x3FFFFu) >> 4) |
         static_cast<std::uint64_t>((leading_byte_offset & 0x3FFFFu) >> 4) << 16 |
         static_cast<std::uint64_t>((stride_byte_offset & 0x3FFFFu) >> 4) << 32 |
         static_cast<std::uint64_t>(base_offset & 0x7u) << 49 |
         static_cast<std::uint64_t>(static_cast<std::uint8_t>(swizzle) & 0x3u) << 62;
}

// ---- tcgen05 (sm_100a/sm_103a) --------------------------------------------------------------

enum class UmmaSwizzle : std::uint8_t {
  none = 0,
  b128_base32b = 1,
  b128 = 2,
  b64 = 4,
  b32 = 6,
};

inline constexpr std::uint64_t kUmmaDescriptorVersion = 1;  // bits [46,48) on SM100

TCB_HD constexpr std::uint64_t umma_smem_descriptor(std::uint32_t smem_address,
                                                    std::uint32_t leading_byte_offset,
                                                    std::uint32_t stride_byte_offset,
                                                    UmmaSwizzle swizzle = UmmaSwizzle::none,
                                                    std::uint32_t base_offset = 0,
                                                    bool leading_offset_absolute = false) {
  return static_cast<std::uint64_t>((smem_address & 0x3FFFFu) >> 4) |
         static_cast<std::uint64_t>((leading_byte_offset & 0x3FFFFu) >> 4) << 16 |
         static_cast<std::uint64_t>((stride_byte_offset & 0x3FFFFu) >> 4) << 32 |
         kUmmaDescriptorVersion << 46 | static_cast<std::uint64_t>(base_offset & 0x7u) << 49 |
         static_cast<std::uint64_t>(leading_offset_absolute ? 1u : 0u) << 52 |
         static_cast<std::uint64_t>(static_cast<std::uint8_t>(swizzle) & 0x7u) << 61;
}

// The K-major, no-swizzle canonical layout both generations use here: core matrices of 8 rows x
// 16 bytes stored as 128 contiguous bytes, the two core matrices of one 32-byte K slice side by
// side (leading offset 128 bytes, along K), the next 8 rows 256 bytes on (stride offset, along M
// or N). Canonical form (CUTLASS, in 16-byte units): ((8,m),(1,2)) : ((1,SBO),(1,LBO)).
inline constexpr std::uint32_t kCoreMatrixBytes = 128;
inline constexpr std::uint32_t kKMajorLeadingBytes = 128;
inline constexpr std::uint32_t kKMajorStrideBytes = 256;

// Where byte `k_byte` (0..31) of row `row` of one 32-byte K slice lives in that layout: core
// matrix (row / 8, k_byte / 16) at (2 (row / 8) + k_byte / 16) x 128 bytes, its row row % 8 at
// 16 bytes each. The kernels that stage operands from global memory store through it.
TCB_HD constexpr std::uint32_t kmajor_smem_offset(std::uint32_t row, std::uint32_t k_byte) {
  return (row / 8) * kKMajorStrideBytes + (k_byte / 16) * kKMajorLeadingBytes + (row % 8) * 16 +
         k_byte % 16;
}

enum class UmmaKind : std::uint8_t { f16, tf32, f8f6f4, i8, mxf8f6f4, mxf4nvf4 };

// The operand types of tcgen05.mma (and of mma.sync's FP8/FP6/FP4 kinds).
enum class MmaInput : std::uint8_t { f16, bf16, tf32, e4m3, e5m2, e2m3, e3m2, e2m1, s8, u8 };

enum class UmmaDType : std::uint8_t { f16 = 0, f32 = 1, s32 = 2 };
enum class UmmaScaleType : std::uint8_t { ue4m3 = 0, ue8m0 = 1 };

inline constexpr std::uint8_t kUmmaNoSuchType = 0xFF;

TCB_HD constexpr bool umma_block_scaled(UmmaKind kind) {
  return kind == UmmaKind::mxf8f6f4 || kind == UmmaKind::mxf4nvf4;
}

// The 3-bit type code of `in` under `kind`, or kUmmaNoSuchType when the kind does not take it.
TCB_HD constexpr std::uint8_t umma_type_code(UmmaKind kind, MmaInput in) {
  switch (kind) {
    case UmmaKind::f16:
      return in == MmaInput::f16 ? 0 : in == MmaInput::bf16 ? 1 : kUmmaNoSuchType;
    case UmmaKind::tf32:
      return in == MmaInput::tf32 ? 2 : kUmmaNoSuchType;
    case UmmaKind::f8f6f4:
    case UmmaKind::mxf8f6f4:
      switch (in) {
        case MmaInput::e4m3:
          return 0;
        case MmaInput::e5m2:
          return 1;
        case MmaInput::e2m3:
          return 3;
        case MmaInput::e3m2:
          return 4;
        case MmaInput::e2m1:
          return 5;
        default:
          return kUmmaNoSuchType;
      }
    case UmmaKind::i8:
      return in == MmaInput::u8 ? 0 : in == MmaInput::s8 ? 1 : kUmmaNoSuchType;
    case UmmaKind::mxf4nvf4:
      return in == MmaInput::e2m1 ? 1 : kUmmaNoSuchType;
  }
  return kUmmaNoSuchType;
}

// One tcgen05.mma's configuration. Dense kinds read `d`; block-scaled kinds read `scale` and the
// scale-factor ids (which byte of a 32-bit TMEM column holds the first scale); k96 selects K = 96
// for mxf4nvf4 (sm_103a).
struct UmmaShape {
  UmmaKind kind;
  MmaInput a, b;
  int m, n;
  UmmaDType d = UmmaDType::f32;
  bool negate_a = false, negate_b = false;
  bool a_mn_major = false, b_mn_major = false;
  bool saturate = false;
  UmmaScaleType scale = UmmaScaleType::ue8m0;
  int a_scale_id = 0, b_scale_id = 0;
  bool k96 = false;
};

// The instruction descriptor; 0 (never a valid descriptor: M >> 4 is at least 4) when `s` names
// a type its kind does not take or a shape outside the fields.
TCB_HD constexpr std::uint32_t umma_instr_descriptor(const UmmaShape& s) {
  const std::uint8_t a = umma_type_code(s.kind, s.a), b = umma_type_code(s.kind, s.b);
  if (a == kUmmaNoSuchType || b == kUmmaNoSuchType) return 0;
  if (s.m < 64 || s.m > 256 || s.m % 16 != 0 || s.n < 8 || s.n > 256 || s.n % 8 != 0) return 0;
  std::uint32_t desc = static_cast<std::uint32_t>(a) << 7 | static_cast<std::uint32_t>(b) << 10 |
                       (s.negate_a ? 1u : 0u) << 13 | (s.negate_b ? 1u : 0u) << 14 |
                       (s.a_mn_major ? 1u : 0u) << 15 | (s.b_mn_major ? 1u : 0u) << 16 |
                       static_cast<std::uint32_t>(s.n >> 3) << 17 |
                       static_cast<std::uint32_t>(s.m >> 4) << 24;
  if (umma_block_scaled(s.kind))
    return desc | static_cast<std::uint32_t>(s.b_scale_id & 3) << 4 |
           static_cast<std::uint32_t>(s.scale) << 23 |
           static_cast<std::uint32_t>(s.a_scale_id & 3) << 29 | (s.k96 ? 1u : 0u) << 31;
  return desc | (s.saturate ? 1u : 0u) << 3 | static_cast<std::uint32_t>(s.d) << 4;
}

// TMEM addresses (PTX ISA, "Tensor Memory Addressing"): lane in bits [16,32), column in [0,16).
TCB_HD constexpr std::uint32_t tmem_address(std::uint32_t base, std::uint32_t lane,
                                            std::uint32_t column) {
  return base + (lane << 16) + column;
}

}  // namespace tcbench::numerics
