// Probe "bandwidth" on the CUDA backend: streams a working set in the grid-stride pattern of
// kernels/cuda/backend/stream_pattern.hpp, `reps` passes per launch, in four modes (read, rmw, copy, write),
// with 32-, 64- or 128-bit accesses (`load_width`) and two cache operators (`cache_op`):
//   ca  default caching; each thread keeps its elements across passes, so a working set that
//       fits the SMs' L1s is served from L1 (the L1 plateau).
//   cg  ld.global.cg / st.global.cg (L2 only) and the block -> elements assignment rotated every
//       launch, so the data is spread over blocks across the whole chip: L2 up to its size, then
//       DRAM.
//   cs  cg with streaming stores (st.global.cs, evict-first), for rmw, copy and write (a cs read
//       does not exist: it has no stores).
//   cs_chunk  cs where each block streams its own contiguous chunk instead of the grid stride
//       (rmw, copy, write).
// Small read and write sets are accessed several times per pass (stream_accesses_per_pass) so
// that every thread of the grid has accesses in flight; rmw and copy issue a batch of loads
// before their stores. Swept over the working set, each mode x cache_op curve
// shows one plateau per memory level it reaches; the fitter fits each on its own (per size the
// best point across width and occupancy) and takes the fastest per level.
//
// The grid is `blocks_per_sm` (0: as many as the occupancy API allows) x SMs blocks of
// `threads_per_block` threads, so every SM streams.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/contract/probe.hpp"
#include "kernels/cuda/backend/stream_pattern.hpp"
#include "kernels/cuda/bandwidth/kernel.cuh"
#include "kernels/cuda/backend/cuda_support.hpp"
#include "kernels/cuda/backend/probe_decl.hpp"

namespace roofprobe::cuda {

RP_CUDA_CARVEOUT("bandwidth", Carveout::MaxL1);  // its ca curves measure L1: the largest one the SM has
namespace {

constexpr double kTargetLaunchSeconds = 2e-3;
// Words verify() copies back at a time (16 MiB).
constexpr std::size_t kVerifyChunkWords = std::size_t{1} << 22;

// Axis defaults, also used where a caller leaves an axis out (the GPU tests name only the axes
// they vary).
constexpr const char* kDefaultCacheOp = "ca";
constexpr const char* kDefaultLoadWidth = "128";
constexpr int kDefaultBlocksPerSm = 0;
constexpr int kDefaultThreadsPerBlock = kStreamBlock;

// Word k of an array holds stream_word_initial(k): the same content for every load width.
__global__ void stream_init_kernel(std::uint32_t* words, std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < count; k += stride) {
    words[k] = stream_word_initial(k);
  }
}

// One kernel instantiation, seen through width-independent signatures: the arrays are words,
// reinterpreted as the width's element type at launch (cudaMalloc aligns them to 256 bytes).
struct StreamKernel {
  void (*launch)(int blocks, int threads, std::uint32_t* a, std::uint32_t* b, std::size_t n, std::size_t accesses,
                 int reps, unsigned rotation, std::uint32_t* sums);
  int (*max_blocks_per_sm)(int threads);
};

template <StreamMode Mode, int Bits, StreamCache Cache>
void launch_stream(int blocks, int threads, std::uint32_t* a, std::uint32_t* b, std::size_t n, std::size_t accesses,
                   int reps, unsigned rotation, std::uint32_t* sums) {
  using V = StreamVector<Bits>;
  // pass_shift 0: every pass over the same elements (kernel.cuh says why it is a parameter).
  stream_kernel<Mode, Bits, Cache>
      <<<blocks, threads>>>(reinterpret_cast<V*>(a), reinterpret_cast<V*>(b), n, accesses, reps, rotation, 0u, sums);
}

template <StreamMode Mode, int Bits, StreamCache Cache>
int stream_max_blocks_per_sm(int threads) {
  set_carveout(stream_kernel<Mode, Bits, Cache>, carveout_of("bandwidth"), threads);  // before the occupancy it decides
  int per_sm = 0;
  RP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, stream_kernel<Mode, Bits, Cache>, threads, 0));
  return per_sm;
}

template <StreamMode Mode, int Bits, StreamCache Cache>
StreamKernel stream_kernel_entry() {
  return {&launch_stream<Mode, Bits, Cache>, &stream_max_blocks_per_sm<Mode, Bits, Cache>};
}

