//===- GpuLaunchToLLVM.cpp - gpu.binary and launches to runtime calls ----===//
//
// Upstream lowers gpu.binary and gpu.launch_func only while translating to
// LLVM IR, each launch against the gpu.binary of its module; a program's
// launching functions could then not leave that module to be built on
// threads of their own. Here the same lowering is made in the LLVM dialect
// (Passes.td says what each op becomes), after which a CUDA program is
// functions and globals only, like a CPU program.
//
//===----------------------------------------------------------------------===//

#include "rankc/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <type_traits>

namespace rankc {
#define GEN_PASS_DEF_RANKCGPULAUNCHTOLLVM
#include "rankc/Conversion/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// Upstream's translation registers its loads at this priority: kept, so
/// that the order against other constructors is what it was.
constexpr int32_t kCtorPriority = 123;

/// The runtime's entry points this lowering calls (runtime/cuda/MgpuWrappers.cpp:
/// CUmodule, CUfunction, CUstream and void * are pointers, intptr_t and
/// size_t i64).
struct Runtime {
  LLVM::LLVMFuncOp moduleLoad, moduleLoadJIT, moduleUnload, moduleGetFunction,
      launchKernel, streamCreate, streamSynchronize, streamDestroy;
};

/// The function `name` of type `type`: the module's own if it has one of
/// that type, else a new declaration first in the module. Returns null
/// (after an error) if the module declares it with another type.
LLVM::LLVMFuncOp declare(ModuleOp module, SymbolTable &symbols,
                         StringRef name, LLVM::LLVMFunctionType type) {
  if (Operation *existing = symbols.lookup(name)) {
    auto fn = dyn_cast<LLVM::LLVMFuncOp>(existing);
    if (fn && fn.getFunctionType() == type)
      return fn;
    existing->emitError("rankc-gpu-launch-to-llvm: '")
        << name << "' is declared here, but the runtime's " << name
        << " is " << type;
    return nullptr;
  }
  auto builder = OpBuilder::atBlockBegin(module.getBody());
  auto fn = LLVM::LLVMFuncOp::create(builder, module.getLoc(), name, type);
  symbols.insert(fn);
  return fn;
}

/// The entry points the module will call: `jit` for PTX objects, `streams`
/// for launches without a stream of their own.
std::optional<Runtime> declareRuntime(ModuleOp module, SymbolTable &symbols,
                                      bool load, bool jit, bool streams) {
  MLIRContext *ctx = module.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx), voidType = LLVM::LLVMVoidType::get(ctx);
  Type i32 = IntegerType::get(ctx, 32), i64 = IntegerType::get(ctx, 64);
  auto fnType = [](Type result, ArrayRef<Type> args) {
    return LLVM::LLVMFunctionType::get(result, args);
  };
  Runtime rt;
  struct Entry {
    LLVM::LLVMFuncOp *slot;
    bool used;
    StringRef name;
    LLVM::LLVMFunctionType type;
  } entries[] = {
      {&rt.moduleLoad, load, "mgpuModuleLoad", fnType(ptr, {ptr, i64})},
      {&rt.moduleLoadJIT, jit, "mgpuModuleLoadJIT",
       fnType(ptr, {ptr, i32, i64})},
      {&rt.moduleUnload, true, "mgpuModuleUnload", fnType(voidType, {ptr})},
      {&rt.moduleGetFunction, true, "mgpuModuleGetFunction",
       fnType(ptr, {ptr, ptr})},
      {&rt.launchKernel, true, "mgpuLaunchKernel",
       fnType(voidType,
              {ptr, i64, i64, i64, i64, i64, i64, i32, ptr, ptr, ptr, i64})},
      {&rt.streamCreate, streams, "mgpuStreamCreate", fnType(ptr, {})},
      {&rt.streamSynchronize, streams, "mgpuStreamSynchronize",
       fnType(voidType, {ptr})},
      {&rt.streamDestroy, streams, "mgpuStreamDestroy",
       fnType(voidType, {ptr})},
  };
  for (Entry &e : entries)
    if (e.used && !(*e.slot = declare(module, symbols, e.name, e.type)))
      return std::nullopt;
  return rt;
}

