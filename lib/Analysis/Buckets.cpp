//===- Buckets.cpp - DDP's gradient bucket assignment ---------------------===//

#include "rankc/Analysis/Buckets.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace rankc {

int64_t bucketLimitBytes(double mb) {
  return int64_t(std::floor(mb * 1024.0 * 1024.0));
}

std::vector<GradientBucket> assignBuckets(llvm::ArrayRef<BucketTensor> tensors,
                                          llvm::ArrayRef<int64_t> limits,
                                          bool sortByLowestIndex) {
  struct Open {
    GradientBucket bucket;
    size_t limitIndex = 0;
    size_t firstSeen = 0;
  };
  std::vector<GradientBucket> result;
  std::map<std::string, Open> open; // by dtype
  size_t seen = 0;
  for (const BucketTensor &t : tensors) {
    auto [it, fresh] = open.try_emplace(t.dtype);
    Open &o = it->second;
    if (o.bucket.indices.empty())
      o.firstSeen = seen++;
    o.bucket.dtype = t.dtype;
    o.bucket.indices.push_back(t.index);
    o.bucket.bytes += t.bytes;
    o.bucket.limit = limits[o.limitIndex];
    if (o.bucket.bytes >= o.bucket.limit) {
      result.push_back(std::move(o.bucket));
      o.bucket = GradientBucket();
      if (o.limitIndex + 1 < limits.size())
        ++o.limitIndex;
    }
  }
  // Partial buckets last, in the order their first tensor came (DDP leaves
  // this order to an unordered_map; for one dtype there is only one).
  std::vector<Open *> partial;
  for (auto &[dtype, o] : open)
    if (!o.bucket.indices.empty())
      partial.push_back(&o);
  llvm::sort(partial, [](Open *a, Open *b) { return a->firstSeen < b->firstSeen; });
  for (Open *o : partial)
    result.push_back(std::move(o->bucket));
  if (sortByLowestIndex)
    std::stable_sort(result.begin(), result.end(),
                     [](const GradientBucket &a, const GradientBucket &b) {
                       return *llvm::min_element(a.indices) <
                              *llvm::min_element(b.indices);
                     });
  return result;
}

} // namespace rankc
