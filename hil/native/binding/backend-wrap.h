// JS class Backend: owns one native backend (host or cuda) and exposes its regions,
// streams, events and kernels.
#pragma once
#include <napi.h>
#include <memory>
#include "../backend/backend.h"

namespace hil::js {

class BackendWrap : public Napi::ObjectWrap<BackendWrap> {
 public:
  static Napi::Function define(Napi::Env env);
  explicit BackendWrap(const Napi::CallbackInfo& info);
  Backend& backend(Napi::Env env);

 private:
  Napi::Value kind(const Napi::CallbackInfo& info);
  Napi::Value info(const Napi::CallbackInfo& info);
  Napi::Value alloc(const Napi::CallbackInfo& info);
  Napi::Value free(const Napi::CallbackInfo& info);
  Napi::Value regionBytes(const Napi::CallbackInfo& info);
  Napi::Value write(const Napi::CallbackInfo& info);
  Napi::Value read(const Napi::CallbackInfo& info);
  Napi::Value copy(const Napi::CallbackInfo& info);
  Napi::Value copyMany(const Napi::CallbackInfo& info);
  Napi::Value copyBatch(const Napi::CallbackInfo& info);
  Napi::Value quantize(const Napi::CallbackInfo& info);
  Napi::Value dequantize(const Napi::CallbackInfo& info);
  Napi::Value hadamard(const Napi::CallbackInfo& info);
  Napi::Value attention(const Napi::CallbackInfo& info);
  Napi::Value attentionPlan(const Napi::CallbackInfo& info);
  Napi::Value attentionOptions(const Napi::CallbackInfo& info);
  Napi::Value gemv(const Napi::CallbackInfo& info);
  Napi::Value createEvent(const Napi::CallbackInfo& info);
  Napi::Value destroyEvent(const Napi::CallbackInfo& info);
  Napi::Value record(const Napi::CallbackInfo& info);
  Napi::Value waitEvent(const Napi::CallbackInfo& info);
  Napi::Value elapsedMs(const Napi::CallbackInfo& info);
  Napi::Value synchronize(const Napi::CallbackInfo& info);
  Napi::Value close(const Napi::CallbackInfo& info);

  std::unique_ptr<Backend> backend_;
};

}  // namespace hil::js
