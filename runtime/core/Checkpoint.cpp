//===- Checkpoint.cpp - what a rank carries, saved and loaded -------------===//

#include "core/Checkpoint.h"
#include "core/Buffers.h"
#include "core/Core.h"
#include "core/Session.h"
#include "tooling/Npy.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <array>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace rankc::rt {

namespace {

/// zlib's CRC-32 (Python's zlib.crc32), so that anyone can check a file.
uint32_t crc32(const char *data, size_t n, uint32_t crc = 0) {
  // (Made once, thread-safely: the checkpoint writer thread uses it too.)
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (size_t i = 0; i < n; ++i)
    crc = table[(crc ^ uint8_t(data[i])) & 0xff] ^ (crc >> 8);
  return ~crc;
}

bool readFile(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return true;
}

/// fsync of a file or folder: the checkpoint is on the disk before it is
/// declared complete.
void sync(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

void writeText(const std::string &path, const std::string &text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out)
      raise("cannot write '%s'", tmp.c_str());
  }
  sync(tmp);
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    raise("cannot write '%s': %s", path.c_str(), strerror(errno));
}

std::string rankFolder(const std::string &folder) {
  return folder + "/rank" + std::to_string(session().rank);
}

/// The value of `"key": ` on a line of our manifests (a string's quotes
/// dropped), or "" if absent.
std::string field(const std::string &line, const std::string &key) {
  std::string k = "\"" + key + "\": ";
  size_t at = line.find(k);
  if (at == std::string::npos)
    return "";
  at += k.size();
  if (line[at] == '"') {
    size_t end = line.find('"', at + 1);
    return line.substr(at + 1, end - at - 1);
  }
  size_t end = line.find_first_of(",}", at);
  return line.substr(at, end - at);
}

/// The complete checkpoints in `dir` (step<N> folders with a manifest), by
/// step.
std::vector<std::pair<int64_t, fs::path>> completeCheckpoints(
    const std::string &dir) {
  std::error_code ec;
  std::vector<std::pair<int64_t, fs::path>> complete;
  for (const auto &entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("step", 0) != 0 ||
        !fs::exists(entry.path() / "manifest.json"))
      continue;
    char *end = nullptr;
    int64_t n = std::strtoll(name.c_str() + 4, &end, 10);
    if (end && !*end)
      complete.push_back({n, entry.path()});
  }
  std::sort(complete.begin(), complete.end());
  return complete;
}
} // namespace

/// The test suite's way to kill a rank in the middle of writing a
/// checkpoint (RANKC_KILL_IN_CHECKPOINT=RANK:STEP): its files written, not
/// its manifest.
void killIfAsked(int rank, int64_t steps) {
  const char *spec = std::getenv("RANKC_KILL_IN_CHECKPOINT");
  if (spec && std::to_string(rank) + ":" + std::to_string(steps) == spec)
    ::kill(::getpid(), SIGKILL);
}

