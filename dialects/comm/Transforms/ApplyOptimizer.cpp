//===- ApplyOptimizer.cpp - the optimizer's update, as generated code ----===//
//
// With `optimizer` in `comm.data_parallel`, each program's parameters are
// updated in the program itself, from the gradients it returns (averaged by
// comm-bucket-gradients, or the rank's own for ignored parameters), exactly
// as torch.optim's single-tensor SGD, Adam and AdamW compute it. One
// elementwise linalg.generic per parameter computes the new parameter and
// the new optimizer state together (one kernel on the GPU); a 0-d generic
// computes the step's scalars (the step count, Adam's bias corrections).
//
// The update of a parameter depends on nothing but its gradient, so the
// partitioner places it right after the wait for that gradient's bucket:
// each bucket's parameters are updated while later buckets are still being
// reduced.
//
// The optimizer's state becomes arguments and results marked
// `comm.optimizer_state` (zeros before the first step, carried by the
// runtime); each new parameter is a result named after the parameter and
// marked `comm.update_of`, which the runtime carries into the parameter.
//
//===----------------------------------------------------------------------===//

#include "rankc/Dialect/Comm/Comm.h"
#include "rankc/Dialect/Comm/Transforms/Passes.h"
#include "OptimizerBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

namespace rankc {
#define GEN_PASS_DEF_COMMAPPLYOPTIMIZER
#include "rankc/Dialect/Comm/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;
using namespace rankc;

namespace {

/// The optimizer's settings (verified by the comm dialect).
struct Settings {
  enum Kind { Sgd, Adam, AdamW } kind = Sgd;
  double lr = 0, weightDecay = 0, momentum = 0, dampening = 0;
  bool nesterov = false;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  StringRef lrInput;            // the learning rate is this input's value
  ArrayAttr schedule;           // or lr times the schedule's factor
  double clipMaxNorm = 0;       // 0: no clipping
  bool clipInf = false;
  StringRef clipOutput;
  int64_t accumulate = 1;

  Settings(comm::OptimizerAttr o, int64_t accumulate) : accumulate(accumulate) {
    kind = o.getKind() == comm::OptimizerKind::sgd    ? Sgd
           : o.getKind() == comm::OptimizerKind::adam ? Adam
                                                      : AdamW;
    if (o.getLr())
      lr = o.getLr().getValueAsDouble();
    if (o.getLrInput())
      lrInput = o.getLrInput().getValue();
    schedule = o.getLrSchedule();
    if (o.getClipMaxNorm()) {
      clipMaxNorm = o.getClipMaxNorm().getValueAsDouble();
      clipInf = o.getClipNormType().getValue() == "inf";
      if (o.getClipOutput())
        clipOutput = o.getClipOutput().getValue();
    }
    weightDecay = o.getWeightDecay().getValueAsDouble();
    if (kind == Sgd) {
      momentum = o.getMomentum().getValueAsDouble();
      dampening = o.getDampening().getValueAsDouble();
      nesterov = o.getNesterov().getValue();
    } else {
      beta1 = cast<FloatAttr>(o.getBetas()[0]).getValueAsDouble();
      beta2 = cast<FloatAttr>(o.getBetas()[1]).getValueAsDouble();
      eps = o.getEps().getValueAsDouble();
    }
  }
  /// Whether the learning rate changes from step to step (then it is an
  /// operand of the updates, not a constant in them).
  bool dynamicLr() const { return !lrInput.empty() || schedule; }
  /// Names of the per-parameter state, as torch.optim's state dict has them.
  SmallVector<StringRef> stateNames() const {
    if (kind == Sgd)
      return momentum != 0 ? SmallVector<StringRef>{"momentum_buffer"}
                           : SmallVector<StringRef>{};
    return {"exp_avg", "exp_avg_sq"};
  }
};

/// Names that cannot clash with node ids ('@' is not allowed in them).
std::string stateName(StringRef param, StringRef what) {
  return (param + "@" + what).str();
}
constexpr StringLiteral kStepName = "optimizer@step";
constexpr StringLiteral kNormName = "optimizer@grad_norm";

/// The step's scalars, computed once (f64, as Python computes them).
struct StepScalars {
  Value newStep;
  Value lr;       // the step's learning rate (dynamic lr only)
  Value stepSize; // Adam: lr / (1 - beta1^t)
  Value bc2Sqrt;  // Adam: sqrt(1 - beta2^t)
  Value decay;    // AdamW with a dynamic lr: 1 - lr * weight_decay
};

class Updater {
public:
  Updater(func::FuncOp fn, const Settings &s, bool micro)
      : fn(fn), s(s), micro(micro), b(fn.getContext()) {}
  LogicalResult run();

private:
  unsigned addState(StringRef name, Type type, Location loc);
  StepScalars scalarStep(Value step, Value lrIn, Location loc);
  void updateParam(unsigned paramArg, Value grad, Value oldStep,
                   const StepScalars &scalars);
  void addResult(Value v, ArrayRef<NamedAttribute> attrs);

