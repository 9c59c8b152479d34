# PTX checks of the tensor-core probe (kernels/cuda/tensor/kernel.cuh), included by
# tests/ptx/CMakeLists.txt. Each compiles ONE kernel instantiation (tests/probes/tensor/ptx_instance.cu) for
# ROOFPROBE_PTX_ARCH and counts its instructions.
#
# What the entry must hold: the loop over iterations stays rolled (#pragma unroll 1) and its body
# is kTensorSteps (4) x kTensorChains (4) = 16 MMAs of the type's declared shape
# (kernels/cuda/tensor/model.hpp); after the loop, one more MMA per chain: 20 in all, and no
# MMA of any other shape. The iteration count comes in as a parameter (one ld.param.u32: reps),
# the loop compares chain 0 with its start once per iteration, and nothing goes to local memory.
# An architecture without the instruction must compile none of it (the kernel then only writes
# its "not compiled" marker).

set(_tensor_deps
  ${CMAKE_CURRENT_LIST_DIR}/ptx_instance.cu
  ${PROJECT_SOURCE_DIR}/kernels/cuda/tensor/kernel.cuh
  ${PROJECT_SOURCE_DIR}/kernels/cuda/tensor/model.hpp
  ${PROJECT_SOURCE_DIR}/kernels/common/hd.hpp)

string(REGEX MATCH "^[0-9]+" _tensor_arch "${ROOFPROBE_PTX_ARCH}")
set(_tensor_fp8_compiler FALSE)
if(CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.4)
  set(_tensor_fp8_compiler TRUE)
endif()

# roofprobe_tensor_mma_check(NAME TYPE MIN_ARCH OPCODE_REGEX SASS_OPCODE [ARCH <sm>]
#                            [REQUIRES_FP8])
# SASS: each mma.sync must be exactly one tensor-core instruction of its shape (HMMA.16816.F32,
# IMMA.16832.S8.S8, DMMA.8x8x4, QMMA.16832.F32.E4M3.E4M3, ...), 20 in all and no other MMA.
# fp8 is compiled only where it is native (tensor_mma_native): on sm_90 and sm_100..sm_110
# ptxas emulates it (F2FP conversions + f16 HMMA, products folded), which the kernel refuses.
function(roofprobe_tensor_mma_check name type min_arch opcode sass_opcode)
  cmake_parse_arguments(PARSE_ARGV 5 M "REQUIRES_FP8" "ARCH" "")
  set(arch ${_tensor_arch})
  if(M_ARCH)
    set(arch ${M_ARCH})
  endif()
  set(compiled TRUE)
  if(arch LESS min_arch OR (M_REQUIRES_FP8 AND NOT _tensor_fp8_compiler))
    set(compiled FALSE)
  elseif(type STREQUAL "Fp8Fp32" AND NOT (arch EQUAL 89 OR arch GREATER_EQUAL 120))
    set(compiled FALSE)
  endif()
  if(NOT compiled)
    roofprobe_ptx_test(${name} ptx_instance.cu ARCH ${arch}
      DEFINES -DRP_PTX_TYPE=${type} -DRP_PTX_WMMA=0
      DEPENDS ${_tensor_deps}
      EXPECT [[w?mma\..*]] eq 0  [[st\.global\.u32]] eq 1
      SASS_EXPECT [[[A-Z]*MMA.*]] eq 0  [[F2FP.*]] eq 0)
  else()
    roofprobe_ptx_test(${name} ptx_instance.cu ARCH ${arch}
      DEFINES -DRP_PTX_TYPE=${type} -DRP_PTX_WMMA=0
      DEPENDS ${_tensor_deps}
      EXPECT "${opcode}" eq 20  [[w?mma\..*]] eq 20
             [[ld\.param\.u32]] eq 1  [[(ld|st)\.local\..*]] eq 0  [[setp\.eq\..*]] eq 1
      SASS_EXPECT "${sass_opcode}" eq 20  [[[A-Z]*MMA.*]] eq 20  [[F2FP.*]] eq 0)
  endif()
  set(ROOFPROBE_PTX_FILES ${ROOFPROBE_PTX_FILES} PARENT_SCOPE)
endfunction()

roofprobe_tensor_mma_check(tensor_mma_fp16_fp32 Fp16Fp32 80
  [[mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32]] [[HMMA\.16816\.F32]])
