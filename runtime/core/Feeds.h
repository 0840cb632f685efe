//===- Feeds.h - a new row of an input every step (launch --feed) -*- C++ -*-===//
//
// cli.md's --feed: input ID of rank r reads IN/rank<r>/ID.npy, which holds
// [S, *shape]; step k takes row k mod S (with --shuffle SEED, row
// perm_e[k mod S] of epoch e = k / S, perm_e the Fisher-Yates shuffle driven
// by splitmix64 seeded with SEED * 0x9E3779B97F4A7C15 + e). Files are
// memory-mapped, never loaded whole; a thread copies the next step's rows
// into a second host buffer while the current step computes, so that a
// step starts with its rows already in memory and only the copy into the
// input's buffer (rankc_core_set_input: the same address every step, which
// CUDA graph replay needs) remains.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_RUNTIME_FEEDS_H
#define RANKC_RUNTIME_FEEDS_H

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace rankc::rt {

/// The row step `step` reads of a feed of `rows` rows.
uint64_t feedRow(uint64_t step, uint64_t rows, std::optional<uint64_t> seed);

class Feeds {
public:
  ~Feeds();
  /// Maps IN/rank<rank>/ID.npy for every id (a core input, not carried);
  /// ends the run with an error naming the file on a wrong dtype or shape.
  void open(const std::vector<std::string> &ids, const std::string &inputs,
            int rank, std::optional<uint64_t> seed);
  bool empty() const { return feeds.empty(); }
  /// Sets every fed input to its row of step `step` (waiting for the
  /// prefetch), then starts reading step + 1's rows.
  void beginStep(int64_t step);

private:
  struct Feed {
    int input = 0;
    size_t rowBytes = 0;
    uint64_t rows = 0;
    const char *data = nullptr; // the mapped rows
    void *map = nullptr;
    size_t mapBytes = 0;
    std::vector<char> staged[2]; // rows being read, rows ready
  };
  void prefetch(int64_t step, int slot);
  void worker();

  std::vector<Feed> feeds;
  std::optional<uint64_t> seed;
  std::thread thread;
  std::mutex mutex;
  std::condition_variable cv;
  int64_t wanted = -1, ready = -1; // the step whose rows are asked for, read
  bool stop = false;
};

} // namespace rankc::rt

#endif // RANKC_RUNTIME_FEEDS_H
