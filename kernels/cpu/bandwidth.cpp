// CPU bandwidth probe: streams a working set split into per-thread contiguous chunks (each
// first-touched by its thread) in one of three modes, many passes per launch:
//   read  sum of every element (8 SIMD accumulators)          bytes = 8 n per pass
//   rmw   a[i] = a[i] + 1, ERT's read-modify-write update     bytes = 16 n per pass
//   copy  b[i] = a[i], direction alternating every pass       bytes = 16 n per pass (no
//         write-allocate counted, as likwid-bench counts)
// Every launch is verified: read sums are exact (multiples of 1/8), rmw values are init + passes.
#include <omp.h>

#include <cstring>
#include <sstream>
#include <vector>

#include "kernels/common/probe.hpp"
#include "kernels/cpu/cpu_common.hpp"

namespace roofprobe::cpu {
namespace {

using V = Vec<double>;
constexpr int kLanesF64 = kLanes<double>;
constexpr int kAccumulators = 8;  // add latency x pipes on current cores
constexpr std::size_t kBlock = static_cast<std::size_t>(kAccumulators) * kLanesF64;

enum class Mode { Read, Rmw, Copy };

// Exact in binary floating point, so sums are predictable to the bit.
inline double initial_value(std::size_t i) { return 0.125 * static_cast<double>(i % 8); }

inline V load(const double* p) {
  V v;
  std::memcpy(&v, p, sizeof(V));
  return v;
}
inline void store(double* p, V v) { std::memcpy(p, &v, sizeof(V)); }

// All passes of one launch: the accumulators live across passes and are reduced once, so small
// (L1) chunks are not dominated by a horizontal sum per pass.
double read_passes(const double* data, Range r, std::int64_t reps) {
  V acc[kAccumulators] = {};
  double tail = 0;
  const std::size_t full_end = r.begin + (r.size() / kBlock) * kBlock;
  for (std::int64_t rep = 0; rep < reps; ++rep) {
    for (std::size_t i = r.begin; i < full_end; i += kBlock)
      for (int j = 0; j < kAccumulators; ++j) acc[j] += load(data + i + j * kLanesF64);
    for (std::size_t i = full_end; i < r.end; ++i) tail += data[i];
  }
  double sum = tail;
  for (int j = 0; j < kAccumulators; ++j)
    for (int l = 0; l < kLanesF64; ++l) sum += acc[j][l];
  return sum;
}

void rmw_pass(double* data, Range r) {
  const V one = broadcast<double>(1.0);
  const std::size_t full_end = r.begin + (r.size() / kBlock) * kBlock;
  for (std::size_t i = r.begin; i < full_end; i += kBlock)
    for (int j = 0; j < kAccumulators; ++j) store(data + i + j * kLanesF64, load(data + i + j * kLanesF64) + one);
  for (std::size_t i = full_end; i < r.end; ++i) data[i] += 1.0;
}

void copy_pass(const double* src, double* dst, Range r) {
  const std::size_t full_end = r.begin + (r.size() / kBlock) * kBlock;
  for (std::size_t i = r.begin; i < full_end; i += kBlock)
    for (int j = 0; j < kAccumulators; ++j) store(dst + i + j * kLanesF64, load(src + i + j * kLanesF64));
  for (std::size_t i = full_end; i < r.end; ++i) dst[i] = src[i];
}

class BandwidthPoint final : public PreparedPoint {
 public:
  BandwidthPoint(Mode mode, std::size_t working_set_bytes, int threads)
      : mode_(mode), threads_(threads), sums_(threads, 0.0) {
    // copy keeps two arrays inside the working set, the other modes one.
    std::size_t arrays = mode == Mode::Copy ? 2 : 1;
    n_ = working_set_bytes / sizeof(double) / arrays;
    a_ = allocate_untouched<double>(n_);
    first_touch(a_.get(), n_, threads_, initial_value);
    if (mode == Mode::Copy) {
      b_ = allocate_untouched<double>(n_);
      first_touch(b_.get(), n_, threads_, [](std::size_t) { return -1.0; });
    }
  }

  Work work() const override {
    Work w;
    double bytes = static_cast<double>(n_ * sizeof(double)) * reps_;
    w.bytes_read = bytes;
    w.bytes_written = mode_ == Mode::Read ? 0 : bytes;
    w.transactions = w.bytes() / 32.0;
    w.working_set_bytes = static_cast<double>(n_ * sizeof(double) * (mode_ == Mode::Copy ? 2 : 1));
    return w;
  }

