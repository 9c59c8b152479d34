# PTX checks of the CUDA global-stride probe (kernels/cuda/stride/kernel.cuh), included by
# tests/ptx/CMakeLists.txt. The group loop stays rolled (#pragma unroll 1) and holds
# kStrideUnroll (8) scalar ld.global.cg of the declared width (u32 for 4-byte words, u64 for
# 8-byte words): one warp request each, L1 bypassed. No vector loads, no loads of the other width,
# no cached (.ca/.nc/default) global loads; one 64-bit store of the thread's sum. SASS: every
# load is LDG.E[.64].STRONG.GPU (the L2-only form of .cg), nothing else.
set(_stride_deps
  ${CMAKE_CURRENT_LIST_DIR}/ptx_instance.cu
  ${PROJECT_SOURCE_DIR}/kernels/cuda/stride/kernel.cuh
  ${PROJECT_SOURCE_DIR}/kernels/cuda/stride/model.hpp
  ${PROJECT_SOURCE_DIR}/kernels/cuda/backend/stream_pattern.hpp
  ${PROJECT_SOURCE_DIR}/kernels/common/hd.hpp)

# Cases: stride; word bytes; the declared type; the other width (must not appear); the SASS
# load width regex that must match all 8 loads (32-bit loads carry no width suffix).
foreach(_case IN ITEMS "0;4;u32;64;LDG\\.E\\.STRONG\\.GPU" "1;4;u32;64;LDG\\.E\\.STRONG\\.GPU"
                       "8;4;u32;64;LDG\\.E\\.STRONG\\.GPU" "1;8;u64;32;LDG\\.E\\.64\\.STRONG\\.GPU"
                       "32;8;u64;32;LDG\\.E\\.64\\.STRONG\\.GPU")
  list(GET _case 0 _stride)
  list(GET _case 1 _word)
  list(GET _case 2 _type)
  list(GET _case 3 _other)
  list(GET _case 4 _sass_load)
  roofprobe_ptx_test(stride_s${_stride}_w${_word} ptx_instance.cu
    DEFINES -DRP_PTX_STRIDE=${_stride} -DRP_PTX_WORD_BYTES=${_word}
    DEPENDS ${_stride_deps}
    EXPECT "ld\\.global\\.cg\\.${_type}" eq 8
           "ld\\.global(\\.[a-z]+)*\\.v[248]\\..*" eq 0
           "ld\\.global(\\.[a-z]+)*\\.[usbf]${_other}" eq 0
           "ld\\.global(\\.(ca|nc|cs|lu|cv))?\\.[usbf](32|64)" eq 0
           "ld\\.(shared|local)(\\..*)?" eq 0
           "st\\.global\\.u64" eq 1
    SASS_EXPECT "LDG(\\..*)?" eq 8  "${_sass_load}" eq 8)
endforeach()
