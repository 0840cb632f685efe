//===- BucketChoice.cpp - buckets chosen by the machine model -------------===//
//
// The model (rankc/Analysis/CostModel.h): a reduction of b bytes takes
// T(b) = alpha + b beta (the calibrated fit). A fraction f_k of bucket k's
// (the calibrated overlap: how much a reduction advances while ranks
// compute without calling MPI, plus the calibrated gain per MPI call for
// each later bucket's start, which moves it along) runs behind the
// computation, in order, from when its bucket's last gradient is ready;
// the rest is paid at the waits after the computation. The step's
// communication ends at
//   max(computation end, end of the overlapped timeline) + sum (1 - f_k) T_k
// and the candidate that ends first is chosen. An op's time is the larger
// of its flops at the calibrated compute rate and its bytes at the copy
// rate: a rough estimate, the same for every candidate.
//
//===----------------------------------------------------------------------===//

#include "BucketChoice.h"

#include "rankc/Analysis/CostModel.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace rankc;

namespace {

int64_t tensorBytes(Type t) {
  auto type = dyn_cast<RankedTensorType>(t);
  if (!type || !type.hasStaticShape())
    return 0;
  unsigned bits = type.getElementType().isIntOrFloat()
                      ? type.getElementType().getIntOrFloatBitWidth()
                      : 8;
  return type.getNumElements() * int64_t((bits + 7) / 8);
}

/// Seconds `op` is estimated to take.
double estimate(Operation *op, double flopsRate, double copyRate) {
  double bytes = 0;
  for (Value v : op->getOperands())
    bytes += tensorBytes(v.getType());
  for (Value v : op->getResults())
    bytes += tensorBytes(v.getType());
  double flops = 0;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    double iterations = 1;
    for (int64_t range : linalgOp.getStaticLoopRanges())
      iterations *= range > 0 ? double(range) : 1.0;
    double bodyOps = double(
        llvm::range_size(linalgOp->getRegion(0).front().without_terminator()));
    flops = iterations * std::max(1.0, bodyOps);
  }
  return std::max(flops / flopsRate, bytes / copyRate);
}

struct Evaluated {
  double finish = 0;
  std::vector<BucketPrediction> predicted;
};

/// The fraction of bucket `k` of `n` that runs behind the computation:
/// the calibrated overlap, plus what each later bucket's start (an MPI
/// call, made while the computation goes on) moves it along.
double hiddenFraction(size_t k, size_t n, double f, double perCall) {
  return std::clamp(f + perCall * double(n - 1 - k), 0.0, 1.0);
}

Evaluated evaluate(llvm::ArrayRef<GradientBucket> buckets,
                   const llvm::DenseMap<uint32_t, double> &readyOf,
                   const AlphaBetaFit &fit, double f, double perCall,
                   double computeEnd) {
  Evaluated e;
  double done = 0, serial = 0;
  std::vector<double> hidden;
  for (auto [k, b] : llvm::enumerate(buckets)) {
    BucketPrediction p;
    for (uint32_t i : b.indices)
      p.ready = std::max(p.ready, readyOf.lookup(i));
    p.reduce = fit.seconds(double(b.bytes));
    p.start = std::max(done, p.ready);
    hidden.push_back(hiddenFraction(k, buckets.size(), f, perCall));
    done = p.start + hidden.back() * p.reduce;
    serial += (1 - hidden.back()) * p.reduce;
    e.predicted.push_back(p);
  }
  e.finish = std::max(computeEnd, done) + serial;
  // Each bucket's share of what follows the computation: the waits come in
  // order once it ends; bucket k is complete at its overlapped end or the
  // computation's, whichever is later, plus the serial parts so far.
  double serialSoFar = 0, completeBefore = computeEnd;
  for (auto [p, h] : llvm::zip_equal(e.predicted, hidden)) {
    serialSoFar += (1 - h) * p.reduce;
    double complete =
        std::max(computeEnd, p.start + h * p.reduce) + serialSoFar;
    p.exposed = std::max(0.0, complete - completeBefore);
    completeBefore = std::max(completeBefore, complete);
  }
  return e;
}

} // namespace

