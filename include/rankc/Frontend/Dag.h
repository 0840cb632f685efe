//===- Dag.h - the serialized DAG, parsed -----------------------*- C++ -*-===//
//
// The in-memory form of a `rankc-dag` version 1 or 2 document (see
// shared/spec/dag-format.md). The JSON reader fills it with what the text
// says, checking JSON types and keys; the checker resolves names, infers
// shapes and dtypes and enforces the spec's rules; the importer turns a
// checked document into MLIR. Nothing here depends on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_FRONTEND_DAG_H
#define RANKC_FRONTEND_DAG_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Allocator.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace rankc::dag {

enum class DType : uint8_t { Bool, I8, I32, I64, F16, BF16, F32, F64 };

std::optional<DType> parseDType(std::string_view name);
const char *dtypeName(DType t);
/// "f32[4, 4]": how messages, the checker and the analysis name a type.
std::string typeText(llvm::ArrayRef<int64_t> shape, llvm::StringRef dtype);
unsigned dtypeBytes(DType t);
bool isFloat(DType t);
bool isInteger(DType t); // i8 i32 i64 (not bool)

#define RANKC_DAG_OPS(X)                                                       \
  X(Input, "input") X(Param, "param") X(Constant, "constant") X(Iota, "iota")  \
  X(Neg, "neg") X(Abs, "abs") X(Exp, "exp") X(Log, "log") X(Sqrt, "sqrt")      \
  X(Rsqrt, "rsqrt") X(Sin, "sin") X(Cos, "cos") X(Tanh, "tanh") X(Erf, "erf")  \
  X(Sigmoid, "sigmoid") X(Relu, "relu") X(Floor, "floor") X(Ceil, "ceil")      \
  X(Not, "not") X(Cast, "cast")                                                \
  X(Add, "add") X(Sub, "sub") X(Mul, "mul") X(Div, "div") X(Pow, "pow")        \
  X(Maximum, "maximum") X(Minimum, "minimum")                                  \
  X(Eq, "eq") X(Ne, "ne") X(Lt, "lt") X(Le, "le") X(Gt, "gt") X(Ge, "ge")      \
  X(And, "and") X(Or, "or") X(Where, "where")                                  \
  X(Einsum, "einsum") X(Matmul, "matmul")                                      \
  X(Sum, "sum") X(Prod, "prod") X(Max, "max") X(Min, "min") X(Mean, "mean")    \
  X(Reshape, "reshape") X(Transpose, "transpose")                              \
  X(BroadcastTo, "broadcast_to") X(Slice, "slice") X(Concat, "concat")         \
  X(Take, "take") X(ScatterAdd, "scatter_add")                                 \
  X(Conv, "conv") X(Pool, "pool")                                              \
  X(Send, "send") X(Recv, "recv") X(AllReduce, "allreduce")

enum class Op : uint8_t {
#define RANKC_X(name, text) name,
  RANKC_DAG_OPS(RANKC_X)
#undef RANKC_X
};

std::optional<Op> parseOp(std::string_view name);
const char *opName(Op op);

enum class OpClass : uint8_t {
  Leaf, Unary, Binary, Compare, Logical, Where, Contraction, Reduction,
  Shape, Indexing, Window, Comm
};
OpClass opClass(Op op);

/// Argmax: pool's only (the others: reductions and allreduces too).
enum class Reduce : uint8_t { Sum, Prod, Max, Min, Mean, Argmax };
std::optional<Reduce> parseReduce(std::string_view name);

/// A peer: an absolute rank, or an offset from the executing rank.
struct Peer {
  int64_t value = 0;
  bool relative = false;
};

/// A tag as written: an integer or a string.
using Tag = std::variant<int64_t, std::string>;

/// A constant's `value`: a number (bool, integer or float) or nested list.
struct Scalar {
  enum Kind : uint8_t { Bool, Int, Float } kind = Int;
  bool b = false;
  int64_t i = 0;
  double f = 0;
};
struct ConstantValue {
  std::vector<int64_t> shape; // the nesting of the JSON lists
  std::vector<Scalar> elements; // row-major
};

using Shape = llvm::SmallVector<int64_t, 4>;

/// Attributes of the few ops that have them.
struct NodeAttrs {
  Peer peer; // send, recv
  Tag tag;   // send, recv, allreduce
  ConstantValue value;
  std::vector<int64_t> axes, perm, begin, end, step;
  std::string spec;
  // conv and pool: one entry per spatial axis (padding: lo, hi pairs,
  // flattened); empty where the document left the default.
  std::vector<int64_t> stride, padding, dilation, inputDilation, window;
  int64_t groups = 1;
};

