//===- MessageTypes.h - a message's type across ranks, on error -*- C++ -*-===//
//
// A local error is often caused by a message: rank 1 declares the receive
// as f32[3] and adds it to an f32[3], while rank 0 sends an f32[4]. The
// cross-rank verifier would name the message, but it runs on checked
// programs only; so when the checker fails, it first looks for a message
// whose sent and received types differ among the nodes it did infer, and
// reports that before the local error.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_FRONTEND_MESSAGETYPES_H
#define RANKC_FRONTEND_MESSAGETYPES_H

#include "rankc/Frontend/Dag.h"

#include "mlir/IR/MLIRContext.h"

namespace rankc::dag {

/// Emits an error for the first receive (in document order) whose declared
/// type differs from what its sender sends, considering the sends the
/// checker inferred (`inferred[p][i]` for node i of program p). Returns
/// whether it found one.
bool reportMessageTypeMismatch(mlir::MLIRContext *ctx, const Document &doc,
                               llvm::ArrayRef<std::vector<bool>> inferred);

} // namespace rankc::dag

#endif // RANKC_FRONTEND_MESSAGETYPES_H
