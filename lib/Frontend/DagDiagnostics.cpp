//===- DagDiagnostics.cpp - locations of DAG documents --------------------===//

#include "rankc/Frontend/DagDiagnostics.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace rankc::dag {

Location makeLoc(MLIRContext *ctx, StringRef file, Pos pos,
                 const Program *program, StringRef nodeId) {
  Location fileLoc = FileLineColLoc::get(ctx, file, pos.line, pos.col);
  if (!program)
    return fileLoc;
  Builder b(ctx);
  SmallVector<NamedAttribute, 2> meta;
  if (!nodeId.empty())
    meta.push_back(b.getNamedAttr("node", b.getStringAttr(nodeId)));
  meta.push_back(b.getNamedAttr("program", b.getStringAttr(program->ranksText())));
  return FusedLoc::get(ctx, {fileLoc}, b.getDictionaryAttr(meta));
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
