# PTX checks of the tensor-core probe (kernels/cuda/tensor_kernel.cuh), included by
# tests/ptx/CMakeLists.txt. Each compiles ONE kernel instantiation (tensor_instance.cu) for
# ROOFPROBE_PTX_ARCH and counts its instructions.
#
# What the entry must hold: the loop over iterations stays rolled (#pragma unroll 1) and its body
# is kTensorSteps (4) x kTensorChains (4) = 16 MMAs of the type's declared shape
# (kernels/common/tensor_shapes.hpp); after the loop, one more MMA per chain: 20 in all, and no
# MMA of any other shape. The iteration count comes in as a parameter (one ld.param.u32: reps),
# the loop compares chain 0 with its start once per iteration, and nothing goes to local memory.
# An architecture without the instruction must compile none of it (the kernel then only writes
# its "not compiled" marker).

set(_tensor_deps
  ${CMAKE_CURRENT_SOURCE_DIR}/tensor_instance.cu
  ${PROJECT_SOURCE_DIR}/kernels/cuda/tensor_kernel.cuh
  ${PROJECT_SOURCE_DIR}/kernels/common/tensor_shapes.hpp
  ${PROJECT_SOURCE_DIR}/kernels/common/hd.hpp)

string(REGEX MATCH "^[0-9]+" _tensor_arch "${ROOFPROBE_PTX_ARCH}")
set(_tensor_fp8_compiler FALSE)
if(CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.4)
  set(_tensor_fp8_compiler TRUE)
endif()

# roofprobe_tensor_mma_check(NAME TYPE MIN_ARCH OPCODE_REGEX [REQUIRES_FP8])
function(roofprobe_tensor_mma_check name type min_arch opcode)
  if(_tensor_arch LESS min_arch OR ("${ARGN}" STREQUAL "REQUIRES_FP8" AND NOT _tensor_fp8_compiler))
    roofprobe_ptx_test(${name} tensor_instance.cu
      DEFINES -DRP_PTX_TYPE=${type} -DRP_PTX_WMMA=0
      DEPENDS ${_tensor_deps}
      EXPECT [[w?mma\..*]] eq 0  [[st\.global\.u32]] eq 1)
  else()
    roofprobe_ptx_test(${name} tensor_instance.cu
      DEFINES -DRP_PTX_TYPE=${type} -DRP_PTX_WMMA=0
      DEPENDS ${_tensor_deps}
      EXPECT "${opcode}" eq 20  [[w?mma\..*]] eq 20
             [[ld\.param\.u32]] eq 1  [[(ld|st)\.local\..*]] eq 0  [[setp\.eq\..*]] eq 1)
  endif()
  set(ROOFPROBE_PTX_FILES ${ROOFPROBE_PTX_FILES} PARENT_SCOPE)
endfunction()

roofprobe_tensor_mma_check(tensor_mma_fp16_fp32 Fp16Fp32 80
  [[mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32]])
roofprobe_tensor_mma_check(tensor_mma_fp16_fp16 Fp16Fp16 80
  [[mma\.sync\.aligned\.m16n8k16\.row\.col\.f16\.f16\.f16\.f16]])
roofprobe_tensor_mma_check(tensor_mma_bf16_fp32 Bf16Fp32 80
  [[mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.bf16\.bf16\.f32]])
roofprobe_tensor_mma_check(tensor_mma_tf32_fp32 Tf32Fp32 80
  [[mma\.sync\.aligned\.m16n8k8\.row\.col\.f32\.tf32\.tf32\.f32]])
roofprobe_tensor_mma_check(tensor_mma_int8_int32 Int8Int32 80
  [[mma\.sync\.aligned\.m16n8k32\.row\.col\.s32\.s8\.s8\.s32]])
roofprobe_tensor_mma_check(tensor_mma_fp64_fp64 Fp64Fp64 80
  [[mma\.sync\.aligned\.m8n8k4\.row\.col\.f64\.f64\.f64\.f64]])
roofprobe_tensor_mma_check(tensor_mma_fp8_fp32 Fp8Fp32 89
  [[mma\.sync\.aligned\.m16n8k32\.row\.col\.f32\.e4m3\.e4m3\.f32]] REQUIRES_FP8)

# WMMA: one PTX wmma.mma per call (the unit the probe counts), 20 per entry as above (nvcc may
# load `reps` twice here, hence ge 1).
if(NOT _tensor_arch LESS 70)
  roofprobe_ptx_test(tensor_wmma_fp16_fp32 tensor_instance.cu
    DEFINES -DRP_PTX_TYPE=Fp16Fp32 -DRP_PTX_WMMA=1
    DEPENDS ${_tensor_deps}
    EXPECT [[wmma\.mma\.sync\.aligned\.row\.row\.m16n16k16\.f32\.f32]] eq 20
           [[w?mma\.(sync|mma).*]] eq 20  [[ld\.param\.u32]] ge 1  [[(ld|st)\.local\..*]] eq 0)
endif()
if(NOT _tensor_arch LESS 80)
  roofprobe_ptx_test(tensor_wmma_fp64_fp64 tensor_instance.cu
    DEFINES -DRP_PTX_TYPE=Fp64Fp64 -DRP_PTX_WMMA=1
    DEPENDS ${_tensor_deps}
    EXPECT [[wmma\.mma\.sync\.aligned\.row\.row\.m8n8k4\.f64\.f64\.f64\.f64\.rn]] eq 20
           [[ld\.param\.u32]] ge 1  [[(ld|st)\.local\..*]] eq 0)
endif()

# The check must fail on a wrong count: one MMA fewer than the fp16.fp32 kernel holds.
if(NOT _tensor_arch LESS 80)
  add_test(NAME ptx.tensor_checker_rejects_19_mmas
           COMMAND roofprobe_ptx_check ${CMAKE_CURRENT_BINARY_DIR}/tensor_mma_fp16_fp32.ptx
                   --expect [[mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32]] eq 19)
  set_tests_properties(ptx.tensor_checker_rejects_19_mmas PROPERTIES LABELS ptx WILL_FAIL TRUE)
endif()
