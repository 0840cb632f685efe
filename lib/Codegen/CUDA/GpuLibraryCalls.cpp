//===- GpuLibraryCalls.cpp - contractions to cuBLASLt ---------------------===//
//
// On the GPU, contractions run faster in a tuned library than in any kernel
// rankc-linalg-to-gpu-loops generates: every contraction (a linalg.matmul,
// a batch_matmul, or an einsum's generic: linalg::inferContractionDims) on
// device buffers of f32 or f64 with identity layouts that is one batched
// GEMM, possibly with transposed operands, once each of its batch, M, N
// and K groups of loop dimensions is collapsed, becomes a call of the
// runtime's rankc_rt_gemm (runtime/cuda/CublasLt.cpp), which runs cuBLASLt on
// the stream the kernels use. The fill of zeros that starts the
// accumulator is folded into the call (beta = 0). An operand that is a
// strided view (q, k and v split from one fused projection) is first copied
// to a buffer of its own (a copy kernel of the operand's size, against a
// GEMM left to the kernel generator); a strided result is computed there
// and copied back. A and B may also be bf16 (f16) widened into an f32 C by
// the contraction's body (rankc-gpu-narrow-contractions makes them so):
// cuBLASLt reads them narrow and accumulates in f32. Anything else (f16/
// bf16 contractions that accumulate in their own type; operands whose
// groups interleave) stays for the kernel generator.
//
//===----------------------------------------------------------------------===//

#include "rankc/Transforms/GemmMatch.h"
#include "rankc/Codegen/CUDA/Passes.h"
#include "rankc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPULIBRARYCALLS
#include "rankc/Codegen/CUDA/Passes.h.inc"
} // namespace rankc

using namespace mlir;
using rankc::asGemm;
using rankc::Gemm;

namespace {

/// Where a buffer lies: the buffer it views (through reshapes and
/// memref.view at constant offsets) and its bytes there, the offset
/// unknown if a view's is not a constant.
struct Place {
  Value root;
  std::optional<int64_t> begin;
  int64_t bytes = 0;
};

std::optional<Place> placeOf(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  Place p{v, 0, type.getNumElements() *
                    int64_t(type.getElementTypeBitWidth() / 8)};
  while (Operation *def = p.root.getDefiningOp()) {
    if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(def)) {
      p.root = def->getOperand(0);
    } else if (auto view = dyn_cast<memref::ViewOp>(def)) {
      std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
      p.begin = p.begin && shift ? std::optional(*p.begin + *shift)
                                 : std::nullopt;
      p.root = view.getSource();
    } else {
      break;
    }
  }
  return p;
}

/// Whether `a` and `b` may share bytes: views of one buffer whose ranges
/// are not known to be disjoint. (Distinct buffers, arguments and the
/// part's own arena among them, are live together and planned apart.)
bool mayOverlap(Value a, Value b) {
  std::optional<Place> pa = placeOf(a), pb = placeOf(b);
  if (!pa || !pb)
    return true;
  if (pa->root != pb->root)
    return false;
  if (!pa->begin || !pb->begin)
    return true;
  return *pa->begin < *pb->begin + pb->bytes &&
         *pb->begin < *pa->begin + pa->bytes;
}

/// Whether `round`'s body is `truncf(extf(bias) + c)` (either order of the
/// sum), c its first block argument, bias its second.
bool addsBias(linalg::GenericOp round) {
  auto yield = cast<linalg::YieldOp>(round.getBody()->getTerminator());
  auto trunc = yield.getValues()[0].getDefiningOp<arith::TruncFOp>();
  auto add = trunc ? trunc.getIn().getDefiningOp<arith::AddFOp>() : nullptr;
  if (!add || trunc.getRoundingmodeAttr())
    return false;
  Value c = round.getBody()->getArgument(0),
        bias = round.getBody()->getArgument(1);
  auto widened = [&](Value v) {
    auto ext = v.getDefiningOp<arith::ExtFOp>();
    return ext && ext.getIn() == bias;
  };
  return (add.getLhs() == c && widened(add.getRhs())) ||
         (add.getRhs() == c && widened(add.getLhs()));
}