namespace {
/// A rank's carried values on the host at a step boundary, and what its
/// manifest says: all that writing a checkpoint needs, so that the writing
/// (files, fsync) can go on while the next steps run.
struct Snapshot {
  struct Value {
    std::string id;
    int dtype;
    std::vector<int64_t> shape;
    std::vector<char> data;
  };
  std::vector<Value> values;
  std::string choices, head; // GEMM choices; the manifest's first fields
  int64_t steps = 0;
  int rank = 0;
};

Snapshot takeSnapshot(int64_t steps) {
  Snapshot snap;
  const Session &s = session();
  for (size_t i : s.carried()) {
    const TensorInfo &t = s.program.inputs[i];
    Snapshot::Value v{t.id, t.dtype, t.shape, std::vector<char>(t.bytes() + 1)};
    copyToHost(v.data.data(), s.carriedValue(i), t.bytes());
    snap.values.push_back(std::move(v));
  }
  // What the GEMM libraries chose by timing (CUDA), so that a resumed
  // process chooses the same and computes the same bits.
  snap.choices = libraryChoices();
  snap.head = "{\"format\": \"rankc-checkpoint\", \"fingerprint\": \"" +
              s.program.fingerprint + "\", \"world_size\": " +
              std::to_string(s.worldSize) + ", \"program\": \"" +
              s.program.program + "\", \"rank\": " + std::to_string(s.rank) +
              ", \"step\": " + std::to_string(steps);
  snap.steps = steps;
  snap.rank = s.rank;
  return snap;
}

/// Writes a snapshot into `folder/rank<r>/`, each file synced, the
/// manifest last. Files only: no MPI, no device, no session (it may run on
/// the writer thread). Raises an Error on failure.
void writeSnapshot(const Snapshot &snap, const std::string &folder) {
  std::string dir = folder + "/rank" + std::to_string(snap.rank);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    raise("checkpoint '%s': cannot create '%s': %s", folder.c_str(),
          dir.c_str(), ec.message().c_str());
  std::string values;
  for (const Snapshot::Value &v : snap.values) {
    std::string file = v.id + ".npy", path = dir + "/" + file, error;
    if (!npy::write(path, v.dtype, v.shape, v.data.data(), error))
      raise("checkpoint '%s': %s", folder.c_str(), error.c_str());
    sync(path);
    std::string bytes;
    if (!readFile(path, bytes))
      raise("checkpoint '%s': cannot read back '%s'", folder.c_str(),
            path.c_str());
    char line[512];
    snprintf(line, sizeof line,
             "%s\n  {\"name\": \"%s\", \"file\": \"%s\", \"bytes\": %zu, "
             "\"crc32\": %" PRIu32 "}",
             values.empty() ? "" : ",", v.id.c_str(), file.c_str(),
             bytes.size(), crc32(bytes.data(), bytes.size()));
    values += line;
  }
  std::string library;
  if (!snap.choices.empty()) {
    writeText(dir + "/gemm_choices.txt", snap.choices);
    char line[256];
    snprintf(line, sizeof line,
             ",\n \"gemm_choices\": {\"file\": \"gemm_choices.txt\", "
             "\"bytes\": %zu, \"crc32\": %" PRIu32 "}",
             snap.choices.size(),
             crc32(snap.choices.data(), snap.choices.size()));
    library = line;
  }
  killIfAsked(snap.rank, snap.steps);
  writeText(dir + "/manifest.json",
            snap.head + library + ",\n \"values\": [" + values + "\n]}\n");
  sync(dir);
}
} // namespace

void saveRank(const std::string &folder, int64_t steps) {
  writeSnapshot(takeSnapshot(steps), folder);
}

