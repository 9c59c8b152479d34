// Names a run is filed and stamped under: UTC times, the host name, directory-safe slugs.
#pragma once

#include <string>

namespace roofprobe {

inline constexpr const char* kUtcIso = "%Y-%m-%dT%H:%M:%SZ";  // provenance times
inline constexpr const char* kUtcCompact = "%Y%m%dT%H%M%SZ";  // directory names

std::string utc_now(const char* strftime_format = kUtcIso);
// UTC now with milliseconds, "YYYY-MM-DDThh:mm:ss.sssZ": orders events less than a second apart.
std::string utc_now_milliseconds();
std::string host_name();
// A directory-name-safe form: "AMD EPYC 7B13" -> "AMD-EPYC-7B13"; no leading dot or dash (so
// never "." or ".."); `fallback` when nothing is left.
std::string slug(const std::string& text, const std::string& fallback);

}  // namespace roofprobe
