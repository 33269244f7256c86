// AsyncWorker glue: work() runs on a libuv worker thread (never the JS thread), result()
// builds the JS value on the JS thread; the promise rejects with the native error text.
// The JS objects the work touches are held by `keep` until the worker is done.
#pragma once
#include <napi.h>
#include <functional>
#include <vector>

namespace hil::js {

class PromiseWorker : public Napi::AsyncWorker {
 public:
  PromiseWorker(Napi::Env env, std::function<void()> work, std::function<Napi::Value(Napi::Env)> result,
                std::vector<Napi::Object> keep)
      : Napi::AsyncWorker(env, "kvtier-hil"),
        deferred_(Napi::Promise::Deferred::New(env)),
        work_(std::move(work)),
        result_(std::move(result)) {
    for (auto& o : keep) keep_.push_back(Napi::Persistent(o));
  }
  Napi::Promise promise() const { return deferred_.Promise(); }

  // Queues the work and returns its promise.
  static Napi::Promise start(Napi::Env env, std::function<void()> work,
                             std::function<Napi::Value(Napi::Env)> result, std::vector<Napi::Object> keep) {
    auto* w = new PromiseWorker(env, std::move(work), std::move(result), std::move(keep));
    Napi::Promise p = w->promise();
    w->Queue();
    return p;
  }

 protected:
  void Execute() override {
    try {
      work_();
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }
  void OnOK() override { deferred_.Resolve(result_(Env())); }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  std::function<void()> work_;
  std::function<Napi::Value(Napi::Env)> result_;
  std::vector<Napi::ObjectReference> keep_;
};

}  // namespace hil::js
