//===- Dag.h - the serialized DAG, parsed -----------------------*- C++ -*-===//
//
// The in-memory form of a `rankc-dag` version 1, 2 or 3 document (see
// shared/spec/dag-format.md). The JSON reader fills it with what the text
// says, checking JSON types and keys; the checker resolves names, infers
// shapes and dtypes and enforces the spec's rules; the importer turns a
// checked document into MLIR. Nothing here depends on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_FRONTEND_DAG_H
#define RANKC_FRONTEND_DAG_H

#include "rankc/Support/TypeText.h"
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

/// In rankc_runtime.h's order (RANKC_DTYPES): the unsigned dtypes of
/// version 3 come last.
enum class DType : uint8_t { Bool, I8, I32, I64, F16, BF16, F32, F64, U8, U16, U32 };

std::optional<DType> parseDType(std::string_view name);
const char *dtypeName(DType t);
/// "f32[4, 4]": how messages, the checker and the analysis name a type.
using rankc::typeText;
unsigned dtypeBytes(DType t);
bool isFloat(DType t);
bool isInteger(DType t); // i8 i32 i64 u8 u16 u32 (not bool)
bool isUnsigned(DType t); // u8 u16 u32
/// The version of dag-format.md that introduced `t` (1, or 3 for u8 u16 u32).
int dtypeVersion(DType t);

/// The keys a node may carry besides "id" and "op"; NodeKey gives each a
/// bit (in this order), keyName and parseNodeKey its spelling.
#define RANKC_DAG_KEYS(X)                                                      \
  X(args) X(shape) X(dtype) X(value) X(axis) X(axes) X(keepdims) X(spec)       \
  X(perm) X(begin) X(end) X(step) X(dest) X(src) X(tag) X(reduce) X(stride)    \
  X(padding) X(dilation) X(input_dilation) X(groups) X(window) X(fill)

enum class KeyIndex : uint8_t {
#define RANKC_X(key) key,
  RANKC_DAG_KEYS(RANKC_X)
#undef RANKC_X
};

/// Which keys a node wrote (so that "absent" and "default" differ).
enum NodeKey : uint32_t {
#define RANKC_X(key) K_##key = 1u << unsigned(KeyIndex::key),
  RANKC_DAG_KEYS(RANKC_X)
#undef RANKC_X
};
/// A stated result type: every op may carry one (checked against the
/// inferred type); leaves and receives must.
constexpr uint32_t K_type = K_shape | K_dtype;

const char *keyName(NodeKey key);
std::optional<NodeKey> parseNodeKey(std::string_view name);

enum class OpClass : uint8_t {
  Leaf, Unary, Binary, Compare, Logical, Where, Contraction, Reduction,
  Shape, Indexing, Window, Comm
};

/// The ops of dag-format.md and their rules, one line an op:
///   X(enum, name, class, operands, keys, required keys)
/// operands: how many (-1: one or more); keys: those it may carry besides
/// "args" and a stated type; required keys: those it must carry. Each class
/// has its inference rule (lib/Frontend/*Rules.cpp) and builders
/// (lib/Frontend/*Builders.cpp).
#define RANKC_DAG_OPS(X)                                                       \
  X(Input, "input", Leaf, 0, 0, K_type)                                        \
  X(Param, "param", Leaf, 0, 0, K_type)                                        \
  X(Constant, "constant", Leaf, 0, K_value, K_value | K_dtype)                 \
  X(Iota, "iota", Leaf, 0, K_axis, K_type | K_axis)                            \
  X(Step, "step", Leaf, 0, 0, 0)                                               \
  X(Neg, "neg", Unary, 1, 0, 0) X(Abs, "abs", Unary, 1, 0, 0)                  \
  X(Exp, "exp", Unary, 1, 0, 0) X(Log, "log", Unary, 1, 0, 0)                  \
  X(Sqrt, "sqrt", Unary, 1, 0, 0) X(Rsqrt, "rsqrt", Unary, 1, 0, 0)            \
  X(Sin, "sin", Unary, 1, 0, 0) X(Cos, "cos", Unary, 1, 0, 0)                  \
  X(Tanh, "tanh", Unary, 1, 0, 0) X(Erf, "erf", Unary, 1, 0, 0)                \
  X(Sigmoid, "sigmoid", Unary, 1, 0, 0) X(Relu, "relu", Unary, 1, 0, 0)        \
  X(Floor, "floor", Unary, 1, 0, 0) X(Ceil, "ceil", Unary, 1, 0, 0)            \
  X(Not, "not", Unary, 1, 0, 0) X(Cast, "cast", Unary, 1, 0, K_dtype)          \
  X(Add, "add", Binary, 2, 0, 0) X(Sub, "sub", Binary, 2, 0, 0)                \
  X(Mul, "mul", Binary, 2, 0, 0) X(Div, "div", Binary, 2, 0, 0)                \
  X(Pow, "pow", Binary, 2, 0, 0) X(Maximum, "maximum", Binary, 2, 0, 0)        \
  X(Minimum, "minimum", Binary, 2, 0, 0) X(Rem, "rem", Binary, 2, 0, 0)        \
  X(Eq, "eq", Compare, 2, 0, 0) X(Ne, "ne", Compare, 2, 0, 0)                  \
  X(Lt, "lt", Compare, 2, 0, 0) X(Le, "le", Compare, 2, 0, 0)                  \
  X(Gt, "gt", Compare, 2, 0, 0) X(Ge, "ge", Compare, 2, 0, 0)                  \
  X(And, "and", Logical, 2, 0, 0) X(Or, "or", Logical, 2, 0, 0)                \
  X(Where, "where", Where, 3, 0, 0)                                            \
  X(Einsum, "einsum", Contraction, -1, K_spec, K_spec)                         \
  X(Matmul, "matmul", Contraction, 2, 0, 0)                                    \
  X(Sum, "sum", Reduction, 1, K_axes | K_keepdims, 0)                          \
  X(Prod, "prod", Reduction, 1, K_axes | K_keepdims, 0)                        \
  X(Max, "max", Reduction, 1, K_axes | K_keepdims, 0)                          \
  X(Min, "min", Reduction, 1, K_axes | K_keepdims, 0)                          \
  X(Mean, "mean", Reduction, 1, K_axes | K_keepdims, 0)                        \
  X(Reshape, "reshape", Shape, 1, 0, K_shape)                                  \
  X(Transpose, "transpose", Shape, 1, K_perm, K_perm)                          \
  X(BroadcastTo, "broadcast_to", Shape, 1, 0, K_shape)                         \
  X(Slice, "slice", Shape, 1, K_begin | K_end | K_step, K_begin | K_end)       \
  X(Concat, "concat", Shape, -1, K_axis, K_axis)                               \
  X(Take, "take", Indexing, 2, K_axis, K_axis)                                 \
  X(ScatterAdd, "scatter_add", Indexing, 3, K_axis, K_axis)                    \
  X(Conv, "conv", Window, 2,                                                   \
    K_stride | K_padding | K_dilation | K_input_dilation | K_groups, 0)        \
  X(Pool, "pool", Window, 1, K_reduce | K_window | K_stride | K_padding,       \
    K_reduce | K_window)                                                       \
  X(Send, "send", Comm, 1, K_dest | K_tag, K_dest | K_tag)                     \
  X(Recv, "recv", Comm, 0, K_src | K_tag | K_fill, K_type | K_src | K_tag)     \
  X(AllReduce, "allreduce", Comm, 1, K_reduce | K_tag, K_reduce | K_tag)