/// The object `binary`'s handler selects, as #gpu.select_object does: the
/// first without a target, else the one of that index or target.
gpu::ObjectAttr selectObject(gpu::BinaryOp binary) {
  ArrayRef<Attribute> objects = binary.getObjectsAttr().getValue();
  Attribute handler = binary.getOffloadingHandlerAttr();
  if (handler && !isa<gpu::SelectObjectAttr>(handler)) {
    binary.emitError("rankc-gpu-launch-to-llvm: gpu.binary @")
        << binary.getName() << " has the offloading handler " << handler
        << "; only #gpu.select_object is supported";
    return nullptr;
  }
  int64_t index = 0;
  if (Attribute target =
          handler ? cast<gpu::SelectObjectAttr>(handler).getTarget()
                  : Attribute()) {
    index = -1;
    if (auto i = dyn_cast<IntegerAttr>(target)) {
      index = i.getInt();
    } else {
      for (auto [i, object] : llvm::enumerate(objects))
        if (cast<gpu::ObjectAttr>(object).getTarget() == target)
          index = i;
    }
  }
  if (index < 0 || index >= static_cast<int64_t>(objects.size())) {
    binary.emitError("rankc-gpu-launch-to-llvm: gpu.binary @")
        << binary.getName() << " has no object for its handler " << handler;
    return nullptr;
  }
  return cast<gpu::ObjectAttr>(objects[index]);
}

/// An internal global of `type` initialized to zero (a handle filled in by
/// the module's load).
LLVM::GlobalOp zeroGlobal(OpBuilder &b, Location loc, Type type,
                          StringRef name) {
  auto global = LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/false,
                                       LLVM::Linkage::Internal, name,
                                       Attribute(), /*alignment=*/8);
  OpBuilder::InsertionGuard guard(b);
  b.createBlock(&global.getInitializerRegion());
  Value zero = LLVM::ZeroOp::create(b, loc, type);
  LLVM::ReturnOp::create(b, loc, zero);
  return global;
}

/// A private constant holding `text` and a NUL (a kernel's name).
LLVM::GlobalOp cStringGlobal(OpBuilder &b, Location loc, StringRef name,
                             StringRef text) {
  std::string data = text.str();
  data.push_back('\0');
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), data.size());
  return LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true,
                                LLVM::Linkage::Private, name,
                                b.getStringAttr(data), /*alignment=*/1);
}

/// What one gpu.binary became: the globals its launches read.
struct LoweredBinary {
  llvm::StringMap<LLVM::GlobalOp> functions; // kernel name -> its handle
};

/// gpu.launch_func (LLVM-typed operands, no tokens) -> the argument block on
/// the stack and mgpuLaunchKernel, the kernel's handle read from its global.
struct LaunchFuncToRuntimeCall : OpRewritePattern<gpu::LaunchFuncOp> {
  LaunchFuncToRuntimeCall(MLIRContext *ctx, const Runtime &rt,
                          const llvm::StringMap<LoweredBinary> &binaries)
      : OpRewritePattern(ctx), rt(rt), binaries(binaries) {}

