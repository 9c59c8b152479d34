// CPU bandwidth probe: streams a working set split into per-thread contiguous chunks (each
// first-touched by its thread, stored a page apart: kChunkGuardElements) in one of five modes,
// many passes per launch, each the kernel of likwid-bench named beside it (bytes counted as
// likwid counts them: no write-allocate):
//   read      loads every element, folds a quarter (below)     likwid load       8 B/element
//   rmw       loads every element and stores it in place       likwid update    16 B/element
//   copy      b[i] = a[i], direction alternating every pass   likwid copy      16 B/element
//   write     a[i] = pass number                              likwid store      8 B/element
//   write_nt  the same with non-temporal (streaming) stores   likwid store_mem  8 B/element
// Loops are likwid's: aligned vector loads/stores of `vector_bits` (512/256/128 as the build
// allows: likwid's _avx512/_avx/_sse forms), 4 vectors per iteration (read: 16), one
// OpenMP region per launch with every pass inside it, timed from a barrier that starts all
// threads together.
// likwid's load and update kernels compute nothing; any arithmetic in the loop costs L1 rate
// (Sapphire Rapids, one thread, 24 KiB, 512-bit: an update adding 1 to every vector ran at
// 0.84 of likwid's update, adding 1 to one vector in 4 or 8 still 0.93; a read XORing every
// vector 0.87 of its load). So the loops compute as little as their verification needs:
// - read keeps the vectors it does not fold live with an empty asm statement (the compiler must
//   load them, no instruction uses them) and XORs a quarter of them, a different quarter each
//   pass (read_checksum.hpp), two vectors per three-input logic instruction (vpternlogq);
// - rmw stores the 4 vectors of each block one position along (vector k into slot k - 1): loads
//   and stores only, and the data moves one position per pass, so the pass count shows.
// Every launch is verified: the read checksum is predicted on the host, rmw blocks are rotated by
// the number of passes (the elements after the last whole block, + 1 per pass), copy leaves both
// arrays at their initial values, write leaves the last pass number.
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

constexpr int kReadPairs = 8;  // read: vector pairs per block, each pass folds 2 of them
// rmw: vectors rotated together (a pass count off by a multiple hides). Not 8: with 8 vectors the
// compiler interleaves stores before the block's last loads, and two threads updated L1 at half
// their rate (Sapphire Rapids: 490 GB/s where 4 give 930).
constexpr std::size_t kRmwBlock = 4;
constexpr std::size_t kUnroll = 4;  // the other modes: vectors per iteration, as likwid-bench
static_assert(kReadPairs % kReadPhases == 0, "every phase folds as many pairs");

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

// [r.begin, end) in whole unrolled blocks; the rest element by element.
inline std::size_t block_end(Range r, std::size_t block) { return r.begin + (r.size() / block) * block; }

// The read checksum of a chunk after `reps` passes (read_checksum.hpp): pair j of each whole
// block of kReadPairs vector pairs is folded in phase j mod kReadPhases, the elements after the
// last whole block in every phase. Block by block, so that verifying a 1 GiB set costs no
// divisions per element.
inline std::uint64_t expected_read_checksum(Range r, std::size_t lanes, std::int64_t reps) {
  const std::size_t pair = 2 * lanes, block = kReadPairs * pair;
  const std::size_t end = block_end(r, block);
  std::uint64_t phase_xor[kReadPhases] = {};
  for (std::size_t start = r.begin; start < end; start += block)
    for (int j = 0; j < kReadPairs; ++j)
      for (std::size_t k = start + j * pair; k < start + (j + 1) * pair; ++k)
        phase_xor[j % kReadPhases] ^= bits_of(initial_value(k));
  std::uint64_t every_pass = 0;
  for (std::size_t i = end; i < r.end; ++i) every_pass ^= bits_of(initial_value(i));
  for (std::uint64_t& x : phase_xor) x ^= every_pass;
  return read_checksum_after(phase_xor, reps);
}

