# PTX checks of the bandwidth probe (included by tests/ptx/CMakeLists.txt, which defines
# roofprobe_ptx_test). Each compiles ONE instantiation of stream_kernel<Mode, Bits, Cache>
# (ptx_instance.cu here). The read and write loop is unrolled 4x with a remainder, so their
# access counts are lower bounds ("ge 4"); rmw and copy make one batch of exactly 4 ("eq 4");
# what must be absent is exact ("eq 0").
#
# The load_width and cache_op axes, after the 128-bit default-caching checks below.
# cg: every global access of the stream carries .cg (ld.global.cg: L2 only, the point of the
# axis); no plain, .nc or .ca global load may remain. The negative lookahead matches any
# ld/st.global opcode that is not .cg. In SASS (sm_70+) .cg is a strong GPU-scope access,
# LDG.E.128.STRONG.GPU, served by L2; a weak LDG or LDG.CONSTANT would go through L1.
set(_bandwidth_deps
  ${CMAKE_CURRENT_LIST_DIR}/ptx_instance.cu
  ${PROJECT_SOURCE_DIR}/kernels/cuda/bandwidth/kernel.cuh
  ${PROJECT_SOURCE_DIR}/kernels/cuda/backend/stream_pattern.hpp
  ${PROJECT_SOURCE_DIR}/kernels/common/hd.hpp)

# ---- bandwidth probe: 128-bit accesses, default caching (ca) --------------------------------
# ptx_instance.cu defaults to RP_PTX_BITS=128 and RP_PTX_CACHE=Ca.
# The read and write grid-stride loop is unrolled 4x with a remainder loop, so access counts are
# lower bounds. rmw and copy walk their accesses in batches of kStreamBatch (4): exactly 4 loads
# and 4 stores, and all 4 loads come before the first store (the batch's point: a plain loop
# compiled to LDG, STG, LDG, STG, one load in flight per thread).
# Every global access of the stream is 128-bit (uint4): no narrower ld/st.global at all, except
# read mode's 32-bit store of its block sum. SASS: default caching keeps L1 (LDG.E.128, or
# LDG.E.128.CONSTANT for the read-only read stream): no .STRONG access, which would bypass it.
# The ca read has a second path, for small sets (kStreamWrapRows wrapped loads per pass), with
# its own copy of the block-sum store: 4 more loads and 2 stores in all (4 + 4 + 3 = 11 loads).
roofprobe_ptx_test(bandwidth_read ptx_instance.cu
  DEFINES -DRP_PTX_MODE=Read
  DEPENDS ${_bandwidth_deps}
  EXPECT [[ld\.global(\.nc)?\.v4\.u32]] ge 8  [[ld\.global(\.nc)?\.(u|b|f)(32|64)]] eq 0
         [[st\.global\.u32]] eq 2  [[st\.global.*v4.*]] eq 0
  SASS_EXPECT [[LDG\.E\.128(\.CONSTANT)?]] ge 8  [[LDG(?!\.E\.128(\.CONSTANT)?$).*]] eq 0
              [[STG\.E\.128.*]] eq 0)

roofprobe_ptx_test(bandwidth_rmw ptx_instance.cu
  DEFINES -DRP_PTX_MODE=Rmw
  DEPENDS ${_bandwidth_deps}
  EXPECT [[ld\.global\.v4\.u32]] eq 4  [[st\.global\.v4\.u32]] eq 4
         [[(ld|st)\.global(\.nc)?\.(u|b|f)(32|64)]] eq 0  [[st\.shared.*]] eq 0
  EXPECT_BEFORE [[ld\.global.*]] [[st\.global.*]] 4
  SASS_EXPECT [[LDG\.E\.128]] eq 4  [[STG\.E\.128]] eq 4  [[(LDG|STG)(?!\.E\.128$).*]] eq 0
  SASS_EXPECT_BEFORE [[LDG.*]] [[STG.*]] 4)

