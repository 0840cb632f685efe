//===- DagLocations.h - reading a node's location --------------*- C++ -*-===//
//
// Every layer names the DAG node an error or event is about. The frontend
// writes a node's location as a FileLineColLoc fused with a {node, op,
// program} dictionary (rankc/Frontend/DagDiagnostics.h); these read it back,
// so that passes, backends and the runtime's manifest can name nodes
// without depending on the frontend.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_SUPPORT_DAGLOCATIONS_H
#define RANKC_SUPPORT_DAGLOCATIONS_H

#include "mlir/IR/Location.h"

#include <string>

namespace rankc::dag {

/// The DAG node id and op of a location, or "" when it names none.
std::string dagNodeId(mlir::Location loc);
std::string dagOpName(mlir::Location loc);

/// The "program [0], node 'x'" part of a location, or "" when it has none.
std::string describeDagLoc(mlir::Location loc);

} // namespace rankc::dag

#endif // RANKC_SUPPORT_DAGLOCATIONS_H
