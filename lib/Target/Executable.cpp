//===- Executable.cpp - partitioned module to programs on disk ------------===//

#include "rankc/Target/Executable.h"
#include "rankc/Target/OutputFolder.h"
#include "rankc/Target/ProgramModules.h"
#include "Library.h"
#include "Link.h"
#include "ObjectFile.h"
#include "rankc/Dialect/Comm/Comm.h"
#include "rankc/Target/Plan.h"
#include "rankc/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace rankc {

namespace {

/// lib/Target/launch.sh.in, compiled in (LaunchScript.inc).
constexpr const char *kLaunchTemplate =
#include "LaunchScript.inc"
    ;

/// OUT/launch: every program under MPICH's mpiexec, with the right ranks:
/// the template with the world size and the program of each run of ranks.
std::string launchScript(ModuleOp module) {
  int64_t ws = module->getAttrOfType<IntegerAttr>(comm::CommDialect::kWorldSize)
                   .getInt();
  std::vector<std::string> exeOfRank(ws);
  for (auto fn : module.getOps<func::FuncOp>()) {
    Attribute ranks = fn->getAttr(comm::CommDialect::kRanks);
    if (!ranks)
      continue;
    if (auto list = dyn_cast<DenseI64ArrayAttr>(ranks))
      for (int64_t r : list.asArrayRef())
        exeOfRank[r] = fn.getName().str();
    else
      for (auto &e : exeOfRank)
        e = fn.getName().str();
  }
  // MPMD segments: consecutive ranks of one executable share a segment;
  // the script builds mpiexec's command line from these lists.
  std::string layout, segmentRanks, segmentExes;
  for (int64_t r = 0; r < ws;) {
    int64_t end = r;
    while (end < ws && exeOfRank[end] == exeOfRank[r])
      ++end;
    std::string ranks = std::to_string(r) + "-" + std::to_string(end - 1);
    layout += (layout.empty() ? "ranks " : "\n#   ranks ") + ranks + ": " +
              exeOfRank[r];
    segmentRanks += (segmentRanks.empty() ? "" : " ") + ranks;
    segmentExes += (segmentExes.empty() ? "" : " ") + exeOfRank[r];
    r = end;
  }
  std::string script(kLaunchTemplate);
  auto substitute = [&](llvm::StringRef name, const std::string &value) {
    for (size_t at; (at = script.find(name.str())) != std::string::npos;)
      script.replace(at, name.size(), value);
  };
  substitute("@LAYOUT@", layout);
  substitute("@WORLD_SIZE@", std::to_string(ws));
  substitute("@SEG_RANKS@", segmentRanks);
  substitute("@SEG_EXES@", segmentExes);
  return script;
}

} // namespace

/// The lowering pipeline of one program for the chosen target.
void buildLowering(PassManager &pm, const BuildOptions &options) {
  if (options.cuda)
    buildCudaLoweringPipeline(pm, *options.cuda, options.bulkSynchronous);
  else
    buildCpuLoweringPipeline(pm, options.bulkSynchronous, options.threads);
}

LogicalResult writePtx(ModuleOp module, const CudaOptions &cuda,
                       llvm::raw_ostream &os, TimingScope &timing) {
  CudaOptions isa = cuda;
  isa.format = "isa";
  isa.lowerLaunches = false; // (the PTX is read from the gpu.binary ops)
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (!fn->hasAttr(comm::CommDialect::kRanks))
      continue;
    // The program, then its micro-step (gradient accumulation), if any.
    OwningOpRef<ModuleOp> modules[] = {extractProgram(module, fn.getName()),
                                       extractMicroStep(module, fn.getName())};
    for (auto [k, program] : llvm::enumerate(modules)) {
      if (!program)
        continue;
      std::string what = fn.getName().str() + (k ? " (micro-step)" : "");
      PassManager pm(module.getContext());
      TimingScope t = timing.nest("lower " + what);
      pm.enableTiming(t);
      buildCudaLoweringPipeline(pm, isa);
      if (failed(runVerifyingOnce(pm, *program, &t)))
        return failure();
      for (auto binary : program->getOps<gpu::BinaryOp>())
        for (Attribute a : binary.getObjects())
          os << "// program " << what << ", gpu.module " << binary.getName()
             << "\n"
             << cast<gpu::ObjectAttr>(a).getObject().getValue() << "\n";
    }
  }
  return success();
}