roofprobe_ptx_test(bandwidth_copy ptx_instance.cu
  DEFINES -DRP_PTX_MODE=Copy
  DEPENDS ${_bandwidth_deps}
  EXPECT [[ld\.global\.v4\.u32]] eq 4  [[st\.global\.v4\.u32]] eq 4
         [[(ld|st)\.global(\.nc)?\.(u|b|f)(32|64)]] eq 0
  EXPECT_BEFORE [[ld\.global.*]] [[st\.global.*]] 4
  SASS_EXPECT [[LDG\.E\.128]] eq 4  [[STG\.E\.128]] eq 4  [[(LDG|STG)(?!\.E\.128$).*]] eq 0
  SASS_EXPECT_BEFORE [[LDG.*]] [[STG.*]] 4)

# write: stores only. Not one global load may remain (the stored words come from the element
# index and the pass, stream_written_word), and the 4x-unrolled loop (4 + 3 remainder) and the
# wrapped path for small sets (kStreamWrapRows) keep 11 128-bit stores: a store of a pass that
# the next pass overwrites is still issued (pass_shift keeps the compiler from proving it dead).
roofprobe_ptx_test(bandwidth_write ptx_instance.cu
  DEFINES -DRP_PTX_MODE=Write
  DEPENDS ${_bandwidth_deps}
  EXPECT [[st\.global\.v4\.u32]] ge 8  [[ld\.global.*]] eq 0  [[st\.global\.(u|b|f)(32|64)]] eq 0
  SASS_EXPECT [[STG\.E\.128]] ge 4  [[LDG.*]] eq 0  [[STG(?!\.E\.128$).*]] eq 0  [[(LDL|STL).*]] eq 0)

roofprobe_ptx_test(bandwidth_write_cg ptx_instance.cu
  DEFINES -DRP_PTX_MODE=Write -DRP_PTX_BITS=128 -DRP_PTX_CACHE=Cg
  DEPENDS ${_bandwidth_deps}
  EXPECT [[st\.global\.cg\.v4\.u32]] ge 8  [[ld\.global.*]] eq 0  [[st\.global(?!\.cg\.v4\.).*]] eq 0
  SASS_EXPECT [[STG\.E\.128\.STRONG\.GPU]] ge 8  [[LDG.*]] eq 0  [[STG(?!\.E\.128\.STRONG\.GPU$).*]] eq 0)

# The cg read wraps small L2 sets too (kStreamWrapMinBytes on): the wrapped path's 4 loads and
# its block-sum store come on top of the loop's (8 loads at least, 2 block-sum stores).
roofprobe_ptx_test(bandwidth_read_cg ptx_instance.cu
  DEFINES -DRP_PTX_MODE=Read -DRP_PTX_BITS=128 -DRP_PTX_CACHE=Cg
  DEPENDS ${_bandwidth_deps}
  EXPECT [[ld\.global\.cg\.v4\.u32]] ge 8  [[ld\.global(?!\.cg\.).*]] eq 0
         [[st\.global\.u32]] eq 2  [[ld\.global\.cg\.(u|b)(32|64)]] eq 0
  SASS_EXPECT [[LDG\.E\.128\.STRONG\.GPU]] ge 8  [[LDG(?!\.E\.128\.STRONG\.GPU$).*]] eq 0)

# rmw and copy with cg store with st.global.cg as well (L2 only, like the loads).
roofprobe_ptx_test(bandwidth_rmw_cg ptx_instance.cu
  DEFINES -DRP_PTX_MODE=Rmw -DRP_PTX_BITS=128 -DRP_PTX_CACHE=Cg
  DEPENDS ${_bandwidth_deps}
  EXPECT [[ld\.global\.cg\.v4\.u32]] ge 4  [[st\.global\.cg\.v4\.u32]] ge 4
         [[(ld|st)\.global(?!\.cg\.v4\.).*]] eq 0
  SASS_EXPECT [[LDG\.E\.128\.STRONG\.GPU]] ge 4  [[STG\.E\.128\.STRONG\.GPU]] ge 4
              [[(LDG|STG)(?!\.E\.128\.STRONG\.GPU$).*]] eq 0)

