//===- Manifest.h - what a compiled program is, as it says itself -*- C++ -*-===//
//
// The compiler embeds a manifest in every program (rankc_manifest, and
// rankc_micro_manifest for gradient accumulation's micro-step): its inputs
// and outputs with dtype and shape, the values carried from step to step,
// its messages, its index checks. A line-oriented text (lib/Target/
// Manifest.cpp writes it); read once, when a session starts.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_RUNTIME_MANIFEST_H
#define RANKC_RUNTIME_MANIFEST_H

#include <cstdint>
#include <string>
#include <vector>

namespace rankc::rt {

struct TensorInfo {
  std::string id;                 // input id, or the first output name
  std::vector<std::string> names; // outputs: every name (none: hidden)
  int dtype = 0;
  std::vector<int64_t> shape;
  bool zero = false;      // optimizer state: zeros before the first step
  bool step = false;      // a `step` leaf: the step number, set each step
  int stateOf = -1;       // inputs: the output carried into it, or -1
  int64_t elements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  size_t bytes() const;
};
/// A message's peer on a process grid (manifest `grid` lines).
struct GridPeer {
  std::vector<int64_t> shape, shift;
  std::vector<bool> periodic;
};
struct EventInfo {
  std::string kind, node, tag;
  GridPeer grid;            // shape empty: not a grid peer
  int fillDtype = -1;       // a receive's value from no peer (manifest `fill`)
  double fillFloat = 0;
  int64_t fillInt = 0;
  int bucket = -1;          // the DDP bucket an allreduce reduces (`bucket`)
  // What the machine model predicted for the bucket (--bucket-cap-mb auto),
  // in seconds into the step; `known` false: nothing was.
  struct {
    bool known = false;
    double ready = 0, start = 0, reduce = 0, exposed = 0;
  } predicted;
};
/// A kernel's index check (rankc_rt_index_error names its node).
struct IndexCheck {
  std::string node;
  bool rem = false; // an integer divisor, not an index
};

struct Manifest {
  std::string program, fingerprint;
  int worldSize = 1;
  std::vector<std::string> ranks; // "all" or rank numbers, as written
  std::vector<TensorInfo> inputs, outputs;
  std::vector<EventInfo> events;      // the (update) step's messages
  std::vector<EventInfo> microEvents; // the micro-step's, if any
  std::vector<IndexCheck> checks;     // by check number
  // Gradient accumulation: every accumulate-th step is an update step, the
  // others micro-steps.
  int64_t accumulate = 1;

  /// Reads a program's manifest.
  void parse(const char *text);
  /// Reads a micro-step's: its messages only (the rest is the program's).
  void parseMicroStep(const char *text);
  /// Whether rank `r` runs this program; `list` gets its ranks as text.
  bool runsOn(int r, std::string &list) const;
};

} // namespace rankc::rt

#endif // RANKC_RUNTIME_MANIFEST_H
