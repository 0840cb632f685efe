//===- Feeds.h - a new row of an input every step (launch --feed) -*- C++ -*-===//
//
// cli.md's --feed: input ID of rank r reads IN/rank<r>/ID.npy, which holds
// [S, *shape]; step k takes row k mod S (with --shuffle SEED, row
// perm_e[k mod S] of epoch e = k / S, perm_e the Fisher-Yates shuffle driven
// by splitmix64 seeded with SEED * 0x9E3779B97F4A7C15 + e). Files are
// memory-mapped, never loaded whole. The rows land in the inputs' buffers
// (the same address every step, which CUDA graph replay needs):
//  - host buffers: a step copies its rows from the map straight in; the
//    next step's rows are read while the current step computes: for rows of
//    64 KiB or more a thread touches their pages (disk reads and page faults
//    off the step's path), for smaller ones the kernel's readahead (madvise
//    WILLNEED) does, since a thread's wake-up would cost more than the row
//    (a 640-byte batch took 6-10 us a step through a thread, 2 ranks on 2
//    cores);
//  - GPU buffers: rows go through the session's pinned staging slots (one
//    per step parity). Rows under 64 KiB are copied to the device as the
//    step's first work, inside its CUDA-graph recording (a synchronous copy
//    cost 8-10 us of a 0.18 ms step on an H100, an asynchronous one of its
//    own 7 us, this nothing measurable). Larger ones would make the step
//    wait for their DMA (20 us for 256 KiB): the thread copies the next
//    step's rows into the pinned slot and on to the device, on a stream of
//    their own, into a second buffer of the input, while the step before
//    computes; steps of the two parities read the two buffers (two
//    recordings), and a step's stream waits for its rows' copy (an event)
//    without the host waiting.
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
  ~Feeds() { finish(); }
  /// Stops the thread and unmaps the files: before the session finishes
  /// (the thread may be staging a row into the session's slots).
  void finish();
  /// Maps IN/rank<rank>/ID.npy for every id (a core input, not carried);
  /// ends the run with an error naming the file on a wrong dtype or shape.
  void open(const std::vector<std::string> &ids, const std::string &inputs,
            int rank, std::optional<uint64_t> seed);
  bool empty() const { return feeds.empty(); }
  /// Sets every fed input to its row of step `step`, then starts reading
  /// step + 1's rows.
  void beginStep(int64_t step);

private:
  struct Feed {
    int input = 0;
    size_t rowBytes = 0;
    uint64_t rows = 0;
    const char *data = nullptr; // the mapped rows
    void *map = nullptr;
    size_t mapBytes = 0;
    // GPU buffers: the input in the session's numbering, and its pinned
    // staging slot for each step parity (set once by open(): the thread
    // then never calls into the session). Rows read ahead by the thread:
    // also the input's buffer for each parity, and the mark of the copy into
    // it (copyAside) that the step of that parity waits for; null once
    // waited for.
    size_t index = 0;
    void *slots[2] = {nullptr, nullptr};
    void *buffers[2] = {nullptr, nullptr};
    void *marks[2] = {nullptr, nullptr};
  };
  /// Brings step `step`'s rows into memory (reads a byte of every page).
  void touch(int64_t step);
  /// Copies step `step`'s rows into staging slot step % 2 (GPU buffers).
  void stage(int64_t step);
  /// stage(step), then each row to the device on copyAside's stream, into
  /// the input's buffer of the step's parity (the thread's work).
  void stageAndCopy(int64_t step);
  void worker();

  std::vector<Feed> feeds;
  std::optional<uint64_t> seed;
  std::thread thread;
  std::mutex mutex;
  std::condition_variable cv;
  int64_t wanted = -1; // the step whose rows the thread reads next
  int64_t done = -1;   // the last step whose rows it read
  bool stop = false, threaded = false;
  bool staged = false; // GPU buffers: rows go through staging slots
};

} // namespace rankc::rt

#endif // RANKC_RUNTIME_FEEDS_H
