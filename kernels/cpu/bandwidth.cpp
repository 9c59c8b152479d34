// CPU bandwidth probe: streams a working set split into per-thread contiguous chunks (each
// first-touched by its thread) in one of five modes, many passes per launch, each the kernel
// of likwid-bench named beside it (bytes counted as likwid counts them: no write-allocate):
//   read      checksum of every element (XOR, see below)       likwid load       8 B/element
//   rmw       a[i] = a[i] + 1, ERT's read-modify-write        likwid update    16 B/element
//   copy      b[i] = a[i], direction alternating every pass   likwid copy      16 B/element
//   write     a[i] = pass number                              likwid store      8 B/element
//   write_nt  the same with non-temporal (streaming) stores   likwid store_mem  8 B/element
// Loops are likwid's: aligned vector loads/stores of `vector_bits` (512/256/128 as the build
// allows: likwid's _avx512/_avx/_sse forms), 4 vectors per iteration (read: 16, into 8
// accumulators), one OpenMP region per launch with every pass inside it, timed from a barrier
// that starts all threads together.
// read consumes what it loads with the cheapest exact operation: a bitwise XOR of two loaded
// vectors into an accumulator, one three-input logic instruction (vpternlogq) per two vectors
// with AVX-512. likwid's load kernel only loads; a sum (one add per vector) kept both of a
// Sapphire Rapids core's 512-bit ALU ports busy and read L1 at 0.73 of likwid's rate, the XOR at
// 0.93 (2026-11-25, one thread, 24 KiB). Each pass ends with a rotation of the accumulators, so
// passes do not cancel (x ^ x = 0) and a skipped or repeated one shows.
// Every launch is verified: the read checksum is predicted on the host, rmw values are init +
// passes, copy leaves both arrays at their initial values, write leaves the last pass number.
#include <omp.h>

#include <cstdint>
#include <cstring>
#include <sstream>
#include <vector>

#include "kernels/contract/probe.hpp"
#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cpu/read_checksum.hpp"
#include "kernels/cpu/stream_vec.hpp"

