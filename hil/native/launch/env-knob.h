// Environment knobs of the launchers (KVTIER_HIL_*), read once per process by their callers
// (function-local statics). A value that is not one of the knob's choices leaves the default.
#pragma once
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <utility>

namespace hil::launch {

// "1" -> true, "0" -> false, unset or anything else -> `dflt`.
inline bool envFlag(const char* name, bool dflt) {
  const char* e = std::getenv(name);
  if (e && std::strcmp(e, "1") == 0) return true;
  if (e && std::strcmp(e, "0") == 0) return false;
  return dflt;
}

// The value paired with the variable's text among `choices`, else `dflt`.
inline int envChoice(const char* name, std::initializer_list<std::pair<const char*, int>> choices, int dflt) {
  const char* e = std::getenv(name);
  if (!e) return dflt;
  for (const auto& [text, value] : choices)
    if (std::strcmp(e, text) == 0) return value;
  return dflt;
}

// A whole decimal integer in [lo, hi], else `dflt` (unset, empty, trailing characters or out of range).
inline int envInt(const char* name, int dflt, int lo, int hi) {
  const char* e = std::getenv(name);
  if (!e || !*e) return dflt;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(e, &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return dflt;
  return static_cast<int>(v);
}

}  // namespace hil::launch
