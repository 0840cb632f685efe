//===- Calibrate.cpp - `rankc calibrate`: the machine model ---------------===//
//
// Runs rankc-calibrate (runtime/tooling/Calibrate.cpp, installed beside
// rankc) under mpiexec once per world size, fits each operation's timings
// with an alpha-beta model (lib/Analysis/CostModel.cpp) and writes
// MACHINE.json: the fits, their largest relative error, the measured
// points, the fraction of a reduction that advances while ranks compute
// without calling MPI, and the compute and copy rates. A file at -o that
// is not a machine model rankc wrote is never replaced.
//
//===----------------------------------------------------------------------===//

#include "rankc/Analysis/CostModel.h"
#include "rankc/Driver/Commands.h"
#include "rankc/Dialect/Comm/Comm.h"

#include "mlir/IR/Builders.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace rankc;
namespace json = llvm::json;

namespace {

constexpr const char *kMachineFormat = "rankc-machine";

int fail(const llvm::Twine &msg) {
  llvm::errs() << "error: calibrate: " << msg << "\n";
  return 1;
}

/// The median of `values` (the upper of the middle two), 0 if none.
double medianOf(std::vector<double> values) {
  if (values.empty())
    return 0.0;
  llvm::sort(values);
  return values[values.size() / 2];
}

struct Measured {
  // op -> ranks -> points
  std::map<std::string, std::map<int, std::vector<Timing>>> timings;
  std::map<int, std::vector<double>> overlap; // ranks -> fractions (>= 64 KiB)
  // ranks -> (MPI calls in the computation, fraction) (>= 64 KiB)
  std::map<int, std::vector<std::pair<int, double>>> overlapWithCalls;
  std::map<std::string, double> rates;        // flops, copy (slowest world)
};

/// Reads rankc-calibrate's lines for one world size.
bool readLines(llvm::StringRef text, Measured &m, std::string &why) {
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n', -1, false);
  for (llvm::StringRef line : lines) {
    line = line.trim();
    if (!line.starts_with("{"))
      continue; // (mpiexec's own chatter)
    llvm::Expected<json::Value> v = json::parse(line);
    const json::Object *o = v ? v->getAsObject() : nullptr;
    if (!o) {
      if (!v)
        llvm::consumeError(v.takeError());
      why = "rankc-calibrate printed an unreadable line: " + line.str();
      return false;
    }
    std::string op = o->getString("op").value_or("").str();
    int ranks = int(o->getInteger("ranks").value_or(0));
    if (op == "flops" || op == "copy") {
      double r = o->getNumber("per_second").value_or(0);
      auto [it, fresh] = m.rates.try_emplace(op, r);
      if (!fresh)
        it->second = std::min(it->second, r);
    } else if (op == "overlap") {
      if (o->getNumber("bytes").value_or(0) < 65536)
        continue;
      double fraction = o->getNumber("fraction").value_or(0);
      int calls = int(o->getInteger("calls").value_or(0));
      if (calls == 0)
        m.overlap[ranks].push_back(fraction);
      else
        m.overlapWithCalls[ranks].push_back({calls, fraction});
    } else {
      m.timings[op][ranks].push_back(
          {o->getNumber("bytes").value_or(0), o->getNumber("seconds").value_or(0)});
    }
  }
  return true;
}

json::Object fitJson(const AlphaBetaFit &fit, llvm::ArrayRef<Timing> points) {
  json::Array pieces, pts;
  for (const AlphaBetaPiece &p : fit.pieces)
    pieces.push_back(json::Object{{"from_bytes", p.fromBytes},
                                  {"alpha_seconds", p.alpha},
                                  {"beta_seconds_per_byte", p.beta}});
  for (const Timing &t : points)
    pts.push_back(json::Array{t.bytes, t.seconds});
  return json::Object{{"pieces", std::move(pieces)},
                      {"max_relative_error", fit.maxRelativeError},
                      {"points", std::move(pts)}};
}

/// A JSON file's value, or why not ("cannot be read: ...", "not JSON: ...").
llvm::Expected<json::Value> readJson(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return llvm::createStringError("cannot be read: " +
                                   buffer.getError().message());
  llvm::Expected<json::Value> doc = json::parse((*buffer)->getBuffer());
  if (!doc)
    return llvm::createStringError("not JSON: " +
                                   llvm::toString(doc.takeError()));
  return doc;
}

/// Whether `v` is a machine model `rankc calibrate` wrote.
bool isMachineModel(const json::Value &v) {
  const json::Object *o = v.getAsObject();
  return o && o->getString("format") == kMachineFormat;
}

/// Why -o cannot be written: a folder, or a file that is not a machine
/// model rankc wrote.
std::string whyNot(llvm::StringRef out) {
  if (llvm::sys::fs::is_directory(out))
    return "-o '" + out.str() + "' is a folder; name the machine file to write";
  if (!llvm::sys::fs::exists(out))
    return "";
  llvm::Expected<json::Value> v = readJson(out);
  if (v && isMachineModel(*v))
    return "";
  if (!v)
    llvm::consumeError(v.takeError());
  return "-o '" + out.str() +
         "' exists and is not a machine model rankc calibrate wrote; it is "
         "left as it is: name another file";
}

} // namespace

