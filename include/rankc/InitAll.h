//===- InitAll.h - everything a rankc tool registers ------------*- C++ -*-===//

#ifndef RANKC_INITALL_H
#define RANKC_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace rankc {
/// The comm dialect, upstream dialects and their interface extensions.
void registerAllDialects(mlir::DialectRegistry &registry);

/// func.call's bufferization model with callees looked up in cached symbol
/// tables (CallBufferization.cpp says why); registerAllDialects attaches it
/// ahead of upstream's.
void registerCallBufferization(mlir::DialectRegistry &registry);
} // namespace rankc

#endif // RANKC_INITALL_H
