//===- ImportChecked.h - a fuzz input through the JSON frontend -*- C++ -*-===//
//
// What the JSON fuzzers share: the input read, checked (the cross-rank
// verification included) and imported. A document the checker accepts
// whose import is not a valid module is a finding (the checker is meant to
// accept exactly what the importer can build).
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_TOOLS_FUZZ_IMPORTCHECKED_H
#define RANKC_TOOLS_FUZZ_IMPORTCHECKED_H

#include "rankc/Frontend/DagChecker.h"
#include "rankc/Frontend/DagImporter.h"
#include "rankc/Frontend/DagReader.h"

#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

namespace rankc::fuzz {

/// The module of the input, or null when the frontend rejects it (with a
/// diagnostic, which is no finding). `target` names the fuzzer in findings.
inline mlir::OwningOpRef<mlir::ModuleOp>
importChecked(mlir::MLIRContext &ctx, const uint8_t *data, size_t size,
              const char *target) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  mlir::FailureOr<dag::Document> doc = dag::readDag(&ctx, "fuzz.json", text);
  if (failed(doc) || failed(dag::checkDag(&ctx, *doc)))
    return {};
  mlir::OwningOpRef<mlir::ModuleOp> module = dag::importDag(&ctx, *doc);
  if (!module || failed(mlir::verify(*module))) {
    llvm::errs() << target
                 << ": a checked document did not import to a valid module\n";
    std::abort();
  }
  return module;
}

} // namespace rankc::fuzz

#endif // RANKC_TOOLS_FUZZ_IMPORTCHECKED_H
