//===- Dag.cpp - names and classes of the DAG format's ops and dtypes -----===//

#include "rankc/Frontend/Dag.h"
#include "rankc_runtime.h"
#include "rankc/Support/ProcessGrid.h"

namespace rankc::dag {

namespace {
struct DTypeInfo {
  const char *name;
  unsigned bytes;
};
// The runtime's table (rankc_runtime.h): the DAG's dtypes are its rows.
constexpr DTypeInfo kDTypes[] = {
#define RANKC_X(e, name, bytes, descr, ctype) {name, bytes},
    RANKC_DTYPES(RANKC_X)
#undef RANKC_X
};
static_assert(unsigned(DType::Bool) == RANKC_BOOL &&
                  unsigned(DType::I8) == RANKC_I8 &&
                  unsigned(DType::I32) == RANKC_I32 &&
                  unsigned(DType::I64) == RANKC_I64 &&
                  unsigned(DType::F16) == RANKC_F16 &&
                  unsigned(DType::BF16) == RANKC_BF16 &&
                  unsigned(DType::F32) == RANKC_F32 &&
                  unsigned(DType::F64) == RANKC_F64 &&
                  unsigned(DType::U8) == RANKC_U8 &&
                  unsigned(DType::U16) == RANKC_U16 &&
                  unsigned(DType::U32) == RANKC_U32 &&
                  std::size(kDTypes) == RANKC_DTYPE_COUNT,
              "DType follows rankc_runtime.h's RANKC_DTYPES");
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
bool isFloat(DType t) { return t >= DType::F16 && t <= DType::F64; }
bool isUnsigned(DType t) { return t >= DType::U8; }
bool isInteger(DType t) {
  return (t >= DType::I8 && t <= DType::I64) || isUnsigned(t);
}
int dtypeVersion(DType t) { return isUnsigned(t) ? 3 : 1; }

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

std::optional<int64_t> Peer::resolve(int64_t rank, int64_t worldSize) const {
  if (!isGrid())
    return relative ? ((rank + value) % worldSize + worldSize) % worldSize
                    : value;
  int64_t peer =
      gridPeer(grid, shift, [&](size_t i) { return periodic[i]; }, rank);
  return peer < 0 ? std::nullopt : std::optional<int64_t>(peer);
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