void loadRank(const std::string &folder) {
  std::string dir = rankFolder(folder), text;
  const std::string mine = "rank" + std::to_string(session().rank);
  std::string where = mine + "/manifest.json";
  const char *f = folder.c_str();
  if (!readFile(dir + "/manifest.json", text))
    raise("checkpoint '%s' is incomplete or not a checkpoint: it has no %s",
          f, where.c_str());
  std::istringstream lines(text);
  std::string head;
  std::getline(lines, head);
  if (field(head, "format") != "rankc-checkpoint")
    raise("checkpoint '%s': %s is not a rankc checkpoint's manifest", f,
          where.c_str());
  if (field(head, "fingerprint") != session().program.fingerprint)
    raise("checkpoint '%s' is of another DAG (fingerprint %s; this program "
          "was compiled from %s)",
          f, field(head, "fingerprint").c_str(), session().program.fingerprint.c_str());
  if (field(head, "world_size") != std::to_string(session().worldSize))
    raise("checkpoint '%s' was written by %s ranks; this run has %d", f,
          field(head, "world_size").c_str(), session().worldSize);
  if (field(head, "program") != session().program.program)
    raise("checkpoint '%s' holds program '%s' for rank %d; this rank runs "
          "'%s'",
          f, field(head, "program").c_str(), session().rank, session().program.program.c_str());
  int64_t steps = std::strtoll(field(head, "step").c_str(), nullptr, 10);
  struct Entry {
    std::string file;
    size_t bytes;
    uint32_t crc;
  };
  std::vector<std::pair<std::string, Entry>> entries;
  std::string choicesLine;
  for (std::string line; std::getline(lines, line);)
    if (line.find("\"gemm_choices\"") != std::string::npos)
      choicesLine = line;
    else if (!field(line, "name").empty())
      entries.push_back(
          {field(line, "name"),
           {field(line, "file"), size_t(std::strtoull(field(line, "bytes").c_str(), nullptr, 10)),
            uint32_t(std::strtoul(field(line, "crc32").c_str(), nullptr, 10))}});
  for (size_t i : session().carried()) {
    const TensorInfo &t = session().program.inputs[i];
    const Entry *e = nullptr;
    for (const auto &[name, entry] : entries)
      if (name == t.id)
        e = &entry;
    if (!e)
      raise("checkpoint '%s': %s has no value '%s', which the program "
            "carries",
            f, where.c_str(), t.id.c_str());
    std::string rel = mine + "/" + e->file, bytes;
    if (!readFile(dir + "/" + e->file, bytes))
      raise("checkpoint '%s': file '%s' is missing", f, rel.c_str());
    if (bytes.size() != e->bytes)
      raise("checkpoint '%s': file '%s' has %zu bytes, its manifest says %zu "
            "(truncated?)",
            f, rel.c_str(), bytes.size(), e->bytes);
    if (uint32_t c = crc32(bytes.data(), bytes.size()); c != e->crc)
      raise("checkpoint '%s': file '%s' fails its checksum (CRC-32 %" PRIu32
            ", the manifest's %" PRIu32 ")",
            f, rel.c_str(), c, e->crc);
    std::vector<char> host(t.bytes() + 1);
    std::string error;
    if (!npy::read(dir + "/" + e->file, t.dtype, t.shape, host.data(), error))
      raise("checkpoint '%s': file '%s': %s", f, rel.c_str(), error.c_str());
    session().restore(i, host.data());
  }
  if (!choicesLine.empty()) {
    std::string rel = mine + "/" + field(choicesLine, "file"), text;
    if (!readFile(folder + "/" + rel, text))
      raise("checkpoint '%s': file '%s' is missing", f, rel.c_str());
    size_t bytes = std::strtoull(field(choicesLine, "bytes").c_str(), nullptr, 10);
    uint32_t crc = std::strtoul(field(choicesLine, "crc32").c_str(), nullptr, 10);
    if (text.size() != bytes || crc32(text.data(), text.size()) != crc)
      raise("checkpoint '%s': file '%s' does not match its manifest (size or "
            "CRC-32)",
            f, rel.c_str());
    restoreLibraryChoices(text);
  }
  session().setStepsDone(steps);
}