namespace roofprobe::cpu {
namespace {

constexpr int kAccumulators = 8;    // read: XOR accumulators, two loaded vectors each per step
constexpr std::size_t kUnroll = 4;  // the other modes: vectors per iteration, as likwid-bench

template <class V>
inline constexpr std::size_t kLanesOf = sizeof(V) / sizeof(double);

enum class Mode { Read, Rmw, Copy, Write, WriteNt };

struct ModeInfo {
  Mode mode;
  const char* name;
  const char* likwid;  // the likwid-bench kernel that does the same (its _avx / _avx512 forms)
  int arrays;          // arrays inside the working set
  int read_streams;    // bytes per element read and written, per array element, as likwid counts
  int write_streams;
};

constexpr ModeInfo kModes[] = {
    {Mode::Read, "read", "load", 1, 1, 0},
    {Mode::Rmw, "rmw", "update", 1, 1, 1},
    {Mode::Copy, "copy", "copy", 2, 1, 1},
    {Mode::Write, "write", "store", 1, 0, 1},
    {Mode::WriteNt, "write_nt", "store_mem", 1, 0, 1},
};

const ModeInfo& mode_info(const std::string& name) {
  for (const ModeInfo& m : kModes)
    if (name == m.name) return m;
  throw std::invalid_argument("bandwidth mode '" + name + "' is not known");
}

// 20-bit integers (exact doubles, so rmw's + 1 per pass stays exact), scattered by a
// multiplicative hash so that the read checksum of a chunk is not 0 by symmetry (values repeat
// past 2^20 elements, but not in step with the chunks).
inline double initial_value(std::size_t i) {
  return static_cast<double>((static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull) >> 44);
}

// The read checksum of a chunk after `reps` passes (read_checksum.hpp).
inline std::uint64_t expected_read_checksum(Range r, std::int64_t reps) {
  std::uint64_t pass = 0;
  for (std::size_t i = r.begin; i < r.end; ++i) pass ^= bits_of(initial_value(i));
  return read_checksum_after(pass, reps);
}

// The unsigned 64-bit integer vector of V's size: V's bits for the XOR and the rotation.
template <std::size_t Bytes>
struct BitsVector {
  typedef unsigned long long type __attribute__((vector_size(Bytes)));
};
template <class V>
using BitsOf = typename BitsVector<sizeof(V)>::type;

// [r.begin, end) in whole unrolled blocks; the rest element by element.
inline std::size_t block_end(Range r, std::size_t block) { return r.begin + (r.size() / block) * block; }

// All passes of one launch: the accumulators live across passes and are folded once, so small
// (L1) chunks are not dominated by a horizontal reduction per pass.
template <class V>
std::uint64_t read_passes(const double* a, Range r, std::int64_t reps) {
  using Bits = BitsOf<V>;
  constexpr std::size_t lanes = kLanesOf<V>;
  constexpr std::size_t block = 2 * kAccumulators * lanes;  // two vectors per accumulator
  Bits acc[kAccumulators] = {};
  std::uint64_t tail = 0;
  const std::size_t end = block_end(r, block);
  for (std::int64_t rep = 0; rep < reps; ++rep) {
    for (std::size_t i = r.begin; i < end; i += block)
      for (int j = 0; j < kAccumulators; ++j)  // a ^ x ^ y: one vpternlogq with AVX-512
        acc[j] ^= reinterpret_cast<Bits>(vload<V>(a + i + 2 * j * lanes)) ^
                  reinterpret_cast<Bits>(vload<V>(a + i + (2 * j + 1) * lanes));
    for (std::size_t i = end; i < r.end; ++i) tail ^= bits_of(a[i]);
    for (int j = 0; j < kAccumulators; ++j) acc[j] = (acc[j] << 1) | (acc[j] >> 63);
    tail = rotate_left_1(tail);
  }
  std::uint64_t checksum = tail;
  for (int j = 0; j < kAccumulators; ++j)
    for (std::size_t l = 0; l < lanes; ++l) checksum ^= acc[j][l];
  return checksum;
}

template <class V>
void rmw_passes(double* a, Range r, std::int64_t reps) {
  constexpr std::size_t lanes = kLanesOf<V>;
  constexpr std::size_t block = kUnroll * lanes;
  const V one = vbroadcast<V>(1.0);
  const std::size_t end = block_end(r, block);
  for (std::int64_t rep = 0; rep < reps; ++rep) {
    for (std::size_t i = r.begin; i < end; i += block)
      for (std::size_t j = 0; j < kUnroll; ++j) vstore<V>(a + i + j * lanes, vload<V>(a + i + j * lanes) + one);
    for (std::size_t i = end; i < r.end; ++i) a[i] += 1.0;
  }
}

// Even passes copy a into b, odd passes b into a (`first` is the parity of the launch's first).
template <class V>
void copy_passes(double* a, double* b, Range r, std::int64_t reps, std::int64_t first) {
  constexpr std::size_t lanes = kLanesOf<V>;
  constexpr std::size_t block = kUnroll * lanes;
  const std::size_t end = block_end(r, block);
  for (std::int64_t rep = 0; rep < reps; ++rep) {
    const bool forward = (first + rep) % 2 == 0;
    const double* src = forward ? a : b;
    double* dst = forward ? b : a;
    for (std::size_t i = r.begin; i < end; i += block)
      for (std::size_t j = 0; j < kUnroll; ++j) vstore<V>(dst + i + j * lanes, vload<V>(src + i + j * lanes));
    for (std::size_t i = end; i < r.end; ++i) dst[i] = src[i];
  }
}

// Pass p of all launches so far writes the value p + 1 everywhere (a stale pass is visible).
template <class V, bool Streaming>
void write_passes(double* a, Range r, std::int64_t reps, std::int64_t done) {
  constexpr std::size_t lanes = kLanesOf<V>;
  constexpr std::size_t block = kUnroll * lanes;
  const std::size_t end = block_end(r, block);
  for (std::int64_t rep = 0; rep < reps; ++rep) {
    const double value = static_cast<double>(done + rep + 1);
    const V v = vbroadcast<V>(value);
    for (std::size_t i = r.begin; i < end; i += block)
      for (std::size_t j = 0; j < kUnroll; ++j) {
        if constexpr (Streaming)
          vstream<V>(a + i + j * lanes, v);
        else
          vstore<V>(a + i + j * lanes, v);
      }
    for (std::size_t i = end; i < r.end; ++i) a[i] = value;
  }
  if constexpr (Streaming) stream_fence();
}

// One thread's share of a launch in vectors of type V.
template <class V>
void stream_chunk(Mode mode, double* a, double* b, Range r, std::int64_t reps, std::int64_t done,
                  std::uint64_t& checksum) {
  switch (mode) {
    case Mode::Read:
      checksum = read_passes<V>(a, r, reps);
      break;  // checked by verify()
    case Mode::Rmw:
      rmw_passes<V>(a, r, reps);
      break;
    case Mode::Copy:
      copy_passes<V>(a, b, r, reps, done);
      break;
    case Mode::Write:
      write_passes<V, false>(a, r, reps, done);
      break;
    case Mode::WriteNt:
      write_passes<V, true>(a, r, reps, done);
      break;
  }
}

class BandwidthPoint final : public PreparedPoint {
 public:
  BandwidthPoint(const ModeInfo& mode, int vector_bits, std::size_t working_set_bytes, int threads)
      : mode_(mode), vector_bits_(vector_bits), threads_(threads), checksums_(threads, 0) {
    if (!with_stream_vector(vector_bits, [](auto) {}))
      throw std::invalid_argument("vector_bits " + std::to_string(vector_bits) + " is not available in this build");
    n_ = working_set_bytes / sizeof(double) / static_cast<std::size_t>(mode.arrays);
    a_ = allocate_untouched<double>(n_);
    first_touch(a_.get(), n_, threads_, initial_value);
    if (mode.arrays == 2) {
      b_ = allocate_untouched<double>(n_);  // -1 until the first pass copies a into it
      first_touch(b_.get(), n_, threads_, [](std::size_t) { return -1.0; });
    }
  }

