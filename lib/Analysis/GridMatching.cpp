//===- GridMatching.cpp - messages on a process grid, by classes of ranks ===//
//
// One program on every rank whose messages all go to grid peers of one grid
// shape (dag-format.md v3): a rank's messages depend on its coordinates only
// through which shifts stay inside the grid. On an axis of extent P whose
// shifts reach at most m, the coordinates m .. P-1-m behave alike (every
// shift stays inside), so checking coordinates 0 .. m-1, one inside and
// P-m .. P-1 per axis checks every rank: every peer relation below is the
// same in every rank of a class (a send's matching receive is the event with
// the reverse shift and its tag, wherever both ranks exist). The world's
// 2^24 ranks of a 2-D decomposition are then a few dozen checked ranks, as
// the translation-invariant case of offset peers is one.
//
//===----------------------------------------------------------------------===//

#include "CrossRankBuilder.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>

using namespace mlir;

namespace rankc {

/// The first grid peer of a program on one grid, or null.
static const GridPeer *oneGrid(ArrayRef<ProgramGraph> programs) {
  if (programs.size() != 1 || !programs[0].allRanks)
    return nullptr;
  const GridPeer *first = nullptr;
  for (const CommEvent &e : programs[0].events) {
    if (e.kind == EventKind::AllReduce)
      continue;
    if (!e.grid || (first && e.grid->grid != first->grid))
      return nullptr;
    first = first ? first : &*e.grid;
  }
  return first;
}

bool isOnOneGrid(ArrayRef<ProgramGraph> programs) {
  return oneGrid(programs) != nullptr;
}

namespace {

/// The ranks that stand for all, each with the number of ranks it stands
/// for.
std::vector<std::pair<int64_t, uint64_t>>
representatives(ArrayRef<ProgramGraph> programs) {
  const GridPeer *first = oneGrid(programs);
  // Per axis: the coordinates that stand for the others, with weights.
  size_t d = first->grid.size();
  std::vector<std::vector<std::pair<int64_t, uint64_t>>> axes(d);
  for (size_t i = 0; i < d; ++i) {
    int64_t p = first->grid[i], m = 0;
    for (const CommEvent &e : programs[0].events)
      if (e.grid)
        m = std::max(m, std::abs(e.grid->shift[i]));
    if (p <= 2 * m + 1) {
      for (int64_t c = 0; c < p; ++c)
        axes[i].push_back({c, 1});
      continue;
    }
    for (int64_t c = 0; c < m; ++c)
      axes[i].push_back({c, 1});
    axes[i].push_back({m, uint64_t(p - 2 * m)});
    for (int64_t c = p - m; c < p; ++c)
      axes[i].push_back({c, 1});
  }
  // Their product, as row-major ranks.
  std::vector<std::pair<int64_t, uint64_t>> ranks{{0, 1}};
  for (size_t i = 0; i < d; ++i) {
    std::vector<std::pair<int64_t, uint64_t>> next;
    for (auto [r, w] : ranks)
      for (auto [c, cw] : axes[i])
        next.push_back({r * first->grid[i] + c, w * cw});
    ranks.swap(next);
  }
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

} // namespace

LogicalResult CrossRankBuilder::matchGridMessages() {
  std::vector<std::pair<int64_t, uint64_t>> ranks =
      representatives(programs);
  const ProgramGraph &g = programs[0];
  // The events of each kind by tag (a tag has few).
  llvm::DenseMap<uint32_t, std::vector<uint32_t>> sendsOf, recvsOf;
  for (uint32_t e = 0; e < g.events.size(); ++e)
    if (g.events[e].kind != EventKind::AllReduce)
      (g.events[e].kind == EventKind::Send ? sendsOf : recvsOf)[tagIds[0][e]]
          .push_back(e);
  // The event of `kind` with `tag` on rank `at` whose peer is `peer`.
  auto find = [&](llvm::DenseMap<uint32_t, std::vector<uint32_t>> &of,
                  uint32_t tag, int64_t at, int64_t peer) -> int64_t {
    auto it = of.find(tag);
    if (it != of.end())
      for (uint32_t e : it->second)
        if (g.events[e].grid->resolve(at) == peer)
          return e;
    return -1;
  };
  size_t messages = 0;
  for (auto [rank, weight] : ranks) {
    int32_t r = int32_t(rank);
    llvm::DenseMap<std::pair<int64_t, uint32_t>, uint32_t> sent, received;
    for (uint32_t e = 0; e < g.events.size(); ++e) {
      const CommEvent &ev = g.events[e];
      if (ev.kind == EventKind::AllReduce)
        continue;
      Instance inst{r, 0, e};
      int64_t peer = ev.grid->resolve(r);
      if (peer < 0)
        continue; // a grid's edge: no message
      uint32_t tag = tagIds[0][e];
      bool send = ev.kind == EventKind::Send;
      auto [seen, fresh] = (send ? sent : received).try_emplace({peer, tag}, e);
      if (!fresh)
        return errorAt(inst) << "rank " << r << (send ? " sends to" : " receives from")
                             << " rank " << peer << " with tag "
                             << tagText(ev.tag) << " twice: nodes "
                             << nameOf(Instance{r, 0, seen->second}) << " and "
                             << nameOf(inst);
      int64_t other = find(send ? recvsOf : sendsOf, tag, peer, r);
      if (other < 0) {
        if (send)
          return errorAt(inst) << "rank " << r << " sends " << nameOf(inst)
                               << " to rank " << peer << " with tag "
                               << tagText(ev.tag) << ", but rank " << peer
                               << " (program all) has no matching receive";
        return errorAt(inst) << "rank " << r << " receives " << nameOf(inst)
                             << " from rank " << peer << " with tag "
                             << tagText(ev.tag) << ", but rank " << peer
                             << " (program all) sends nothing to rank " << r
                             << " with that tag";
      }
      if (send)
        continue; // checked from the receiving side below
      Instance from{int32_t(peer), 0, uint32_t(other)};
      if (eventOf(from).type != ev.type)
        return errorAt(inst) << "rank " << peer << " sends "
                             << eventOf(from).type << " (" << nameOf(from)
                             << ") to rank " << r << " with tag "
                             << tagText(ev.tag) << ", but rank " << r
                             << " receives " << ev.type << " (" << nameOf(inst)
                             << ")";
      matched.push_back({from, inst});
      messages += weight;
    }
  }
  graph.messages = messages;
  return success();
}

} // namespace rankc