namespace {
/// A checkpoint being written: the snapshot was taken at its step
/// boundary, the files are written by a thread while the next steps run.
struct Pending {
  CheckpointPolicy policy;
  Snapshot snap;
  std::thread writer;
  std::atomic<bool> done{false};
  std::string error; // the writer's, if it failed
  double begin = 0;
};
std::unique_ptr<Pending> pending;

std::string stageFolder(const CheckpointPolicy &policy, int64_t steps) {
  return policy.dir + "/.staging-step" + std::to_string(steps);
}

/// Every rank's files are written and synced: rank 0 writes the top
/// manifest, renames the staging folder into place (a checkpoint exists
/// whole or not at all), removes the oldest complete ones beyond `keep`
/// and any staging a killed run left. Collective.
std::string commit(Pending &p) {
  const Session &s = session();
  std::string k = std::to_string(p.snap.steps);
  std::string stage = stageFolder(p.policy, p.snap.steps);
  std::string done = p.policy.dir + "/step" + k;
  std::error_code ec;
  checkMpi(MPI_Barrier(s.comm), "MPI_Barrier"); // every rank's files synced
  if (s.rank == 0) {
    writeText(stage + "/manifest.json",
              "{\"format\": \"rankc-checkpoint\", \"fingerprint\": \"" +
                  s.program.fingerprint + "\", \"world_size\": " +
                  std::to_string(s.worldSize) + ", \"step\": " + k + "}\n");
    sync(stage);
    fs::remove_all(done, ec); // (a resumed run saving the same step again)
    if (std::rename(stage.c_str(), done.c_str()) != 0)
      fail("cannot move checkpoint '%s' into place: %s", stage.c_str(),
           strerror(errno));
    sync(p.policy.dir);
    // Staging left by killed runs, and the oldest complete checkpoints
    // beyond `keep` (never the one just written: a run that started over
    // writes steps below those an earlier run left) go.
    for (const auto &entry : fs::directory_iterator(p.policy.dir, ec))
      if (entry.path().filename().string().rfind(".staging-step", 0) == 0)
        fs::remove_all(entry.path(), ec);
    auto complete = completeCheckpoints(p.policy.dir);
    size_t left = complete.size();
    for (size_t i = 0; i < complete.size() && left > size_t(p.policy.keep); ++i)
      if (complete[i].first != p.snap.steps) {
        fs::remove_all(complete[i].second, ec);
        --left;
      }
  }
  checkMpi(MPI_Barrier(s.comm), "MPI_Barrier");
  if (s.rank == 0) {
    uintmax_t bytes = 0;
    for (const auto &entry : fs::directory_iterator(done + "/rank0", ec))
      bytes += fs::file_size(entry.path(), ec);
    printf("launch: checkpoint %s written in %.3f s (%.1f MB a rank; "
           "written while %lld more steps ran)\n",
           done.c_str(), now() - p.begin, double(bytes) / 1e6,
           (long long)(s.stepsDone() - p.snap.steps));
    fflush(stdout);
  }
  return done;
}
} // namespace

void beginCheckpoint(const CheckpointPolicy &policy, int64_t steps) {
  finishCheckpoint(/*wait=*/true); // one at a time
  const Session &s = session();
  auto p = std::make_unique<Pending>();
  p->policy = policy;
  p->begin = now();
  std::string stage = stageFolder(policy, steps);
  if (s.rank == 0) {
    makeFolders(policy.dir);
    std::error_code ec;
    fs::remove_all(stage, ec); // a killed run's
  }
  checkMpi(MPI_Barrier(s.comm), "MPI_Barrier");
  // From the GPU the values come to the host here, at the step boundary;
  // the files are written while the next steps run.
  p->snap = takeSnapshot(steps);
  Pending *raw = p.get();
  p->writer = std::thread([raw, stage] {
    try {
      // The test suite's way to make a write outlast steps
      // (RANKC_CHECKPOINT_WRITE_DELAY_MS), as a slow file system would.
      if (const char *ms = std::getenv("RANKC_CHECKPOINT_WRITE_DELAY_MS"))
        std::this_thread::sleep_for(std::chrono::milliseconds(std::atol(ms)));
      writeSnapshot(raw->snap, stage);
    } catch (const Error &e) {
      raw->error = e.what();
    }
    raw->done = true;
  });
  pending = std::move(p);
}

std::string finishCheckpoint(bool wait) {
  if (!pending)
    return "";
  if (wait)
    pending->writer.join();
  // Every rank decides alike: commit once all have written their files.
  int mine = pending->done ? 1 : 0, all = 0;
  checkMpi(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, session().comm),
           "MPI_Allreduce (checkpoint written)");
  if (!all)
    return "";
  if (pending->writer.joinable())
    pending->writer.join();
  std::unique_ptr<Pending> p = std::move(pending);
  if (!p->error.empty())
    fail("%s", p->error.c_str());
  return commit(*p);
}

std::string writeCheckpoint(const CheckpointPolicy &policy, int64_t steps) {
  beginCheckpoint(policy, steps);
  return finishCheckpoint(/*wait=*/true);
}

std::string latestCheckpoint(const std::string &dir) {
  auto complete = completeCheckpoints(dir);
  return complete.empty() ? "" : complete.back().second.string();
}

} // namespace rankc::rt
