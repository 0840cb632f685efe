//===- Executable.cpp - partitioned module to programs on disk ------------===//

#include "rankc/Target/Executable.h"
#include "rankc/Dialect/Comm/Comm.h"
#include "rankc/Target/Plan.h"
#include "rankc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
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
#include "llvm/TargetParser/Host.h"

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
LogicalResult emitObject(ModuleOp module, StringRef path) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "rankc");
  if (!llvmModule)
    return module.emitError("cannot translate the program to LLVM IR");
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return module.emitError("no LLVM target for ") << triple.str() << ": "
                                                  << error;
  // x86-64-v3 (AVX2): vectorized, and runs on every machine of the project,
  // not only on the one that compiled it.
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, triple.isX86() ? "x86-64-v3" : "generic", "",
      llvm::TargetOptions(), llvm::Reloc::PIC_));
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(triple);
  if (llvm::Error err =
          makeOptimizingTransformer(3, 0, machine.get())(llvmModule.get()))
    return module.emitError("LLVM optimization failed: ")
           << llvm::toString(std::move(err));
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

#ifdef RANKC_CUDA_RUNTIME_LIBRARY
constexpr const char *kCudaRuntime = RANKC_CUDA_RUNTIME_LIBRARY;
#else
constexpr const char *kCudaRuntime = nullptr;
#endif

/// Links an object with the runtime (host or CUDA flavour) and MPICH into an
/// executable. The CUDA runtime opens the driver itself (dlopen).
LogicalResult link(MLIRContext *ctx, StringRef object, StringRef exe,
                   bool cuda) {
  auto cxx = llvm::sys::findProgramByName("c++");
  if (!cxx)
    return emitError(UnknownLoc::get(ctx))
           << "cannot link: no C++ compiler ('c++') on PATH";
  std::string errors;
  SmallVector<StringRef> args = {*cxx,
                                 object,
                                 cuda ? kCudaRuntime : RANKC_RUNTIME_LIBRARY,
                                 RANKC_MPICH_LIBRARY,
                                 "-lm",
                                 "-ldl",
                                 "-o",
                                 exe};
  int rc = llvm::sys::ExecuteAndWait(*cxx, args, std::nullopt, {}, 0, 0,
                                     &errors);
  if (rc != 0)
    return emitError(UnknownLoc::get(ctx))
           << "linking '" << exe << "' failed (" << rc << "): " << errors;
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
  std::string segments, layout;
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
    r = end;
  }
  return R"SH(#!/usr/bin/env bash
# Generated by rankc: runs every program of the DAG under MPICH's mpiexec.
#   launch [--inputs IN] [--outputs RES] [--steps N] [--trace FILE]
#          [--stats FILE] [--kernel-stats DIR] [--timeout SECONDS]
#          [--np-check] [-- MPIEXEC-ARGS...]
# --steps N runs N steps in one process per rank, carrying state (and the
# optimizer's parameters) from step to step; outputs are the last step's.
# Arguments after -- go to mpiexec before the programs.
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
USAGE="usage: launch [--inputs IN] [--outputs RES] [--steps N] [--trace FILE] [--stats FILE] [--kernel-stats DIR] [--timeout S] [--np-check] [-- MPIEXEC-ARGS...]"
while [ $# -gt 0 ]; do
  case "$1" in
    --inputs|--outputs|--steps|--trace|--stats|--kernel-stats|--timeout)
      if [ $# -lt 2 ]; then echo "error: $1 needs a value" >&2; echo "$USAGE" >&2; exit 2; fi ;;
  esac
  case "$1" in
    --inputs) ARGS+=(--inputs "$(cd "$2" && pwd)") || exit 1; shift 2 ;;
    --outputs) RES=$2; shift 2 ;;
    --trace) ARGS+=(--trace "$2"); shift 2 ;;
    --stats) ARGS+=(--stats "$2"); shift 2 ;;
    --kernel-stats) ARGS+=(--kernel-stats "$2"); shift 2 ;;
    --timeout) ARGS+=(--timeout "$2"); shift 2 ;;
    --steps)
      case "$2" in ''|*[!0-9]*|0) echo "error: --steps takes an integer >= 1, got '$2'" >&2; exit 2 ;; esac
      ARGS+=(--steps "$2"); shift 2 ;;
    --np-check) CHECK=1; shift ;;
    --) shift; MPIARGS=("$@"); break ;;
    *) echo "error: unknown option '$1'" >&2
       echo "$USAGE" >&2
       exit 2 ;;
  esac
