// Parsing and printing of sizes and rates as users write and read them.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

namespace roofprobe {

// "4096", "4KiB", "4 KiB", "1.5MiB", "1GiB", "64KB" (decimal), "1e6". nullopt when malformed.
std::optional<double> parse_bytes(const std::string& text);
// 1024-based with unit: "4 KiB", "1.5 MiB", "1 GiB"; plain "512 B" below 1 KiB.
std::string format_bytes(double bytes);
// Three significant digits with a unit that keeps the mantissa below 1000: "182 GB/s",
// "3.41 TB/s"; `base_unit` is "B/s" or "FLOP/s" and the value is in units of 1e9 (G).
std::string format_rate_g(double value_g, const std::string& base_unit);
// A rate, size or energy that was measured and can be drawn on a log axis: finite and above
// zero (a machine file writes 0 for "not measured").
inline bool finite_positive(double v) { return std::isfinite(v) && v > 0; }

// Levenshtein distance, for "did you mean" suggestions.
std::size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace roofprobe
