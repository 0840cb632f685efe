//===- CostModel.cpp - alpha-beta fits and the bucket chooser -------------===//

#include "rankc/Analysis/CostModel.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace rankc;

double AlphaBetaFit::seconds(double bytes) const {
  const AlphaBetaPiece *use = &pieces.front();
  for (const AlphaBetaPiece &p : pieces)
    if (bytes >= p.fromBytes)
      use = &p;
  return use->alpha + bytes * use->beta;
}

namespace {

/// Least squares of relative error (weights 1/t^2) for t = a + b x, with
/// a, b >= 0 (a fit through the origin, or a constant, where the free one
/// would be negative).
AlphaBetaPiece fitLine(llvm::ArrayRef<Timing> pts) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const Timing &p : pts) {
    double w = 1.0 / (p.seconds * p.seconds);
    sw += w, sx += w * p.bytes, sy += w * p.seconds;
    sxx += w * p.bytes * p.bytes, sxy += w * p.bytes * p.seconds;
  }
  AlphaBetaPiece piece;
  double det = sw * sxx - sx * sx;
  if (det > 0) {
    piece.beta = (sw * sxy - sx * sy) / det;
    piece.alpha = (sy - piece.beta * sx) / sw;
  }
  if (det <= 0 || piece.alpha < 0) { // through the origin
    piece.alpha = 0;
    piece.beta = sxx > 0 ? sxy / sxx : 0;
  }
  if (piece.beta < 0) { // a constant
    piece.beta = 0;
    piece.alpha = sy / sw;
  }
  return piece;
}

double maxRelative(const AlphaBetaFit &fit, llvm::ArrayRef<Timing> pts) {
  double worst = 0;
  for (const Timing &p : pts)
    worst = std::max(worst, std::fabs(fit.seconds(p.bytes) - p.seconds) / p.seconds);
  return worst;
}

} // namespace

AlphaBetaFit rankc::fitAlphaBeta(llvm::ArrayRef<Timing> points) {
  std::vector<Timing> pts(points.begin(), points.end());
  llvm::sort(pts, [](const Timing &a, const Timing &b) { return a.bytes < b.bytes; });
  AlphaBetaFit one;
  one.pieces = {fitLine(pts)};
  one.maxRelativeError = maxRelative(one, pts);
  AlphaBetaFit best = one;
  // Two pieces, each of at least two points, split halfway (geometric)
  // between two measured sizes.
  for (size_t k = 2; k + 2 <= pts.size(); ++k) {
    AlphaBetaFit two;
    two.pieces = {fitLine(llvm::ArrayRef(pts).take_front(k)),
                  fitLine(llvm::ArrayRef(pts).drop_front(k))};
    two.pieces[0].fromBytes = 0;
    two.pieces[1].fromBytes = std::sqrt(pts[k - 1].bytes * pts[k].bytes);
    two.maxRelativeError = maxRelative(two, pts);
    if (two.maxRelativeError < best.maxRelativeError)
      best = two;
  }
  // A line within 5% is the model; two pieces must halve a larger error.
  return one.maxRelativeError > 0.05 &&
                 best.maxRelativeError * 2 <= one.maxRelativeError
             ? best
             : one;
}

double rankc::bucketsFinish(llvm::ArrayRef<ReadyGradient> grads,
                            llvm::ArrayRef<unsigned> firstOfBucket,
                            const AlphaBetaFit &cost) {
  double done = 0;
  for (size_t b = 0; b < firstOfBucket.size(); ++b) {
    unsigned first = firstOfBucket[b];
    unsigned end = b + 1 < firstOfBucket.size() ? firstOfBucket[b + 1] : grads.size();
    int64_t bytes = 0;
    for (unsigned i = first; i < end; ++i)
      bytes += grads[i].bytes;
    double start = std::max(done, grads[end - 1].readySeconds);
    done = start + cost.seconds(double(bytes));
  }
  return done;
}

BucketChoice rankc::chooseBuckets(llvm::ArrayRef<ReadyGradient> grads,
                                  const AlphaBetaFit &cost) {
  size_t n = grads.size();
  BucketChoice choice;
  if (n == 0)
    return choice;
  // finish[j]: the earliest end of the reductions of gradients [0, j) when
  // a bucket ends at j; from[j]: where that bucket starts. Buckets are
  // reduced in order, so the best split of a prefix is all the rest needs.
  std::vector<double> finish(n + 1, std::numeric_limits<double>::infinity());
  std::vector<unsigned> from(n + 1, 0);
  std::vector<int64_t> prefix(n + 1, 0);
  for (size_t i = 0; i < n; ++i)
    prefix[i + 1] = prefix[i] + grads[i].bytes;
  finish[0] = 0;
  for (size_t j = 1; j <= n; ++j)
    for (size_t i = 0; i < j; ++i) {
      double start = std::max(finish[i], grads[j - 1].readySeconds);
      double end = start + cost.seconds(double(prefix[j] - prefix[i]));
      // (ties: fewer, larger buckets, as a larger cap gives)
      if (end < finish[j] - 1e-15) {
        finish[j] = end;
        from[j] = i;
      }
    }
  for (size_t j = n; j > 0; j = from[j])
    choice.firstOfBucket.push_back(from[j]);
  std::reverse(choice.firstOfBucket.begin(), choice.firstOfBucket.end());
  choice.finishSeconds = finish[n];
  return choice;
}
