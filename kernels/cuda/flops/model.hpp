// Data layout of the CUDA FLOP probe, shared by its kernel and the host unit tests.
//
// The array is cut into tiles of block x ilp elements. Thread x of a block keeps ilp elements of
// a tile in registers, slot j holding element  tile*block*ilp + j*block + x : for each slot the
// lanes of a warp touch consecutive elements (coalesced), and the ilp slots are independent
// chains, so the FP pipes stay busy while each chain waits for its previous result. Block b
// processes tiles b, b + grid, b + 2*grid, ... in every repetition (the same ones each time, as
// ERT does, so the working set decides which memory level serves the loads).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/beyond_l2.hpp"
#include "kernels/common/hd.hpp"

namespace roofprobe {

RP_HD std::size_t tile_element(std::size_t tile, int slot, int thread, int block, int ilp) {
  return (tile * static_cast<std::size_t>(ilp) + static_cast<std::size_t>(slot)) * static_cast<std::size_t>(block) +
         static_cast<std::size_t>(thread);
}

// The working set of a point whose working_set_bytes is 0 (the probe's default): the larger of
// 64 MiB and 4x the device's L2 (beyond_l2_bytes), so the low-intensity points stream from device
// memory rather than from an L2 holding most of the array (H100: 50 MB L2; RTX 4090: 72 MiB;
// B200: 126 MiB). A nonzero request is kept as it is.
inline constexpr std::uint64_t kFlopsMinWorkingSet = std::uint64_t{64} << 20;
RP_HD constexpr std::uint64_t flops_working_set_bytes(std::uint64_t requested, std::uint64_t l2_bytes) {
  return requested > 0 ? requested : beyond_l2_bytes(l2_bytes, kFlopsMinWorkingSet);
}

struct FlopTiles {
  std::size_t tile_elements = 0;  // block x ilp
  std::size_t tiles = 0;          // tiles in the array
  std::size_t elements = 0;       // tiles x tile_elements: what the launch really touches
  int blocks = 0;                 // grid size; divides `tiles` whenever tiles >= resident_blocks
};

// Shapes a FLOP-probe launch for a working set. A compute ceiling needs every SM equally busy
// until the end of the launch, so once the array spans at least one full wave of resident blocks
// (`resident_blocks` = blocks per SM x SMs), the tile count is rounded DOWN to whole waves and the
// grid is exactly one wave: every block then does the same number of tiles and no SM idles in a
// tail. Smaller arrays get one block per tile (the grid is then partly empty; such sizes are not
// where ceilings come from). Never touches more than the working set, and at least one tile.
inline FlopTiles flop_tiles(std::uint64_t working_set_bytes, std::size_t element_bytes, int block, int ilp,
                            int resident_blocks) {
  FlopTiles t;
  t.tile_elements = static_cast<std::size_t>(block) * static_cast<std::size_t>(ilp);
  std::size_t tiles = static_cast<std::size_t>(working_set_bytes / element_bytes) / t.tile_elements;
  if (tiles == 0) tiles = 1;
  const std::size_t wave = resident_blocks > 0 ? static_cast<std::size_t>(resident_blocks) : 1;
  if (tiles >= wave) {
    t.tiles = tiles / wave * wave;
    t.blocks = static_cast<int>(wave);
  } else {
    t.tiles = tiles;
    t.blocks = static_cast<int>(tiles);
  }
  t.elements = t.tiles * t.tile_elements;
  return t;
}

// Initial value of element i: 1 + (i mod 1024) * 2^-12, exact in float and double, different
// for neighbouring elements (so a misplaced store shows) and far from the chain's fixed point
// b / (1 - a) = 4 (so a skipped chain shows).
template <class T>
RP_HD T flops_initial_value(std::size_t i) {
  return static_cast<T>(1) + static_cast<T>(i % 1024) * static_cast<T>(1.0 / 4096);
}

}  // namespace roofprobe