  Work work() const override {
    Work w;
    const double per_stream = static_cast<double>(n_ * sizeof(double)) * static_cast<double>(reps_);
    w.bytes_read = per_stream * mode_.read_streams;
    w.bytes_written = per_stream * mode_.write_streams;
    w.transactions = w.bytes() / 32.0;
    w.working_set_bytes = static_cast<double>(n_ * sizeof(double) * static_cast<std::size_t>(mode_.arrays));
    return w;
  }

  void launch() override {
    double* a = a_.get();
    double* b = b_.get();
    std::uint64_t* checksums = checksums_.data();
    const std::size_t n = n_;
    const std::int64_t reps = reps_;
    const std::int64_t done = total_reps_;
    const Mode mode = mode_.mode;
    with_stream_vector(vector_bits_, [&](auto vector) {
      using V = decltype(vector);
      parallel_seconds_ = timed_parallel(threads_, [&](int t, int threads) {
        stream_chunk<V>(mode, a, b, chunk_of(n, threads, t, kLineElements<double>), reps, done, checksums[t]);
      });
    });
    total_reps_ += reps_;
    launched_reps_ = reps_;
  }

  double parallel_seconds() const override { return parallel_seconds_; }

  Check verify() override {
    const double passes = static_cast<double>(total_reps_);
    switch (mode_.mode) {
      case Mode::Read:
        return verify_read();
      case Mode::Rmw:
        return verify_values(a_.get(), [&](std::size_t i) { return initial_value(i) + passes; });
      case Mode::Copy: {
        Check c = verify_values(a_.get(), initial_value);
        return c.ok ? verify_values(b_.get(), initial_value) : c;
      }
      case Mode::Write:
      case Mode::WriteNt:
        return verify_values(a_.get(), [&](std::size_t) { return passes; });
    }
    return Check{false, "unknown mode"};
  }

  void set_repetitions(std::int64_t reps) override { reps_ = reps; }
  std::int64_t repetitions() const override { return reps_; }

 private:
  Check verify_read() const {
    if (launched_reps_ < 0) return Check{false, "read: verify() before any launch"};
    for (int t = 0; t < threads_; ++t) {
      const std::uint64_t expected =
          expected_read_checksum(chunk_of(n_, threads_, t, kLineElements<double>), launched_reps_);
      if (checksums_[t] != expected) {
        std::ostringstream msg;
        msg << "thread " << t << " read checksum: expected 0x" << std::hex << expected << ", got 0x" << checksums_[t];
        return Check{false, msg.str()};
      }
    }
    return Check{};
  }

