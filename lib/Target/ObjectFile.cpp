//===- ObjectFile.cpp - a lowered program to object files -----------------===//
//
// LLVM optimizes and generates a module on one thread. A program of one
// part (a model's training step: resnet18 is ~650 loop nests) then used one
// core however many there were. Such a module is split into pieces of about
// kInstructionsPerPiece instructions of optimized code (functions marked
// optnone cost little and are not counted); each piece is written as
// bitcode and read back into an LLVMContext of its own (a context is not
// shared between threads), then optimized and generated on its own thread.
// The glue, when there is much of it, is a piece of its own, generated at
// -O0 in the module it was translated into.
// Splitting depends on the code only, never on the cores, so that a build
// is the same bytes on any machine (test/Target/parallel-build.test).
//
//===----------------------------------------------------------------------===//

#include "ObjectFile.h"
#include "Optimize.h"
#include "rankc/Target/Executable.h"

#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/SplitModule.h"

using namespace mlir;

namespace rankc {

namespace {

/// Instructions of optimized code per piece, and pieces at most.
constexpr size_t kInstructionsPerPiece = 8000;
constexpr unsigned kMaxPieces = 16;

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

unsigned piecesFor(const llvm::Module &module) {
  size_t optimized = 0;
  for (const llvm::Function &f : module)
    if (!f.isDeclaration() && !f.hasOptNone())
      optimized += f.getInstructionCount();
  return std::clamp<size_t>(optimized / kInstructionsPerPiece, 1, kMaxPieces);
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
  llvm::LLVMContext llvmContext;
  TimingScope translating = timing.nest("translate to LLVM IR");
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "rankc");
  translating.stop();
  if (!llvmModule)
    return module.emitError("cannot translate the program to LLVM IR");
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
  markAllocationsNoAlias(*llvmModule);

  // The glue (functions marked optnone: rankc-optimize-none-glue), when
  // there is much of it, is a piece of its own generated at
  // CodeGenOptLevel::None: FastISel and the fast register allocator, both
  // linear, where the O2 code generator's greedy allocator grew faster than
  // the schedule of a program of 50,000 nodes (one function).
  size_t glue = 0;
  for (const llvm::Function &f : *llvmModule)
    if (!f.isDeclaration() && f.hasOptNone())
      glue += f.getInstructionCount();
  bool separateGlue = glue >= kInstructionsPerPiece;
  unsigned pieces = piecesFor(*llvmModule) + separateGlue;
  std::vector<std::string> objects;
  for (unsigned i = 0; i < pieces; ++i)
    objects.push_back(base.str() + (i ? "." + std::to_string(i) : "") + ".o");
  if (pieces == 1) {
    std::string why = optimizeAndGenerate(*llvmModule, m, objects[0], timing);
    if (!why.empty())
      return module.emitError(why);
    return objects;
  }

  // The optimized pieces as bitcode: each is read back into a context of
  // its own. The glue, most of a program of many small nodes, stays in
  // this module and is generated on a thread of the pool as it is (the
  // module's context is then used by that thread alone): no copy of it, no
  // bitcode written and read back (at 10^5 nodes these were 0.8 s a
  // program).
  std::vector<llvm::SmallString<0>> bitcode;
  auto keep = [&](const llvm::Module &piece) {
    bitcode.emplace_back();
    llvm::raw_svector_ostream os(bitcode.back());
    llvm::WriteBitcodeToFile(piece, os);
  };
  {
    TimingScope splitting = timing.nest("LLVM split into pieces");
    std::unique_ptr<llvm::Module> rest = std::move(llvmModule);
    if (separateGlue) {
      // What one piece defines and another calls must have a name the
      // linker sees: hidden, so that nothing leaves the executable (and
      // a library's version script keeps it local).
      for (llvm::GlobalValue &gv : rest->global_values())
        if (gv.hasLocalLinkage()) {
          gv.setLinkage(llvm::GlobalValue::ExternalLinkage);
          gv.setVisibility(llvm::GlobalValue::HiddenVisibility);
        }
      auto isGlue = [](const llvm::GlobalValue *gv) {
        auto *f = dyn_cast<llvm::Function>(gv);
        return f && f->hasOptNone();
      };
      // The optimized code and the variables leave as a clone; what stays
      // keeps only the glue's bodies and declares the rest.
      llvm::ValueToValueMapTy restMap;
      llvmModule = std::move(rest);
      rest = llvm::CloneModule(
          *llvmModule, restMap,
          [&](const llvm::GlobalValue *gv) { return !isGlue(gv); });
      for (llvm::Function &f : *llvmModule)
        if (!f.isDeclaration() && !f.hasOptNone())
          f.deleteBody();
      for (llvm::GlobalVariable &v : llvmModule->globals())
        if (v.hasInitializer()) {
          v.setInitializer(nullptr);
          v.setLinkage(llvm::GlobalValue::ExternalLinkage);
          v.setComdat(nullptr);
        }
    }
    if (pieces - separateGlue == 1)
      keep(*rest);
    else
      llvm::SplitModule(
          *rest, pieces - separateGlue,
          [&](std::unique_ptr<llvm::Module> piece) { keep(*piece); },
          /*PreserveLocals=*/false, /*RoundRobin=*/true);
  }
  // Piece 0 is the glue (kept in llvmModule) when there is one.
  size_t count = bitcode.size() + separateGlue;
  std::vector<std::string> why(count);
  auto build = [&](size_t i) {
    TimingScope t = timing.nest("LLVM piece " + std::to_string(i));
    if (separateGlue && i == 0) {
      why[i] = optimizeAndGenerate(*llvmModule, m, objects[i], t,
                                   /*glue=*/true);
      return;
    }
    llvm::LLVMContext context;
    const llvm::SmallString<0> &code = bitcode[i - separateGlue];
    llvm::Expected<std::unique_ptr<llvm::Module>> piece =
        llvm::parseBitcodeFile(
            llvm::MemoryBufferRef(llvm::StringRef(code.data(), code.size()),
                                  "piece"),
            context);
    if (!piece) {
      why[i] = "cannot read a piece back: " + llvm::toString(piece.takeError());
      return;
    }
    why[i] = optimizeAndGenerate(**piece, m, objects[i], t);
  };
  unsigned threads =
      module.getContext()->isMultithreadingEnabled()
          ? std::min<unsigned>(count, llvm::hardware_concurrency()
                                          .compute_thread_count())
          : 1;
  if (threads <= 1) {
    for (size_t i = 0; i < count; ++i)
      build(i);
  } else {
    llvm::StdThreadPool pool(llvm::hardware_concurrency(threads));
    for (size_t i = 0; i < count; ++i)
      pool.async([&, i] { build(i); });
    pool.wait();
  }
  for (const std::string &w : why)
    if (!w.empty())
      return module.emitError(w);
  objects.resize(count);
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


