// Element types, at compile time and at run time: the one type vocabulary of every GEMM.
//
// StorageOf<cudaDataType_t> is the one map from a cuBLASLt data type to its storage type;
// GemmTypes<P> reads precision P's row of the precision table through it (so a new precision
// needs no new specialization); CudaDataType<T> maps a storage type back; visit_data_type() does
// the same at run time, so code that receives a spec at run time (the GEMM benchmark helper, the
// reference) can call typed templates.
#pragma once

#include "tcbench/error.hpp"
#include "tcbench/numerics/element.hpp"
#include "tcbench/precision.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>
#include <library_types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace tcbench {

// A storage type holds its element table row's bits (numerics/element.hpp): one element in
// sizeof(T) bytes, or, for a sub-byte format, one byte per storage unit (an FP6 element kept one
// to a byte, a pair of FP4 elements).
constexpr bool storage_holds_row(cudaDataType_t v, std::size_t bytes) {
  const auto e = numerics::find_element(v);
  if (!e) return false;
  const auto bits = static_cast<std::size_t>(numerics::element_info(*e).bits);
  return bits % 8 == 0 ? 8 * bytes == bits : bytes == 1;
}

// The one compile-time type map, both ways: StorageOf<cudaDataType_t>::type is the storage
// type of a cuBLASLt data type, CudaDataType<T>::value the data type of a storage type.
template <cudaDataType_t V>
struct StorageOf {
  static_assert(V != V, "StorageOf: tcbench has no storage type for this cudaDataType_t");
};
template <typename T>
struct CudaDataType {
  static_assert(!std::is_same_v<T, T>, "CudaDataType: no cudaDataType_t for this element type");
};
#define TCB_STORAGE_TYPE_(V, T)                                                         \
  static_assert(storage_holds_row(V, sizeof(T)), #T " does not hold a " #V " element"); \
  template <>                                                                           \
  struct StorageOf<V> {                                                                 \
    using type = T;                                                                     \
  };                                                                                    \
  template <>                                                                           \
  struct CudaDataType<T> {                                                              \
    static constexpr cudaDataType_t value = V;                                          \
  };
TCB_STORAGE_TYPE_(CUDA_R_64F, double)
TCB_STORAGE_TYPE_(CUDA_R_32F, float)
TCB_STORAGE_TYPE_(CUDA_R_16F, __half)
TCB_STORAGE_TYPE_(CUDA_R_16BF, __nv_bfloat16)
TCB_STORAGE_TYPE_(CUDA_R_8I, std::int8_t)
TCB_STORAGE_TYPE_(CUDA_R_32I, std::int32_t)
TCB_STORAGE_TYPE_(CUDA_R_8F_E4M3, __nv_fp8_e4m3)
TCB_STORAGE_TYPE_(CUDA_R_8F_E5M2, __nv_fp8_e5m2)
// Narrow block-scaled types: cuBLASLt packs FP4 two to a byte, so its storage unit is a pair
// (__nv_fp4x2_e2m1, element 2i in the low nibble); FP6 has no cuBLASLt GEMM and is kept one to a
// byte. Neither is in visit_data_type(): their GEMMs fill and verify through the case's own
// quantization and dequantized reference (GemmCase::prepare, GemmCase::reference).
TCB_STORAGE_TYPE_(CUDA_R_4F_E2M1, __nv_fp4x2_e2m1)
TCB_STORAGE_TYPE_(CUDA_R_6F_E2M3, __nv_fp6_e2m3)
#undef TCB_STORAGE_TYPE_
template <cudaDataType_t T>
using storage_t = typename StorageOf<T>::type;

// The storage types of A, B, C and D of precision P's row in the precision table.
template <Precision P>
struct GemmTypes {
  using A = storage_t<info(P).a>;
  using B = storage_t<info(P).b>;
  using C = storage_t<info(P).c>;
  using D = storage_t<info(P).d>;
};

template <typename T>
inline constexpr cudaDataType_t cuda_data_type_v = CudaDataType<T>::value;

template <typename T>
struct TypeTag {
  using type = T;
};

// Calls f(TypeTag<T>{}) with the storage type of `t`; throws InvalidArgument for a type tcbench
// has no storage type for.
template <typename F>
decltype(auto) visit_data_type(cudaDataType_t t, F&& f) {
  switch (t) {
    case CUDA_R_64F:
      return f(TypeTag<storage_t<CUDA_R_64F>>{});
    case CUDA_R_32F:
      return f(TypeTag<storage_t<CUDA_R_32F>>{});
    case CUDA_R_16F:
      return f(TypeTag<storage_t<CUDA_R_16F>>{});
    case CUDA_R_16BF:
      return f(TypeTag<storage_t<CUDA_R_16BF>>{});
    case CUDA_R_8I:
      return f(TypeTag<storage_t<CUDA_R_8I>>{});
    case CUDA_R_32I:
      return f(TypeTag<storage_t<CUDA_R_32I>>{});
    case CUDA_R_8F_E4M3:
      return f(TypeTag<storage_t<CUDA_R_8F_E4M3>>{});
    case CUDA_R_8F_E5M2:
      return f(TypeTag<storage_t<CUDA_R_8F_E5M2>>{});
    default:
      throw InvalidArgument("no storage type for cudaDataType_t " +
                            std::to_string(static_cast<int>(t)));
  }
}

}  // namespace tcbench
