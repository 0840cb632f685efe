//===- LrSchedule.cpp - the learning rate of each optimizer step ----------===//
//
// dag-format.md's `lr_schedule`: phases run one after another, each a
// closed form of a torch.optim.lr_scheduler (LinearLR, CosineAnnealingLR,
// StepLR, ExponentialLR; a constant factor), computed in f64 as Python
// computes PyTorch's learning rates. Every phase's factor is computed and
// the one whose range holds t is selected: a handful of scalar ops once per
// step, and no control flow in the step.
//
//===----------------------------------------------------------------------===//

#include "OptimizerBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;

namespace rankc {

namespace {
/// factor(u) of one phase, u (i64) the optimizer steps into it.
Value phaseFactor(OpBuilder &b, Location loc, comm::LrPhaseAttr phase,
                  Value u) {
  auto f64 = b.getF64Type();
  auto c = [&](double x) -> Value {
    return arith::ConstantFloatOp::create(b, loc, f64, APFloat(x));
  };
  auto num = [&](FloatAttr a) { return a.getValueAsDouble(); };
  auto toF = [&](Value i) -> Value {
    return arith::SIToFPOp::create(b, loc, f64, i);
  };
  auto clampToSteps = [&]() -> Value {
    Value n = arith::ConstantIntOp::create(b, loc, phase.getSteps().getInt(), 64);
    return arith::MinSIOp::create(b, loc, u, n);
  };
  StringRef kind = phase.getKind().getValue();
  if (kind == "constant")
    return c(num(phase.getFactor()));
  if (kind == "linear") {
    // a + (b - a) * min(u, n) / n
    double a = num(phase.getStartFactor()), e = num(phase.getEndFactor());
    double n = double(phase.getSteps().getInt());
    Value scaled = arith::MulFOp::create(b, loc, c(e - a), toF(clampToSteps()));
    return arith::AddFOp::create(b, loc, c(a),
                                 arith::DivFOp::create(b, loc, scaled, c(n)));
  }
  if (kind == "cosine") {
    // m + (1 - m) * (1 + cos(pi * min(u, n) / n)) / 2
    double m = num(phase.getMinFactor());
    double n = double(phase.getSteps().getInt());
    Value angle = arith::DivFOp::create(
        b, loc, arith::MulFOp::create(b, loc, c(M_PI), toF(clampToSteps())),
        c(n));
    Value wave = arith::AddFOp::create(b, loc, c(1),
                                       math::CosOp::create(b, loc, angle));
    Value half = arith::DivFOp::create(
        b, loc, arith::MulFOp::create(b, loc, c(1 - m), wave), c(2));
    return arith::AddFOp::create(b, loc, c(m), half);
  }
  // step: gamma ** floor(u / step_size); exponential: gamma ** u.
  Value exponent = u;
  if (kind == "step")
    exponent = arith::DivSIOp::create(
        b, loc, u,
        arith::ConstantIntOp::create(b, loc, phase.getStepSize().getInt(), 64));
  return math::PowFOp::create(b, loc, c(num(phase.getGamma())), toF(exponent));
}
} // namespace

Value buildLrFactor(OpBuilder &b, Location loc, Value t, ArrayAttr schedule) {
  auto phases = llvm::to_vector(schedule.getAsRange<comm::LrPhaseAttr>());
  SmallVector<int64_t> starts{0};
  for (size_t i = 0; i + 1 < phases.size(); ++i)
    starts.push_back(starts.back() + phases[i].getSteps().getInt());
  auto i64 = [&](int64_t x) -> Value {
    return arith::ConstantIntOp::create(b, loc, x, 64);
  };
  // The last phase, where its final factor holds after its `steps`.
  Value u = arith::SubIOp::create(b, loc, t, i64(starts.back()));
  if (IntegerAttr steps = phases.back().getSteps())
    u = arith::MinSIOp::create(b, loc, u, i64(steps.getInt()));
  Value factor = phaseFactor(b, loc, phases.back(), u);
  for (size_t i = phases.size() - 1; i-- > 0;) {
    Value inPhase = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, t,
                                          i64(starts[i + 1]));
    Value here = phaseFactor(
        b, loc, phases[i], arith::SubIOp::create(b, loc, t, i64(starts[i])));
    factor = arith::SelectOp::create(b, loc, inPhase, here, factor);
  }
  return factor;
}

} // namespace rankc