  func::FuncOp fn;
  const Settings &s;
  bool micro; // a micro-step: the state passes through, nothing is updated
  OpBuilder b;
  Operation *ret = nullptr;
};

unsigned Updater::addState(StringRef name, Type type, Location loc) {
  unsigned i = fn.getNumArguments();
  (void)fn.insertArgument(
      i, type,
      b.getDictionaryAttr(b.getNamedAttr(comm::CommDialect::kOptimizerState,
                                         b.getStringAttr(name))),
      loc);
  return i;
}

void Updater::addResult(Value v, ArrayRef<NamedAttribute> attrs) {
  unsigned i = fn.getNumResults();
  (void)fn.insertResult(i, v.getType(), b.getDictionaryAttr(attrs));
  ret->insertOperands(ret->getNumOperands(), v);
}

/// The step count t (0 before the first step) becomes t + 1; the learning
/// rate of the step (the input's, or lr times the schedule's factor of t);
/// for Adam lr / (1 - beta1^(t+1)) and sqrt(1 - beta2^(t+1)); for AdamW
/// 1 - lr * weight_decay: in f64 as Python computes them in torch.optim.
StepScalars Updater::scalarStep(Value step, Value lrIn, Location loc) {
  auto i64 = RankedTensorType::get({}, b.getI64Type());
  auto f64 = RankedTensorType::get({}, b.getF64Type());
  bool adam = s.kind != Settings::Sgd;
  bool dynamic = s.dynamicLr();
  bool decay = dynamic && s.kind == Settings::AdamW;
  unsigned floats = (dynamic ? 1 : 0) + (adam ? 2 : 0) + (decay ? 1 : 0);
  SmallVector<Value> inits{tensor::EmptyOp::create(b, loc, i64.getShape(),
                                                   b.getI64Type())};
  SmallVector<Type> types{i64};
  for (unsigned k = 0; k < floats; ++k) {
    inits.push_back(
        tensor::EmptyOp::create(b, loc, f64.getShape(), b.getF64Type()));
    types.push_back(f64);
  }
  SmallVector<Value> ins{step};
  if (lrIn)
    ins.push_back(lrIn);
  auto map = AffineMap::get(0, 0, b.getContext());
  SmallVector<AffineMap> maps(ins.size() + inits.size(), map);
  auto generic = linalg::GenericOp::create(
      b, loc, types, ins, inits, maps, ArrayRef<utils::IteratorType>{},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        auto c = [&](double x) {
          return arith::ConstantFloatOp::create(nb, nl, nb.getF64Type(),
                                                APFloat(x));
        };
        Value t = arith::AddIOp::create(
            nb, nl, args[0], arith::ConstantIntOp::create(nb, nl, 1, 64));
        SmallVector<Value> yields{t};
        Value lr = c(s.lr);
        if (lrIn) {
          lr = args[1];
          if (!lr.getType().isF64())
            lr = arith::ExtFOp::create(nb, nl, nb.getF64Type(), lr);
        } else if (s.schedule) {
          lr = arith::MulFOp::create(nb, nl, lr,
                                     buildLrFactor(nb, nl, args[0], s.schedule));
        }
        if (dynamic)
          yields.push_back(lr);
        if (adam) {
          Value tf = arith::SIToFPOp::create(nb, nl, nb.getF64Type(), t);
          Value one = c(1.0);
          Value bc1 = arith::SubFOp::create(
              nb, nl, one, math::PowFOp::create(nb, nl, c(s.beta1), tf));
          Value bc2 = arith::SubFOp::create(
              nb, nl, one, math::PowFOp::create(nb, nl, c(s.beta2), tf));
          yields.push_back(arith::DivFOp::create(nb, nl, lr, bc1));
          yields.push_back(math::SqrtOp::create(nb, nl, bc2));
        }
        if (decay)
          yields.push_back(arith::SubFOp::create(
              nb, nl, c(1), arith::MulFOp::create(nb, nl, lr, c(s.weightDecay))));
        linalg::YieldOp::create(nb, nl, yields);
      });
  StepScalars out;
  out.newStep = generic.getResult(0);
  unsigned k = 1;
  if (dynamic)
    out.lr = generic.getResult(k++);
  if (adam) {
    out.stepSize = generic.getResult(k++);
    out.bc2Sqrt = generic.getResult(k++);
  }
  if (decay)
    out.decay = generic.getResult(k++);
  return out;
}

/// The new parameter (and state) from the parameter, its gradient and its
/// state, one element at a time, in torch.optim's order of operations.
/// f16 and bf16 parameters are updated in f32 and rounded once.
void Updater::updateParam(unsigned paramArg, Value grad, Value oldStep,
                          const StepScalars &scalars) {
  StringRef id =
      fn.getArgAttrOfType<StringAttr>(paramArg, comm::CommDialect::kParam)
          .getValue();
  Value param = fn.getArgument(paramArg);
  Location loc = param.getLoc();
  auto type = cast<RankedTensorType>(param.getType());
  auto elem = cast<FloatType>(type.getElementType());
  Type compute = elem.getWidth() < 32 ? b.getF32Type() : Type(elem);

  SmallVector<StringRef> names = s.stateNames();
  SmallVector<unsigned> stateArgs;
  for (StringRef n : names)
    stateArgs.push_back(addState(stateName(id, n), type, loc));
  auto updateAttrs = [&] {
    return SmallVector<NamedAttribute>{
        b.getNamedAttr(comm::CommDialect::kOutputs,
                       b.getArrayAttr({b.getStringAttr(id)})),
        b.getNamedAttr(comm::CommDialect::kUpdateOf, b.getStringAttr(id))};
  };
  auto stateAttrs = [&](StringRef n) {
    return SmallVector<NamedAttribute>{b.getNamedAttr(
        comm::CommDialect::kOptimizerState,
        b.getStringAttr(stateName(id, n)))};
  };
  if (micro) { // nothing changes until the update step
    addResult(param, updateAttrs());
    for (auto [k, n] : llvm::enumerate(names))
      addResult(fn.getArgument(stateArgs[k]), stateAttrs(n));
    return;
  }

  SmallVector<Value> ins{param, grad};
  for (unsigned a : stateArgs)
    ins.push_back(fn.getArgument(a));
  unsigned rank = type.getRank();
  auto identity = b.getMultiDimIdentityMap(rank);
  auto scalar = AffineMap::get(rank, 0, b.getContext());
  SmallVector<AffineMap> maps(ins.size(), identity);
  bool adam = s.kind != Settings::Sgd;
  // Scalar operands after the tensors, in this order.
  auto addScalar = [&](Value v) -> int {
    if (!v)
      return -1;
    ins.push_back(v);
    maps.push_back(scalar);
    return int(ins.size()) - 1;
  };
  int stepSizeAt = -1, bc2SqrtAt = -1, stepAt = -1;
  if (adam) {
    stepSizeAt = addScalar(scalars.stepSize);
    bc2SqrtAt = addScalar(scalars.bc2Sqrt);
  } else if (s.momentum != 0) {
    stepAt = addScalar(oldStep);
  }
  int lrAt = addScalar(adam ? Value() : scalars.lr);
  int decayAt = addScalar(scalars.decay);
  SmallVector<Value> outs;
  SmallVector<Type> types;
  for (size_t k = 0; k <= names.size(); ++k) {
    outs.push_back(tensor::EmptyOp::create(b, loc, type.getShape(), elem));
    types.push_back(type);
    maps.push_back(identity);
  }
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, types, ins, outs, maps, iters,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        auto c = [&](double x) -> Value {
          return arith::ConstantOp::create(nb, nl, nb.getFloatAttr(compute, x));
        };
        auto add = [&](Value x, Value y) -> Value {
          return arith::AddFOp::create(nb, nl, x, y);
        };
        auto mul = [&](Value x, Value y) -> Value {
          return arith::MulFOp::create(nb, nl, x, y);
        };
        auto widen = [&](Value x) -> Value {
          return x.getType() == compute
                     ? x
                     : Value(arith::ExtFOp::create(nb, nl, compute, x));
        };
        auto narrow = [&](Value x) -> Value {
          return x.getType() == elem
                     ? x
                     : Value(arith::TruncFOp::create(nb, nl, elem, x));
        };
        // An f64 scalar of the step in the compute type (Python's float
        // handed to a tensor op of that dtype).
        auto toCompute = [&](Value x) -> Value {
          return compute.isF64()
                     ? x
                     : Value(arith::TruncFOp::create(nb, nl, compute, x));
        };
        Value p = widen(args[0]), g = widen(args[1]);
        SmallVector<Value> yields;
        if (!adam) {
          // torch.optim.SGD (_single_tensor_sgd).
          if (s.weightDecay != 0)
            g = add(g, mul(c(s.weightDecay), p)); // d_p.add(p, alpha=wd)
          Value newBuf;
          if (s.momentum != 0) {
            Value buf = widen(args[2]);
            Value first = arith::CmpIOp::create(
                nb, nl, arith::CmpIPredicate::eq, args[stepAt],
                arith::ConstantIntOp::create(nb, nl, 0, 64));
            // The buffer starts as the first gradient, then
            // buf.mul_(momentum).add_(d_p, alpha=1 - dampening).
            Value kept = mul(buf, c(s.momentum));
            Value later = add(kept, mul(c(1 - s.dampening), g));
            newBuf = arith::SelectOp::create(nb, nl, first, g, later);
            g = s.nesterov ? add(g, mul(c(s.momentum), newBuf)) : newBuf;
          }
          // add_(d_p, alpha=-lr)
          Value negLr =
              lrAt >= 0
                  ? toCompute(arith::NegFOp::create(nb, nl, args[lrAt]))
                  : c(-s.lr);
          yields.push_back(narrow(add(p, mul(negLr, g))));
          if (newBuf)
            yields.push_back(narrow(newBuf));
        } else {
          // torch.optim.Adam / AdamW (_single_tensor_adam / _adamw).
          Value m = widen(args[2]), v = widen(args[3]);
          Value stepSizeC = args[stepSizeAt], bc2SqrtC = args[bc2SqrtAt];
          if (s.kind == Settings::AdamW) // param.mul_(1 - lr * wd)
            p = mul(p, decayAt >= 0 ? toCompute(args[decayAt])
                                    : c(1 - s.lr * s.weightDecay));
          else if (s.weightDecay != 0)
            g = add(g, mul(c(s.weightDecay), p)); // grad.add(p, alpha=wd)
          // Operands are built one statement at a time: C++ leaves the order
          // of argument evaluation open, the IR's order must not be.
          Value keptM = mul(m, c(s.beta1));
          Value newM = add(keptM, mul(c(1 - s.beta1), g));
          Value keptV = mul(v, c(s.beta2));
          Value newV = add(keptV, mul(mul(c(1 - s.beta2), g), g));
          Value root = math::SqrtOp::create(nb, nl, newV);
          Value scaled =
              arith::DivFOp::create(nb, nl, root, toCompute(bc2SqrtC));
          Value denom = add(scaled, c(s.eps));
          Value negStep = arith::NegFOp::create(nb, nl, toCompute(stepSizeC));
          Value delta =
              arith::DivFOp::create(nb, nl, mul(negStep, newM), denom);
          yields.append({narrow(add(p, delta)), narrow(newM), narrow(newV)});
        }
        linalg::YieldOp::create(nb, nl, yields);
      });
  addResult(generic.getResult(0), updateAttrs());
  for (auto [k, n] : llvm::enumerate(names))
    addResult(generic.getResult(k + 1), stateAttrs(n));
}