/// Which optional keys a node wrote (so that "absent" and "default" differ).
enum NodeKey : uint32_t {
  K_args = 1u << 0, K_shape = 1u << 1, K_dtype = 1u << 2, K_value = 1u << 3,
  K_axis = 1u << 4, K_axes = 1u << 5, K_keepdims = 1u << 6, K_spec = 1u << 7,
  K_perm = 1u << 8, K_begin = 1u << 9, K_end = 1u << 10, K_step = 1u << 11,
  K_dest = 1u << 12, K_src = 1u << 13, K_tag = 1u << 14, K_reduce = 1u << 15,
  K_stride = 1u << 16, K_padding = 1u << 17, K_dilation = 1u << 18,
  K_input_dilation = 1u << 19, K_groups = 1u << 20, K_window = 1u << 21,
};

/// Source position of something in the document (1-based), for diagnostics.
struct Pos {
  uint32_t line = 0, col = 0;
};

struct Node {
  std::string id;
  uint32_t idName = 0; // interned id (Program::names)
  Op op = Op::Input;
  DType dtype = DType::F32;
  DType outDType = DType::F32; // filled by the checker
  Reduce reduce = Reduce::Sum;
  bool keepdims = false;
  uint32_t keys = 0; // NodeKey bits
  /// Interned argument names as read; the checker resolves them in place
  /// to node indices.
  llvm::SmallVector<uint32_t, 2> args;
  std::vector<int64_t> shape; // as written (usually absent: no allocation)
  Shape outShape; // filled by the checker: the value's (sends: the sent one)
  int64_t axis = 0;
  Pos pos;
  std::unique_ptr<NodeAttrs> attrs;

  bool has(NodeKey k) const { return keys & k; }
  /// The rare attributes, created on first write.
  NodeAttrs &rare() {
    if (!attrs)
      attrs = std::make_unique<NodeAttrs>();
    return *attrs;
  }
  /// The rare attributes, or empty ones when none were written.
  const NodeAttrs &rare() const {
    static const NodeAttrs none;
    return attrs ? *attrs : none;
  }
};

struct Output {
  std::string name;
  std::string nodeName;
  std::optional<std::string> gradOf;
  uint32_t node = 0; // resolved by the checker
  Pos pos;
};

/// `state` (v2): after each step, output `outputName` becomes the value of
/// the input or param `inputId` for the next step.
struct StatePair {
  std::string inputId, outputName;
  Pos pos;
};

struct Program {
  Program() = default;
  // Moved, never copied (std::vector<Program> must not try to copy nodes).
  Program(Program &&) noexcept = default;
  Program &operator=(Program &&) noexcept = default;

  bool allRanks = false;
  /// Node ids and argument names, interned: names[i] is the name of id i.
  llvm::StringMap<uint32_t, llvm::BumpPtrAllocator> nameIds;
  std::vector<llvm::StringRef> names;
  uint32_t intern(llvm::StringRef name) {
    auto [it, inserted] = nameIds.try_emplace(name, names.size());
    if (inserted)
      names.push_back(it->first());
    return it->second;
  }
  std::vector<int64_t> ranks; // when !allRanks, as written
  std::deque<Node> nodes; // a deque: reading appends without moving nodes
  std::vector<Output> outputs; // in document order
  std::vector<StatePair> state; // in document order
  Pos pos, statePos;
  std::vector<uint32_t> order; // topological, filled by the checker

  /// "[0]", "[0, 2]" or "all": how diagnostics name this program.
  std::string ranksText() const;
};

/// `data_parallel.optimizer` (v2), with PyTorch's defaults filled in.
struct Optimizer {
  enum Kind : uint8_t { Sgd, Adam, AdamW } kind = Sgd;
  double lr = 0;
  double momentum = 0, dampening = 0; // sgd
  bool nesterov = false;              // sgd
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8; // adam, adamw
  double weightDecay = 0; // adamw: 0.01 unless given
  Pos pos;
};
const char *optimizerName(Optimizer::Kind kind);

struct DataParallel {
  double bucketCapMb = 25;
  double firstBucketCapMb = 1;
  bool ddpInitialOrder = false;
  std::vector<std::string> ignore;
  std::optional<Optimizer> optimizer;
  Pos pos;
};

struct Document {
  std::string file; // as given on the command line, for diagnostics
  int64_t version = 1;
  int64_t worldSize = 1;
  std::optional<DataParallel> dataParallel;
  std::vector<Program> programs;
};

} // namespace rankc::dag

#endif // RANKC_FRONTEND_DAG_H