roofprobe_tensor_mma_check(tensor_mma_fp16_fp16 Fp16Fp16 80
  [[mma\.sync\.aligned\.m16n8k16\.row\.col\.f16\.f16\.f16\.f16]] [[HMMA\.16816\.F16]])
roofprobe_tensor_mma_check(tensor_mma_bf16_fp32 Bf16Fp32 80
  [[mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.bf16\.bf16\.f32]] [[HMMA\.16816\.F32\.BF16]])
roofprobe_tensor_mma_check(tensor_mma_tf32_fp32 Tf32Fp32 80
  [[mma\.sync\.aligned\.m16n8k8\.row\.col\.f32\.tf32\.tf32\.f32]] [[HMMA\.1688\.F32\.TF32]])
roofprobe_tensor_mma_check(tensor_mma_int8_int32 Int8Int32 80
  [[mma\.sync\.aligned\.m16n8k32\.row\.col\.s32\.s8\.s8\.s32]] [[IMMA\.16832\.S8\.S8]])
roofprobe_tensor_mma_check(tensor_mma_fp64_fp64 Fp64Fp64 80
  [[mma\.sync\.aligned\.m8n8k4\.row\.col\.f64\.f64\.f64\.f64]] [[DMMA\.8x8x4]])
# fp8 at the configured architecture, and where it is native (sm_89 Ada, sm_120 Blackwell
# GeForce: one QMMA per mma.sync) and emulated (sm_90: nothing compiled) whatever that is.
set(_fp8_ptx [[mma\.sync\.aligned\.m16n8k32\.row\.col\.f32\.e4m3\.e4m3\.f32]])
set(_fp8_sass [[QMMA\.16832\.F32\.E4M3\.E4M3]])
roofprobe_tensor_mma_check(tensor_mma_fp8_fp32 Fp8Fp32 89 "${_fp8_ptx}" "${_fp8_sass}" REQUIRES_FP8)
foreach(_fp8_arch 89 90 120)
  if(NOT _fp8_arch EQUAL _tensor_arch)
    roofprobe_tensor_mma_check(tensor_mma_fp8_fp32_sm${_fp8_arch} Fp8Fp32 89 "${_fp8_ptx}"
                               "${_fp8_sass}" ARCH ${_fp8_arch} REQUIRES_FP8)
  endif()
endforeach()

# Hopper's f64 mma.sync shapes (api=mma.m16n8k4/k8/k16): 20 per entry, each one DMMA.16x8xK on
# sm_90 (nvcc loads `reps` twice here, hence ge 1). sm_100 and sm_120 have no such instruction (ptxas splits each into DMMA.8x8x4), so the
# kernel compiles none there and only writes its marker (tensor_mma_native).
foreach(_f64_k 4 8 16)
  foreach(_f64_arch 90 100 120)
    set(_f64_name tensor_mma_fp64_m16n8k${_f64_k})
    if(NOT _f64_arch EQUAL 90)
      set(_f64_name ${_f64_name}_sm${_f64_arch})
    endif()
    if(_f64_arch EQUAL 90)
      roofprobe_ptx_test(${_f64_name} ptx_instance.cu ARCH 90
        DEFINES -DRP_PTX_TYPE=Fp64Fp64 -DRP_PTX_WMMA=0 -DRP_PTX_API=MmaM16n8k${_f64_k}
        DEPENDS ${_tensor_deps}
        EXPECT "mma\\.sync\\.aligned\\.m16n8k${_f64_k}\\.row\\.col\\.f64\\.f64\\.f64\\.f64" eq 20
               [[w?mma\..*]] eq 20  [[ld\.param\.u32]] ge 1  [[(ld|st)\.local\..*]] eq 0
               [[setp\.eq\..*]] eq 1
        SASS_EXPECT "DMMA\\.16x8x${_f64_k}" eq 20  [[[A-Z]*MMA.*]] eq 20)
    else()
      roofprobe_ptx_test(${_f64_name} ptx_instance.cu ARCH ${_f64_arch}
        DEFINES -DRP_PTX_TYPE=Fp64Fp64 -DRP_PTX_WMMA=0 -DRP_PTX_API=MmaM16n8k${_f64_k}
        DEPENDS ${_tensor_deps}
        EXPECT [[w?mma\..*]] eq 0  [[st\.global\.u32]] eq 1
        SASS_EXPECT [[[A-Z]*MMA.*]] eq 0)
    endif()
  endforeach()
endforeach()

