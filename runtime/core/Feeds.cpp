//===- Feeds.cpp - a new row of an input every step (launch --feed) -------===//

#include "core/Feeds.h"
#include "core/Buffers.h"
#include "core/Core.h"
#include "core/Session.h"
#include "tooling/Npy.h"
#include "rankc_core.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rankc::rt {

namespace {
/// "[4, 2]": a shape as the DAG writes it.
std::string listText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}
/// Rows this large are read ahead by a thread (below, by the kernel).
constexpr size_t kThreadedRowBytes = 64 << 10;
} // namespace

uint64_t feedRow(uint64_t step, uint64_t rows, std::optional<uint64_t> seed) {
  uint64_t at = step % rows;
  if (!seed)
    return at;
  // One epoch's permutation, rebuilt when the epoch changes (a step reads
  // one row of it: the cost is O(S) per epoch, as any shuffle's).
  thread_local uint64_t cachedEpoch = ~0ull, cachedRows = 0, cachedSeed = 0;
  thread_local std::vector<uint64_t> perm;
  uint64_t epoch = step / rows;
  if (epoch != cachedEpoch || rows != cachedRows || *seed != cachedSeed) {
    perm.resize(rows);
    for (uint64_t i = 0; i < rows; ++i)
      perm[i] = i;
    uint64_t state = *seed * 0x9E3779B97F4A7C15ull + epoch;
    for (uint64_t i = rows - 1; i >= 1; --i) {
      uint64_t j = splitmix64(state) % (i + 1);
      std::swap(perm[i], perm[j]);
    }
    cachedEpoch = epoch, cachedRows = rows, cachedSeed = *seed;
  }
  return perm[at];
}

void Feeds::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stop = true;
  }
  cv.notify_all();
  if (thread.joinable())
    thread.join();
  for (Feed &f : feeds) {
    // A copy made for a step that will not run: ordered before the
    // session's last wait, so that its buffer is idle when freed.
    for (void *&mark : f.marks)
      if (mark) {
        waitCopyAside(mark);
        mark = nullptr;
      }
    if (f.map)
      munmap(f.map, f.mapBytes);
  }
  feeds.clear();
}