const char *const rankc::kCalibrateUsage =
    "usage: rankc calibrate -o MACHINE.json [--ranks N[,N...]] [--max-mib M]\n"
    "                       [--seconds S] [-- MPIEXEC-ARGS...]\n"
    "Times allreduce and point-to-point messages (1 KiB to M MiB, default 64)\n"
    "on each world size (default 2) under mpiexec ($RANKC_MPIEXEC, else\n"
    "mpiexec.mpich), fits latency + bytes/bandwidth per operation and writes\n"
    "the machine model `--bucket-cap-mb auto --machine` uses.\n";

int rankc::runCalibrate(int argc, char **argv, const char *argv0) {
  std::string out;
  std::vector<int> worlds;
  double maxMiB = 64, seconds = 0.2;
  std::vector<std::string> mpiexecArgs;
  for (int i = 2; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    auto value = [&](std::string &v) {
      if (i + 1 >= argc)
        return false;
      v = argv[++i];
      return true;
    };
    std::string v;
    if (arg == "--") {
      for (++i; i < argc; ++i)
        mpiexecArgs.push_back(argv[i]);
    } else if (arg == "-h" || arg == "--help") {
      llvm::outs() << kCalibrateUsage;
      return 0;
    } else if (arg == "-o" && value(out)) {
    } else if (arg == "--ranks" && value(v)) {
      llvm::SmallVector<llvm::StringRef> parts;
      llvm::StringRef(v).split(parts, ',');
      for (llvm::StringRef p : parts) {
        int n = 0;
        if (p.getAsInteger(10, n) || n < 2 || n > 4096) {
          llvm::errs() << "error: --ranks takes world sizes of 2 or more, got '"
                       << v << "'\n" << kCalibrateUsage;
          return 2;
        }
        worlds.push_back(n);
      }
    } else if ((arg == "--max-mib" || arg == "--seconds") && value(v)) {
      double d = 0;
      if (llvm::StringRef(v).getAsDouble(d) || !(d > 0) || d > 1e6) {
        llvm::errs() << "error: " << arg << " needs a positive number, got '" << v
                     << "'\n" << kCalibrateUsage;
        return 2;
      }
      (arg == "--max-mib" ? maxMiB : seconds) = d;
    } else {
      llvm::errs() << "error: calibrate: unknown or incomplete argument '" << arg
                   << "'\n" << kCalibrateUsage;
      return 2;
    }
  }
  if (out.empty()) {
    llvm::errs() << "error: calibrate needs -o MACHINE.json\n" << kCalibrateUsage;
    return 2;
  }
  if (worlds.empty())
    worlds = {2};
  if (std::string why = whyNot(out); !why.empty())
    return fail(why);

  std::string exe = llvm::sys::fs::getMainExecutable(argv0, (void *)&runCalibrate);
  llvm::SmallString<256> tool(llvm::sys::path::parent_path(exe));
  llvm::sys::path::append(tool, "rankc-calibrate");
  if (!llvm::sys::fs::can_execute(tool))
    return fail("rankc-calibrate is not beside rankc (" + tool + ")");
  std::string mpiexec;
  if (const char *env = std::getenv("RANKC_MPIEXEC"); env && *env) {
    auto found = llvm::sys::findProgramByName(env);
    mpiexec = found ? *found : env;
  } else if (auto found = llvm::sys::findProgramByName("mpiexec.mpich")) {
    mpiexec = *found;
  } else if (auto any = llvm::sys::findProgramByName("mpiexec")) {
    mpiexec = *any;
  } else {
    return fail("no mpiexec found (set RANKC_MPIEXEC)");
  }

  Measured m;
  for (int w : worlds) {
    llvm::SmallString<128> log;
    if (llvm::sys::fs::createTemporaryFile("rankc-calibrate", "txt", log))
      return fail("cannot make a temporary file");
    std::vector<std::string> args = {mpiexec, "-n", std::to_string(w)};
    args.insert(args.end(), mpiexecArgs.begin(), mpiexecArgs.end());
    args.insert(args.end(),
                {tool.str().str(), "--max-bytes",
                 std::to_string(int64_t(maxMiB * 1024 * 1024)), "--seconds",
                 std::to_string(seconds)});
    std::vector<llvm::StringRef> refs(args.begin(), args.end());
    std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.str(),
                                                  std::nullopt};
    std::string err;
    llvm::errs() << "rankc calibrate: " << w << " ranks\n";
    int rc = llvm::sys::ExecuteAndWait(mpiexec, refs, std::nullopt, redirects,
                                       /*SecondsToWait=*/0, 0, &err);
    auto text = llvm::MemoryBuffer::getFile(log);
    llvm::sys::fs::remove(log);
    if (rc != 0 || !text)
      return fail("'" + llvm::join(args, " ") + "' failed" +
                  (err.empty() ? "" : ": " + err) + " (exit " + std::to_string(rc) + ")");
    std::string why;
    if (!readLines((*text)->getBuffer(), m, why))
      return fail(why);
  }

  json::Object ops;
  for (auto &[op, byRanks] : m.timings) {
    json::Object perWorld;
    for (auto &[ranks, points] : byRanks) {
      if (points.size() < 2)
        continue;
      perWorld[std::to_string(ranks)] = fitJson(fitAlphaBeta(points), points);
    }
    ops[op] = std::move(perWorld);
  }
  json::Object overlap;
  for (auto &[ranks, fractions] : m.overlap)
    overlap[std::to_string(ranks)] = medianOf(fractions);
  // What each MPI call during the computation adds to the fraction hidden
  // (the median over sizes of (with calls - without) / calls): a bucket's
  // reduction advances at the starts of the buckets after it.
  json::Object perCall;
  for (auto &[ranks, points] : m.overlapWithCalls) {
    double without = overlap.getNumber(std::to_string(ranks)).value_or(0);
    std::vector<double> gains;
    for (auto [calls, fraction] : points)
      gains.push_back(std::max(0.0, fraction - without) / calls);
    perCall[std::to_string(ranks)] = medianOf(std::move(gains));
  }
  json::Object doc{
      {"format", kMachineFormat},
      {"version", 1},
      {"mpiexec", mpiexec},
      {"mpiexec_args", json::Array(mpiexecArgs)},
      {"ops", std::move(ops)},
      {"overlap_fraction", std::move(overlap)},
      {"overlap_per_mpi_call", std::move(perCall)},
      {"compute", json::Object{{"flops_per_second", m.rates["flops"]},
                               {"copy_bytes_per_second", m.rates["copy"]}}}};
  DriverOptions o;
  o.output = out;
  return writeOutput(o, [&](llvm::raw_ostream &os) {
    os << llvm::formatv("{0:2}", json::Value(std::move(doc))) << "\n";
    return mlir::success();
  });
}