  void launch() override {
    double* a = a_.get();
    double* b = b_.get();
    double* sums = sums_.data();
    const std::size_t n = n_;
    const std::int64_t reps = reps_;
    const std::int64_t done = total_reps_;
    const Mode mode = mode_;
#pragma omp parallel num_threads(threads_)
    {
      const int t = omp_get_thread_num();
      const Range r = chunk_of(n, omp_get_num_threads(), t, kLineElements<double>);
      if (mode == Mode::Read) {
        sums[t] = read_passes(a, r, reps);  // the launch's result, checked by verify()
      } else {
        for (std::int64_t rep = 0; rep < reps; ++rep) {
          if (mode == Mode::Rmw)
            rmw_pass(a, r);
          else if ((done + rep) % 2 == 0)
            copy_pass(a, b, r);
          else
            copy_pass(b, a, r);
        }
      }
    }
    total_reps_ += reps_;
  }

  Check verify() override {
    switch (mode_) {
      case Mode::Read: return verify_read();
      case Mode::Rmw: return verify_values(a_.get(), static_cast<double>(total_reps_));
      case Mode::Copy: {
        Check c = verify_values(a_.get(), 0);
        return c.ok ? verify_values(b_.get(), 0) : c;
      }
    }
    return Check{false, "unknown mode"};
  }

  void set_repetitions(std::int64_t reps) override { reps_ = reps; }
  std::int64_t repetitions() const override { return reps_; }

 private:
  Check verify_read() const {
    for (int t = 0; t < threads_; ++t) {
      Range r = chunk_of(n_, threads_, t, kLineElements<double>);
      double chunk = 0;
      for (std::size_t i = r.begin; i < r.end; ++i) chunk += initial_value(i);
      double expected = chunk * static_cast<double>(reps_);
      if (sums_[t] != expected) {
        std::ostringstream msg;
        msg.precision(17);
        msg << "thread " << t << " sum: expected " << expected << ", got " << sums_[t];
        return Check{false, msg.str()};
      }
    }
    return Check{};
  }

  Check verify_values(const double* data, double offset) const {
    for (std::size_t i = 0; i < n_; ++i) {
      double expected = initial_value(i) + offset;
      if (data[i] != expected) {
        std::ostringstream msg;
        msg.precision(17);
        msg << "element " << i << ": expected " << expected << ", got " << data[i];
        return Check{false, msg.str()};
      }
    }
    return Check{};
  }

  Mode mode_;
  int threads_;
  std::size_t n_ = 0;
  Buffer<double> a_, b_;
  std::vector<double> sums_;
  std::int64_t reps_ = 1;
  std::int64_t total_reps_ = 0;
};

class CpuBandwidthProbe final : public Probe {
 public:
  CpuBandwidthProbe() {
    info_.name = "bandwidth";
    info_.backend = "cpu";
    info_.description =
        "Working-set sweep of read, read-modify-write (ERT) and copy streams over per-thread "
        "first-touched chunks; GB/s and 32-byte transactions per level";
    Axis mode{"mode", AxisType::Choice, "read | rmw (ERT update) | copy", {"read", "rmw", "copy"}};
    mode.defaults = {"read", "rmw", "copy"};
    Axis ws{"working_set_bytes", AxisType::Bytes, "bytes streamed by all threads together"};
    ws.min = 1024;
    ws.max = 1ull << 40;
    for (std::uint64_t s = 4096; s <= (1ull << 30); s *= 2) ws.defaults.push_back(std::to_string(s));
    info_.axes = {mode, ws};
    FeedSpec feed;
    feed.kind = FeedKind::MemoryLevels;
    feed.metric = "gbs";
    feed.x_axis = "working_set_bytes";
    feed.series_axes = {"mode"};
    feed.primary_series = "mode=read";
    info_.feeds = {feed};
  }

  const ProbeInfo& info() const override { return info_; }

  std::uint64_t footprint_bytes(const Params& p) const override {
    return static_cast<std::uint64_t>(param_int(p, "working_set_bytes"));
  }

  std::unique_ptr<PreparedPoint> prepare(const Params& p, const DeviceInfo& device) const override {
    const std::string& m = param_text(p, "mode");
    Mode mode = m == "read" ? Mode::Read : m == "rmw" ? Mode::Rmw : Mode::Copy;
    auto bytes = static_cast<std::size_t>(param_int(p, "working_set_bytes"));
    return std::make_unique<BandwidthPoint>(mode, bytes, device.threads > 0 ? device.threads : 1);
  }

 private:
  ProbeInfo info_;
};

RP_REGISTER_PROBE(CpuBandwidthProbe);

}  // namespace
}  // namespace roofprobe::cpu