LogicalResult Updater::run() {
  ret = fn.getBody().front().getTerminator();
  // Each parameter's first gradient output (ignored parameters' too: they
  // are updated with their own rank's gradient).
  llvm::StringMap<unsigned> paramArg;
  Value lrIn;
  for (unsigned a = 0; a < fn.getNumArguments(); ++a) {
    if (auto id = fn.getArgAttrOfType<StringAttr>(a, comm::CommDialect::kParam))
      paramArg[id.getValue()] = a;
    auto in = fn.getArgAttrOfType<StringAttr>(a, comm::CommDialect::kInput);
    if (in && !s.lrInput.empty() && in.getValue() == s.lrInput)
      lrIn = fn.getArgument(a);
  }
  SmallVector<std::pair<unsigned, unsigned>> updates; // (arg, result)
  llvm::StringSet<> seen;
  for (unsigned r = 0; r < fn.getNumResults(); ++r) {
    auto of = fn.getResultAttrOfType<StringAttr>(r, comm::CommDialect::kGradOf);
    if (of && seen.insert(of.getValue()).second)
      updates.push_back({paramArg.lookup(of.getValue()), r});
  }
  if (updates.empty())
    return success();
  if (!s.lrInput.empty() && !lrIn)
    return fn.emitError("the optimizer's 'lr' input '")
           << s.lrInput << "' is not an input of this program";
  // Parameters in registration order (the C API's order of updated params).
  llvm::sort(updates);
  Location loc = fn.getLoc();
  auto i64 = RankedTensorType::get({}, b.getI64Type());
  auto f32 = RankedTensorType::get({}, b.getF32Type());
  unsigned stepArg = addState(kStepName, i64, loc);
  // The total norm as an output lasts over micro-steps as state does.
  bool normOutput = s.clipMaxNorm > 0 && !s.clipOutput.empty();
  int normArg = normOutput && s.accumulate > 1 ? int(addState(kNormName, f32, loc))
                                              : -1;
  auto normAttrs = [&] {
    SmallVector<NamedAttribute> attrs{
        b.getNamedAttr(comm::CommDialect::kOutputs,
                       b.getArrayAttr({b.getStringAttr(s.clipOutput)}))};
    if (normArg >= 0)
      attrs.push_back(b.getNamedAttr(comm::CommDialect::kOptimizerState,
                                     b.getStringAttr(kNormName)));
    return attrs;
  };
  auto stepAttrs = [&] {
    return SmallVector<NamedAttribute>{b.getNamedAttr(
        comm::CommDialect::kOptimizerState, b.getStringAttr(kStepName))};
  };
  b.setInsertionPoint(ret);
  Value oldStep = fn.getArgument(stepArg);
  if (micro) {
    for (auto [arg, result] : updates)
      updateParam(arg, Value(), oldStep, StepScalars());
    if (normOutput)
      addResult(fn.getArgument(normArg), normAttrs());
    addResult(oldStep, stepAttrs());
    return success();
  }
  StepScalars scalars = scalarStep(oldStep, lrIn, loc);
  SmallVector<Value> grads;
  for (auto [arg, result] : updates)
    grads.push_back(ret->getOperand(result));
  Value total;
  if (s.clipMaxNorm > 0) {
    // The clipped gradients are what the update uses and what the
    // gradient outputs hold (PyTorch's p.grad after clip_grad_norm_).
    grads = buildClipGradNorm(b, loc, grads, s.clipMaxNorm, s.clipInf, total);
    for (auto [k, u] : llvm::enumerate(updates))
      ret->setOperand(u.second, grads[k]);
  }
  for (auto [k, u] : llvm::enumerate(updates))
    updateParam(u.first, grads[k], oldStep, scalars);
  if (normOutput)
    addResult(total, normAttrs());
  addResult(scalars.newStep, stepAttrs());
  return success();
}

} // namespace

