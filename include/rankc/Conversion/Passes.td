//===- Passes.td - rankc's conversions ---------------------*- tablegen -*-===//
//
// From rankc's dialects to calls of the runtime's C ABI: the comm schedule
// (CommToRuntime) and GPU binaries and launches (GPUToRuntime).
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_CONVERSION_PASSES
#define RANKC_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def RankcRuntimeManifest : Pass<"rankc-runtime-manifest", "mlir::ModuleOp"> {
  let summary = "Describe one program for the runtime: the rankc_manifest constant";
  let description = [{
    Runs on a module that holds one partitioned program whose messages are
    scheduled (comm-async-schedule) and writes `rankc_manifest`, the text
    the runtime reads at start-up:

    - the program's name, the world size and the ranks that run it (an
      embedder's init checks its own rank against them);
    - every input (its id, dtype code and shape; optimizer state is
      zero-filled) and every output with its names;
    - what is carried from step to step: `comm.state`, updated parameters
      (`comm.update_of`) and optimizer state;
    - every message and collective by `event`: kind, DAG node and tag (for
      the trace, the watchdog and errors);
    - the nodes whose indices are checked at run time (`rankc.index_checks`,
      which it consumes).

    Run it before convert-comm-to-runtime, which drops the comm.*
    attributes it reads.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def ConvertCommToRuntime : Pass<"convert-comm-to-runtime", "mlir::ModuleOp"> {
  let summary = "Lower one program's scheduled messages to the runtime's C ABI";
  let description = [{
    Runs on a module that holds one partitioned program, after
    comm-async-schedule and rankc-runtime-manifest, and turns it into what
    a CPU or GPU executable runs, one pattern per op:

    - `comm.isend` copies its value into a buffer of its own and calls
      `rankc_rt_isend`; `comm.irecv` allocates the buffer the value arrives
      in and calls `rankc_rt_irecv`; `comm.iallreduce` does both and calls
      `rankc_rt_iallreduce`;
    - `comm.wait` calls `rankc_rt_wait` and, for a receive or a reduction,
      gives the buffer to bufferization (`to_tensor restrict writable`);
    - a `!comm.request` becomes the runtime's handle (i64) and, for one that
      delivers a value, its buffer (a 1:N type conversion).

    Part calls are bracketed by `rankc_rt_part_begin/end` (for the trace),
    `rankc_entry` reads the inputs (`rankc_rt_input`), runs the program and
    hands the outputs over (`rankc_rt_output`). The comm.* attributes are
    dropped: the manifest carries them.
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::memref::MemRefDialect",
                           "mlir::bufferization::BufferizationDialect",
                           "mlir::arith::ArithDialect"];
}

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