template <StreamMode Mode, int Bits>
StreamKernel stream_kernel_for(StreamCache cache) {
  switch (cache) {
    case StreamCache::Ca:
      return stream_kernel_entry<Mode, Bits, StreamCache::Ca>();
    case StreamCache::Cg:
      return stream_kernel_entry<Mode, Bits, StreamCache::Cg>();
    case StreamCache::Cs:
      if constexpr (Mode != StreamMode::Read) return stream_kernel_entry<Mode, Bits, StreamCache::Cs>();
      break;
    case StreamCache::CsChunk:
      if constexpr (Mode != StreamMode::Read) return stream_kernel_entry<Mode, Bits, StreamCache::CsChunk>();
      break;
  }
  throw std::invalid_argument("bandwidth: the read has no cache_op=cs or cs_chunk kernel (store streams)");
}

template <StreamMode Mode>
StreamKernel stream_kernel_for(int bits, StreamCache cache) {
  switch (bits) {
    case 32:
      return stream_kernel_for<Mode, 32>(cache);
    case 64:
      return stream_kernel_for<Mode, 64>(cache);
    case 128:
      return stream_kernel_for<Mode, 128>(cache);
  }
  throw std::invalid_argument("bandwidth: load_width " + std::to_string(bits) + " is not 32, 64 or 128");
}

StreamKernel stream_kernel_for(StreamMode mode, int bits, StreamCache cache) {
  switch (mode) {
    case StreamMode::Read:
      return stream_kernel_for<StreamMode::Read>(bits, cache);
    case StreamMode::Rmw:
      return stream_kernel_for<StreamMode::Rmw>(bits, cache);
    case StreamMode::Copy:
      return stream_kernel_for<StreamMode::Copy>(bits, cache);
    case StreamMode::Write:
      return stream_kernel_for<StreamMode::Write>(bits, cache);
  }
  throw std::logic_error("bandwidth: unknown mode");
}

StreamMode parse_mode(const std::string& text) {
  if (text == "read") return StreamMode::Read;
  if (text == "rmw") return StreamMode::Rmw;
  if (text == "copy") return StreamMode::Copy;
  if (text == "write") return StreamMode::Write;
  throw std::invalid_argument("bandwidth: mode '" + text + "' is not read, rmw, copy or write");
}

StreamCache parse_cache(const std::string& text) {
  if (text == "ca") return StreamCache::Ca;
  if (text == "cg") return StreamCache::Cg;
  if (text == "cs") return StreamCache::Cs;
  if (text == "cs_chunk") return StreamCache::CsChunk;
  throw std::invalid_argument("bandwidth: cache_op '" + text + "' is not ca, cg, cs or cs_chunk");
}

// A point's parameters, with the axis defaults for the axes a caller left out.
struct StreamParams {
  StreamMode mode = StreamMode::Read;
  StreamCache cache = StreamCache::Ca;
  int load_width_bits = 128;
  int blocks_per_sm = 0;  // 0: the occupancy API's maximum
  int threads_per_block = kStreamBlock;
  std::uint64_t working_set = 0;
  std::string text;  // for messages
};

std::string param_or(const Params& p, const char* axis, const std::string& fallback) {
  auto it = p.find(axis);
  return it == p.end() ? fallback : it->second;
}

StreamParams parse_params(const Params& p) {
  StreamParams s;
  s.text = params_to_string(p);
  s.mode = parse_mode(param_text(p, "mode"));
  s.cache = parse_cache(param_or(p, "cache_op", kDefaultCacheOp));
  Params numbers = p;  // param_int's checks and messages, defaults filled in
  numbers.emplace("load_width", kDefaultLoadWidth);
  numbers.emplace("blocks_per_sm", std::to_string(kDefaultBlocksPerSm));
  numbers.emplace("threads_per_block", std::to_string(kDefaultThreadsPerBlock));
  s.load_width_bits = static_cast<int>(param_int(numbers, "load_width"));
  s.blocks_per_sm = static_cast<int>(param_int(numbers, "blocks_per_sm"));
  s.threads_per_block = static_cast<int>(param_int(numbers, "threads_per_block"));
  s.working_set = static_cast<std::uint64_t>(param_int(p, "working_set_bytes"));
  return s;
}