  LogicalResult matchAndRewrite(gpu::LaunchFuncOp launch,
                                PatternRewriter &rewriter) const override {
    auto fn = launch->getParentOfType<LLVM::LLVMFuncOp>();
    auto binary = binaries.find(launch.getKernelModuleName());
    if (!fn || binary == binaries.end())
      return failure();
    LLVM::GlobalOp handle =
        binary->second.functions.lookup(launch.getKernelName());
    Location loc = launch.getLoc();
    MLIRContext *ctx = getContext();
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    Type i32 = rewriter.getI32Type(), i64 = rewriter.getI64Type();

    // The argument block in the entry block: a launch in a loop reuses it.
    // (Its operands are LLVM values already: checkLaunch.)
    ValueRange args = launch.getKernelOperands();
    SmallVector<Type> fields(llvm::map_range(args, [](Value v) { return v.getType(); }));
    auto argsType = LLVM::LLVMStructType::getLiteral(ctx, fields);
    Value block, pointers;
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&fn.getBody().front());
      Value one = LLVM::ConstantOp::create(rewriter, loc, i64,
                                           rewriter.getI64IntegerAttr(1));
      Value count = LLVM::ConstantOp::create(
          rewriter, loc, i64, rewriter.getI64IntegerAttr(args.size()));
      block = LLVM::AllocaOp::create(rewriter, loc, ptr, argsType, one);
      pointers = LLVM::AllocaOp::create(rewriter, loc, ptr, ptr, count);
    }
    for (auto [i, arg] : llvm::enumerate(args)) {
      Value field = LLVM::GEPOp::create(
          rewriter, loc, ptr, argsType, block,
          ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
      LLVM::StoreOp::create(rewriter, loc, arg, field);
      Value slot = LLVM::GEPOp::create(
          rewriter, loc, ptr, ptr, pointers,
          ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
      LLVM::StoreOp::create(rewriter, loc, field, slot);
    }
    Value function = LLVM::LoadOp::create(
        rewriter, loc, ptr,
        LLVM::AddressOfOp::create(rewriter, loc, handle));
    Value stream = launch.getAsyncObject();
    if (!stream)
      stream = LLVM::CallOp::create(rewriter, loc, rt.streamCreate, {})
                   .getResult();
    Value smem = launch.getDynamicSharedMemorySize();
    if (!smem)
      smem = LLVM::ConstantOp::create(rewriter, loc, i32,
                                      rewriter.getI32IntegerAttr(0));
    Value null = LLVM::ZeroOp::create(rewriter, loc, ptr);
    Value nargs = LLVM::ConstantOp::create(
        rewriter, loc, i64, rewriter.getI64IntegerAttr(args.size()));
    LLVM::CallOp::create(
        rewriter, loc, rt.launchKernel,
        ValueRange{function, launch.getGridSizeX(), launch.getGridSizeY(),
                   launch.getGridSizeZ(), launch.getBlockSizeX(),
                   launch.getBlockSizeY(), launch.getBlockSizeZ(), smem,
                   stream, pointers, null, nargs});
    if (!launch.getAsyncObject()) {
      LLVM::CallOp::create(rewriter, loc, rt.streamSynchronize, stream);
      LLVM::CallOp::create(rewriter, loc, rt.streamDestroy, stream);
    }
    rewriter.eraseOp(launch);
    return success();
  }

  const Runtime &rt;
  const llvm::StringMap<LoweredBinary> &binaries;
};

/// Launches this lowering cannot make, with the reason.
LogicalResult checkLaunch(gpu::LaunchFuncOp launch) {
  auto fail = [&](const Twine &why) {
    return launch.emitError("rankc-gpu-launch-to-llvm: cannot lower this "
                            "launch of @")
           << launch.getKernelModuleName().getValue()
           << "::@" << launch.getKernelName().getValue() << ": " << why;
  };
  if (!launch->getParentOfType<LLVM::LLVMFuncOp>())
    return fail("it is not in an llvm.func");
  if (launch.hasClusterSize())
    return fail("cluster launches are not supported");
  if (!launch.getAsyncDependencies().empty() || launch.getAsyncToken())
    return fail("it has async tokens (run convert-gpu-to-llvm first)");
  for (Value v : launch->getOperands())
    if (!LLVM::isCompatibleType(v.getType()))
      return fail("an operand has the non-LLVM type " +
                  llvm::formatv("{0}", v.getType()).str() +
                  " (run convert-gpu-to-llvm first)");
  return success();
}

