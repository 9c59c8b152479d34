# PTX checks of the fma_mix probe (kernels/cuda/fma_mix/kernel.cuh). Included by
# tests/ptx/CMakeLists.txt. The repetition loop stays rolled, so the entry holds exactly
# kMixBlocksPerIteration (4) blocks x kMixChains (8) chains x 8 operations = 256 operations, split
# by the FMA fraction a = q/4 into 2q FMAs, (4 - q) multiplies and (4 - q) adds per block and
# chain (kernels/cuda/fma_mix/model.hpp): 64q FMAs, 32(4 - q) multiplies, 32(4 - q) adds. Multiplies and adds
# must stay .rn (never contracted into FMAs), and m, c arrive as kernel parameters.
set(_fma_mix_deps
  ${CMAKE_CURRENT_LIST_DIR}/ptx_instance.cu
  ${PROJECT_SOURCE_DIR}/kernels/cuda/fma_mix/kernel.cuh
  ${PROJECT_SOURCE_DIR}/kernels/cuda/fma_mix/model.hpp
  ${PROJECT_SOURCE_DIR}/kernels/common/hd.hpp)

# FP64, a = 0.5: 128 FMA, 64 MUL, 64 ADD.
roofprobe_ptx_test(fma_mix_fp64_a050 ptx_instance.cu
  DEFINES -DRP_PTX_OPS=MixFp64 -DRP_PTX_QUARTERS=2
  DEPENDS ${_fma_mix_deps}
  EXPECT [[fma\.rn\.f64]] eq 128  [[mul\.rn\.f64]] eq 64  [[add\.rn\.f64]] eq 64
         [[(mul|add|fma)\.f64]] eq 0  [[ld\.param\.f64]] eq 2
         [[ld\.global\.f64]] eq 8  [[st\.global\.f64]] eq 8
  SASS_EXPECT DFMA eq 128  DMUL eq 64  DADD eq 64)

# FP64, a = 0: no FMA at all, 128 MUL + 128 ADD.
roofprobe_ptx_test(fma_mix_fp64_a0 ptx_instance.cu
  DEFINES -DRP_PTX_OPS=MixFp64 -DRP_PTX_QUARTERS=0
  DEPENDS ${_fma_mix_deps}
  EXPECT [[fma(\.rn)?\.f64]] eq 0  [[mul\.rn\.f64]] eq 128  [[add\.rn\.f64]] eq 128
  SASS_EXPECT DFMA eq 0  DMUL eq 128  DADD eq 128)

# FP32, a = 1: 256 FMA only.
roofprobe_ptx_test(fma_mix_fp32_a1 ptx_instance.cu
  DEFINES -DRP_PTX_OPS=MixFp32 -DRP_PTX_QUARTERS=4
  DEPENDS ${_fma_mix_deps}
  EXPECT [[fma\.rn\.f32]] eq 256  [[(mul|add)(\.rn)?\.f32]] eq 0
  SASS_EXPECT FFMA eq 256  [[FMUL|FADD]] eq 0)

# half2, a = 0.25: 64 HFMA2, 96 HMUL2, 96 HADD2.
roofprobe_ptx_test(fma_mix_fp16_a025 ptx_instance.cu
  DEFINES -DRP_PTX_OPS=MixFp16x2 -DRP_PTX_QUARTERS=1
  DEPENDS ${_fma_mix_deps}
  EXPECT [[fma\.rn\.f16x2]] eq 64  [[mul\.rn\.f16x2]] eq 96  [[add\.rn\.f16x2]] eq 96
         [[(mul|add|fma)\.f16x2]] eq 0  [[ld\.global\.u32]] eq 8  [[st\.global\.u32]] eq 8
  SASS_EXPECT_INSN "${_h2_fma}" eq 64  "${_h2_mul}" eq 96  "${_h2_add}" eq 96)

# bfloat162, a = 0.75 (the sm_90 encoding: native mul/add.rn.bf16x2): 192 FMA, 32 MUL, 32 ADD.
if(ROOFPROBE_PTX_ARCH MATCHES "^(9|1[0-9])")
  roofprobe_ptx_test(fma_mix_bf16_a075 ptx_instance.cu
    DEFINES -DRP_PTX_OPS=MixBf16x2 -DRP_PTX_QUARTERS=3
    DEPENDS ${_fma_mix_deps}
    EXPECT [[fma\.rn\.bf16x2]] eq 192  [[mul\.rn\.bf16x2]] eq 32  [[add\.rn\.bf16x2]] eq 32
    SASS_EXPECT_INSN "${_bf_fma}" eq 192  "${_bf_mul}" eq 32  "${_bf_add}" eq 32)
endif()

# The fma_mix check must fail on a wrong count.
add_test(NAME ptx.fma_mix_rejects_wrong_count
         COMMAND roofprobe_ptx_check ${CMAKE_CURRENT_BINARY_DIR}/fma_mix_fp64_a050.ptx
                 --expect [[mul\.rn\.f64]] eq 65)
set_tests_properties(ptx.fma_mix_rejects_wrong_count PROPERTIES LABELS ptx WILL_FAIL TRUE)
