// JS <-> C++ conversion for the binding: argument reading with uniform errors, and
// native errors turned into JS errors.
#pragma once
#include <napi.h>
#include <string>
#include <vector>
#include "../backend/backend.h"

namespace hil::js {

// Runs fn, turning a native HilError (or any std::exception) into a thrown JS Error.
template <typename F>
auto guard(Napi::Env env, F&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const Napi::Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Napi::Error::New(env, e.what());
  }
}

inline double number(const Napi::Value& v, const std::string& name) {
  if (!v.IsNumber()) throw Napi::TypeError::New(v.Env(), "Expected a number for " + name);
  return v.As<Napi::Number>().DoubleValue();
}

inline size_t size(const Napi::Value& v, const std::string& name) {
  const double d = number(v, name);
  if (!(d >= 0) || d != static_cast<double>(static_cast<uint64_t>(d)) || d > 9007199254740991.0)
    throw Napi::RangeError::New(v.Env(), "Expected a non-negative integer for " + name + " but received " + std::to_string(d));
  return static_cast<size_t>(d);
}

inline int integer(const Napi::Value& v, const std::string& name) {
  const double d = number(v, name);
  if (d != static_cast<double>(static_cast<int>(d)))
    throw Napi::RangeError::New(v.Env(), "Expected an integer for " + name + " but received " + std::to_string(d));
  return static_cast<int>(d);
}

inline Napi::Value field(const Napi::Object& o, const char* key) { return o.Get(key); }

inline size_t sizeField(const Napi::Object& o, const char* key, size_t fallback, bool required) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) {
    if (required) throw Napi::TypeError::New(o.Env(), std::string("Missing field ") + key);
    return fallback;
  }
  return size(v, key);
}

inline int intField(const Napi::Object& o, const char* key, int fallback, bool required) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) {
    if (required) throw Napi::TypeError::New(o.Env(), std::string("Missing field ") + key);
    return fallback;
  }
  return integer(v, key);
}

// {<name>: regionId, <name>Offset?: bytes}
inline RegionSpan span(const Napi::Object& o, const char* name) {
  const std::string off = std::string(name) + "Offset";
  return RegionSpan{static_cast<uint32_t>(sizeField(o, name, 0, true)), sizeField(o, off.c_str(), 0, false)};
}

// 'compute' | 'memory' | 'memory2', or a number (the backend checks the id).
inline int stream(const Napi::Value& v) {
  if (v.IsString()) {
    const std::string s = v.As<Napi::String>();
    if (s == "compute") return kCompute;
    if (s == "memory") return kMemory;
    if (s == "memory2") return kMemory2;
    throw Napi::TypeError::New(v.Env(), "Expected 'compute', 'memory' or 'memory2' for stream but received '" + s + "'");
  }
  if (v.IsNumber()) return integer(v, "stream");
  throw Napi::TypeError::New(v.Env(), "Expected 'compute', 'memory' or 'memory2' for stream");
}

// A stream name or a non-empty array of them.
inline std::vector<int> streams(const Napi::Value& v) {
  if (!v.IsArray()) return {stream(v)};
  const Napi::Array a = v.As<Napi::Array>();
  std::vector<int> out;
  for (uint32_t i = 0; i < a.Length(); ++i) out.push_back(stream(a.Get(i)));
  if (out.empty()) throw Napi::TypeError::New(v.Env(), "Expected at least one stream");
  return out;
}

// Float64Array of [dst, dstOffset, src, srcOffset, bytes] per copy.
inline std::vector<CopyItem> copyItems(const Napi::Value& v) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_float64_array)
    throw Napi::TypeError::New(v.Env(), "Expected a Float64Array of [dst, dstOffset, src, srcOffset, bytes] per copy for copies");
  const Napi::Float64Array a = v.As<Napi::Float64Array>();
  if (a.ElementLength() % 5 != 0)
    throw Napi::RangeError::New(v.Env(), "Expected 5 numbers per copy in copies but received " + std::to_string(a.ElementLength()));
  std::vector<CopyItem> out(a.ElementLength() / 5);
  const auto whole = [&](size_t i) {
    const double d = a[i];
    if (!(d >= 0) || d != static_cast<double>(static_cast<uint64_t>(d)) || d > 9007199254740991.0)
      throw Napi::RangeError::New(v.Env(), "Expected a non-negative integer in copies[" + std::to_string(i) + "] but received " + std::to_string(d));
    return static_cast<size_t>(d);
  };
  for (size_t k = 0; k < out.size(); ++k) {
    out[k].dst = RegionSpan{static_cast<uint32_t>(whole(5 * k)), whole(5 * k + 1)};
    out[k].src = RegionSpan{static_cast<uint32_t>(whole(5 * k + 2)), whole(5 * k + 3)};
    out[k].bytes = whole(5 * k + 4);
  }
  return out;
}

inline Napi::Object deviceInfo(Napi::Env env, const DeviceInfo& d) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("name", d.name);
  o.Set("computeCapability", std::to_string(d.ccMajor) + "." + std::to_string(d.ccMinor));
  o.Set("totalMemBytes", static_cast<double>(d.totalMemBytes));
  o.Set("multiprocessors", d.multiprocessors);
  o.Set("l2Bytes", static_cast<double>(d.l2Bytes));
  o.Set("pciGeneration", d.pciGeneration);
  o.Set("pciWidth", d.pciWidth);
  o.Set("runtimeVersion", d.runtimeVersion);
  o.Set("driverVersion", d.driverVersion);
  o.Set("computePriority", d.computePriority);
  o.Set("memoryPriority", d.memoryPriority);
  o.Set("hostThreads", d.hostThreads);
  o.Set("sharedMemPerSmBytes", d.sharedMemPerSmBytes);
  o.Set("reservedSharedMemPerBlockBytes", d.reservedSharedMemPerBlockBytes);
  return o;
}

}  // namespace hil::js