/// Adds `fns` (priority 123, no data) to the module's llvm.mlir.global_ctors
/// or _dtors, made at its end when it has none.
template <typename ListOp>
void appendTo(ModuleOp module, ArrayRef<Attribute> fns) {
  if (fns.empty())
    return;
  MLIRContext *ctx = module.getContext();
  SmallVector<Attribute> all, priorities, data;
  auto lists = module.getOps<ListOp>();
  ListOp existing = lists.empty() ? ListOp() : *lists.begin();
  if (existing) {
    if constexpr (std::is_same_v<ListOp, LLVM::GlobalCtorsOp>)
      llvm::append_range(all, existing.getCtors());
    else
      llvm::append_range(all, existing.getDtors());
    llvm::append_range(priorities, existing.getPriorities());
    llvm::append_range(data, existing.getData());
  }
  for (Attribute fn : fns) {
    all.push_back(fn);
    priorities.push_back(IntegerAttr::get(IntegerType::get(ctx, 32), kCtorPriority));
    data.push_back(LLVM::ZeroAttr::get(ctx));
  }
  auto builder = existing ? OpBuilder(existing)
                          : OpBuilder::atBlockEnd(module.getBody());
  ListOp::create(builder, module.getLoc(), ArrayAttr::get(ctx, all),
                 ArrayAttr::get(ctx, priorities), ArrayAttr::get(ctx, data));
  if (existing)
    existing.erase();
}

