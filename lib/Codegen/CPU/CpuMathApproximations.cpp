//===- CpuMathApproximations.cpp - an f32 erf that vectorizes --------------===//
//
// The CPU pipeline lowers math.erf to libm's erff, one element per call: a
// GELU's erf was 5% of the exported transformer step, and 15-20% once its
// backward is counted. Upstream's polynomial erf (MathDialect's
// populatePolynomialApproximateErfPattern) vectorizes but is 4.5 ulps off
// at worst, and that moved a 6-step Adam run of the transformer further
// from the GPU's (libdevice, < 2 ulps) than the check's tolerance allows.
// This pass writes erf of f32 as piecewise polynomials fitted for this
// purpose (scripts/fit_erf_f32.py: < 0.95 ulps, libm's class), arith and
// math.fma ops that vectorize with their loop. tanh stays with libm (no
// model of the zoo's hot loops uses it); f64 too.
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCCPUMATHAPPROXIMATIONS
#include "rankc/Codegen/CPU/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

// Coefficients, highest degree first, from scripts/fit_erf_f32.py.
// |x| < 0.9: erf(x) = x + x * Q(x^2).
constexpr float kNearZero[] = {
    -1.048075773724122e-05f, 0.00011505815928103402f,
    -0.0008511805208399892f, 0.005222616251558065f,
    -0.026865893974900246f,  0.11283788830041885f,
    -0.37612637877464294f,   0.12837916612625122f};

/// 0.9 <= |x| < 3.93: erf(x) = sign(x) * (1 - P(|x| - center)), P ~ erfc.
struct TailPiece {
  float below; ///< the piece is [previous piece's below, below)
  float center;
  float coefficients[10];
};
constexpr TailPiece kTail[] = {
    {1.75f,
     1.3250000476837158f,
     {-0.0011897161602973938f, 0.00469672866165638f, -0.00045689509715884924f,
      -0.022307168692350388f, 0.03730087727308273f, 0.02201145887374878f,
      -0.16321715712547302f, 0.2583525478839874f, -0.19498300552368164f,
      0.06095344200730324f}},
    {2.8f,
     2.2750000953674316f,
     {0.000323634099913761f, -0.0009136050939559937f, 0.0004924481036141515f,
      0.0030036328826099634f, -0.010215825401246548f, 0.017778852954506874f,
      -0.01988181099295616f, 0.01451078150421381f, -0.006378368008881807f,
      0.001293869805522263f}},
    {3.93f,
     3.365000009536743f,
     {-2.079619480355177e-05f, 5.9870373661397025e-05f,
      -0.0001069794234354049f, 0.0001529103610664606f,
      -0.00017272606783080846f, 0.0001503880339441821f,
      -9.842836880125105e-05f, 4.5898010284872726e-05f,
      -1.3640775250678416e-05f, 1.9472174699330935e-06f}},
};
/// Where the near-zero polynomial ends; from 3.93 on, erf rounds to +-1.
constexpr float kNearZeroBelow = 0.9f;

struct ErfF32 : OpRewritePattern<math::ErfOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ErfOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return rewriter.notifyMatchFailure(op, "not f32");
    Location loc = op.getLoc();
    ImplicitLocOpBuilder b(loc, rewriter);
    auto constant = [&](float v) -> Value {
      return arith::ConstantOp::create(
          b, type,
          isa<ShapedType>(type)
              ? TypedAttr(SplatElementsAttr::get(cast<ShapedType>(type),
                                                 b.getF32FloatAttr(v)))
              : TypedAttr(b.getF32FloatAttr(v)));
    };
    auto horner = [&](ArrayRef<float> coefficients, Value t) {
      Value r = constant(coefficients.front());
      for (float c : coefficients.drop_front())
        r = math::FmaOp::create(b, r, t, constant(c));
      return r;
    };
    Value x = op.getOperand();
    Value t = math::AbsFOp::create(b, x);
    // Every piece is computed and the right one selected: no branches in
    // the loop body, so it vectorizes. A NaN compares false everywhere and
    // takes the near-zero piece, which gives NaN.
    Value s = arith::MulFOp::create(b, x, x);
    Value nearZero = math::FmaOp::create(b, x, horner(kNearZero, s), x);
    Value tail = constant(1.0f);
    for (const TailPiece &piece : llvm::reverse(kTail)) {
      Value u = arith::SubFOp::create(b, t, constant(piece.center));
      Value value = arith::SubFOp::create(
          b, constant(1.0f), horner(piece.coefficients, u));
      Value inside = arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, t,
                                           constant(piece.below));
      tail = arith::SelectOp::create(b, inside, value, tail);
    }
    tail = math::CopySignOp::create(b, tail, x);
    Value far = arith::CmpFOp::create(b, arith::CmpFPredicate::OGE, t,
                                      constant(kNearZeroBelow));
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, far, tail, nearZero);
    return success();
  }
};

struct CpuMathApproximationsPass
    : public rankc::impl::RankcCpuMathApproximationsBase<
          CpuMathApproximationsPass> {
  void runOnOperation() override {
    bool any = false;
    getOperation().walk([&](math::ErfOp) { any = true; });
    if (!any) // nothing to do costs nothing (issue 15)
      return;
    RewritePatternSet patterns(&getContext());
    patterns.add<ErfF32>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
