//===- InitAll.h - everything a rankc tool registers ------------*- C++ -*-===//

#ifndef RANKC_INITALL_H
#define RANKC_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace rankc {
/// The comm dialect, upstream dialects and their interface extensions.
void registerAllDialects(mlir::DialectRegistry &registry);
} // namespace rankc

#endif // RANKC_INITALL_H
