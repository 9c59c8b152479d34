// Green contexts for Backend::confine (kernels/cuda/backend/green_context.hpp).
#include "kernels/cuda/backend/green_context.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/backend/cuda_support.hpp"
#include "kernels/cuda/backend/sm_id.cuh"
#include "kernels/cuda/backend/sm_partition.hpp"

namespace roofprobe::cuda {
namespace {

constexpr const char* kNoGreenContexts =
    "roofprobe was built with a CUDA toolkit older than 12.5, which cannot create green contexts";
constexpr int kCensusBlock = 256;
constexpr std::uint32_t kMaxSmIds = 1024;  // %smid values the census records
// The census blocks wait for each other this long at most (cycles, ~10 ms), so that every block
// of the wave is resident at once and every SM shows up; a device that cannot hold the whole
// wave (shared with other processes, or a green context of fewer SMs) just ends the wait early.
constexpr long long kCensusWaitCycles = 20'000'000;

// Marks the SM id of every block in `present` (kMaxSmIds entries).
__global__ void sm_census_kernel(std::uint32_t* present, unsigned int* arrived) {
  if (threadIdx.x != 0) return;
  const std::uint32_t id = sm_id();
  if (id < kMaxSmIds) present[id] = 1;
  atomicAdd(arrived, 1u);
  const long long start = clock64();
  while (atomicAdd(arrived, 0u) < gridDim.x && clock64() - start < kCensusWaitCycles) {
  }
}

#if CUDART_VERSION >= 12050 && CUDA_VERSION >= 12040
#define ROOFPROBE_GREEN_CONTEXTS 1

// The driver functions green contexts need, resolved at run time.
struct Driver {
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetDevResource) get_resource = nullptr;
  decltype(&::cuDevSmResourceSplitByCount) split = nullptr;
  decltype(&::cuDevResourceGenerateDesc) generate_desc = nullptr;
  decltype(&::cuGreenCtxCreate) create = nullptr;
  decltype(&::cuGreenCtxDestroy) destroy = nullptr;
  decltype(&::cuCtxFromGreenCtx) as_context = nullptr;
  decltype(&::cuCtxGetCurrent) get_current = nullptr;
  decltype(&::cuCtxSetCurrent) set_current = nullptr;
  decltype(&::cuCtxSynchronize) synchronize = nullptr;
  std::string why_not;  // empty when every function was found
};

template <class F>
void resolve(const char* symbol, F& fn, std::string& why_not) {
  if (!why_not.empty()) return;
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, &p, 12040, cudaEnableDefault, &found);
  if (e != cudaSuccess || found != cudaDriverEntryPointSuccess || p == nullptr) {
    (void)cudaGetLastError();
    why_not = std::string("the driver has no ") + symbol + " (green contexts need a CUDA 12.4 or newer driver)";
    return;
  }
  fn = reinterpret_cast<F>(p);
}

const Driver& driver() {
  static const Driver d = [] {
    Driver r;
    resolve("cuDeviceGet", r.device_get, r.why_not);
    resolve("cuDeviceGetDevResource", r.get_resource, r.why_not);
    resolve("cuDevSmResourceSplitByCount", r.split, r.why_not);
    resolve("cuDevResourceGenerateDesc", r.generate_desc, r.why_not);
    resolve("cuGreenCtxCreate", r.create, r.why_not);
    resolve("cuGreenCtxDestroy", r.destroy, r.why_not);
    resolve("cuCtxFromGreenCtx", r.as_context, r.why_not);
    resolve("cuCtxGetCurrent", r.get_current, r.why_not);
    resolve("cuCtxSetCurrent", r.set_current, r.why_not);
    resolve("cuCtxSynchronize", r.synchronize, r.why_not);
    return r;
  }();
  return d;
}

void check(CUresult r, const char* call) {
  if (r == CUDA_SUCCESS) return;
  const std::string what = std::string("green context: ") + call + " failed (CUresult " + std::to_string(r) + ")";
  if (r == CUDA_ERROR_OUT_OF_MEMORY) throw DeviceOutOfMemory(what);
  throw std::runtime_error(what);
}

