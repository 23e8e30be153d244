// CUPTI's parameter structs: zeroed, with structSize set (CUPTI reads it to know which fields
// the caller's header version has).
#pragma once

#include <cstddef>

namespace tcbench::profiling::detail {

template <typename Params>
Params cupti_params(std::size_t struct_size) {
  Params p{};
  p.structSize = struct_size;
  return p;
}

}  // namespace tcbench::profiling::detail