// Compares chunk r of rmw's array (`chunk`, indexed like the array) with what `passes` leave:
// in a whole block of kRmwBlock vectors, vector v holds the initial values of vector
// v + passes (cyclically); after the last whole block, each element is its initial value +
// passes. Returns the first element that differs, or r.end.
inline std::size_t first_rmw_mismatch(const double* chunk, Range r, std::size_t lanes, std::int64_t passes) {
  const std::size_t block = kRmwBlock * lanes;
  const std::size_t end = block_end(r, block);
  const auto shift = static_cast<std::size_t>(passes % static_cast<std::int64_t>(kRmwBlock));
  for (std::size_t start = r.begin; start < end; start += block)
    for (std::size_t v = 0; v < kRmwBlock; ++v) {
      const std::size_t source = start + (v + shift) % kRmwBlock * lanes;
      for (std::size_t l = 0; l < lanes; ++l)
        if (chunk[start + v * lanes + l] != initial_value(source + l)) return start + v * lanes + l;
    }
  for (std::size_t i = end; i < r.end; ++i)
    if (chunk[i] != initial_value(i) + static_cast<double>(passes)) return i;
  return r.end;
}

// The unsigned 64-bit integer vector of V's size: V's bits for the XOR and the rotation.
template <std::size_t Bytes>
struct BitsVector {
  typedef unsigned long long type __attribute__((vector_size(Bytes)));
};
template <class V>
using BitsOf = typename BitsVector<sizeof(V)>::type;

// One read pass over [begin, end) (whole blocks of kReadPairs vector pairs): the pairs of phase
// Phase are XORed into the accumulators, the others only loaded.
template <class V, int Phase>
inline void read_pass(const double* a, std::size_t begin, std::size_t end, BitsOf<V> (&acc)[kReadPairs / kReadPhases]) {
  using Bits = BitsOf<V>;
  constexpr std::size_t lanes = kLanesOf<V>;
  for (std::size_t i = begin; i < end; i += 2 * kReadPairs * lanes)
    for (int j = 0; j < kReadPairs; ++j) {
      Bits x = reinterpret_cast<Bits>(vload<V>(a + i + 2 * j * lanes));
      Bits y = reinterpret_cast<Bits>(vload<V>(a + i + (2 * j + 1) * lanes));
      if (j % kReadPhases == Phase) {
        acc[j / kReadPhases] ^= x ^ y;  // acc ^ x ^ y: one vpternlogq with AVX-512
      } else {
        keep_in_register(x);
        keep_in_register(y);
      }
    }
}

// All passes of one launch: the accumulators live across passes and are folded once, so small
// (L1) chunks are not dominated by a horizontal reduction per pass.
template <class V>
std::uint64_t read_passes(const double* a, Range r, std::int64_t reps) {
  using Bits = BitsOf<V>;
  static_assert(kReadPhases == 4, "one read_pass instance per phase");
  Bits acc[kReadPairs / kReadPhases] = {};
  std::uint64_t tail = 0;
  const std::size_t end = block_end(r, 2 * kReadPairs * kLanesOf<V>);
  for (std::int64_t rep = 0; rep < reps; ++rep) {
    switch (rep % kReadPhases) {
      case 0:
        read_pass<V, 0>(a, r.begin, end, acc);
        break;
      case 1:
        read_pass<V, 1>(a, r.begin, end, acc);
        break;
      case 2:
        read_pass<V, 2>(a, r.begin, end, acc);
        break;
      default:
        read_pass<V, 3>(a, r.begin, end, acc);
        break;
    }
    for (std::size_t i = end; i < r.end; ++i) tail ^= bits_of(a[i]);
    for (Bits& x : acc) x = (x << 1) | (x >> 63);
    tail = rotate_left_1(tail);
  }
  std::uint64_t checksum = tail;
  for (const Bits& x : acc)
    for (std::size_t l = 0; l < kLanesOf<V>; ++l) checksum ^= x[l];
  return checksum;
}

