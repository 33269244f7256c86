// The one error type of the native layer; the binding turns it into a JS Error.
#pragma once
#include <stdexcept>
#include <string>

namespace hil {

struct HilError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Uniform argument errors: invalidParameter("bits", "2, 4 or 8", 3).
template <typename T>
[[noreturn]] inline void invalidParameter(const std::string& name, const std::string& expected, const T& actual) {
  throw HilError("Expected " + expected + " for " + name + " but received " + std::to_string(actual));
}

}  // namespace hil
