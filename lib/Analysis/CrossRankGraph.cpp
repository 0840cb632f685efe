//===- CrossRankGraph.cpp - all ranks' communication, verified ------------===//
//
// Linear in the instantiated program (every rank's copy of its program's
// communication events) plus the program-level graph; the instantiated
// happens-before graph is only built to explain a cycle.
//
//===----------------------------------------------------------------------===//

#include "CrossRankBuilder.h"
#include "rankc/Support/ProcessGrid.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <tuple>

using namespace mlir;

namespace rankc {

std::string tagText(const TagValue &tag) {
  if (auto *i = std::get_if<int64_t>(&tag))
    return std::to_string(*i);
  return "\"" + std::get<std::string>(tag) + "\"";
}

int64_t GridPeer::resolve(int64_t rank) const {
  return gridPeer(grid, shift, [&](size_t i) { return periodic[i]; }, rank);
}

uint32_t CrossRankGraph::collectivePosition(const TagValue &tag) const {
  for (size_t i = 0; i < collectiveTags.size(); ++i)
    if (collectiveTags[i] == tag)
      return collectivePositions[i];
  return ~0u;
}

int32_t CrossRankGraph::mpiTag(const TagValue &tag) const {
  auto it = std::lower_bound(tags.begin(), tags.end(), tag);
  if (it == tags.end() || *it != tag)
    return -1;
  return int32_t(it - tags.begin());
}


LogicalResult CrossRankBuilder::assignRanks() {
  programOfRank.assign(ws, -1);
  for (uint32_t p = 0; p < programs.size(); ++p) {
    const ProgramGraph &g = programs[p];
    auto assign = [&](int64_t r) -> LogicalResult {
      if (r < 0 || r >= ws || programOfRank[r] >= 0)
        return emitError(UnknownLoc::get(ctx))
               << "program " << g.ranksText << " runs on rank " << r
               << ", which is outside the world or in another program";
      programOfRank[r] = p;
      return success();
    };
    if (g.allRanks) {
      for (int64_t r = 0; r < ws; ++r)
        if (failed(assign(r)))
          return failure();
    } else {
      for (int64_t r : g.ranks)
        if (failed(assign(r)))
          return failure();
    }
  }
  for (int64_t r = 0; r < ws; ++r)
    if (programOfRank[r] < 0)
      return emitError(UnknownLoc::get(ctx))
             << "rank " << r << " belongs to no program";
  return success();
}

void CrossRankBuilder::internTags() {
  llvm::DenseMap<int64_t, uint32_t> ints;
  llvm::StringMap<uint32_t> strings;
  tagIds.resize(programs.size());
  for (uint32_t p = 0; p < programs.size(); ++p) {
    for (const CommEvent &e : programs[p].events) {
      uint32_t next = tagOfId.size();
      bool inserted;
      uint32_t id;
      if (auto *i = std::get_if<int64_t>(&e.tag)) {
        auto [it, ins] = ints.try_emplace(*i, next);
        id = it->second, inserted = ins;
      } else {
        auto [it, ins] = strings.try_emplace(std::get<std::string>(e.tag), next);
        id = it->second, inserted = ins;
      }
      if (inserted)
        tagOfId.push_back(e.tag);
      tagIds[p].push_back(id);
    }
  }
  graph.tags = tagOfId;
  std::sort(graph.tags.begin(), graph.tags.end());
}

FailureOr<int64_t> CrossRankBuilder::resolvePeer(const Instance &i) {
  const CommEvent &e = eventOf(i);
  if (e.grid) // -1: no peer (MPI_PROC_NULL), the message does nothing
    return e.grid->resolve(i.rank);
  if (e.relative)
    return ((e.peer % ws) + ws + i.rank) % ws;
  if (e.peer < 0 || e.peer >= ws)
    return errorAt(i) << "rank " << i.rank << ": peer rank " << e.peer
                      << " of " << nameOf(i) << " is outside [0, " << ws
                      << ")";
  return e.peer;
}

/// One program on every rank whose peers are all offsets: every rank's
/// messages are rank 0's shifted by the rank (mod the world), so checking
/// rank 0 checks them all, in time and memory of one rank's events rather
/// than the world's (2^24 ranks took gigabytes).
static bool isTranslationInvariant(ArrayRef<ProgramGraph> programs) {
  return programs.size() == 1 && programs[0].allRanks &&
         llvm::all_of(programs[0].events, [](const CommEvent &e) {
           return e.kind == EventKind::AllReduce || e.relative;
         });
}

LogicalResult CrossRankBuilder::matchMessages() {
  // The ranks whose sends and receives are instantiated: all of them, or
  // rank 0 alone when it stands for every rank. In both cases the first
  // problem found is the one a full check would report first (rank 0's:
  // every phase starts there, and in the invariant case every rank has the
  // problems rank 0 has).
  invariant = isTranslationInvariant(programs);
  if (!invariant && isOnOneGrid(programs))
    return matchGridMessages(); // by classes of ranks
  int32_t checked = invariant ? 1 : ws;
  llvm::DenseMap<Key, uint32_t> sendIndex;
  std::vector<Instance> sends;
  std::vector<bool> sendMatched;
  for (int32_t r = 0; r < checked; ++r) {
    uint32_t p = programOfRank[r];
    for (uint32_t e = 0; e < programs[p].events.size(); ++e) {
      if (programs[p].events[e].kind != EventKind::Send)
        continue;
      Instance inst{r, p, e};
      FailureOr<int64_t> dst = resolvePeer(inst);
      if (failed(dst))
        return failure();
      if (*dst < 0)
        continue; // a grid's edge: nobody to send to
      auto [it, inserted] =
          sendIndex.try_emplace(Key{r, *dst, tagIds[p][e]}, sends.size());
      if (!inserted)
        return errorAt(inst) << "rank " << r << " sends to rank " << *dst
                             << " with tag " << tagText(eventOf(inst).tag)
                             << " twice: nodes " << nameOf(sends[it->second])
                             << " and " << nameOf(inst);
      sends.push_back(inst);
    }
  }
  sendMatched.assign(sends.size(), false);
  llvm::DenseMap<Key, Instance> recvSeen;
  for (int32_t r = 0; r < checked; ++r) {
    uint32_t p = programOfRank[r];
    for (uint32_t e = 0; e < programs[p].events.size(); ++e) {
      if (programs[p].events[e].kind != EventKind::Recv)
        continue;
      Instance inst{r, p, e};
      FailureOr<int64_t> src = resolvePeer(inst);
      if (failed(src))
        return failure();
      if (*src < 0)
        continue; // a grid's edge: the receive is its fill
      Key key{*src, r, tagIds[p][e]};
      auto [seen, inserted] = recvSeen.try_emplace(key, inst);
      const CommEvent &recv = eventOf(inst);
      if (!inserted)
        return errorAt(inst) << "rank " << r << " receives from rank " << *src
                             << " with tag " << tagText(recv.tag)
                             << " twice: nodes " << nameOf(seen->second)
                             << " and " << nameOf(inst);
      // Invariant: rank src's send to rank 0 is rank 0's send to -src.
      Key sendKey =
          invariant ? Key{0, (ws - *src) % ws, std::get<2>(key)} : key;
      auto it = sendIndex.find(sendKey);
      if (it == sendIndex.end())
        return errorAt(inst)
               << "rank " << r << " receives " << nameOf(inst) << " from rank "
               << *src << " with tag " << tagText(recv.tag) << ", but rank "
               << *src << " (program " << programs[programOfRank[*src]].ranksText
               << ") sends nothing to rank " << r << " with that tag";
      Instance send = sends[it->second];
      send.rank = int32_t(*src);
      if (eventOf(send).type != recv.type)
        return errorAt(inst) << "rank " << send.rank << " sends "
                             << eventOf(send).type << " (" << nameOf(send)
                             << ") to rank " << r << " with tag "
                             << tagText(recv.tag) << ", but rank " << r
                             << " receives " << recv.type << " ("
                             << nameOf(inst) << ")";
      sendMatched[it->second] = true;
      matched.push_back({send, inst});
    }
  }
  for (size_t i = 0; i < sends.size(); ++i) {
    if (sendMatched[i])
      continue;
    const Instance &s = sends[i];
    int64_t dst = *resolvePeer(s);
    return errorAt(s) << "rank " << s.rank << " sends " << nameOf(s)
                      << " to rank " << dst << " with tag "
                      << tagText(eventOf(s).tag) << ", but rank " << dst
                      << " (program " << programs[programOfRank[dst]].ranksText
                      << ") has no matching receive";
  }
  graph.messages = matched.size() * (invariant ? size_t(ws) : 1);
  return success();
}

// Collectives are checked per program (every rank of a program has the same
// events): at most one allreduce per tag and program, every program has
// each tag, and all agree on type and reduction.
LogicalResult CrossRankBuilder::matchCollectives() {
  struct First {
    uint32_t program, event;
    uint32_t programsWithIt;
  };
  std::vector<First> firsts;
  for (uint32_t p = 0; p < programs.size(); ++p) {
    llvm::DenseMap<uint32_t, uint32_t> seenHere;
    for (uint32_t e = 0; e < programs[p].events.size(); ++e) {
      const CommEvent &ev = programs[p].events[e];
      if (ev.kind != EventKind::AllReduce)
        continue;
      Instance inst{-1, p, e};
      uint32_t tag = tagIds[p][e];
      auto [here, fresh] = seenHere.try_emplace(tag, e);
      if (!fresh)
        return errorAt(inst) << "program " << programs[p].ranksText
                             << " has two allreduces with tag "
                             << tagText(ev.tag) << ": nodes "
                             << nodeName(p, programs[p].events[here->second].node)
                             << " and " << nameOf(inst);
      auto [it, isNew] = collectiveOfTag.try_emplace(tag, firsts.size());
      if (isNew) {
        firsts.push_back({p, e, 0});
        collectiveTagIds.push_back(tag);
      }
      First &first = firsts[it->second];
      ++first.programsWithIt;
      const CommEvent &f = programs[first.program].events[first.event];
      if (f.type != ev.type || f.reduce != ev.reduce)
        return errorAt(inst)
               << "allreduce with tag " << tagText(ev.tag) << ": program "
               << programs[first.program].ranksText << " reduces " << f.type
               << " by " << f.reduce << " ("
               << nodeName(first.program, f.node) << ") but program "
               << programs[p].ranksText << " reduces " << ev.type << " by "
               << ev.reduce << " (" << nameOf(inst) << ")";
    }
  }
  for (size_t c = 0; c < firsts.size(); ++c) {
    if (firsts[c].programsWithIt == programs.size())
      continue;
    uint32_t tag = collectiveTagIds[c];
    for (int32_t r = 0; r < ws; ++r) {
      uint32_t p = programOfRank[r];
      if (llvm::is_contained(tagIds[p], tag) &&
          llvm::any_of(programs[p].events, [&](const CommEvent &e) {
            return e.kind == EventKind::AllReduce && e.tag == tagOfId[tag];
          }))
        continue;
      Instance inst{-1, firsts[c].program, firsts[c].event};
      return errorAt(inst) << "allreduce with tag " << tagText(tagOfId[tag])
                           << " (" << nameOf(inst) << " on program "
                           << programs[firsts[c].program].ranksText
                           << "): rank " << r << " (program "
                           << programs[p].ranksText
                           << ") has no allreduce with this tag; every rank "
                              "needs exactly one";
    }
  }
  for (uint32_t t : collectiveTagIds)
    graph.collectiveTags.push_back(tagOfId[t]);
  return success();
}

/// Kahn's algorithm over `numNodes` nodes and `edges`, FIFO from the sources
/// in index order (deterministic). Returns the nodes in order; fewer than
/// numNodes when there is a cycle.
static std::vector<uint32_t>
topologicalOrder(uint32_t numNodes,
                 const std::vector<std::pair<uint32_t, uint32_t>> &edges,
                 std::vector<uint32_t> &succBegin,
                 std::vector<uint32_t> &succ) {
  succBegin.assign(numNodes + 1, 0);
  std::vector<uint32_t> indegree(numNodes, 0);
  for (auto [from, to] : edges) {
    ++succBegin[from + 1];
    ++indegree[to];
  }
  for (uint32_t i = 0; i < numNodes; ++i)
    succBegin[i + 1] += succBegin[i];
  succ.resize(edges.size());
  std::vector<uint32_t> fill(succBegin.begin(), succBegin.end() - 1);
  for (auto [from, to] : edges)
    succ[fill[from]++] = to;
  std::vector<uint32_t> order;
  order.reserve(numNodes);
  for (uint32_t i = 0; i < numNodes; ++i)
    if (indegree[i] == 0)
      order.push_back(i);
  for (size_t head = 0; head < order.size(); ++head) {
    uint32_t n = order[head];
    for (uint32_t k = succBegin[n]; k < succBegin[n + 1]; ++k)
      if (--indegree[succ[k]] == 0)
        order.push_back(succ[k]);
  }
  return order;
}

// Collectives that must start after another one (gradient buckets): an
// edge between the two collective nodes.
void CrossRankBuilder::addCollectiveOrder(
    uint32_t collectiveBase,
    std::vector<std::pair<uint32_t, uint32_t>> &edges) {
  for (uint32_t p = 0; p < programs.size(); ++p)
    for (uint32_t e = 0; e < programs[p].events.size(); ++e) {
      const CommEvent &ev = programs[p].events[e];
      if (ev.kind != EventKind::AllReduce || !ev.startsAfter)
        continue;
      for (uint32_t c = 0; c < collectiveTagIds.size(); ++c)
        if (tagOfId[collectiveTagIds[c]] == *ev.startsAfter)
          edges.push_back({collectiveBase + c,
                           collectiveBase +
                               collectiveOfTag.lookup(tagIds[p][e])});
    }
}

LogicalResult CrossRankBuilder::orderProgramLevel() {
  // Program-level nodes: every program's nodes, then one per collective.
  uint32_t total = 0;
  for (const ProgramGraph &g : programs) {
    graph.programBase.push_back(total);
    total += g.numNodes();
  }
  uint32_t collectiveBase = total;
  total += collectiveTagIds.size();
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  for (uint32_t p = 0; p < programs.size(); ++p) {
    const ProgramGraph &g = programs[p];
    uint32_t base = graph.programBase[p];
    for (uint32_t n = 0; n < g.numNodes(); ++n) {
      int32_t e = g.eventOf[n];
      bool collective = e >= 0 && g.events[e].kind == EventKind::AllReduce;
      uint32_t target = base + n;
      if (collective) {
        uint32_t c = collectiveBase + collectiveOfTag[tagIds[p][e]];
        edges.push_back({c, base + n});
        target = c; // every rank's input flows into the one collective
      }
      for (uint32_t a : g.argsOf(n))
        edges.push_back({base + a, target});
    }
  }
  addCollectiveOrder(collectiveBase, edges);
  llvm::DenseSet<std::pair<uint32_t, uint32_t>> crossEdges;
  for (auto &[s, r] : matched) {
    std::pair<uint32_t, uint32_t> edge{
        graph.programBase[s.program] + eventOf(s).node,
        graph.programBase[r.program] + eventOf(r).node};
    if (crossEdges.insert(edge).second) {
      edges.push_back(edge);
      graph.programLinks.push_back(
          {s.program, eventOf(s).node, r.program, eventOf(r).node});
    }
  }
  std::vector<uint32_t> succBegin, succ;
  std::vector<uint32_t> order =
      topologicalOrder(total, edges, succBegin, succ);
  if (order.size() != total)
    return explainCycle();
  graph.positions.assign(total, 0);
  for (uint32_t i = 0; i < total; ++i)
    graph.positions[order[i]] = i;
  for (uint32_t c = 0; c < collectiveTagIds.size(); ++c)
    graph.collectivePositions.push_back(graph.positions[collectiveBase + c]);
  graph.positions.resize(collectiveBase);
  return success();
}

// Error path: instantiate every rank's program and find a cycle of waits.
LogicalResult CrossRankBuilder::explainCycle() {
  std::vector<uint32_t> rankBase(ws + 1, 0);
  for (int32_t r = 0; r < ws; ++r)
    rankBase[r + 1] = rankBase[r] + programs[programOfRank[r]].numNodes();
  uint32_t collectiveBase = rankBase[ws];
  uint32_t total = collectiveBase + collectiveTagIds.size();
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  for (int32_t r = 0; r < ws; ++r) {
    uint32_t p = programOfRank[r];
    const ProgramGraph &g = programs[p];
    for (uint32_t n = 0; n < g.numNodes(); ++n) {
      int32_t e = g.eventOf[n];
      uint32_t target = rankBase[r] + n;
      if (e >= 0 && g.events[e].kind == EventKind::AllReduce) {
        uint32_t c = collectiveBase + collectiveOfTag[tagIds[p][e]];
        edges.push_back({c, target});
        target = c;
      }
      for (uint32_t a : g.argsOf(n))
        edges.push_back({rankBase[r] + a, target});
    }
  }
  for (int32_t shift = 0; shift < (invariant ? ws : 1); ++shift)
    for (auto &[s, r] : matched)
      edges.push_back({rankBase[(s.rank + shift) % ws] + eventOf(s).node,
                       rankBase[(r.rank + shift) % ws] + eventOf(r).node});
  addCollectiveOrder(collectiveBase, edges);
  std::vector<uint32_t> succBegin, succ;
  std::vector<uint32_t> order = topologicalOrder(total, edges, succBegin, succ);
  if (order.size() == total) {
    // Acyclic once instantiated: only the folding of a multi-rank program
    // into one schedule fails.
    return emitError(UnknownLoc::get(ctx))
           << "the ranks of one program would need different orders of "
              "communication (absolute peers in a program on several ranks); "
              "give those ranks programs of their own";
  }
  // Every node left over has a predecessor left over: walk back until a node
  // repeats; the walk from there is a cycle.
  std::vector<bool> done(total, false);
  for (uint32_t n : order)
    done[n] = true;
  std::vector<std::vector<uint32_t>> pred(total);
  for (auto [from, to] : edges)
    if (!done[from] && !done[to])
      pred[to].push_back(from);
  uint32_t start = 0;
  while (done[start])
    ++start;
  std::vector<int64_t> seenAt(total, -1);
  std::vector<uint32_t> walk;
  uint32_t n = start;
  while (seenAt[n] < 0) {
    seenAt[n] = walk.size();
    walk.push_back(n);
    n = pred[n].front();
  }
  std::vector<uint32_t> cycle(walk.begin() + seenAt[n], walk.end());
  std::reverse(cycle.begin(), cycle.end()); // forward: each waits on the last
  // Start the printed cycle at its first communication event.
  auto describe = [&](uint32_t node, Location *loc) -> std::string {
    if (node >= collectiveBase)
      return "(all ranks, allreduce tag " +
             tagText(tagOfId[collectiveTagIds[node - collectiveBase]]) + ")";
    int32_t r = std::upper_bound(rankBase.begin(), rankBase.end(), node) -
                rankBase.begin() - 1;
    const ProgramGraph &g = programs[programOfRank[r]];
    uint32_t local = node - rankBase[r];
    if (loc)
      *loc = g.location(local);
    return "(rank " + std::to_string(r) + ", '" + g.nodeId(local) + "', " +
           g.opName(local) + ")";
  };
  auto isComm = [&](uint32_t node) {
    if (node >= collectiveBase)
      return true;
    int32_t r = std::upper_bound(rankBase.begin(), rankBase.end(), node) -
                rankBase.begin() - 1;
    return programs[programOfRank[r]].eventOf[node - rankBase[r]] >= 0;
  };
  auto first = llvm::find_if(cycle, isComm);
  if (first != cycle.end())
    std::rotate(cycle.begin(), first, cycle.end());
  // The diagnostic sits at the first op of the cycle that has a location.
  Location loc = UnknownLoc::get(ctx);
  for (uint32_t n : cycle)
    if (n < collectiveBase) {
      describe(n, &loc);
      break;
    }
  std::string path;
  const size_t kShown = 64;
  for (size_t i = 0; i < cycle.size(); ++i) {
    if (cycle.size() > kShown && i == kShown / 2) {
      path += "... (" + std::to_string(cycle.size() - kShown) + " more) -> ";
      i = cycle.size() - kShown / 2;
    }
    path += describe(cycle[i], nullptr) + " -> ";
  }
  path += describe(cycle.front(), nullptr);
  return emitError(loc) << "deadlock: these operations wait for each other "
                           "in a cycle: "
                        << path;
}

FailureOr<CrossRankGraph> CrossRankBuilder::run() {
  if (failed(assignRanks()))
    return failure();
  internTags();
  if (failed(matchMessages()) || failed(matchCollectives()) ||
      failed(orderProgramLevel()))
    return failure();
  return std::move(graph);
}

FailureOr<CrossRankGraph> CrossRankGraph::build(MLIRContext *ctx,
                                                int64_t worldSize,
                                                ArrayRef<ProgramGraph> programs) {
  return CrossRankBuilder(ctx, worldSize, programs).run();
}

} // namespace rankc
