//===- BucketChoice.h - buckets chosen by the machine model -----*- C++ -*-===//
//
// comm-bucket-gradients with `comm.machine` (--bucket-cap-mb auto): each
// top-level op's time estimated from the machine's compute and copy rates,
// so each gradient's ready time; candidate splits (DDP's caps of 1, 5, 25
// and 100 MiB, one bucket per dtype, and the split the cost model finds
// best); each candidate's predicted end of the last reduction; the best.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_DIALECT_COMM_TRANSFORMS_BUCKETCHOICE_H
#define RANKC_DIALECT_COMM_TRANSFORMS_BUCKETCHOICE_H

#include "rankc/Analysis/Buckets.h"
#include "rankc/Dialect/Comm/Comm.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace rankc {

struct BucketPrediction {
  double ready = 0, start = 0, reduce = 0; ///< seconds into the step
  /// What its wait adds after the computation ends (the step's exposed
  /// communication is the sum over buckets).
  double exposed = 0;
};

struct ModelChoice {
  std::vector<GradientBucket> buckets; ///< in the order they are reduced
  std::vector<BucketPrediction> predicted;
  mlir::DictionaryAttr report; ///< comm.bucket_choice
};

/// The buckets of `tensors` (fill = ready order; readyAt[i]: the block
/// position of tensors[i]'s producer) for `fn` by `machine`; `firstCap`
/// is DDP's first-bucket limit (bytes) for the cap candidates.
ModelChoice chooseByMachine(mlir::func::FuncOp fn,
                            llvm::ArrayRef<BucketTensor> tensors,
                            llvm::ArrayRef<unsigned> readyAt,
                            comm::MachineModelAttr machine, int64_t firstCap);

} // namespace rankc

#endif
