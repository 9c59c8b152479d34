// MPI coordination behind one small interface. The rest of the driver has no #ifdef: built
// without MPI, or started without a launcher (mpirun, srun), the communicator is one process,
// rank 0 of 1, and every collective is a no-op.
#pragma once

#include <string>
#include <vector>

namespace roofprobe {

// True when the environment shows a parallel launcher started this process as one of several
// ranks: OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK, or SLURM_PROCID with SLURM_NTASKS > 1.
bool launched_by_mpi_launcher();

class Comm {
 public:
  // The process's communicator: initialises MPI on first use when built with MPI and
  // launched_by_mpi_launcher(); otherwise a single-process one. Finalised at exit.
  static Comm& world();

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }  // among the ranks on this node
  int local_size() const { return local_size_; }
  bool distributed() const { return size_ > 1; }
  const std::string& host() const { return host_; }

  // Waits for every rank, at most `timeout_seconds`. On timeout prints
  // "rank R: waited N s at <phase> barrier; a rank failed or hangs" and aborts the job
  // (MPI_Abort, exit status 3) after calling the on-timeout hook (rank 0: the partial report).
  void barrier(const std::string& phase, double timeout_seconds);
  // Every rank's string, indexed by rank (bounded like barrier()).
  std::vector<std::string> allgather(const std::string& mine, const std::string& phase, double timeout_seconds);
  // Ends the whole job now (MPI_Abort); a single process exits.
  [[noreturn]] void abort(int code);

  // Called once, before the abort, when a barrier times out.
  void set_timeout_hook(void (*hook)()) { timeout_hook_ = hook; }

  // Seconds spent inside barrier()/allgather() so far (waiting included).
  double coordination_seconds() const { return coordination_seconds_; }
  // Seconds MPI_Init_thread and the node split took (0 without MPI).
  double init_seconds() const { return init_seconds_; }

  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

 private:
  Comm();
  [[noreturn]] void timed_out(const std::string& phase, double waited);
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::string host_;
  bool mpi_ = false;
  void (*timeout_hook_)() = nullptr;
  double coordination_seconds_ = 0;
  double init_seconds_ = 0;
};

// Prefix for messages from this process: "rank R: " in a distributed job, "" otherwise.
std::string rank_prefix();

}  // namespace roofprobe
