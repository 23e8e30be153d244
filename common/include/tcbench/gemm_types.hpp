// Element types, at compile time and at run time: the one type vocabulary of every GEMM.
//
// GemmTypes<P> names the storage types of A, B, C and D for the configuration tcbench measures
// for precision P (GemmSpec::for_precision); CudaDataType<T> maps a storage type to cuBLASLt's
// cudaDataType_t; visit_data_type() goes the other way, so code that receives a spec at run time
// (the GEMM benchmark helper, the reference) can call typed templates.
#pragma once

#include "tcbench/error.hpp"
#include "tcbench/precision.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <library_types.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace tcbench {

template <Precision P>
struct GemmTypes {
  // Every precision has a specialization below; a new enumerator without one fails here.
  static_assert(P != P, "GemmTypes: no element types are mapped for this Precision");
};
template <typename In, typename Out = In>
struct GemmTypesOf {
  using A = In;
  using B = In;
  using C = Out;
  using D = Out;
};
template <>
struct GemmTypes<Precision::fp64> : GemmTypesOf<double> {};
template <>
struct GemmTypes<Precision::fp32> : GemmTypesOf<float> {};
template <>  // TF32 is a compute mode: the data stay FP32
struct GemmTypes<Precision::tf32> : GemmTypesOf<float> {};
template <>
struct GemmTypes<Precision::fp16> : GemmTypesOf<__half> {};
template <>
struct GemmTypes<Precision::fp16_acc16> : GemmTypesOf<__half> {};
template <>
struct GemmTypes<Precision::bf16> : GemmTypesOf<__nv_bfloat16> {};
template <>
struct GemmTypes<Precision::int8> : GemmTypesOf<std::int8_t, std::int32_t> {};
template <>
struct GemmTypes<Precision::fp8> : GemmTypesOf<__nv_fp8_e4m3, __nv_bfloat16> {};

template <typename T>
struct CudaDataType {
  static_assert(!std::is_same_v<T, T>, "CudaDataType: no cudaDataType_t for this element type");
};
#define TCB_CUDA_DATA_TYPE_(T, V)              \
  template <>                                  \
  struct CudaDataType<T> {                     \
    static constexpr cudaDataType_t value = V; \
  };
TCB_CUDA_DATA_TYPE_(double, CUDA_R_64F)
TCB_CUDA_DATA_TYPE_(float, CUDA_R_32F)
TCB_CUDA_DATA_TYPE_(__half, CUDA_R_16F)
TCB_CUDA_DATA_TYPE_(__nv_bfloat16, CUDA_R_16BF)
TCB_CUDA_DATA_TYPE_(std::int8_t, CUDA_R_8I)
TCB_CUDA_DATA_TYPE_(std::int32_t, CUDA_R_32I)
TCB_CUDA_DATA_TYPE_(__nv_fp8_e4m3, CUDA_R_8F_E4M3)
TCB_CUDA_DATA_TYPE_(__nv_fp8_e5m2, CUDA_R_8F_E5M2)
#undef TCB_CUDA_DATA_TYPE_
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
      return f(TypeTag<double>{});
    case CUDA_R_32F:
      return f(TypeTag<float>{});
    case CUDA_R_16F:
      return f(TypeTag<__half>{});
    case CUDA_R_16BF:
      return f(TypeTag<__nv_bfloat16>{});
    case CUDA_R_8I:
      return f(TypeTag<std::int8_t>{});
    case CUDA_R_32I:
      return f(TypeTag<std::int32_t>{});
    case CUDA_R_8F_E4M3:
      return f(TypeTag<__nv_fp8_e4m3>{});
    case CUDA_R_8F_E5M2:
      return f(TypeTag<__nv_fp8_e5m2>{});
    default:
      throw InvalidArgument("no storage type for cudaDataType_t " +
                            std::to_string(static_cast<int>(t)));
  }
}

}  // namespace tcbench
