// Errors the CLI turns into one line "error: ..." and a non-zero exit.
#pragma once

#include <stdexcept>
#include <string>

namespace roofprobe {

// Bad user input (config, files, arguments). The message already names file:line:key.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A measurement that cannot be trusted (verification failure, device error).
class MeasurementError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace roofprobe
