# ---- clock probe: the spin loop on clock64() ------------------------------------------------
# Included by tests/ptx/CMakeLists.txt. The fp32_fma kernel's loop turn holds exactly
# kClockSteps x kClockIlp = 16 x 8 = 128 FFMAs and the 8 subtractions that bring the chains back;
# `one` arrives as a kernel parameter (ld.param.f32), so no FMA is folded into an add. The idle
# kernel holds no floating-point work at all. One 32-bit store per thread (the chain checksum)
# and four 64-bit stores per block (start, stop, turns, launch number).
set(_clock_deps
  ${CMAKE_CURRENT_LIST_DIR}/ptx_instance.cu
  ${PROJECT_SOURCE_DIR}/kernels/cuda/clock/kernel.cuh
  ${PROJECT_SOURCE_DIR}/kernels/common/hd.hpp)

roofprobe_ptx_test(clock_fp32_fma ptx_instance.cu
  DEFINES -DRP_PTX_LOAD=Fp32Fma
  DEPENDS ${_clock_deps}
  EXPECT [[fma\.rn\.f32]] eq 128  [[sub\.rn\.f32]] eq 8  [[(add|mul)(\.rn)?\.f32]] le 8
         [[ld\.param\.f32]] eq 1  [[st\.global\.u32]] eq 1  [[st\.global\.u64]] eq 4
  SASS_EXPECT FFMA eq 128
  SASS_EXPECT_INSN [[CS2R R[0-9]+, SR_CLOCKLO]] ge 3)

roofprobe_ptx_test(clock_idle ptx_instance.cu
  DEFINES -DRP_PTX_LOAD=Idle
  DEPENDS ${_clock_deps}
  EXPECT [[(fma|add|sub|mul)(\.rn)?\.f32]] eq 0  [[st\.global\.u32]] eq 0
         [[st\.global\.u64]] eq 4
  SASS_EXPECT [[F(FMA|ADD|MUL)]] eq 0
  SASS_EXPECT_INSN [[CS2R R[0-9]+, SR_CLOCKLO]] ge 3)

# ptx_check counts opcodes, and a clock read is a plain `mov.u64 %rdN, %clock64;`: these tests
# grep the operand. Both kernels read the clock at least three times (start, every loop turn,
# the block's stop); a kernel that lost its spin loop would read it fewer.
foreach(_clock_ptx clock_fp32_fma clock_idle)
  add_test(NAME ptx.${_clock_ptx}_reads_clock64
           COMMAND sh -c [=[n=$(grep -cE 'mov\.u64[[:space:]]+%rd[0-9]+, %clock64;' "$0"); echo "clock64 reads: $n"; test "$n" -ge 3]=]
                   ${CMAKE_CURRENT_BINARY_DIR}/${_clock_ptx}.ptx)
  set_tests_properties(ptx.${_clock_ptx}_reads_clock64 PROPERTIES LABELS ptx)
endforeach()
