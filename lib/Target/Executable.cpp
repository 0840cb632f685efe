//===- Executable.cpp - partitioned module to programs on disk ------------===//

#include "rankc/Target/Executable.h"
#include "Library.h"
#include "Link.h"
#include "Optimize.h"
#include "rankc/Dialect/Comm/Comm.h"
#include "rankc/Target/Plan.h"
#include "rankc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;

namespace rankc {

namespace {

/// A copy of `module` with one program and its parts.
OwningOpRef<ModuleOp> extractProgram(ModuleOp module, StringRef name) {
  OwningOpRef<ModuleOp> copy = module.clone();
  for (auto fn : llvm::make_early_inc_range(copy->getOps<func::FuncOp>())) {
    bool program = fn->hasAttr(comm::CommDialect::kRanks);
    auto partOf = fn->getAttrOfType<StringAttr>(comm::CommDialect::kPartOf);
    if ((program && fn.getName() != name) ||
        (partOf && partOf.getValue() != name))
      fn.erase();
  }
  return copy;
}

/// LLVM IR of a lowered module, optimized and emitted as an object file.
/// Each phase is timed under `timing` (--timing: the LLVM side of a build,
/// which on large programs is most of it).
void initializeNativeTarget() {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
}

/// The runtime serves every memref.alloc from a step's arena: like
/// malloc's, each buffer it returns is fresh, reachable through no other
/// pointer. Said to LLVM (a noalias result), a loop that reads a program's
/// inputs and writes its new buffers vectorizes without run-time overlap
/// checks and the scalar copy of the loop they guard, which were most of
/// the code (and of the compile time) of programs of small tensors.
void markAllocationsNoAlias(llvm::Module &module) {
  for (llvm::StringRef name :
       {"_mlir_memref_to_llvm_alloc", "_mlir_memref_to_llvm_aligned_alloc"})
    if (llvm::Function *f = module.getFunction(name))
      f->addRetAttr(llvm::Attribute::NoAlias);
}

LogicalResult emitObject(ModuleOp module, StringRef path, TimingScope &timing,
                         StringRef cpu) {
  initializeNativeTarget();
  llvm::LLVMContext llvmContext;
  TimingScope translating = timing.nest("translate to LLVM IR");
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "rankc");
  translating.stop();
  if (!llvmModule)
    return module.emitError("cannot translate the program to LLVM IR");
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return module.emitError("no LLVM target for ") << triple.str() << ": "
                                                  << error;
  // By default x86-64-v3 (AVX2): vectorized, and runs on every machine of
  // the project, not only on the one that compiled it. --cpu native takes
  // the compiling machine's processor and every feature it has (AVX-512
  // where there is one).
  std::string cpuName = cpu.str(), features;
  if (cpu == "native") {
    cpuName = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures f;
    for (const auto &[feature, on] : llvm::sys::getHostCPUFeatures())
      f.AddFeature(feature, on);
    features = f.getString();
  } else if (!triple.isX86() && cpu == "x86-64-v3") {
    cpuName = "generic";
  }
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpuName, features, llvm::TargetOptions(), llvm::Reloc::PIC_));
  markAllocationsNoAlias(*llvmModule);
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(triple);
  TimingScope optimizing = timing.nest("LLVM -O3");
  if (llvm::Error err =
          optimizeModule(*llvmModule, *machine))
    return module.emitError("LLVM optimization failed: ")
           << llvm::toString(std::move(err));
  optimizing.stop();
  TimingScope generating = timing.nest("LLVM code generation");
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return module.emitError("cannot write '") << path << "': " << ec.message();
  llvm::legacy::PassManager pm;
  if (machine->addPassesToEmitFile(pm, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return module.emitError("LLVM cannot emit object code for ")
           << triple.str();
  pm.run(*llvmModule);
  return success();
}

/// OUT/launch: every program under MPICH's mpiexec, with the right ranks.
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
  // MPMD segments: consecutive ranks of one executable share a segment.
  std::string segments, layout, slurmRanks, slurmExes;
  for (int64_t r = 0; r < ws;) {
    int64_t end = r;
    while (end < ws && exeOfRank[end] == exeOfRank[r])
      ++end;
    if (!segments.empty())
      segments += " :";
    segments += " -n " + std::to_string(end - r) + " \"$HERE/" + exeOfRank[r] +
                "\" \"${ARGS[@]}\"";
    layout += "#   ranks " + std::to_string(r) + "-" + std::to_string(end - 1) +
              ": " + exeOfRank[r] + "\n";
    slurmRanks += " " + std::to_string(r) + "-" + std::to_string(end - 1);
    slurmExes += " " + exeOfRank[r];
    r = end;
  }
  return R"SH(#!/usr/bin/env bash
# Generated by rankc: runs every program of the DAG under MPICH's mpiexec.
#   launch [--inputs IN] [--outputs RES] [--steps N] [--trace FILE]
#          [--stats FILE] [--kernel-stats DIR] [--timeout SECONDS]
#          [--np-check] [--slurm-conf FILE] [-- MPIEXEC-ARGS...]
# --steps N runs N steps in one process per rank, carrying state (and the
# optimizer's parameters) from step to step; outputs are the last step's.
# Arguments after -- go to mpiexec before the programs.
# --slurm-conf FILE writes the same run as a configuration for Slurm's
# `srun -n WORLD --multi-prog FILE` (outputs then go straight to RES) and
# exits; RANKC_MPIEXEC names another mpiexec.
# Inputs: IN/rank<r>/<input-id>.npy; without --inputs, reproducible values
# (splitmix64 seeded with FNV-1a(input id) xor rank; floats in [-1, 1),
# integers in [-8, 8]). Outputs: RES/rank<r>/<name>.npy (default RES:
# results/ beside this script), moved there only when every rank succeeded.
# World size )SH" + std::to_string(ws) + R"SH(; layout:
)SH" + layout + R"SH(set -u
HERE=$(cd "$(dirname "$0")" && pwd)
RES="$HERE/results"
ARGS=()
MPIARGS=()
CHECK=0
SLURM_CONF=
SEG_RANKS=()SH" + slurmRanks + R"SH()
SEG_EXES=()SH" + slurmExes + R"SH()
USAGE="usage: launch [--inputs IN] [--outputs RES] [--steps N] [--trace FILE] [--stats FILE] [--kernel-stats DIR] [--timeout S] [--np-check] [--slurm-conf FILE] [-- MPIEXEC-ARGS...]"
while [ $# -gt 0 ]; do
  case "$1" in
    --inputs|--outputs|--steps|--trace|--stats|--kernel-stats|--timeout|--slurm-conf)
      if [ $# -lt 2 ]; then echo "error: $1 needs a value" >&2; echo "$USAGE" >&2; exit 2; fi ;;
  esac
  case "$1" in
    --inputs)
      if [ ! -d "$2" ]; then echo "error: --inputs '$2' is not a directory" >&2; exit 2; fi
      ARGS+=(--inputs "$(cd "$2" && pwd)"); shift 2 ;;
    --outputs) RES=$2; shift 2 ;;
    --trace) ARGS+=(--trace "$2"); shift 2 ;;
    --stats) ARGS+=(--stats "$2"); shift 2 ;;
    --kernel-stats) ARGS+=(--kernel-stats "$2"); shift 2 ;;
    --timeout)
      # Seconds > 0, as a plain decimal (no nan, inf or words: they would
      # turn the watchdog off or into 0 s).
      if ! [[ "$2" =~ ^([0-9]+[.]?[0-9]*|[.][0-9]+)$ ]] || [[ "$2" =~ ^[0.]+$ ]]; then
        echo "error: --timeout takes a number of seconds > 0, got '$2'" >&2; exit 2
      fi
      ARGS+=(--timeout "$2"); shift 2 ;;
    --steps)
      case "$2" in ''|*[!0-9]*|0) echo "error: --steps takes an integer >= 1, got '$2'" >&2; exit 2 ;; esac
      ARGS+=(--steps "$2"); shift 2 ;;
    --np-check) CHECK=1; shift ;;
    --slurm-conf) SLURM_CONF=$2; shift 2 ;;
    --) shift; MPIARGS=("$@"); break ;;
    *) echo "error: unknown option '$1'" >&2
       echo "$USAGE" >&2
       exit 2 ;;
  esac
