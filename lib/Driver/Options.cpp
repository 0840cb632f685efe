//===- Options.cpp - parsing the command line of `rankc` ------------------===//

#include "rankc/Driver/Options.h"
#include "rankc/Target/Executable.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <cstdlib>

using namespace rankc;

const char *const rankc::kUsage =
    "usage: rankc compile INPUT -o OUT [--target cpu|cuda] [--cuda-chip sm_NN]\n"
    "                     [--precision f32|tf32|bf16] [--cpu NAME|native]\n"
    "                     [--threads N]\n"
    "                     [--emit exe|lib|mlir|plan|dot|ptx]\n"
    "                     [--bucket-cap-mb X|auto --machine MACHINE.json\n"
    "                      [--profile STATS.json]]\n"
    "                     [--first-bucket-cap-mb Y]\n"
    "                     [--bucket-order ready|ddp-initial]\n"
    "                     [--schedule overlap|bulk-synchronous] [--verbose]\n"
    "                     [--runtime-dir DIR] [--depfile FILE] [--print-outputs]\n"
    "                     [--cache-dir DIR]  (or $RANKC_CACHE_DIR: builds kept\n"
    "                                         by content, copied when unchanged)\n"
    "       rankc check INPUT\n"
    "       rankc import INPUT -o OUT   (the frontend only: comm-level MLIR\n"
    "                                    before verification and partitioning)\n"
    "       rankc calibrate -o MACHINE.json [...]  (`rankc calibrate --help`)\n"
    "Both take --timing: print how long each phase took (to stderr).\n"
    "INPUT is a rankc-dag JSON document or a .mlir file printed by\n"
    "`rankc compile --emit mlir`.\n";