/// From a `launch --stats` file: the slowest rank's median computation per
/// step, and the median of what its steps spent outside parts and waits.
struct ProfiledStep {
  double compute = 0, overhead = 0;
};
static llvm::Expected<ProfiledStep> profiledStep(llvm::StringRef profile) {
  auto err = [&](const llvm::Twine &why) {
    return llvm::createStringError(("--profile '" + profile + "': " + why).str());
  };
  llvm::Expected<json::Value> doc = readJson(profile);
  if (!doc)
    return err(llvm::toString(doc.takeError()));
  const json::Object *top = doc->getAsObject();
  const json::Array *ranks = top ? top->getArray("ranks") : nullptr;
  ProfiledStep most;
  for (const json::Value &r : ranks ? *ranks : json::Array()) {
    const json::Object *o = r.getAsObject();
    const json::Object *median = o ? o->getObject("median") : nullptr;
    if (!median)
      continue;
    double compute = median->getNumber("compute").value_or(0);
    if (compute > most.compute) {
      most.compute = compute;
      // (Each of the three is its own median: their difference can be
      // slightly negative.)
      most.overhead = std::max(0.0, median->getNumber("wall").value_or(0) -
                                        compute -
                                        median->getNumber("blocked").value_or(0));
    }
  }
  if (!(most.compute > 0))
    return err("no step's computation in it (`OUT/launch --stats FILE` "
               "writes one)");
  return most;
}

