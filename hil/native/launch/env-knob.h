// Environment knobs of the launchers (KVTIER_HIL_*), read once per process by their callers
// (function-local statics). Unset means the default; a value that is not one of the knob's choices
// is refused with a HilError naming the variable, its value and the valid choices (the launch that
// read it fails and reports it; a later launch reads the variable again).
#pragma once
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>
#include "../backend/error.h"

namespace hil::launch {

[[noreturn]] inline void badKnob(const char* name, const char* value, const std::string& valid) {
  throw HilError(std::string(name) + "=" + value + ": expected " + valid + " (or leave it unset for the default)");
}

// "1" -> true, "0" -> false, unset -> `dflt`, anything else refused.
inline bool envFlag(const char* name, bool dflt) {
  const char* e = std::getenv(name);
  if (!e) return dflt;
  if (std::strcmp(e, "1") == 0) return true;
  if (std::strcmp(e, "0") == 0) return false;
  badKnob(name, e, "1 or 0");
}

// The value paired with the variable's text among `choices`; unset -> `dflt`; anything else refused.
inline int envChoice(const char* name, std::initializer_list<std::pair<const char*, int>> choices, int dflt) {
  const char* e = std::getenv(name);
  if (!e) return dflt;
  std::string valid;
  for (const auto& [text, value] : choices) {
    if (std::strcmp(e, text) == 0) return value;
    valid += valid.empty() ? text : std::string(", ") + text;
  }
  badKnob(name, e, "one of " + valid);
}

// A whole decimal integer in [lo, hi]; unset -> `dflt`; empty, trailing characters or out of range refused.
inline int envInt(const char* name, int dflt, int lo, int hi) {
  const char* e = std::getenv(name);
  if (!e) return dflt;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(e, &end, 10);
  if (!*e || errno != 0 || *end != '\0' || v < lo || v > hi)
    badKnob(name, e, "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
  return static_cast<int>(v);
}

}  // namespace hil::launch
