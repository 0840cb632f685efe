//===- InitAll.h - everything a rankc tool registers ------------*- C++ -*-===//

#ifndef RANKC_INITALL_H
#define RANKC_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace rankc {
/// The comm dialect and the upstream dialects that rankc modules use.
void registerAllDialects(mlir::DialectRegistry &registry);
} // namespace rankc

#endif // RANKC_INITALL_H
