//===- DagLocations.cpp - reading a node's location ----------------------===//

#include "rankc/Support/DagLocations.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace rankc::dag {

/// The {node, op, program} dictionary of a DAG location, or null.
static DictionaryAttr dagMetadata(Location loc) {
  DictionaryAttr found;
  loc->walk([&](Location l) {
    if (auto fused = dyn_cast<FusedLoc>(l))
      found = dyn_cast_or_null<DictionaryAttr>(fused.getMetadata());
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found;
}

std::string dagNodeId(Location loc) {
  if (DictionaryAttr meta = dagMetadata(loc))
    if (auto n = meta.getAs<StringAttr>("node"))
      return n.str();
  return "";
}

std::string dagOpName(Location loc) {
  if (DictionaryAttr meta = dagMetadata(loc))
    if (auto n = meta.getAs<StringAttr>("op"))
      return n.str();
  return "";
}

std::string describeDagLoc(Location loc) {
  std::string out;
  loc->walk([&](Location l) {
    auto fused = dyn_cast<FusedLoc>(l);
    auto meta = fused ? dyn_cast_or_null<DictionaryAttr>(fused.getMetadata())
                      : DictionaryAttr();
    if (!meta)
      return WalkResult::advance();
    if (auto p = meta.getAs<StringAttr>("program"))
      out = "program " + p.getValue().str();
    if (auto n = meta.getAs<StringAttr>("node"))
      out += (out.empty() ? "node '" : ", node '") + n.getValue().str() + "'";
    return WalkResult::interrupt();
  });
  return out;
}

} // namespace rankc::dag
