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
#include "ImportChecked.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static rankc::fuzz::FuzzContext contexts;
  (void)rankc::fuzz::importChecked(contexts.next(), data, size,
                                   "rankc-dag-fuzzer");
  return 0;
}
