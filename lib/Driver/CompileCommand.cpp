//===- CompileCommand.cpp - `rankc compile`, from flags to files ----------===//
//
// The compile cache first (--cache-dir), then the partitioned module, then
// what --emit asks for: the MLIR, the plan, the drawing, PTX, or the
// programs built against the runtime.
//
//===----------------------------------------------------------------------===//

#include "rankc/Driver/Commands.h"
#include "rankc/Driver/CompileCache.h"
#include "rankc/Driver/Driver.h"
#include "rankc/Target/Executable.h"
#include "rankc/Target/Plan.h"
#include "rankc/Target/RuntimeFiles.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;
using namespace rankc;

/// Row chains as one kernel each (CudaOptions), unless
/// `RANKC_GPU_ROW_CHAINS=0`.
static bool gpuRowChains() {
  const char *chains = std::getenv("RANKC_GPU_ROW_CHAINS");
  return !chains || llvm::StringRef(chains) != "0";
}

/// Everything a build's outputs depend on, into the cache's key.
static void keyCache(CompileCache &cache, const DriverOptions &o,
                     const RuntimeFiles &runtime, const char *argv0) {
  cache.add("format", "rankc compile cache 1");
  cache.addFile("rankc", llvm::sys::fs::getMainExecutable(
                             argv0, (void *)&parseCommandLine));
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
  cache.addFile("machine", o.machine);
  cache.addFile("profile", o.profile);
  cache.add("schedule", o.bulkSynchronous ? "bulk-synchronous" : "overlap");
  // The switches the environment gives the pipelines (docs/cli.md).
  for (const char *name :
       {"RANKC_PLAN_BUFFERS", "RANKC_GPU_ROW_CHAINS",
        "RANKC_BUFFERIZATION_SEGMENTS", "RANKC_ARGUMENTS_THROUGH_MEMORY",
        "RANKC_UPSTREAM_BUFFERIZE"}) {
    const char *value = std::getenv(name);
    cache.add(name, value ? value : "");
  }
  if (o.target == "cuda") {
    std::string why;
    std::string toolkit = CudaOptions::findToolkit(why);
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
static std::vector<std::string> underOutput(const DriverOptions &o,
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

int rankc::runCompile(MLIRContext &ctx, const DriverOptions &o,
                      const char *argv0, llvm::SourceMgr &sourceMgr,
                      TimingScope &timing) {
  // --cache-dir: the outputs of a build of the same input, options and
  // rankc are copied instead of built again.
  std::optional<CompileCache> cache;
  RuntimeFiles cacheRuntime;
  if (!o.cacheDir.empty() && (o.emit == "exe" || o.emit == "lib")) {
    std::string why;
    cacheRuntime = findRuntime(o.runtimeDir, argv0,
                                      (void *)&parseCommandLine, why);
    std::vector<std::string> relative;
    mlir::TimingScope lookup = timing.nest("compile cache");
    cache.emplace(o.cacheDir);
    keyCache(*cache, o, cacheRuntime, argv0);
    bool hit = cache->restore(o.output, relative);
    lookup.stop();
    if (hit) {
      if (o.verbose)
        llvm::errs() << "rankc: compile cache hit: " << cache->entry()
                     << "\n";
      if (o.depfile.empty())
        return (0);
      std::vector<std::string> read = {
          o.input, o.target == "cuda" ? cacheRuntime.cuda : cacheRuntime.host};
      return (writeDepfile(o, underOutput(o, relative), read));
    }
  }

  CompileOptions options;
  options.bucketCapMb = o.bucketCapMb;
  options.firstBucketCapMb = o.firstBucketCapMb;
  options.bucketOrder = o.bucketOrder;
  options.machine = o.machine;
  options.profile = o.profile;
  options.bulkSynchronous = o.bulkSynchronous;
  OwningOpRef<ModuleOp> module =
      compileToPartitioned(ctx, o.input, options, sourceMgr, timing);
  if (!module)
    return 1;
  if (o.verbose) {
    // The bucket table, as DDPOptimizer's debug log prints it.
    std::vector<BucketInfo> buckets = readBuckets(*module);
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
    return (rc);
  }
  if (o.emit == "plan") {
    int rc;
    {
      mlir::TimingScope writing = timing.nest("write the plan");
      rc = finish(writeOutput(o, [&](llvm::raw_ostream &os) {
        return writePlan(*module, os);
      }));
    }
    return (rc);
  }
  if (o.emit == "dot")
    return finish(writeOutput(o, [&](llvm::raw_ostream &os) {
      return writeDot(*module, os);
    }));
  BuildOptions build;
  build.bulkSynchronous = o.bulkSynchronous;
  if (o.target == "cuda") {
    CudaOptions cuda;
    std::string why;
    cuda.toolkit = CudaOptions::findToolkit(why);
    if (cuda.toolkit.empty()) {
      llvm::errs() << "error: " << o.input
                   << ": --target cuda needs the CUDA toolkit (ptxas and "
                      "libdevice): "
                   << why << "\n";
      return 1;
    }
    if (o.precision)
      cuda.precision = *o.precision;
    // (Row chains stay off until measured and checked on a GPU.)
    cuda.rowChains = gpuRowChains();
    if (o.cudaChip) {
      cuda.chip = *o.cudaChip;
      cuda.features = CudaOptions::defaultFeatures(cuda.chip);
    }
    if (o.emit == "ptx")
      return finish(writeOutput(o, [&](llvm::raw_ostream &os) {
        return writePtx(*module, cuda, os, timing);
      }));
    build.cuda = cuda;
  }
  if (o.cpu)
    build.cpu = *o.cpu;
  if (o.threads)
    build.threads = *o.threads;
  std::string why;
  build.runtime = findRuntime(o.runtimeDir, argv0, (void *)&parseCommandLine,
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
  build.emit = o.emit == "lib" ? Emit::Lib : Emit::Exe;
  build.inputName = llvm::sys::path::filename(o.input).str();
  build.inputPath = o.input;
  read.push_back(build.cuda ? build.runtime.cuda : build.runtime.host);
  if (failed(writePrograms(*module, o.output, timing, build)))
    return (1);
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
  return (finish(0));
}