struct GpuLaunchToLLVMPass
    : public rankc::impl::RankcGpuLaunchToLLVMBase<GpuLaunchToLLVMPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<gpu::LaunchFuncOp> launches;
    // binary name -> the kernels launched from it, in program order.
    llvm::MapVector<StringAttr, llvm::SetVector<StringAttr>> kernels;
    bool ok = true;
    module.walk([&](gpu::LaunchFuncOp launch) {
      ok &= succeeded(checkLaunch(launch));
      launches.push_back(launch);
      kernels[launch.getKernelModuleName()].insert(launch.getKernelName());
    });
    SmallVector<gpu::BinaryOp> binaryOps(module.getOps<gpu::BinaryOp>());
    if (!ok)
      return signalPassFailure();
    if (binaryOps.empty() && launches.empty())
      return;

    bool load = false, jit = false;
    for (gpu::BinaryOp binary : binaryOps)
      if (gpu::ObjectAttr object = selectObject(binary))
        (object.getFormat() == gpu::CompilationTarget::Assembly ? jit : load) =
            true;
      else
        return signalPassFailure();
    bool streams = llvm::any_of(
        launches, [](gpu::LaunchFuncOp l) { return !l.getAsyncObject(); });
    SymbolTable symbols(module);
    std::optional<Runtime> rt =
        declareRuntime(module, symbols, load, jit, streams);
    if (!rt)
      return signalPassFailure();
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    Type i32 = IntegerType::get(ctx, 32), i64 = IntegerType::get(ctx, 64);

    llvm::StringMap<LoweredBinary> lowered;
    SmallVector<Attribute> ctors, dtors;
    for (gpu::BinaryOp binary : binaryOps) {
      gpu::ObjectAttr object = selectObject(binary);
      gpu::CompilationTarget format = object.getFormat();
      if (format == gpu::CompilationTarget::Offload) {
        binary.emitError("rankc-gpu-launch-to-llvm: gpu.binary @")
            << binary.getName()
            << " holds LLVM IR (format offloading), which the runtime "
               "cannot load";
        return signalPassFailure();
      }
      int32_t jitLevel = 0;
      if (DictionaryAttr props = object.getProperties())
        if (Attribute o = props.get("O")) {
          auto level = dyn_cast<IntegerAttr>(o);
          if (!level) {
            binary.emitError("rankc-gpu-launch-to-llvm: gpu.binary @")
                << binary.getName() << ": the optimization level " << o
                << " is not an integer";
            return signalPassFailure();
          }
          jitLevel = level.getInt();
        }
      Location loc = binary.getLoc();
      std::string name = binary.getName().str();
      // Built where the binary was, in this order: names first (the load
      // reads them), then the handles, then the functions.
      OpBuilder b(binary);
      StringRef bytes = object.getObject().getValue();
      // The object's own attribute: megabytes, neither copied nor hashed.
      LLVM::GlobalOp data = LLVM::GlobalOp::create(
          b, loc, LLVM::LLVMArrayType::get(b.getI8Type(), bytes.size()),
          /*isConstant=*/true, LLVM::Linkage::Internal, name + "_binary",
          object.getObject(), /*alignment=*/8);
      LLVM::GlobalOp handle = zeroGlobal(b, loc, ptr, name + "_module");
      LoweredBinary &out = lowered[binary.getName()];
      SmallVector<std::pair<LLVM::GlobalOp, LLVM::GlobalOp>> named;
      for (StringAttr kernel : kernels.lookup(binary.getNameAttr())) {
        std::string base = name + "_" + kernel.getValue().str();
        LLVM::GlobalOp kernelName =
            cStringGlobal(b, loc, base + "_name", kernel.getValue());
        LLVM::GlobalOp function = zeroGlobal(b, loc, ptr, base + "_function");
        out.functions[kernel.getValue()] = function;
        named.push_back({kernelName, function});
      }
      // @B_load: the module, then each kernel's handle, once a process.
      auto voidFn = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {});
      auto load = LLVM::LLVMFuncOp::create(b, loc, name + "_load", voidFn,
                                           LLVM::Linkage::Internal);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(load.addEntryBlock(b));
        Value address = LLVM::AddressOfOp::create(b, loc, data);
        Value size = LLVM::ConstantOp::create(
            b, loc, i64, b.getI64IntegerAttr(bytes.size()));
        Value loaded;
        if (format == gpu::CompilationTarget::Assembly) {
          Value level = LLVM::ConstantOp::create(b, loc, i32,
                                                 b.getI32IntegerAttr(jitLevel));
          loaded = LLVM::CallOp::create(b, loc, rt->moduleLoadJIT,
                                        ValueRange{address, level, size})
                       .getResult();
        } else {
          loaded = LLVM::CallOp::create(b, loc, rt->moduleLoad,
                                        ValueRange{address, size})
                       .getResult();
        }
        LLVM::StoreOp::create(b, loc, loaded,
                              LLVM::AddressOfOp::create(b, loc, handle));
        for (auto [kernelName, function] : named) {
          Value f = LLVM::CallOp::create(
                        b, loc, rt->moduleGetFunction,
                        ValueRange{loaded,
                                   LLVM::AddressOfOp::create(b, loc, kernelName)})
                        .getResult();
          LLVM::StoreOp::create(b, loc, f,
                                LLVM::AddressOfOp::create(b, loc, function));
        }
        LLVM::ReturnOp::create(b, loc, ValueRange{});
      }
      auto unload = LLVM::LLVMFuncOp::create(b, loc, name + "_unload", voidFn,
                                             LLVM::Linkage::Internal);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(unload.addEntryBlock(b));
        Value m = LLVM::LoadOp::create(b, loc, ptr,
                                       LLVM::AddressOfOp::create(b, loc, handle));
        LLVM::CallOp::create(b, loc, rt->moduleUnload, m);
        LLVM::ReturnOp::create(b, loc, ValueRange{});
      }
      ctors.push_back(FlatSymbolRefAttr::get(load.getSymNameAttr()));
      dtors.push_back(FlatSymbolRefAttr::get(unload.getSymNameAttr()));
    }
    for (gpu::LaunchFuncOp launch : launches)
      if (!lowered.count(launch.getKernelModuleName())) {
        launch.emitError("rankc-gpu-launch-to-llvm: no gpu.binary @")
            << launch.getKernelModuleName().getValue()
            << " in this module for the launch of its kernel @"
            << launch.getKernelName().getValue();
        return signalPassFailure();
      }

    // The launches, each rewritten by the pattern where it is: no driver
    // (the dialect conversion, which records every op it creates for a
    // rollback, took 0.37 s a program at 10^5 nodes; the greedy driver's
    // worklist 0.2 s), as every launch is known and each rewrite is local.
    LaunchFuncToRuntimeCall pattern(ctx, *rt, lowered);
    PatternRewriter rewriter(ctx);
    for (gpu::LaunchFuncOp launch : launches) {
      rewriter.setInsertionPoint(launch);
      if (failed(pattern.matchAndRewrite(launch, rewriter))) {
        launch.emitError("rankc-gpu-launch-to-llvm: this launch was not "
                         "lowered");
        return signalPassFailure();
      }
    }

    // One constructor and one destructor list for the module: ours after
    // any it had.
    appendTo<LLVM::GlobalCtorsOp>(module, ctors);
    appendTo<LLVM::GlobalDtorsOp>(module, dtors);
    for (gpu::BinaryOp binary : binaryOps)
      binary.erase();
  }
};

} // namespace
