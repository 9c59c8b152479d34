// `roofprobe compare --plot FILE`: the hierarchical rooflines of several machines on one canvas.
// One colour per machine, one dash pattern per memory level (solid: the device memory, dashed:
// L2, dotted: L1, dash-dot: shared), the compute ceilings the machines have in common labelled
// in the right margin in their machine's colour, and a key under the plot naming every roof.
#pragma once

#include <string>
#include <vector>

#include "driver/model/machine.hpp"
#include "plot/plot.hpp"

namespace roofprobe {

// Builds the script (no I/O). `view` names the script and its data files (<view>.gp,
// <view>_roofs.dat, <view>_ceilings.dat); `labels` name the machines (one per machine). Throws
// InputError when no machine has a memory level or none has a compute ceiling.
PlotScript build_compare_overlay(const std::vector<Machine>& machines, const std::vector<std::string>& labels,
                                 const std::string& view, const std::string& format);

// Writes the overlay to `image` (its extension picks png, svg or pdf; the script and data files
// go beside it) and runs gnuplot. Returns the image path. Throws InputError (one line) for
// another extension, a missing gnuplot or a gnuplot failure.
std::string render_compare_overlay(const std::vector<Machine>& machines, const std::vector<std::string>& labels,
                                   const std::string& image);

// The ceilings the overlay draws: the names every machine has (FP64.FMA and FP32.FMA first,
// then by value, at most `max_names`); when the machines share none, each machine's highest.
std::vector<std::string> overlay_ceiling_names(const std::vector<Machine>& machines, std::size_t max_names = 6);

}  // namespace roofprobe
