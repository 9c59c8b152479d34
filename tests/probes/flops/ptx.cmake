# PTX checks of the FLOP probe (included by tests/ptx/CMakeLists.txt, which defines
# roofprobe_ptx_test): fp64/fp32 first, then the fp16 / bf16 / int32 kernels.
# Same instance file and same counting for all: the entry holds one tile's work,
# 8 slots x K/2 chain steps. An fp16/bf16 element is one 32-bit word (f16x2 / bf16x2), loaded and
# stored as u32; a and b arrive as two more ld.param.u32 besides the two the entry always has,
# and reps is read once more for join_loads' run-time zero (kernels/cuda/flops/kernel.cuh).
# SASS: whole instructions counted with the _h2_* / _bf_* patterns of tests/ptx/CMakeLists.txt.
set(_flops_deps
  ${CMAKE_CURRENT_LIST_DIR}/ptx_instance.cu
  ${PROJECT_SOURCE_DIR}/kernels/cuda/flops/kernel.cuh
  ${PROJECT_SOURCE_DIR}/kernels/common/flop_chain.hpp
  ${PROJECT_SOURCE_DIR}/kernels/cuda/flops/model.hpp
  ${PROJECT_SOURCE_DIR}/kernels/common/hd.hpp)

# ---- FLOP probe: K = 64 -> 32 chain steps per slot, 8 slots --------------------------------
roofprobe_ptx_test(flops_fp64_fma_k64 ptx_instance.cu
  DEFINES -DRP_PTX_T=double -DRP_PTX_K=64 -DRP_PTX_FORM=Fma
  DEPENDS ${_flops_deps}
  EXPECT [[fma\.rn\.f64]] eq 256   [[(mul|add)(\.rn)?\.f64]] eq 0
         [[ld\.global\.f64]] eq 8  [[st\.global\.f64]] eq 8   [[ld\.param\.f64]] eq 2
  SASS_EXPECT DFMA eq 256  [[DMUL|DADD]] eq 0)

roofprobe_ptx_test(flops_fp64_nofma_k64 ptx_instance.cu
  DEFINES -DRP_PTX_T=double -DRP_PTX_K=64 -DRP_PTX_FORM=NoFma
  DEPENDS ${_flops_deps}
  EXPECT [[fma(\.rn)?\.f64]] eq 0  [[mul\.rn\.f64]] eq 256  [[add\.rn\.f64]] eq 256
         [[ld\.global\.f64]] eq 8  [[st\.global\.f64]] eq 8  [[ld\.param\.f64]] eq 2
  SASS_EXPECT DFMA eq 0  DMUL eq 256  DADD eq 256)

# fp32 values may be loaded as 32-bit words (join_loads XORs their bits): f32, b32 or u32.
roofprobe_ptx_test(flops_fp32_fma_k64 ptx_instance.cu
  DEFINES -DRP_PTX_T=float -DRP_PTX_K=64 -DRP_PTX_FORM=Fma
  DEPENDS ${_flops_deps}
  EXPECT [[fma\.rn\.f32]] eq 256   [[(mul|add)(\.rn)?\.f32]] eq 0
         [[ld\.global\.(f|b|u)32]] eq 8  [[st\.global\.f32]] eq 8   [[ld\.param\.f32]] eq 2
  SASS_EXPECT FFMA eq 256  [[FMUL|FADD]] eq 0)

roofprobe_ptx_test(flops_fp32_nofma_k64 ptx_instance.cu
  DEFINES -DRP_PTX_T=float -DRP_PTX_K=64 -DRP_PTX_FORM=NoFma
  DEPENDS ${_flops_deps}
  EXPECT [[fma(\.rn)?\.f32]] eq 0  [[mul\.rn\.f32]] eq 256  [[add\.rn\.f32]] eq 256
         [[ld\.global\.(f|b|u)32]] eq 8  [[st\.global\.f32]] eq 8  [[ld\.param\.f32]] eq 2
  SASS_EXPECT FFMA eq 0  FMUL eq 256  FADD eq 256)

# The longest chain stays fully unrolled: 8 x 512 FMAs in the entry.
roofprobe_ptx_test(flops_fp64_fma_k1024 ptx_instance.cu
  DEFINES -DRP_PTX_T=double -DRP_PTX_K=1024 -DRP_PTX_FORM=Fma
  DEPENDS ${_flops_deps}
  EXPECT [[fma\.rn\.f64]] eq 4096  [[ld\.global\.f64]] eq 8  [[st\.global\.f64]] eq 8
  SASS_EXPECT DFMA eq 4096)

