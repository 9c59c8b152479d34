// The list of views and the script builder that runs them.
#include "plot/plot.hpp"

#include <algorithm>

#include "driver/model/errors.hpp"

namespace roofprobe {

namespace {

struct View {
  const char* name;
  plot_detail::ViewBuilder build;
};

// Every view, in the order they are written. A new view is one builder function plus one row.
const View kViews[] = {
    {"bandwidth", plot_detail::build_bandwidth_view},
    {"hierarchical", plot_detail::build_hierarchical_view},
    {"instruction", plot_detail::build_instruction_view},
    {"shared", plot_detail::build_shared_view},
    {"flops", plot_detail::build_flops_view},
    {"scaling", plot_detail::build_scaling_view},
    {"power", plot_detail::build_power_view},
};

void check_format(const std::string& format) {
  if (format != "png" && format != "svg" && format != "pdf")
    throw InputError("unknown plot format '" + format + "' (use png, svg or pdf)");
}

std::string known_views() {
  std::string out;
  for (const View& v : kViews) out += (out.empty() ? "" : ", ") + std::string(v.name);
  return out;
}

void check_options(const PlotOptions& options) {
  check_format(options.format);
  for (const std::string& kind : options.kinds) {
    const auto& names = plot_view_names();
    if (std::find(names.begin(), names.end(), kind) == names.end())
      throw InputError("unknown plot kind '" + kind + "' (use " + known_views() + ")");
  }
  if (options.fma_ratio >= 0 && !(options.fma_ratio <= 1))
    throw InputError("--fma-ratio must be between 0 and 1 (the fraction of FLOPs done by FMA), got " +
                     std::to_string(options.fma_ratio));
}

}  // namespace

const std::vector<std::string>& plot_view_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const View& v : kViews) out.push_back(v.name);
    return out;
  }();
  return names;
}

std::vector<std::string> parse_plot_kinds(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    std::string kind = list.substr(start, end - start);
    kind.erase(0, kind.find_first_not_of(" \t"));
    kind.erase(kind.find_last_not_of(" \t") + 1);
    if (!kind.empty()) {
      const auto& names = plot_view_names();
      if (std::find(names.begin(), names.end(), kind) == names.end())
        throw InputError("--kind: unknown view '" + kind + "' (use " + known_views() + ")");
      if (std::find(out.begin(), out.end(), kind) == out.end()) out.push_back(kind);
    }
    start = end + 1;
  }
  if (out.empty()) throw InputError("--kind: no view named (use " + known_views() + ")");
  return out;
}

std::vector<PlotScript> build_plot_scripts(const Machine& machine, const std::vector<Sample>& samples,
                                           const PlotOptions& options, std::vector<std::string>* skipped) {
  check_options(options);
  // A --precision the file has no ceiling of is the user's mistake, whichever views are drawn.
  if (!options.precision.empty()) plot_detail::chosen_family(machine, options.precision);
  // The energy phase's rows ran on part of the device: only the power view, which draws energy
  // against intensity, shows them; as rates of the whole device they would be false.
  std::vector<Sample> whole_device;
  whole_device.reserve(samples.size());
  for (const Sample& s : samples)
    if (s.phase.rfind(kEnergyPhase, 0) != 0) whole_device.push_back(s);
  const plot_detail::ViewInput input{machine, samples, options.format, options};
  const plot_detail::ViewInput whole_device_input{machine, whole_device, options.format, options};
  std::vector<PlotScript> scripts;
  for (const View& view : kViews) {
    if (!options.kinds.empty() &&
        std::find(options.kinds.begin(), options.kinds.end(), view.name) == options.kinds.end())
      continue;
    PlotScript script;
    std::string why;
    if (view.build(std::string(view.name) == "power" ? input : whole_device_input, &script, &why)) {
      scripts.push_back(std::move(script));
    } else if (skipped) {
      skipped->push_back(std::string(view.name) + ": " + why);
    }
  }
  return scripts;
}

}  // namespace roofprobe
