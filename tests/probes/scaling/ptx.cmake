# ---- scaling probe: work restricted to k SMs ------------------------------------------------
# Included by tests/ptx/CMakeLists.txt. The item loop is rolled (unroll 1) and the item's work
# unrolled, so the entry holds exactly one item: memory_read kScalingLoadsPerThread (16) 128-bit
# loads and no other global load; fp64_fma kScalingFmaChains x kScalingFmaSteps = 8 x 128 = 1024
# DFMAs with `one` from a kernel parameter (no fold into adds) and no global load at all. Both
# take items with 64-bit atomics (the first item, then one prefetch per turn) and count each
# item done with one 32-bit atomic. SASS: the 1024 DFMAs stay DFMAs (none folded into a DADD
# although `one` is 1.0 at run time); the only DADDs are the 8 subtractions x - start after the
# loop, and %smid is read once (S2R SR_VIRTUALSMID on sm_90).
set(_scaling_deps
  ${CMAKE_CURRENT_LIST_DIR}/ptx_instance.cu
  ${PROJECT_SOURCE_DIR}/kernels/cuda/scaling/kernel.cuh
  ${PROJECT_SOURCE_DIR}/kernels/cuda/scaling/model.hpp
  ${PROJECT_SOURCE_DIR}/kernels/cuda/backend/stream_pattern.hpp
  ${PROJECT_SOURCE_DIR}/kernels/common/hd.hpp)

roofprobe_ptx_test(scaling_memory_read ptx_instance.cu
  DEFINES -DRP_PTX_KERNEL=MemoryRead
  DEPENDS ${_scaling_deps}
  EXPECT [[ld\.global(\.nc)?\.v4\.u32]] eq 16
         [[ld\.global(\.(nc|ca|cg|cs|lu|cv))?\.(v2\.|)(u|s|b|f)(8|16|32|64)]] eq 0
         [[fma\.rn\.f64]] eq 0
         [[atom\.global\.add\.u64]] eq 2  [[atom\.global\.add\.u32]] eq 1
  SASS_EXPECT [[LDG\.E\.128(\.CONSTANT)?]] eq 16  [[LDG(?!\.E\.128(\.CONSTANT)?$).*]] eq 0
  SASS_EXPECT_INSN [[S2R R[0-9]+, SR_(VIRTUAL)?SMID]] eq 1)

roofprobe_ptx_test(scaling_fp64_fma ptx_instance.cu
  DEFINES -DRP_PTX_KERNEL=Fp64Fma
  DEPENDS ${_scaling_deps}
  EXPECT [[fma\.rn\.f64]] eq 1024  [[(add|mul)(\.rn)?\.f64]] eq 0  [[ld\.param\.f64]] eq 1
         [[ld\.global.*]] eq 0
         [[atom\.global\.add\.u64]] eq 2  [[atom\.global\.add\.u32]] eq 1
  SASS_EXPECT DFMA eq 1024  DMUL eq 0  DADD eq 8  [[LDG.*]] eq 0
  SASS_EXPECT_INSN [[S2R R[0-9]+, SR_(VIRTUAL)?SMID]] eq 1)

# ptx_check counts opcodes; the SM id read is a plain `mov.u32 %rN, %smid;`, so grep the operand:
# each kernel reads %smid exactly once (the block's decision to work or leave).
foreach(_scaling_ptx scaling_memory_read scaling_fp64_fma)
  add_test(NAME ptx.${_scaling_ptx}_reads_smid
           COMMAND sh -c [=[n=$(grep -cE 'mov\.u32[[:space:]]+%r[0-9]+, %smid;' "$0"); echo "smid reads: $n"; test "$n" -eq 1]=]
                   ${CMAKE_CURRENT_BINARY_DIR}/${_scaling_ptx}.ptx)
  set_tests_properties(ptx.${_scaling_ptx}_reads_smid PROPERTIES LABELS ptx)
endforeach()
