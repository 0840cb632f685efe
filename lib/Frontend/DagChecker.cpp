//===- DagChecker.cpp - rules of the DAG format ---------------------------===//
//
// One pass over each program in topological order: every node's operands are
// typed before the node itself, so inference is a single linear sweep.
//
//===----------------------------------------------------------------------===//

#include "rankc/Frontend/DagChecker.h"
#include "InferenceRules.h"
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

std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}


InFlightDiagnostic RuleContext::error() {
  return emitError(makeLoc(ctx, doc.file, node.pos, &program, node.id));
}

LogicalResult RuleContext::needFloat(DType t) {
  if (isFloat(t))
    return success();
  return error() << "'" << opName(node.op) << "' takes floats, got "
                 << dtypeName(t);
}

LogicalResult RuleContext::sameDTypes() {
  for (size_t i = 1; i < node.args.size(); ++i)
    if (arg(i).outDType != arg(0).outDType)
      return error() << "operands have different dtypes ("
                     << dtypeName(arg(0).outDType) << " and "
                     << dtypeName(arg(i).outDType) << "); insert a 'cast'";
  return success();
}

LogicalResult RuleContext::broadcastArgs(size_t first) {
  node.outShape = arg(first).outShape;
  for (size_t i = first + 1; i < node.args.size(); ++i) {
    auto b = broadcastShapes(node.outShape, arg(i).outShape);
    if (!b)
      return error() << "shapes " << shapeText(node.outShape) << " and "
                     << shapeText(arg(i).outShape) << " do not broadcast";
    node.outShape = *b;
  }
  return success();
}

LogicalResult RuleContext::checkShape(llvm::ArrayRef<int64_t> s,
                                      const char *what) {
  int64_t elements = 1;
  for (int64_t d : s) {
    if (d < 0)
      return error() << "'" << what << "' " << shapeText(s)
                         << " has a negative dimension";
    if (llvm::MulOverflow(elements, d, elements) || elements > (int64_t(1) << 59))
      return error() << "'" << what << "' " << shapeText(s)
                         << " is too large (its size overflows 64 bits)";
  }
  return success();
}

LogicalResult RuleContext::normalizeAxis(int64_t &axis, size_t rank,
                                         const char *what) {
  int64_t r = int64_t(rank);
  if (axis < -r || axis >= r)
    return error() << "'" << what << "' " << axis
                       << " is out of range for rank " << rank;
  if (axis < 0)
    axis += r;
  return success();
}


namespace {

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
  LogicalResult checkOutputs(Program &p);
  LogicalResult checkState(Program &p);

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
    int want = opArity(n.op);
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

LogicalResult Checker::inferNode(Program &p, Node &n) {
  // Keys: none beyond the op's, and all that it needs.
  KeyRule keys = opKeys(n.op);
  uint32_t extra = n.keys & ~(keys.allowed | K_args);
  uint32_t missing = keys.required & ~n.keys;
  if (extra)
    return error(p, n) << "unknown key '" << keyName(NodeKey(extra & -extra))
                       << "' for op '" << opName(n.op) << "'";
  if (missing)
    return error(p, n) << "op '" << opName(n.op) << "' needs '"
                       << keyName(NodeKey(missing & -missing)) << "'";

  // What the node states about its own type, checked after inference.
  // (For reshape and broadcast_to, 'shape' is the target itself.)
  bool shapeIsAttr = n.op == Op::Reshape || n.op == Op::BroadcastTo;
  bool dtypeIsAttr = n.op == Op::Cast || n.op == Op::Constant;

  // The op's family infers its type (lib/Frontend/*Rules.cpp).
  RuleContext r{ctx, doc, p, n};
  LogicalResult rule = failure();
  switch (opClass(n.op)) {
  case OpClass::Leaf:
    rule = inferLeaf(r);
    break;
  case OpClass::Unary: case OpClass::Binary: case OpClass::Compare:
  case OpClass::Logical: case OpClass::Where:
    rule = inferElementwise(r);
    break;
  case OpClass::Contraction:
    rule = inferContraction(r);
    break;
  case OpClass::Reduction:
    rule = inferReduction(r);
    break;
  case OpClass::Shape:
    rule = inferShapeOp(r);
    break;
  case OpClass::Indexing:
    rule = inferIndexing(r);
    break;
  case OpClass::Window:
    rule = inferWindow(r);
    break;
  case OpClass::Comm:
    rule = inferComm(r);
    break;
  }
  if (failed(rule))
    return failure();

  if (failed(r.checkShape(n.outShape, "result shape")))
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
  const Optimizer &opt = *doc.dataParallel->optimizer;
  if (!opt.lrInput.empty()) {
    const Node *lr = nodeNamed(opt.lrInput);
    if (!lr || lr->op != Op::Input)
      return error(p, opt.lrPos)
             << "the optimizer's 'lr' input '" << opt.lrInput
             << "' is not an input of this program (every program needs it)";
    if (!lr->outShape.empty() || !isFloat(lr->outDType))
      return error(p, *lr) << "the optimizer's 'lr' input '" << opt.lrInput
                           << "' must be a 0-d float, not "
                           << dtypeName(lr->outDType) << shapeText(lr->outShape);
  }
  if (opt.clip && !opt.clip->output.empty() && !gradParams.empty()) {
    const std::string &name = opt.clip->output;
    if (!comm::isValidOutputName(name))
      return error(p, opt.clip->outputPos)
             << "clip_grad_norm 'output' '" << name
             << "' is not a valid output name (expected [A-Za-z0-9_.-]+)";
    if (const Output *clash = outputNamed(name))
      return error(p, clash->pos)
             << "output '" << name << "' has the name of clip_grad_norm's "
             << "'output', which the optimizer writes";
    if (gradParams.contains(name))
      return error(p, opt.clip->outputPos)
             << "clip_grad_norm 'output' '" << name
             << "' is the name of an updated param";
  }
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
