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

  explicit Settings(comm::OptimizerAttr o) {
    kind = o.getKind() == comm::OptimizerKind::sgd    ? Sgd
           : o.getKind() == comm::OptimizerKind::adam ? Adam
                                                      : AdamW;
    lr = o.getLr().getValueAsDouble();
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

class Updater {
public:
  Updater(func::FuncOp fn, const Settings &s)
      : fn(fn), s(s), b(fn.getContext()) {}
  void run();

private:
  unsigned addState(StringRef name, Type type, Location loc);
  Value scalarStep(Value step, Location loc, Value &stepSize,
                   Value &bc2Sqrt);
  void updateParam(unsigned paramArg, unsigned gradResult, Value oldStep,
                   Value stepSize, Value bc2Sqrt);
  void addResult(Value v, ArrayRef<NamedAttribute> attrs);

  func::FuncOp fn;
  const Settings &s;
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

/// The step count t (0 before the first step) becomes t + 1; for Adam also
/// lr / (1 - beta1^(t+1)) and sqrt(1 - beta2^(t+1)), in f64 as Python
/// computes them in torch.optim.
Value Updater::scalarStep(Value step, Location loc, Value &stepSize,
                          Value &bc2Sqrt) {
  auto i64 = RankedTensorType::get({}, b.getI64Type());
  auto f64 = RankedTensorType::get({}, b.getF64Type());
  bool adam = s.kind != Settings::Sgd;
  SmallVector<Value> inits{tensor::EmptyOp::create(b, loc, i64.getShape(),
                                                   b.getI64Type())};
  SmallVector<Type> types{i64};
  if (adam)
    for (int k = 0; k < 2; ++k) {
      inits.push_back(tensor::EmptyOp::create(b, loc, f64.getShape(),
                                              b.getF64Type()));
      types.push_back(f64);
    }
  auto map = AffineMap::get(0, 0, b.getContext());
  SmallVector<AffineMap> maps(1 + inits.size(), map);
  auto generic = linalg::GenericOp::create(
      b, loc, types, ValueRange{step}, inits, maps,
      ArrayRef<utils::IteratorType>{},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value t = arith::AddIOp::create(
            nb, nl, args[0], arith::ConstantIntOp::create(nb, nl, 1, 64));
        SmallVector<Value> yields{t};
        if (adam) {
          auto c = [&](double x) {
            return arith::ConstantFloatOp::create(nb, nl, nb.getF64Type(),
                                                  APFloat(x));
          };
          Value tf = arith::SIToFPOp::create(nb, nl, nb.getF64Type(), t);
          Value one = c(1.0);
          Value bc1 = arith::SubFOp::create(
              nb, nl, one, math::PowFOp::create(nb, nl, c(s.beta1), tf));
          Value bc2 = arith::SubFOp::create(
              nb, nl, one, math::PowFOp::create(nb, nl, c(s.beta2), tf));
          yields.push_back(arith::DivFOp::create(nb, nl, c(s.lr), bc1));
          yields.push_back(math::SqrtOp::create(nb, nl, bc2));
        }
        linalg::YieldOp::create(nb, nl, yields);
      });
  if (adam) {
    stepSize = generic.getResult(1);
    bc2Sqrt = generic.getResult(2);
  }
  return generic.getResult(0);
}

/// The new parameter (and state) from the parameter, its gradient and its
/// state, one element at a time, in torch.optim's order of operations.
/// f16 and bf16 parameters are updated in f32 and rounded once.
void Updater::updateParam(unsigned paramArg, unsigned gradResult,
                          Value oldStep, Value stepSize, Value bc2Sqrt) {
  StringRef id =
      fn.getArgAttrOfType<StringAttr>(paramArg, comm::CommDialect::kParam)
          .getValue();
  Value param = fn.getArgument(paramArg);
  Value grad = ret->getOperand(gradResult);
  Location loc = param.getLoc();
  auto type = cast<RankedTensorType>(param.getType());
  auto elem = cast<FloatType>(type.getElementType());
  Type compute = elem.getWidth() < 32 ? b.getF32Type() : Type(elem);

  SmallVector<StringRef> names = s.stateNames();
  SmallVector<Value> ins{param, grad};
  SmallVector<unsigned> stateArgs;
  for (StringRef n : names) {
    unsigned a = addState(stateName(id, n), type, loc);
    stateArgs.push_back(a);
    ins.push_back(fn.getArgument(a));
  }
  unsigned rank = type.getRank();
  auto identity = b.getMultiDimIdentityMap(rank);
  auto scalar = AffineMap::get(rank, 0, b.getContext());
  SmallVector<AffineMap> maps(ins.size(), identity);
  bool adam = s.kind != Settings::Sgd;
  if (adam) {
    ins.append({stepSize, bc2Sqrt});
    maps.append({scalar, scalar});
  } else if (s.momentum != 0) {
    ins.push_back(oldStep);
    maps.push_back(scalar);
  }
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
                nb, nl, arith::CmpIPredicate::eq, args[3],
                arith::ConstantIntOp::create(nb, nl, 0, 64));
            // The buffer starts as the first gradient, then
            // buf.mul_(momentum).add_(d_p, alpha=1 - dampening).
            Value kept = mul(buf, c(s.momentum));
            Value later = add(kept, mul(c(1 - s.dampening), g));
            newBuf = arith::SelectOp::create(nb, nl, first, g, later);
            g = s.nesterov ? add(g, mul(c(s.momentum), newBuf)) : newBuf;
          }
          yields.push_back(narrow(add(p, mul(c(-s.lr), g)))); // add_(d_p, alpha=-lr)
          if (newBuf)
            yields.push_back(narrow(newBuf));
        } else {
          // torch.optim.Adam / AdamW (_single_tensor_adam / _adamw).
          Value m = widen(args[2]), v = widen(args[3]);
          Value stepSizeC = args[4], bc2SqrtC = args[5];
          auto toCompute = [&](Value x) -> Value {
            return compute.isF64()
                       ? x
                       : Value(arith::TruncFOp::create(nb, nl, compute, x));
          };
          if (s.kind == Settings::AdamW)
            p = mul(p, c(1 - s.lr * s.weightDecay)); // param.mul_(1 - lr*wd)
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
  addResult(generic.getResult(0),
            {b.getNamedAttr(comm::CommDialect::kOutputs,
                            b.getArrayAttr({b.getStringAttr(id)})),
             b.getNamedAttr(comm::CommDialect::kUpdateOf, b.getStringAttr(id))});
  for (auto [k, n] : llvm::enumerate(names))
    addResult(generic.getResult(k + 1),
              {b.getNamedAttr(comm::CommDialect::kOptimizerState,
                              b.getStringAttr(stateName(id, n)))});
}