// Why the parameters cannot describe a launch (empty: they can). Device-independent.
std::string invalid_reason(const StreamParams& s) {
  if (s.load_width_bits != 32 && s.load_width_bits != 64 && s.load_width_bits != 128)
    return "load_width=" + std::to_string(s.load_width_bits) + " is not 32, 64 or 128";
  if (s.threads_per_block < 32 || s.threads_per_block > kStreamMaxBlock || s.threads_per_block % 32 != 0)
    return "threads_per_block=" + std::to_string(s.threads_per_block) + " is not a multiple of 32 in [32, " +
           std::to_string(kStreamMaxBlock) + "] (whole warps: the sector accounting assumes them)";
  if (s.blocks_per_sm < 0) return "blocks_per_sm=" + std::to_string(s.blocks_per_sm) + " is negative";
  if (!stream_kernel_exists(s.mode, s.cache))
    return "cache_op=cs and cs_chunk are store streams: the read has no such kernel";
  return {};
}

// Blocks per SM the point launches; throws std::invalid_argument when blocks_per_sm asks for
// more than an SM can hold of this kernel at this block size (the launch would serialise into
// several waves and no longer measure a full, resident grid).
int blocks_per_sm_for(const StreamParams& s, const StreamKernel& kernel) {
  const int max_per_sm = kernel.max_blocks_per_sm(s.threads_per_block);
  if (max_per_sm < 1) {
    throw std::invalid_argument("bandwidth " + s.text + ": not one block of " + std::to_string(s.threads_per_block) +
                                " threads fits an SM (occupancy API)");
  }
  if (s.blocks_per_sm == 0) return max_per_sm;
  if (s.blocks_per_sm > max_per_sm) {
    throw std::invalid_argument("bandwidth " + s.text + ": blocks_per_sm=" + std::to_string(s.blocks_per_sm) +
                                " exceeds the " + std::to_string(max_per_sm) + " blocks of " +
                                std::to_string(s.threads_per_block) + " threads an SM holds (occupancy API)");
  }
  return s.blocks_per_sm;
}

// A rough rate for the level the working set lands in, only to size `reps` (the engine measures
// and adjusts): L1 at 128 B/clk/SM while the set fits half the SMs' L1s and ca keeps it there,
// then 4x DRAM while it fits L2, then DRAM; narrower accesses and partial occupancy move fewer
// bytes per instruction, scaled down accordingly.
double estimated_gbs(const DeviceInfo& dev, const StreamParams& s, int blocks_per_sm, int max_blocks_per_sm) {
  const double dram = extra_number(dev, kExtraMemoryPeakGbs, 500.0);
  const double mhz = dev.clock_measured_mhz > 0 ? dev.clock_measured_mhz : 1500.0;
  const auto l1_total = static_cast<double>(cache_bytes(dev, "L1"));
  const auto l2 = static_cast<double>(cache_bytes(dev, "L2"));
  const double ws = static_cast<double>(s.working_set);
  double gbs = dram;
  if (s.cache == StreamCache::Ca && s.mode != StreamMode::Write && ws <= l1_total / 2)  // stores go to L2
    gbs = std::max(dram, dev.compute_units * 128.0 * mhz * 1e-3);
  else if (ws <= l2)
    gbs = 4 * dram;
  const double width_share = std::max(0.25, s.load_width_bits / 128.0);
  const double occupancy_share = std::min(1.0, static_cast<double>(blocks_per_sm) / std::max(1, max_blocks_per_sm));
  return gbs * width_share * std::max(0.125, occupancy_share);
}

class StreamPoint final : public PreparedPoint {
 public:
  StreamPoint(const StreamParams& s, const DeviceInfo& dev)
      : mode_(s.mode),
        cache_(s.cache),
        element_bytes_(stream_element_bytes(s.load_width_bits)),
        words_per_element_(static_cast<std::size_t>(stream_words_per_element(s.load_width_bits))),
        kernel_(stream_kernel_for(s.mode, s.load_width_bits, s.cache)),
        n_(stream_elements(s.mode, s.working_set, element_bytes_)),
        threads_per_block_(s.threads_per_block) {
    if (n_ == 0) {
      throw std::invalid_argument("bandwidth " + s.text + ": working set smaller than one element per array");
    }
    use_selected_device();
    const int per_sm = blocks_per_sm_for(s, kernel_);
    blocks_ = per_sm * sm_count(dev);
    accesses_ = stream_accesses_per_pass(
        mode_, cache_, n_, static_cast<std::size_t>(blocks_) * static_cast<std::size_t>(threads_per_block_),
        element_bytes_);
    const StreamBytes pass = stream_bytes_per_launch(mode_, accesses_, element_bytes_, 1);
    const double gbs = estimated_gbs(dev, s, per_sm, kernel_.max_blocks_per_sm(s.threads_per_block));
    set_repetitions(reps_for((pass.read + pass.written) / (gbs * 1e9), kTargetLaunchSeconds));
    allocate_and_fill();
  }

