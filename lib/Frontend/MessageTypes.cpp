//===- MessageTypes.cpp - a message's type across ranks, on error ---------===//
//
// Only on the checker's error path: every rank of every program is visited
// (an "all" program once per rank), within a bound on the work so that an
// error in a document of 2^24 ranks is still reported at once.
//
//===----------------------------------------------------------------------===//

#include "MessageTypes.h"

#include "rankc/Frontend/DagDiagnostics.h"

#include "mlir/IR/Diagnostics.h"

#include <map>
#include <tuple>

namespace rankc::dag {

namespace {

struct Sent {
  const Program *program;
  const Node *node;
  std::string type;
};

std::string tagKey(const Tag &tag) {
  if (auto *i = std::get_if<int64_t>(&tag))
    return std::to_string(*i);
  return "\"" + std::get<std::string>(tag) + "\"";
}

/// The ranks a program runs on (every rank for "all").
std::vector<int64_t> ranksOf(const Program &p, int64_t worldSize) {
  if (!p.allRanks)
    return p.ranks;
  std::vector<int64_t> all(worldSize);
  for (int64_t r = 0; r < worldSize; ++r)
    all[r] = r;
  return all;
}

std::optional<int64_t> resolve(const Peer &peer, int64_t rank, int64_t ws) {
  std::optional<int64_t> r = peer.resolve(rank, ws);
  if (!r || *r < 0 || *r >= ws)
    return std::nullopt;
  return r;
}

} // namespace

bool reportMessageTypeMismatch(mlir::MLIRContext *ctx, const Document &doc,
                               llvm::ArrayRef<std::vector<bool>> inferred) {
  const int64_t ws = doc.worldSize;
  // The bound: (ranks x messages) visits of both kinds.
  constexpr size_t kMaxVisits = size_t(1) << 22;
  size_t visits = 0;
  for (const Program &p : doc.programs)
    for (const Node &n : p.nodes)
      if (n.op == Op::Send || n.op == Op::Recv)
        visits += p.allRanks ? size_t(ws) : p.ranks.size();
  if (visits > kMaxVisits)
    return false;

  using Key = std::tuple<int64_t, int64_t, std::string>; // src, dst, tag
  std::map<Key, Sent> sends;
  for (size_t pi = 0; pi < doc.programs.size(); ++pi) {
    const Program &p = doc.programs[pi];
    std::vector<int64_t> ranks = ranksOf(p, ws);
    for (size_t i = 0; i < inferred[pi].size(); ++i) {
      const Node &n = p.nodes[i];
      if (!inferred[pi][i] || n.op != Op::Send || !n.attrs)
        continue;
      std::string type = typeText(n.outShape, dtypeName(n.outDType));
      for (int64_t r : ranks)
        if (auto dst = resolve(n.rare().peer, r, ws))
          sends.try_emplace(Key{r, *dst, tagKey(n.rare().tag)},
                            Sent{&p, &n, type});
    }
  }
  for (const Program &p : doc.programs) {
    std::vector<int64_t> ranks = ranksOf(p, ws);
    for (const Node &n : p.nodes) {
      // A receive's type is what it declares, checked or not.
      if (n.op != Op::Recv || !n.attrs || !n.has(K_shape) || !n.has(K_dtype))
        continue;
      std::string type = typeText(n.shape, dtypeName(n.dtype));
      for (int64_t r : ranks) {
        auto src = resolve(n.rare().peer, r, ws);
        if (!src)
          continue;
        auto it = sends.find(Key{*src, r, tagKey(n.rare().tag)});
        if (it == sends.end() || it->second.type == type)
          continue;
        mlir::emitError(makeLoc(ctx, doc.file, n.pos, &p, n.id))
            << "rank " << *src << " sends " << it->second.type << " ('"
            << it->second.node->id << "') to rank " << r << " with tag "
            << tagKey(n.rare().tag) << ", but rank " << r << " receives "
            << type << " ('" << n.id << "')";
        return true;
      }
    }
  }
  return false;
}

} // namespace rankc::dag