  template <class Expected>
  Check verify_values(const double* data, Expected expected) const {
    for (std::size_t i = 0; i < n_; ++i) {
      if (data[i] != expected(i)) {
        std::ostringstream msg;
        msg.precision(17);
        msg << "element " << i << ": expected " << expected(i) << ", got " << data[i];
        return Check{false, msg.str()};
      }
    }
    return Check{};
  }

  const ModeInfo& mode_;
  int vector_bits_;
  int threads_;
  std::size_t n_ = 0;
  Buffer<double> a_, b_;
  std::vector<std::uint64_t> checksums_;  // read: each thread's checksum of the latest launch
  std::int64_t reps_ = 1;
  std::int64_t launched_reps_ = -1;  // passes of the latest launch (read: what its checksums hold)
  std::int64_t total_reps_ = 0;
  double parallel_seconds_ = 0;
};

class CpuBandwidthProbe final : public Probe {
 public:
  CpuBandwidthProbe() {
    info_.name = "bandwidth";
    info_.backend = "cpu";
    info_.description =
        "Working-set sweep of read, read-modify-write (ERT), copy, write and non-temporal write "
        "streams (likwid-bench load/update/copy/store/store_mem) over per-thread first-touched "
        "chunks; GB/s and 32-byte transactions per level";
    Axis mode{"mode",
              AxisType::Choice,
              "read (likwid load) | rmw (ERT, likwid update) | copy | write (likwid store) | "
              "write_nt (non-temporal, likwid store_mem)",
              {}};
    for (const ModeInfo& m : kModes) mode.choices.push_back(m.name);
    mode.defaults = mode.choices;
    // Every width this build has; by default the widest and, where that is 512, also 256 (see
    // stream_vec.hpp). Not a series axis: per size the fitter keeps the faster width.
    Axis width{"vector_bits", AxisType::Choice, "SIMD width of the loads and stores", {}};
    for (int bits : stream_vector_bits()) width.choices.push_back(std::to_string(bits));
    width.defaults = {width.choices.front()};
    if (width.choices.front() == "512") width.defaults.push_back("256");
    Axis ws{"working_set_bytes", AxisType::Bytes, "bytes streamed by all threads together"};
    ws.min = 1024;
    ws.max = 1ull << 40;
    for (std::uint64_t s = 4096; s <= (1ull << 30); s *= 2) ws.defaults.push_back(std::to_string(s));
    info_.axes = {mode, width, ws};
    FeedSpec feed;
    feed.kind = FeedKind::MemoryLevels;
    feed.metric = "gbs";
    feed.x_axis = "working_set_bytes";
    feed.series_axes = {"mode"};  // every mode its own series: mode=read, ..., mode=write_nt
    feed.primary_series = "mode=read";
    info_.feeds = {feed};
    // The fleet's memory aggregate: every rank reading its largest working set at once.
    info_.fleet = {FleetAggregate::Kind::Memory, "", {{"mode", "read"}}, "working_set_bytes"};
  }

  const ProbeInfo& info() const override { return info_; }

  std::string unsupported_reason(const Params& p, const DeviceInfo&) const override {
    if (param_text(p, "mode") == "write_nt" && !kHasStreamingStore)
      return "write_nt: this build's ISA has no non-temporal store instruction";
    return {};
  }

  std::uint64_t footprint_bytes(const Params& p) const override {
    return static_cast<std::uint64_t>(param_int(p, "working_set_bytes"));
  }

  std::unique_ptr<PreparedPoint> prepare(const Params& p, const DeviceInfo& device) const override {
    const ModeInfo& mode = mode_info(param_text(p, "mode"));
    auto bytes = static_cast<std::size_t>(param_int(p, "working_set_bytes"));
    const int bits =
        p.count("vector_bits") ? static_cast<int>(param_int(p, "vector_bits")) : stream_vector_bits().front();
    return std::make_unique<BandwidthPoint>(mode, bits, bytes, device.threads > 0 ? device.threads : 1);
  }

 private:
  ProbeInfo info_;
};

RP_REGISTER_PROBE(CpuBandwidthProbe);

}  // namespace
}  // namespace roofprobe::cpu
