//===- DagChecker.cpp - rules of the DAG format ---------------------------===//
//
// One pass over each program in topological order: every node's operands are
// typed before the node itself, so inference is a single linear sweep.
//
//===----------------------------------------------------------------------===//

#include "rankc/Frontend/DagChecker.h"
#include "MessageTypes.h"
#include "rankc/Dialect/Comm/Comm.h"
#include "rankc/Frontend/DagDiagnostics.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;

namespace rankc::dag {

std::optional<Shape> broadcastShapes(
    llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1)
      return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

std::optional<EinsumSpec> parseEinsum(std::string_view spec,
                                      std::string &error) {
  EinsumSpec out;
  size_t arrow = spec.find("->");
  if (arrow == std::string_view::npos) {
    error = "needs an explicit output ('...->...')";
    return std::nullopt;
  }
  std::string_view lhs = spec.substr(0, arrow), rhs = spec.substr(arrow + 2);
  auto letters = [](std::string_view s) {
    return llvm::all_of(s, [](char c) { return llvm::isAlpha(c); });
  };
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    std::string_view term = lhs.substr(start, comma - start);
    if (!letters(term)) {
      error = "operand terms must be letters only";
      return std::nullopt;
    }
    out.inputs.emplace_back(term);
    if (comma == std::string_view::npos)
      break;
    start = comma + 1;
  }
  if (!letters(rhs)) {
    error = "the output term must be letters only";
    return std::nullopt;
  }
  out.output = std::string(rhs);
  for (size_t i = 0; i < rhs.size(); ++i) {
    if (rhs.find(rhs[i], i + 1) != std::string_view::npos) {
      error = std::string("output letter '") + rhs[i] + "' appears twice";
      return std::nullopt;
    }
    if (lhs.find(rhs[i]) == std::string_view::npos) {
      error = std::string("output letter '") + rhs[i] +
              "' appears in no operand";
      return std::nullopt;
    }
  }
  return out;
}

namespace {

std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// Keys each op may carry beyond id, op and args; and those it must carry.
struct KeyRule {
  uint32_t allowed, required;
};
KeyRule keyRule(Op op) {
  constexpr uint32_t T = K_shape | K_dtype; // stated result type, optional
  switch (op) {
  case Op::Input: case Op::Param:
    return {T, T};
  case Op::Constant:
    return {T | K_value, K_value | K_dtype};
  case Op::Iota:
    return {T | K_axis, T | K_axis};
  case Op::Cast:
    return {T, K_dtype};
  case Op::Einsum:
    return {T | K_spec, K_spec};
  case Op::Sum: case Op::Prod: case Op::Max: case Op::Min: case Op::Mean:
    return {T | K_axes | K_keepdims, 0};
  case Op::Reshape: case Op::BroadcastTo:
    return {T, K_shape};
  case Op::Transpose:
    return {T | K_perm, K_perm};
  case Op::Slice:
    return {T | K_begin | K_end | K_step, K_begin | K_end};
  case Op::Concat:
  case Op::Take: case Op::ScatterAdd:
    return {T | K_axis, K_axis};
  case Op::Conv:
    return {T | K_stride | K_padding | K_dilation | K_input_dilation |
                K_groups,
            0};
  case Op::Pool:
    return {T | K_reduce | K_window | K_stride | K_padding,
            K_reduce | K_window};
  case Op::Send:
    return {T | K_dest | K_tag, K_dest | K_tag};
  case Op::Recv:
    return {T | K_src | K_tag, T | K_src | K_tag};
  case Op::AllReduce:
    return {T | K_reduce | K_tag, K_reduce | K_tag};
  default:
    return {T, 0};
  }
}

const char *keyName(uint32_t bit) {
  switch (NodeKey(bit)) {
  case K_args: return "args"; case K_shape: return "shape";
  case K_dtype: return "dtype"; case K_value: return "value";
  case K_axis: return "axis"; case K_axes: return "axes";
  case K_keepdims: return "keepdims"; case K_spec: return "spec";
  case K_perm: return "perm"; case K_begin: return "begin";
  case K_end: return "end"; case K_step: return "step";
  case K_dest: return "dest"; case K_src: return "src";
  case K_tag: return "tag"; case K_reduce: return "reduce";
  case K_stride: return "stride"; case K_padding: return "padding";
  case K_dilation: return "dilation";
  case K_input_dilation: return "input_dilation";
  case K_groups: return "groups"; case K_window: return "window";
  }
  return "?";
}

/// The number of operands each op takes (-1: one or more).
int arity(Op op) {
  switch (opClass(op)) {
  case OpClass::Leaf: return 0;
  case OpClass::Unary: return 1;
  case OpClass::Binary: case OpClass::Compare: case OpClass::Logical: return 2;
  case OpClass::Where: return 3;
  case OpClass::Reduction: return 1;
  case OpClass::Contraction: return op == Op::Matmul ? 2 : -1;
  case OpClass::Shape: return op == Op::Concat ? -1 : 1;
  case OpClass::Indexing: return op == Op::Take ? 2 : 3;
  case OpClass::Window: return op == Op::Conv ? 2 : 1;
  case OpClass::Comm: return op == Op::Recv ? 0 : 1;
  }
  return 0;
}

class Checker {
public:
  Checker(MLIRContext *ctx, Document &doc) : ctx(ctx), doc(doc) {}
  LogicalResult run();

private:
  InFlightDiagnostic error(const Program &p, const Node &n) {
    return emitError(makeLoc(ctx, doc.file, n.pos, &p, n.id));
  }
  InFlightDiagnostic error(const Program &p, Pos pos) {
    return emitError(makeLoc(ctx, doc.file, pos, &p));
  }

