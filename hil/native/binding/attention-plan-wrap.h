// JS <-> C++ for the attention dispatch: the options object, a call's shape, the plan; and the
// addon's exports attentionPlan(shape, options, device), attentionOptions(options) and
// attentionOptionTable() (common/attention-plan.h and attention-options.h, no CUDA).
#pragma once
#include <napi.h>
#include "../common/attention-plan.h"

namespace hil::js {

// {name: value} (string, whole number or boolean = on / off) over the defaults; undefined: the
// defaults. An unknown name or a value outside an option's choices throws, naming both.
AttentionOptions attentionOptionsFrom(const Napi::Value& v);
// Every option by name, as the table's parser reads it back (whole numbers as numbers).
Napi::Object attentionOptionsObject(Napi::Env env, const AttentionOptions& o);
// The shape fields of an attention op (qHeads, kvHeads, headDim, blockTokens, groupSize,
// contextTokens, softmaxScale, splits) and its uniformPrecision ('fp16', 'int8', 'int4', 'int3', 'int2'; absent: -1).
AttentionShape attentionShapeFrom(const Napi::Object& o);
int uniformPrecisionFrom(const Napi::Object& o);
Napi::Object attentionPlanObject(Napi::Env env, const AttentionPlan& p);

void exportAttentionPlan(Napi::Env env, Napi::Object exports);

}  // namespace hil::js
