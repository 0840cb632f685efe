//===- Buckets.h - DDP's gradient bucket assignment -------------*- C++ -*-===//
//
// PyTorch DistributedDataParallel's reducer groups gradients into buckets
// with `compute_bucket_assignment_by_size` (torch/csrc/distributed/c10d/
// reducer.cpp). This is that algorithm, step for step, so that rankc's
// buckets equal DDP's:
//
//  - one open bucket per dtype; each dtype walks its own list of byte
//    limits (the first limit, then the cap for every later bucket);
//  - a tensor joins its dtype's open bucket; the bucket closes as soon as
//    its bytes reach or pass its limit;
//  - open (partial) buckets come last;
//  - without an explicit order (DDP's first iteration) the buckets are then
//    sorted by the lowest tensor index they hold.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_ANALYSIS_BUCKETS_H
#define RANKC_ANALYSIS_BUCKETS_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace rankc {

struct BucketTensor {
  uint32_t index;    // the parameter's registration index
  std::string dtype; // tensors of different dtypes never share a bucket
  int64_t bytes;
};

struct GradientBucket {
  std::vector<uint32_t> indices; // parameter indices, in fill order
  std::string dtype;
  int64_t bytes = 0;
  int64_t limit = 0;
};

/// `tensors` in fill order; `limits` as DDP's bucket_size_limits (first,
/// cap). `sortByLowestIndex` is DDP's behaviour when no tensor_indices are
/// given. Partial buckets are appended in the order their first tensor came.
std::vector<GradientBucket>
assignBuckets(llvm::ArrayRef<BucketTensor> tensors,
              llvm::ArrayRef<int64_t> limits, bool sortByLowestIndex);

/// DDP's `int(mb * 1024 * 1024)`.
int64_t bucketLimitBytes(double mb);

} // namespace rankc

#endif // RANKC_ANALYSIS_BUCKETS_H
