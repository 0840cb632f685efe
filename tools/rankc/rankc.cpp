//===- rankc.cpp - the rankc driver ---------------------------------------===//
//
// Thin: turns the command line of shared/spec/cli.md into calls of the
// libraries, and diagnostics into `error:` lines. Exit status: 0 success,
// 1 invalid program or input, 2 wrong command line.
//
//===----------------------------------------------------------------------===//

#include "rankc/Dialect/Comm/Comm.h"
#include "rankc/Frontend/DagDiagnostics.h"
#include "rankc/Driver/CompileCache.h"
#include "rankc/Driver/Driver.h"
#include "rankc/Frontend/LoadProgram.h"
#include "rankc/Target/Executable.h"
#include "rankc/Target/OutputFolder.h"
#include "rankc/Target/Plan.h"
#include "rankc/Target/RuntimeFiles.h"
#include "rankc/Target/PrintMLIR.h"
#include "rankc/InitAll.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <optional>

using namespace mlir;

namespace {

const char *kUsage =
    "usage: rankc compile INPUT -o OUT [--target cpu|cuda] [--cuda-chip sm_NN]\n"
    "                     [--precision f32|tf32|bf16] [--cpu NAME|native]\n"
    "                     [--threads N]\n"
    "                     [--emit exe|lib|mlir|plan|dot|ptx]\n"
    "                     [--bucket-cap-mb X] [--first-bucket-cap-mb Y]\n"
    "                     [--bucket-order ready|ddp-initial]\n"
    "                     [--schedule overlap|bulk-synchronous] [--verbose]\n"
    "                     [--runtime-dir DIR] [--depfile FILE] [--print-outputs]\n"
    "                     [--cache-dir DIR]  (or $RANKC_CACHE_DIR: builds kept\n"
    "                                         by content, copied when unchanged)\n"
    "       rankc check INPUT\n"
    "       rankc import INPUT -o OUT   (the frontend only: comm-level MLIR\n"
    "                                    before verification and partitioning)\n"
    "Both take --timing: print how long each phase took (to stderr).\n"
    "INPUT is a rankc-dag JSON document or a .mlir file printed by\n"
    "`rankc compile --emit mlir`.\n";

struct Options {
  std::string command, input, output;
  std::string target = "cpu", emit = "exe";
  std::optional<std::string> cudaChip, precision, cpu;
  std::optional<double> bucketCapMb, firstBucketCapMb;
  std::optional<int64_t> threads;
  std::optional<std::string> bucketOrder;
  std::string runtimeDir, depfile, cacheDir;
  bool printOutputs = false;
  bool timing = false;
  bool bulkSynchronous = false;
  bool verbose = false;
};

[[noreturn]] void usageError(const llvm::Twine &msg) {
  llvm::errs() << "error: " << msg << "\n" << kUsage;
  std::exit(2);
}

double parseMiB(llvm::StringRef flag, llvm::StringRef text) {
  double v;
  if (text.getAsDouble(v) || !(v > 0) || v > 1e12)
    usageError(flag + " needs a positive number of MiB, got '" + text + "'");
  return v;
}

Options parseCommandLine(int argc, char **argv) {
  Options o;
  if (argc < 2)
    usageError("missing command");
  o.command = argv[1];
  if (o.command == "-h" || o.command == "--help") {
    llvm::outs() << kUsage;
    std::exit(0);
  }
  if (o.command != "compile" && o.command != "check" && o.command != "import")
    usageError("unknown command '" + o.command + "'");
  for (int i = 2; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    auto value = [&]() -> llvm::StringRef {
      // Both `--flag value` and `--flag=value`.
      if (size_t eq = arg.find('='); eq != llvm::StringRef::npos && arg.starts_with("--"))
        return arg.substr(eq + 1);
      if (i + 1 >= argc)
        usageError(arg + " needs a value");
      return argv[++i];
    };
    llvm::StringRef name = arg.starts_with("--") ? arg.split('=').first : arg;
    bool isCompile = o.command == "compile";
    bool writes = o.command != "check";
    if (name == "-h" || name == "--help") {
      llvm::outs() << kUsage;
      std::exit(0);
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
      if (!rankc::isKnownCpu(*o.cpu))
        usageError("--cpu must be native or a processor LLVM knows for this "
                   "host (x86-64-v3, x86-64-v4, skylake-avx512, ...), got '" +
                   *o.cpu + "'");
    } else if (isCompile && name == "--threads") {
      llvm::StringRef v = value();
      int64_t n;
      if (v.getAsInteger(10, n) || n < 1 || n > 1024)
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
      o.bucketCapMb = parseMiB(name, value());
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
  if (o.precision && o.target != "cuda")
    usageError("--precision needs --target cuda (the CPU backend computes "
               "f32 exactly)");
  return o;
}

/// Prints diagnostics as `error: FILE:LINE:COL: program [r], node 'x': msg`.
LogicalResult printDiagnostic(Diagnostic &diag) {
  auto print = [](Diagnostic &d, llvm::StringRef severity) {
    llvm::errs() << severity << ": ";
    if (auto file = d.getLocation()->findInstanceOf<FileLineColLoc>()) {
      llvm::errs() << file.getFilename().getValue();
      if (file.getLine())
        llvm::errs() << ":" << file.getLine() << ":" << file.getColumn();
      llvm::errs() << ": ";
    }
    std::string where = rankc::dag::describeDagLoc(d.getLocation());
    if (!where.empty())
      llvm::errs() << where << ": ";
    llvm::errs() << d.str() << "\n";
  };
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error: print(diag, "error"); break;
  case DiagnosticSeverity::Warning: print(diag, "warning"); break;
  case DiagnosticSeverity::Note: print(diag, "note"); break;
  case DiagnosticSeverity::Remark: print(diag, "remark"); break;
  }
  for (Diagnostic &note : diag.getNotes())
    print(note, "note");
  return success();
}

/// Writes OUT (or standard output for "-") whole, or not at all: into a
/// temporary file beside it, renamed over OUT once complete, so that a
/// failed write leaves an earlier OUT as it was.
int writeOutput(const Options &o,
                llvm::function_ref<LogicalResult(llvm::raw_ostream &)> write) {
  std::string why = rankc::whyNotOutputFile(o.output);
  if (!why.empty()) {
    llvm::errs() << "error: " << why << "\n";
    return 1;
  }
  bool wrote = true;
  llvm::Error err = llvm::writeToOutput(o.output, [&](llvm::raw_ostream &os) {
    wrote = succeeded(write(os));
    // A failure is already reported; the temporary file is then dropped.
    return wrote ? llvm::Error::success()
                 : llvm::createStringError(std::errc::io_error, "");
  });
  if (err) {
    std::string text = llvm::toString(std::move(err));
    if (wrote)
      llvm::errs() << "error: cannot write '" << o.output << "': " << text
                   << "\n";
    return 1;
  }
  return 0;
}

/// The output rule of cli.md ("OUT is rankc's"), checked before any work:
/// a refused OUT (or depfile) is named and left exactly as it was.
bool outputAllowed(const Options &o) {
  std::string why;
  if (o.command == "compile" && (o.emit == "exe" || o.emit == "lib"))
    why = rankc::whyNotOutputFolder(o.output, o.input);
  else if (o.command != "check")
    why = rankc::whyNotOutputFile(o.output);
  if (why.empty() && !o.depfile.empty())
    why = rankc::whyNotOutputFile(o.depfile);
  if (!why.empty())
    llvm::errs() << "error: " << why << "\n";
  return why.empty();
}

/// The files `rankc compile` writes with these options.
std::vector<std::string> outputsOf(ModuleOp module, const Options &o) {
  if (o.emit == "exe" || o.emit == "lib")
    return rankc::programOutputs(
        module, o.output, o.emit == "lib" ? rankc::Emit::Lib : rankc::Emit::Exe);
  return {o.output};
}

std::string absolute(llvm::StringRef path) {
  llvm::SmallString<256> p(path);
  llvm::sys::fs::make_absolute(p);
  llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
  return p.str().str();
}

/// --depfile: a Make rule "first-output: every file this compile read",
/// for Ninja's and Make's dependency tracking (CMake's DEPFILE).
int writeDepfile(const Options &o, llvm::ArrayRef<std::string> outputs,
                 llvm::ArrayRef<std::string> read) {
  auto escape = [](llvm::StringRef path) {
    std::string s;
    for (char c : path) {
      if (c == ' ' || c == '#' || c == '\\')
        s += '\\';
      if (c == '$')
        s += '$';
      s += c;
    }
    return s;
  };
  std::string text = escape(absolute(outputs.front())) + ":";
  for (const std::string &f : read)
    text += " \\\n  " + escape(absolute(f));
  text += "\n";
  Options file = o;
  file.output = o.depfile;
  return writeOutput(file, [&](llvm::raw_ostream &os) {
    os << text;
    return success();
  });
}

/// Everything a build's outputs depend on, into the cache's key.
void keyCache(rankc::CompileCache &cache, const Options &o,
              const rankc::RuntimeFiles &runtime, const char *argv0) {
  cache.add("format", "rankc compile cache 1");
  cache.addFile("rankc", llvm::sys::fs::getMainExecutable(
                             argv0, (void *)&usageError));
  cache.add("llvm", LLVM_VERSION_STRING);
  cache.addFile("runtime", runtime.host);
  cache.addFile("runtime-cuda", o.target == "cuda" ? runtime.cuda : "");
  cache.add("mpich", runtime.mpich);
  cache.add("openmp", runtime.openmp);
  cache.add("host-cpu", llvm::sys::getHostCPUName());
  cache.addFile("input", o.input);
  cache.add("input-name", llvm::sys::path::filename(o.input));
  cache.add("target", o.target);
  cache.add("emit", o.emit);
  cache.add("cuda-chip", o.cudaChip.value_or(""));
  cache.add("precision", o.precision.value_or(""));
  cache.add("cpu", o.cpu.value_or(""));
  cache.add("threads", o.threads ? std::to_string(*o.threads) : "");
  auto mib = [](std::optional<double> v) {
    return v ? llvm::formatv("{0:e17}", *v).str() : std::string();
  };
  cache.add("bucket-cap-mb", mib(o.bucketCapMb));
  cache.add("first-bucket-cap-mb", mib(o.firstBucketCapMb));
  cache.add("bucket-order", o.bucketOrder.value_or(""));
  cache.add("schedule", o.bulkSynchronous ? "bulk-synchronous" : "overlap");
  if (o.target == "cuda") {
    std::string why;
    std::string toolkit = rankc::CudaOptions::findToolkit(why);
    cache.add("cuda-toolkit", toolkit);
    llvm::SmallString<256> ptxas(toolkit);
    llvm::sys::path::append(ptxas, "bin", "ptxas");
    llvm::sys::fs::file_status st;
    if (!llvm::sys::fs::status(ptxas, st))
      cache.add("ptxas", std::to_string(st.getSize()) + "@" +
                             std::to_string(llvm::sys::toTimeT(
                                 st.getLastModificationTime())));
  }
}

/// OUT/x for the outputs a cache entry lists relative to OUT.
std::vector<std::string> underOutput(const Options &o,
                                     llvm::ArrayRef<std::string> relative) {
  std::vector<std::string> paths;
  for (const std::string &r : relative) {
    llvm::SmallString<256> p(o.output);
    if (r != ".")
      llvm::sys::path::append(p, r);
    paths.push_back(p.str().str());
  }
  return paths;
}

int emitMLIR(ModuleOp module, const Options &o) {
  return writeOutput(o, [&](llvm::raw_ostream &os) {
    rankc::printMLIR(module, os);
    return success();
  });
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  Options o = parseCommandLine(argc, argv);

  DialectRegistry registry;
  rankc::registerAllDialects(registry);
  MLIRContext ctx(registry);
  // The frontend builds ops of these; passes load what else they need.
  ctx.loadDialect<rankc::comm::CommDialect, arith::ArithDialect,
                  func::FuncDialect, linalg::LinalgDialect, math::MathDialect,
                  tensor::TensorDialect>();
  ScopedDiagnosticHandler handler(&ctx, printDiagnostic);
  // Errors name the file, program and node; a dump of the op adds nothing.
  ctx.printOpOnDiagnostic(false);

  DefaultTimingManager timingManager;
  timingManager.setEnabled(o.timing);
  TimingScope timing = timingManager.getRootScope();

  llvm::SourceMgr sourceMgr;
  // Freeing a module of 10^6 ops and its context takes seconds that nobody
  // waits for: once the results are written, rankc exits without tearing
  // them down (as clang's -disable-free does), the timing report printed
  // first.
  auto exitNow = [&](int rc) -> int {
    timing.stop();
    timingManager.print();
    llvm::outs().flush();
    llvm::errs().flush();
    std::fflush(nullptr);
    std::_Exit(rc);
  };
  if (o.command == "check")
    return exitNow(failed(rankc::checkInput(ctx, o.input, sourceMgr, timing,
                                            llvm::outs())));

  if (!o.printOutputs && !outputAllowed(o))
    return exitNow(1);

  if (o.command == "import") {
    OwningOpRef<ModuleOp> module =
        rankc::loadProgram(&ctx, o.input, sourceMgr, timing);
    return module ? emitMLIR(*module, o) : 1;
  }

  if (o.printOutputs) {
    // Configure time (CMake): the programs' names are enough, and the
    // frontend alone gives them.
    OwningOpRef<ModuleOp> module =
        rankc::loadProgram(&ctx, o.input, sourceMgr, timing);
    if (!module)
      return 1;
    for (const std::string &f : outputsOf(*module, o))
      llvm::outs() << f << "\n";
    return 0;
  }

  // --cache-dir: the outputs of a build of the same input, options and
  // rankc are copied instead of built again.
  std::optional<rankc::CompileCache> cache;
  rankc::RuntimeFiles cacheRuntime;
  if (!o.cacheDir.empty() && (o.emit == "exe" || o.emit == "lib")) {
    std::string why;
    cacheRuntime = rankc::findRuntime(o.runtimeDir, argv[0],
                                      (void *)&usageError, why);
    std::vector<std::string> relative;
    mlir::TimingScope lookup = timing.nest("compile cache");
    cache.emplace(o.cacheDir);
    keyCache(*cache, o, cacheRuntime, argv[0]);
    bool hit = cache->restore(o.output, relative);
    lookup.stop();
    if (hit) {
      if (o.verbose)
        llvm::errs() << "rankc: compile cache hit: " << cache->entry()
                     << "\n";
      if (o.depfile.empty())
        return exitNow(0);
      std::vector<std::string> read = {
          o.input, o.target == "cuda" ? cacheRuntime.cuda : cacheRuntime.host};
      return exitNow(writeDepfile(o, underOutput(o, relative), read));
    }
  }

  rankc::CompileOptions options;
  options.bucketCapMb = o.bucketCapMb;
  options.firstBucketCapMb = o.firstBucketCapMb;
  options.bucketOrder = o.bucketOrder;
  options.bulkSynchronous = o.bulkSynchronous;
  OwningOpRef<ModuleOp> module =
      rankc::compileToPartitioned(ctx, o.input, options, sourceMgr, timing);
  if (!module)
    return 1;
  if (o.verbose) {
    // The bucket table, as DDPOptimizer's debug log prints it.
    std::vector<rankc::BucketInfo> buckets = rankc::readBuckets(*module);
    llvm::errs() << "rankc: " << buckets.size()
                 << " gradient bucket(s), in the order their reductions start\n"
                 << llvm::format("%-7s %12s %-6s %s\n", "bucket", "bytes",
                                 "dtype", "params");
    for (auto [i, b] : llvm::enumerate(buckets))
      llvm::errs() << llvm::format("%-7zu %12lld %-6s ", i, (long long)b.bytes,
                                   b.dtype.c_str())
                   << llvm::join(b.params, ", ") << "\n";
  }
  // What the outputs depend on, for --depfile.
  std::vector<std::string> read = {o.input};
  auto finish = [&](int rc) {
    if (rc != 0 || o.depfile.empty())
      return rc;
    return writeDepfile(o, outputsOf(*module, o), read);
  };
  if (o.emit == "mlir") {
    int rc;
    {
      mlir::TimingScope writing = timing.nest("write the MLIR");
      rc = finish(emitMLIR(*module, o));
    }
    return exitNow(rc);
  }
  if (o.emit == "plan") {
    int rc;
    {
      mlir::TimingScope writing = timing.nest("write the plan");
      rc = finish(writeOutput(o, [&](llvm::raw_ostream &os) {
        return rankc::writePlan(*module, os);
      }));
    }
    return exitNow(rc);
  }
  if (o.emit == "dot")
    return finish(writeOutput(o, [&](llvm::raw_ostream &os) {
      return rankc::writeDot(*module, os);
    }));
  rankc::BuildOptions build;
  build.bulkSynchronous = o.bulkSynchronous;
  if (o.target == "cuda") {
    rankc::CudaOptions cuda;
    std::string why;
    cuda.toolkit = rankc::CudaOptions::findToolkit(why);
    if (cuda.toolkit.empty()) {
      llvm::errs() << "error: " << o.input
                   << ": --target cuda needs the CUDA toolkit (ptxas and "
                      "libdevice): "
                   << why << "\n";
      return 1;
    }
    if (o.precision)
      cuda.precision = *o.precision;
    if (o.cudaChip) {
      cuda.chip = *o.cudaChip;
      cuda.features = rankc::CudaOptions::defaultFeatures(cuda.chip);
    }
    if (o.emit == "ptx")
      return finish(writeOutput(o, [&](llvm::raw_ostream &os) {
        return rankc::writePtx(*module, cuda, os, timing);
      }));
    build.cuda = cuda;
  }
  if (o.cpu)
    build.cpu = *o.cpu;
  if (o.threads)
    build.threads = *o.threads;
  std::string why;
  build.runtime = rankc::findRuntime(o.runtimeDir, argv[0], (void *)&usageError,
                                     why);
  if (build.runtime.host.empty()) {
    llvm::errs() << "error: " << o.input << ": cannot find rankc's runtime: "
                 << why << "\n";
    return 1;
  }
  if (build.cuda && build.runtime.cuda.empty()) {
    llvm::errs() << "error: " << o.input
                 << ": this rankc was built without CUDA's cuda.h, so it "
                    "cannot link --target cuda programs (no "
                    "librankc_runtime_cuda.a in '"
                 << build.runtime.dir << "'); use --target cpu\n";
    return 1;
  }
  if (build.threads > 1 && build.runtime.openmp.empty()) {
    llvm::errs() << "error: " << o.input
                 << ": --threads needs LLVM's OpenMP runtime (libomp.so.5, "
                    "Debian's libomp-22-dev), which this rankc was built "
                    "without; install it and rebuild rankc, or set "
                    "RANKC_OPENMP_LIBRARY to its path\n";
    return 1;
  }
  build.emit = o.emit == "lib" ? rankc::Emit::Lib : rankc::Emit::Exe;
  build.inputName = llvm::sys::path::filename(o.input).str();
  build.inputPath = o.input;
  read.push_back(build.cuda ? build.runtime.cuda : build.runtime.host);
  if (failed(rankc::writePrograms(*module, o.output, timing, build)))
    return exitNow(1);
  if (cache) {
    mlir::TimingScope storing = timing.nest("compile cache");
    std::vector<std::string> relative;
    for (const std::string &f : outputsOf(*module, o)) {
      llvm::StringRef r(f);
      r.consume_front(o.output);
      r = r.ltrim('/');
      relative.push_back(r.empty() ? "." : r.str());
    }
    cache->store(o.output, relative);
  }
  return exitNow(finish(0));
}
