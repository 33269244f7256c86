// The caller's choices for the attention launches: which kernels may run, stage counts, split
// count, head warps, the FP16 tensor-core kernel's early chunks and L2 policy. Plain C++ (no CUDA,
// no environment): the binding fills them from a JS object, the backend keeps them, and
// attention-plan.h turns them and a call's shape into a kernel configuration.
// kAttentionOptionTable is the one list of options: the parser, the normalized values recorded in
// a run's outputs and `kvtier hil options` all read it.
#pragma once
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>
#include "../backend/error.h"

namespace hil {

// Which uniform tables run on the tensor cores (the rest run the general kernel, v3).
enum class TensorCores { On, Off, Int4, Fp16 };
// The L2 policy of the FP16 tensor-core kernel's KV copies.
enum class L2Policy { Auto, EvictFirst, Normal };

struct AttentionOptions {
  TensorCores tensor_cores = TensorCores::On;
  int splits = 0;  // 0: choose (a call's own AttentionShape::splits comes first)
  int int4_stages = 6;
  int fp16_stages = 3;
  bool int4_head_warps = true;
  bool fp16_head_warps = false;
  int fp16_early_chunks = 0;  // 0: auto
  L2Policy fp16_l2_policy = L2Policy::Auto;
};

struct AttentionOptionSpec {
  const char* name;
  const char* values;  // the valid values as a user writes them
  const char* fallback;  // the default, as text
  const char* description;
  bool (*set)(AttentionOptions&, const std::string&);  // false: not a valid value
  std::string (*get)(const AttentionOptions&);
};

namespace attention_options_detail {

// A whole decimal number in [lo, hi], nothing else.
inline bool wholeIn(const std::string& v, int lo, int hi, int& out) {
  if (v.empty() || v.size() > 9) return false;
  for (char c : v) {
    if (c < '0' || c > '9') return false;
  }
  const long n = std::strtol(v.c_str(), nullptr, 10);
  if (n < lo || n > hi) return false;
  out = static_cast<int>(n);
  return true;
}
inline bool onOff(const std::string& v, bool& out) {
  if (v == "on") return out = true, true;
  if (v == "off") return out = false, true;
  return false;
}
inline bool oneOf(const std::string& v, std::initializer_list<int> choices, int& out) {
  int n = 0;
  if (!wholeIn(v, 0, 1 << 20, n)) return false;
  for (int c : choices) {
    if (c == n) return out = n, true;
  }
  return false;
}

inline bool setTensorCores(AttentionOptions& o, const std::string& v) {
  if (v == "on") o.tensor_cores = TensorCores::On;
  else if (v == "off") o.tensor_cores = TensorCores::Off;
  else if (v == "int4") o.tensor_cores = TensorCores::Int4;
  else if (v == "fp16") o.tensor_cores = TensorCores::Fp16;
  else return false;
  return true;
}
inline std::string getTensorCores(const AttentionOptions& o) {
  switch (o.tensor_cores) {
    case TensorCores::Off: return "off";
    case TensorCores::Int4: return "int4";
    case TensorCores::Fp16: return "fp16";
    default: return "on";
  }
}
inline bool setSplits(AttentionOptions& o, const std::string& v) {
  if (v == "auto") return o.splits = 0, true;
  return wholeIn(v, 1, 65535, o.splits);
}
inline std::string getSplits(const AttentionOptions& o) { return o.splits == 0 ? "auto" : std::to_string(o.splits); }
inline bool setInt4Stages(AttentionOptions& o, const std::string& v) { return oneOf(v, {4, 6, 8}, o.int4_stages); }
inline std::string getInt4Stages(const AttentionOptions& o) { return std::to_string(o.int4_stages); }
inline bool setFp16Stages(AttentionOptions& o, const std::string& v) { return oneOf(v, {2, 3, 4, 6}, o.fp16_stages); }
inline std::string getFp16Stages(const AttentionOptions& o) { return std::to_string(o.fp16_stages); }
inline bool setInt4HeadWarps(AttentionOptions& o, const std::string& v) { return onOff(v, o.int4_head_warps); }
inline std::string getInt4HeadWarps(const AttentionOptions& o) { return o.int4_head_warps ? "on" : "off"; }
inline bool setFp16HeadWarps(AttentionOptions& o, const std::string& v) { return onOff(v, o.fp16_head_warps); }
inline std::string getFp16HeadWarps(const AttentionOptions& o) { return o.fp16_head_warps ? "on" : "off"; }
inline bool setFp16Early(AttentionOptions& o, const std::string& v) {
  if (v == "auto") return o.fp16_early_chunks = 0, true;
  return wholeIn(v, 1, 5, o.fp16_early_chunks);
}
inline std::string getFp16Early(const AttentionOptions& o) { return o.fp16_early_chunks == 0 ? "auto" : std::to_string(o.fp16_early_chunks); }
inline bool setFp16L2(AttentionOptions& o, const std::string& v) {
  if (v == "auto") o.fp16_l2_policy = L2Policy::Auto;
  else if (v == "evict-first") o.fp16_l2_policy = L2Policy::EvictFirst;
  else if (v == "normal") o.fp16_l2_policy = L2Policy::Normal;
  else return false;
  return true;
}
inline std::string getFp16L2(const AttentionOptions& o) {
  return o.fp16_l2_policy == L2Policy::Auto ? "auto" : o.fp16_l2_policy == L2Policy::EvictFirst ? "evict-first" : "normal";
}

}  // namespace attention_options_detail

inline const std::vector<AttentionOptionSpec>& attentionOptionTable() {
  namespace d = attention_options_detail;
  static const std::vector<AttentionOptionSpec> table = {
      {"tensor_cores", "on, off, int4, fp16", "on",
       "uniform tables (the caller's uniformPrecision promise) at head dim 128 with at most 4 query heads per kv head run the "
       "tensor-core kernels: INT4 (group 128) and FP16 (on), neither (off: the general kernel for every table), or only the "
       "one named",
       d::setTensorCores, d::getTensorCores},
      {"splits", "auto or 1 to 65535", "auto",
       "context splits (flash-decoding) of a call that asks for none; auto: one wave of resident blocks, trimmed so that "
       "every warp has the same chunk count; never more than the context's 16-token chunks",
       d::setSplits, d::getSplits},
      {"int4_stages", "4, 6, 8", "6", "copy stages per warp of the INT4 tensor-core kernel (4: 5 blocks per SM, 6: 4, 8: 3 on the H100)",
       d::setInt4Stages, d::getInt4Stages},
      {"fp16_stages", "2, 3, 4, 6", "3", "copy stages (8 KiB each) per warp of the FP16 tensor-core kernel", d::setFp16Stages,
       d::getFp16Stages},
      {"int4_head_warps", "on, off", "on",
       "the INT4 tensor-core kernel takes one warp per kv head (4 to 8 kv heads, from 1024 chunks = 16k tokens per kv head) "
       "instead of 4 warps per kv head",
       d::setInt4HeadWarps, d::getInt4HeadWarps},
      {"fp16_head_warps", "on, off", "off", "the FP16 tensor-core kernel takes one warp per kv head (at most 8 kv heads)",
       d::setFp16HeadWarps, d::getFp16HeadWarps},
      {"fp16_early_chunks", "auto or 1 to 5 (below fp16_stages)", "auto",
       "chunks each warp of the FP16 tensor-core kernel asks for before it prepares q; auto: 2 when the call's KV exceeds "
       "the L2, else 1 (at most fp16_stages - 1)",
       d::setFp16Early, d::getFp16Early},
      {"fp16_l2_policy", "auto, evict-first, normal", "auto",
       "L2 policy of the FP16 tensor-core kernel's KV copies; auto: evict-first when the call's KV exceeds the L2",
       d::setFp16L2, d::getFp16L2},
  };
  return table;
}

inline std::string attentionOptionNames() {
  std::string names;
  for (const AttentionOptionSpec& s : attentionOptionTable()) names += (names.empty() ? "" : ", ") + std::string(s.name);
  return names;
}

inline const AttentionOptionSpec* findAttentionOption(const std::string& name) {
  for (const AttentionOptionSpec& s : attentionOptionTable()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

// Sets one option from its text; a name or value outside the table is refused with the valid ones.
inline void setAttentionOption(AttentionOptions& o, const std::string& name, const std::string& value) {
  const AttentionOptionSpec* s = findAttentionOption(name);
  if (!s) throw HilError("unknown attention option \"" + name + "\": expected one of " + attentionOptionNames());
  if (!s->set(o, value))
    throw HilError("attention option " + name + ": expected " + s->values + " but received \"" + value + "\"");
}

// Rules between options, checked once every option is set.
inline void checkAttentionOptions(const AttentionOptions& o) {
  if (o.fp16_early_chunks >= o.fp16_stages)
    throw HilError("attention option fp16_early_chunks: expected auto or 1 to " + std::to_string(o.fp16_stages - 1) +
                   " (fp16_stages - 1) but received \"" + std::to_string(o.fp16_early_chunks) + "\"");
}

// (name, value) of every option, in the table's order, as the parser reads them back.
inline std::vector<std::pair<std::string, std::string>> attentionOptionValues(const AttentionOptions& o) {
  std::vector<std::pair<std::string, std::string>> v;
  for (const AttentionOptionSpec& s : attentionOptionTable()) v.emplace_back(s.name, s.get(o));
  return v;
}

}  // namespace hil
