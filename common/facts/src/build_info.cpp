#include "tcbench/build_info.hpp"

// Defined by common/CMakeLists.txt for this target; a build without them is a CMake bug.
#if !defined(TCBENCH_VERSION) || !defined(TCBENCH_GIT_SHA)
#error "TCBENCH_VERSION and TCBENCH_GIT_SHA must be defined by the build"
#endif

namespace tcbench {

std::string_view tcbench_version() {
  return TCBENCH_VERSION;
}
std::string_view git_sha() {
  return TCBENCH_GIT_SHA;
}

}  // namespace tcbench