# What ptxas makes of one f64 m16n8k16 where the probe does not compile it: DMMA.8x8x4 pieces on
# sm_100 and sm_120, no DMMA.16x8x16 (the reason api=mma.m16n8k* is refused there), against one
# DMMA.16x8x16 on sm_90.
foreach(_split_arch 90 100 120)
  if(_split_arch EQUAL 90)
    set(_split_sass "DMMA\\.16x8x16" eq 1  [[DMMA\.8x8x4]] eq 0)
  else()
    set(_split_sass "DMMA\\.16x8x16" eq 0  [[DMMA\.8x8x4]] ge 2)
  endif()
  roofprobe_ptx_test(tensor_f64_m16n8k16_split_sm${_split_arch} ptx_f64_split_instance.cu ARCH ${_split_arch}
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/ptx_f64_split_instance.cu
    EXPECT [[mma\.sync\.aligned\.m16n8k16\.row\.col\.f64\.f64\.f64\.f64]] eq 1
    SASS_EXPECT ${_split_sass})
endforeach()

# WMMA: one PTX wmma.mma per call (the unit the probe counts), 20 per entry as above (nvcc may
# load `reps` twice here, hence ge 1).
if(NOT _tensor_arch LESS 70)
  roofprobe_ptx_test(tensor_wmma_fp16_fp32 ptx_instance.cu
    DEFINES -DRP_PTX_TYPE=Fp16Fp32 -DRP_PTX_WMMA=1
    DEPENDS ${_tensor_deps}
    EXPECT [[wmma\.mma\.sync\.aligned\.row\.row\.m16n16k16\.f32\.f32]] eq 20
           [[w?mma\.(sync|mma).*]] eq 20  [[ld\.param\.u32]] ge 1  [[(ld|st)\.local\..*]] eq 0
    SASS_EXPECT [[HMMA\.16816\.F32]] eq 40  [[[A-Z]*MMA.*]] eq 40)
endif()
if(NOT _tensor_arch LESS 80)
  roofprobe_ptx_test(tensor_wmma_fp64_fp64 ptx_instance.cu
    DEFINES -DRP_PTX_TYPE=Fp64Fp64 -DRP_PTX_WMMA=1
    DEPENDS ${_tensor_deps}
    EXPECT [[wmma\.mma\.sync\.aligned\.row\.row\.m8n8k4\.f64\.f64\.f64\.f64\.rn]] eq 20
           [[ld\.param\.u32]] ge 1  [[(ld|st)\.local\..*]] eq 0
    SASS_EXPECT [[DMMA\.8x8x4]] eq 20  [[[A-Z]*MMA.*]] eq 20)
endif()

# The check must fail on a wrong count: one MMA fewer than the fp16.fp32 kernel holds.
if(NOT _tensor_arch LESS 80)
  add_test(NAME ptx.tensor_checker_rejects_19_mmas
           COMMAND roofprobe_ptx_check ${CMAKE_CURRENT_BINARY_DIR}/tensor_mma_fp16_fp32.ptx
                   --expect [[mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32]] eq 19)
  set_tests_properties(ptx.tensor_checker_rejects_19_mmas PROPERTIES LABELS ptx WILL_FAIL TRUE)
endif()

# ---- wgmma (Hopper, sm_90a): kernels/cuda/tensor/wgmma_kernel.cuh -----------------------------------
# One warpgroup per block: per loop iteration kWgmmaSteps (8) wgmma.mma_async m64n128k16 on the
# same accumulator, +B and -B alternating (imm-scale-b = -1: SASS "gdesc[..].negB"), one commit
# group and one wait; after the loop one more +B: 9 in all, each one HGMMA.64x128x16.F32, and
# nothing else of the tensor cores. The tiles are staged once (one fence.proxy.async, so the
# async proxy sees them), nothing spills (64 f32 accumulators per thread). Compiled for sm_90
# without the `a` features, the kernel holds no wgmma at all and only writes its marker.
set(_tensor_wgmma_deps
  ${CMAKE_CURRENT_LIST_DIR}/ptx_wgmma_instance.cu
  ${PROJECT_SOURCE_DIR}/kernels/cuda/tensor/wgmma_kernel.cuh
  ${PROJECT_SOURCE_DIR}/kernels/cuda/tensor/kernel.cuh
  ${PROJECT_SOURCE_DIR}/kernels/cuda/tensor/wgmma_layout.hpp
  ${PROJECT_SOURCE_DIR}/kernels/cuda/tensor/model.hpp)
