// The one file that includes <mpi.h> (when built with MPI).
#include "driver/fleet/mpi.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

#if defined(ROOFPROBE_HAVE_MPI)
#include <mpi.h>
#endif

namespace roofprobe {

namespace {

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0';
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

#if defined(ROOFPROBE_HAVE_MPI)
void finalize_at_exit() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Finalize();
}

// Polls `request` until it completes or `timeout` seconds pass; sleeps between polls so a
// waiting rank leaves its core to the rank that is measuring. Returns the seconds waited, or
// a negative value on timeout.
double wait_bounded(MPI_Request& request, double timeout) {
  const double start = now_seconds();
  int done = 0;
  int sleep_us = 50;
  for (;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return now_seconds() - start;
    if (now_seconds() - start > timeout) return -1;
    std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
    if (sleep_us < 2000) sleep_us *= 2;
  }
}
#endif

}  // namespace

bool launched_by_mpi_launcher() {
  if (env_set("OMPI_COMM_WORLD_SIZE") || env_set("PMI_SIZE") || env_set("PMIX_RANK")) return true;
  if (env_set("SLURM_PROCID") && env_set("SLURM_NTASKS")) return std::atoi(std::getenv("SLURM_NTASKS")) > 1;
  return false;
}

Comm& Comm::world() {
  static Comm comm;
  return comm;
}

Comm::Comm() {
  char buf[256] = {};
  host_ = gethostname(buf, sizeof buf - 1) == 0 ? buf : "unknown-host";
#if defined(ROOFPROBE_HAVE_MPI)
  if (!launched_by_mpi_launcher()) return;
  const double start = now_seconds();
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  std::atexit(finalize_at_exit);
  mpi_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank_);
  MPI_Comm_size(node, &local_size_);
  MPI_Comm_free(&node);
  init_seconds_ = now_seconds() - start;
#else
  if (launched_by_mpi_launcher())
    std::fprintf(stderr,
                 "warning: started by an MPI launcher but built without MPI: this process runs alone "
                 "as rank 0 of 1 (rebuild with MPI, or run one process per output directory)\n");
#endif
}

void Comm::timed_out(const std::string& phase, double waited) {
  std::fprintf(stderr, "rank %d: waited %g s at %s barrier; a rank failed or hangs\n", rank_, waited, phase.c_str());
  std::fflush(stderr);
  if (timeout_hook_ != nullptr) {
    auto hook = timeout_hook_;
    timeout_hook_ = nullptr;
    try {
      hook();
    } catch (...) {
    }
  }
  abort(3);
}

void Comm::barrier(const std::string& phase, double timeout_seconds) {
  if (!mpi_) return;
#if defined(ROOFPROBE_HAVE_MPI)
  const double start = now_seconds();
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  double waited = wait_bounded(request, timeout_seconds);
  coordination_seconds_ += now_seconds() - start;
  if (waited < 0) timed_out(phase, timeout_seconds);
#else
  (void)phase;
  (void)timeout_seconds;
#endif
}

std::vector<std::string> Comm::allgather(const std::string& mine, const std::string& phase, double timeout_seconds) {
  if (!mpi_) return {mine};
#if defined(ROOFPROBE_HAVE_MPI)
  const double start = now_seconds();
  std::vector<int> lengths(size_);
  int length = static_cast<int>(mine.size());
  MPI_Request request;
  MPI_Iallgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD, &request);
  if (wait_bounded(request, timeout_seconds) < 0) timed_out(phase, timeout_seconds);
  std::vector<int> offsets(size_);
  int total = 0;
  for (int r = 0; r < size_; ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Iallgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, MPI_COMM_WORLD,
                  &request);
  if (wait_bounded(request, timeout_seconds) < 0) timed_out(phase, timeout_seconds);
  std::vector<std::string> out(size_);
  for (int r = 0; r < size_; ++r) out[r] = all.substr(offsets[r], lengths[r]);
  coordination_seconds_ += now_seconds() - start;
  return out;
#else
  (void)phase;
  (void)timeout_seconds;
  return {mine};
#endif
}

void Comm::abort(int code) {
  std::cout.flush();
  std::cerr.flush();
#if defined(ROOFPROBE_HAVE_MPI)
  if (mpi_) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::_Exit(code);
}

std::string rank_prefix() {
  const Comm& c = Comm::world();
  return c.distributed() ? "rank " + std::to_string(c.rank()) + ": " : std::string();
}

}  // namespace roofprobe
