// The CPU probes run for real (small points): each verifies, and declares the work it does.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "kernels/common/flop_chain.hpp"
#include "kernels/cpu/partition.hpp"
#include "kernels/cpu/read_checksum.hpp"
#include "kernels/contract/probe.hpp"

namespace roofprobe {
namespace {

DeviceInfo cpu_device() {
  static DeviceInfo device = Registry::instance().backend("cpu")->describe(2);
  return device;
}

std::unique_ptr<PreparedPoint> prepare(const std::string& probe, const Params& params) {
  const Probe* p = Registry::instance().probe("cpu", probe);
  EXPECT_NE(p, nullptr);
  return p->prepare(params, cpu_device());
}

// Bytes as likwid-bench counts them (no write-allocate): per pass over a working set of W bytes,
// read W (load), rmw 2W (update), copy W/2 + W/2 (two arrays), write and write_nt W (store).
TEST(CpuBandwidth, EveryModeVerifiesAndDeclaresBytes) {
  struct Expect {
    const char* mode;
    double read, written;  // per pass, in units of the working set
  };
  const Probe* probe = Registry::instance().probe("cpu", "bandwidth");
  std::vector<std::string> widths;
  for (const Axis& a : probe->info().axes)
    if (a.name == "vector_bits") widths = a.choices;
  ASSERT_FALSE(widths.empty());
  for (const std::string& bits : widths)
    for (Expect e : {Expect{"read", 1, 0}, {"rmw", 1, 1}, {"copy", 0.5, 0.5}, {"write", 0, 1}, {"write_nt", 0, 1}}) {
      SCOPED_TRACE(std::string(e.mode) + " " + bits + " bits");
      // 200192 bytes: chunks that are not a whole number of unrolled blocks (the scalar tails run).
      auto point = prepare("bandwidth", {{"mode", e.mode}, {"vector_bits", bits}, {"working_set_bytes", "200192"}});
      point->set_repetitions(3);
      point->launch();
      point->launch();
      Check c = point->verify();
      EXPECT_TRUE(c.ok) << c.detail;
      Work w = point->work();
      EXPECT_EQ(w.working_set_bytes, 200192);
      EXPECT_EQ(w.bytes_read, 3 * e.read * 200192);
      EXPECT_EQ(w.bytes_written, 3 * e.written * 200192);
      EXPECT_EQ(w.transactions, w.bytes() / 32);
    }
}

// The CPU backend reports the launch's barrier-synchronised parallel phase, which lies inside
// the wall time around the launch (it leaves out waking the workers).
TEST(CpuBandwidth, BackendTimesTheSynchronisedParallelPhase) {
  Backend* backend = Registry::instance().backend("cpu");
  for (std::string probe : {"bandwidth", "flops"}) {
    SCOPED_TRACE(probe);
    auto point =
        probe == "bandwidth"
            ? prepare(probe, {{"mode", "read"}, {"working_set_bytes", "65536"}})
            : prepare(
                  probe,
                  {{"precision", "fp64"}, {"form", "fma"}, {"flops_per_element", "64"}, {"bytes_per_thread", "4096"}});
    point->set_repetitions(50);
    const auto start = std::chrono::steady_clock::now();
    const double seconds = backend->time_launch(*point);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_GT(seconds, 0);
    EXPECT_EQ(seconds, point->parallel_seconds());
    EXPECT_LE(seconds, wall);
    EXPECT_TRUE(point->verify().ok);
  }
}

// Verification is not vacuous: a point that never launched fails it (its arrays hold the
// initial values, not what the passes leave).
TEST(CpuBandwidth, UnlaunchedPointFailsVerification) {
  for (std::string mode : {"read", "copy", "write", "write_nt"}) {  // rmw after 0 passes is init
    SCOPED_TRACE(mode);
    auto point = prepare("bandwidth", {{"mode", mode}, {"working_set_bytes", "65536"}});
    point->set_repetitions(2);
    EXPECT_FALSE(point->verify().ok);
  }
}

// The read checksum rotates after every pass, so passes do not cancel, and each pass folds its
// phase's elements: the shortcut over residues mod 64 agrees with pass-by-pass folding, and pass
// counts that differ by less than 64 give different words.
TEST(CpuBandwidth, ReadChecksumCountsThePasses) {
  const std::uint64_t phases[][cpu::kReadPhases] = {
      {0x9E3779B97F4A7C15ull, 0x0123456789ABCDEFull, 0xFEDCBA9876543210ull ^ 1, 0x5555AAAA5555AAAAull},
      {0x0123456789ABCDEFull ^ 1, 0x0123456789ABCDEFull ^ 1, 0x0123456789ABCDEFull ^ 1, 0x0123456789ABCDEFull ^ 1}};
  for (const auto& phase_xor : phases) {
    std::uint64_t folded = 0;
    std::vector<std::uint64_t> seen;
    for (std::int64_t reps = 0; reps <= 300; ++reps) {
      EXPECT_EQ(cpu::read_checksum_after(phase_xor, reps), folded) << reps;
      if (reps >= 1 && reps <= 64) seen.push_back(folded);
      folded = cpu::rotate_left_1(folded ^ phase_xor[reps % cpu::kReadPhases]);
    }
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(std::unique(seen.begin(), seen.end()), seen.end()) << "two pass counts in 1..64 collide";
  }
}

// End to end, at every width the build has: launches of 1 to 9 passes verify one after another
// (read: every phase and a new cycle; rmw: the rotation of 4 vectors wraps, twice).
TEST(CpuBandwidth, ReadAndRmwVerifyEveryPassCount) {
  for (const std::string mode : {"read", "rmw"})
    for (const std::string bits : {"128", "256", "512"}) {
      SCOPED_TRACE(mode + " " + bits + " bits");
      std::unique_ptr<PreparedPoint> point;
      try {
        point = prepare("bandwidth", {{"mode", mode}, {"vector_bits", bits}, {"working_set_bytes", "200192"}});
      } catch (const std::invalid_argument&) {
        continue;  // a width this build lacks
      }
      for (int reps = 1; reps <= 9; ++reps) {
        point->set_repetitions(reps);
        point->launch();
        EXPECT_TRUE(point->verify().ok) << reps << " passes";
      }
    }
}

// 4424 bytes per thread: chunks past the last whole block of chains, which run in groups of 4
// vectors, single vectors and scalar elements.
TEST(CpuFlops, EveryFormAndPrecisionVerifies) {
  for (std::string bytes : {"4096", "4424"})
    for (std::string precision : {"fp64", "fp32"})
      for (std::string form : {"fma", "nofma"})
        for (std::string k : {"1", "7", "64"}) {
          SCOPED_TRACE(bytes + " " + precision + " " + form + " " + k);
          const Probe* p = Registry::instance().probe("cpu", "flops");
          Params params{
              {"precision", precision}, {"form", form}, {"flops_per_element", k}, {"bytes_per_thread", bytes}};
          if (k == "7") {  // not a chain length the kernels are built for
            EXPECT_THROW(p->prepare(params, cpu_device())->launch(), std::invalid_argument);
            continue;
          }
          auto point = p->prepare(params, cpu_device());
          point->set_repetitions(5);
          point->launch();
          Check c = point->verify();
          EXPECT_TRUE(c.ok) << c.detail;
          Work w = point->work();
          double elements = 2.0 * std::stod(bytes) / (precision == "fp64" ? 8 : 4);
          EXPECT_EQ(w.flops, std::stod(k) * elements * 5);
        }
}

TEST(FlopChain, CountsAndInterleavedEqualsScalar) {
  struct Ops {
    static double fma(double x, double a, double b) { return std::fma(x, a, b); }
    static double mul(double x, double a) { return x * a; }
    static double add(double x, double b) { return x + b; }
  };
  EXPECT_EQ(chain_fma_ops(64, FlopForm::Fma), 32);
  EXPECT_EQ(chain_mul_ops(64, FlopForm::NoFma), 32);
  EXPECT_EQ(chain_add_ops(65, FlopForm::NoFma), 33);
  EXPECT_EQ(chain_add_ops(1, FlopForm::Fma), 1);
  double x[3] = {1.0, 1.25, 1.5};
  flop_chain_interleaved<33, FlopForm::NoFma, Ops>(x, 0.999, 0.001);
  EXPECT_EQ(x[1], (flop_chain<33, FlopForm::NoFma, Ops>(1.25, 0.999, 0.001)));
  int seen = 0;
  EXPECT_TRUE(dispatch_chain_length(256, [&](auto k) { seen = decltype(k)::value; }));
  EXPECT_EQ(seen, 256);
  EXPECT_FALSE(dispatch_chain_length(3, [](auto) {}));
}

TEST(Partition, ChunksAreDisjointAlignedAndCover) {
  for (std::size_t n : {0ul, 7ul, 64ul, 1000ul, 100003ul})
    for (int workers : {1, 2, 3, 7}) {
      std::size_t next = 0;
      for (int w = 0; w < workers; ++w) {
        Range r = chunk_of(n, workers, w, 8);
        EXPECT_EQ(r.begin, next);
        if (r.begin != n) {
          EXPECT_EQ(r.begin % 8, 0u);
        }
        next = r.end;
      }
      EXPECT_EQ(next, n);
    }
}

TEST(CpuBackend, DescribesTheMachine) {
  DeviceInfo d = cpu_device();
  EXPECT_EQ(d.kind, "cpu");
  EXPECT_EQ(d.threads, 2);
  EXPECT_GE(d.compute_units, 1);
  EXPECT_GT(d.memory_bytes, 0u);
  ASSERT_FALSE(d.caches.empty());
  EXPECT_EQ(d.caches.front().name, "L1");
  EXPECT_GT(d.clock_measured_mhz, 100);
  EXPECT_LT(d.clock_measured_mhz, 10000);
}

}  // namespace
}  // namespace roofprobe
