# PTX checks of the CUDA shared-memory probe (kernels/cuda/shared/kernel.cuh), included by
# tests/ptx/CMakeLists.txt. The step loop stays rolled (#pragma unroll 1) and holds
# kSharedSlots (8) chains x kSharedStepsPerIteration (2) = 16 scalar 32-bit shared loads: the
# declared payload, each one warp instruction. Nothing else loads: no vector or volatile shared
# loads, no global loads (the chase never leaves shared memory). The only stores are the table
# fill (one st.shared in its loop) and the per-thread checksum.
set(_shared_deps
  ${CMAKE_CURRENT_LIST_DIR}/ptx_instance.cu
  ${PROJECT_SOURCE_DIR}/kernels/cuda/shared/kernel.cuh
  ${PROJECT_SOURCE_DIR}/kernels/cuda/shared/model.hpp
  ${PROJECT_SOURCE_DIR}/kernels/common/hd.hpp)

roofprobe_ptx_test(shared_chase ptx_instance.cu
  DEPENDS ${_shared_deps}
  EXPECT [[ld\.shared\.u32]] eq 16  [[ld\.(volatile\.)?shared\.v[24].*]] eq 0
         [[ld\.volatile\..*]] eq 0  [[ld\.(global|local)(\..*)?]] eq 0  [[ld\.param\..*]] ge 1
         [[st\.shared\.u32]] eq 1  [[st\.global\.u32]] eq 1
  SASS_EXPECT [[LDS(\.U)?(\.32)?]] eq 16  [[LDS\..*(64|128)]] eq 0)

# A wrong payload count must fail (guards the check above against a pattern that always passes).
add_test(NAME ptx.shared_chase_rejects_wrong_count
         COMMAND roofprobe_ptx_check ${CMAKE_CURRENT_BINARY_DIR}/shared_chase.ptx
                 --expect [[ld\.shared\.u32]] eq 15)
set_tests_properties(ptx.shared_chase_rejects_wrong_count PROPERTIES LABELS ptx WILL_FAIL TRUE)
