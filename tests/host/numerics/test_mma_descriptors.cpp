// The descriptors of wgmma and tcgen05.mma and the operand packings, bit for bit.
//
// Two kinds of check. Golden values worked out by hand from the documented bit fields (PTX ISA,
// "Matrix Descriptor Format" for wgmma, "Shared Memory Descriptor" and "Instruction descriptor"
// for tcgen05), each with its arithmetic in a comment. And a field-by-field comparison with the
// layouts CUTLASS documents (cute/arch/mma_sm90_desc.hpp GmmaDescriptor; cute/arch/
// mma_sm100_desc.hpp UMMA::SmemDescriptor, UMMA::InstrDescriptor, InstrDescriptorBlockScaled):
// the tables below transcribe their [lo, lo + width) ranges, every field set to a value lands
// in its range and nowhere else, and no descriptor has a bit outside the documented fields.
#include "tcbench/numerics/mma_descriptors.hpp"
#include "tcbench/numerics/mma_operands.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace tcbench::numerics {
namespace {

struct Field {
  std::string_view name;
  int lo, width;
};

constexpr std::uint64_t mask(const Field& f) {
  return ((std::uint64_t{1} << f.width) - 1) << f.lo;
}
constexpr std::uint64_t get(std::uint64_t desc, const Field& f) {
  return (desc & mask(f)) >> f.lo;
}

// CUTLASS cute/arch/mma_sm90_desc.hpp, GmmaDescriptor's bit fields.
constexpr std::array<Field, 5> kGmma{{{"start_address_", 0, 14},
                                      {"leading_byte_offset_", 16, 14},
                                      {"stride_byte_offset_", 32, 14},
                                      {"base_offset_", 49, 3},
                                      {"layout_type_", 62, 2}}};
// CUTLASS cute/arch/mma_sm100_desc.hpp, UMMA::SmemDescriptor's bit fields.
constexpr std::array<Field, 7> kUmmaSmem{{{"start_address_", 0, 14},
                                          {"leading_byte_offset_", 16, 14},
                                          {"stride_byte_offset_", 32, 14},
                                          {"version_", 46, 2},
                                          {"base_offset_", 49, 3},
                                          {"lbo_mode_", 52, 1},
                                          {"layout_type_", 61, 3}}};
// UMMA::InstrDescriptor (dense kinds).
constexpr std::array<Field, 13> kUmmaInstr{{{"sparse_id2_", 0, 2},
                                            {"sparse_flag_", 2, 1},
                                            {"saturate_", 3, 1},
                                            {"c_format_", 4, 2},
                                            {"a_format_", 7, 3},
                                            {"b_format_", 10, 3},
                                            {"a_negate_", 13, 1},
                                            {"b_negate_", 14, 1},
                                            {"a_major_", 15, 1},
                                            {"b_major_", 16, 1},
                                            {"n_dim_", 17, 6},
                                            {"m_dim_", 24, 5},
                                            {"max_shift_", 30, 2}}};
// UMMA::InstrDescriptorBlockScaled.
constexpr std::array<Field, 14> kUmmaBlockScaled{{{"sparse_id2_", 0, 2},
                                                  {"sparse_flag_", 2, 1},
                                                  {"b_sf_id_", 4, 2},
                                                  {"a_format_", 7, 3},
                                                  {"b_format_", 10, 3},
                                                  {"a_negate_", 13, 1},
                                                  {"b_negate_", 14, 1},
                                                  {"a_major_", 15, 1},
                                                  {"b_major_", 16, 1},
                                                  {"n_dim_", 17, 6},
                                                  {"scale_format_", 23, 1},
                                                  {"m_dim_", 24, 5},
                                                  {"a_sf_id_", 29, 2},
                                                  {"k_size_", 31, 1}}};

template <std::size_t N>
const Field& field(const std::array<Field, N>& table, std::string_view name) {
  for (const Field& f : table)
    if (f.name == name) return f;
  ADD_FAILURE() << "no field " << name;
  return table[0];
}

template <std::size_t N>
std::uint64_t documented_bits(const std::array<Field, N>& table) {
  std::uint64_t all = 0;
  for (const Field& f : table) all |= mask(f);
  return all;
}

// ---- wgmma ---------------------------------------------------------------------------------

TEST(WgmmaDescriptor, GoldenOfThePeakKernelsTiles) {
  // A tile at shared address 0x400, K-major without swizzle: 0x400 >> 4 = 0x40 in [0,14);
  // leading offset 128 >> 4 = 8 in [16,30): 0x8'0000; stride offset 256 >> 4 = 0x10 in
  // [32,46): 0x10'0000'0000.
  EXPECT_EQ(wgmma_smem_descriptor(0x400, 128, 256), 0x0000'0010'0008'0040ull);
  // The largest address the 14-bit field holds, 0x3FFF0: 0x3FFF.
  EXPECT_EQ(wgmma_smem_descriptor(0x3FFF0, 0, 0), 0x3FFFull);
  // 128-byte swizzle (1 in [62,64)) with base offset 5 ([49,52)): 0x4000'0000'0000'0000 |
  // 0x000A'0000'0000'0000.
  EXPECT_EQ(wgmma_smem_descriptor(0, 0, 0, WgmmaSwizzle::b128, 5), 0x400A'0000'0000'0000ull);
  // The fields are exact in the descriptor's range: 14 bits of 16-byte units.
  EXPECT_EQ(wgmma_smem_descriptor(0x40000, 0, 0), 0u);  // bit 18 is outside the field
}

TEST(WgmmaDescriptor, EveryFieldLandsWhereGmmaDescriptorHasIt) {
  const std::uint64_t d = wgmma_smem_descriptor(0x12340, 0x2A0, 0x3F0, WgmmaSwizzle::b32, 3);
  EXPECT_EQ(get(d, field(kGmma, "start_address_")), 0x1234u);
  EXPECT_EQ(get(d, field(kGmma, "leading_byte_offset_")), 0x2Au);
  EXPECT_EQ(get(d, field(kGmma, "stride_byte_offset_")), 0x3Fu);
  EXPECT_EQ(get(d, field(kGmma, "base_offset_")), 3u);
  EXPECT_EQ(get(d, field(kGmma, "layout_type_")), 3u);  // GMMA::LayoutType::B32
  // Every field at its maximum: nothing outside the documented fields.
  const std::uint64_t full = wgmma_smem_descriptor(0x3FFFF, 0x3FFFF, 0x3FFFF, WgmmaSwizzle::b32, 7);
  EXPECT_EQ(full, documented_bits(kGmma));
  EXPECT_EQ(static_cast<int>(WgmmaSwizzle::b128), 1);  // GMMA::LayoutType::B128
  EXPECT_EQ(static_cast<int>(WgmmaSwizzle::b64), 2);
}

// ---- tcgen05 shared-memory descriptor --------------------------------------------------------

TEST(UmmaSmemDescriptor, GoldenOfThePeakKernelsTiles) {
  // As wgmma's, plus the SM100 version 1 in bits [46,48): 0x4000'0000'0000.
  EXPECT_EQ(umma_smem_descriptor(0x400, 128, 256), 0x0000'4010'0008'0040ull);
  // No address: only the version bit.
  EXPECT_EQ(umma_smem_descriptor(0, 0, 0), 0x0000'4000'0000'0000ull);
  // 32-byte swizzle is 6 in [61,64): 0xC000'0000'0000'0000; absolute leading mode bit 52.
  EXPECT_EQ(umma_smem_descriptor(0, 0, 0, UmmaSwizzle::b32, 0, true), 0xC010'4000'0000'0000ull);
  // 128-byte swizzle is 2: 0x4000'0000'0000'0000 (where wgmma writes 1 into bit 62).
  EXPECT_EQ(umma_smem_descriptor(0, 0, 0, UmmaSwizzle::b128) >> 61, 2u);
}

TEST(UmmaSmemDescriptor, EveryFieldLandsWhereSmemDescriptorHasIt) {
  const std::uint64_t d = umma_smem_descriptor(0x1A2B0, 0x80, 0x100, UmmaSwizzle::b64, 6, true);
  EXPECT_EQ(get(d, field(kUmmaSmem, "start_address_")), 0x1A2Bu);
  EXPECT_EQ(get(d, field(kUmmaSmem, "leading_byte_offset_")), 8u);
  EXPECT_EQ(get(d, field(kUmmaSmem, "stride_byte_offset_")), 16u);
  EXPECT_EQ(get(d, field(kUmmaSmem, "version_")), 1u);
  EXPECT_EQ(get(d, field(kUmmaSmem, "base_offset_")), 6u);
  EXPECT_EQ(get(d, field(kUmmaSmem, "lbo_mode_")), 1u);
  EXPECT_EQ(get(d, field(kUmmaSmem, "layout_type_")), 4u);  // SWIZZLE_64B
  const std::uint64_t full =
      umma_smem_descriptor(0x3FFFF, 0x3FFFF, 0x3FFFF, UmmaSwizzle::b32, 7, true);
  // version_ is 2 bits, of which SM100 sets the low one; layout 6 leaves bit 61 clear.
  EXPECT_EQ(full | (std::uint64_t{1} << 47) | (std::uint64_t{1} << 61), documented_bits(kUmmaSmem));
  EXPECT_EQ(static_cast<int>(UmmaSwizzle::b128_base32b), 1);  // SWIZZLE_128B_BASE32B
  EXPECT_EQ(static_cast<int>(UmmaSwizzle::b128), 2);
}

// ---- tcgen05 instruction descriptor ---------------------------------------------------------

UmmaShape shape(UmmaKind kind, MmaInput in, int m = 128, int n = 256) {
  UmmaShape s{kind, in, in, m, n};
  if (kind == UmmaKind::i8) s.d = UmmaDType::s32;
  return s;
}

TEST(UmmaInstrDescriptor, GoldenForEveryKindTheKernelsIssue) {
  // M = 128: 128 >> 4 = 8 in [24,29): 0x0800'0000. N = 256: 256 >> 3 = 32 in [17,23):
  // 0x40'0000. F32 D: 1 in [4,6): 0x10. A type in [7,10) (x 0x80), B type in [10,13) (x 0x400).
  EXPECT_EQ(umma_instr_descriptor(shape(UmmaKind::f16, MmaInput::f16)), 0x0840'0010u);
  EXPECT_EQ(umma_instr_descriptor(shape(UmmaKind::f16, MmaInput::bf16)), 0x0840'0490u);   // 1, 1
  EXPECT_EQ(umma_instr_descriptor(shape(UmmaKind::tf32, MmaInput::tf32)), 0x0840'0910u);  // 2, 2
  EXPECT_EQ(umma_instr_descriptor(shape(UmmaKind::f8f6f4, MmaInput::e4m3)), 0x0840'0010u);
  EXPECT_EQ(umma_instr_descriptor(shape(UmmaKind::f8f6f4, MmaInput::e5m2)), 0x0840'0490u);
  EXPECT_EQ(umma_instr_descriptor(shape(UmmaKind::f8f6f4, MmaInput::e2m3)), 0x0840'0D90u);  // 3
  EXPECT_EQ(umma_instr_descriptor(shape(UmmaKind::f8f6f4, MmaInput::e3m2)), 0x0840'1210u);  // 4
  EXPECT_EQ(umma_instr_descriptor(shape(UmmaKind::f8f6f4, MmaInput::e2m1)), 0x0840'1690u);  // 5
  // S8 is 1 in both type fields, S32 D is 2 in [4,6): 0x20.
  EXPECT_EQ(umma_instr_descriptor(shape(UmmaKind::i8, MmaInput::s8)), 0x0840'04A0u);
  // Two CTAs: M = 256, 16 in [24,29): 0x1000'0000.
  EXPECT_EQ(umma_instr_descriptor(shape(UmmaKind::f16, MmaInput::f16, 256)), 0x1040'0010u);
  // Block-scaled: no D field; the scale type in bit 23 (UE8M0 1: 0x80'0000).
  UmmaShape mx = shape(UmmaKind::mxf8f6f4, MmaInput::e4m3);
  EXPECT_EQ(umma_instr_descriptor(mx), 0x08C0'0000u);
  UmmaShape nvf4 = shape(UmmaKind::mxf4nvf4, MmaInput::e2m1);
  nvf4.scale = UmmaScaleType::ue4m3;  // E2M1 is 1 under mxf4nvf4; UE4M3 scale 0
  EXPECT_EQ(umma_instr_descriptor(nvf4), 0x0840'0480u);
  UmmaShape mxf4 = shape(UmmaKind::mxf4nvf4, MmaInput::e2m1, 256);
  EXPECT_EQ(umma_instr_descriptor(mxf4), 0x10C0'0480u);
  // Negate B is bit 14.
  UmmaShape neg = shape(UmmaKind::f16, MmaInput::f16);
  neg.negate_b = true;
  EXPECT_EQ(umma_instr_descriptor(neg), 0x0840'4010u);
}

TEST(UmmaInstrDescriptor, EveryFieldLandsWhereInstrDescriptorHasIt) {
  UmmaShape s{UmmaKind::f8f6f4, MmaInput::e3m2, MmaInput::e2m1, 64, 136};
  s.d = UmmaDType::f32;
  s.negate_a = s.negate_b = s.a_mn_major = s.b_mn_major = s.saturate = true;
  const std::uint32_t d = umma_instr_descriptor(s);
  EXPECT_EQ(get(d, field(kUmmaInstr, "c_format_")), 1u);
  EXPECT_EQ(get(d, field(kUmmaInstr, "a_format_")), 4u);  // MXF8F6F4Format::E3M2
  EXPECT_EQ(get(d, field(kUmmaInstr, "b_format_")), 5u);  // MXF8F6F4Format::E2M1
  EXPECT_EQ(get(d, field(kUmmaInstr, "saturate_")), 1u);
  EXPECT_EQ(get(d, field(kUmmaInstr, "a_negate_")), 1u);
  EXPECT_EQ(get(d, field(kUmmaInstr, "b_negate_")), 1u);
  EXPECT_EQ(get(d, field(kUmmaInstr, "a_major_")), 1u);
  EXPECT_EQ(get(d, field(kUmmaInstr, "b_major_")), 1u);
  EXPECT_EQ(get(d, field(kUmmaInstr, "n_dim_")), 136u >> 3);
  EXPECT_EQ(get(d, field(kUmmaInstr, "m_dim_")), 64u >> 4);
  EXPECT_EQ(d & ~documented_bits(kUmmaInstr), 0u);
  // The sparse and .ws fields stay 0: the peak kernels are dense and not .ws.
  EXPECT_EQ(get(d, field(kUmmaInstr, "sparse_flag_")), 0u);
  EXPECT_EQ(get(d, field(kUmmaInstr, "max_shift_")), 0u);
}

TEST(UmmaInstrDescriptor, EveryFieldLandsWhereInstrDescriptorBlockScaledHasIt) {
  UmmaShape s{UmmaKind::mxf8f6f4, MmaInput::e2m3, MmaInput::e5m2, 256, 248};
  s.scale = UmmaScaleType::ue8m0;
  s.a_scale_id = 2;
  s.b_scale_id = 3;
  s.negate_a = s.negate_b = s.a_mn_major = s.b_mn_major = true;
  s.saturate = true;     // no such field here: ignored
  s.d = UmmaDType::s32;  // nor this one
  const std::uint32_t d = umma_instr_descriptor(s);
  EXPECT_EQ(get(d, field(kUmmaBlockScaled, "b_sf_id_")), 3u);
  EXPECT_EQ(get(d, field(kUmmaBlockScaled, "a_sf_id_")), 2u);
  EXPECT_EQ(get(d, field(kUmmaBlockScaled, "a_format_")), 3u);  // E2M3
  EXPECT_EQ(get(d, field(kUmmaBlockScaled, "b_format_")), 1u);  // E5M2
  EXPECT_EQ(get(d, field(kUmmaBlockScaled, "scale_format_")), 1u);
  EXPECT_EQ(get(d, field(kUmmaBlockScaled, "n_dim_")), 31u);
  EXPECT_EQ(get(d, field(kUmmaBlockScaled, "m_dim_")), 16u);
  EXPECT_EQ(get(d, field(kUmmaBlockScaled, "a_negate_")), 1u);
  EXPECT_EQ(get(d, field(kUmmaBlockScaled, "b_major_")), 1u);
  EXPECT_EQ(get(d, field(kUmmaBlockScaled, "k_size_")), 0u);
  EXPECT_EQ(d & ~documented_bits(kUmmaBlockScaled), 0u);
  s.kind = UmmaKind::mxf4nvf4;
  s.a = s.b = MmaInput::e2m1;
  s.k96 = true;
  const std::uint32_t k96 = umma_instr_descriptor(s);
  EXPECT_EQ(get(k96, field(kUmmaBlockScaled, "k_size_")), 1u);
  EXPECT_EQ(get(k96, field(kUmmaBlockScaled, "a_format_")), 1u);  // MXF4Format::E2M1
}

TEST(UmmaInstrDescriptor, ATypeItsKindDoesNotTakeOrAShapeOutsideTheFieldsIsZero) {
  EXPECT_EQ(umma_instr_descriptor(shape(UmmaKind::f16, MmaInput::e4m3)), 0u);
  EXPECT_EQ(umma_instr_descriptor(shape(UmmaKind::tf32, MmaInput::f16)), 0u);
  EXPECT_EQ(umma_instr_descriptor(shape(UmmaKind::i8, MmaInput::e4m3)), 0u);
  EXPECT_EQ(umma_instr_descriptor(shape(UmmaKind::mxf4nvf4, MmaInput::e4m3)), 0u);
  EXPECT_EQ(umma_instr_descriptor(shape(UmmaKind::f16, MmaInput::f16, 128, 264)), 0u);
  EXPECT_EQ(umma_instr_descriptor(shape(UmmaKind::f16, MmaInput::f16, 120, 256)), 0u);
}

TEST(KMajorSmem, OffsetsAreTheDescriptorsCoreMatrices) {
  // Goldens from the layout's definition: 128-byte core matrices of 8 rows x 16 bytes, the two
  // of one K slice side by side, the next 8 rows 256 bytes on.
  EXPECT_EQ(kmajor_smem_offset(0, 0), 0u);
  EXPECT_EQ(kmajor_smem_offset(0, 15), 15u);
  EXPECT_EQ(kmajor_smem_offset(1, 0), 16u);
  EXPECT_EQ(kmajor_smem_offset(7, 15), 127u);
  EXPECT_EQ(kmajor_smem_offset(0, 16), kKMajorLeadingBytes);
  EXPECT_EQ(kmajor_smem_offset(8, 0), kKMajorStrideBytes);
  EXPECT_EQ(kmajor_smem_offset(13, 20), 256u + 128u + 5 * 16u + 4u);
  // A bijection of a 128-row slice onto its 4 KiB.
  std::vector<int> seen(128 * 32, 0);
  for (std::uint32_t r = 0; r < 128; ++r)
    for (std::uint32_t k = 0; k < 32; ++k) ++seen.at(kmajor_smem_offset(r, k));
  for (int n : seen) EXPECT_EQ(n, 1);
}

TEST(TmemAddress, LaneInTheHighHalfColumnInTheLow) {
  EXPECT_EQ(tmem_address(0x0000'0020u, 96, 256), 0x0060'0120u);
}

// ---- operand packings ----------------------------------------------------------------------

TEST(MmaOperands, CodesOfPlusAndMinusOne) {
  // E4M3 1.0 = 0 0111 000; E5M2 1.0 = 0 01111 00; E2M3 (bias 1) 1.0 = 0 01 000; E3M2 (bias 3)
  // 1.0 = 0 011 00; E2M1 (bias 1) 1.0 = 0 01 0.
  EXPECT_EQ(mma_input_code(MmaInput::e4m3, 1), 0x38u);
  EXPECT_EQ(mma_input_code(MmaInput::e5m2, 1), 0x3Cu);
  EXPECT_EQ(mma_input_code(MmaInput::e2m3, 1), 0x08u);
  EXPECT_EQ(mma_input_code(MmaInput::e3m2, 1), 0x0Cu);
  EXPECT_EQ(mma_input_code(MmaInput::e2m1, 1), 0x2u);
  EXPECT_EQ(mma_input_code(MmaInput::e2m1, -1), 0xAu);
  EXPECT_EQ(mma_input_code(MmaInput::e2m3, -1), 0x28u);
  EXPECT_EQ(mma_input_code(MmaInput::f16, -1), 0xBC00u);
  EXPECT_EQ(mma_input_code(MmaInput::bf16, 1), 0x3F80u);
  EXPECT_EQ(mma_input_code(MmaInput::tf32, 1), 0x3F80'0000u);
  EXPECT_EQ(mma_input_code(MmaInput::s8, -1), 0xFFu);
  for (MmaInput in : {MmaInput::f16, MmaInput::bf16, MmaInput::tf32, MmaInput::e4m3, MmaInput::e5m2,
                      MmaInput::e2m3, MmaInput::e3m2, MmaInput::e2m1})
    EXPECT_EQ(mma_input_code(in, 1) ^ mma_sign_bit(in), mma_input_code(in, -1))
        << static_cast<int>(in);
  EXPECT_EQ(mma_sign_bit(MmaInput::s8), 0u);
}

using Row = std::array<std::uint8_t, 16>;

TEST(MmaOperands, SmemRowsOfEveryPacking) {
  // Whole elements repeat, little-endian: f16 -1.0 = 0xBC00 -> 00 BC x 8.
  Row f16{};
  for (std::size_t i = 0; i < 16; ++i) f16[i] = i % 2 ? 0xBC : 0x00;
  EXPECT_EQ(smem_row(MmaInput::f16, 0xBC00, SmemPacking::bytes), f16);
  // 16 E2M3 of 0x08 packed from bit 0: four elements are the 24 bits 0x208208 -> 08 82 20,
  // four times (12 bytes), then 4 bytes of padding.
  const Row e2m3{0x08, 0x82, 0x20, 0x08, 0x82, 0x20, 0x08, 0x82,
                 0x20, 0x08, 0x82, 0x20, 0,    0,    0,    0};
  EXPECT_EQ(smem_row(MmaInput::e2m3, 0x08, SmemPacking::padded16), e2m3);
  // E3M2 0x0C: 0x30C30C -> 0C C3 30.
  const Row e3m2{0x0C, 0xC3, 0x30, 0x0C, 0xC3, 0x30, 0x0C, 0xC3,
                 0x30, 0x0C, 0xC3, 0x30, 0,    0,    0,    0};
  EXPECT_EQ(smem_row(MmaInput::e3m2, 0x0C, SmemPacking::padded16), e3m2);
  // 16 E2M1 of 0xA in 8 bytes (0xAA), 8 bytes of padding; packed: 32 of them in 16 bytes.
  const Row e2m1_padded{0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(smem_row(MmaInput::e2m1, 0xA, SmemPacking::padded16), e2m1_padded);
  Row e2m1_packed{};
  e2m1_packed.fill(0x22);
  EXPECT_EQ(smem_row(MmaInput::e2m1, 0x2, SmemPacking::packed4), e2m1_packed);
}

TEST(MmaOperands, MmaSyncContainers) {
  // E2M1 in bits [2,6): 0b1010 -> 0b00101000; FP6 in bits [0,6); FP8 whole.
  EXPECT_EQ(mma_sync_container_byte(MmaInput::e2m1, 0xA), 0x28u);
  EXPECT_EQ(mma_sync_container_byte(MmaInput::e3m2, 0x2C), 0x2Cu);
  EXPECT_EQ(mma_sync_container_byte(MmaInput::e5m2, 0xBC), 0xBCu);
}

}  // namespace
}  // namespace tcbench::numerics