done
if [ -n "$SLURM_CONF" ]; then
  # srun --multi-prog: "RANKS PROGRAM ARGS..." per line; no staging (srun
  # runs the programs itself), so the outputs are written in place and are
  # complete only when srun exits 0.
  mkdir -p "$RES" || exit 1
  RES=$(cd "$RES" && pwd)
  quote() { case "$1" in *[[:space:]]*) printf '"%s"' "$1" ;; *) printf '%s' "$1" ;; esac; }
  {
    echo "# srun --multi-prog configuration of $HERE/launch (world size )SH" + std::to_string(ws) + R"SH()"
    echo "# run: srun -n )SH" + std::to_string(ws) + R"SH( --multi-prog $SLURM_CONF"
    for i in "${!SEG_RANKS[@]}"; do
      line="${SEG_RANKS[$i]} $(quote "$HERE/${SEG_EXES[$i]}")"
      for a in "${ARGS[@]}" --outputs "$RES"; do line+=" $(quote "$a")"; done
      echo "$line"
    done
  } > "$SLURM_CONF" || exit 1
  echo "wrote $SLURM_CONF: run it with srun -n )SH" + std::to_string(ws) + R"SH( --multi-prog $SLURM_CONF"
  exit 0
fi
MPIEXEC=${RANKC_MPIEXEC:-$(command -v mpiexec.mpich || command -v mpiexec)}
if [ -z "$MPIEXEC" ]; then echo "error: no mpiexec found (install mpich)" >&2; exit 1; fi
if [ $CHECK = 1 ]; then
  echo "world size )SH" + std::to_string(ws) + R"SH(: $MPIEXEC${MPIARGS[*]:+ ${MPIARGS[*]}})SH" + segments + R"SH("
  exit 0
