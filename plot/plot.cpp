// The list of views and the script builder that runs them.
#include "plot/plot.hpp"

#include "driver/errors.hpp"

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
};

void check_format(const std::string& format) {
  if (format != "png" && format != "svg" && format != "pdf")
    throw InputError("unknown plot format '" + format + "' (use png, svg or pdf)");
}

}  // namespace

std::vector<PlotScript> build_plot_scripts(const Machine& machine,
                                           const std::vector<Sample>& samples,
                                           const PlotOptions& options,
                                           std::vector<std::string>* skipped) {
  check_format(options.format);
  const plot_detail::ViewInput input{machine, samples, options.format};
  std::vector<PlotScript> scripts;
  for (const View& view : kViews) {
    PlotScript script;
    std::string why;
    if (view.build(input, &script, &why)) {
      scripts.push_back(std::move(script));
    } else if (skipped) {
      skipped->push_back(std::string(view.name) + ": " + why);
    }
  }
  return scripts;
}

}  // namespace roofprobe
