//===- DagDiagnostics.cpp - locations of DAG documents --------------------===//

#include "rankc/Frontend/DagDiagnostics.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace rankc::dag {

Location makeLoc(MLIRContext *ctx, StringRef file, Pos pos,
                 const Program *program, StringRef nodeId, StringRef op) {
  Location fileLoc = FileLineColLoc::get(ctx, file, pos.line, pos.col);
  if (!program)
    return fileLoc;
  Builder b(ctx);
  SmallVector<NamedAttribute, 2> meta;
  if (!nodeId.empty())
    meta.push_back(b.getNamedAttr("node", b.getStringAttr(nodeId)));
  if (!op.empty())
    meta.push_back(b.getNamedAttr("op", b.getStringAttr(op)));
  meta.push_back(b.getNamedAttr("program", b.getStringAttr(program->ranksText())));
  return FusedLoc::get(ctx, {fileLoc}, b.getDictionaryAttr(meta));
}

NodeLocations::NodeLocations(MLIRContext *ctx, StringRef file,
                             const Program &program)
    : ctx(ctx), file(StringAttr::get(ctx, file)),
      program(StringAttr::get(ctx, program.ranksText())),
      nodeKey(StringAttr::get(ctx, "node")), opKey(StringAttr::get(ctx, "op")),
      programKey(StringAttr::get(ctx, "program")) {}

Location NodeLocations::get(Pos pos, StringRef nodeId, StringRef op) {
  Location fileLoc = FileLineColLoc::get(file, pos.line, pos.col);
  // In makeLoc's order, which is the keys' sorted order.
  SmallVector<NamedAttribute, 3> meta;
  if (!nodeId.empty())
    meta.emplace_back(nodeKey, StringAttr::get(ctx, nodeId));
  if (!op.empty()) {
    StringAttr &name = ops[op];
    if (!name)
      name = StringAttr::get(ctx, op);
    meta.emplace_back(opKey, name);
  }
  meta.emplace_back(programKey, program);
  return FusedLoc::get(ctx, {fileLoc},
                       DictionaryAttr::getWithSorted(ctx, meta));
}

} // namespace rankc::dag