mlir::LogicalResult rankc::applyMachineModel(mlir::ModuleOp module,
                                             llvm::StringRef path,
                                             llvm::StringRef profile) {
  auto bad = [&](const llvm::Twine &why) {
    llvm::errs() << "error: --machine '" << path << "': " << why << "\n";
    return mlir::failure();
  };
  llvm::Expected<json::Value> doc = readJson(path);
  if (!doc)
    return bad(llvm::toString(doc.takeError()));
  const json::Object *top = doc->getAsObject();
  if (!isMachineModel(*doc))
    return bad("not a machine model (`rankc calibrate -o` writes one)");
  if (!module->getAttr(comm::CommDialect::kDataParallel))
    return bad("--bucket-cap-mb auto chooses gradient buckets, and this "
               "program has no data_parallel settings");
  const json::Object *ops = top->getObject("ops");
  const json::Object *allreduce = ops ? ops->getObject("allreduce") : nullptr;
  if (!allreduce || allreduce->empty())
    return bad("no allreduce timings");
  // The world size calibrated nearest the program's (the same, if measured).
  int64_t world = 1;
  if (auto ws = module->getAttrOfType<mlir::IntegerAttr>(comm::CommDialect::kWorldSize))
    world = ws.getInt();
  int64_t best = -1;
  for (const auto &[key, value] : *allreduce) {
    int64_t n = 0;
    if (llvm::StringRef(key).getAsInteger(10, n))
      continue;
    if (best < 0 || std::abs(n - world) < std::abs(best - world) ||
        (std::abs(n - world) == std::abs(best - world) && n > best))
      best = n;
  }
  if (best < 0)
    return bad("no allreduce timings");
  const json::Object *fit = allreduce->getObject(std::to_string(best));
  const json::Array *pieces = fit ? fit->getArray("pieces") : nullptr;
  if (!pieces || pieces->empty())
    return bad("the allreduce of " + llvm::Twine(best) + " ranks has no fit");
  llvm::SmallVector<double> flat;
  for (const json::Value &p : *pieces) {
    const json::Object *o = p.getAsObject();
    if (!o)
      return bad("an allreduce piece is not an object");
    flat.push_back(o->getNumber("from_bytes").value_or(0));
    flat.push_back(o->getNumber("alpha_seconds").value_or(0));
    flat.push_back(o->getNumber("beta_seconds_per_byte").value_or(0));
  }
  double overlap = 0, perCall = 0;
  if (const json::Object *ov = top->getObject("overlap_fraction"))
    overlap = ov->getNumber(std::to_string(best)).value_or(0);
  // (A machine file of an earlier rankc has none: no progress credited.)
  if (const json::Object *pc = top->getObject("overlap_per_mpi_call"))
    perCall = pc->getNumber(std::to_string(best)).value_or(0);
  const json::Object *compute = top->getObject("compute");
  double flops = compute ? compute->getNumber("flops_per_second").value_or(0) : 0;
  double copy = compute ? compute->getNumber("copy_bytes_per_second").value_or(0) : 0;
  if (!(flops > 0) || !(copy > 0))
    return bad("no compute and copy rates");
  mlir::FloatAttr measured, overhead;
  mlir::Builder b(module.getContext());
  if (!profile.empty()) {
    llvm::Expected<ProfiledStep> step = profiledStep(profile);
    if (!step) {
      llvm::errs() << "error: " << llvm::toString(step.takeError()) << "\n";
      return mlir::failure();
    }
    measured = b.getF64FloatAttr(step->compute);
    overhead = b.getF64FloatAttr(step->overhead);
  }
  module->setAttr(comm::CommDialect::kMachine,
                  comm::MachineModelAttr::get(
                      module.getContext(), best,
                      b.getDenseF64ArrayAttr(flat),
                      b.getF64FloatAttr(std::clamp(overlap, 0.0, 1.0)),
                      b.getF64FloatAttr(flops), b.getF64FloatAttr(copy),
                      measured, overhead,
                      perCall > 0 ? b.getF64FloatAttr(std::clamp(perCall, 0.0, 1.0))
                                  : mlir::FloatAttr()));
  return mlir::success();
}
