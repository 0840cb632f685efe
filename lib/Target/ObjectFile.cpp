//===- ObjectFile.cpp - a lowered program to object files -----------------===//
//
// LLVM optimizes and generates a module on one thread. A program of one
// part (a model's training step: resnet18 is ~650 loop nests) then used one
// core however many there were, and a program of many small nodes spent
// seconds in its glue. A large program is cut into pieces first
// (ProgramPieces.cpp, in MLIR); each piece is translated into an
// LLVMContext of its own (a context is not shared between threads), then
// optimized (glue: not) and generated, on the MLIR context's threads.
// The cut depends on the code only, never on the cores, so that a build
// is the same bytes on any machine (test/Target/parallel-build.test).
//
//===----------------------------------------------------------------------===//

#include "ObjectFile.h"
#include "Optimize.h"
#include "ProgramPieces.h"
#include "rankc/Target/Executable.h"

#include "mlir/IR/Threading.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <numeric>

using namespace mlir;

namespace rankc {

namespace {

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

/// What a piece's thread needs to make its own TargetMachine.
struct Machine {
  const llvm::Target *target;
  llvm::Triple triple;
  std::string cpu, features;
  std::unique_ptr<llvm::TargetMachine> make(bool glue) const {
    return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
        triple, cpu, features, llvm::TargetOptions(), llvm::Reloc::PIC_,
        std::nullopt,
        glue ? llvm::CodeGenOptLevel::None : llvm::CodeGenOptLevel::Default));
  }
};

/// -O3 and code generation of `module` into the object file `path` (a
/// glue piece: code generation at -O0 only); an empty string, or what went
/// wrong.
std::string optimizeAndGenerate(llvm::Module &module, const Machine &m,
                                StringRef path, TimingScope &timing,
                                bool glue = false) {
  std::unique_ptr<llvm::TargetMachine> machine = m.make(glue);
  module.setDataLayout(machine->createDataLayout());
  module.setTargetTriple(m.triple);
  if (!glue) { // (glue is all optnone: -O3 would skip every function)
    TimingScope optimizing = timing.nest("LLVM -O3");
    if (llvm::Error err = optimizeModule(module, *machine))
      return "LLVM optimization failed: " + llvm::toString(std::move(err));
  }
  TimingScope generating = timing.nest("LLVM code generation");
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return "cannot write '" + path.str() + "': " + ec.message();
  llvm::legacy::PassManager pm;
  if (machine->addPassesToEmitFile(pm, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return "LLVM cannot emit object code for " + m.triple.str();
  pm.run(module);
  return "";
}

} // namespace

FailureOr<std::vector<std::string>> emitObjects(ModuleOp module,
                                                StringRef base,
                                                TimingScope &timing,
                                                StringRef cpu) {
  initializeNativeTarget();
  Machine m;
  m.triple = llvm::Triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  m.target = llvm::TargetRegistry::lookupTarget(m.triple, error);
  if (!m.target)
    return module.emitError("no LLVM target for ")
           << m.triple.str() << ": " << error;
  // By default x86-64-v3 (AVX2): vectorized, and runs on every machine of
  // the project, not only on the one that compiled it. --cpu native takes
  // the compiling machine's processor and every feature it has (AVX-512
  // where there is one).
  m.cpu = cpu.str();
  if (cpu == "native") {
    m.cpu = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures f;
    for (const auto &[feature, on] : llvm::sys::getHostCPUFeatures())
      f.AddFeature(feature, on);
    m.features = f.getString();
  } else if (!m.triple.isX86() && cpu == "x86-64-v3") {
    m.cpu = "generic";
  }

  ProgramPieces cut;
  {
    TimingScope cutting = timing.nest("cut into pieces");
    cut = cutIntoPieces(module);
  }
  if (cut.pieces.empty())
    cut.pieces.push_back({module, /*glue=*/false, 0});
  size_t count = cut.pieces.size();
  std::vector<std::string> objects;
  for (size_t i = 0; i < count; ++i)
    objects.push_back(base.str() + (i ? "." + std::to_string(i) : "") + ".o");

  // Each piece is translated into an LLVMContext of its own, then
  // optimized (glue: not) and generated, on the context's threads; the
  // largest start first.
  std::vector<std::string> why(count);
  auto build = [&](size_t i) {
    const ProgramPiece &piece = cut.pieces[i];
    TimingScope t = count == 1 ? timing.nest("LLVM")
                               : timing.nest("LLVM piece " + std::to_string(i));
    llvm::LLVMContext llvmContext;
    TimingScope translating = t.nest("translate to LLVM IR");
    std::unique_ptr<llvm::Module> llvmModule =
        translateModuleToLLVMIR(piece.module, llvmContext, "rankc");
    translating.stop();
    if (!llvmModule) {
      why[i] = "cannot translate the program to LLVM IR";
      return;
    }
    markAllocationsNoAlias(*llvmModule);
    why[i] = optimizeAndGenerate(*llvmModule, m, objects[i], t, piece.glue);
  };
  std::vector<size_t> order(count);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return cut.pieces[a].ops > cut.pieces[b].ops;
  });
  mlir::parallelFor(module.getContext(), 0, count,
                    [&](size_t k) { build(order[k]); });
  for (const std::string &w : why)
    if (!w.empty())
      return module.emitError(w);
  return objects;
}

} // namespace rankc

bool rankc::isKnownCpu(StringRef cpu) {
  if (cpu == "native")
    return true;
  rankc::initializeNativeTarget();
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


