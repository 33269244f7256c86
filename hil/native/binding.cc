// The addon's export table. Everything else lives in framework-free layers:
// kernels/ (CUDA), host/ (CPU), launch/ (shape checks, launches), backend/ (tiers, streams).
#include <napi.h>
#include "backend/backend.h"
#include "binding/attention-plan-wrap.h"
#include "binding/backend-wrap.h"
#include "binding/convert.h"
#include "binding/file-tier-wrap.h"

namespace {

Napi::Value probeCuda(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const hil::CudaProbe p = hil::probeCuda();
  Napi::Object o = Napi::Object::New(env);
  o.Set("compiled", p.compiled);
  o.Set("available", p.available);
  o.Set("reason", p.reason);
  if (p.available) o.Set("device", hil::js::deviceInfo(env, p.info));
  return o;
}

Napi::Object init(Napi::Env env, Napi::Object exports) {
  exports.Set("abiVersion", Napi::Number::New(env, 1));
  exports.Set("probeCuda", Napi::Function::New(env, probeCuda, "probeCuda"));
  exports.Set("Backend", hil::js::BackendWrap::define(env));
  exports.Set("FileTier", hil::js::FileTierWrap::define(env));
  hil::js::exportAttentionPlan(env, exports);
  return exports;
}

}  // namespace

NODE_API_MODULE(kvtier_hil, init)
