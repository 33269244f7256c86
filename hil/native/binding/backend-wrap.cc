#include "backend-wrap.h"
#include <cmath>
#include <cstring>
#include "attention-plan-wrap.h"
#include "convert.h"
#include "promise-worker.h"

namespace hil::js {

Napi::Function BackendWrap::define(Napi::Env env) {
  return DefineClass(env, "Backend",
                     {
                         InstanceAccessor<&BackendWrap::kind>("kind"),
                         InstanceMethod<&BackendWrap::info>("info"),
                         InstanceMethod<&BackendWrap::alloc>("alloc"),
                         InstanceMethod<&BackendWrap::free>("free"),
                         InstanceMethod<&BackendWrap::regionBytes>("regionBytes"),
                         InstanceMethod<&BackendWrap::write>("write"),
                         InstanceMethod<&BackendWrap::read>("read"),
                         InstanceMethod<&BackendWrap::copy>("copy"),
                         InstanceMethod<&BackendWrap::copyMany>("copyMany"),
                         InstanceMethod<&BackendWrap::copyBatch>("copyBatch"),
                         InstanceMethod<&BackendWrap::quantize>("quantize"),
                         InstanceMethod<&BackendWrap::dequantize>("dequantize"),
                         InstanceMethod<&BackendWrap::hadamard>("hadamard"),
                         InstanceMethod<&BackendWrap::attention>("attention"),
                         InstanceMethod<&BackendWrap::attentionPlan>("attentionPlan"),
                         InstanceMethod<&BackendWrap::attentionOptions>("attentionOptions"),
                         InstanceMethod<&BackendWrap::gemv>("gemv"),
                         InstanceMethod<&BackendWrap::createEvent>("createEvent"),
                         InstanceMethod<&BackendWrap::destroyEvent>("destroyEvent"),
                         InstanceMethod<&BackendWrap::record>("record"),
                         InstanceMethod<&BackendWrap::waitEvent>("waitEvent"),
                         InstanceMethod<&BackendWrap::elapsedMs>("elapsedMs"),
                         InstanceMethod<&BackendWrap::synchronize>("synchronize"),
                         InstanceMethod<&BackendWrap::close>("close"),
                     });
}

BackendWrap::BackendWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<BackendWrap>(info) {
  Napi::Env env = info.Env();
  const std::string kind = info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "auto";
  const int device = info[1].IsNumber() ? integer(info[1], "device") : 0;
  // options: {attention?: {name: value}} (common/attention-options.h), checked before anything opens
  const Napi::Value opts = info[2];
  if (!opts.IsUndefined() && !opts.IsObject()) throw Napi::TypeError::New(env, "Expected an options object ({attention?}) as the third argument");
  const AttentionOptions attention = attentionOptionsFrom(opts.IsObject() ? opts.As<Napi::Object>().Get("attention") : opts);
  guard(env, [&] {
    if (kind == "host") {
      backend_ = makeHostBackend();
    } else if (kind == "cuda") {
      backend_ = makeCudaBackend(device);
    } else if (kind == "auto") {
      backend_ = probeCuda().available ? makeCudaBackend(device) : makeHostBackend();
    } else {
      throw HilError("Expected 'cuda', 'host' or 'auto' for backend kind but received '" + kind + "'");
    }
    backend_->setAttentionOptions(attention);
  });
}

Backend& BackendWrap::backend(Napi::Env env) {
  if (!backend_) throw Napi::Error::New(env, "backend is closed");
  return *backend_;
}

Napi::Value BackendWrap::kind(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), backend(info.Env()).name());
}

Napi::Value BackendWrap::info(const Napi::CallbackInfo& info) {
  return deviceInfo(info.Env(), backend(info.Env()).info());
}

Napi::Value BackendWrap::alloc(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string kind = info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "";
  const size_t bytes = size(info[1], "bytes");
  return guard(env, [&] { return Napi::Number::New(env, backend(env).alloc(parseMemKind(kind), bytes)); });
}

Napi::Value BackendWrap::free(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  guard(env, [&] { backend(env).free(static_cast<uint32_t>(size(info[0], "region"))); });
  return env.Undefined();
}

