//===- Pipeline.cpp - the comm layer's part of the partitioning pipeline --===//

#include "rankc/Dialect/Comm/Transforms/Passes.h"

void rankc::buildCommSchedulePipeline(mlir::OpPassManager &pm,
                                      bool bulkSynchronous) {
  pm.addPass(createCommMicroSteps(CommMicroStepsOptions{!bulkSynchronous}));
  pm.addPass(createCommAccumulateGradients());
  pm.addPass(createCommBucketGradients());
  pm.addPass(createCommApplyOptimizer());
  pm.addPass(createCommPartition(CommPartitionOptions{!bulkSynchronous}));
  pm.addPass(createCommAssignMpiTags());
}
