//===- DagImporter.cpp - checked Document to MLIR -------------------------===//
//
// One func.func per program:
//   - inputs and params become arguments (params in registration order),
//     tagged `comm.input` / `comm.param` with their node ids;
//   - each node becomes ops at its location (file, program, node id), in the
//     checker's topological order;
//   - each distinct (node, grad_of) among the outputs becomes one result
//     carrying all its names in `comm.outputs`.
//
//===----------------------------------------------------------------------===//

#include "rankc/Frontend/DagImporter.h"
#include "TensorBuilders.h"
#include "rankc/Dialect/Comm/Comm.h"
#include "rankc/Frontend/DagChecker.h"
#include "rankc/Frontend/DagDiagnostics.h"
#include "rankc/Frontend/DagReader.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Threading.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;

namespace rankc::dag {
namespace {

class Importer {
public:
  Importer(MLIRContext *ctx, const Document &doc)
      : ctx(ctx), doc(doc), b(ctx) {}

  OwningOpRef<ModuleOp> run();

private:
  /// A program's function, its signature and attributes, without a body.
  struct Declared {
    func::FuncOp fn;
    std::vector<Value> values; ///< node -> value: the arguments so far
    SmallVector<uint32_t> returned;
  };
  Declared declareProgram(ModuleOp module, const Program &p);
  /// The body of a declared program (on a thread of its own: each program
  /// has its own Importer, and touches nothing outside its function).
  void importBody(const Program &p, Declared &d);
  Value importNode(const Program &p, const Node &n, ArrayRef<Value> values);
  static bool checksIndices(const Program &p, const Node &n);
  Attribute tagAttr(const Tag &tag);
  comm::OptimizerAttr optimizerAttr(const Optimizer &opt);
  static std::string functionName(const Program &p);