fi
if ! mkdir -p "$RES" 2>/dev/null; then echo "error: cannot create the outputs folder '$RES'" >&2; exit 1; fi
RES=$(cd "$RES" && pwd)
STAGE=$(mktemp -d "$RES/.rankc-partial.XXXXXX") || { echo "error: cannot write in '$RES'" >&2; exit 1; }
trap 'rm -rf "$STAGE"' EXIT
ARGS+=(--outputs "$STAGE")
# mpiexec in the background, so that SIGINT and SIGTERM reach this script:
# it stops mpiexec and every rank of this run (Hydra starts them in
# sessions of their own, which no signal to this process group reaches:
# they are found by their command line, which names this run's staging
# folder), removes the partial outputs and fails.
PID=
stop() {
  trap - INT TERM HUP
  if [ -n "$PID" ]; then
    procs=$(pgrep -f -- "--outputs $STAGE" | grep -vx "$$")
    kill -TERM "$PID" $procs 2>/dev/null
    for _ in $(seq 30); do kill -0 "$PID" $procs 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$PID" $procs 2>/dev/null
    wait "$PID" 2>/dev/null
  fi
  rm -rf "$STAGE"
  echo "error: interrupted ($1); no outputs of this run were written to $RES" >&2
  exit 1
}
trap 'stop SIGINT' INT
trap 'stop SIGTERM' TERM
trap 'stop SIGHUP' HUP
# A rank that dies by a signal (killed, out of memory) cannot say so
# itself, and Hydra names only its pid: each rank records its pid in
# RANKC_PID_DIR (runtime/Main.cpp), and mpiexec's output goes through tee
# into the staging folder, so that the pid Hydra names maps to a rank.
export RANKC_PID_DIR="$STAGE/.pids"
mkdir -p "$RANKC_PID_DIR"
mkfifo "$STAGE/.mpiexec.fifo"
tee "$STAGE/.mpiexec.out" < "$STAGE/.mpiexec.fifo" &
TEE=$!
"$MPIEXEC" "${MPIARGS[@]}")SH" + segments + R"SH( > "$STAGE/.mpiexec.fifo" &
PID=$!
wait "$PID"
rc=$?
PID=
wait "$TEE" 2>/dev/null
if [ $rc -ne 0 ]; then
  dead=$(sed -n 's/^= *PID \([0-9][0-9]*\) RUNNING AT .*/\1/p' "$STAGE/.mpiexec.out" | head -1)
  how=$(sed -n 's/^YOUR APPLICATION TERMINATED WITH THE EXIT STRING: //p' "$STAGE/.mpiexec.out" | head -1)
  case "$how" in
    *signal*) [ -n "$dead" ] && [ -f "$RANKC_PID_DIR/$dead" ] &&
      echo "error: rank $(cat "$RANKC_PID_DIR/$dead") (pid $dead) died: $how" >&2 ;;
  esac
  old=$(find "$RES" -path "$RES/.rankc-partial*" -prune -o -name '*.npy' -print 2>/dev/null | head -1)
  echo "error: the run failed (exit $rc); no outputs of this run were written to $RES${old:+ (the .npy files there are from an earlier run)}" >&2
  exit 1
