//===- TypeText.h - how errors spell a tensor type --------------*- C++ -*-===//
//
// "f32[4, 8]": the one spelling of a tensor type in every error, whether the
// type came from a JSON node (the frontend) or an MLIR value (the analyses).
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_SUPPORT_TYPETEXT_H
#define RANKC_SUPPORT_TYPETEXT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace rankc {

inline std::string typeText(llvm::ArrayRef<int64_t> shape,
                            llvm::StringRef dtype) {
  std::string s = dtype.str() + "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

} // namespace rankc

#endif // RANKC_SUPPORT_TYPETEXT_H
