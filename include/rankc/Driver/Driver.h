//===- Driver.h - what `rankc check` and `rankc compile` do -----*- C++ -*-===//
//
// The driver's work as library calls, so that tools/rankc only parses the
// command line and prints.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_DRIVER_DRIVER_H
#define RANKC_DRIVER_DRIVER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace llvm {
class SourceMgr;
}

namespace rankc {

/// `rankc check`: validates INPUT and verifies it across ranks; on success
/// prints a one-line summary to `out`. A JSON document is verified straight
/// from its checked form, without building MLIR.
mlir::LogicalResult checkInput(mlir::MLIRContext &ctx, llvm::StringRef input,
                               llvm::SourceMgr &sourceMgr,
                               mlir::TimingScope &timing,
                               llvm::raw_ostream &out);

struct CompileOptions {
  std::optional<double> bucketCapMb, firstBucketCapMb;
  std::optional<std::string> bucketOrder;
  std::string machine; // --bucket-cap-mb auto --machine: the model's file
  std::string profile; // --profile: a launch --stats of this step
  bool bulkSynchronous = false; // --schedule bulk-synchronous
};

/// `rankc compile` up to the partitioned comm-level module: load, apply the
/// bucket flags, run the rankc pipeline (verify ranks, partition).
mlir::OwningOpRef<mlir::ModuleOp>
compileToPartitioned(mlir::MLIRContext &ctx, llvm::StringRef input,
                     const CompileOptions &options, llvm::SourceMgr &sourceMgr,
                     mlir::TimingScope &timing);

} // namespace rankc

#endif // RANKC_DRIVER_DRIVER_H
