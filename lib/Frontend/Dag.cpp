//===- Dag.cpp - names and classes of the DAG format's ops and dtypes -----===//

#include "rankc/Frontend/Dag.h"

namespace rankc::dag {

namespace {
struct DTypeInfo {
  const char *name;
  unsigned bytes;
};
constexpr DTypeInfo kDTypes[] = {{"bool", 1}, {"i8", 1},  {"i32", 4},
                                 {"i64", 8},  {"f16", 2}, {"bf16", 2},
                                 {"f32", 4},  {"f64", 8}};
struct OpInfo {
  const char *name;
  OpClass opClass;
  int arity;
  KeyRule keys;
};
constexpr OpInfo kOps[] = {
#define RANKC_X(name, text, cls, arity, keys, required)                        \
  {text, OpClass::cls, arity, {K_type | (keys), required}},
    RANKC_DAG_OPS(RANKC_X)
#undef RANKC_X
};
constexpr const char *kKeyNames[] = {
#define RANKC_X(key) #key,
    RANKC_DAG_KEYS(RANKC_X)
#undef RANKC_X
};
} // namespace

std::optional<DType> parseDType(std::string_view name) {
  for (unsigned i = 0; i < std::size(kDTypes); ++i)
    if (name == kDTypes[i].name)
      return DType(i);
  return std::nullopt;
}
const char *dtypeName(DType t) { return kDTypes[unsigned(t)].name; }
unsigned dtypeBytes(DType t) { return kDTypes[unsigned(t)].bytes; }
bool isFloat(DType t) { return t >= DType::F16; }
bool isInteger(DType t) { return t >= DType::I8 && t <= DType::I64; }

std::optional<Op> parseOp(std::string_view name) {
  for (unsigned i = 0; i < std::size(kOps); ++i)
    if (name == kOps[i].name)
      return Op(i);
  return std::nullopt;
}
const char *opName(Op op) { return kOps[unsigned(op)].name; }
OpClass opClass(Op op) { return kOps[unsigned(op)].opClass; }
int opArity(Op op) { return kOps[unsigned(op)].arity; }
KeyRule opKeys(Op op) { return kOps[unsigned(op)].keys; }

const char *keyName(NodeKey key) {
  for (unsigned i = 0; i < std::size(kKeyNames); ++i)
    if (key == 1u << i)
      return kKeyNames[i];
  return "?";
}
std::optional<NodeKey> parseNodeKey(std::string_view name) {
  for (unsigned i = 0; i < std::size(kKeyNames); ++i)
    if (name == kKeyNames[i])
      return NodeKey(1u << i);
  return std::nullopt;
}

const char *optimizerName(Optimizer::Kind kind) {
  switch (kind) {
  case Optimizer::Sgd: return "sgd";
  case Optimizer::Adam: return "adam";
  case Optimizer::AdamW: return "adamw";
  }
  return "?";
}

std::optional<Reduce> parseReduce(std::string_view name) {
  constexpr const char *names[] = {"sum", "prod", "max", "min", "mean",
                                   "argmax"};
  for (unsigned i = 0; i < std::size(names); ++i)
    if (name == names[i])
      return Reduce(i);
  return std::nullopt;
}

std::string Program::ranksText() const {
  if (allRanks)
    return "all";
  std::string s = "[";
  for (size_t i = 0; i < ranks.size(); ++i)
    s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s + "]";
}

} // namespace rankc::dag