# f16 accumulate packs two results per register (32 registers): HGMMA.64x128x16.F16.
# tf32 (k8), e4m3 and int8 (k32) fill the same 32-byte tile rows: HGMMA.64x128x8.F32.TF32,
# QGMMA.64x128x32.F32.E4M3.E4M3 and IGMMA.64x128x32.S8.S8 (s32 accumulate; its -B read from a second
# tile, since integer wgmma has no imm-scale-b).
foreach(_wgmma IN ITEMS "fp16_fp32|Fp16Fp32|16|f32|f16|HGMMA\\.64x128x16\\.F32"
                        "fp16_fp16|Fp16Fp16|16|f16|f16|HGMMA\\.64x128x16\\.F16"
                        "bf16_fp32|Bf16Fp32|16|f32|bf16|HGMMA\\.64x128x16\\.F32\\.BF16"
                        "tf32_fp32|Tf32Fp32|8|f32|tf32|HGMMA\\.64x128x8\\.F32\\.TF32"
                        "fp8_fp32|Fp8Fp32|32|f32|e4m3|QGMMA\\.64x128x32\\.F32\\.E4M3\\.E4M3"
                        "int8_int32|Int8Int32|32|s32|s8|IGMMA\\.64x128x32\\.S8\\.S8")
  string(REPLACE "|" ";" _f "${_wgmma}")
  list(GET _f 0 _name)
  list(GET _f 1 _type)
  list(GET _f 2 _k)
  list(GET _f 3 _ptx_acc)
  list(GET _f 4 _ptx_type)
  list(GET _f 5 _sass)
  roofprobe_ptx_test(tensor_wgmma_${_name} ptx_wgmma_instance.cu ARCH 90a
    DEFINES -DRP_PTX_TYPE=${_type}
    DEPENDS ${_tensor_wgmma_deps}
    EXPECT "wgmma\\.mma_async\\.sync\\.aligned\\.m64n128k${_k}\\.${_ptx_acc}\\.${_ptx_type}\\.${_ptx_type}" eq 9
           [[wgmma\.mma_async\..*]] eq 9  [[wgmma\.commit_group\..*]] eq 2  [[wgmma\.wait_group\..*]] eq 2
           [[wgmma\.fence\..*]] eq 2  [[fence\.proxy\.async.*]] eq 1  [[(ld|st)\.local\..*]] eq 0
           [[ld\.param\.u32]] ge 1
    SASS_EXPECT "${_sass}" eq 9  [[[A-Z]*MMA.*]] eq 9  [[WARPGROUP\.ARRIVE]] eq 2)
endforeach()
# api=wgmma.rs: A from registers (4 per thread, loaded once), B alone staged: the same 9 wgmma,
# each an HGMMA whose A operand is a register, not a descriptor.
foreach(_rs IN ITEMS "fp16_fp32|Fp16Fp32|f16|" "bf16_fp32|Bf16Fp32|bf16|\\.BF16")
  string(REPLACE "|" ";" _f "${_rs}")
  list(GET _f 0 _name)
  list(GET _f 1 _type)
  list(GET _f 2 _ptx_type)
  list(GET _f 3 _bf)
  roofprobe_ptx_test(tensor_wgmma_rs_${_name} ptx_wgmma_instance.cu ARCH 90a
    DEFINES -DRP_PTX_TYPE=${_type} -DRP_PTX_KERNEL=tensor_wgmma_rs_kernel
    DEPENDS ${_tensor_wgmma_deps}
    EXPECT "wgmma\\.mma_async\\.sync\\.aligned\\.m64n128k16\\.f32\\.${_ptx_type}\\.${_ptx_type}" eq 9
           [[wgmma\.mma_async\..*]] eq 9  [[wgmma\.commit_group\..*]] eq 2  [[wgmma\.wait_group\..*]] eq 2
           [[wgmma\.fence\..*]] eq 2  [[fence\.proxy\.async.*]] eq 1  [[(ld|st)\.local\..*]] eq 0
           [[ld\.param\.u32]] ge 1
    SASS_EXPECT "HGMMA\\.64x128x16\\.F32${_bf}" eq 9  [[[A-Z]*MMA.*]] eq 9  [[WARPGROUP\.ARRIVE]] eq 2
    SASS_EXPECT_INSN "HGMMA\\.64x128x16\\.F32${_bf} R[0-9]+, R[0-9]+, gdesc.*" eq 9)
