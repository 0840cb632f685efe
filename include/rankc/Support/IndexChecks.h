//===- IndexChecks.h - the runtime call of an index check ----*- C++ -*-===//
//
// The frontend checks take's and scatter_add's indices (and integer rem's
// divisors) in the ops' bodies: out of range, the body calls this runtime
// function (rankc_runtime.h), which ends the run. Passes recognize the
// checks by it: rankc-prune-dead-checks keeps only them in dead generics,
// rankc-gpu-index-checks records them on the device.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_SUPPORT_INDEXCHECKS_H
#define RANKC_SUPPORT_INDEXCHECKS_H

#include "llvm/ADT/StringRef.h"

namespace rankc {

/// `void rankc_rt_index_error(i32 check, i64 index, i64 bound)`.
inline constexpr llvm::StringLiteral kIndexErrorFunction =
    "rankc_rt_index_error";

} // namespace rankc

#endif // RANKC_SUPPORT_INDEXCHECKS_H
