# `cmake --install` / CPack: a relocatable bundle for a GPU box that has a driver and the CUDA
# libraries but no build tools:
#   bin/       the bench_* binaries (RPATH $ORIGIN/../lib)
#   lib/       Google Benchmark's shared library, when the build used a shared one
#   scripts/   the tcbench entry point and the Python tools (run with: scripts/tcbench run)
#   share/doc/tcbench/  README and docs
# CUDA's own libraries (cudart, cuBLASLt) come from the box's CUDA installation.
include(GNUInstallDirs)

# Let the binaries find bundled libraries next to them, wherever the bundle is unpacked.
set(CMAKE_INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
set(CMAKE_INSTALL_RPATH_USE_LINK_PATH TRUE)

function(tcbench_install_runtime_dependencies)
  if(TARGET benchmark::benchmark)
    get_target_property(kind benchmark::benchmark TYPE)
    get_target_property(imported benchmark::benchmark IMPORTED)
    if(kind STREQUAL "SHARED_LIBRARY" AND imported)
      # The real file plus its SONAME link, resolved from whichever configuration was imported.
      foreach(config IMPORTED_LOCATION_RELEASE IMPORTED_LOCATION_NONE IMPORTED_LOCATION
                     IMPORTED_LOCATION_RELWITHDEBINFO)
        get_target_property(location benchmark::benchmark ${config})
        if(location)
          break()
        endif()
      endforeach()
      get_target_property(soname benchmark::benchmark IMPORTED_SONAME_RELEASE)
      if(NOT soname)
        get_target_property(soname benchmark::benchmark IMPORTED_SONAME_NONE)
      endif()
      if(location)
        file(REAL_PATH "${location}" real_location)
        install(FILES "${real_location}" DESTINATION ${CMAKE_INSTALL_LIBDIR})
        get_filename_component(real_name "${real_location}" NAME)
        if(soname AND NOT soname STREQUAL real_name)
          install(CODE "file(CREATE_LINK ${real_name}
                        \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/${soname}\"
                        SYMBOLIC)")
        endif()
      endif()
    endif()
  endif()
endfunction()

install(PROGRAMS scripts/tcbench scripts/gpu_check.sh scripts/gpu_check_torch.py
        DESTINATION scripts)
install(FILES scripts/requirements.txt DESTINATION scripts)
install(DIRECTORY scripts/tcbench_tools DESTINATION scripts
        PATTERN "__pycache__" EXCLUDE PATTERN "*.pyc" EXCLUDE)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_PACKAGE_NAME tcbench)
set(CPACK_PACKAGE_VENDOR "tcbench")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Tensor Core and mixed-precision micro-benchmarks")
set(CPACK_GENERATOR TGZ)
set(CPACK_PACKAGE_FILE_NAME "tcbench-${PROJECT_VERSION}-${CMAKE_SYSTEM_NAME}-${CMAKE_SYSTEM_PROCESSOR}")
include(CPack)
