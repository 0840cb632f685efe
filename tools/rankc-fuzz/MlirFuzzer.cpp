//===- MlirFuzzer.cpp - libFuzzer over the .mlir input path ---------------===//
//
// Each input is MLIR text, as `rankc check FILE.mlir` takes it: parsed with
// every dialect rankc registers (the parser runs the verifiers, the comm
// dialect's included), then comm-verify-ranks. Bad modules must end in a
// diagnostic; a crash, a hang or a sanitizer report is a finding.
//
//===----------------------------------------------------------------------===//

#include "FuzzContext.h"

#include "rankc/Frontend/LoadProgram.h"
#include "rankc/Dialect/Comm/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static rankc::fuzz::FuzzContext contexts;
  mlir::MLIRContext &ctx = contexts.next();
  // The parser reads to a terminating NUL, as files are read (MemoryBuffer).
  std::string text(reinterpret_cast<const char *>(data), size);
  // As rankc's .mlir path does before parsing (LoadProgram.cpp).
  if (failed(rankc::refuseParserHazards(&ctx, text, "fuzz.mlir")))
    return 0;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, mlir::ParserConfig(&ctx));
  if (!module)
    return 0;
  mlir::PassManager pm(&ctx);
  pm.addPass(rankc::createCommVerifyRanks());
  (void)pm.run(*module);
  return 0;
}