CommandLine rankc::parseCommandLine(int argc, char **argv, DriverOptions &o,
                                    std::string &error) {
  // The first problem is the one reported; parsing stops at it.
  bool bad = false;
  auto usageError = [&](const llvm::Twine &msg) {
    if (!bad)
      error = msg.str();
    bad = true;
  };
  auto parseMiB = [&](llvm::StringRef flag, llvm::StringRef text) {
    double v = 0;
    if (text.getAsDouble(v) || !(v > 0) || v > 1e12)
      usageError(flag + " needs a positive number of MiB, got '" + text + "'");
    return v;
  };
  if (argc < 2) {
    usageError("missing command");
    return CommandLine::Error;
  }
  o.command = argv[1];
  if (o.command == "-h" || o.command == "--help")
    return CommandLine::Help;
  if (o.command != "compile" && o.command != "check" && o.command != "import") {
    usageError("unknown command '" + o.command + "'");
    return CommandLine::Error;
  }
  for (int i = 2; i < argc && !bad; ++i) {
    llvm::StringRef arg = argv[i];
    auto value = [&]() -> llvm::StringRef {
      // Both `--flag value` and `--flag=value`.
      if (size_t eq = arg.find('='); eq != llvm::StringRef::npos && arg.starts_with("--"))
        return arg.substr(eq + 1);
      if (i + 1 >= argc) {
        usageError(arg + " needs a value");
        return "";
      }
      return argv[++i];
    };
    llvm::StringRef name = arg.starts_with("--") ? arg.split('=').first : arg;
    bool isCompile = o.command == "compile";
    bool writes = o.command != "check";
    if (name == "-h" || name == "--help") {
      return CommandLine::Help;
    } else if (isCompile && name == "--verbose") {
      o.verbose = true;
    } else if (name == "--timing") {
      o.timing = true;
    } else if (writes && (name == "-o" || name == "--output")) {
      o.output = value().str();
    } else if (isCompile && name == "--target") {
      o.target = value().str();
      if (o.target != "cpu" && o.target != "cuda")
        usageError("--target must be cpu or cuda, got '" + o.target + "'");
    } else if (isCompile && name == "--emit") {
      o.emit = value().str();
      if (o.emit != "exe" && o.emit != "lib" && o.emit != "mlir" &&
          o.emit != "plan" && o.emit != "dot" && o.emit != "ptx")
        usageError("--emit must be exe, lib, mlir, plan, dot or ptx, got '" +
                   o.emit + "'");
    } else if (isCompile && name == "--runtime-dir") {
      o.runtimeDir = value().str();
    } else if (isCompile && name == "--cache-dir") {
      o.cacheDir = value().str();
      if (o.cacheDir.empty())
        usageError("--cache-dir needs a folder");
    } else if (isCompile && name == "--depfile") {
      o.depfile = value().str();
    } else if (isCompile && name == "--print-outputs") {
      o.printOutputs = true;
    } else if (isCompile && name == "--cuda-chip") {
      o.cudaChip = value().str();
      llvm::StringRef chip(*o.cudaChip);
      unsigned number;
      if (!chip.consume_front("sm_") || chip.consumeInteger(10, number) ||
          !(chip.empty() || chip == "a"))
        usageError("--cuda-chip must name a GPU architecture like sm_90, got '" +
                   *o.cudaChip + "'");
    } else if (isCompile && name == "--cpu") {
      o.cpu = value().str();
      if (!isKnownCpu(*o.cpu))
        usageError("--cpu must be native or a processor LLVM knows for this "
                   "host (x86-64-v3, x86-64-v4, skylake-avx512, ...), got '" +
                   *o.cpu + "'");
    } else if (isCompile && name == "--threads") {
      llvm::StringRef v = value();
      int64_t n = 0;
      if (bad || v.getAsInteger(10, n) || n < 1 || n > 1024)
        usageError("--threads takes a number of threads per rank from 1 to "
                   "1024, got '" + v + "'");
      o.threads = n;
    } else if (isCompile && name == "--precision") {
      o.precision = value().str();
      if (*o.precision != "f32" && *o.precision != "tf32" &&
          *o.precision != "bf16")
        usageError("--precision must be f32, tf32 or bf16, got '" +
                   *o.precision + "'");
    } else if (isCompile && name == "--schedule") {
      std::string v = value().str();
      if (v != "overlap" && v != "bulk-synchronous")
        usageError("--schedule must be overlap or bulk-synchronous, got '" +
                   v + "'");
      o.bulkSynchronous = v == "bulk-synchronous";
    } else if (isCompile && name == "--bucket-cap-mb") {
      llvm::StringRef v = value();
      if (v == "auto")
        o.autoBuckets = true;
      else
        o.bucketCapMb = parseMiB(name, v);
    } else if (isCompile && name == "--machine") {
      o.machine = value().str();
    } else if (isCompile && name == "--profile") {
      o.profile = value().str();
    } else if (isCompile && name == "--first-bucket-cap-mb") {
      o.firstBucketCapMb = parseMiB(name, value());
    } else if (isCompile && name == "--bucket-order") {
      o.bucketOrder = value().str();
      if (*o.bucketOrder != "ready" && *o.bucketOrder != "ddp-initial")
        usageError("--bucket-order must be ready or ddp-initial");
    } else if (arg.starts_with("-") && arg != "-") {
      usageError("unknown option '" + arg + "' for '" + o.command + "'");
    } else if (o.input.empty()) {
      o.input = arg.str();
    } else {
      usageError("more than one input ('" + o.input + "' and '" + arg + "')");
    }
  }
  if (bad)
    return CommandLine::Error;
  if (o.input.empty())
    usageError("missing INPUT");
  if (o.cacheDir.empty())
    if (const char *env = std::getenv("RANKC_CACHE_DIR"))
      o.cacheDir = env;
  if (o.command != "check" && o.output.empty())
    usageError("missing -o OUT");
  if (o.emit == "ptx" && o.target != "cuda")
    usageError("--emit ptx needs --target cuda");
  if (o.cudaChip && o.target != "cuda")
    usageError("--cuda-chip needs --target cuda");
  if (!o.depfile.empty() && o.output == "-")
    usageError("--depfile needs -o OUT to be a file or folder, not '-'");
  if (o.threads && o.target != "cpu")
    usageError("--threads needs --target cpu (a GPU rank's work runs on its "
               "GPU)");
  if (o.autoBuckets && o.machine.empty())
    usageError("--bucket-cap-mb auto needs --machine MACHINE.json (written "
               "by `rankc calibrate`)");
  if (!o.machine.empty() && !o.autoBuckets)
    usageError("--machine is read by --bucket-cap-mb auto");
  if (!o.profile.empty() && !o.autoBuckets)
    usageError("--profile is read by --bucket-cap-mb auto");
  if (o.autoBuckets && o.bucketOrder == std::string("ddp-initial"))
    usageError("--bucket-cap-mb auto chooses buckets in gradient-ready order, "
               "not with --bucket-order ddp-initial");
  if (o.precision && o.target != "cuda")
    usageError("--precision needs --target cuda (the CPU backend computes "
               "f32 exactly)");
  return bad ? CommandLine::Error : CommandLine::Run;
}

