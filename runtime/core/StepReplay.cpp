//===- StepReplay.cpp - run a step, or replay its recording --------------===//

#include "core/StepReplay.h"
#include "core/Arena.h"
#include "core/Buffers.h"
#include "core/Core.h"
#include "core/Session.h"

namespace rankc::rt {

namespace {
struct Recording {
  void (*entry)(); // the update step's or a micro-step's
  std::vector<void *> inputs; // and the staged copies' slots
  Arena::Mark start, end; // the arena before and after the step
  std::vector<void *> outputs;
  void *replay;
};

// Two keys repeat in a long run (one per arena; twice that with gradient
// accumulation's micro-steps); the first steps and a caller's new state add
// a few.
constexpr size_t kKept = 8;
constexpr int kMaxRecordings = 16;

std::vector<Recording> kept;
bool decided = false, off = false; // the backend's answer, or recording stopped
std::string whyNot;
int recordings = 0;
int64_t replays = 0, steps = 0;

// Each entry (update step, micro-step) on its own: how often it ran, and
// whether its messages let it be recorded. With gradient accumulation a
// micro-step has no communication at all while its update step reduces
// across ranks: the first may be replayed, the second not.
struct EntryRuns {
  void (*entry)();
  int64_t runs = 0;
  bool communicates = false;
  std::string why;
};
std::vector<EntryRuns> entries;

/// The entry's record; its messages (`events`, swapped in while it runs)
/// are read the first time it comes.
EntryRuns &entryRuns(void (*entry)()) {
  for (EntryRuns &e : entries)
    if (e.entry == entry)
      return e;
  EntryRuns e{entry};
  for (const EventInfo &event : session().events()) {
    if (event.kind == "send" || event.kind == "recv") {
      e.communicates = true;
      e.why = "the step sends or receives (MPI calls run on the host)";
      break;
    }
    if (session().worldSize > 1 || deviceCollectivesRun()) {
      e.communicates = true;
      e.why = "the step's allreduces run across ranks";
    }
  }
  entries.push_back(e);
  return entries.back();
}

/// Whether the backend can record steps at all (asked once per run).
bool backendReplays() {
  if (!decided) {
    decided = true;
    off = !stepsReplayable(whyNot);
  }
  return !off;
}

void stopRecording(const std::string &why) {
  off = true;
  whyNot = why;
}
} // namespace

bool runStep(int64_t step, const std::vector<void *> &inputs,
             const std::vector<StagedCopy> &copies,
             std::vector<void *> &outputs, void (*entry)()) {
  ++steps;
  (void)step;
  auto run = [&] {
    for (const StagedCopy &c : copies)
      copyFromStaging(c.to, c.from, c.bytes);
    entry();
  };
  // The first two runs of an entry (one per arena) run as they are: they
  // tune the GEMMs and size the arenas, which a recording must not do.
  EntryRuns &e = entryRuns(entry);
  if (!backendReplays() || e.communicates || e.runs++ < 2) {
    run();
    return false;
  }
  Arena &arena = programArenas().now();
  Arena::Mark start = arena.mark();
  // The key: each input's buffer, and the slot each staged copy reads.
  std::vector<void *> key = inputs;
  for (const StagedCopy &c : copies)
    key.push_back(const_cast<void *>(c.from));
  for (const Recording &r : kept)
    if (r.entry == entry && r.start == start && r.inputs == key) {
      replayStep(r.replay);
      outputs = r.outputs;
      arena.restore(r.end); // as if the host code had allocated again
      ++replays;
      return true;
    }
  if (recordings == kMaxRecordings) {
    stopRecording("the step's buffers kept changing (" +
                  std::to_string(kMaxRecordings) + " recordings)");
    run();
    return false;
  }
  ++recordings;
  beginStepRecording();
  run();
  std::string why;
  void *replay = endStepRecording(why);
  if (!replay) {
    // Nothing of it ran: run it now, and record no more.
    stopRecording("recording failed: " + why);
    run();
    return false;
  }
  replayStep(replay);
  Arena::Mark end = arena.mark();
  if (end.block != start.block || end.blocks != start.blocks) {
    // The arena grew: it is merged into one block at its next reset, so
    // the recording's addresses are good for this step only.
    dropStepRecording(replay);
    return true;
  }
  if (kept.size() == kKept) {
    dropStepRecording(kept.front().replay);
    kept.erase(kept.begin());
  }
  kept.push_back({entry, key, start, end, outputs, replay});
  return true;
}

std::string describeReplay() {
  std::string why = whyNot;
  for (const EntryRuns &e : entries)
    if (why.empty() && e.communicates)
      why = e.why;
  if (replays == 0 && !why.empty())
    return "none: " + why;
  std::string s = "cuda graphs: " + std::to_string(replays) + " of " +
                  std::to_string(steps) + " steps replayed, " +
                  std::to_string(recordings) + " recorded";
  if (off && !whyNot.empty())
    s += "; then stopped: " + whyNot;
  else if (!why.empty()) // micro-steps replayed, not the update steps
    s += "; not the update steps: " + why;
  return s;
}

void finishStepReplay() {
  for (Recording &r : kept)
    dropStepRecording(r.replay);
  kept.clear();
  decided = off = false;
  whyNot.clear();
  recordings = 0;
  replays = steps = 0;
  entries.clear();
}

} // namespace rankc::rt