  Work work() const override {
    const StreamBytes bytes = stream_bytes_per_launch(mode_, accesses_, element_bytes_, reps_);
    Work w;
    w.bytes_read = bytes.read;
    w.bytes_written = bytes.written;
    // Coalesced accesses of every width: each 32-byte sector of an array is touched by one warp
    // request per pass and access round (kernels/cuda/backend/stream_pattern.hpp; bytes / 32 for every 1 KiB-multiple
    // working set). The working set stays the distinct bytes, n elements per array.
    w.transactions = stream_sectors_per_launch(mode_, accesses_, element_bytes_, reps_);
    w.working_set_bytes = static_cast<double>(n_ * element_bytes_) * (mode_ == StreamMode::Copy ? 2 : 1);
    w.underfilled = accesses_ < threads();
    return w;
  }

  void launch() override {
    kernel_.launch(blocks_, threads_per_block_, a_.get(), b_.get(), n_, accesses_, reps_, rotation_, sums_.get());
    RP_CUDA_CHECK(cudaGetLastError());
    last_launch_reps_ = reps_;
    passes_done_ += reps_;
    // cg, cs, cs_chunk: the next launch starts one block further on (ca ignores the rotation).
    if (cache_ != StreamCache::Ca) rotation_ = (rotation_ + 1) % static_cast<unsigned>(blocks_);
  }

  // Copy keeps an even count, so every launch starts with a -> b and ends with the data in a.
  void set_repetitions(std::int64_t reps) override {
    reps_ = clamp_reps(reps);
    if (mode_ == StreamMode::Copy) reps_ += reps_ % 2;
  }
  std::int64_t repetitions() const override { return reps_; }

  Check verify() override {
    RP_CUDA_CHECK(cudaDeviceSynchronize());
    if (passes_done_ == 0) return {};
    const long long passes = passes_done_;
    switch (mode_) {
      case StreamMode::Read:
        return verify_read();
      case StreamMode::Rmw:
        return verify_array(a_, "a", passes);
      case StreamMode::Copy: {
        Check c = verify_array(a_, "a", passes);
        return c.ok ? verify_array(b_, "b", passes - 1) : c;
      }
      case StreamMode::Write:  // each launch overwrites: the words hold what its last pass stored
        return verify_array(a_, "a", last_launch_reps_);
    }
    return {};
  }

 private:
  std::size_t words() const { return n_ * words_per_element_; }
  std::size_t threads() const {
    return static_cast<std::size_t>(blocks_) * static_cast<std::size_t>(threads_per_block_);
  }

  void allocate_and_fill() {
    a_ = DeviceBuffer<std::uint32_t>(words());
    if (mode_ == StreamMode::Copy) {
      b_ = DeviceBuffer<std::uint32_t>(words());
      RP_CUDA_CHECK(cudaMemset(b_.get(), 0, b_.bytes()));
    }
    sums_ = DeviceBuffer<std::uint32_t>(static_cast<std::size_t>(blocks_));
    RP_CUDA_CHECK(cudaMemset(sums_.get(), 0, sums_.bytes()));
    stream_init_kernel<<<1024, 256>>>(a_.get(), words());
    RP_CUDA_CHECK(cudaGetLastError());
    RP_CUDA_CHECK(cudaDeviceSynchronize());
  }

