# ---- system probe: kernels streaming mapped (zero-copy) host memory -------------------------
# Included by tests/ptx/CMakeLists.txt. The grid-stride loop is unrolled 4x with a remainder
# loop, so access counts are lower bounds. mapped_read: every load of the buffer is a 128-bit
# ld.global.cv (refetched from host memory on every pass, never served by a cache), no other
# global load, and one 32-bit store (the block sum). mapped_write: every store is a 128-bit
# write-through st.global.wt, and the kernel loads nothing from global memory. SASS: .cv and .wt
# become system-scope strong accesses (LDG/STG.E.128.STRONG.SYS): never served by a GPU cache.
set(_system_deps
  ${CMAKE_CURRENT_LIST_DIR}/ptx_instance.cu
  ${PROJECT_SOURCE_DIR}/kernels/cuda/system/kernel.cuh
  ${PROJECT_SOURCE_DIR}/kernels/cuda/bandwidth/kernel.cuh
  ${PROJECT_SOURCE_DIR}/kernels/cuda/system/model.hpp
  ${PROJECT_SOURCE_DIR}/kernels/cuda/backend/stream_pattern.hpp
  ${PROJECT_SOURCE_DIR}/kernels/common/hd.hpp)

roofprobe_ptx_test(system_mapped_read ptx_instance.cu
  DEFINES -DRP_PTX_TRANSFER=MappedRead
  DEPENDS ${_system_deps}
  EXPECT [[ld\.global\.cv\.v4\.u32]] ge 4
         [[ld\.global(\.(nc|ca|cg|cs|lu))?\.(v2|v4|u|s|b|f).*]] eq 0
         [[st\.global\.u32]] eq 1  [[st\.global.*v4.*]] eq 0
  SASS_EXPECT [[LDG\.E\.128\.STRONG\.SYS]] ge 4  [[LDG(?!\.E\.128\.STRONG\.SYS$).*]] eq 0)

roofprobe_ptx_test(system_mapped_write ptx_instance.cu
  DEFINES -DRP_PTX_TRANSFER=MappedWrite
  DEPENDS ${_system_deps}
  EXPECT [[st\.global\.wt\.v4\.u32]] ge 4
         [[st\.global(\.(cg|cs|wb))?\.(v2|v4|u|s|b|f).*]] eq 0
         [[ld\.global.*]] eq 0
  SASS_EXPECT [[STG\.E\.128\.STRONG\.SYS]] ge 4  [[STG(?!\.E\.128\.STRONG\.SYS$).*]] eq 0
              [[LDG.*]] eq 0)