enum class Op : uint8_t {
#define RANKC_X(name, text, ...) name,
  RANKC_DAG_OPS(RANKC_X)
#undef RANKC_X
};

std::optional<Op> parseOp(std::string_view name);
const char *opName(Op op);
OpClass opClass(Op op);
/// The number of operands (-1: one or more).
int opArity(Op op);
/// The keys `op` may carry (besides "id" and "op"), and those it must.
struct KeyRule {
  uint32_t allowed, required;
};
KeyRule opKeys(Op op);

/// Argmax: pool's only (the others: reductions and allreduces too).
enum class Reduce : uint8_t { Sum, Prod, Max, Min, Mean, Argmax };
std::optional<Reduce> parseReduce(std::string_view name);

/// A peer: an absolute rank, an offset from the executing rank, or (v3) the
/// rank at a shift on a process grid (none past a non-periodic edge).
struct Peer {
  int64_t value = 0;
  bool relative = false;
  std::vector<int64_t> grid, shift; // grid peers only: grid non-empty
  std::vector<bool> periodic;       // one per axis (default all false)
  bool isGrid() const { return !grid.empty(); }
  /// Whether some rank has no peer: a shift off a non-periodic axis.
  bool leavesGrid() const {
    for (size_t i = 0; i < grid.size(); ++i)
      if (shift[i] != 0 && !periodic[i])
        return true;
    return false;
  }
  /// This peer as seen from `rank` of a world of `worldSize`: a rank in
  /// [0, worldSize), none past a non-periodic edge, or (absolute peers only)
  /// the rank as written, which may lie outside the world.
  std::optional<int64_t> resolve(int64_t rank, int64_t worldSize) const;
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
  Scalar fill; // recv (v3): its value where a grid peer is missing
  std::vector<int64_t> axes, perm, begin, end, step;
  std::string spec;
  // conv and pool: one entry per spatial axis (padding: lo, hi pairs,
  // flattened); empty where the document left the default.
  std::vector<int64_t> stride, padding, dilation, inputDilation, window;
  int64_t groups = 1;
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
/// One phase of `optimizer.lr_schedule` (v3): the learning rate is
/// lr * factor(t), t the optimizer steps since the phase began.
struct LrPhase {
  enum Kind : uint8_t { Constant, Linear, Cosine, Step, Exponential } kind =
      Constant;
  int64_t steps = 0; // 0: none (only the last phase)
  double factor = 1;                              // constant
  double startFactor = 1.0 / 3, endFactor = 1;    // linear (LinearLR's)
  double minFactor = 0;                           // cosine
  int64_t stepSize = 0;                           // step
  double gamma = 0.1;                             // step, exponential
  Pos pos;
};

/// `optimizer.clip_grad_norm` (v3): torch.nn.utils.clip_grad_norm_.
struct ClipGradNorm {
  double maxNorm = 0;
  bool inf = false;   // norm_type "inf" (else 2)
  std::string output; // the total norm's output name, if any
  Pos pos, outputPos;
};

struct Optimizer {
  enum Kind : uint8_t { Sgd, Adam, AdamW } kind = Sgd;
  double lr = 0;
  std::string lrInput; // v3: the learning rate is this input's value
  Pos lrPos;
  std::vector<LrPhase> lrSchedule; // v3
  std::optional<ClipGradNorm> clip; // v3
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
  int64_t accumulate = 1; // v3: micro-steps per update
  Pos pos, accumulatePos;
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