void Updater::run() {
  ret = fn.getBody().front().getTerminator();
  // Each parameter's first gradient output (ignored parameters' too: they
  // are updated with their own rank's gradient).
  llvm::StringMap<unsigned> paramArg;
  for (unsigned a = 0; a < fn.getNumArguments(); ++a)
    if (auto id = fn.getArgAttrOfType<StringAttr>(a, comm::CommDialect::kParam))
      paramArg[id.getValue()] = a;
  SmallVector<std::pair<unsigned, unsigned>> updates; // (arg, result)
  llvm::StringSet<> seen;
  for (unsigned r = 0; r < fn.getNumResults(); ++r) {
    auto of = fn.getResultAttrOfType<StringAttr>(r, comm::CommDialect::kGradOf);
    if (of && seen.insert(of.getValue()).second)
      updates.push_back({paramArg.lookup(of.getValue()), r});
  }
  if (updates.empty())
    return;
  // Parameters in registration order (the C API's order of updated params).
  llvm::sort(updates);
  Location loc = fn.getLoc();
  unsigned stepArg =
      addState(kStepName, RankedTensorType::get({}, b.getI64Type()), loc);
  b.setInsertionPoint(ret);
  Value stepSize, bc2Sqrt;
  Value oldStep = fn.getArgument(stepArg);
  Value newStep = scalarStep(oldStep, loc, stepSize, bc2Sqrt);
  for (auto [arg, result] : updates)
    updateParam(arg, result, oldStep, stepSize, bc2Sqrt);
  addResult(newStep, {b.getNamedAttr(comm::CommDialect::kOptimizerState,
                                     b.getStringAttr(kStepName))});
}

struct ApplyOptimizerPass
    : public rankc::impl::CommApplyOptimizerBase<ApplyOptimizerPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto dp = module->getAttrOfType<comm::DataParallelAttr>(
        comm::CommDialect::kDataParallel);
    comm::OptimizerAttr opt = dp ? dp.getOptimizer() : comm::OptimizerAttr();
    if (!opt || module->hasAttr(comm::CommDialect::kPartitioned))
      return;
    Settings settings(opt);
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (!fn->hasAttr(comm::CommDialect::kRanks))
        continue;
      // Applied already (an .mlir printed after this pass).
      bool applied = false;
      for (unsigned a = 0; a < fn.getNumArguments(); ++a)
        applied |= bool(fn.getArgAttr(a, comm::CommDialect::kOptimizerState));
      if (!applied)
        Updater(fn, settings).run();
    }
  }
};

} // namespace
