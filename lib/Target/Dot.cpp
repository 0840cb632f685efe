//===- Dot.cpp - a Graphviz drawing of a partitioned module ---------------===//
//
// One cluster per program (its ranks in the label); inside, the schedule in
// order: receives (ellipses), parts (boxes, with their DAG node counts),
// sends (arrows), allreduces (diamonds), joined by dashed edges. Solid edges
// join each send to the receive that matches it, labelled with the tag.
//
//===----------------------------------------------------------------------===//

#include "rankc/Analysis/CrossRankAnalysis.h"
#include "rankc/Dialect/Comm/Comm.h"
#include "rankc/Target/Plan.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace rankc {

static std::string tagLabel(Operation *op) {
  std::string tag = comm::tagToString(op->getAttr("tag"));
  std::string out;
  for (char c : tag) // escape for a DOT string
    out += c == '"' ? std::string("\\\"") : std::string(1, c);
  return out;
}

LogicalResult writeDot(ModuleOp module, llvm::raw_ostream &os) {
  CrossRankAnalysis analysis(module);
  if (failed(analysis.graph))
    return failure();
  llvm::DenseMap<Operation *, std::string> nodeName;
  SymbolTable symbols(module);
  os << "digraph rankc {\n  rankdir=TB;\n  compound=true;\n"
     << "  node [fontname=\"Helvetica\", fontsize=10];\n";
  for (auto [p, fn] : llvm::enumerate(analysis.programs)) {
    os << "  subgraph cluster_" << p << " {\n    label=\"program "
       << analysis.graphs[p].ranksText << " (@" << fn.getName() << ")\";\n";
    std::string previous;
    unsigned step = 0;
    // A copy: a lambda may not capture a structured binding before C++20.
    size_t program = p;
    auto emit = [&](Operation *op, const std::string &label,
                    StringRef shape) {
      std::string name =
          "p" + std::to_string(program) + "_" + std::to_string(step++);
      if (op)
        nodeName[op] = name;
      os << "    " << name << " [label=\"" << label << "\", shape=" << shape
         << "];\n";
      if (!previous.empty())
        os << "    " << previous << " -> " << name << " [style=dashed];\n";
      previous = name;
    };
    for (auto [k, part] : llvm::enumerate(readSchedule(fn, symbols))) {
      for (Operation *w : part.waits)
        emit(w,
             (isa<comm::RecvOp>(w) ? "recv " : "allreduce ") + tagLabel(w),
             isa<comm::RecvOp>(w) ? "ellipse" : "diamond");
      if (part.call)
        emit(part.call,
             "part " + std::to_string(k) + "\\n" + std::to_string(part.ops) +
                 " ops",
             "box");
      for (Operation *s : part.sends)
        emit(s, "send " + tagLabel(s), "cds");
    }
    if (!step)
      emit(nullptr, "no work", "plaintext");
    os << "  }\n";
  }
  // Top-level ops of each program, indexed as the analysis numbers them.
  std::vector<std::vector<Operation *>> opsOf;
  for (func::FuncOp fn : analysis.programs) {
    opsOf.emplace_back();
    for (Operation &op : fn.getBody().front().without_terminator())
      opsOf.back().push_back(&op);
  }
  for (const CrossRankGraph::Link &l : analysis.graph->links()) {
    Operation *send = opsOf[l.sendProgram][l.sendNode];
    Operation *recv = opsOf[l.recvProgram][l.recvNode];
    if (nodeName.count(send) && nodeName.count(recv))
      os << "  " << nodeName[send] << " -> " << nodeName[recv]
         << " [label=\"" << tagLabel(send) << "\", penwidth=2];\n";
  }
  os << "}\n";
  return success();
}

} // namespace rankc
