// Work accounting and data of the CUDA "system" probe (host <-> device traffic over PCIe or
// NVLink-C2C), shared by its kernels (kernels/cuda/system/kernel.cuh), its launcher
// (kernels/cuda/system/probe.cu) and the host unit tests (tests/probes/system/model_test.cpp).
//
// Four transfers, each counted on the HOST side (the system memory level is the host memory as
// the GPU sees it):
//   h2d           cudaMemcpyAsync pinned host -> device: the host buffer is read
//   d2h           cudaMemcpyAsync device -> pinned host: the host buffer is written
//   mapped_read   a kernel loads mapped (zero-copy) pinned host memory: read
//   mapped_write  a kernel stores to mapped pinned host memory: written
// One launch moves the buffer `reps` times (copies: reps cudaMemcpyAsync calls; mapped kernels:
// reps passes over the buffer). Elements are 16 bytes (the kernels' uint4 accesses); the data
// is the bandwidth probe's word hash (kernels/cuda/backend/stream_pattern.hpp), so a copy that lands anywhere else
// than where it should shows in the checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/common/hd.hpp"
#include "kernels/cuda/backend/stream_pattern.hpp"

namespace roofprobe {

enum class SystemTransfer : int { H2D = 0, D2H = 1, MappedRead = 2, MappedWrite = 3 };

inline constexpr std::size_t kSystemElementBytes = 16;  // uint4

inline SystemTransfer parse_system_transfer(const std::string& text) {
  if (text == "h2d") return SystemTransfer::H2D;
  if (text == "d2h") return SystemTransfer::D2H;
  if (text == "mapped_read") return SystemTransfer::MappedRead;
  if (text == "mapped_write") return SystemTransfer::MappedWrite;
  throw std::invalid_argument("system: transfer '" + text + "' is not h2d, d2h, mapped_read or mapped_write");
}

// Mapped transfers run a kernel on zero-copy host memory; h2d/d2h copy into a device buffer.
RP_HD bool system_is_mapped(SystemTransfer t) {
  return t == SystemTransfer::MappedRead || t == SystemTransfer::MappedWrite;
}

// The host buffer is read (h2d, mapped_read) or written (d2h, mapped_write).
RP_HD bool system_reads_host(SystemTransfer t) { return t == SystemTransfer::H2D || t == SystemTransfer::MappedRead; }

// 16-byte elements of a `bytes` buffer, rounded down: the probe moves exactly these.
RP_HD std::size_t system_elements(std::uint64_t bytes) { return static_cast<std::size_t>(bytes / kSystemElementBytes); }

struct SystemBytes {
  double read = 0;     // host bytes read per launch
  double written = 0;  // host bytes written per launch
};

// Host-side bytes one launch moves: `reps` times the n-element buffer, in one direction.
RP_HD SystemBytes system_bytes_per_launch(SystemTransfer t, std::size_t n, std::int64_t reps) {
  const double moved = static_cast<double>(n) * static_cast<double>(kSystemElementBytes) * static_cast<double>(reps);
  SystemBytes b;
  if (system_reads_host(t)) {
    b.read = moved;
  } else {
    b.written = moved;
  }
  return b;
}

// 32-byte sectors of one launch: the buffers are 256-byte aligned (cudaHostAlloc, cudaMalloc)
// and n x 16 bytes long, so each pass touches ceil(n x 16 / 32) sectors.
RP_HD double system_sectors_per_launch(std::size_t n, std::int64_t reps) {
  const std::uint64_t bytes = static_cast<std::uint64_t>(n) * kSystemElementBytes;
  return static_cast<double>((bytes + 31) / 32) * static_cast<double>(reps);
}

// Word w (0..3) of element e as the host fills the buffer that h2d and mapped_read read, and as
// the device fills the buffer that d2h copies.
RP_HD std::uint32_t system_source_word(std::size_t e, int w) { return stream_initial_word(e, w); }

// Sum modulo 2^32 of all words of an n-element source buffer: what one mapped_read pass adds up.
RP_HD std::uint32_t system_source_sum(std::size_t n) { return stream_initial_sum(n); }

// Word w of element e that pass `pass` (counted over all launches of the point, from 0) of
// mapped_write stores: the source word plus the pass number, so the host can tell the last pass
// from an earlier one and from a pass that never reached the buffer.
RP_HD std::uint32_t system_written_word(std::size_t e, int w, std::uint64_t pass) {
  return system_source_word(e, w) + static_cast<std::uint32_t>(pass);
}

// Device bytes a point allocates: the copy target for h2d/d2h; mapped points only a few KiB of
// block sums (their buffer lives in host memory).
RP_HD std::uint64_t system_device_bytes(SystemTransfer t, std::uint64_t bytes) {
  return system_is_mapped(t) ? 0 : static_cast<std::uint64_t>(system_elements(bytes)) * kSystemElementBytes;
}

}  // namespace roofprobe
