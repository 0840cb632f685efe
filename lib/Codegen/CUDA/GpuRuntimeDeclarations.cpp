//===- GpuRuntimeDeclarations.cpp - mgpu* declared first, found at once ---===//
//
// convert-gpu-to-llvm finds the mgpu* function of each call it makes with a
// scan of the module from its first op, and declares a missing one at the
// module's end; so every later lookup scans the whole program. Declared
// first, each is found at once (Passes.td says more).
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPURUNTIMEDECLARATIONS
#include "rankc/Codegen/CUDA/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

enum class T { Void, Ptr, I8, I16, I32, IntPtr };

/// The runtime's entry points that gpu-to-llvm calls, with the signatures
/// of their C definitions in runtime/cuda/MgpuWrappers.cpp (void *, CUstream and
/// CUevent are pointers; size_t and uint64_t are intptr_t; bool is i8).
struct Entry {
  const char *name;
  T result;
  std::initializer_list<T> args;
};
const Entry kEntries[] = {
    {"mgpuStreamCreate", T::Ptr, {}},
    {"mgpuStreamDestroy", T::Void, {T::Ptr}},
    {"mgpuStreamSynchronize", T::Void, {T::Ptr}},
    {"mgpuStreamWaitEvent", T::Void, {T::Ptr, T::Ptr}},
    {"mgpuEventCreate", T::Ptr, {}},
    {"mgpuEventDestroy", T::Void, {T::Ptr}},
    {"mgpuEventSynchronize", T::Void, {T::Ptr}},
    {"mgpuEventRecord", T::Void, {T::Ptr, T::Ptr}},
    {"mgpuMemAlloc", T::Ptr, {T::IntPtr, T::Ptr, T::I8}},
    {"mgpuMemFree", T::Void, {T::Ptr, T::Ptr}},
    {"mgpuMemcpy", T::Void, {T::Ptr, T::Ptr, T::IntPtr, T::Ptr}},
    {"mgpuMemset16", T::Void, {T::Ptr, T::I16, T::IntPtr, T::Ptr}},
    {"mgpuMemset32", T::Void, {T::Ptr, T::I32, T::IntPtr, T::Ptr}},
    {"mgpuSetDefaultDevice", T::Void, {T::I32}},
};

Type getType(MLIRContext *context, T type) {
  switch (type) {
  case T::Void:
    return LLVM::LLVMVoidType::get(context);
  case T::Ptr:
    return LLVM::LLVMPointerType::get(context);
  case T::I8:
    return IntegerType::get(context, 8);
  case T::I16:
    return IntegerType::get(context, 16);
  case T::I32:
    return IntegerType::get(context, 32);
  case T::IntPtr: // the host is 64-bit (x86-64 or AArch64 Linux)
    return IntegerType::get(context, 64);
  }
  llvm_unreachable("every type is handled");
}

struct GpuRuntimeDeclarationsPass
    : public rankc::impl::RankcGpuRuntimeDeclarationsBase<
          GpuRuntimeDeclarationsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    // One scan of the module for what is there already (a table, not a
    // lookup a name).
    SymbolTable symbols(module);
    if (eraseUnused) {
      // Called, or taken the address of: the only ways to use a function.
      DenseSet<StringAttr> called;
      module.walk([&](Operation *op) {
        if (auto call = dyn_cast<LLVM::CallOp>(op)) {
          if (auto callee = call.getCalleeAttr())
            called.insert(callee.getAttr());
        } else if (auto address = dyn_cast<LLVM::AddressOfOp>(op)) {
          called.insert(address.getGlobalNameAttr().getAttr());
        }
      });
      for (const Entry &entry : kEntries) {
        auto fn = symbols.lookup<LLVM::LLVMFuncOp>(entry.name);
        if (fn && fn.isExternal() && !called.contains(fn.getSymNameAttr()))
          fn.erase();
      }
      return;
    }
    OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
    for (const Entry &entry : kEntries) {
      if (symbols.lookup(entry.name))
        continue;
      SmallVector<Type> args;
      for (T arg : entry.args)
        args.push_back(getType(context, arg));
      auto type =
          LLVM::LLVMFunctionType::get(getType(context, entry.result), args);
      LLVM::LLVMFuncOp::create(builder, module.getLoc(), entry.name, type);
    }
  }
};

} // namespace
