#include <tuple>
#include <algorithm>
#include <stdexcept>

#include "kernels/contract/probe.hpp"

namespace roofprobe {

Registry& Registry::instance() {
  static Registry registry;
  return registry;
}

void Registry::add_probe(std::unique_ptr<Probe> probe) {
  const ProbeInfo& info = probe->info();
  if (this->probe(info.backend, info.name) != nullptr)
    throw std::logic_error("probe '" + info.name + "' registered twice for backend " + info.backend);
  probes_.push_back(std::move(probe));
}

void Registry::add_backend(std::unique_ptr<Backend> backend) { backends_.push_back(std::move(backend)); }

std::vector<const Probe*> Registry::probes(const std::string& backend) const {
  std::vector<const Probe*> out;
  for (const auto& p : probes_)
    if (backend.empty() || p->info().backend == backend) out.push_back(p.get());
  std::sort(out.begin(), out.end(), [](const Probe* a, const Probe* b) {
    return std::tie(a->info().backend, a->info().name) < std::tie(b->info().backend, b->info().name);
  });
  return out;
}

const Probe* Registry::probe(const std::string& backend, const std::string& name) const {
  for (const auto& p : probes_)
    if (p->info().backend == backend && p->info().name == name) return p.get();
  return nullptr;
}

std::vector<Backend*> Registry::backends() const {
  std::vector<Backend*> out;
  for (const auto& b : backends_) out.push_back(b.get());
  std::sort(out.begin(), out.end(), [](Backend* a, Backend* b) { return a->name() < b->name(); });
  return out;
}

Backend* Registry::backend(const std::string& name) const {
  for (const auto& b : backends_)
    if (b->name() == name) return b.get();
  return nullptr;
}

}  // namespace roofprobe