fi
# All or nothing: every destination is checked before the first file
# moves, so that a file or folder in the way leaves RES as it was.
for d in "$STAGE"/rank*; do
  [ -d "$d" ] || continue
  dest="$RES/$(basename "$d")"
  if [ -e "$dest" ] && [ ! -d "$dest" ]; then
    echo "error: cannot create '$dest' (a file is in the way?); the outputs stay in $STAGE" >&2
    trap - EXIT; exit 1
  fi
  for f in "$d"/*.npy; do
    if [ -e "$f" ] && [ -d "$dest/$(basename "$f")" ]; then
      echo "error: cannot write '$dest/$(basename "$f")'; the outputs stay in $STAGE" >&2
      trap - EXIT; exit 1
    fi
  done
done
staged=0
for d in "$STAGE"/rank*; do
  [ -d "$d" ] || continue
  dest="$RES/$(basename "$d")"
  if ! mkdir -p "$dest" 2>/dev/null || [ ! -d "$dest" ]; then
    echo "error: cannot create '$dest' (a file is in the way?); the outputs stay in $STAGE" >&2
    trap - EXIT; exit 1
  fi
  for f in "$d"/*.npy; do
    [ -e "$f" ] || continue
    staged=$((staged + 1))
    if [ -d "$dest/$(basename "$f")" ] || ! mv -f "$f" "$dest/" 2>/dev/null; then
      echo "error: cannot write '$dest/$(basename "$f")'; the outputs stay in $STAGE" >&2
      trap - EXIT; exit 1
    fi
  done
done
echo "ran )SH" + std::to_string(ws) + R"SH( ranks; $staged output files in $RES (rank<r>/<name>.npy)"
exit 0
)SH";
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
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (!fn->hasAttr(comm::CommDialect::kRanks))
      continue;
    OwningOpRef<ModuleOp> program = extractProgram(module, fn.getName());
    PassManager pm(module.getContext());
    TimingScope t = timing.nest("lower " + fn.getName().str());
    pm.enableTiming(t);
    buildCudaLoweringPipeline(pm, isa);
    if (failed(runVerifyingOnce(pm, *program, &t)))
      return failure();
    for (auto binary : program->getOps<gpu::BinaryOp>())
      for (Attribute a : binary.getObjects())
        os << "// program " << fn.getName() << ", gpu.module "
           << binary.getName() << "\n"
           << cast<gpu::ObjectAttr>(a).getObject().getValue() << "\n";
  }
  return success();
}

std::vector<std::string> programNames(ModuleOp module) {
  std::vector<std::string> names;
  for (auto fn : module.getOps<func::FuncOp>())
    if (fn->hasAttr(comm::CommDialect::kRanks))
      names.push_back(fn.getName().str());
  return names;
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
  // Build beside OUT and swap it in at the end: never a half-written OUT.
  SmallString<256> stage(out);
  stage += ".rankc-tmp";
  llvm::sys::fs::remove_directories(stage);
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
  std::vector<OwningOpRef<ModuleOp>> programs;
  for (const std::string &name : names)
    programs.push_back(extractProgram(module, name));
  auto build = [&](size_t i) -> LogicalResult {
    const std::string &name = names[i];
    ModuleOp program = *programs[i];
    TimingScope t = timing.nest("build " + name);
    PassManager pm(ctx);
    pm.enableTiming(t);
    buildLowering(pm, options);
    if (failed(runVerifyingOnce(pm, program, &t)))
      return failure();
    SmallString<256> object(stage), binary(stage);
    llvm::sys::path::append(object, name + ".o");
    if (lib)
      llvm::sys::path::append(binary, "lib", "librankc_" + name + ".so");
    else
      llvm::sys::path::append(binary, name);
    if (failed(emitObject(program, object, t, options.cpu)))
      return failure();
    TimingScope linking = t.nest("link");
    StringRef openmp =
        options.threads > 1 ? StringRef(options.runtime.openmp) : StringRef();
    LogicalResult linked =
        lib ? linkLibrary(ctx, object, archive, options.runtime.mpich, name,
                          binary, openmp)
            : linkExecutable(ctx, object, archive, options.runtime.mpich,
                             binary, openmp);
    llvm::sys::fs::remove(object);
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
  std::string plan;
  llvm::raw_string_ostream planOs(plan);
  if (failed(writePlan(module, planOs)) ||
      failed(writeFile("plan.json", plan, false)) ||
      failed(lib ? writeFile("python/rankc_program.py", pythonModule(), false)
                 : writeFile("launch", launchScript(module), true)))
    return emitError(UnknownLoc::get(ctx)) << "cannot write into " << stage;
  llvm::sys::fs::remove_directories(out);
  if (std::error_code ec = llvm::sys::fs::rename(stage, out))
    return emitError(UnknownLoc::get(ctx))
           << "cannot move the build into '" << out << "': " << ec.message();
  return success();
}

} // namespace rankc

bool rankc::isKnownCpu(StringRef cpu) {
  if (cpu == "native")
    return true;
  initializeNativeTarget();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return false;
  // (Asked about `cpu` itself, LLVM would print its own complaint.)
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(triple, "", ""));
  return info && llvm::any_of(info->getAllProcessorDescriptions(),
                              [&](const llvm::SubtargetSubTypeKV &kv) {
                                return cpu == kv.Key;
                              });
}


