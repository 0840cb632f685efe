//===- DagFuzzer.cpp - libFuzzer over the JSON frontend -------------------===//
//
// Each input is a JSON document: read (DagReader), checked (DagChecker, the
// cross-rank verification included) and, when the checker accepts it,
// imported (DagImporter). Bad documents must end in a diagnostic; a crash,
// a hang or a sanitizer report is a finding, and so is a document the
// checker accepts whose import is not a valid module (the checker is meant
// to accept exactly what the importer can build).
//
//===----------------------------------------------------------------------===//

#include "FuzzContext.h"

#include "rankc/Frontend/DagChecker.h"
#include "rankc/Frontend/DagImporter.h"
#include "rankc/Frontend/DagReader.h"

#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static rankc::fuzz::FuzzContext contexts;
  mlir::MLIRContext &ctx = contexts.next();
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  mlir::FailureOr<rankc::dag::Document> doc =
      rankc::dag::readDag(&ctx, "fuzz.json", text);
  if (failed(doc) || failed(rankc::dag::checkDag(&ctx, *doc)))
    return 0;
  mlir::OwningOpRef<mlir::ModuleOp> module = rankc::dag::importDag(&ctx, *doc);
  if (!module || failed(mlir::verify(*module))) {
    llvm::errs() << "rankc-dag-fuzzer: a checked document did not import "
                    "to a valid module\n";
    std::abort();
  }
  return 0;
}