LogicalResult rankc::applyOptimizer(func::FuncOp fn, comm::OptimizerAttr opt,
                                    int64_t accumulate, bool micro) {
  // Applied already (an .mlir printed after this pass).
  for (unsigned a = 0; a < fn.getNumArguments(); ++a)
    if (fn.getArgAttr(a, comm::CommDialect::kOptimizerState) &&
        fn.getArgAttrOfType<StringAttr>(a, comm::CommDialect::kOptimizerState)
                .getValue() == kStepName)
      return success();
  Settings settings(opt, accumulate);
  return Updater(fn, settings, micro).run();
}

namespace {

struct ApplyOptimizerPass
    : public rankc::impl::CommApplyOptimizerBase<ApplyOptimizerPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto dp = module->getAttrOfType<comm::DataParallelAttr>(
        comm::CommDialect::kDataParallel);
    comm::OptimizerAttr opt = dp ? dp.getOptimizer() : comm::OptimizerAttr();
    if (!opt || module->hasAttr(comm::CommDialect::kPartitioned))
      return;
    int64_t accumulate = dp.getAccumulateOr1();
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn->hasAttr(comm::CommDialect::kRanks) &&
          failed(applyOptimizer(fn, opt, accumulate, /*micro=*/false)))
        return signalPassFailure();
  }
};

} // namespace
