// Which cores and which GPU a rank uses. The mapping is pure (unit-tested with fake
// topologies); apply_rank_binding() reads the real machine and applies it.
#pragma once

#include <string>
#include <vector>

namespace roofprobe {

class Comm;

// A core as the OS numbers its hardware threads: {0, 36} for a core with two PUs.
using CorePus = std::vector<int>;

// The cores of rank `index` of `count` ranks sharing `cores`: an even split in order
// (the first cores.size() % count ranks get one more), or one core per rank, round-robin,
// when there are more ranks than cores. Empty when `cores` is empty.
std::vector<CorePus> cores_for_rank(const std::vector<CorePus>& cores, int index, int count);

// The GPU a node-local rank uses: local_rank % gpus; -1 when gpus <= 0.
int gpu_for_rank(int local_rank, int gpus);

// OpenMP places text for a set of cores: "{0,36},{1,37}".
std::string omp_places_text(const std::vector<CorePus>& cores);
// Compact CPU list: {0,1,2,5} -> "0-2,5".
std::string cpu_list_text(std::vector<int> cpus);
// Parses "0-2,5" (Linux cpulist); throws std::invalid_argument on malformed text.
std::vector<int> parse_cpu_list(const std::string& text);

// How many GPUs a rank may choose from: CUDA_VISIBLE_DEVICES's entries when set, otherwise the
// NVIDIA driver's device count (/proc/driver/nvidia/gpus), 0 when unknown.
int visible_gpu_count();

struct RankBinding {
  std::vector<CorePus> cores;  // the rank's cores (empty: not bound)
  int threads = 0;             // OpenMP threads for the CPU backend (its cores), 0: unchanged
  int cuda_device = -1;        // ROOFPROBE_CUDA_DEVICE set by us (-1: left alone)
  std::vector<std::string> notes;
};

// In a distributed job: groups the ranks of a node that share the same CPU affinity (no binding
// by the launcher: all of them), splits that set's cores evenly among them and binds this
// process to its share (sched_setaffinity, before the OpenMP runtime creates its threads, so
// they inherit it) unless the user chose an OpenMP binding (OMP_PLACES / OMP_PROC_BIND /
// GOMP_CPU_AFFINITY / KMP_AFFINITY in the environment the process started with). Sets
// ROOFPROBE_CUDA_DEVICE to local_rank % GPUs unless the user set it or CUDA_VISIBLE_DEVICES
// names a single device. Collective (an allgather). A single process: nothing changes.
RankBinding apply_rank_binding(Comm& comm);

}  // namespace roofprobe
