#include "file-tier-wrap.h"
#include <cmath>
#include <string>
#include "backend-wrap.h"
#include "convert.h"
#include "promise-worker.h"

namespace hil::js {

Napi::Function FileTierWrap::define(Napi::Env env) {
  return DefineClass(env, "FileTier",
                     {
                         InstanceAccessor<&FileTierWrap::direct>("direct"),
                         InstanceAccessor<&FileTierWrap::bufferedReason>("bufferedReason"),
                         InstanceAccessor<&FileTierWrap::path>("path"),
                         InstanceAccessor<&FileTierWrap::bytes>("bytes"),
                         InstanceAccessor<&FileTierWrap::threads>("threads"),
                         InstanceMethod<&FileTierWrap::write>("write"),
                         InstanceMethod<&FileTierWrap::read>("read"),
                         InstanceMethod<&FileTierWrap::readBatch>("readBatch"),
                         InstanceMethod<&FileTierWrap::close>("close"),
                     });
}

// new FileTier(backend, {path, bytes, direct = true, threads = 4, removeOnClose = false})
FileTierWrap::FileTierWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<FileTierWrap>(info) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject() || !info[1].IsObject()) throw Napi::TypeError::New(env, "Expected (backend, options)");
  backendRef_ = Napi::Persistent(info[0].As<Napi::Object>());
  const Napi::Object o = info[1].As<Napi::Object>();
  const Napi::Value p = o.Get("path");
  if (!p.IsString()) throw Napi::TypeError::New(env, "Expected a string for path");
  const Napi::Value d = o.Get("direct"), r = o.Get("removeOnClose");
  const bool wantDirect = d.IsUndefined() ? true : d.ToBoolean().Value();
  const bool remove = r.IsUndefined() ? false : r.ToBoolean().Value();
  const size_t bytes = sizeField(o, "bytes", 0, true);
  const int threads = intField(o, "threads", 4, false);
  guard(env, [&] { tier_ = std::make_shared<FileTier>(p.As<Napi::String>().Utf8Value(), bytes, wantDirect, threads, remove); });
}

FileTier& FileTierWrap::tier(Napi::Env env) {
  if (!tier_) throw Napi::Error::New(env, "file tier is closed");
  return *tier_;
}

Napi::Value FileTierWrap::direct(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), tier(info.Env()).direct()); }
Napi::Value FileTierWrap::bufferedReason(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), tier(info.Env()).bufferedReason());
}
Napi::Value FileTierWrap::path(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), tier(info.Env()).path()); }
Napi::Value FileTierWrap::bytes(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(tier(info.Env()).bytes()));
}
Napi::Value FileTierWrap::threads(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), tier(info.Env()).threads()); }
namespace {
// {ms, bytes, direct, requests} of a finished file I/O
Napi::Object ioResult(Napi::Env e, const FileIoResult& r) {
  Napi::Object o = Napi::Object::New(e);
  o.Set("ms", r.ms);
  o.Set("bytes", static_cast<double>(r.bytes));
  o.Set("direct", r.direct);
  o.Set("requests", static_cast<double>(r.requests));
  return o;
}

void requireHostRegion(Backend& b, uint32_t region) {
  if (b.region(region).kind == MemKind::Device)
    throw HilError("file tier I/O needs a host region (pinned or pageable); stage device data through pinned memory");
}
}  // namespace

Napi::Value FileTierWrap::write(const Napi::CallbackInfo& info) { return io(info, true); }
Napi::Value FileTierWrap::read(const Napi::CallbackInfo& info) { return io(info, false); }

// write|read(region, regionOffset, fileOffset, bytes, {chunkBytes = 1 MiB, sync = false}): Promise<{ms, bytes, direct}>
Napi::Value FileTierWrap::io(const Napi::CallbackInfo& info, bool isWrite) {
  Napi::Env env = info.Env();
  std::shared_ptr<FileTier> t = tier_;
  if (!t) throw Napi::Error::New(env, "file tier is closed");
  Backend& b = BackendWrap::Unwrap(backendRef_.Value())->backend(env);
  const RegionSpan span{static_cast<uint32_t>(size(info[0], "region")), size(info[1], "regionOffset")};
  const uint64_t fileOffset = size(info[2], "fileOffset");
  const size_t len = size(info[3], "bytes");
  size_t chunk = 1 << 20;
  bool sync = false;
  if (info[4].IsObject()) {
    const Napi::Object o = info[4].As<Napi::Object>();
    chunk = sizeField(o, "chunkBytes", chunk, false);
    const Napi::Value s = o.Get("sync");
    sync = !s.IsUndefined() && s.ToBoolean().Value();
  }
  char* buf = guard(env, [&] {
    requireHostRegion(b, span.region);
    return b.at(span, len, isWrite ? "file write source" : "file read destination");
  });
  auto result = std::make_shared<FileIoResult>();
  return PromiseWorker::start(
      env,
      [=] { *result = isWrite ? t->write(buf, fileOffset, len, chunk, sync) : t->read(buf, fileOffset, len, chunk); },
      [result](Napi::Env e) { return ioResult(e, *result); },
      {Value(), backendRef_.Value()});
}

