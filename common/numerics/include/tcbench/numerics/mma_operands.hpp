// How a tensor instruction's operand elements are laid out in memory and registers, for the
// tensor-peak kernels' known inputs (small integers, mma_fragments.hpp): the element's code in
// its format, its sign bit, one 16-byte row of a shared-memory core matrix filled with one
// value, and the byte mma.sync's kind::f8f6f4 reads an FP6/FP4 element from.
//
// Sources:
//   PTX ISA, "Packing formats of FP6/FP4 in shared memory" for tcgen05.mma .kind::f8f6f4
//   (anchor tcgen05-packing-formats-mxf8f6f4-smem) and NVIDIA's "CUTLASS Tutorial: Sub-byte GEMM
//   on NVIDIA Blackwell GPUs" (2025): in shared memory "16 consecutive 4-bit or 6-bit elements
//   are packed contiguously and then padded to 16-byte boundaries" (TMA's .b4x16_p64 and
//   .b6x16_p32: 8 and 4 bytes of padding), so every element takes one byte of footprint and a
//   32-element K slice is 32 bytes. .kind::mxf4 and .kind::mxf4nvf4 read FP4 fully packed, two
//   elements per byte (K = 64 in 32 bytes).
//   mma.sync .kind::f8f6f4 (sm_120) takes each element in an 8-bit container: E4M3/E5M2 whole,
//   E2M3/E3M2 in bits [0,6), E2M1 in bits [2,6) ("MMA F8F6F4 expects the four-bit data to be in
//   the middle of the eight-bit container", CUTLASS's SM120 block-scaled GEMM example, FP4Shift);
//   .kind::mxf4nvf4 packs eight E2M1 per 32-bit register, element i in bits [4i, 4i+4).
#pragma once

#include "tcbench/numerics/mma_descriptors.hpp"
#include "tcbench/numerics/narrow_formats.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <array>
#include <cstdint>
#include <cstring>

namespace tcbench::numerics {

// Bits of one element of `in` (tf32 is stored as the 32 bits of an FP32).
constexpr int mma_input_bits(MmaInput in) {
  switch (in) {
    case MmaInput::f16:
    case MmaInput::bf16:
      return 16;
    case MmaInput::tf32:
      return 32;
    case MmaInput::e2m3:
    case MmaInput::e3m2:
      return 6;
    case MmaInput::e2m1:
      return 4;
    default:  // e4m3, e5m2, s8, u8
      return 8;
  }
}

// The code of the small integer `value` (|value| <= 1 for the narrow formats) in `in`, in the
// low mma_input_bits(in) bits.
inline std::uint32_t mma_input_code(MmaInput in, int value) {
  const auto v = static_cast<float>(value);
  switch (in) {
    case MmaInput::f16:
      return static_cast<__half_raw>(__half(v)).x;
    case MmaInput::bf16:
      return static_cast<__nv_bfloat16_raw>(__nv_bfloat16(v)).x;
    case MmaInput::tf32: {
      std::uint32_t bits = 0;
      std::memcpy(&bits, &v, sizeof(bits));
      return bits;
    }
    case MmaInput::e4m3:
      return encode(v, ElementFormat::e4m3);
    case MmaInput::e5m2:
      return encode(v, ElementFormat::e5m2);
    case MmaInput::e2m3:
      return encode(v, ElementFormat::e2m3);
    case MmaInput::e3m2:
      return encode(v, ElementFormat::e3m2);
    case MmaInput::e2m1:
      return encode(v, ElementFormat::e2m1);
    case MmaInput::s8:
    case MmaInput::u8:
      return static_cast<std::uint8_t>(static_cast<std::int8_t>(value));
  }
  return 0;
}

// The code of -x for the code of x: its sign bit (the top bit of the element) flipped. Integer
// inputs have none: 0.
constexpr std::uint32_t mma_sign_bit(MmaInput in) {
  if (in == MmaInput::s8 || in == MmaInput::u8) return 0;
  return 1u << (mma_input_bits(in) - 1);
}

// How the elements of a shared-memory operand are stored: whole bytes (f16, bf16, tf32, FP8,
// INT8), FP6/FP4 16 to a 16-byte unit with padding (.kind::f8f6f4, .kind::mxf8f6f4), or FP4 two
// to a byte (.kind::mxf4nvf4).
enum class SmemPacking : std::uint8_t { bytes, padded16, packed4 };

// One 16-byte row of a core matrix whose every element holds `code`. Bit streams are filled from
// the least significant bit of byte 0; padding is zero.
inline std::array<std::uint8_t, 16> smem_row(MmaInput in, std::uint32_t code, SmemPacking packing) {
  std::array<std::uint8_t, 16> row{};
  const int bits = mma_input_bits(in);
  if (packing == SmemPacking::bytes) {
    const int bytes = bits / 8;
    for (int i = 0; i < 16; ++i)
      row[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(code >> (8 * (i % bytes)));
    return row;
  }
  const int elements = packing == SmemPacking::packed4 ? 32 : 16;
  const std::uint32_t mask = (1u << bits) - 1;
  for (int e = 0; e < elements; ++e)
    for (int b = 0; b < bits; ++b) {
      const int bit = e * bits + b;
      if ((code & mask) >> b & 1u)
        row[static_cast<std::size_t>(bit / 8)] |= static_cast<std::uint8_t>(1u << (bit % 8));
    }
  return row;
}

// The byte mma.sync .kind::f8f6f4 reads one element from (see the sources above).
constexpr std::uint8_t mma_sync_container_byte(MmaInput in, std::uint32_t code) {
  if (in == MmaInput::e2m1) return static_cast<std::uint8_t>((code & 0xFu) << 2);
  if (in == MmaInput::e2m3 || in == MmaInput::e3m2) return static_cast<std::uint8_t>(code & 0x3Fu);
  return static_cast<std::uint8_t>(code);
}

}  // namespace tcbench::numerics
