//===- JsonSyntax.h - where a malformed JSON text goes wrong ----*- C++ -*-===//
//
// simdjson's On-Demand parser finds that a document is malformed, but not
// always where: its structural pass reports an unclosed document at 1:1,
// and a missing colon where it next looked. When it fails, this strict
// RFC 8259 scan of the text (linear, only on that error path) names the
// first byte at which the text stops being JSON and what was expected.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_FRONTEND_JSONSYNTAX_H
#define RANKC_FRONTEND_JSONSYNTAX_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace rankc::dag {

struct JsonSyntaxError {
  size_t offset; ///< of the first byte that is wrong (or the text's end)
  std::string message;
};

/// The first syntax error of `text`, or none if it is one JSON value.
std::optional<JsonSyntaxError> findJsonSyntaxError(llvm::StringRef text);

} // namespace rankc::dag

#endif // RANKC_FRONTEND_JSONSYNTAX_H