  // The block sums of the last launch add up to its reps x (sum of all words), modulo 2^32.
  Check verify_read() const {
    std::vector<std::uint32_t> sums(sums_.size());
    RP_CUDA_CHECK(cudaMemcpy(sums.data(), sums_.get(), sums_.bytes(), cudaMemcpyDeviceToHost));
    std::uint32_t total = 0;
    for (std::uint32_t s : sums) total += s;
    const std::uint32_t want =
        static_cast<std::uint32_t>(last_launch_reps_) * stream_read_pass_sum(n_, accesses_, words_per_element_);
    if (total == want) return {};
    return Check{false, "read checksum of the last launch: expected " + std::to_string(want) + ", got " +
                            std::to_string(total) + " (" + std::to_string(last_launch_reps_) + " passes of " +
                            std::to_string(accesses_) + " accesses over " + std::to_string(n_) + " elements of " +
                            std::to_string(element_bytes_) + " bytes)"};
  }

  // Every word of `array` must be its initial value + `passes` (each rmw/copy pass adds 1; the
  // write kernel's last pass stored initial + its pass number), mod 2^32.
  // Checks the whole array, chunk by chunk, so a missed or doubled element anywhere shows.
  Check verify_array(const DeviceBuffer<std::uint32_t>& array, const char* name, long long passes) const {
    const auto delta = static_cast<std::uint32_t>(passes);
    const std::size_t total = words();
    std::vector<std::uint32_t> host(std::min(kVerifyChunkWords, total));
    for (std::size_t first = 0; first < total; first += host.size()) {
      const std::size_t count = std::min(host.size(), total - first);
      RP_CUDA_CHECK(
          cudaMemcpy(host.data(), array.get() + first, count * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
      for (std::size_t i = 0; i < count; ++i) {
        const std::uint32_t want = stream_word_initial(first + i) + delta;
        if (host[i] != want) return word_mismatch(name, first + i, want, host[i], passes);
      }
    }
    return {};
  }

  Check word_mismatch(const char* name, std::size_t word, std::uint32_t want, std::uint32_t got,
                      long long passes) const {
    char text[240];
    std::snprintf(text, sizeof text, "%s word %zu (element %zu of %zu bytes) after %lld passes: expected %u, got %u",
                  name, word, word / words_per_element_, element_bytes_, passes, want, got);
    return Check{false, text};
  }

  StreamMode mode_;
  StreamCache cache_;
  std::size_t element_bytes_;
  std::size_t words_per_element_;
  StreamKernel kernel_;
  std::size_t n_;  // elements per array
  int threads_per_block_;
  int blocks_ = 0;
  std::size_t accesses_ = 0;  // per pass and array: n_, or more for a small read or write set
  int reps_ = 1;
  unsigned rotation_ = 0;  // cg, cs, cs_chunk: blocks the next launch's assignment is rotated by
  int last_launch_reps_ = 0;
  long long passes_done_ = 0;  // over all launches so far, what verify() predicts
  DeviceBuffer<std::uint32_t> a_, b_;
  DeviceBuffer<std::uint32_t> sums_;
};

class CudaBandwidthProbe final : public Probe {
 public:
  CudaBandwidthProbe() {
    info_.name = "bandwidth";
    info_.backend = "cuda";
    info_.description =
        "streams of 32/64/128-bit accesses over a working set (grid stride; cs_chunk: a chunk per "
        "block): read (sum), rmw (+1 "
        "in place), copy (a -> b -> a), write (stores only); ca (L1-resident per thread), cg "
        "(L2 only, blocks rotated), cs (cg with streaming st.global.cs stores) or cs_chunk (cs, a "
        "contiguous chunk per block; cs and cs_chunk have no read); all SMs busy, every element "
        "touched once per pass (small read and write sets several times)";
    Axis width = choice_axis("load_width", "bits per access: 32 (u32), 64 (v2.u32), 128 (v4.u32)", {"32", "64", "128"});
    width.defaults = {kDefaultLoadWidth};  // keeps the default run short; others by config
    info_.axes = {
        choice_axis("mode",
                    "read: loads only; rmw: load and store in place; copy: load one "
                    "array, store the other (working set = both arrays); write: stores only",
                    {"read", "rmw", "copy", "write"}),
        choice_axis("cache_op",
                    "ca: default caching, each thread re-reads its own elements (L1, then L2, "
                    "DRAM); cg: ld/st.global.cg bypassing L1, element -> block assignment "
                    "rotated (L2, then DRAM); cs: cg with streaming stores (st.global.cs, "
                    "evict-first); cs_chunk: cs with a contiguous chunk per block instead of the "
                    "grid stride; cs and cs_chunk for rmw/copy/write only",
                    {"ca", "cg", "cs", "cs_chunk"}),
        width,
        numeric_axis("blocks_per_sm", AxisType::Integer,
                     "resident blocks per SM; 0: as many as the occupancy API allows", 0, 32,
                     {std::to_string(kDefaultBlocksPerSm)}),
        numeric_axis("threads_per_block", AxisType::Integer, "threads per block, a multiple of 32", 32, kStreamMaxBlock,
                     {std::to_string(kDefaultThreadsPerBlock)}),
        // 16 KiB .. 1 GiB, two points per octave: from well inside one SM's L1 to 4x the
        // largest L2 of the reference GPUs (72 MB), where DRAM bandwidth has converged.
        numeric_axis("working_set_bytes", AxisType::Bytes, "bytes the stream touches per pass", 1024, 1e12,
                     geometric_bytes(16 * 1024, std::uint64_t{1} << 30, 2, 1024)),
    };
    // One series per access kernel, mode x cache_op (per size the fitter keeps the best point
    // across load_width and occupancy): ca and cg reach different levels, and their curves
    // fitted as one envelope put the ca read's L1 and the cg read's L2 into one level (seen on
    // an H100). Only the ca read reaches L1 (cg bypasses it, stores write through to L2), and
    // past the L1s it is a mixture (on an H100 at 22-64 MB, 74-90% L1 hits by Nsight Compute,
    // 28-30 TB/s against the 7.6 of L2 itself), so it publishes L1 and memory only.
    FeedSpec feed;
    feed.kind = FeedKind::MemoryLevels;
    feed.metric = "gbs";
    feed.x_axis = "working_set_bytes";
    feed.series_axes = {"mode", "cache_op"};
    feed.primary_series = "cache_op=ca;mode=read";
    feed.series_reach = {{"cache_op=ca;mode=read", "L1", true}, {"", "L2", false}};
    info_.feeds = {feed};
    // The fleet's memory aggregate: every rank reading its largest working set at once.
    info_.fleet = {FleetAggregate::Kind::Memory, "", {{"mode", "read"}}, "working_set_bytes"};
  }

  const ProbeInfo& info() const override { return info_; }

  // cs and cs_chunk are store streams: the read has no such kernel (a cs read would be the cg
  // read). Not a gap of a run.
  bool exists_on(const Params& p, const DeviceInfo&) const override {
    auto mode = p.find("mode");
    auto cache = p.find("cache_op");
    if (mode == p.end() || cache == p.end() || mode->second != "read") return true;
    return cache->second == "ca" || cache->second == "cg";
  }

  std::string unsupported_reason(const Params& p, const DeviceInfo&) const override {
    try {
      const StreamParams s = parse_params(p);
      std::string why = invalid_reason(s);
      if (!why.empty()) return why;
      if (s.blocks_per_sm == 0) return {};
      use_selected_device();
      const StreamKernel kernel = stream_kernel_for(s.mode, s.load_width_bits, s.cache);
      const int max_per_sm = kernel.max_blocks_per_sm(s.threads_per_block);
      if (s.blocks_per_sm > max_per_sm) {
        return "blocks_per_sm=" + std::to_string(s.blocks_per_sm) + " exceeds the " + std::to_string(max_per_sm) +
               " blocks of " + std::to_string(s.threads_per_block) +
               " threads an SM holds for this kernel (occupancy API)";
      }
      return {};
    } catch (const std::exception& e) {
      return e.what();
    }
  }

  std::uint64_t footprint_bytes(const Params& p) const override {
    // The arrays (never more than the working set) plus one partial sum per block (small).
    return static_cast<std::uint64_t>(param_int(p, "working_set_bytes")) + (1u << 20);
  }

  std::unique_ptr<PreparedPoint> prepare(const Params& p, const DeviceInfo& dev) const override {
    const StreamParams s = parse_params(p);
    const std::string why = invalid_reason(s);
    if (!why.empty()) throw std::invalid_argument("bandwidth " + s.text + ": " + why);
    return std::make_unique<StreamPoint>(s, dev);
  }

 private:
  ProbeInfo info_;
};

}  // namespace

RP_REGISTER_PROBE(CudaBandwidthProbe);

}  // namespace roofprobe::cuda