void Feeds::open(const std::vector<std::string> &ids, const std::string &inputs,
                 int rank, std::optional<uint64_t> feedSeed) {
  seed = feedSeed;
  for (const std::string &id : ids) {
    int input = -1;
    for (int i = 0; i < rankc_core_num_inputs(); ++i)
      if (id == rankc_core_input_name(i))
        input = i;
    if (input < 0)
      fail("--feed '%s': the program of this rank has no input '%s'",
           id.c_str(), id.c_str());
    if (rankc_core_input_is_state(input))
      fail("--feed '%s': the input is carried from step to step (state or an "
           "updated parameter); a feed gives an input a new value every step",
           id.c_str());
    int dtype = rankc_core_input_dtype(input);
    std::vector<int64_t> shape(rankc_core_input_shape(input),
                               rankc_core_input_shape(input) +
                                   rankc_core_input_rank(input));
    std::string path =
        inputs + "/rank" + std::to_string(rank) + "/" + id + ".npy";
    std::vector<int64_t> got;
    size_t offset = 0;
    std::string error;
    if (!npy::readHeader(path, dtype, got, offset, error))
      fail("--feed '%s': %s", id.c_str(), error.c_str());
    std::vector<int64_t> row(got.begin() + (got.empty() ? 0 : 1), got.end());
    if (got.empty() || got[0] < 1 || row != shape) {
      std::string rowText = listText(shape).substr(1);
      fail("--feed '%s': '%s' has shape %s; a feed holds rows of the input: "
           "[S%s%s with S >= 1",
           id.c_str(), path.c_str(), listText(got).c_str(),
           shape.empty() ? "" : ", ", rowText.c_str());
    }
    Feed f;
    f.input = input;
    f.rows = uint64_t(got[0]);
    f.rowBytes = npy::elementBytes(dtype);
    for (int64_t d : shape)
      f.rowBytes *= d;
    int fd = ::open(path.c_str(), O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
      fail("--feed '%s': cannot read '%s': %s", id.c_str(), path.c_str(),
           strerror(errno));
    f.mapBytes = offset + f.rows * f.rowBytes;
    if (size_t(st.st_size) < f.mapBytes) {
      ::close(fd);
      fail("--feed '%s': '%s' is truncated (%lld bytes, its header says %zu)",
           id.c_str(), path.c_str(), (long long)st.st_size, f.mapBytes);
    }
    if (f.mapBytes > 0) {
      f.map = mmap(nullptr, f.mapBytes, PROT_READ, MAP_PRIVATE, fd, 0);
      if (f.map == MAP_FAILED)
        fail("--feed '%s': cannot map '%s': %s", id.c_str(), path.c_str(),
             strerror(errno));
      f.data = static_cast<const char *>(f.map) + offset;
    }
    ::close(fd);
    threaded = threaded || f.rowBytes >= kThreadedRowBytes;
    feeds.push_back(std::move(f));
  }
  // Both slots (and buffers) now: the thread must not allocate, nor touch
  // the session's tables, while the step's thread runs.
  staged = buffersOnDevice();
  if (staged)
    for (Feed &f : feeds) {
      f.index = session().visibleInputs()[f.input];
      for (int p : {0, 1}) {
        f.slots[p] = session().inputStaging(f.index, p);
        if (threaded)
          f.buffers[p] = session().inputBufferOf(f.index, p);
      }
    }
  if (threaded)
    thread = std::thread([this] { worker(); });
}

void Feeds::stage(int64_t step) {
  for (Feed &f : feeds)
    if (f.rowBytes)
      std::memcpy(f.slots[step & 1],
                  f.data + feedRow(step, f.rows, seed) * f.rowBytes,
                  f.rowBytes);
}

void Feeds::stageAndCopy(int64_t step) {
  stage(step);
  int p = step & 1;
  for (Feed &f : feeds)
    if (f.rowBytes)
      f.marks[p] = copyAside(f.buffers[p], f.slots[p], f.rowBytes);
}

void Feeds::touch(int64_t step) {
  long page = sysconf(_SC_PAGESIZE);
  for (Feed &f : feeds) {
    if (!f.rowBytes)
      continue;
    const volatile char *row =
        f.data + feedRow(step, f.rows, seed) * f.rowBytes;
    for (size_t at = 0; at < f.rowBytes; at += page)
      (void)row[at];
    (void)row[f.rowBytes - 1];
  }
}

void Feeds::worker() {
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    cv.wait(lock, [&] { return stop || wanted > done; });
    if (stop)
      return;
    int64_t step = wanted;
    lock.unlock();
    if (staged)
      stageAndCopy(step);
    else
      touch(step);
    lock.lock();
    done = step;
    cv.notify_all();
  }
}

void Feeds::beginStep(int64_t step) {
  if (staged && !threaded) {
    // Small rows: staged here, copied as the step's first work.
    stage(step);
    for (Feed &f : feeds)
      if (f.rowBytes)
        session().setInputStaged(f.index, step & 1);
    return;
  }
  if (staged) {
    // This step's rows: on their way to the device since the step before
    // (the thread's copy, waited for here if the thread is not done), or
    // sent now (the first step).
    int p = step & 1;
    bool ready = false;
    {
      std::unique_lock<std::mutex> lock(mutex);
      cv.wait(lock, [&] { return wanted != step || done >= step; });
      ready = done == step;
    }
    if (!ready)
      stageAndCopy(step);
    for (Feed &f : feeds) {
      if (!f.rowBytes)
        continue;
      waitCopyAside(f.marks[p]);
      f.marks[p] = nullptr;
      session().useInputBuffer(f.index, f.buffers[p]);
    }
    // The thread fills the other parity's slot and buffer, which the step
    // before read and its copy wrote: every step ends with the GPU idle.
    std::lock_guard<std::mutex> lock(mutex);
    wanted = step + 1;
    cv.notify_all();
    return;
  }
  for (Feed &f : feeds)
    if (f.rowBytes)
      rankc_core_set_input(f.input,
                           f.data + feedRow(step, f.rows, seed) * f.rowBytes);
  // The next rows, read while this step computes (never waited for: a step
  // whose rows are not in memory yet reads them itself).
  if (threaded) {
    std::lock_guard<std::mutex> lock(mutex);
    wanted = step + 1;
    cv.notify_one();
    return;
  }
  long page = sysconf(_SC_PAGESIZE);
  for (Feed &f : feeds) {
    if (!f.rowBytes)
      continue;
    uintptr_t row = uintptr_t(f.data + feedRow(step + 1, f.rows, seed) * f.rowBytes);
    uintptr_t begin = row & ~uintptr_t(page - 1);
    madvise(reinterpret_cast<void *>(begin), row + f.rowBytes - begin,
            MADV_WILLNEED);
  }
}

} // namespace rankc::rt
