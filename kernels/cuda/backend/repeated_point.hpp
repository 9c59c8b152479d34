// The repetition bookkeeping of a CUDA point whose launch repeats its work `repetitions()` times
// (PreparedPoint::set_repetitions): the count the engine sets, what the last launch ran, what all
// launches so far ran, and the start of every verify(): wait for the device, and pass while
// nothing has been launched.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "kernels/contract/probe.hpp"
#include "kernels/cuda/backend/cuda_support.hpp"

namespace roofprobe::cuda {

class RepeatedPoint : public PreparedPoint {
 public:
  void set_repetitions(std::int64_t reps) override { reps_ = std::min(clamp_reps(reps), max_reps_); }
  std::int64_t repetitions() const override { return reps_; }

  Check verify() final {
    RP_CUDA_CHECK(cudaDeviceSynchronize());
    if (launches_ == 0) return {};
    return verify_launches();
  }

 protected:
  // `max_reps`: a probe's own bound on one launch's repetitions (besides clamp_reps').
  explicit RepeatedPoint(int max_reps = std::numeric_limits<int>::max()) : max_reps_(max_reps) {}

  // After the device finished and at least one launch ran: the check of the launches so far.
  virtual Check verify_launches() = 0;

  // launch() calls it once the launch is queued.
  void count_launch() {
    last_launch_reps_ = reps_;
    passes_done_ += reps_;
    ++launches_;
  }

  int reps_ = 1;               // repetitions of the next launch
  int last_launch_reps_ = 0;   // of the last launch
  long long passes_done_ = 0;  // over all launches so far
  long long launches_ = 0;     // launches so far

 private:
  int max_reps_;
};

}  // namespace roofprobe::cuda