ModelChoice rankc::chooseByMachine(func::FuncOp fn,
                                   llvm::ArrayRef<BucketTensor> tensors,
                                   llvm::ArrayRef<unsigned> readyAt,
                                   comm::MachineModelAttr machine,
                                   int64_t firstCap) {
  MLIRContext *ctx = fn.getContext();
  double flopsRate = machine.getFlops().getValueAsDouble(),
         copyRate = machine.getCopy().getValueAsDouble(),
         f = machine.getOverlap().getValueAsDouble();
  double perCall = machine.getOverlapPerCall()
                       ? machine.getOverlapPerCall().getValueAsDouble()
                       : 0.0;
  AlphaBetaFit fit;
  ArrayRef<double> flat = machine.getAllreduce().asArrayRef();
  for (size_t i = 0; i + 2 < flat.size(); i += 3)
    fit.pieces.push_back({flat[i], flat[i + 1], flat[i + 2]});

  // The computation's timeline: cumulative estimates in block order.
  Block &body = fn.getBody().front();
  std::vector<double> doneAt = {0};
  double t = 0;
  for (Operation &op : body.without_terminator()) {
    t += estimate(&op, flopsRate, copyRate);
    doneAt.push_back(t);
  }
  // A measured step's computation (--profile) scales the estimates: their
  // proportions place the gradients, the measurement the whole.
  if (FloatAttr measured = machine.getComputeSeconds(); measured && t > 0) {
    double scale = measured.getValueAsDouble() / t;
    for (double &d : doneAt)
      d *= scale;
    t = measured.getValueAsDouble();
  }
  double computeEnd = t;
  llvm::DenseMap<uint32_t, double> readyOf;
  std::vector<ReadyGradient> ready;
  for (auto [tensor, pos] : llvm::zip(tensors, readyAt)) {
    double at = doneAt[std::min<size_t>(pos, doneAt.size() - 1)];
    readyOf[tensor.index] = at;
    ready.push_back({tensor.bytes, at});
  }

  // The candidates, DDP's default first (it stays on a tie).
  std::vector<std::pair<std::string, std::vector<GradientBucket>>> candidates;
  // (DDP's rules: the first bucket's limit, then the cap)
  auto caps = [&](double mib, int64_t first) {
    int64_t cap = bucketLimitBytes(mib);
    return assignBuckets(tensors, {std::min(first, cap), cap},
                         /*sortByLowestIndex=*/false);
  };
  candidates.push_back({"cap 25 MiB", caps(25, firstCap)});
  bool oneDtype = llvm::all_of(tensors, [&](const BucketTensor &x) {
    return x.dtype == tensors.front().dtype;
  });
  if (oneDtype && !tensors.empty()) {
    // The split that ends the overlapped timeline first (the serial part
    // only adds latencies: the split minimizing both is among these).
    AlphaBetaFit scaled = fit;
    for (AlphaBetaPiece &p : scaled.pieces)
      p.alpha *= std::max(f, 1e-3), p.beta *= std::max(f, 1e-3);
    BucketChoice c = chooseBuckets(ready, scaled);
    std::vector<GradientBucket> split;
    for (size_t b = 0; b < c.firstOfBucket.size(); ++b) {
      size_t end = b + 1 < c.firstOfBucket.size() ? c.firstOfBucket[b + 1]
                                                  : tensors.size();
      GradientBucket g;
      g.dtype = tensors.front().dtype;
      for (size_t i = c.firstOfBucket[b]; i < end; ++i) {
        g.indices.push_back(tensors[i].index);
        g.bytes += tensors[i].bytes;
      }
      g.limit = g.bytes;
      split.push_back(std::move(g));
    }
    candidates.push_back({"model", std::move(split)});
  }
  candidates.push_back({"one per dtype", caps(1e9, bucketLimitBytes(1e9))});
  for (double mib : {1.0, 5.0, 100.0})
    candidates.push_back({"cap " + std::to_string(int(mib)) + " MiB", caps(mib, firstCap)});

  Builder b(ctx);
  SmallVector<NamedAttribute> predictedFinish;
  size_t best = 0;
  Evaluated bestEval;
  for (auto [i, c] : llvm::enumerate(candidates)) {
    Evaluated e = evaluate(c.second, readyOf, fit, f, perCall, computeEnd);
    predictedFinish.push_back(b.getNamedAttr(c.first, b.getF64FloatAttr(e.finish)));
    if (i == 0 || e.finish < bestEval.finish * (1 - 1e-9)) {
      best = i;
      bestEval = e;
    }
  }
  // What the step spends outside parts and waits, measured (--profile):
  // the same for every candidate, it makes the predicted step comparable
  // with a measured one.
  double overhead = 0;
  if (FloatAttr o = machine.getOverheadSeconds())
    overhead = o.getValueAsDouble();
  ModelChoice choice;
  choice.buckets = candidates[best].second;
  choice.predicted = bestEval.predicted;
  choice.report = b.getDictionaryAttr(
      {b.getNamedAttr("chosen", b.getStringAttr(candidates[best].first)),
       b.getNamedAttr("candidates", b.getDictionaryAttr(predictedFinish)),
       b.getNamedAttr("compute_seconds", b.getF64FloatAttr(computeEnd)),
       b.getNamedAttr("finish_seconds", b.getF64FloatAttr(bestEval.finish)),
       b.getNamedAttr("exposed_seconds",
                      b.getF64FloatAttr(bestEval.finish - computeEnd)),
       b.getNamedAttr("overhead_seconds", b.getF64FloatAttr(overhead)),
       b.getNamedAttr("step_seconds",
                      b.getF64FloatAttr(bestEval.finish + overhead)),
       b.getNamedAttr("overlap", machine.getOverlap()),
       b.getNamedAttr("overlap_per_call", b.getF64FloatAttr(perCall)),
       b.getNamedAttr("compute_from",
                      b.getStringAttr(machine.getComputeSeconds() ? "profile"
                                                                  : "estimate")),
       b.getNamedAttr("calibrated_ranks", b.getI64IntegerAttr(machine.getRanks()))});
  return choice;
}