done
MPIEXEC=${RANKC_MPIEXEC:-$(command -v mpiexec.mpich || command -v mpiexec)}
if [ -z "$MPIEXEC" ]; then echo "error: no mpiexec found (install mpich)" >&2; exit 1; fi
if [ $CHECK = 1 ]; then
  echo "world size )SH" + std::to_string(ws) + R"SH(: $MPIEXEC${MPIARGS[*]:+ ${MPIARGS[*]}})SH" + segments + R"SH("
  exit 0
fi
mkdir -p "$RES" || exit 1
RES=$(cd "$RES" && pwd)
STAGE=$(mktemp -d "$RES/.rankc-partial.XXXXXX") || exit 1
trap 'rm -rf "$STAGE"' EXIT
ARGS+=(--outputs "$STAGE")
"$MPIEXEC" "${MPIARGS[@]}")SH" + segments + R"SH(
rc=$?
if [ $rc -ne 0 ]; then
  echo "error: the run failed (exit $rc); no outputs were written to $RES" >&2
  exit 1
fi
for d in "$STAGE"/rank*; do
  [ -d "$d" ] || continue
  mkdir -p "$RES/$(basename "$d")" && mv -f "$d"/*.npy "$RES/$(basename "$d")/" 2>/dev/null
done
count=$(find "$RES" -path "$RES/.rankc-partial*" -prune -o -name '*.npy' -print | wc -l)
echo "ran )SH" + std::to_string(ws) + R"SH( ranks; $count output files in $RES (rank<r>/<name>.npy)"
exit 0
)SH";
}

} // namespace

bool cudaAvailable() { return kCudaRuntime != nullptr; }

/// The lowering pipeline of one program for the chosen target.
void buildLowering(PassManager &pm, const BuildOptions &options) {
  if (options.cuda)
    buildCudaLoweringPipeline(pm, *options.cuda, options.bulkSynchronous);
  else
    buildCpuLoweringPipeline(pm, options.bulkSynchronous);
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
    if (failed(pm.run(*program)))
      return failure();
    for (auto binary : program->getOps<gpu::BinaryOp>())
      for (Attribute a : binary.getObjects())
        os << "// program " << fn.getName() << ", gpu.module "
           << binary.getName() << "\n"
           << cast<gpu::ObjectAttr>(a).getObject().getValue() << "\n";
  }
  return success();
}

LogicalResult writeExecutables(ModuleOp module, StringRef out,
                               TimingScope &timing,
                               const BuildOptions &options) {
  MLIRContext *ctx = module.getContext();
  // Build beside OUT and swap it in at the end: never a half-written OUT.
  SmallString<256> stage(out);
  stage += ".rankc-tmp";
  llvm::sys::fs::remove_directories(stage);
  if (std::error_code ec = llvm::sys::fs::create_directories(stage))
    return emitError(UnknownLoc::get(ctx))
           << "cannot create '" << stage << "': " << ec.message();
  llvm::scope_exit cleanup([&] { llvm::sys::fs::remove_directories(stage); });

  for (auto fn : module.getOps<func::FuncOp>()) {
    if (!fn->hasAttr(comm::CommDialect::kRanks))
      continue;
    std::string name = fn.getName().str();
    TimingScope t = timing.nest("build " + name);
    OwningOpRef<ModuleOp> program = extractProgram(module, name);
    PassManager pm(ctx);
    pm.enableTiming(t);
    buildLowering(pm, options);
    if (failed(pm.run(*program)))
      return failure();
    SmallString<256> object(stage), exe(stage);
    llvm::sys::path::append(object, name + ".o");
    llvm::sys::path::append(exe, name);
    if (failed(emitObject(*program, object)) || failed(link(ctx, object, exe, bool(options.cuda))))
      return failure();
    llvm::sys::fs::remove(object);
  }
  auto writeFile = [&](StringRef file, StringRef text, bool executable) {
    SmallString<256> path(stage);
    llvm::sys::path::append(path, file);
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return failure();
    os << text;
    os.close();
    if (executable)
      llvm::sys::fs::setPermissions(path, llvm::sys::fs::all_read |
                                              llvm::sys::fs::all_exe |
                                              llvm::sys::fs::owner_write);
    return success();
  };
  std::string plan;
  llvm::raw_string_ostream planOs(plan);
  if (failed(writePlan(module, planOs)) ||
      failed(writeFile("plan.json", plan, false)) ||
      failed(writeFile("launch", launchScript(module), true)))
    return emitError(UnknownLoc::get(ctx)) << "cannot write into " << stage;
  llvm::sys::fs::remove_directories(out);
  if (std::error_code ec = llvm::sys::fs::rename(stage, out))
    return emitError(UnknownLoc::get(ctx))
           << "cannot move the build into '" << out << "': " << ec.message();
  return success();
}

} // namespace rankc
