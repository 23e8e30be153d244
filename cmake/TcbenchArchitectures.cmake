# Chooses CMAKE_CUDA_ARCHITECTURES before project() so that every target gets the same list.
#   TCBENCH_CUDA_ARCHS=all     every compute capability CUDA 13 targets, portable code only
#                              (docs/architecture.md): SASS for 75;80;86;89;90;100;110;120 plus PTX for 120
# Portable ("-real" without "a") cubins run on every later minor version of their major
# (sm_86 on 8.7, sm_100 on 10.3, sm_120 on 12.1); an "a" cubin runs only on exactly its compute
# capability, so arch-specific code (wgmma: sm_90a) is built only for the kernel files that need
# it (kernels/*_sm90a.cu, their own target), never for the whole build.
#   TCBENCH_CUDA_ARCHS=auto    "native" when a GPU is visible, else TCBENCH_CUDA_ARCHS_FALLBACK
#   anything else             used as given (e.g. "90a" or "80;90a")
# An explicit -DCMAKE_CUDA_ARCHITECTURES always wins.
set(TCBENCH_ALL_CUDA_ARCHS "75-real;80-real;86-real;89-real;90-real;100-real;110-real;120-real;120-virtual"
    CACHE INTERNAL "every architecture tcbench builds for; PTX for the newest so later GPUs can JIT")

function(tcbench_select_cuda_architectures)
  if(DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT CMAKE_CUDA_ARCHITECTURES STREQUAL "")
    return()
  endif()
  set(mode "${TCBENCH_CUDA_ARCHS}")
  if(mode STREQUAL "")
    set(mode auto)
  endif()
  if(mode STREQUAL "auto")
    set(gpu_visible FALSE)
    find_program(TCBENCH_NVIDIA_SMI nvidia-smi)
    if(TCBENCH_NVIDIA_SMI)
      execute_process(COMMAND ${TCBENCH_NVIDIA_SMI} -L RESULT_VARIABLE rc OUTPUT_VARIABLE out
                      ERROR_QUIET TIMEOUT 20)
      if(rc EQUAL 0 AND out MATCHES "GPU [0-9]+:")
        set(gpu_visible TRUE)
      endif()
    endif()
    if(gpu_visible)
      set(mode native)
    elseif(TCBENCH_CUDA_ARCHS_FALLBACK)
      set(mode "${TCBENCH_CUDA_ARCHS_FALLBACK}")
    else()
      set(mode all)
    endif()
  endif()
  if(mode STREQUAL "all")
    set(mode "${TCBENCH_ALL_CUDA_ARCHS}")
  endif()
  set(CMAKE_CUDA_ARCHITECTURES "${mode}" CACHE STRING "CUDA architectures (set by TCBENCH_CUDA_ARCHS)" FORCE)
endfunction()
