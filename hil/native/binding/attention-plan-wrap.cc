#include "attention-plan-wrap.h"
#include <cmath>
#include <string>
#include "../launch/check-shapes.h"
#include "convert.h"

namespace hil::js {

AttentionOptions attentionOptionsFrom(const Napi::Value& v) {
  AttentionOptions o;
  if (v.IsUndefined() || v.IsNull()) return o;
  if (!v.IsObject() || v.IsArray()) throw Napi::TypeError::New(v.Env(), "Expected an object of attention options ({name: value})");
  const Napi::Object obj = v.As<Napi::Object>();
  const Napi::Array keys = obj.GetPropertyNames();
  for (uint32_t i = 0; i < keys.Length(); ++i) {
    const std::string name = keys.Get(i).ToString().Utf8Value();
    const Napi::Value x = obj.Get(name);
    std::string text;
    if (x.IsString()) {
      text = x.As<Napi::String>().Utf8Value();
    } else if (x.IsBoolean()) {
      text = x.As<Napi::Boolean>().Value() ? "on" : "off";
    } else if (x.IsNumber()) {
      const double d = x.As<Napi::Number>().DoubleValue();
      text = std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e9 ? std::to_string(static_cast<long long>(d)) : std::to_string(d);
    } else {
      throw Napi::TypeError::New(v.Env(), "attention option " + name + ": expected a string, a number or a boolean");
    }
    guard(v.Env(), [&] { setAttentionOption(o, name, text); });
  }
  guard(v.Env(), [&] { checkAttentionOptions(o); });
  return o;
}

Napi::Object attentionOptionsObject(Napi::Env env, const AttentionOptions& o) {
  Napi::Object out = Napi::Object::New(env);
  for (const auto& [name, text] : attentionOptionValues(o)) {
    const bool whole = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
    if (whole) out.Set(name, Napi::Number::New(env, std::stod(text)));
    else out.Set(name, text);
  }
  return out;
}

AttentionShape attentionShapeFrom(const Napi::Object& o) {
  AttentionShape s;
  s.qHeads = intField(o, "qHeads", 0, true);
  s.kvHeads = intField(o, "kvHeads", 0, true);
  s.headDim = intField(o, "headDim", 128, false);
  s.blockTokens = intField(o, "blockTokens", 16, false);
  s.groupSize = intField(o, "groupSize", 128, false);
  s.contextTokens = intField(o, "contextTokens", 0, true);
  const Napi::Value sc = o.Get("softmaxScale");
  s.softmaxScale = sc.IsUndefined() ? 1.0f / std::sqrt(static_cast<float>(s.headDim)) : static_cast<float>(number(sc, "softmaxScale"));
  s.splits = intField(o, "splits", 0, false);
  return s;
}

int uniformPrecisionFrom(const Napi::Object& o) {
  const Napi::Value up = o.Get("uniformPrecision");
  if (up.IsUndefined()) return -1;
  const std::string p = up.IsString() ? up.As<Napi::String>().Utf8Value() : "";
  if (p == "fp16") return kFp16;
  if (p == "int8") return kInt8;
  if (p == "int4") return kInt4;
  if (p == "int2") return kInt2;
  if (p == "int3") return kInt3;
  throw Napi::TypeError::New(o.Env(), "Expected 'fp16', 'int8', 'int4', 'int3' or 'int2' for uniformPrecision");
}

Napi::Object attentionPlanObject(Napi::Env env, const AttentionPlan& p) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("kernel", attentionKernelName(p.kernel));
  o.Set("stages", p.stages);
  o.Set("headWarps", p.headWarps);
  o.Set("queryHeadsPerWarp", p.queryHeadsPerWarp);
  o.Set("warpsPerBlock", p.warpsPerBlock);
  Napi::Array grid = Napi::Array::New(env, 2);
  grid.Set(0u, p.gridX);
  grid.Set(1u, p.gridY);
  o.Set("grid", grid);
  o.Set("dynamicSmemBytes", p.dynamicSmemBytes);
  o.Set("bulkCopy", p.bulkCopy);
  o.Set("earlyChunks", p.earlyChunks);
  o.Set("kvExceedsL2", p.kvExceedsL2);
  o.Set("l2Policy", p.evictFirst ? "evict-first" : "normal");
  o.Set("residentBlocks", p.residentBlocks);
  o.Set("splits", p.splits);
  o.Set("chunksPerWarp", p.chunksPerWarp);
  o.Set("reduce", p.reduce == AttentionReduce::Split ? "split" : "none");
  o.Set("pdlReduce", p.pdlReduce);
  return o;
}

namespace {

// attentionPlan(shape & {uniformPrecision?}, options?, device): the plan without a GPU, with the
// device's residentBlocks or the shared-memory estimate.
Napi::Value attentionPlan(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject()) throw Napi::TypeError::New(env, "attentionPlan(shape, options, device): expected a shape object");
  if (!info[2].IsObject()) throw Napi::TypeError::New(env, "attentionPlan(shape, options, device): expected a device object");
  const Napi::Object so = info[0].As<Napi::Object>();
  const AttentionShape s = attentionShapeFrom(so);
  const int uniform = uniformPrecisionFrom(so);
  const AttentionOptions o = attentionOptionsFrom(info[1]);
  const Napi::Object dev = info[2].As<Napi::Object>();
  DeviceFacts d;
  d.multiprocessors = intField(dev, "multiprocessors", 0, true);
  d.l2Bytes = static_cast<double>(sizeField(dev, "l2Bytes", 0, true));
  d.sharedMemPerSmBytes = intField(dev, "sharedMemPerSmBytes", 0, false);
  d.reservedSharedMemPerBlockBytes = intField(dev, "reservedSharedMemPerBlockBytes", 0, false);
  d.residentBlocks = intField(dev, "residentBlocks", 0, false);
  if (d.multiprocessors < 1) throw Napi::RangeError::New(env, "Expected a positive count for device.multiprocessors");
  if (d.residentBlocks < 0) throw Napi::RangeError::New(env, "Expected 0 (estimate) or a positive count for device.residentBlocks");
  if (d.residentBlocks == 0 && d.sharedMemPerSmBytes <= 0)
    throw Napi::RangeError::New(env, "device: give residentBlocks or sharedMemPerSmBytes (for the shared-memory estimate)");
  return guard(env, [&] {
    checkAttentionShape(s);
    return attentionPlanObject(env, planAttention(s, uniform, o, d));
  });
}

Napi::Value attentionOptions(const Napi::CallbackInfo& info) {
  return attentionOptionsObject(info.Env(), attentionOptionsFrom(info[0]));
}

Napi::Value attentionOptionTable(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto& table = hil::attentionOptionTable();
  Napi::Array a = Napi::Array::New(env, table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("name", table[i].name);
    o.Set("values", table[i].values);
    o.Set("default", table[i].fallback);
    o.Set("description", table[i].description);
    a.Set(static_cast<uint32_t>(i), o);
  }
  return a;
}

}  // namespace

void exportAttentionPlan(Napi::Env env, Napi::Object exports) {
  exports.Set("attentionPlan", Napi::Function::New(env, attentionPlan, "attentionPlan"));
  exports.Set("attentionOptions", Napi::Function::New(env, attentionOptions, "attentionOptions"));
  exports.Set("attentionOptionTable", Napi::Function::New(env, attentionOptionTable, "attentionOptionTable"));
}

}  // namespace hil::js