# Odd K: the chain is the single trailing add, one per slot.
roofprobe_ptx_test(flops_fp32_fma_k1 ptx_instance.cu
  DEFINES -DRP_PTX_T=float -DRP_PTX_K=1 -DRP_PTX_FORM=Fma
  DEPENDS ${_flops_deps}
  EXPECT [[add\.rn\.f32]] eq 8  [[(fma|mul)(\.rn)?\.f32]] eq 0
  SASS_EXPECT FADD eq 8  FFMA eq 0)

# The numeric architecture ("90a" -> 90): bf16 code differs below sm_80 and sm_90.
string(REGEX MATCH "^[0-9]+" _flops_ptx_arch_number "${ROOFPROBE_PTX_ARCH}")

# ---- fp16: one fma.rn.f16x2 per step and slot (2 lanes x 2 FLOPs); noFMA: mul.rn + add.rn ------
roofprobe_ptx_test(flops_fp16_fma_k64 ptx_instance.cu
  DEFINES -DRP_PTX_T=roofprobe::cuda::F16x2 -DRP_PTX_K=64 -DRP_PTX_FORM=Fma
  DEPENDS ${_flops_deps}
  EXPECT [[fma\.rn\.f16x2]] eq 256  [[(mul|add)(\.rn)?\.f16x2]] eq 0
         [[ld\.global\.u32]] eq 8   [[st\.global\.u32]] eq 8   [[ld\.param\.u32]] eq 5
  SASS_EXPECT [[(HMUL2|HADD2)(\..*)?]] eq 0
  SASS_EXPECT_INSN "${_h2_fma}" eq 256)

roofprobe_ptx_test(flops_fp16_nofma_k64 ptx_instance.cu
  DEFINES -DRP_PTX_T=roofprobe::cuda::F16x2 -DRP_PTX_K=64 -DRP_PTX_FORM=NoFma
  DEPENDS ${_flops_deps}
  EXPECT [[fma(\.rn)?\.f16x2]] eq 0  [[mul\.rn\.f16x2]] eq 256  [[add\.rn\.f16x2]] eq 256
         [[ld\.global\.u32]] eq 8   [[st\.global\.u32]] eq 8   [[ld\.param\.u32]] eq 5
  SASS_EXPECT_INSN "${_h2_fma}" eq 0  "${_h2_mul}" eq 256  "${_h2_add}" eq 256)

# Odd K: the single trailing add per slot.
roofprobe_ptx_test(flops_fp16_fma_k1 ptx_instance.cu
  DEFINES -DRP_PTX_T=roofprobe::cuda::F16x2 -DRP_PTX_K=1 -DRP_PTX_FORM=Fma
  DEPENDS ${_flops_deps}
  EXPECT [[add\.rn\.f16x2]] eq 8  [[(fma|mul)(\.rn)?\.f16x2]] eq 0
  SASS_EXPECT_INSN "${_h2_fma}" eq 0  "${_h2_mul}" eq 0  "${_h2_add}" eq 8)

# ---- bf16: sm_80+ only; sm_90 has bf16x2 mul/add, sm_80..89 express them as fma.rn.bf16x2 ------
if(_flops_ptx_arch_number GREATER_EQUAL 80)
  roofprobe_ptx_test(flops_bf16_fma_k64 ptx_instance.cu
    DEFINES -DRP_PTX_T=roofprobe::cuda::Bf16x2 -DRP_PTX_K=64 -DRP_PTX_FORM=Fma
    DEPENDS ${_flops_deps}
    EXPECT [[fma\.rn\.bf16x2]] eq 256  [[(mul|add)(\.rn)?\.bf16x2]] eq 0  [[trap]] eq 0
           [[ld\.global\.u32]] eq 8   [[st\.global\.u32]] eq 8   [[ld\.param\.u32]] eq 5
    SASS_EXPECT [[(HMUL2|HADD2)(\..*)?]] eq 0
    SASS_EXPECT_INSN "${_bf_fma}" eq 256)
  if(_flops_ptx_arch_number GREATER_EQUAL 90)
    roofprobe_ptx_test(flops_bf16_nofma_k64 ptx_instance.cu
      DEFINES -DRP_PTX_T=roofprobe::cuda::Bf16x2 -DRP_PTX_K=64 -DRP_PTX_FORM=NoFma
      DEPENDS ${_flops_deps}
      EXPECT [[fma(\.rn)?\.bf16x2]] eq 0  [[mul\.rn\.bf16x2]] eq 256  [[add\.rn\.bf16x2]] eq 256
             [[ld\.global\.u32]] eq 8   [[st\.global\.u32]] eq 8
      SASS_EXPECT_INSN "${_bf_fma}" eq 0  "${_bf_mul}" eq 256  "${_bf_add}" eq 256)
  else()
    # x * a + (-0) and x * 1 + b: one fma.rn.bf16x2 per multiply and per add.
    roofprobe_ptx_test(flops_bf16_nofma_k64 ptx_instance.cu
      DEFINES -DRP_PTX_T=roofprobe::cuda::Bf16x2 -DRP_PTX_K=64 -DRP_PTX_FORM=NoFma
      DEPENDS ${_flops_deps}
      EXPECT [[fma\.rn\.bf16x2]] eq 512  [[(mul|add)(\.rn)?\.bf16x2]] eq 0
             [[ld\.global\.u32]] eq 8   [[st\.global\.u32]] eq 8)
  endif()