std::vector<std::string> programOutputs(ModuleOp module, StringRef out,
                                        Emit emit) {
  auto in = [&](const llvm::Twine &a, const llvm::Twine &b = "") {
    SmallString<256> path(out);
    llvm::sys::path::append(path, a, b);
    return path.str().str();
  };
  // plan.json first: the depfile names it as the target.
  std::vector<std::string> files = {in("plan.json")};
  for (const std::string &name : programNames(module)) {
    if (emit == Emit::Lib) {
      files.push_back(in("lib", "librankc_" + name + ".so"));
      files.push_back(in("include", "rankc_" + name + ".h"));
    } else {
      files.push_back(in(name));
    }
  }
  files.push_back(emit == Emit::Lib ? in("python", "rankc_program.py")
                                    : in("launch"));
  files.push_back(in(kOutputMarker));
  return files;
}

/// Runs build(0) ... build(n - 1) on up to one thread per core (one, when
/// the context is single-threaded: --mlir-disable-threading); fails when
/// any does, after all have finished.
static LogicalResult
buildInParallel(MLIRContext *ctx, size_t n,
                llvm::function_ref<LogicalResult(size_t)> build) {
  unsigned threads = ctx->isMultithreadingEnabled()
                         ? std::min<unsigned>(n, llvm::hardware_concurrency()
                                                     .compute_thread_count())
                         : 1;
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i)
      if (failed(build(i)))
        return failure();
    return success();
  }
  std::vector<char> ok(n, 0);
  llvm::StdThreadPool pool(llvm::hardware_concurrency(threads));
  for (size_t i = 0; i < n; ++i)
    pool.async([&, i] { ok[i] = succeeded(build(i)); });
  pool.wait();
  return success(llvm::all_of(ok, [](char b) { return b; }));
}