roofprobe_ptx_test(bandwidth_copy_cg_w32 ptx_instance.cu
  DEFINES -DRP_PTX_MODE=Copy -DRP_PTX_BITS=32 -DRP_PTX_CACHE=Cg
  DEPENDS ${_bandwidth_deps}
  EXPECT [[ld\.global\.cg\.(u|b)32]] ge 4  [[st\.global\.cg\.(u|b)32]] ge 4
         [[(ld|st)\.global(?!\.cg\.).*]] eq 0  [[(ld|st)\.global.*\.v[24]\..*]] eq 0
  SASS_EXPECT [[LDG\.E\.STRONG\.GPU]] ge 4  [[STG\.E\.STRONG\.GPU]] ge 4
              [[(LDG|STG)(?!\.E\.STRONG\.GPU$).*]] eq 0)

# 32-bit: one 32-bit load per element, no vector load at all.
roofprobe_ptx_test(bandwidth_read_w32 ptx_instance.cu
  DEFINES -DRP_PTX_MODE=Read -DRP_PTX_BITS=32 -DRP_PTX_CACHE=Ca
  DEPENDS ${_bandwidth_deps}
  EXPECT [[ld\.global(\.nc)?\.(u|b)32]] ge 8  [[ld\.global.*\.v[24]\..*]] eq 0
         [[ld\.global(\.nc)?\.(u|b)64]] eq 0  [[st\.global\.u32]] eq 2
  SASS_EXPECT [[LDG\.E(\.CONSTANT)?]] ge 4  [[LDG(?!\.E(\.CONSTANT)?$).*]] eq 0)

# 64-bit: a v2.u32 (or a u64) load per element, never a v4 or a scalar 32-bit one. (ca read: two
# paths, two block-sum stores; see bandwidth_read.)
roofprobe_ptx_test(bandwidth_read_w64 ptx_instance.cu
  DEFINES -DRP_PTX_MODE=Read -DRP_PTX_BITS=64 -DRP_PTX_CACHE=Ca
  DEPENDS ${_bandwidth_deps}
  EXPECT [[ld\.global(\.nc)?\.(v2\.(u|b)32|(u|b)64)]] ge 8  [[ld\.global.*\.v4\..*]] eq 0
         [[ld\.global(\.nc)?\.(u|b)32]] eq 0  [[st\.global\.u32]] eq 2
  SASS_EXPECT [[LDG\.E\.64(\.CONSTANT)?]] ge 4  [[LDG(?!\.E\.64(\.CONSTANT)?$).*]] eq 0)

# cs: the streaming store. Every store of write, copy and rmw is st.global.cs (SASS: STG.E.EF,
# the evict-first store), every load the cg one (L2 only: a cs load would allocate in L1 and
# serve re-read passes from it); nothing else. write keeps its 11 stores (loop and wrap), copy
# and rmw their batch of 4 loads before the first store.
roofprobe_ptx_test(bandwidth_write_cs ptx_instance.cu
  DEFINES -DRP_PTX_MODE=Write -DRP_PTX_BITS=128 -DRP_PTX_CACHE=Cs
  DEPENDS ${_bandwidth_deps}
  EXPECT [[st\.global\.cs\.v4\.u32]] ge 8  [[ld\.global.*]] eq 0  [[st\.global(?!\.cs\.v4\.).*]] eq 0
  SASS_EXPECT [[STG\.E\.EF\.128]] ge 8  [[LDG.*]] eq 0  [[STG(?!\.E\.EF\.128$).*]] eq 0)

roofprobe_ptx_test(bandwidth_copy_cs ptx_instance.cu
  DEFINES -DRP_PTX_MODE=Copy -DRP_PTX_BITS=128 -DRP_PTX_CACHE=Cs
  DEPENDS ${_bandwidth_deps}
  EXPECT [[ld\.global\.cg\.v4\.u32]] eq 4  [[st\.global\.cs\.v4\.u32]] eq 4
         [[ld\.global(?!\.cg\.v4\.).*]] eq 0  [[st\.global(?!\.cs\.v4\.).*]] eq 0
  EXPECT_BEFORE [[ld\.global.*]] [[st\.global.*]] 4
  SASS_EXPECT [[LDG\.E\.128\.STRONG\.GPU]] eq 4  [[STG\.E\.EF\.128]] eq 4
              [[LDG(?!\.E\.128\.STRONG\.GPU$).*]] eq 0  [[STG(?!\.E\.EF\.128$).*]] eq 0
  SASS_EXPECT_BEFORE [[LDG.*]] [[STG.*]] 4)