// Each pass loads every block of kRmwBlock vectors and stores vector k into slot k - 1 (the first
// into the last); the elements after the last whole block get + 1.
template <class V>
void rmw_passes(double* a, Range r, std::int64_t reps) {
  constexpr std::size_t lanes = kLanesOf<V>;
  constexpr std::size_t block = kRmwBlock * lanes;
  const std::size_t end = block_end(r, block);
  for (std::int64_t rep = 0; rep < reps; ++rep) {
    for (std::size_t i = r.begin; i < end; i += block) {
      V v[kRmwBlock];
      for (std::size_t j = 0; j < kRmwBlock; ++j) v[j] = vload<V>(a + i + j * lanes);
      for (std::size_t j = 0; j < kRmwBlock; ++j) vstore<V>(a + i + j * lanes, v[(j + 1) % kRmwBlock]);
    }
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
    const std::size_t stored = n_ + static_cast<std::size_t>(threads_) * kGuard;
    a_ = allocate_untouched<double>(stored);
    first_touch(a_.get(), n_, threads_, initial_value, kGuard);
    if (mode.arrays == 2) {
      b_ = allocate_untouched<double>(stored);  // -1 until the first pass copies a into it
      first_touch(
          b_.get(), n_, threads_, [](std::size_t) { return -1.0; }, kGuard);
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
        const std::size_t shift = static_cast<std::size_t>(t) * kGuard;  // where chunk t is stored
        stream_chunk<V>(mode, a + shift, b == nullptr ? nullptr : b + shift,
                        chunk_of(n, threads, t, kLineElements<double>), reps, done, checksums[t]);
      });
    });
    total_reps_ += reps_;
    launched_reps_ = reps_;
  }

  double parallel_seconds() const override { return parallel_seconds_; }

  Check verify() override {
    const auto passes = static_cast<double>(total_reps_);
    switch (mode_.mode) {
      case Mode::Read:
        return verify_read();
      case Mode::Rmw:
        return verify_rmw();
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
  std::size_t lanes() const { return static_cast<std::size_t>(vector_bits_) / 64; }

  Check verify_read() const {
    if (launched_reps_ < 0) return Check{false, "read: verify() before any launch"};
    for (int t = 0; t < threads_; ++t) {
      const std::uint64_t expected =
          expected_read_checksum(chunk_of(n_, threads_, t, kLineElements<double>), lanes(), launched_reps_);
      if (checksums_[t] != expected) {
        std::ostringstream msg;
        msg << "thread " << t << " read checksum: expected 0x" << std::hex << expected << ", got 0x" << checksums_[t];
        return Check{false, msg.str()};
      }
    }
    return Check{};
  }

  Check verify_rmw() const {
    for (int t = 0; t < threads_; ++t) {
      const Range r = chunk_of(n_, threads_, t, kLineElements<double>);
      const double* chunk = a_.get() + static_cast<std::size_t>(t) * kGuard;
      const std::size_t i = first_rmw_mismatch(chunk, r, lanes(), total_reps_);
      if (i != r.end) {
        std::ostringstream msg;
        msg.precision(17);
        msg << "rmw element " << i << " after " << total_reps_ << " passes: got " << chunk[i] << " (initial value "
            << initial_value(i) << ")";
        return Check{false, msg.str()};
      }
    }
    return Check{};
  }

  // Every element of every thread chunk against expected(i).
  template <class Expected>
  Check verify_values(const double* data, Expected expected) const {
    for (int t = 0; t < threads_; ++t) {
      const Range r = chunk_of(n_, threads_, t, kLineElements<double>);
      const double* chunk = data + static_cast<std::size_t>(t) * kGuard;
      for (std::size_t i = r.begin; i < r.end; ++i) {
        if (chunk[i] != expected(i)) {
          std::ostringstream msg;
          msg.precision(17);
          msg << "element " << i << ": expected " << expected(i) << ", got " << chunk[i];
          return Check{false, msg.str()};
        }
      }
    }
    return Check{};
  }

  static constexpr std::size_t kGuard = kChunkGuardElements<double>;  // between thread chunks

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
              "read (likwid load) | rmw (in place, likwid update) | copy | write (likwid store) | "
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

  // Each OpenMP thread streams its own chunk, so a device of fewer threads runs the point on
  // fewer cores.
  bool runs_on_fewer_workers() const override { return true; }

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
