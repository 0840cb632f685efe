//===- StepReplay.h - run a step, or replay its recording ------*- C++ -*-===//
//
// A step's generated host code does the same thing every time its buffers
// are the same: the same kernels, library calls and copies on the same
// addresses, the same allocations from its arena, the same outputs. So once
// a step has run with given input buffers and arena, a recording of it
// (CUDA Graphs, Buffers.h) replays it exactly, and the host code need not
// run again. The key is what the host code's effects depend on: the buffer
// each input reads and where the step's arena starts; a step with another
// key (the first steps, state passed through a copy, a library caller's new
// state) is recorded again, up to a few times.
//
// Not recorded: steps that send or receive (MPI acts on the host, at the
// time of the call), allreduces of more than one rank or through NCCL
// (not yet), and a recording that grew the arena (its addresses last one
// step). Each entry is judged by its own messages: gradient accumulation's
// micro-steps, which communicate nothing, are replayed on any number of
// ranks while their update steps run as they are.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_RUNTIME_STEPREPLAY_H
#define RANKC_RUNTIME_STEPREPLAY_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rankc::rt {

/// A copy from staging memory into an input's buffer that a step makes
/// before its work (a fed row, the `step` leaf): inside the recording, so
/// that a replay makes it too (from the same slot: the key includes it), a
/// memcpy node of the step's one launch instead of an API call of its own.
struct StagedCopy {
  void *to;
  const void *from;
  size_t bytes;
};

/// Runs step `step` (`entry` is the generated rankc_entry) after `copies`:
/// replays a recording made with the same `inputs` buffers and copies,
/// else runs them (recording them when they may be replayed later).
/// `outputs` gets where each output lives. Returns true when the step's
/// work ran from a recording (then its parts' host times measured the
/// recording, not the work).
bool runStep(int64_t step, const std::vector<void *> &inputs,
             const std::vector<StagedCopy> &copies,
             std::vector<void *> &outputs, void (*entry)());

/// One line for --stats: how many steps were replays, or why none were.
std::string describeReplay();

/// Drops every recording (before the buffers they use are freed).
void finishStepReplay();

} // namespace rankc::rt

#endif // RANKC_RUNTIME_STEPREPLAY_H
