// JS class FileTier: the NVMe tier of one backend; reads and writes run on its I/O pool,
// off the JS thread, and resolve with their measured time.
#pragma once
#include <napi.h>
#include <memory>
#include "../backend/file-tier.h"

namespace hil::js {

class FileTierWrap : public Napi::ObjectWrap<FileTierWrap> {
 public:
  static Napi::Function define(Napi::Env env);
  explicit FileTierWrap(const Napi::CallbackInfo& info);

 private:
  Napi::Value direct(const Napi::CallbackInfo& info);
  Napi::Value bufferedReason(const Napi::CallbackInfo& info);
  Napi::Value path(const Napi::CallbackInfo& info);
  Napi::Value bytes(const Napi::CallbackInfo& info);
  Napi::Value threads(const Napi::CallbackInfo& info);
  Napi::Value write(const Napi::CallbackInfo& info);
  Napi::Value read(const Napi::CallbackInfo& info);
  Napi::Value readBatch(const Napi::CallbackInfo& info);
  Napi::Value close(const Napi::CallbackInfo& info);
  Napi::Value io(const Napi::CallbackInfo& info, bool isWrite);
  FileTier& tier(Napi::Env env);

  std::shared_ptr<FileTier> tier_;
  Napi::ObjectReference backendRef_;
};

}  // namespace hil::js