else()
  # Below sm_80 the bf16 kernel is a trap (the probe declares such devices unsupported).
  roofprobe_ptx_test(flops_bf16_fma_k64_unsupported_arch ptx_instance.cu
    DEFINES -DRP_PTX_T=roofprobe::cuda::Bf16x2 -DRP_PTX_K=64 -DRP_PTX_FORM=Fma
    DEPENDS ${_flops_deps}
    EXPECT [[trap]] eq 1  [[.*bf16x2]] eq 0)
endif()

# ---- int32: the multiply-add is one mad.lo (IMAD); noFMA keeps mul.lo + add (both inline PTX) -
# The entry's own loop counter is one add.s32; the chain's adds are add.u32.
roofprobe_ptx_test(flops_int32_fma_k64 ptx_instance.cu
  DEFINES -DRP_PTX_T=unsigned -DRP_PTX_K=64 -DRP_PTX_FORM=Fma
  DEPENDS ${_flops_deps}
  EXPECT [[mad\.lo\.(s|u)32]] eq 256  [[mul\.lo\.(u|s)32]] eq 0  [[add\.u32]] eq 0
         [[ld\.global\.u32]] eq 8   [[st\.global\.u32]] eq 8   [[ld\.param\.u32]] eq 5
  SASS_EXPECT_INSN [[IMAD R[0-9]+, R[0-9]+, U?R[0-9]+, R[0-9]+]] eq 256
                   [[IMAD R[0-9]+, R[0-9]+, U?R[0-9]+, RZ]] eq 0)

# noFMA: ptxas fused each mul.lo + add.u32 into one IMAD (256 IMADs, no add: the "noFMA" ceiling
# was the FMA one); the kernel now predicates its adds (kernels/cuda/flops/kernel.cuh), and the SASS must hold
# 256 pure multiplies (IMAD with addend RZ), 256 guarded adds (@P IADD3, or IMAD.IADD when ptxas
# moves an add to the FMA pipe), and no multiply-add.
roofprobe_ptx_test(flops_int32_nofma_k64 ptx_instance.cu
  DEFINES -DRP_PTX_T=unsigned -DRP_PTX_K=64 -DRP_PTX_FORM=NoFma
  DEPENDS ${_flops_deps}
  EXPECT [[mad\..*]] eq 0  [[mul\.lo\.u32]] eq 256  [[add\.u32]] eq 256
         [[ld\.global\.u32]] eq 8   [[st\.global\.u32]] eq 8   [[ld\.param\.u32]] eq 5
  SASS_EXPECT_INSN [[IMAD R[0-9]+, R[0-9]+, U?R[0-9]+, RZ]] eq 256
                   [[@P[0-6] (IADD3 R[0-9]+, R[0-9]+, U?R[0-9]+, RZ|IMAD\.IADD R[0-9]+, R[0-9]+, 0x1, U?R[0-9]+)]] eq 256
                   [[IMAD R[0-9]+, R[0-9]+, U?R[0-9]+, R[0-9]+]] eq 0)

# The fp16 check must fail on a wrong count (one FMA short).
add_test(NAME ptx.flops_fp16_checker_rejects_wrong_count
         COMMAND roofprobe_ptx_check ${CMAKE_CURRENT_BINARY_DIR}/flops_fp16_fma_k64.ptx
                 --expect [[fma\.rn\.f16x2]] eq 255)
set_tests_properties(ptx.flops_fp16_checker_rejects_wrong_count
                     PROPERTIES LABELS ptx WILL_FAIL TRUE)
