//===- DagProgramGraph.cpp - ProgramGraphs of a checked JSON document -----===//
//
// Lets `rankc check` verify across ranks straight from the checked document,
// without building MLIR (the import costs several times the analysis).
//
//===----------------------------------------------------------------------===//

#include "rankc/Frontend/DagProgramGraph.h"
#include "rankc/Frontend/DagDiagnostics.h"

namespace rankc {

std::vector<ProgramGraph> buildProgramGraphs(mlir::MLIRContext *ctx,
                                             const dag::Document &doc) {
  std::vector<ProgramGraph> graphs;
  graphs.reserve(doc.programs.size());
  for (const dag::Program &p : doc.programs) {
    ProgramGraph g;
    g.allRanks = p.allRanks;
    g.ranks = p.ranks;
    g.ranksText = p.ranksText();
    // Graph nodes are the document's nodes in the checker's topological
    // order; `original` maps back for names and locations.
    std::vector<uint32_t> position(p.nodes.size());
    for (uint32_t i = 0; i < p.order.size(); ++i)
      position[p.order[i]] = i;
    auto original = std::make_shared<std::vector<uint32_t>>(p.order);
    g.args.reserve(p.nodes.size() * 2);
    g.argBegin.reserve(p.nodes.size() + 1);
    g.eventOf.reserve(p.nodes.size());
    llvm::SmallVector<uint32_t, 4> args;
    for (uint32_t i : p.order) {
      const dag::Node &n = p.nodes[i];
      args.clear();
      for (uint32_t a : n.args)
        args.push_back(position[a]);
      uint32_t node = g.addNode(args);
      if (dag::opClass(n.op) != dag::OpClass::Comm)
        continue;
      CommEvent e;
      e.node = node;
      e.kind = n.op == dag::Op::Send   ? EventKind::Send
               : n.op == dag::Op::Recv ? EventKind::Recv
                                       : EventKind::AllReduce;
      const dag::Peer &peer = n.rare().peer;
      e.peer = peer.value;
      e.relative = peer.relative;
      if (peer.isGrid()) {
        e.grid.emplace();
        e.grid->grid.assign(peer.grid.begin(), peer.grid.end());
        e.grid->shift.assign(peer.shift.begin(), peer.shift.end());
        e.grid->periodic.assign(peer.periodic.begin(), peer.periodic.end());
      }
      if (auto *t = std::get_if<int64_t>(&n.rare().tag))
        e.tag = *t;
      else
        e.tag = std::get<std::string>(n.rare().tag);
      e.type = typeText(n.outShape, dag::dtypeName(n.outDType));
      if (n.op == dag::Op::AllReduce) {
        constexpr const char *names[] = {"sum", "prod", "max", "min", "mean"};
        e.reduce = names[unsigned(n.reduce)];
      }
      g.addEvent(std::move(e));
    }
    const dag::Program *program = &p;
    std::string file = doc.file;
    g.nodeId = [program, original](uint32_t n) {
      return program->nodes[(*original)[n]].id;
    };
    g.opName = [program, original](uint32_t n) -> std::string {
      return dag::opName(program->nodes[(*original)[n]].op);
    };
    g.location = [ctx, program, original, file](uint32_t n) {
      const dag::Node &node = program->nodes[(*original)[n]];
      return dag::makeLoc(ctx, file, node.pos, program, node.id,
                          dag::opName(node.op));
    };
    graphs.push_back(std::move(g));
  }
  return graphs;
}

} // namespace rankc