endforeach()
roofprobe_ptx_test(tensor_wgmma_fp16_fp32_sm90 ptx_wgmma_instance.cu ARCH 90
  DEFINES -DRP_PTX_TYPE=Fp16Fp32
  DEPENDS ${_tensor_wgmma_deps}
  EXPECT [[wgmma\..*]] eq 0  [[st\.global\.u32]] eq 1
  SASS_EXPECT [[[A-Z]*MMA.*]] eq 0)
# The check must fail on a wrong count: one wgmma fewer than the kernel holds.
add_test(NAME ptx.tensor_wgmma_checker_rejects_8
         COMMAND roofprobe_ptx_check ${CMAKE_CURRENT_BINARY_DIR}/tensor_wgmma_fp16_fp32.ptx
                 --expect [[wgmma\.mma_async\..*]] eq 8)
set_tests_properties(ptx.tensor_wgmma_checker_rejects_8 PROPERTIES LABELS ptx WILL_FAIL TRUE)

# ---- tcgen05 (Blackwell datacenter, sm_100a): kernels/cuda/tensor/tcgen05_kernel.cuh ----------------
# One thread per CTA issues the MMAs: kTcgen05Steps (8) tcgen05.mma.cta_group::1.kind::<kind> per
# iteration and one after the loop, 9 in the entry, each one UTC*MMA in SASS and no other tensor
# instruction; one commit to the mbarrier per round; the accumulator goes in (tcgen05.st) and out
# (tcgen05.ld) once, TMEM is allocated and freed once; nothing spills. sm_100 without `a`
# compiles none of it.
set(_tensor_tcgen05_deps
  ${CMAKE_CURRENT_LIST_DIR}/ptx_tcgen05_instance.cu
  ${PROJECT_SOURCE_DIR}/kernels/cuda/tensor/tcgen05_kernel.cuh
  ${PROJECT_SOURCE_DIR}/kernels/cuda/tensor/kernel.cuh
  ${PROJECT_SOURCE_DIR}/kernels/cuda/tensor/tcgen05_layout.hpp
  ${PROJECT_SOURCE_DIR}/kernels/cuda/tensor/wgmma_layout.hpp)
# Each type with its kind: f16/bf16 kind::f16, tf32 kind::tf32, e4m3 kind::f8f6f4, int8 kind::i8
# (its -B a second tile: kind::i8 has no negate bit), and the SASS opcode of each (tf32 shares
# UTCHMMA with f16, e4m3 is UTCQMMA, int8 UTCIMMA).
foreach(_tc IN ITEMS "fp16_fp32|Fp16Fp32|f16|UTCHMMA" "bf16_fp32|Bf16Fp32|f16|UTCHMMA"
                     "tf32_fp32|Tf32Fp32|tf32|UTCHMMA" "fp8_fp32|Fp8Fp32|f8f6f4|UTCQMMA"
                     "int8_int32|Int8Int32|i8|UTCIMMA")
  string(REPLACE "|" ";" _f "${_tc}")
  list(GET _f 0 _name)
  list(GET _f 1 _type)
  list(GET _f 2 _kind)
  list(GET _f 3 _sass)
  roofprobe_ptx_test(tensor_tcgen05_${_name} ptx_tcgen05_instance.cu ARCH 100a
    DEFINES -DRP_PTX_TYPE=${_type}
    DEPENDS ${_tensor_tcgen05_deps}
    EXPECT "tcgen05\\.mma\\.cta_group::1\\.kind::${_kind}" eq 9  [[tcgen05\.mma.*]] eq 9
           [[tcgen05\.commit\..*]] eq 1  [[tcgen05\.alloc\..*]] eq 1  [[tcgen05\.dealloc\..*]] eq 1
           [[tcgen05\.ld\..*]] eq 1  [[tcgen05\.st\..*]] eq 1  [[(ld|st)\.local\..*]] eq 0
    SASS_EXPECT "${_sass}.*" eq 9  [[[A-Z]*MMA.*]] eq 9  [[LDTM.*]] eq 1  [[STTM.*]] eq 1)
endforeach()
roofprobe_ptx_test(tensor_tcgen05_fp16_fp32_sm100 ptx_tcgen05_instance.cu ARCH 100
  DEFINES -DRP_PTX_TYPE=Fp16Fp32
  DEPENDS ${_tensor_tcgen05_deps}
  EXPECT [[tcgen05\..*]] eq 0  [[st\.global\.u32]] eq 1
  SASS_EXPECT [[[A-Z]*MMA.*]] eq 0)
