//===- FuzzContext.h - one MLIRContext for many fuzz inputs -----*- C++ -*-===//
//
// A context per input would spend the fuzzer's time loading dialects; one
// context for the whole run would keep every attribute any input ever made
// (uniqued for the context's life) and grow without bound. So a context
// serves a few thousand inputs, then is replaced. Diagnostics (the errors
// bad inputs are expected to produce) are dropped: only crashes, hangs,
// sanitizer reports and broken invariants are findings.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_TOOLS_FUZZ_FUZZCONTEXT_H
#define RANKC_TOOLS_FUZZ_FUZZCONTEXT_H

#include "rankc/InitAll.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <memory>

namespace rankc::fuzz {

class FuzzContext {
public:
  /// The context for the next input.
  mlir::MLIRContext &next() {
    if (!ctx || ++uses > kInputsPerContext) {
      handler.reset();
      ctx.reset();
      mlir::DialectRegistry registry;
      rankc::registerAllDialects(registry);
      ctx = std::make_unique<mlir::MLIRContext>(
          registry, mlir::MLIRContext::Threading::DISABLED);
      ctx->loadAllAvailableDialects();
      ctx->printOpOnDiagnostic(false);
      handler = std::make_unique<mlir::ScopedDiagnosticHandler>(
          ctx.get(), [](mlir::Diagnostic &) { return mlir::success(); });
      uses = 0;
    }
    return *ctx;
  }

private:
  static constexpr int kInputsPerContext = 4000;
  std::unique_ptr<mlir::MLIRContext> ctx;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> handler;
  int uses = 0;
};

} // namespace rankc::fuzz

#endif // RANKC_TOOLS_FUZZ_FUZZCONTEXT_H
