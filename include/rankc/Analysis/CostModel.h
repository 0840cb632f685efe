//===- CostModel.h - what a message costs, and buckets chosen by it -*- C++ -*-===//
//
// The machine model `rankc calibrate` fits (MACHINE.json): per operation
// and world size, time = alpha + bytes * beta, piecewise where the
// measurements say so (latency-bound small messages, bandwidth-bound large
// ones), with the fit's error. And the bucket chooser of
// `--bucket-cap-mb auto`: gradients in the order they are ready, each
// with its bytes and the computation time at which it is ready; buckets
// are runs of consecutive gradients (DDP's rule of ready order kept), each
// reduced once its last gradient is ready and the previous bucket's
// reduction is done. The chooser minimizes when the last reduction ends
// (the step's exposed communication past its computation), exactly, by
// dynamic programming over the split points.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_ANALYSIS_COSTMODEL_H
#define RANKC_ANALYSIS_COSTMODEL_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace rankc {

struct AlphaBetaPiece {
  double fromBytes = 0; ///< the piece holds for messages of at least this
  double alpha = 0;     ///< seconds
  double beta = 0;      ///< seconds per byte
};

struct AlphaBetaFit {
  std::vector<AlphaBetaPiece> pieces; ///< by fromBytes, the first from 0
  double maxRelativeError = 0;        ///< over the measured points

  double seconds(double bytes) const;
};

struct Timing {
  double bytes, seconds;
};

/// The fit of `points` (at least two sizes): one line by least relative
/// squares (alpha, beta >= 0), or, when that line is off by more than 5%
/// somewhere, two pieces split between two measured sizes if that halves
/// the largest relative error.
AlphaBetaFit fitAlphaBeta(llvm::ArrayRef<Timing> points);

struct ReadyGradient {
  int64_t bytes;
  double readySeconds; ///< when the backward has produced it
};

struct BucketChoice {
  std::vector<unsigned> firstOfBucket; ///< index of each bucket's first gradient
  double finishSeconds = 0; ///< when the last reduction is predicted to end
};

/// The split of `grads` (ready order, non-decreasing readySeconds) into
/// consecutive buckets whose last reduction ends first, `cost` giving a
/// reduction's seconds for its bytes; O(n^2) for n gradients.
BucketChoice chooseBuckets(llvm::ArrayRef<ReadyGradient> grads,
                           const AlphaBetaFit &cost);

/// When the last reduction ends for the given split (the same model).
double bucketsFinish(llvm::ArrayRef<ReadyGradient> grads,
                     llvm::ArrayRef<unsigned> firstOfBucket,
                     const AlphaBetaFit &cost);

} // namespace rankc

#endif // RANKC_ANALYSIS_COSTMODEL_H