Napi::Value BackendWrap::regionBytes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&] {
    return Napi::Number::New(env, static_cast<double>(backend(env).region(static_cast<uint32_t>(size(info[0], "region"))).bytes));
  });
}

// write(region, offset, data: TypedArray | Buffer | ArrayBuffer)
Napi::Value BackendWrap::write(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const RegionSpan dst{static_cast<uint32_t>(size(info[0], "region")), size(info[1], "offset")};
  const void* src;
  size_t n;
  if (info[2].IsTypedArray()) {
    Napi::TypedArray t = info[2].As<Napi::TypedArray>();
    src = static_cast<const char*>(t.ArrayBuffer().Data()) + t.ByteOffset();
    n = t.ByteLength();
  } else if (info[2].IsArrayBuffer()) {
    Napi::ArrayBuffer b = info[2].As<Napi::ArrayBuffer>();
    src = b.Data();
    n = b.ByteLength();
  } else {
    throw Napi::TypeError::New(env, "Expected a TypedArray, Buffer or ArrayBuffer for data");
  }
  guard(env, [&] { backend(env).write(dst, src, n); });
  return env.Undefined();
}

// read(region, offset, bytes): Uint8Array
Napi::Value BackendWrap::read(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const RegionSpan src{static_cast<uint32_t>(size(info[0], "region")), size(info[1], "offset")};
  const size_t n = size(info[2], "bytes");
  Napi::ArrayBuffer buf = Napi::ArrayBuffer::New(env, n);
  guard(env, [&] { backend(env).read(src, buf.Data(), n); });
  return Napi::Uint8Array::New(env, n, buf, 0);
}

// copy(stream, dst, dstOffset, src, srcOffset, bytes, repeat?)
Napi::Value BackendWrap::copy(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int s = stream(info[0]);
  const RegionSpan dst{static_cast<uint32_t>(size(info[1], "dst")), size(info[2], "dstOffset")};
  const RegionSpan src{static_cast<uint32_t>(size(info[3], "src")), size(info[4], "srcOffset")};
  const size_t n = size(info[5], "bytes");
  const int repeat = info[6].IsUndefined() ? 1 : integer(info[6], "repeat");
  guard(env, [&] { backend(env).copy(s, dst, src, n, repeat); });
  return env.Undefined();
}

// copyMany(streams: name | name[], copies: Float64Array): copy i on streams[i % n]
Napi::Value BackendWrap::copyMany(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::vector<int> s = streams(info[0]);
  const std::vector<CopyItem> items = copyItems(info[1]);
  guard(env, [&] { backend(env).copyMany(s, items); });
  return env.Undefined();
}

// copyBatch(stream, copies: Float64Array): one batched copy call
Napi::Value BackendWrap::copyBatch(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int s = stream(info[0]);
  const std::vector<CopyItem> items = copyItems(info[1]);
  guard(env, [&] { backend(env).copyBatch(s, items); });
  return env.Undefined();
}

Napi::Value BackendWrap::quantize(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int s = stream(info[0]);
  const Napi::Object o = info[1].As<Napi::Object>();
  QuantizeArgs a{span(o, "src"), span(o, "codes"), span(o, "meta"), sizeField(o, "n", 0, true),
                 intField(o, "bits", 0, true), intField(o, "groupSize", 128, false)};
  guard(env, [&] { backend(env).quantize(s, a); });
  return env.Undefined();
}

Napi::Value BackendWrap::dequantize(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int s = stream(info[0]);
  const Napi::Object o = info[1].As<Napi::Object>();
  DequantizeArgs a{span(o, "codes"), span(o, "meta"), span(o, "dst"), sizeField(o, "n", 0, true),
                   intField(o, "bits", 0, true), intField(o, "groupSize", 128, false)};
  guard(env, [&] { backend(env).dequantize(s, a); });
  return env.Undefined();
}