  MLIRContext *ctx;
  const Document &doc;
  OpBuilder b;
  std::optional<NodeLocations> locations;
  /// The current program's nodes that check indices (check number -> id).
  SmallVector<Attribute> indexChecks;
};

std::string Importer::functionName(const Program &p) {
  if (p.allRanks)
    return "all";
  if (p.ranks.size() == 1)
    return "rank" + std::to_string(p.ranks[0]);
  std::string name = "ranks";
  for (int64_t r : p.ranks)
    name += "_" + std::to_string(r);
  return name;
}

Attribute Importer::tagAttr(const Tag &tag) {
  if (auto *i = std::get_if<int64_t>(&tag))
    return b.getI64IntegerAttr(*i);
  return b.getStringAttr(std::get<std::string>(tag));
}

/// The optimizer with every default filled in, as comm-apply-optimizer
/// reads it (and the dialect verifies it).
comm::OptimizerAttr Importer::optimizerAttr(const Optimizer &opt) {
  auto f = [&](double x) { return b.getF64FloatAttr(x); };
  auto kind = opt.kind == Optimizer::Sgd    ? comm::OptimizerKind::sgd
              : opt.kind == Optimizer::Adam ? comm::OptimizerKind::adam
                                            : comm::OptimizerKind::adamw;
  bool sgd = opt.kind == Optimizer::Sgd;
  FloatAttr lr = opt.lrInput.empty() ? f(opt.lr) : FloatAttr();
  StringAttr lrInput =
      opt.lrInput.empty() ? StringAttr() : b.getStringAttr(opt.lrInput);
  ArrayAttr schedule;
  if (!opt.lrSchedule.empty()) {
    SmallVector<Attribute> phases;
    static const char *const kinds[] = {"constant", "linear", "cosine", "step",
                                        "exponential"};
    for (const LrPhase &ph : opt.lrSchedule) {
      auto k = ph.kind;
      auto i = [&](int64_t x) { return x ? b.getI64IntegerAttr(x) : IntegerAttr(); };
      auto only = [&](bool here, double x) { return here ? f(x) : FloatAttr(); };
      phases.push_back(comm::LrPhaseAttr::get(
          ctx, b.getStringAttr(kinds[k]), i(ph.steps),
          only(k == LrPhase::Constant, ph.factor),
          only(k == LrPhase::Linear, ph.startFactor),
          only(k == LrPhase::Linear, ph.endFactor),
          only(k == LrPhase::Cosine, ph.minFactor),
          k == LrPhase::Step ? i(ph.stepSize) : IntegerAttr(),
          only(k == LrPhase::Step || k == LrPhase::Exponential, ph.gamma)));
    }
    schedule = b.getArrayAttr(phases);
  }
  FloatAttr clipMax;
  StringAttr clipType, clipOutput;
  if (opt.clip) {
    clipMax = f(opt.clip->maxNorm);
    clipType = b.getStringAttr(opt.clip->inf ? "inf" : "2");
    if (!opt.clip->output.empty())
      clipOutput = b.getStringAttr(opt.clip->output);
  }
  return comm::OptimizerAttr::get(
      ctx, kind, lr, f(opt.weightDecay), sgd ? f(opt.momentum) : FloatAttr(),
      sgd ? f(opt.dampening) : FloatAttr(),
      sgd ? b.getBoolAttr(opt.nesterov) : BoolAttr(),
      sgd ? ArrayAttr() : b.getArrayAttr({f(opt.beta1), f(opt.beta2)}),
      sgd ? FloatAttr() : f(opt.eps), lrInput, schedule, clipMax, clipType,
      clipOutput);
}

/// Whether an indexing node checks its indices at run time: not when
/// they are constants in range (a kernel flipped with take, as the exporter
/// writes a convolution's backward): such a take runs on the GPU too.
bool Importer::checksIndices(const Program &p, const Node &n) {
  if (n.op == Op::Rem) // an integer divisor of 0 ends the run
    return isInteger(n.outDType);
  if (opClass(n.op) != OpClass::Indexing)
    return false;
  const Node &idx = p.nodes[n.args[1]];
  int64_t bound = p.nodes[n.args[0]].outShape[n.axis];
  return !(n.op == Op::Take && idx.op == Op::Constant &&
           llvm::all_of(idx.attrs->value.elements, [&](const Scalar &e) {
             return e.kind == Scalar::Int && e.i >= 0 && e.i < bound;
           }));
}

Value Importer::importNode(const Program &p, const Node &n,
                           ArrayRef<Value> values) {
  Location loc = locations->get(n.pos, n.id, opName(n.op));
  auto arg = [&](size_t i) { return values[n.args[i]]; };
  auto argNode = [&](size_t i) -> const Node & { return p.nodes[n.args[i]]; };
  SmallVector<Value> args;
  for (size_t i = 0; i < n.args.size(); ++i)
    args.push_back(arg(i));

  switch (opClass(n.op)) {
  case OpClass::Leaf:
    return n.op == Op::Constant ? buildConstant(b, loc, n)
                                : buildIota(b, loc, n);
  case OpClass::Unary: {
    DType from = argNode(0).outDType;
    return buildElementwise(
        b, loc, args, n.outShape, n.outDType,
        [&](OpBuilder &nb, Location l, ValueRange x) -> Value {
          if (n.op == Op::Cast)
            return castScalar(nb, l, x[0], from, n.outDType);
          return unaryScalar(nb, l, n.op, from, x[0]);
        });
  }
  case OpClass::Binary: case OpClass::Compare: case OpClass::Logical: {
    DType t = argNode(0).outDType;
    if (n.op == Op::Rem && checksIndices(p, n)) {
      int32_t check = indexChecks.size();
      indexChecks.push_back(b.getStringAttr(n.id + kRemCheckSuffix.str()));
      return buildElementwise(
          b, loc, args, n.outShape, n.outDType,
          [&](OpBuilder &nb, Location l, ValueRange x) -> Value {
            checkNonzeroDivisor(nb, l, x[1], check);
            return remScalar(nb, l, t, x[0], x[1]);
          });
    }
    return buildElementwise(
        b, loc, args, n.outShape, n.outDType,
        [&](OpBuilder &nb, Location l, ValueRange x) -> Value {
          return binaryScalar(nb, l, n.op, t, x[0], x[1]);
        });
  }
  case OpClass::Where:
    return buildElementwise(
        b, loc, args, n.outShape, n.outDType,
        [&](OpBuilder &nb, Location l, ValueRange x) -> Value {
          return arith::SelectOp::create(nb, l, x[0], x[1], x[2]);
        });
  case OpClass::Contraction:
    return inWideFloat(b, loc, n, args, [&](const Node &m, ValueRange xs) {
      if (m.op == Op::Matmul)
        return buildMatmul(b, loc, m, xs[0], xs[1]);
      std::string why;
      EinsumSpec spec = *parseEinsum(m.rare().spec, why);
      return buildEinsum(b, loc, m, xs, spec.inputs, spec.output);
    });
  case OpClass::Reduction:
    return buildReduction(b, loc, n, args[0], argNode(0).outDType,
                          argNode(0).outShape);
  case OpClass::Shape:
    switch (n.op) {
    case Op::Reshape:
      return buildReshape(b, loc, args[0], n.outShape);
    case Op::Transpose: {
      Value init = tensor::EmptyOp::create(b, loc, n.outShape,
                                           elementType(ctx, n.outDType));
      return linalg::TransposeOp::create(b, loc, args[0], init, n.rare().perm)
          .getResult()[0];
    }
    case Op::BroadcastTo:
      return buildElementwise(
          b, loc, args, n.outShape, n.outDType,
          [](OpBuilder &, Location, ValueRange x) -> Value { return x[0]; });
    case Op::Slice: {
      // An empty slice may begin at the end of its axis, where
      // tensor.extract_slice's verifier refuses any offset: it has no
      // elements to take, so it is a tensor of its shape (the fuzzer found
      // begin = end = 64 on an axis of 64).
      if (llvm::is_contained(n.outShape, 0))
        return tensor::EmptyOp::create(b, loc, n.outShape,
                                       elementType(ctx, n.outDType));
      SmallVector<OpFoldResult> offsets, sizes, strides;
      for (size_t i = 0; i < n.outShape.size(); ++i) {
        offsets.push_back(b.getIndexAttr(n.rare().begin[i]));
        sizes.push_back(b.getIndexAttr(n.outShape[i]));
        strides.push_back(b.getIndexAttr(n.rare().step[i]));
      }
      return tensor::ExtractSliceOp::create(
          b, loc, tensorType(ctx, n.outShape, n.outDType), args[0], offsets,
          sizes, strides);
    }
    default:
      return tensor::ConcatOp::create(b, loc, n.axis, args);
    }
  case OpClass::Indexing: {
    DType indexType = argNode(1).outDType;
    if (!checksIndices(p, n))
      return buildTake(b, loc, n, args[0], args[1], indexType,
                       argNode(0).outShape, /*check=*/-1);
    // (The error function was declared with the program: declareProgram.)
    int32_t check = indexChecks.size();
    indexChecks.push_back(b.getStringAttr(n.id));
    if (n.op == Op::Take)
      return buildTake(b, loc, n, args[0], args[1], indexType,
                       argNode(0).outShape, check);
    return buildScatterAdd(b, loc, n, args[0], args[1], indexType, args[2],
                           check);
  }
  case OpClass::Window:
    if (n.op == Op::Conv)
      return inWideFloat(b, loc, n, args, [&](const Node &m, ValueRange xs) {
        return buildConv(b, loc, m, xs[0], xs[1], argNode(0).outShape,
                         argNode(1).outShape);
      });
    return buildPool(b, loc, n, args[0], argNode(0).outShape,
                     argNode(0).outDType);
  case OpClass::Comm: {
    const Peer &peer = n.rare().peer;
    comm::GridAttr grid;
    if (peer.isGrid())
      grid = comm::GridAttr::get(
          ctx, peer.grid, peer.shift,
          b.getDenseBoolArrayAttr(SmallVector<bool>(peer.periodic.begin(),
                                                    peer.periodic.end())));
    IntegerAttr peerAttr = b.getI64IntegerAttr(grid ? 0 : peer.value);
    UnitAttr relative = peer.relative && !grid ? b.getUnitAttr() : UnitAttr();
    if (n.op == Op::Send) {
      comm::SendOp::create(b, loc, args[0], peerAttr, relative, grid,
                           tagAttr(n.rare().tag), IntegerAttr());
      return Value();
    }
    if (n.op == Op::Recv) {
      TypedAttr fill;
      if (n.has(K_fill))
        fill = cast<TypedAttr>(scalarAttr(b, n.outDType, n.rare().fill));
      return comm::RecvOp::create(b, loc,
                                  tensorType(ctx, n.outShape, n.outDType),
                                  peerAttr, relative, grid,
                                  tagAttr(n.rare().tag), IntegerAttr(), fill);
    }
    return buildAllReduce(b, loc, n, args[0], tagAttr(n.rare().tag));
  }
  }
  llvm_unreachable("unhandled op class");
}

Importer::Declared Importer::declareProgram(ModuleOp module,
                                            const Program &p) {
  // Arguments: inputs and params, in document order, then the `step`
  // leaves (values the runtime sets, never read from files).
  SmallVector<Type> argTypes;
  SmallVector<uint32_t> argNodes;
  for (bool steps : {false, true})
    for (uint32_t i = 0; i < p.nodes.size(); ++i) {
      const Node &n = p.nodes[i];
      if (steps ? n.op == Op::Step : n.op == Op::Input || n.op == Op::Param) {
        argTypes.push_back(tensorType(ctx, n.outShape, n.outDType));
        argNodes.push_back(i);
      }
    }
  // Results: one per distinct (node, grad_of), in order of first mention.
  struct Result {
    uint32_t node;
    std::optional<std::string> gradOf;
    SmallVector<Attribute> names;
  };
  SmallVector<Result> results;
  for (const Output &o : p.outputs) {
    auto it = llvm::find_if(results, [&](const Result &r) {
      return r.node == o.node && r.gradOf == o.gradOf;
    });
    if (it == results.end()) {
      results.push_back({o.node, o.gradOf, {}});
      it = std::prev(results.end());
    }
    it->names.push_back(b.getStringAttr(o.name));
  }
  SmallVector<Type> resultTypes;
  for (const Result &r : results)
    resultTypes.push_back(tensorType(ctx, p.nodes[r.node].outShape,
                                     p.nodes[r.node].outDType));

  b.setInsertionPointToEnd(module.getBody());
  auto fn = func::FuncOp::create(b, makeLoc(ctx, doc.file, p.pos, &p),
                                 functionName(p),
                                 b.getFunctionType(argTypes, resultTypes));
  if (p.allRanks)
    fn->setAttr(comm::CommDialect::kRanks, b.getStringAttr("all"));
  else
    fn->setAttr(comm::CommDialect::kRanks, b.getDenseI64ArrayAttr(p.ranks));
  Block *entry = fn.addEntryBlock();
  Declared d{fn, std::vector<Value>(p.nodes.size()), {}};
  std::vector<Value> &values = d.values;
  // (Argument and result attributes are set all at once: one setter per
  // index rebuilds every argument's attributes, quadratic in a step of
  // thousands of parameters.)
  SmallVector<DictionaryAttr> argAttrs;
  for (size_t i = 0; i < argNodes.size(); ++i) {
    const Node &n = p.nodes[argNodes[i]];
    SmallVector<NamedAttribute> attrs{
        b.getNamedAttr(n.op == Op::Param  ? comm::CommDialect::kParam
                       : n.op == Op::Step ? comm::CommDialect::kStep
                                          : comm::CommDialect::kInput,
                       b.getStringAttr(n.id))};
    if (isUnsigned(n.outDType))
      attrs.push_back(
          b.getNamedAttr(comm::CommDialect::kUnsigned, b.getUnitAttr()));
    argAttrs.push_back(b.getDictionaryAttr(attrs));
    values[argNodes[i]] = entry->getArgument(i);
    entry->getArgument(i).setLoc(
        makeLoc(ctx, doc.file, n.pos, &p, n.id, opName(n.op)));
  }
  if (!p.state.empty()) {
    SmallVector<NamedAttribute> state;
    for (const StatePair &s : p.state)
      state.push_back(b.getNamedAttr(s.inputId, b.getStringAttr(s.outputName)));
    fn->setAttr(comm::CommDialect::kState, b.getDictionaryAttr(state));
  }
  fn.setAllArgAttrs(argAttrs);
  SmallVector<DictionaryAttr> resultAttrs;
  for (size_t i = 0; i < results.size(); ++i) {
    SmallVector<NamedAttribute> attrs{b.getNamedAttr(
        comm::CommDialect::kOutputs, b.getArrayAttr(results[i].names))};
    if (results[i].gradOf)
      attrs.push_back(b.getNamedAttr(comm::CommDialect::kGradOf,
                                     b.getStringAttr(*results[i].gradOf)));
    if (isUnsigned(p.nodes[results[i].node].outDType))
      attrs.push_back(
          b.getNamedAttr(comm::CommDialect::kUnsigned, b.getUnitAttr()));
    resultAttrs.push_back(b.getDictionaryAttr(attrs));
  }
  fn.setAllResultAttrs(resultAttrs);

  for (const Result &r : results)
    d.returned.push_back(r.node);
  // Declared here, in program order, so that the module reads the same
  // however the bodies are built.
  if (llvm::any_of(p.nodes, [&](const Node &n) { return checksIndices(p, n); }))
    declareIndexError(b, module);
  return d;
}

void Importer::importBody(const Program &p, Declared &d) {
  locations.emplace(ctx, doc.file, p);
  b.setInsertionPointToStart(&d.fn.getBody().front());
  indexChecks.clear();
  for (uint32_t i : p.order) {
    const Node &n = p.nodes[i];
    if (n.op != Op::Input && n.op != Op::Param && n.op != Op::Step)
      d.values[i] = importNode(p, n, d.values);
  }
  if (!indexChecks.empty())
    d.fn->setAttr(kIndexChecks, b.getArrayAttr(indexChecks));
  SmallVector<Value> returned;
  for (uint32_t node : d.returned)
    returned.push_back(d.values[node]);
  func::ReturnOp::create(b, d.fn.getLoc(), returned);
}

OwningOpRef<ModuleOp> Importer::run() {
  // take and scatter_add build scf loops and checks; scatter_add's copy of
  // its base is a memref of its own (IndexingBuilders.cpp).
  ctx->loadDialect<bufferization::BufferizationDialect, memref::MemRefDialect,
                   scf::SCFDialect>();
  OwningOpRef<ModuleOp> module =
      ModuleOp::create(makeLoc(ctx, doc.file, Pos{1, 1}));
  module->getOperation()->setAttr(comm::CommDialect::kWorldSize,
                                  b.getI64IntegerAttr(doc.worldSize));
  if (doc.dataParallel) {
    const DataParallel &dp = *doc.dataParallel;
    SmallVector<Attribute> ignore;
    for (const std::string &id : dp.ignore)
      ignore.push_back(b.getStringAttr(id));
    module->getOperation()->setAttr(
        comm::CommDialect::kDataParallel,
        comm::DataParallelAttr::get(
            ctx, b.getF64FloatAttr(dp.bucketCapMb),
            b.getF64FloatAttr(dp.firstBucketCapMb), b.getArrayAttr(ignore),
            b.getStringAttr(dp.ddpInitialOrder ? "ddp-initial" : "ready"),
            dp.optimizer ? optimizerAttr(*dp.optimizer)
                         : comm::OptimizerAttr(),
            dp.accumulate > 1 ? b.getI64IntegerAttr(dp.accumulate)
                              : IntegerAttr()));
  }
  std::vector<Declared> declared;
  for (const Program &p : doc.programs)
    declared.push_back(declareProgram(*module, p));
  // The bodies, a program a thread: nodes are most of the work (10^6 of
  // them in a pytato-sized document).
  parallelFor(ctx, 0, declared.size(), [&](size_t i) {
    Importer(ctx, doc).importBody(doc.programs[i], declared[i]);
  });
  return module;
}

} // namespace

OwningOpRef<ModuleOp> importDag(MLIRContext *ctx, const Document &doc) {
  return Importer(ctx, doc).run();
}

OwningOpRef<ModuleOp> translateDagToMLIR(MLIRContext *ctx, StringRef path,
                                         TimingScope &timing) {
  TimingScope readTimer = timing.nest("read JSON");
  FailureOr<Document> doc = readDagFile(ctx, path);
  readTimer.stop();
  if (failed(doc))
    return {};
  TimingScope checkTimer = timing.nest("check DAG");
  if (failed(checkDag(ctx, *doc)))
    return {};
  checkTimer.stop();
  TimingScope importTimer = timing.nest("import to MLIR");
  OwningOpRef<ModuleOp> module = importDag(ctx, *doc);
  importTimer.stop();
  // The checker should have caught everything; a failure here is our bug,
  // reported as a diagnostic rather than a crash.
  TimingScope verifyTimer = timing.nest("verify MLIR");
  if (failed(verify(*module)))
    return {};
  return module;
}

} // namespace rankc::dag