LogicalResult writePrograms(ModuleOp module, StringRef out,
                            TimingScope &timing, const BuildOptions &options) {
  MLIRContext *ctx = module.getContext();
  bool lib = options.emit == Emit::Lib;
  const std::string &archive =
      options.cuda ? options.runtime.cuda : options.runtime.host;
  if (archive.empty())
    return emitError(UnknownLoc::get(ctx))
           << "rankc's runtime" << (options.cuda ? " for CUDA" : "")
           << " is not in '" << options.runtime.dir << "'";
  // Build beside OUT and swap it in at the end: never a half-written OUT,
  // and never one that is not rankc's (OutputFolder.h).
  std::string stage;
  if (std::error_code ec = makeStageBeside(out, stage))
    return emitError(UnknownLoc::get(ctx))
           << "cannot create a folder beside '" << out << "' to build in: "
           << ec.message();
  auto makeDir = [&](StringRef sub) -> LogicalResult {
    SmallString<256> dir(stage);
    llvm::sys::path::append(dir, sub);
    if (std::error_code ec = llvm::sys::fs::create_directories(dir))
      return emitError(UnknownLoc::get(ctx))
             << "cannot create '" << dir << "': " << ec.message();
    return success();
  };
  if (failed(makeDir("")) ||
      (lib && (failed(makeDir("lib")) || failed(makeDir("include")) ||
               failed(makeDir("python")))))
    return failure();
  llvm::scope_exit cleanup([&] { llvm::sys::fs::remove_directories(stage); });
  auto writeFile = [&](const llvm::Twine &file, StringRef text,
                       bool executable) {
    SmallString<256> path(stage);
    llvm::sys::path::append(path, file);
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return failure();
    os << text;
    os.close();
    if (os.has_error())
      return failure();
    if (executable)
      llvm::sys::fs::setPermissions(path, llvm::sys::fs::all_read |
                                              llvm::sys::fs::all_exe |
                                              llvm::sys::fs::owner_write);
    return success();
  };

  // Programs are independent: each is lowered, optimized, code-generated
  // and linked on a thread of its own (as many at once as the machine has
  // cores), from its own copy of the module. Every output file belongs to
  // one program, so the build is the same whatever the order.
  std::vector<std::string> names = programNames(module);
  // Dialects load before the threads start (loading one is not safe while
  // other threads use the context): every dialect a pass of the pipeline
  // may create ops of.
  {
    PassManager pm(ctx);
    buildLowering(pm, options);
    DialectRegistry deps;
    pm.getDependentDialects(deps);
    for (StringRef dialect : deps.getDialectNames())
      ctx->getOrLoadDialect(dialect);
  }
  std::vector<OwningOpRef<ModuleOp>> programs, microSteps;
  // What each program's step (and micro-step) allocates, from its lowering
  // (rankc-step-memory), for plan.json.
  std::vector<DictionaryAttr> memory(names.size()), microMemory(names.size());
  for (const std::string &name : names) {
    programs.push_back(extractProgram(module, name));
    microSteps.push_back(extractMicroStep(module, name));
  }
  auto build = [&](size_t i) -> LogicalResult {
    const std::string &name = names[i];
    ModuleOp program = *programs[i];
    TimingScope t = timing.nest("build " + name);
    PassManager pm(ctx);
    pm.enableTiming(t);
    buildLowering(pm, options);
    if (failed(runVerifyingOnce(pm, program, &t)))
      return failure();
    memory[i] = program->getAttrDictionary();
    SmallString<256> object(stage), binary(stage);
    llvm::sys::path::append(object, name);
    if (lib)
      llvm::sys::path::append(binary, "lib", "librankc_" + name + ".so");
    else
      llvm::sys::path::append(binary, name);
    FailureOr<std::vector<std::string>> objects =
        emitObjects(program, object, t, options.cpu);
    if (failed(objects))
      return failure();
    // With gradient accumulation, the micro-step is lowered the same way
    // and linked into the same binary under names of its own.
    if (OwningOpRef<ModuleOp> &micro = microSteps[i]) {
      TimingScope m = t.nest("micro-step");
      PassManager mpm(ctx);
      mpm.enableTiming(m);
      buildLowering(mpm, options);
      if (failed(runVerifyingOnce(mpm, *micro, &m)))
        return failure();
      microMemory[i] = (*micro)->getAttrDictionary();
      prefixMicroStepSymbols(*micro);
      FailureOr<std::vector<std::string>> more =
          emitObjects(*micro, (object + ".micro").str(), m, options.cpu);
      if (failed(more))
        return failure();
      objects->insert(objects->end(), more->begin(), more->end());
    }
    TimingScope linking = t.nest("link");
    StringRef openmp =
        options.threads > 1 ? StringRef(options.runtime.openmp) : StringRef();
    LogicalResult linked =
        lib ? linkLibrary(ctx, *objects, archive, options.runtime.mpich,
                          name, binary, openmp)
            : linkExecutable(ctx, *objects, archive, options.runtime.mpich,
                             binary, openmp);
    for (const std::string &o : *objects)
      llvm::sys::fs::remove(o);
    if (failed(linked))
      return failure();
    if (lib && failed(writeFile("include/rankc_" + name + ".h",
                                libraryHeader(name, loweredManifest(program),
                                              options.inputName),
                                false)))
      return emitError(UnknownLoc::get(ctx)) << "cannot write into " << stage;
    return success();
  };
  if (failed(buildInParallel(ctx, names.size(), build)))
    return failure();
  // (Set here, on one thread, where writePlan reads them.)
  for (size_t i = 0; i < names.size(); ++i)
    if (auto fn = module.lookupSymbol<func::FuncOp>(names[i]))
      setPlannedMemory(fn, memory[i], microMemory[i]);
  std::string plan;
  llvm::raw_string_ostream planOs(plan);
  if (failed(writePlan(module, planOs)) ||
      failed(writeFile("plan.json", plan, false)) ||
      failed(lib ? writeFile("python/rankc_program.py", pythonModule(), false)
                 : writeFile("launch", launchScript(module), true)))
    return emitError(UnknownLoc::get(ctx)) << "cannot write into " << stage;
  if (writeOutputMarker(stage))
    return emitError(UnknownLoc::get(ctx)) << "cannot write into " << stage;
  // Checked again: something may have been put at OUT during the build.
  std::string why = whyNotOutputFolder(out, options.inputPath);
  if (!why.empty())
    return emitError(UnknownLoc::get(ctx)) << why;
  if (std::error_code ec = swapIntoPlace(stage, out))
    return emitError(UnknownLoc::get(ctx))
           << "cannot move the build into '" << out << "': " << ec.message();
  return success();
}

} // namespace rankc