roofprobe_ptx_test(bandwidth_rmw_cs_w32 ptx_instance.cu
  DEFINES -DRP_PTX_MODE=Rmw -DRP_PTX_BITS=32 -DRP_PTX_CACHE=Cs
  DEPENDS ${_bandwidth_deps}
  EXPECT [[ld\.global\.cg\.(u|b)32]] eq 4  [[st\.global\.cs\.(u|b)32]] eq 4
         [[ld\.global(?!\.cg\.).*]] eq 0  [[st\.global(?!\.cs\.).*]] eq 0
  SASS_EXPECT [[LDG\.E\.STRONG\.GPU]] eq 4  [[STG\.E\.EF]] eq 4
              [[LDG(?!\.E\.STRONG\.GPU$).*]] eq 0  [[STG(?!\.E\.EF$).*]] eq 0
  SASS_EXPECT_BEFORE [[LDG.*]] [[STG.*]] 4)

# cs_chunk: the same instructions as cs along each block's contiguous chunk (stream_walk): the
# write's batch of 4 stores (split by ptxas into a whole-batch and a guarded copy, so ge 4), the
# copy's 4 cg loads before its first cs store.
roofprobe_ptx_test(bandwidth_write_cs_chunk ptx_instance.cu
  DEFINES -DRP_PTX_MODE=Write -DRP_PTX_BITS=128 -DRP_PTX_CACHE=CsChunk
  DEPENDS ${_bandwidth_deps}
  EXPECT [[st\.global\.cs\.v4\.u32]] ge 4  [[ld\.global.*]] eq 0  [[st\.global(?!\.cs\.v4\.).*]] eq 0
  SASS_EXPECT [[STG\.E\.EF\.128]] ge 4  [[LDG.*]] eq 0  [[STG(?!\.E\.EF\.128$).*]] eq 0)

roofprobe_ptx_test(bandwidth_copy_cs_chunk ptx_instance.cu
  DEFINES -DRP_PTX_MODE=Copy -DRP_PTX_BITS=128 -DRP_PTX_CACHE=CsChunk
  DEPENDS ${_bandwidth_deps}
  EXPECT [[ld\.global\.cg\.v4\.u32]] eq 4  [[st\.global\.cs\.v4\.u32]] eq 4
         [[ld\.global(?!\.cg\.v4\.).*]] eq 0  [[st\.global(?!\.cs\.v4\.).*]] eq 0
  EXPECT_BEFORE [[ld\.global.*]] [[st\.global.*]] 4
  SASS_EXPECT [[LDG\.E\.128\.STRONG\.GPU]] eq 4  [[STG\.E\.EF\.128]] eq 4
              [[LDG(?!\.E\.128\.STRONG\.GPU$).*]] eq 0  [[STG(?!\.E\.EF\.128$).*]] eq 0
  SASS_EXPECT_BEFORE [[LDG.*]] [[STG.*]] 4)

# The order check must fail where the order is not there: 5 loads before the first store of a
# batch of 4 cannot be.
if(ROOFPROBE_SASS_CHECKS AND ROOFPROBE_CUOBJDUMP)
  add_test(NAME sass.bandwidth_order_check_rejects_a_fifth_load
           COMMAND roofprobe_ptx_check --sass ${CMAKE_CURRENT_BINARY_DIR}/bandwidth_rmw.sass
                   --expect-before [[LDG.*]] [[STG.*]] 5)
  set_tests_properties(sass.bandwidth_order_check_rejects_a_fifth_load PROPERTIES LABELS ptx WILL_FAIL TRUE)
endif()

# The negative-lookahead check must catch a plain load: run it on the default-caching kernel
# (bandwidth_read's PTX, ld.global.nc.v4.u32), where it has to fail.
add_test(NAME ptx.bandwidth_cg_check_rejects_plain_loads
         COMMAND roofprobe_ptx_check ${CMAKE_CURRENT_BINARY_DIR}/bandwidth_read.ptx
                 --expect [[ld\.global(?!\.cg\.).*]] eq 0)
set_tests_properties(ptx.bandwidth_cg_check_rejects_plain_loads
                     PROPERTIES LABELS ptx WILL_FAIL TRUE)
