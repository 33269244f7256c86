#include "file-tier-wrap.h"
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
    if (b.region(span.region).kind == MemKind::Device)
      throw HilError("file tier I/O needs a host region (pinned or pageable); stage device data through pinned memory");
    return b.at(span, len, isWrite ? "file write source" : "file read destination");
  });
  auto result = std::make_shared<FileIoResult>();
  return PromiseWorker::start(
      env,
      [=] { *result = isWrite ? t->write(buf, fileOffset, len, chunk, sync) : t->read(buf, fileOffset, len, chunk); },
      [result](Napi::Env e) {
        Napi::Object o = Napi::Object::New(e);
        o.Set("ms", result->ms);
        o.Set("bytes", static_cast<double>(result->bytes));
        o.Set("direct", result->direct);
        return o;
      },
      {Value(), backendRef_.Value()});
}

Napi::Value FileTierWrap::close(const Napi::CallbackInfo& info) {
  tier_.reset();  // in-flight I/O keeps its own reference; the file closes after it
  return info.Env().Undefined();
}

}  // namespace hil::js
