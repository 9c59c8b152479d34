# PTX checks of the issue probe (kernels/cuda/issue/kernel.cuh). Included by tests/ptx/CMakeLists.txt.
# The kernel keeps its loops over passes, load batches and groups rolled, so the entry holds one
# group (8 chains x 16 steps = 128 payload instructions, kIssueGroupInstructions) and, with loads,
# one batch of kLoadsPerGroup coalesced ld.global.cg.u32. The chain constants arrive as kernel
# parameters (ld.param), nothing folds. Every stream keeps the branch around the payload that
# predicates it to lanes < active_lanes (a setp on the lane id and a conditional bra).
# SASS: the FP32 payload is 128 FFMA; the INT32 payload is mad.lo, an IMAD with a register addend
# (address arithmetic adds a few more IMADs, hence "ge"); loads are LDG.E.STRONG.GPU (.cg).
set(_issue_deps
  ${CMAKE_CURRENT_LIST_DIR}/ptx_instance.cu
  ${PROJECT_SOURCE_DIR}/kernels/cuda/issue/kernel.cuh
  ${PROJECT_SOURCE_DIR}/kernels/cuda/issue/model.hpp
  ${PROJECT_SOURCE_DIR}/kernels/common/hd.hpp)

# FP32, registers only: 128 FFMA, no integer multiply-add, no global load, the one checksum store.
roofprobe_ptx_test(issue_fp32_registers ptx_instance.cu
  DEFINES -DRP_PTX_STREAM=Fp32 -DRP_PTX_LOADS=0
  DEPENDS ${_issue_deps}
  EXPECT [[fma\.rn\.f32]] eq 128  [[mad\.lo\.(s|u)32]] eq 0  [[(mul|add)(\.rn)?\.f32]] eq 0
         [[ld\.global.*]] eq 0  [[st\.global\.u32]] eq 1  [[ld\.param\.f32]] eq 2
         [[setp\.(ge|lt)\.s32]] ge 1  [[bra(\.uni)?]] ge 1
  SASS_EXPECT FFMA eq 128)

# INT32: the ring's 128 IMADs (mad.lo.s32), no FFMA.
roofprobe_ptx_test(issue_int32_registers ptx_instance.cu
  DEFINES -DRP_PTX_STREAM=Int32 -DRP_PTX_LOADS=0
  DEPENDS ${_issue_deps}
  EXPECT [[mad\.lo\.(s|u)32]] eq 128  [[fma\.rn\.f32]] eq 0  [[ld\.global.*]] eq 0
         [[st\.global\.u32]] eq 1  [[bra(\.uni)?]] ge 1
  SASS_EXPECT FFMA eq 0  [[LDG.*]] eq 0
  SASS_EXPECT_INSN [[IMAD R[0-9]+, R[0-9]+, U?R[0-9]+, R[0-9]+]] ge 128)

# Mixed: 64 FFMA + 64 IMAD.
roofprobe_ptx_test(issue_mixed_registers ptx_instance.cu
  DEFINES -DRP_PTX_STREAM=Mixed -DRP_PTX_LOADS=0
  DEPENDS ${_issue_deps}
  EXPECT [[fma\.rn\.f32]] eq 64  [[mad\.lo\.(s|u)32]] eq 64  [[ld\.global.*]] eq 0
  SASS_EXPECT FFMA eq 64  [[LDG.*]] eq 0
  SASS_EXPECT_INSN [[IMAD R[0-9]+, R[0-9]+, U?R[0-9]+, R[0-9]+]] ge 64)

# Intensity 16: two 32-bit coalesced loads (8 sectors) per group of 128 FFMA.
roofprobe_ptx_test(issue_fp32_n16 ptx_instance.cu
  DEFINES -DRP_PTX_STREAM=Fp32 -DRP_PTX_LOADS=2
  DEPENDS ${_issue_deps}
  EXPECT [[fma\.rn\.f32]] eq 128  [[ld\.global\.cg\.u32]] eq 2  [[ld\.global(\.nc)?\.(u|b|f|v).*]] eq 0
         [[st\.global\.u32]] eq 1
  SASS_EXPECT FFMA eq 128  [[LDG\.E\.STRONG\.GPU]] eq 2  [[LDG.*]] eq 2)

# Intensity 1: 32 loads per group.
roofprobe_ptx_test(issue_int32_n1 ptx_instance.cu
  DEFINES -DRP_PTX_STREAM=Int32 -DRP_PTX_LOADS=32
  DEPENDS ${_issue_deps}
  EXPECT [[mad\.lo\.(s|u)32]] eq 128  [[ld\.global\.cg\.u32]] eq 32
  SASS_EXPECT [[LDG\.E\.STRONG\.GPU]] eq 32  [[LDG.*]] eq 32  FFMA eq 0
  SASS_EXPECT_INSN [[IMAD R[0-9]+, R[0-9]+, U?R[0-9]+, R[0-9]+]] ge 128)

# The issue check must fail on a wrong count.
add_test(NAME ptx.issue_rejects_wrong_count
         COMMAND roofprobe_ptx_check ${CMAKE_CURRENT_BINARY_DIR}/issue_fp32_registers.ptx
                 --expect [[fma\.rn\.f32]] eq 127)
set_tests_properties(ptx.issue_rejects_wrong_count PROPERTIES LABELS ptx WILL_FAIL TRUE)