Napi::Value BackendWrap::hadamard(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int s = stream(info[0]);
  const Napi::Object o = info[1].As<Napi::Object>();
  const Napi::Value dt = o.Get("dtype");
  const std::string dtype = dt.IsString() ? dt.As<Napi::String>().Utf8Value() : "f32";
  if (dtype != "f16" && dtype != "f32") throw Napi::TypeError::New(env, "Expected 'f16' or 'f32' for dtype");
  HadamardArgs a{span(o, "data"), sizeField(o, "rows", 0, true), intField(o, "n", 0, true), dtype == "f16"};
  guard(env, [&] { backend(env).hadamard(s, a); });
  return env.Undefined();
}

Napi::Value BackendWrap::attention(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int s = stream(info[0]);
  const Napi::Object o = info[1].As<Napi::Object>();
  const int repeat = info[2].IsUndefined() ? 1 : integer(info[2], "repeat");
  AttentionArgs a;
  a.shape = attentionShapeFrom(o);
  a.arena = span(o, "arena");
  a.table = span(o, "table");
  a.q = span(o, "q");
  a.out = span(o, "out");
  // Optional promise that every block of the table has this precision (lets the cuda backend
  // run a uniform-precision kernel, common/attention-plan.h); absent = unknown.
  a.uniformPrecision = uniformPrecisionFrom(o);
  guard(env, [&] {
    const Region& r = backend(env).region(a.arena.region);
    a.arenaBytes = sizeField(o, "arenaBytes", r.bytes > a.arena.offset ? r.bytes - a.arena.offset : 0, false);
    backend(env).attention(s, a, repeat);
  });
  return env.Undefined();
}

// attentionPlan(shape & {uniformPrecision?}): the kernel configuration a call of that shape runs with.
Napi::Value BackendWrap::attentionPlan(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject()) throw Napi::TypeError::New(env, "attentionPlan(shape): expected a shape object");
  const Napi::Object o = info[0].As<Napi::Object>();
  const AttentionShape s = attentionShapeFrom(o);
  const int uniform = uniformPrecisionFrom(o);
  return guard(env, [&] { return attentionPlanObject(env, backend(env).attentionPlan(s, uniform)); });
}

// attentionOptions(): every option this backend's attention calls run with.
Napi::Value BackendWrap::attentionOptions(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return attentionOptionsObject(env, backend(env).attentionOptions());
}

Napi::Value BackendWrap::gemv(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int s = stream(info[0]);
  const Napi::Object o = info[1].As<Napi::Object>();
  const int repeat = info[2].IsUndefined() ? 1 : integer(info[2], "repeat");
  GemvArgs a{span(o, "w"), span(o, "x"), span(o, "y"), sizeField(o, "rows", 0, true), sizeField(o, "cols", 0, true)};
  guard(env, [&] { backend(env).gemv(s, a, repeat); });
  return env.Undefined();
}

Napi::Value BackendWrap::createEvent(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&] { return Napi::Number::New(env, backend(env).createEvent()); });
}

Napi::Value BackendWrap::destroyEvent(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  guard(env, [&] { backend(env).destroyEvent(static_cast<uint32_t>(size(info[0], "event"))); });
  return env.Undefined();
}

Napi::Value BackendWrap::record(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int s = stream(info[0]);
  guard(env, [&] { backend(env).record(s, static_cast<uint32_t>(size(info[1], "event"))); });
  return env.Undefined();
}

Napi::Value BackendWrap::waitEvent(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int s = stream(info[0]);
  guard(env, [&] { backend(env).waitEvent(s, static_cast<uint32_t>(size(info[1], "event"))); });
  return env.Undefined();
}

Napi::Value BackendWrap::elapsedMs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&] {
    return Napi::Number::New(env, backend(env).elapsedMs(static_cast<uint32_t>(size(info[0], "from")),
                                                         static_cast<uint32_t>(size(info[1], "to"))));
  });
}

// synchronize(stream?): Promise<void>, waited for off the JS thread.
Napi::Value BackendWrap::synchronize(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int s = info[0].IsUndefined() ? -1 : stream(info[0]);
  Backend* b = &backend(env);
  return PromiseWorker::start(
      env, [b, s] { b->synchronize(s); }, [](Napi::Env e) { return e.Undefined(); }, {Value()});
}

Napi::Value BackendWrap::close(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  guard(env, [&] { backend_.reset(); });
  return env.Undefined();
}

}  // namespace hil::js
