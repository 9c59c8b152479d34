# The relocatable bundle (docs/RUNNING.md, "Offline compute nodes and the bundle"): one tarball that runs
# on a machine with nothing but glibc, libstdc++/libgcc_s and the NVIDIA driver, wherever it is
# unpacked:
#
#   <name>/bin/       roofprobe, roofprobe-bench, roofprobe_gpu_tests, roofprobe-acceptance,
#                     peers-gpu, peers-cpu, gpu-checks
#   <name>/lib/       every other shared library they load (yaml-cpp, hwloc, libgomp, libudev, ...)
#   <name>/share/roofprobe/reference/   results/reference/*.yaml (the acceptance compares with them)
#   <name>/share/roofprobe/configs/     configs/*.yaml
#   <name>/share/roofprobe/acceptance/  cublas_gemm.cu (built by the acceptance where nvcc is)
#   <name>/share/roofprobe/bench/       peer_tables.py, peers_torch.py, compare_likwid.py (for peers-*),
#                                       ncu_known_work.py (for gpu-checks)
#   <name>/BUNDLE.txt what was built, how, and what the host must provide
#
# Included by the top-level CMakeLists.txt when ROOFPROBE_BUNDLE is ON (the `bundle` preset).
# The libraries in lib/ are found by cmake/BundleRuntimeDeps.cmake at install time with CMake's
# file(GET_RUNTIME_DEPENDENCIES), not from a list kept by hand.

set(ROOFPROBE_BUNDLE_NAME "roofprobe-linux-${CMAKE_SYSTEM_PROCESSOR}")
set(ROOFPROBE_BUNDLE_TARBALL "${PROJECT_BINARY_DIR}/${ROOFPROBE_BUNDLE_NAME}.tar.gz")

# Before the executables are defined. A macro, so the settings land in the caller's scope.
macro(roofprobe_bundle_link_settings)
  # The executables look for their libraries in ../lib next to themselves. Built with the
  # install RPATH already (nothing is rewritten at install time), which in the build tree points
  # at a lib/ that does not exist, so the build tree's binaries fall back to the system's copies.
  set(CMAKE_INSTALL_RPATH "$ORIGIN/../lib")
  set(CMAKE_BUILD_WITH_INSTALL_RPATH ON)
  # DT_RPATH, not DT_RUNPATH: the loader applies an executable's RUNPATH to the executable's own
  # dependencies only, so libhwloc.so.15 (in lib/) would look for its libudev.so.1 on the host
  # alone; an executable's RPATH also serves the libraries it loads. (The bundled libraries
  # themselves have no RPATH of their own, and there is no patchelf here to give them one.)
  add_link_options(LINKER:--disable-new-dtags)
endmacro()

# After every executable it packs.
function(roofprobe_bundle_target)
  set(programs roofprobe roofprobe-bench)
  if(TARGET roofprobe_gpu_tests)
    list(APPEND programs roofprobe_gpu_tests)
  endif()
  foreach(p IN LISTS programs)
    if(NOT TARGET ${p})
      message(FATAL_ERROR "roofprobe bundle: target ${p} is not built in this configuration")
    endif()
  endforeach()

  install(TARGETS ${programs} RUNTIME DESTINATION bin COMPONENT bundle)
  install(PROGRAMS ${PROJECT_SOURCE_DIR}/driver/acceptance/roofprobe-acceptance DESTINATION bin
          COMPONENT bundle)
  install(FILES ${PROJECT_SOURCE_DIR}/driver/acceptance/cublas_gemm.cu DESTINATION share/roofprobe/acceptance
          COMPONENT bundle)
  # The peers side by side (docs/METHODOLOGY.md): the commands in bin/, their Python in share/.
  # bench/gpu-checks: what a borrowed GPU is checked with in one call (docs/RUNNING.md).
  install(PROGRAMS ${PROJECT_SOURCE_DIR}/bench/peers-gpu ${PROJECT_SOURCE_DIR}/bench/peers-cpu
                   ${PROJECT_SOURCE_DIR}/bench/gpu-checks DESTINATION bin
          COMPONENT bundle)
  install(FILES ${PROJECT_SOURCE_DIR}/bench/peer_tables.py ${PROJECT_SOURCE_DIR}/bench/peers_torch.py
                ${PROJECT_SOURCE_DIR}/bench/compare_likwid.py ${PROJECT_SOURCE_DIR}/bench/ncu_known_work.py
          DESTINATION share/roofprobe/bench COMPONENT bundle)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/results/reference/
          DESTINATION share/roofprobe/reference COMPONENT bundle)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION share/roofprobe/configs
          COMPONENT bundle)

  string(TIMESTAMP built UTC)
  set(ROOFPROBE_BUNDLE_CUDA "none (CPU backend only)")
  if(ROOFPROBE_HAVE_CUDA)
    set(ROOFPROBE_BUNDLE_CUDA "CUDA ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}, runtime linked statically")
  endif()
  set(manifest ${PROJECT_BINARY_DIR}/bundle-manifest/BUNDLE.txt)
  file(WRITE ${manifest}
       "roofprobe ${PROJECT_VERSION} (git ${ROOFPROBE_GIT_REVISION}), built ${built}\n"
       "host compiler: ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}\n"
       "CUDA: ${ROOFPROBE_BUNDLE_CUDA}\n"
       "CPU probes compiled for: -march=${ROOFPROBE_CPU_ARCH}\n"
       "MPI: ${ROOFPROBE_HAVE_MPI}\n"
       "run: bin/roofprobe-acceptance --out DIR (GPU acceptance), bin/roofprobe run, bin/roofprobe --help\n")
  install(FILES ${manifest} DESTINATION . COMPONENT bundle)

  # lib/: the shared libraries of the programs, resolved at install time.
  set(names "")
  foreach(p IN LISTS programs)
    list(APPEND names $<TARGET_FILE_NAME:${p}>)
  endforeach()
  install(CODE "set(ROOFPROBE_BUNDLE_PROGRAMS \"${names}\")" COMPONENT bundle)
  install(SCRIPT ${PROJECT_SOURCE_DIR}/cmake/BundleRuntimeDeps.cmake COMPONENT bundle)

  # `cmake --build --preset bundle` (target bundle): stage with `cmake --install` (stripped),
  # then one tarball whose top folder is the bundle's name.
  set(stage ${PROJECT_BINARY_DIR}/bundle-stage)
  add_custom_target(bundle
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${stage}
    COMMAND ${CMAKE_COMMAND} --install ${PROJECT_BINARY_DIR} --component bundle --strip
            --prefix ${stage}/${ROOFPROBE_BUNDLE_NAME}
    COMMAND ${CMAKE_COMMAND} -E chdir ${stage}
            ${CMAKE_COMMAND} -E tar czf ${ROOFPROBE_BUNDLE_TARBALL} ${ROOFPROBE_BUNDLE_NAME}
    COMMAND ${CMAKE_COMMAND} -E echo "bundle: ${ROOFPROBE_BUNDLE_TARBALL}"
    DEPENDS ${programs}
    COMMENT "Packing ${ROOFPROBE_BUNDLE_NAME}.tar.gz"
    VERBATIM)
  set(ROOFPROBE_BUNDLE_PROGRAMS ${programs} PARENT_SCOPE)
endfunction()