  LogicalResult checkRanks();
  LogicalResult checkProgram(Program &p, std::vector<bool> &inferred);
  LogicalResult resolveArgs(Program &p);
  LogicalResult sortTopologically(Program &p);
  LogicalResult inferNode(Program &p, Node &n);
  LogicalResult checkBytes(Program &p, Node &n);
  LogicalResult checkShape(Program &p, Node &n, llvm::ArrayRef<int64_t> s,
                           const char *what);
  LogicalResult checkConstant(Program &p, Node &n);
  LogicalResult checkPeerAndTag(Program &p, Node &n);
  LogicalResult checkOutputs(Program &p);
  LogicalResult checkState(Program &p);
  LogicalResult normalizeAxis(Program &p, Node &n, int64_t &axis, size_t rank,
                              const char *what);
  LogicalResult inferWindow(Program &p, Node &n);

  MLIRContext *ctx;
  Document &doc;
  std::vector<int32_t> nodeOfName; // per interned name of the program
};

LogicalResult Checker::checkRanks() {
  std::vector<int> owner(doc.worldSize, -1);
  for (size_t i = 0; i < doc.programs.size(); ++i) {
    Program &p = doc.programs[i];
    if (p.allRanks && doc.programs.size() > 1)
      return emitError(makeLoc(ctx, doc.file, p.pos, &p))
             << "a program on \"all\" ranks must be the only program";
    if (p.allRanks)
      return success();
    for (int64_t r : p.ranks) {
      if (r < 0 || r >= doc.worldSize)
        return emitError(makeLoc(ctx, doc.file, p.pos, &p))
               << "rank " << r << " is outside [0, " << doc.worldSize << ")";
      if (owner[r] >= 0)
        return emitError(makeLoc(ctx, doc.file, p.pos, &p))
               << "rank " << r << " is also in program "
               << doc.programs[owner[r]].ranksText();
      owner[r] = int(i);
    }
  }
  for (int64_t r = 0; r < doc.worldSize; ++r)
    if (owner[r] < 0)
      return emitError(makeLoc(ctx, doc.file, Pos{1, 1}))
             << "rank " << r << " (of world_size " << doc.worldSize
             << ") is in no program";
  return success();
}

LogicalResult Checker::resolveArgs(Program &p) {
  nodeOfName.assign(p.names.size(), -1);
  for (uint32_t i = 0; i < p.nodes.size(); ++i) {
    int32_t &slot = nodeOfName[p.nodes[i].idName];
    if (slot >= 0)
      return error(p, p.nodes[i]) << "duplicate node id '" << p.nodes[i].id
                                  << "'";
    slot = i;
  }
  for (Node &n : p.nodes) {
    for (uint32_t &name : n.args) {
      int32_t arg = nodeOfName[name];
      if (arg < 0)
        return error(p, n) << "argument '" << p.names[name]
                           << "' names no node";
      if (p.nodes[arg].op == Op::Send)
        return error(p, n) << "argument '" << p.names[name]
                           << "' is a send, which has no value";
      name = arg; // now the argument's node index
    }
    int want = arity(n.op);
    if ((want >= 0 && n.args.size() != size_t(want)) ||
        (want < 0 && n.args.empty()))
      return error(p, n) << "'" << opName(n.op) << "' takes "
                         << (want < 0 ? "one or more" : std::to_string(want))
                         << " argument" << (want == 1 ? "" : "s") << ", got "
                         << n.args.size();
  }
  // Outputs name nodes too.
  for (Output &o : p.outputs) {
    auto it = p.nameIds.find(o.nodeName);
    o.node = it == p.nameIds.end() ? ~0u : nodeOfName[it->second];
  }
  return success();
}

// Iterative depth-first search (deep chains must not overflow the stack).
// Visiting roots in document order keeps the order deterministic and close to
// what the author wrote.
LogicalResult Checker::sortTopologically(Program &p) {
  enum : uint8_t { White, Grey, Black };
  std::vector<uint8_t> color(p.nodes.size(), White);
  std::vector<std::pair<uint32_t, uint32_t>> stack; // (node, next arg)
  p.order.clear();
  p.order.reserve(p.nodes.size());
  for (uint32_t root = 0; root < p.nodes.size(); ++root) {
    if (color[root] != White)
      continue;
    stack.push_back({root, 0});
    color[root] = Grey;
    while (!stack.empty()) {
      auto &[node, next] = stack.back();
      const Node &n = p.nodes[node];
      if (next == n.args.size()) {
        color[node] = Black;
        p.order.push_back(node);
        stack.pop_back();
        continue;
      }
      uint32_t arg = n.args[next++];
      if (color[arg] == White) {
        color[arg] = Grey;
        stack.push_back({arg, 0});
      } else if (color[arg] == Grey) {
        // The grey nodes on the stack from `arg` upward form the cycle.
        std::string path;
        bool on = false;
        for (auto &entry : stack) {
          on |= entry.first == arg;
          if (on)
            path += "'" + p.nodes[entry.first].id + "' -> ";
        }
        path += "'" + p.nodes[arg].id + "'";
        return error(p, p.nodes[arg])
               << "the graph has a cycle: " << path
               << " (each node uses the next as an argument)";
      }
    }
  }
  return success();
}

LogicalResult Checker::checkShape(Program &p, Node &n,
                                  llvm::ArrayRef<int64_t> s,
                                  const char *what) {
  int64_t elements = 1;
  for (int64_t d : s) {
    if (d < 0)
      return error(p, n) << "'" << what << "' " << shapeText(s)
                         << " has a negative dimension";
    if (llvm::MulOverflow(elements, d, elements) || elements > (int64_t(1) << 59))
      return error(p, n) << "'" << what << "' " << shapeText(s)
                         << " is too large (its size overflows 64 bits)";
  }
  return success();
}

// conv and pool (dag-format.md, "Convolution and pooling"): per spatial
// axis a list of k entries (padding: k [lo, hi] pairs), defaults filled in
// here so that the importer sees every attribute.
LogicalResult Checker::inferWindow(Program &p, Node &n) {
  const Node &x = p.nodes[n.args[0]];
  const char *name = opName(n.op);
  bool conv = n.op == Op::Conv;
  if (x.outShape.size() < 3)
    return error(p, n) << "'" << name << "' x has shape "
                       << shapeText(x.outShape)
                       << ": it needs [N, C, D1, ...] (rank >= 3)";
  size_t k = x.outShape.size() - 2;
  NodeAttrs &a = n.rare();
  auto list = [&](std::vector<int64_t> &v, const char *key, int64_t dflt,
                  int64_t least, bool given) -> LogicalResult {
    if (!given) {
      v.assign(k, dflt);
      return success();
    }
    if (v.size() != k)
      return error(p, n) << "'" << name << "' " << key << " has " << v.size()
                         << " entries; x has " << k << " spatial axes";
    for (int64_t e : v)
      if (e < least)
        return error(p, n) << "'" << name << "' " << key << " entries must be >= "
                           << least << ", got " << e;
    return success();
  };
  if (!conv && failed(list(a.window, "window", 1, 1, true)))
    return failure();
  if (failed(list(a.stride, "stride", 1, 1, n.has(K_stride))))
    return failure();
  if (!n.has(K_stride) && !conv)
    a.stride = a.window; // pool's default: non-overlapping windows
  if (!n.has(K_padding))
    a.padding.assign(2 * k, 0);
  else if (a.padding.size() != 2 * k)
    return error(p, n) << "'" << name << "' padding has "
                       << a.padding.size() / 2 << " [lo, hi] pairs; x has " << k
                       << " spatial axes";
  for (int64_t e : a.padding)
    if (e < 0)
      return error(p, n) << "'" << name
                         << "' padding must be non-negative, got " << e;
  if (failed(list(a.dilation, "dilation", 1, 1, n.has(K_dilation))) ||
      failed(list(a.inputDilation, "input_dilation", 1, 1,
                  n.has(K_input_dilation))))
    return failure();

  // Sizes in 128 bits: a hostile document cannot overflow them.
  auto tooLarge = [&](__int128 v) { return v > (__int128(1) << 59); };
  Shape out{x.outShape[0], 0};
  if (conv) {
    const Node &w = p.nodes[n.args[1]];
    if (failed(isFloat(x.outDType) ? success()
                                   : LogicalResult(error(p, n)
                                                   << "'conv' takes floats, got "
                                                   << dtypeName(x.outDType))))
      return failure();
    if (w.outDType != x.outDType)
      return error(p, n) << "'conv' operands have different dtypes ("
                         << dtypeName(x.outDType) << " and "
                         << dtypeName(w.outDType) << "); insert a 'cast'";
    int64_t c = x.outShape[1], g = a.groups;
    if (w.outShape.size() != x.outShape.size())
      return error(p, n) << "'conv' w has shape " << shapeText(w.outShape)
                         << "; x " << shapeText(x.outShape)
                         << " needs w of rank " << x.outShape.size()
                         << " ([O, C / groups, K1, ...])";
    int64_t o = w.outShape[0];
    if (g < 1 || c % g || o % g)
      return error(p, n) << "'conv' groups " << g << " must be >= 1 and divide "
                         << "C (" << c << ") and O (" << o << ")";
    if (w.outShape[1] != c / g)
      return error(p, n) << "'conv' w has " << w.outShape[1]
                         << " input channels per group; x has C = " << c
                         << " in " << g << " group(s): expected " << c / g;
    out[1] = o;
    for (size_t i = 0; i < k; ++i) {
      __int128 d = x.outShape[2 + i], kk = w.outShape[2 + i];
      // The padded, dilated axis (an empty axis dilates to nothing).
      __int128 padded = (d ? (d - 1) * a.inputDilation[i] + 1 : 0) +
                        a.padding[2 * i] + a.padding[2 * i + 1];
      __int128 span = padded - (kk - 1) * a.dilation[i] - 1;
      __int128 e = (span >= 0 ? span / a.stride[i]
                              : -((-span + a.stride[i] - 1) / a.stride[i])) +
                   1;
      if (e < 0 || tooLarge(padded))
        return error(p, n) << "'conv' kernel (" << int64_t(kk) << ", dilation "
                           << a.dilation[i] << ") is larger than spatial axis "
                           << i << " of x (" << int64_t(d)
                           << ", padded and dilated: " << int64_t(padded) << ")";
      out.push_back(int64_t(e));
    }
  } else {
    if (n.reduce == Reduce::Prod || n.reduce == Reduce::Min)
      return error(p, n) << "'pool' takes reduce 'max', 'sum', 'mean' or "
                            "'argmax'";
    if (x.outDType == DType::Bool)
      return error(p, n) << "'pool' does not take bool";
    if (n.reduce == Reduce::Mean && !isFloat(x.outDType))
      return error(p, n) << "'pool' mean takes floats, got "
                         << dtypeName(x.outDType);
    out[1] = x.outShape[1];
    for (size_t i = 0; i < k; ++i) {
      __int128 d = x.outShape[2 + i], lo = a.padding[2 * i],
               hi = a.padding[2 * i + 1], win = a.window[i];
      if (d + lo + hi < win)
        return error(p, n) << "'pool' window " << int64_t(win)
                           << " is larger than spatial axis " << i << " of x ("
                           << int64_t(d) << " with padding " << int64_t(lo)
                           << " + " << int64_t(hi) << ")";
      int64_t e = int64_t((d + lo + hi - win) / a.stride[i] + 1);
      // max and argmax ignore padding: every window needs an element of x.
      bool maxLike = n.reduce == Reduce::Max || n.reduce == Reduce::Argmax;
      __int128 last = __int128(e - 1) * a.stride[i] - lo;
      if (maxLike && (lo >= win || last >= d))
        return error(p, n) << "'pool' " << (n.reduce == Reduce::Max ? "max" : "argmax")
                           << ": a window of spatial axis " << i
                           << " covers padding only (window " << int64_t(win)
                           << ", padding " << int64_t(lo) << " + " << int64_t(hi)
                           << ", axis " << int64_t(d) << ")";
      out.push_back(e);
    }
  }
  __int128 elements = 1;
  for (int64_t d : out)
    if (tooLarge(elements *= d))
      return error(p, n) << "'" << name << "' result " << shapeText(out)
                         << " is too large (its size overflows 64 bits)";
  n.outShape = out;
  n.outDType = !conv && n.reduce == Reduce::Argmax ? DType::I64 : x.outDType;
  return success();
}

LogicalResult Checker::normalizeAxis(Program &p, Node &n, int64_t &axis,
                                     size_t rank, const char *what) {
  int64_t r = int64_t(rank);
  if (axis < -r || axis >= r)
    return error(p, n) << "'" << what << "' " << axis
                       << " is out of range for rank " << rank;
  if (axis < 0)
    axis += r;
  return success();
}

LogicalResult Checker::checkConstant(Program &p, Node &n) {
  const ConstantValue &v = n.rare().value;
  bool scalar = v.shape.empty();
  if (n.has(K_shape)) {
    if (failed(checkShape(p, n, n.shape, "shape")))
      return failure();
    if (!scalar && ArrayRef<int64_t>(v.shape) != ArrayRef<int64_t>(n.shape))
      return error(p, n) << "'value' has shape " << shapeText(v.shape)
                         << " but 'shape' is " << shapeText(n.shape);
    n.outShape.assign(n.shape.begin(), n.shape.end());
  } else {
    n.outShape.assign(v.shape.begin(), v.shape.end());
  }
  DType t = n.dtype;
  for (const Scalar &s : v.elements) {
    if (t == DType::Bool && s.kind != Scalar::Bool)
      return error(p, n) << "a bool constant takes true and false only";
    if (isInteger(t) && s.kind == Scalar::Float)
      return error(p, n) << "a " << dtypeName(t)
                         << " constant takes integers, got " << s.f;
    if (isInteger(t) && s.kind == Scalar::Int) {
      unsigned bits = dtypeBytes(t) * 8;
      if (bits < 64 && !llvm::isIntN(bits, s.i))
        return error(p, n) << "value " << s.i << " does not fit in "
                           << dtypeName(t);
    }
  }
  n.outDType = t;
  return success();
}

LogicalResult Checker::checkPeerAndTag(Program &p, Node &n) {
  if (n.has(K_dest) || n.has(K_src)) {
    if (!n.rare().peer.relative && (n.rare().peer.value < 0 || n.rare().peer.value >= doc.worldSize))
      return error(p, n) << "peer rank " << n.rare().peer.value << " is outside [0, "
                         << doc.worldSize << ")";
  }
  if (auto *i = std::get_if<int64_t>(&n.rare().tag)) {
    if (*i < 0 || *i >= (int64_t(1) << 31))
      return error(p, n) << "tag " << *i
                         << " is not a non-negative integer below 2^31";
  } else if (std::get<std::string>(n.rare().tag).empty()) {
    return error(p, n) << "a string tag must not be empty";
  }
  return success();
}

LogicalResult Checker::inferNode(Program &p, Node &n) {
  // Keys: none beyond the op's, and all that it needs.
  KeyRule rule = keyRule(n.op);
  uint32_t extra = n.keys & ~(rule.allowed | K_args);
  uint32_t missing = rule.required & ~n.keys;
  if (extra)
    return error(p, n) << "unknown key '" << keyName(extra & -extra)
                       << "' for op '" << opName(n.op) << "'";
  if (missing)
    return error(p, n) << "op '" << opName(n.op) << "' needs '"
                       << keyName(missing & -missing) << "'";

  auto arg = [&](size_t i) -> Node & { return p.nodes[n.args[i]]; };
  auto needFloat = [&](DType t) -> LogicalResult {
    if (isFloat(t))
      return success();
    return error(p, n) << "'" << opName(n.op) << "' takes floats, got "
                       << dtypeName(t);
  };
  auto sameDTypes = [&]() -> LogicalResult {
    for (size_t i = 1; i < n.args.size(); ++i)
      if (arg(i).outDType != arg(0).outDType)
        return error(p, n) << "operands have different dtypes ("
                           << dtypeName(arg(0).outDType) << " and "
                           << dtypeName(arg(i).outDType)
                           << "); insert a 'cast'";
    return success();
  };
  auto broadcastArgs = [&](size_t first) -> LogicalResult {
    n.outShape = arg(first).outShape;
    for (size_t i = first + 1; i < n.args.size(); ++i) {
      auto b = broadcastShapes(n.outShape, arg(i).outShape);
      if (!b)
        return error(p, n) << "shapes " << shapeText(n.outShape) << " and "
                           << shapeText(arg(i).outShape) << " do not broadcast";
      n.outShape = *b;
    }
    return success();
  };

  // What the node states about its own type, checked after inference.
  // (For reshape and broadcast_to, 'shape' is the target itself.)
  bool shapeIsAttr = n.op == Op::Reshape || n.op == Op::BroadcastTo;
  bool dtypeIsAttr = n.op == Op::Cast || n.op == Op::Constant;

  switch (n.op) {
  case Op::Input: case Op::Param: case Op::Recv:
    if (failed(checkShape(p, n, n.shape, "shape")))
      return failure();
    n.outShape.assign(n.shape.begin(), n.shape.end());
    n.outDType = n.dtype;
    if (n.op == Op::Recv && failed(checkPeerAndTag(p, n)))
      return failure();
    break;
  case Op::Constant:
    if (failed(checkConstant(p, n)))
      return failure();
    break;
  case Op::Iota:
    if (failed(checkShape(p, n, n.shape, "shape")) ||
        failed(normalizeAxis(p, n, n.axis, n.shape.size(), "axis")))
      return failure();
    n.outShape.assign(n.shape.begin(), n.shape.end());
    n.outDType = n.dtype;
    break;

  case Op::Cast:
    n.outShape = arg(0).outShape;
    n.outDType = n.dtype;
    break;
  case Op::Not:
    if (arg(0).outDType != DType::Bool)
      return error(p, n) << "'not' takes bool, got "
                         << dtypeName(arg(0).outDType);
    n.outShape = arg(0).outShape;
    n.outDType = DType::Bool;
    break;
  case Op::Exp: case Op::Log: case Op::Sqrt: case Op::Rsqrt: case Op::Sin:
  case Op::Cos: case Op::Tanh: case Op::Erf: case Op::Sigmoid:
    if (failed(needFloat(arg(0).outDType)))
      return failure();
    n.outShape = arg(0).outShape;
    n.outDType = arg(0).outDType;
    break;
  case Op::Neg: case Op::Relu:
    if (arg(0).outDType == DType::Bool)
      return error(p, n) << "'" << opName(n.op) << "' does not take bool";
    [[fallthrough]];
  case Op::Abs: case Op::Floor: case Op::Ceil:
    n.outShape = arg(0).outShape;
    n.outDType = arg(0).outDType;
    break;

  case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Pow:
  case Op::Maximum: case Op::Minimum:
    if (failed(sameDTypes()) || failed(broadcastArgs(0)))
      return failure();
    n.outDType = arg(0).outDType;
    if ((n.op == Op::Div || n.op == Op::Pow) && failed(needFloat(n.outDType)))
      return failure();
    if (n.op == Op::Sub && n.outDType == DType::Bool)
      return error(p, n) << "'sub' does not take bool (NumPy neither); use "
                            "'ne' for exclusive or";
    break;
  case Op::Eq: case Op::Ne: case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge:
    if (failed(sameDTypes()) || failed(broadcastArgs(0)))
      return failure();
    n.outDType = DType::Bool;
    break;
  case Op::And: case Op::Or:
    if (failed(sameDTypes()) || failed(broadcastArgs(0)))
      return failure();
    if (arg(0).outDType != DType::Bool)
      return error(p, n) << "'" << opName(n.op) << "' takes bool, got "
                         << dtypeName(arg(0).outDType);
    n.outDType = DType::Bool;
    break;
  case Op::Where:
    if (arg(0).outDType != DType::Bool)
      return error(p, n) << "the condition of 'where' must be bool, got "
                         << dtypeName(arg(0).outDType);
    if (arg(1).outDType != arg(2).outDType)
      return error(p, n) << "the values of 'where' have different dtypes ("
                         << dtypeName(arg(1).outDType) << " and "
                         << dtypeName(arg(2).outDType) << ")";
    if (failed(broadcastArgs(0)))
      return failure();
    n.outDType = arg(1).outDType;
    break;

  case Op::Einsum: {
    std::string why;
    auto spec = parseEinsum(n.rare().spec, why);
    if (!spec)
      return error(p, n) << "invalid einsum spec '" << n.rare().spec << "': " << why;
    if (spec->inputs.size() != n.args.size())
      return error(p, n) << "einsum spec '" << n.rare().spec << "' has "
                         << spec->inputs.size() << " operand terms but "
                         << n.args.size() << " arguments";
    if (failed(sameDTypes()))
      return failure();
    int64_t dims[128];
    std::fill(std::begin(dims), std::end(dims), -1);
    for (size_t i = 0; i < n.args.size(); ++i) {
      const std::string &term = spec->inputs[i];
      llvm::ArrayRef<int64_t> s = arg(i).outShape;
      if (term.size() != s.size())
        return error(p, n) << "einsum term '" << term << "' has "
                           << term.size() << " letters but operand "
                           << i << " has rank " << s.size();
      for (size_t j = 0; j < term.size(); ++j) {
        int64_t &d = dims[uint8_t(term[j])];
        if (d >= 0 && d != s[j])
          return error(p, n) << "einsum letter '" << term[j]
                             << "' stands for sizes " << d << " and " << s[j];
        d = s[j];
      }
    }
    n.outShape.clear();
    for (char c : spec->output)
      n.outShape.push_back(dims[uint8_t(c)]);
    n.outDType = arg(0).outDType;
    break;
  }
  case Op::Matmul: {
    if (failed(sameDTypes()))
      return failure();
    const auto &a = arg(0).outShape, &b = arg(1).outShape;
    if (a.size() != b.size() || (a.size() != 2 && a.size() != 3))
      return error(p, n) << "'matmul' takes two operands of rank 2 or two of "
                            "rank 3, got "
                         << shapeText(a) << " and " << shapeText(b);
    size_t r = a.size();
    if (a[r - 1] != b[r - 2] || (r == 3 && a[0] != b[0]))
      return error(p, n) << "'matmul' shapes " << shapeText(a) << " and "
                         << shapeText(b) << " do not match";
    n.outShape = a;
    n.outShape[r - 1] = b[r - 1];
    n.outDType = arg(0).outDType;
    break;
  }

  case Op::Sum: case Op::Prod: case Op::Max: case Op::Min: case Op::Mean: {
    const auto &in = arg(0).outShape;
    DType t = arg(0).outDType;
    std::vector<bool> reduced(in.size(), !n.has(K_axes));
    for (int64_t &axis : n.rare().axes) {
      if (failed(normalizeAxis(p, n, axis, in.size(), "axes")))
        return failure();
      if (reduced[axis])
        return error(p, n) << "axis " << axis << " is listed twice";
      reduced[axis] = true;
    }
    n.outShape.clear();
    bool empty = false;
    for (size_t i = 0; i < in.size(); ++i) {
      if (!reduced[i])
        n.outShape.push_back(in[i]);
      else if (n.keepdims)
        n.outShape.push_back(1);
      empty |= reduced[i] && in[i] == 0;
    }
    if ((n.op == Op::Max || n.op == Op::Min) && empty)
      return error(p, n) << "'" << opName(n.op)
                         << "' over an axis of size 0 has no value";
    if (n.op == Op::Mean && failed(needFloat(t)))
      return failure();
    // NumPy: sum and prod of bool and of integers narrower than 64 bits
    // accumulate in (and give) i64.
    if ((n.op == Op::Sum || n.op == Op::Prod) &&
        (t == DType::Bool || t == DType::I8 || t == DType::I32))
      t = DType::I64;
    n.outDType = t;
    break;
  }

  case Op::Reshape: {
    const auto &in = arg(0).outShape;
    int64_t total = 1, known = 1;
    for (int64_t d : in)
      total *= d;
    int inferred = -1;
    for (size_t i = 0; i < n.shape.size(); ++i) {
      if (n.shape[i] == -1 && inferred < 0) {
        inferred = int(i);
        continue;
      }
      if (n.shape[i] < 0)
        return error(p, n) << "reshape target " << shapeText(n.shape)
                           << " may have one -1 and no other negative size";
      if (llvm::MulOverflow(known, n.shape[i], known))
        return error(p, n) << "reshape target " << shapeText(n.shape)
                           << " is too large";
    }
    n.outShape.assign(n.shape.begin(), n.shape.end());
    if (inferred >= 0) {
      if (known == 0 || total % known != 0)
        return error(p, n) << "cannot reshape " << shapeText(in) << " into "
                           << shapeText(n.shape);
      n.outShape[inferred] = total / known;
    } else if (known != total) {
      return error(p, n) << "cannot reshape " << shapeText(in) << " ("
                         << total << " elements) into " << shapeText(n.shape);
    }
    n.outDType = arg(0).outDType;
    break;
  }
  case Op::Transpose: {
    const auto &in = arg(0).outShape;
    std::vector<bool> seen(in.size(), false);
    if (n.rare().perm.size() != in.size())
      return error(p, n) << "'perm' " << shapeText(n.rare().perm)
                         << " is not a permutation of " << in.size()
                         << " axes";
    n.outShape.clear();
    for (int64_t &a : n.rare().perm) {
      if (failed(normalizeAxis(p, n, a, in.size(), "perm")))
        return failure();
      if (seen[a])
        return error(p, n) << "'perm' lists axis " << a << " twice";
      seen[a] = true;
      n.outShape.push_back(in[a]);
    }
    n.outDType = arg(0).outDType;
    break;
  }
  case Op::BroadcastTo: {
    if (failed(checkShape(p, n, n.shape, "shape")))
      return failure();
    auto b = broadcastShapes(arg(0).outShape, n.shape);
    if (!b || ArrayRef<int64_t>(*b) != ArrayRef<int64_t>(n.shape))
      return error(p, n) << "cannot broadcast " << shapeText(arg(0).outShape)
                         << " to " << shapeText(n.shape);
    n.outShape.assign(n.shape.begin(), n.shape.end());
    n.outDType = arg(0).outDType;
    break;
  }
  case Op::Slice: {
    const auto &in = arg(0).outShape;
    if (!n.has(K_step))
      n.rare().step.assign(in.size(), 1);
    if (n.rare().begin.size() != in.size() || n.rare().end.size() != in.size() ||
        n.rare().step.size() != in.size())
      return error(p, n) << "'begin', 'end' and 'step' need one entry per "
                            "axis ("
                         << in.size() << ")";
    n.outShape.clear();
    for (size_t i = 0; i < in.size(); ++i) {
      if (n.rare().begin[i] < 0 || n.rare().begin[i] > n.rare().end[i] || n.rare().end[i] > in[i] ||
          n.rare().step[i] < 1)
        return error(p, n) << "slice of axis " << i << " (size " << in[i]
                           << ") needs 0 <= begin <= end <= size and step >= "
                              "1, got begin "
                           << n.rare().begin[i] << ", end " << n.rare().end[i] << ", step "
                           << n.rare().step[i];
      n.outShape.push_back((n.rare().end[i] - n.rare().begin[i] + n.rare().step[i] - 1) /
                           n.rare().step[i]);
    }
    n.outDType = arg(0).outDType;
    break;
  }
  case Op::Concat: {
    if (failed(sameDTypes()))
      return failure();
    const auto &first = arg(0).outShape;
    if (first.empty())
      return error(p, n) << "'concat' takes arrays of rank >= 1";
    if (failed(normalizeAxis(p, n, n.axis, first.size(), "axis")))
      return failure();
    n.outShape = first;
    for (size_t i = 1; i < n.args.size(); ++i) {
      const auto &s = arg(i).outShape;
      bool ok = s.size() == first.size();
      for (size_t d = 0; ok && d < s.size(); ++d)
        ok = d == size_t(n.axis) || s[d] == first[d];
      if (!ok)
        return error(p, n) << "'concat' shapes " << shapeText(first) << " and "
                           << shapeText(s) << " differ off axis " << n.axis;
      if (llvm::AddOverflow(n.outShape[n.axis], s[n.axis], n.outShape[n.axis]))
        return error(p, n) << "'concat' result is too large";
    }
    n.outDType = arg(0).outDType;
    break;
  }

  case Op::Take:
  case Op::ScatterAdd: {
    // take(x, indices): x.shape[:axis] + indices.shape + x.shape[axis+1:];
    // scatter_add(base, indices, updates): base's shape, updates of the
    // shape take would give.
    const Node &x = arg(0), &indices = arg(1);
    const char *name = opName(n.op);
    if (!isInteger(indices.outDType))
      return error(p, n) << "'" << name
                         << "' indices must be integers (i8, i32 or i64), got "
                         << dtypeName(indices.outDType);
    if (x.outShape.empty())
      return error(p, n) << "'" << name << "' of a scalar: "
                         << (n.op == Op::Take ? "x" : "base")
                         << " needs rank >= 1";
    if (failed(normalizeAxis(p, n, n.axis, x.outShape.size(), "axis")))
      return failure();
    Shape taken(x.outShape.begin(), x.outShape.begin() + n.axis);
    taken.append(indices.outShape.begin(), indices.outShape.end());
    taken.append(x.outShape.begin() + n.axis + 1, x.outShape.end());
    if (n.op == Op::Take) {
      n.outShape = taken;
      n.outDType = x.outDType;
      break;
    }
    const Node &updates = arg(2);
    if (x.outDType == DType::Bool)
      return error(p, n) << "'scatter_add' does not take bool";
    if (updates.outDType != x.outDType)
      return error(p, n) << "'scatter_add' updates are "
                         << dtypeName(updates.outDType) << ", base is "
                         << dtypeName(x.outDType);
    if (ArrayRef<int64_t>(updates.outShape) != ArrayRef<int64_t>(taken))
      return error(p, n) << "'scatter_add' updates have shape "
                         << shapeText(updates.outShape) << ", expected "
                         << shapeText(taken)
                         << " (base.shape[:axis] + indices.shape + "
                            "base.shape[axis+1:])";
    n.outShape = x.outShape;
    n.outDType = x.outDType;
    break;
  }

  case Op::Conv:
  case Op::Pool:
    if (failed(inferWindow(p, n)))
      return failure();
    break;

  case Op::Send:
    if (failed(checkPeerAndTag(p, n)))
      return failure();
    n.outShape = arg(0).outShape;
    n.outDType = arg(0).outDType;
    break;
  case Op::AllReduce:
    if (failed(checkPeerAndTag(p, n)))
      return failure();
    n.outShape = arg(0).outShape;
    n.outDType = arg(0).outDType;
    if (n.reduce == Reduce::Argmax)
      return error(p, n) << "allreduce takes 'sum', 'prod', 'max', 'min' or "
                            "'mean' ('argmax' is pool's)";
    if (n.reduce == Reduce::Mean && failed(needFloat(n.outDType)))
      return failure();
    if (n.outDType == DType::Bool &&
        (n.reduce == Reduce::Sum || n.reduce == Reduce::Prod))
      return error(p, n) << "allreduce '"
                         << (n.reduce == Reduce::Sum ? "sum" : "prod")
                         << "' of bool is not defined; use 'max' (or) or "
                            "'min' (and)";
    break;
  }

  if (failed(checkShape(p, n, n.outShape, "result shape")))
    return failure();
  if (n.has(K_shape) && !shapeIsAttr && ArrayRef<int64_t>(n.shape) != ArrayRef<int64_t>(n.outShape))
    return error(p, n) << "'shape' " << shapeText(n.shape)
                       << " disagrees with the inferred shape "
                       << shapeText(n.outShape);
  if (n.has(K_dtype) && !dtypeIsAttr && n.dtype != n.outDType)
    return error(p, n) << "'dtype' " << dtypeName(n.dtype)
                       << " disagrees with the inferred dtype "
                       << dtypeName(n.outDType);
  return success();
}

LogicalResult Checker::checkOutputs(Program &p) {
  llvm::StringSet<> names;
  for (Output &o : p.outputs) {
    if (!comm::isValidOutputName(o.name))
      return error(p, o.pos) << "output name '" << o.name
                             << "' is not a safe file name (expected "
                                "[A-Za-z0-9_.-]+, not '.' or '..')";
    // Written as RES/rank<r>/<name>.npy: one path component (NAME_MAX).
    if (o.name.size() + 4 > 255)
      return error(p, o.pos) << "output name '" << o.name.substr(0, 32)
                             << "...' has " << o.name.size()
                             << " characters; a file name holds at most 251 "
                                "before '.npy'";
    if (!names.insert(o.name).second)
      return error(p, o.pos) << "output name '" << o.name << "' is used twice";
    if (o.node == ~0u)
      return error(p, o.pos) << "output '" << o.name << "' names no node ('"
                             << o.nodeName << "')";
    const Node &n = p.nodes[o.node];
    if (n.op == Op::Send)
      return error(p, n) << "output '" << o.name
                         << "' names a send, which has no value";
    if (o.gradOf) {
      auto g = p.nameIds.find(*o.gradOf);
      const Node *param = nullptr;
      if (g != p.nameIds.end() && nodeOfName[g->second] >= 0)
        param = &p.nodes[nodeOfName[g->second]];
      if (!param || param->op != Op::Param)
        return error(p, o.pos) << "output '" << o.name << "': grad_of '"
                               << *o.gradOf << "' is not a param";
      if (param->outShape != n.outShape || param->outDType != n.outDType)
        return error(p, n) << "output '" << o.name << "' is "
                           << dtypeName(n.outDType) << shapeText(n.outShape)
                           << " but its param '" << param->id << "' is "
                           << dtypeName(param->outDType)
                           << shapeText(param->outShape);
    }
  }
  return success();
}

/// A value no process can hold: more bytes than x86-64's and AArch64's
/// user address space (2^47). (Smaller ones may still not fit the machine
/// that runs them: the runtime's allocations say so, naming the buffer.)
LogicalResult Checker::checkBytes(Program &p, Node &n) {
  constexpr int64_t kMaxBytes = int64_t(1) << 47;
  __int128 bytes = dtypeBytes(n.outDType);
  for (int64_t d : n.outShape)
    bytes *= d;
  if (bytes <= kMaxBytes)
    return success();
  return error(p, n) << "its value " << dtypeName(n.outDType)
                     << shapeText(n.outShape) << " takes "
                     << llvm::formatv("{0}", uint64_t(bytes)).str()
                     << " bytes, more than a process can address (2^47)";
}

LogicalResult Checker::checkProgram(Program &p, std::vector<bool> &inferred) {
  if (failed(resolveArgs(p)) || failed(sortTopologically(p)))
    return failure();
  bool ok = true;
  for (uint32_t i : p.order) {
    Node &n = p.nodes[i];
    // Past the first error, the nodes that do not depend on a failed one
    // are still inferred (their errors are not reported): a send among
    // them may explain the error (MessageTypes.h).
    if (!ok && llvm::any_of(n.args, [&](uint32_t a) { return !inferred[a]; }))
      continue;
    if (succeeded(inferNode(p, n)) && succeeded(checkBytes(p, n))) {
      if (!ok)
        inferred[i] = true;
      continue;
    }
    if (ok) {
      inferred.assign(p.nodes.size(), false);
      for (uint32_t done : p.order) {
        if (done == i)
          break;
        inferred[done] = true;
      }
    }
    ok = false;
  }
  if (!ok)
    return failure();
  inferred.assign(p.nodes.size(), true);
  return failure(failed(checkOutputs(p)) || failed(checkState(p)));
}

/// `state` (v2) and the parameters that the optimizer updates, which are
/// carried from step to step like state.
LogicalResult Checker::checkState(Program &p) {
  auto nodeNamed = [&](StringRef id) -> const Node * {
    auto it = p.nameIds.find(id);
    if (it == p.nameIds.end() || nodeOfName[it->second] < 0)
      return nullptr;
    return &p.nodes[nodeOfName[it->second]];
  };
  // Lookups by name, so that the check stays linear in the program.
  llvm::StringMap<const Output *> outputs;
  llvm::StringSet<> gradParams;
  for (const Output &o : p.outputs) {
    outputs[o.name] = &o;
    if (o.gradOf)
      gradParams.insert(*o.gradOf);
  }
  auto outputNamed = [&](StringRef name) { return outputs.lookup(name); };
  bool optimizer = doc.dataParallel && doc.dataParallel->optimizer;
  auto updated = [&](StringRef param) {
    return optimizer && gradParams.contains(param);
  };
  for (const StatePair &s : p.state) {
    const Node *in = nodeNamed(s.inputId);
    if (!in || (in->op != Op::Input && in->op != Op::Param))
      return error(p, s.pos) << "'state' names '" << s.inputId
                             << "', which is not an input or param of this "
                                "program";
    const Output *out = outputNamed(s.outputName);
    if (!out)
      return error(p, s.pos) << "state of '" << s.inputId << "' names output '"
                             << s.outputName
                             << "', which this program does not have";
    const Node &v = p.nodes[out->node];
    if (v.outShape != in->outShape || v.outDType != in->outDType)
      return error(p, s.pos) << "state of '" << s.inputId << "' is "
                             << dtypeName(in->outDType)
                             << shapeText(in->outShape) << " but output '"
                             << s.outputName << "' is "
                             << dtypeName(v.outDType) << shapeText(v.outShape);
    if (updated(s.inputId))
      return error(p, s.pos) << "param '" << s.inputId
                             << "' is updated by the optimizer, so it cannot "
                                "also be in 'state'";
  }
  if (!optimizer)
    return success();
  llvm::StringSet<> seen;
  for (const Output &o : p.outputs) {
    if (!o.gradOf || !seen.insert(*o.gradOf).second)
      continue;
    const Node *param = nodeNamed(*o.gradOf);
    if (!comm::isValidOutputName(*o.gradOf))
      return error(p, *param) << "param '" << *o.gradOf
                              << "' is updated by the optimizer, but its id "
                                 "is not a valid output name (expected "
                                 "[A-Za-z0-9_.-]+)";
    if (const Output *clash = outputNamed(*o.gradOf))
      return error(p, clash->pos)
             << "output '" << clash->name
             << "' has the name of the updated param '" << *o.gradOf
             << "', which the optimizer writes";
  }
  return success();
}

LogicalResult Checker::run() {
  if (failed(checkRanks()))
    return failure();
  // The first error is held back until every program is checked: when a
  // message is sent with another type than its receiver declares, that is
  // reported first, as the likely cause (MessageTypes.h).
  std::vector<std::vector<bool>> inferred(doc.programs.size());
  std::optional<Diagnostic> first;
  {
    ScopedDiagnosticHandler hold(ctx, [&](Diagnostic &d) {
      if (!first)
        first.emplace(std::move(d));
      return success();
    });
    for (auto [p, done] : llvm::zip(doc.programs, inferred))
      (void)checkProgram(p, done);
  }
  if (first) {
    reportMessageTypeMismatch(ctx, doc, inferred);
    ctx->getDiagEngine().emit(std::move(*first));
    return failure();
  }
  if (doc.dataParallel) {
    for (const std::string &id : doc.dataParallel->ignore) {
      bool found = llvm::any_of(doc.programs, [&](const Program &p) {
        return llvm::any_of(p.nodes, [&](const Node &n) {
          return n.op == Op::Param && n.id == id;
        });
      });
      if (!found)
        return emitError(makeLoc(ctx, doc.file, doc.dataParallel->pos))
               << "'data_parallel' ignores '" << id
               << "', which is not a param of any program";
    }
  }
  return success();
}

} // namespace

LogicalResult checkDag(MLIRContext *ctx, Document &doc) {
  return Checker(ctx, doc).run();
}

} // namespace rankc::dag
