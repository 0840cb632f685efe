//===- Checkpoint.h - what a rank carries, saved and loaded ----*- C++ -*-===//
//
// A checkpoint is a folder a person can read: rank<r>/ holds one .npy per
// value the rank carries from step to step (state inputs, updated
// parameters, the optimizer's state and step count, accumulated gradients)
// and rank<r>/manifest.json says what they are: the DAG's fingerprint, the
// world size, the program, the steps done, and each file's size and CRC-32
// (zlib's). The step number is all else a run needs: the feeds' rows and
// the accumulation window follow from it.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_RUNTIME_CHECKPOINT_H
#define RANKC_RUNTIME_CHECKPOINT_H

#include <cstdint>
#include <string>

namespace rankc::rt {

/// Writes this rank's values after `steps` steps to `folder/rank<r>/`,
/// each file synced (the library's save: no collective).
void saveRank(const std::string &folder, int64_t steps);

/// Reads `folder/rank<r>/` back into the program, checking every file
/// against the manifest and the manifest against the program; an Error
/// naming the checkpoint and the file if anything differs. Before the
/// process's first step (the library's load, launch --resume).
void loadRank(const std::string &folder);

/// launch's checkpoints: `--checkpoint-dir`, `--keep`.
struct CheckpointPolicy {
  std::string dir;
  int64_t every = 0, keep = 2;
};

/// A collective at a step boundary: every rank writes into
/// DIR/.staging-step<k>/, and once all have (synced), rank 0 renames it to
/// DIR/step<k> and removes the oldest complete ones beyond `keep` and any
/// staging folder a killed run left. Returns DIR/step<k>.
std::string writeCheckpoint(const CheckpointPolicy &policy, int64_t steps);

/// The same, overlapped with the next steps: the values are copied to the
/// host now (the step boundary) and a thread writes and syncs the files;
/// finishCheckpoint, called by every rank at every step boundary after,
/// commits it (the rename) once every rank's thread is done, or waits for
/// it with `wait`. Returns DIR/step<k> when it committed, else "".
/// Collective, as writeCheckpoint; one checkpoint in flight at a time.
void beginCheckpoint(const CheckpointPolicy &policy, int64_t steps);
std::string finishCheckpoint(bool wait);

/// DIR/step<k> of the complete checkpoint with the most steps, or "".
std::string latestCheckpoint(const std::string &dir);

} // namespace rankc::rt

#endif // RANKC_RUNTIME_CHECKPOINT_H