// The device's whole SM resource.
CUdevResource sm_resource(const Driver& d, int device, CUdevice& dev) {
  check(d.device_get(&dev, device), "cuDeviceGet");
  CUdevResource all{};
  check(d.get_resource(dev, &all, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource");
  return all;
}

// The partition of at least `sms` SMs the driver's split gives (its smCount is the grant).
CUdevResource split_resource(const Driver& d, CUdevResource& all, int sms) {
  CUdevResource group{};
  unsigned int groups = 1;
  check(d.split(&group, &groups, &all, nullptr, 0, static_cast<unsigned int>(sms)), "cuDevSmResourceSplitByCount");
  if (groups < 1) throw std::runtime_error("green context: no partition of " + std::to_string(sms) + " SMs");
  return group;
}

// A green context, destroyed with the handle; current to this thread from make_current() on.
class GreenConfinement final : public Confinement {
 public:
  GreenConfinement(const Driver& d, CUgreenCtx green, CUcontext previous, int sms)
      : d_(d), green_(green), previous_(previous), sms_(sms) {}
  ~GreenConfinement() override {
    // Its launches end before the thread goes back to the context it had; errors here resurface
    // at the next call in that context. Where the old context cannot be restored, none is
    // current, and the runtime takes the primary context at its next call.
    (void)d_.synchronize();
    if (d_.set_current(previous_) != CUDA_SUCCESS) (void)d_.set_current(nullptr);
    (void)d_.destroy(green_);
  }
  void make_current() {
    CUcontext context{};
    check(d_.as_context(&context, green_), "cuCtxFromGreenCtx");
    check(d_.set_current(context), "cuCtxSetCurrent");
  }
  GreenConfinement(const GreenConfinement&) = delete;
  GreenConfinement& operator=(const GreenConfinement&) = delete;
  int workers() const override { return sms_; }

 private:
  const Driver& d_;
  CUgreenCtx green_;
  CUcontext previous_;
  int sms_;
};
#endif

// The whole device: nothing to confine.
class WholeDevice final : public Confinement {
 public:
  explicit WholeDevice(int sms) : sms_(sms) {}
  int workers() const override { return sms_; }

 private:
  int sms_;
};

}  // namespace

SmPartitioning sm_partitioning(int device) {
  SmPartitioning out;
#ifdef ROOFPROBE_GREEN_CONTEXTS
  try {
    RP_CUDA_CHECK(cudaSetDevice(device));
    RP_CUDA_CHECK(cudaFree(nullptr));  // the runtime and its primary context exist before the driver is asked
    const Driver& d = driver();
    if (!d.why_not.empty()) {
      out.why_not = d.why_not;
      return out;
    }
    CUdevice dev{};
    const CUdevResource all = sm_resource(d, device, dev);
    out.total = static_cast<int>(all.sm.smCount);
    out.min_partition = static_cast<int>(all.sm.minSmPartitionSize);
    out.alignment = static_cast<int>(all.sm.smCoscheduledAlignment);
  } catch (const std::exception& e) {
    out = SmPartitioning{};
    out.why_not = e.what();
  }
#else
  (void)device;
  out.why_not = kNoGreenContexts;
#endif
  return out;
}

int split_sms(int device, int sms) {
#ifdef ROOFPROBE_GREEN_CONTEXTS
  const Driver& d = driver();
  if (!d.why_not.empty()) throw std::runtime_error(d.why_not);
  CUdevice dev{};
  CUdevResource all = sm_resource(d, device, dev);
  return static_cast<int>(split_resource(d, all, sms).sm.smCount);
#else
  (void)device;
  (void)sms;
  throw std::runtime_error(kNoGreenContexts);
#endif
}

std::vector<std::uint32_t> sm_ids_in_use(int sms) {
  DeviceBuffer<std::uint32_t> present(kMaxSmIds);
  DeviceBuffer<unsigned int> arrived(1);
  RP_CUDA_CHECK(cudaMemset(present.get(), 0, present.bytes()));
  RP_CUDA_CHECK(cudaMemset(arrived.get(), 0, arrived.bytes()));
  int per_sm = 0;
  if (sms <= 0) sms = sm_count(DeviceInfo{});
  RP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sm_census_kernel, kCensusBlock, 0));
  sm_census_kernel<<<std::max(per_sm, 1) * sms, kCensusBlock>>>(present.get(), arrived.get());
  RP_CUDA_CHECK(cudaGetLastError());
  std::vector<std::uint32_t> flags(kMaxSmIds);
  RP_CUDA_CHECK(cudaMemcpy(flags.data(), present.get(), present.bytes(), cudaMemcpyDeviceToHost));
  std::vector<std::uint32_t> ids;
  for (std::uint32_t id = 0; id < kMaxSmIds; ++id)
    if (flags[id] != 0) ids.push_back(id);
  return ids;
}

std::unique_ptr<Confinement> confine_to_sms(int device, int sms) {
  if (sms <= 0) throw std::runtime_error("cannot run launches on " + std::to_string(sms) + " SMs");
#ifdef ROOFPROBE_GREEN_CONTEXTS
  const Driver& d = driver();
  if (!d.why_not.empty()) throw std::runtime_error("cannot run launches on part of the GPU: " + d.why_not);
  RP_CUDA_CHECK(cudaSetDevice(device));  // the context to go back to is the device's primary one
  CUdevice dev{};
  CUdevResource all = sm_resource(d, device, dev);
  const int total = static_cast<int>(all.sm.smCount);
  if (sms >= total) return std::make_unique<WholeDevice>(total);
  CUdevResource group = split_resource(d, all, sms);
  const int granted = static_cast<int>(group.sm.smCount);
  if (granted >= total) return std::make_unique<WholeDevice>(total);
  CUdevResourceDesc desc{};
  check(d.generate_desc(&desc, &group, 1), "cuDevResourceGenerateDesc");
  CUcontext previous{};
  check(d.get_current(&previous), "cuCtxGetCurrent");
  CUgreenCtx green{};
  check(d.create(&green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM), "cuGreenCtxCreate");
  std::unique_ptr<GreenConfinement> handle;
  try {
    handle = std::make_unique<GreenConfinement>(d, green, previous, granted);
  } catch (...) {
    (void)d.destroy(green);
    throw;
  }
  handle->make_current();
  // A partition that launches would overflow (the documented cases: MPS thread percentages,
  // dynamic parallelism on 9.x) measures another share than it names.
  const std::vector<std::uint32_t> ids = sm_ids_in_use(granted);
  if (static_cast<int>(ids.size()) > granted)
    throw std::runtime_error("green context of " + std::to_string(granted) + " SMs ran blocks on " +
                             std::to_string(ids.size()) + " SMs");
  return handle;
#else
  (void)device;
  throw std::runtime_error(std::string("cannot run launches on part of the GPU: ") + kNoGreenContexts);
#endif
}

}  // namespace roofprobe::cuda
