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
constexpr const char *kOpNames[] = {
#define RANKC_X(name, text) text,
    RANKC_DAG_OPS(RANKC_X)
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
std::string typeText(llvm::ArrayRef<int64_t> shape, llvm::StringRef dtype) {
  std::string s = dtype.str() + "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}
bool isFloat(DType t) { return t >= DType::F16; }
bool isInteger(DType t) { return t >= DType::I8 && t <= DType::I64; }

std::optional<Op> parseOp(std::string_view name) {
  for (unsigned i = 0; i < std::size(kOpNames); ++i)
    if (name == kOpNames[i])
      return Op(i);
  return std::nullopt;
}
const char *opName(Op op) { return kOpNames[unsigned(op)]; }

const char *optimizerName(Optimizer::Kind kind) {
  switch (kind) {
  case Optimizer::Sgd: return "sgd";
  case Optimizer::Adam: return "adam";
  case Optimizer::AdamW: return "adamw";
  }
  return "?";
}

OpClass opClass(Op op) {
  switch (op) {
  case Op::Input: case Op::Param: case Op::Constant: case Op::Iota:
    return OpClass::Leaf;
  case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Pow:
  case Op::Maximum: case Op::Minimum:
    return OpClass::Binary;
  case Op::Eq: case Op::Ne: case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge:
    return OpClass::Compare;
  case Op::And: case Op::Or:
    return OpClass::Logical;
  case Op::Where:
    return OpClass::Where;
  case Op::Einsum: case Op::Matmul:
    return OpClass::Contraction;
  case Op::Sum: case Op::Prod: case Op::Max: case Op::Min: case Op::Mean:
    return OpClass::Reduction;
  case Op::Reshape: case Op::Transpose: case Op::BroadcastTo: case Op::Slice:
  case Op::Concat:
    return OpClass::Shape;
  case Op::Take: case Op::ScatterAdd:
    return OpClass::Indexing;
  case Op::Conv: case Op::Pool:
    return OpClass::Window;
  case Op::Send: case Op::Recv: case Op::AllReduce:
    return OpClass::Comm;
  default:
    return OpClass::Unary;
  }
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