// readBatch(region, spans: Float64Array [regionOffset, fileOffset, bytes] per request, {chunkBytes = 1 MiB}):
// Promise<{ms, bytes, direct, requests}>. Every chunk of every request goes to the I/O pool at once.
Napi::Value FileTierWrap::readBatch(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::shared_ptr<FileTier> t = tier_;
  if (!t) throw Napi::Error::New(env, "file tier is closed");
  Backend& b = BackendWrap::Unwrap(backendRef_.Value())->backend(env);
  const uint32_t region = static_cast<uint32_t>(size(info[0], "region"));
  if (!info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array)
    throw Napi::TypeError::New(env, "Expected a Float64Array of [regionOffset, fileOffset, bytes] triples for spans");
  const Napi::Float64Array a = info[1].As<Napi::Float64Array>();
  if (a.ElementLength() % 3 != 0) throw Napi::RangeError::New(env, "spans: length must be a multiple of 3");
  size_t chunk = 1 << 20;
  if (info[2].IsObject()) chunk = sizeField(info[2].As<Napi::Object>(), "chunkBytes", chunk, false);
  auto spans = std::make_shared<std::vector<FileSpan>>();
  guard(env, [&] {
    if (chunk == 0 || chunk % kFileAlign != 0) invalidParameter("chunkBytes", "a positive multiple of 4096", chunk);
    requireHostRegion(b, region);
    // every span checked here, before any read starts, so that an error names the span and its field
    static const char* const kField[3] = {"regionOffset", "fileOffset", "bytes"};
    for (size_t i = 0; i < a.ElementLength(); i += 3) {
      const std::string at = "spans[" + std::to_string(i / 3) + "]";
      for (size_t f = 0; f < 3; f++) {
        const double x = a[i + f];
        if (!(x >= 0 && x <= 9007199254740991.0 && x == std::floor(x)))
          throw HilError(at + "." + kField[f] + ": expected a non-negative integer below 2^53, got " + std::to_string(x));
      }
      const size_t len = static_cast<size_t>(a[i + 2]);
      const uint64_t off = static_cast<uint64_t>(a[i + 1]);
      if (len == 0 || len % kFileAlign != 0) throw HilError(at + ".bytes: expected a positive multiple of 4096, got " + std::to_string(len));
      if (off % kFileAlign != 0) throw HilError(at + ".fileOffset: expected a multiple of 4096, got " + std::to_string(off));
      if (off > t->bytes() || len > t->bytes() - off)
        throw HilError(at + ": file range [" + std::to_string(off) + ", " + std::to_string(off + len) + ") is outside the file tier's " + std::to_string(t->bytes()) + " bytes");
      char* dst = b.at(RegionSpan{region, static_cast<size_t>(a[i])}, len, (at + " destination").c_str());
      if (reinterpret_cast<uintptr_t>(dst) % kFileAlign != 0)
        throw HilError(at + ".regionOffset: the destination must be 4096-byte aligned (region offset " + std::to_string(static_cast<size_t>(a[i])) + ")");
      spans->push_back({dst, off, len});
    }
  });
  auto result = std::make_shared<FileIoResult>();
  return PromiseWorker::start(
      env, [=] { *result = t->readBatch(*spans, chunk); },
      [result](Napi::Env e) { return ioResult(e, *result); },
      {Value(), backendRef_.Value()});
}

Napi::Value FileTierWrap::close(const Napi::CallbackInfo& info) {
  tier_.reset();  // in-flight I/O keeps its own reference; the file closes after it
  return info.Env().Undefined();
}

}  // namespace hil::js
