//===- Passes.td - rankc's conversions ---------------------*- tablegen -*-===//

#ifndef RANKC_CONVERSION_PASSES
#define RANKC_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def RankcGpuLaunchToLLVM : Pass<"rankc-gpu-launch-to-llvm", "mlir::ModuleOp"> {
  let summary = "Lower gpu.binary and gpu.launch_func to LLVM-dialect calls of the runtime";
  let description = [{
    Upstream leaves gpu.binary and gpu.launch_func to the translation to
    LLVM IR (`#gpu.select_object`), which builds the binary's globals, its
    load at start-up and every launch's calls against the gpu.binary of the
    same module. So every function that launches a kernel had to be
    translated with that binary: a CUDA program could not be cut into
    pieces built on threads (lib/Target/ProgramPieces.cpp) beyond them.

    This pass does the same in the LLVM dialect, before translation, so
    that only ordinary functions and globals remain. For each gpu.binary
    @B, the object its offloading handler selects (`#gpu.select_object`:
    the first, or the one of a given index or target) becomes:
    - `@B_binary`, an internal constant holding the object's bytes;
    - `@B_module`, the loaded module, and for each kernel K launched from
      it `@B_K_function`, the kernel's handle;
    - `@B_load`, which loads the module (`mgpuModuleLoad`, or for PTX
      `mgpuModuleLoadJIT` at the object's `O` level) and looks every kernel
      up once, and `@B_unload`: a global constructor and destructor of
      priority 123, as upstream's translation registers them.
    Each gpu.launch_func becomes stores of its arguments into a struct on
    the stack (allocated in the function's entry block, so a launch in a
    loop does not grow the stack), an array of pointers to them, and
    `mgpuLaunchKernel` on its stream; without one, on a stream created,
    synchronized and destroyed around it, as upstream does. Where upstream
    looked each kernel up again at every launch, the handle is loaded from
    its global.

    Launches must already have LLVM-typed operands (after
    convert-gpu-to-llvm) and no async tokens; cluster launches and
    handlers other than `#gpu.select_object` are errors.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

#endif // RANKC_CONVERSION_PASSES