/// The rounding `op`'s call writes: the generic marked `rankc.gemm_result`
/// right after a GEMM with narrow operands from zeros, which rounds its
/// result (plus a bias per column) into a buffer of identity layout.
struct Rounding {
  linalg::GenericOp round;
  Value bias; // n values of the narrow type, or null
};

/// Copies that may come between a GEMM and its rounding and move after
/// the rounding (the buffer placement puts a parameter's copy or a strided
/// operand's staging wherever their buffers are free): a bound, so that
/// the search stays linear.
constexpr int kCopiesBetween = 4;

/// Whether `copy` touches none of `buffers`' bytes. (A copy that reads C
/// is one more reader of it: folded into the GEMM, the rounding leaves C
/// unwritten.)
bool apartFrom(Operation *copy, ArrayRef<Value> buffers) {
  return llvm::all_of(copy->getOperands(), [&](Value v) {
    return !isa<MemRefType>(v.getType()) ||
           llvm::none_of(buffers, [&](Value b) { return mayOverlap(v, b); });
  });
}

/// `op`'s rounding, or none. The ops without effects between them (the
/// view of the rounded buffer) move before `op`, where the call reads that
/// buffer's address; copies between them that touch none of C, the
/// rounded buffer and the bias move after it.
Rounding roundingOf(linalg::LinalgOp op, const Gemm &g) {
  Value c = op.getDpsInitOperand(0)->get();
  Operation *next = op->getNextNode();
  SmallVector<Operation *> between, copies;
  while (next) {
    bool pure = isMemoryEffectFree(next) && next->getNumRegions() == 0;
    bool copy = !pure && isa<linalg::CopyOp, gpu::MemcpyOp>(next) &&
                next->getNumResults() == 0 && copies.size() < kCopiesBetween;
    if (!pure && !copy)
      break;
    (pure ? between : copies).push_back(next);
    next = next->getNextNode();
  }
  auto round = dyn_cast_or_null<linalg::GenericOp>(next);
  if (!round || !round->hasAttr(rankc::kGemmResult) ||
      !op->hasAttr(rankc::kNarrowOperands) || round.getNumDpsInputs() < 1 ||
      round.getNumDpsInputs() > 2 || round.getDpsInputs()[0] != c ||
      round.getNumDpsInits() != 1 || !rankc::zeroFillOf(op, c))
    return {};
  auto out = dyn_cast<MemRefType>(round.getDpsInits()[0].getType());
  Type narrow = getElementTypeOrSelf(op.getDpsInputOperand(0)->get().getType());
  if (!out || !out.getLayout().isIdentity() || out.getElementType() != narrow)
    return {};
  // The rounded buffer must not share bytes with A or B, which the GEMM
  // reads while it writes it: rankc-gpu-round-gemm-results starts it with
  // a fill before the GEMM, so rankc-plan-buffers keeps it apart from them;
  // checked here all the same (views of one buffer at constant offsets).
  Value d = round.getDpsInits()[0];
  for (OpOperand *in : op.getDpsInputOperands())
    if (mayOverlap(d, in->get()))
      return {};
  // A bias: n values in a row-major buffer of C's trailing (N) dimensions,
  // read while D is written; K > 0 (a sum over nothing is the bias alone,
  // which cuBLASLt is not asked for).
  Value bias;
  if (round.getNumDpsInputs() == 2) {
    bias = round.getDpsInputs()[1];
    auto type = dyn_cast<MemRefType>(bias.getType());
    AffineMap map = round.getIndexingMapsArray()[1];
    unsigned rank = out.getRank();
    if (!type || !type.getLayout().isIdentity() || !type.hasStaticShape() ||
        type.getElementType() != narrow || type.getRank() == 0 ||
        type.getNumElements() != g.n || g.k == 0 ||
        !round.getIndexingMapsArray()[0].isIdentity() ||
        map != AffineMap::getMultiDimIdentityMap(rank, op.getContext())
                   .getSliceMap(rank - type.getRank(), type.getRank()) ||
        !addsBias(round) || mayOverlap(d, bias))
      return {};
  }
  SmallVector<Value> buffers{c, d};
  if (bias)
    buffers.push_back(bias);
  if (!llvm::all_of(copies,
                    [&](Operation *x) { return apartFrom(x, buffers); }))
    return {};
  for (Operation *pure : between)
    pure->moveBefore(op);
  for (Operation *copy : llvm::reverse(copies))
    copy->moveAfter(round);
  // That fill (the call writes every element): the nearest write of the
  // rounded buffer before the GEMM, past the fill of C and ops without
  // effects.
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    auto fill = dyn_cast<linalg::FillOp>(prev);
    if (fill && fill.getDpsInits()[0] == d) {
      fill->erase();
      break;
    }
    if (!isMemoryEffectFree(prev) && !(fill && fill.getDpsInits()[0] == c))
      break;
  }
  return {round, bias};
}

