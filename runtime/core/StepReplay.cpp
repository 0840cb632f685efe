//===- StepReplay.cpp - run a step, or replay its recording --------------===//

#include "core/StepReplay.h"
#include "core/Arena.h"
#include "core/Buffers.h"
#include "core/Core.h"

namespace rankc::rt {

namespace {
struct Recording {
  void (*entry)(); // the update step's or a micro-step's
  std::vector<void *> inputs;
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
bool decided = false, off = false;
std::string whyNot;
int recordings = 0;
int64_t replays = 0, steps = 0;
// How often each entry ran (update step, micro-step).
std::vector<std::pair<void (*)(), int64_t>> runs;

int64_t runOf(void (*entry)()) {
  for (auto &[e, n] : runs)
    if (e == entry)
      return n++;
  runs.push_back({entry, 1});
  return 0;
}

/// Whether the program's steps may be recorded at all (once per run).
bool replayable() {
  if (decided)
    return !off;
  decided = true;
  off = !stepsReplayable(whyNot);
  for (const EventInfo &e : events) {
    if (off)
      break;
    if (e.kind == "send" || e.kind == "recv") {
      off = true;
      whyNot = "the step sends or receives (MPI calls run on the host)";
    } else if (worldSize > 1 || deviceCollectivesRun()) {
      off = true;
      whyNot = "the step's allreduces run across ranks";
    }
  }
  return !off;
}

void stopRecording(const std::string &why) {
  off = true;
  whyNot = why;
}
} // namespace

bool runStep(int64_t step, const std::vector<void *> &inputs,
             std::vector<void *> &outputs, void (*entry)()) {
  ++steps;
  (void)step;
  // The first two runs of an entry (one per arena) run as they are: they
  // tune the GEMMs and size the arenas, which a recording must not do.
  if (!replayable() || runOf(entry) < 2) {
    entry();
    return false;
  }
  Arena &arena = programArenas().now();
  Arena::Mark start = arena.mark();
  for (const Recording &r : kept)
    if (r.entry == entry && r.start == start && r.inputs == inputs) {
      replayStep(r.replay);
      outputs = r.outputs;
      arena.restore(r.end); // as if the host code had allocated again
      ++replays;
      return true;
    }
  if (recordings == kMaxRecordings) {
    stopRecording("the step's buffers kept changing (" +
                  std::to_string(kMaxRecordings) + " recordings)");
    entry();
    return false;
  }
  ++recordings;
  beginStepRecording();
  entry();
  std::string why;
  void *replay = endStepRecording(why);
  if (!replay) {
    // Nothing of it ran: run it now, and record no more.
    stopRecording("recording failed: " + why);
    entry();
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
  kept.push_back({entry, inputs, start, end, outputs, replay});
  return true;
}

std::string describeReplay() {
  if (replays == 0 && !whyNot.empty())
    return "none: " + whyNot;
  std::string s = "cuda graphs: " + std::to_string(replays) + " of " +
                  std::to_string(steps) + " steps replayed, " +
                  std::to_string(recordings) + " recorded";
  if (off && !whyNot.empty())
    s += "; then stopped: " + whyNot;
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
  runs.clear();
}

} // namespace rankc::rt