struct GpuLibraryCallsPass
    : public rankc::impl::RankcGpuLibraryCallsBase<GpuLibraryCallsPass> {
  using RankcGpuLibraryCallsBase::RankcGpuLibraryCallsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The runtime's codes (rankc_runtime.h: RANKC_PRECISION_*).
    int precisionCode = precision == "tf32" ? 1 : precision == "bf16" ? 2 : 0;
    if (precision != "f32" && precisionCode == 0) {
      module.emitError() << "unknown precision '" << precision
                         << "' (f32, tf32 or bf16)";
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::LinalgOp, Gemm>> gemms;
    module.walk([&](linalg::LinalgOp op) {
      if (FailureOr<Gemm> g =
              asGemm(op, /*anyLayout=*/true, /*narrowInputs=*/true);
          op.hasPureBufferSemantics() && succeeded(g))
        gemms.push_back({op, *g});
    });
    if (gemms.empty())
      return;
    OpBuilder b(module.getContext());
    for (auto [op, g] : gemms)
      rankc::stageStridedOperands(
          b, op, [](OpBuilder &b, Location loc, MemRefType type) -> Value {
            return gpu::AllocOp::create(b, loc, type, Type(), ValueRange(),
                                        ValueRange(), ValueRange(), false)
                .getMemref();
          });
    func::FuncOp gemm = rankc::declareGemm(b, module, "rankc_rt_gemm");
    func::FuncOp gemmBias; // declared for the first bias
    // cuBLAS runs on the kernels' stream: no host wait before it.
    gemm->setAttr(rankc::kStreamOrdered, b.getUnitAttr());
    for (auto [op, g] : gemms) {
      // Operands that are exactly bf16 (f16): the fast compute type's
      // rounding of its inputs changes nothing.
      int code = precisionCode;
      if (auto narrow = op->getAttrOfType<TypeAttr>(rankc::kNarrowOperands))
        code = narrow.getValue().isBF16() ? 2 : 3;
      // Its rounding to bf16 (f16), if it comes right after: written by
      // the call, as it rounds its f32 accumulator (plus a bias).
      auto [round, bias] = roundingOf(op, g);
      if (bias && !gemmBias) {
        gemmBias = rankc::declareGemm(b, module, "rankc_rt_gemm_bias",
                                      /*block=*/false, /*bias=*/true);
        gemmBias->setAttr(rankc::kStreamOrdered, b.getUnitAttr());
      }
      rankc::replaceByGemmCall(b, op, g, bias ? gemmBias : gemm, code,
                               round ? round.getDpsInits()[0] : Value(), bias);
      if (round)
        round->erase();
    }
  }
};

} // namespace
