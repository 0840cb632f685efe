//===- Passes.td - what both backends share -*- tablegen -*-===//
//
// Bufferization's preparation and the treatment of glue (functions of little work): the passes the CPU and CUDA pipelines both run.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_CODEGEN_COMMON_PASSES_TD
#define RANKC_CODEGEN_COMMON_PASSES_TD

include "mlir/Pass/PassBase.td"

def RankcConstantGlobals : Pass<"rankc-constant-globals", "mlir::ModuleOp"> {
  let summary = "The memref.global of every tensor constant, made in program order before bufferization";
  let description = [{
    One-shot module bufferization turns each tensor `arith.constant` into a
    `memref.global` (bufferization::getGlobalFor: one per distinct value,
    named `__constant_<type>` plus `_N` where a name is taken, each put
    first in the module) as it meets the constants, and it meets them in
    an order of functions that depends on where in memory they happen to
    lie (getFuncOpsOrderedByCalls takes the next function from a DenseMap
    keyed by pointer). The globals' order and suffixes, and so the bytes
    of the executable, then changed from run to run. This pass makes the
    same globals through the same function first, walking the functions
    and their constants in module order; bufferization then finds each
    constant's global made and uses it. `alignment` must be the
    bufferization's `buffer-alignment` (a global of another alignment is
    not reused). Constants of unranked tensors and constants outside
    functions are left to bufferization, as they are today.

    A splat constant of more than `max-splat-elements` elements (the zeros
    a gradient's scatter-add starts from, folded from a broadcast) becomes
    `linalg.fill` of a `tensor.empty` instead: as a global it would be its
    whole size in the executable and, on the GPU, copied to the device
    (GPT-2's embedding gradient: 154 MB of zeros in every rank's binary).
  }];
  let options = [
    Option<"alignment", "alignment", "uint64_t", /*default=*/"64",
           "The globals' alignment: one-shot-bufferize's buffer-alignment">,
    Option<"maxSplatElements", "max-splat-elements", "int64_t",
           /*default=*/"1024",
           "Larger splat constants become fills, not globals">,
  ];
  let dependentDialects = ["mlir::memref::MemRefDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def RankcOptimizeNoneGlue : Pass<"rankc-optimize-none-glue", "mlir::func::FuncOp"> {
  let summary = "Mark functions of little work optimize_none (LLVM compiles them at -O0)";
  let description = [{
    A function whose loop nests, counted before loops are generated, run at
    most 2^14 scalar operations in all (a linalg op: its iterations times
    its body's ops; a memref.copy: its elements; any other loop or a
    dynamic shape: unbounded) gets `optimize_none` and `no_inline`, which
    func-to-llvm carries onto the llvm.func: LLVM's optimization pipeline
    skips it and FastISel generates its code. A program's schedule (calls
    to the runtime and to its parts) and parts of small tensors then cost
    a third of the code generation time and no -O3, while they run in
    microseconds either way; kernels of real size stay at -O3.
  }];
}

def RankcResultsThroughMemory : Pass<"rankc-results-through-memory", "mlir::ModuleOp"> {
  let summary = "Write a function's many results into its caller's memory instead of returning them";
  let description = [{
    func-to-llvm packs a function's results into one struct, and a program
    of many outputs returns a struct of a descriptor per output: returned
    through a hidden pointer, the call becomes one SelectionDAG node
    merging every scalar of it, whose combining is quadratic in their
    number (625 outputs, 3,125 scalars: 1.3 s of -O0 code generation of a
    5,000-node program). A function returning a struct of more than
    `max-fields` fields, called only directly and from this module (at
    least once: one called from nowhere is an entry point, its ABI not
    ours), takes a pointer to such a struct as its first argument instead
    and stores each field there at its returns (the field's value read off
    the insertvalue chain that built it). Each caller passes a struct of
    its own stack (an alloca of its entry block) and loads a field where it
    read it (an extractvalue), so that no block holds more loads of it than
    the fields it reads.
  }];
  let options = [
    Option<"maxFields", "max-fields", "int64_t", /*default=*/"16",
           "Fields of a returned struct at most (at least 1)">,
  ];
}

def RankcArgumentsThroughMemory : Pass<"rankc-arguments-through-memory", "mlir::ModuleOp"> {
  let summary = "Pass a function's many buffers in its caller's memory instead of as arguments";
  let description = [{
    func-to-llvm converts a function's signature argument by argument, and
    each argument's replacement asks the order of ops in the entry block
    that the previous one's descriptor ops invalidated: time quadratic in
    the arguments times the block (a training step's forward part takes
    every weight and writes every activation kept for the backward: 10,000
    memref arguments at 10^5 nodes, 31 s of the build). A private function
    of more than `max-arguments` ranked memref arguments without argument
    attributes, called only directly and from this module (at least once),
    takes instead one `!llvm.ptr` first: a block of their descriptors,
    loaded at its entry (one load a buffer, cast back to the memref so that
    the body is unchanged). Each caller stores the descriptors into a
    block of its own stack (an alloca of its entry block) right before the
    call. Likewise for results: a function returning more than
    `max-arguments` ranked memrefs stores their descriptors into a block
    its caller passes first (their result attributes, read by earlier
    passes only, are dropped) and the caller loads them right after the
    call (the schedule returns every updated weight). Runs before
    func-to-llvm, on both backends; the casts meet the descriptor casts of
    memref-to-llvm and fold away.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
  let options = [
    Option<"maxArguments", "max-arguments", "int64_t", /*default=*/"64",
           "Memref arguments a function keeps at most (at least 0)">,
  ];
}

def RankcSplitGlueBlocks : Pass<"rankc-split-glue-blocks", "mlir::LLVM::LLVMFuncOp"> {
  let summary = "Cut the long blocks of -O0 functions into short ones, for linear code generation";
  let description = [{
    A program's schedule is one straight-line block: 134,000 LLVM
    instructions at 100,000 nodes. FastISel cannot select most of it
    (calls returning memref descriptors, aggregates too large for
    registers), and SelectionDAG then builds one DAG of what is left of a
    block, whose combining and scheduling grow faster than the block: -O0
    code generation of the schedule took 0.2 s at 13,700 instructions and
    3.0 s at 134,000. In functions marked `optnone` (the glue of
    rankc-optimize-none-glue), every block longer than `max-ops`
    operations is cut into blocks of at most `max-ops`, each ending in an
    `llvm.br` to the next: one DAG a block, and code generation linear in
    the function (1.6 s). A block is also cut before a load that would be
    the `max-loads`+1th since the last call or store: SelectionDAG hangs
    the loads between two writes off one chain and clusters those of one
    base address (ClusterNeighboringLoads) in a time quadratic in their
    number, and a call of a part of 650 buffers had 3,256 loads of the
    frame of rankc-split-glue-functions right before it. The pass runs
    again after rankc-split-glue-functions, whose loads it cuts too. The
    cuts are made from the end backwards, each moving at most one block of
    operations; none falls before an
    `llvm.alloca` of the entry block (which must stay there to be a static
    stack slot). Optimized functions are left alone: LLVM merges such
    blocks at once.
  }];
  let options = [
    Option<"maxOps", "max-ops", "int64_t", /*default=*/"1024",
           "Operations of a block at most (at least 1)">,
    Option<"maxLoads", "max-loads", "int64_t", /*default=*/"64",
           "Loads of a block between two calls or stores at most (at least 1)">,
  ];
}

def RankcSplitGlueFunctions : Pass<"rankc-split-glue-functions", "mlir::ModuleOp"> {
  let summary = "Cut long -O0 functions into functions that build on threads of their own";
  let description = [{
    A program's schedule is one function: 134,000 LLVM instructions at
    100,000 nodes over 2 ranks, 1.7 s of -O0 code generation that one
    thread does however many cores there are, while the rest of the
    program's glue is spread over threads (lib/Target/ProgramPieces.cpp).
    After rankc-split-glue-blocks its blocks are a chain: each ends in an
    `llvm.br` to the next, its one predecessor. In each function marked
    `optnone` (glue) longer than `max-ops` operations, runs of chained
    blocks of about `max-ops` operations move into functions of their own
    (glue too, internal), and a block calling the new function takes each
    run's place. What crosses from one run, or from the function's own
    blocks, to another goes through a frame on the function's stack, one
    slot a value: stored where it is defined, loaded right before the
    first operation of a run that reads it (in the function's own blocks,
    before the first reader in each block). SelectionDAG clusters the loads
    of a block that hang off one chain and one base address in a time
    quadratic in their number; loads near their readers are spread between
    calls and stores, and are not live across blocks.
    The calls pass the frame's address alone: a schedule that posts every
    receive first has thousands of requests waited on later, and as
    arguments and results they made calls that -O0 code generation took
    ten times longer over than the code they replaced. Operations without
    operands or effects (constants, addresses of globals) are copied into
    the runs that read them instead. The entry block never moves, nor does
    a block holding an `llvm.alloca` or a stack save or restore (its memory
    would not outlive the call), nor one with arguments or nested regions.
    Optimized functions are left alone.
  }];
  let options = [
    Option<"maxOps", "max-ops", "int64_t", /*default=*/"16384",
           "Operations of a run at most (at least 1)">,
  ];
}

def RankcStepMemory : Pass<"rankc-step-memory", "mlir::ModuleOp"> {
  let summary = "Count the bytes a step of the program allocates (plan.json's planned memory)";
  let description = [{
    Every buffer the generated code allocates in a step comes from the
    runtime's step arena (runtime/core/Arena.h), rounded up to its 256-byte
    alignment, and none is freed before the step ends: a step's arena holds
    the sum of its allocations. This pass adds them up over the module
    (memref.alloc: host or, on the CPU, all; gpu.alloc: device; a
    function's once per call of it: equal parts folded into one function
    run once per part) and records
    the sums on the module as `rankc.step_host_bytes` and
    `rankc.step_device_bytes`, which `rankc compile` writes into plan.json
    (each program's `memory`). An allocation of a dynamic size makes the
    sum a lower bound (`rankc.step_bytes_dynamic`). Run just before the
    allocations are lowered to calls; it changes nothing else.
  }];
}

def RankcOutlineBufferizationSegments
    : Pass<"rankc-outline-bufferization-segments", "mlir::ModuleOp"> {
  let summary = "Cut functions with a value of many uses into segments for one-shot-bufferize";
  let description = [{
    One-shot-bufferize's analysis is quadratic in the uses of one tensor
    (it gathers every read of every alias of an operand's value for each
    operand). A function in which some value has more than `max-uses`
    uses (a schedule whose program input every part reads) is cut into
    consecutive runs of `segment` ops, each moved into a private function
    marked `rankc.bufferization_segment` and called in its place (values
    from before a run are its arguments, values used after it its
    results; scalar constants are cloned). Functions without such a value
    are left as they are. rankc-inline-bufferization-segments undoes it
    after bufferization.
  }];
  let options = [
    Option<"maxUses", "max-uses", "int64_t", /*default=*/"256",
           "Cut only functions with a value used more than this many times">,
    Option<"segment", "segment", "int64_t", /*default=*/"64",
           "Ops per segment">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def RankcBufferizeModule : Pass<"rankc-bufferize-module", "mlir::ModuleOp"> {
  let summary = "One-shot-bufferize with function boundaries, its boundary analysis linear";
  let description = [{
    Upstream's one-shot-bufferize (bufferize-function-boundaries,
    identity-layout-map signatures), through upstream's own analysis of
    each function body, copy insertion and bufferization; only the module
    driver around them differs. Upstream's (OneShotModuleBufferize.cpp)
    asks, for every tensor result of a function and every tensor argument,
    whether the two alias and whether they are equivalent: a step's
    schedule and its forward part, 5,000 parameters in and 5,000 values
    out at 10^5 nodes, cost 50 million pairs. Here each argument's alias
    and equivalence classes are walked once and each result looked up in
    them; the callee-first order of functions is built by counting down
    callers (upstream rescans a map for each function). The function
    analysis state it records is upstream's, for the func.call model.
  }];
  let options = [
    Option<"alignment", "alignment", "unsigned", /*default=*/"64",
           "The alignment of new buffers (one-shot-bufferize's buffer-alignment)">,
  ];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect",
                           "mlir::memref::MemRefDialect"];
}

def RankcInlineBufferizationSegments
    : Pass<"rankc-inline-bufferization-segments", "mlir::ModuleOp"> {
  let summary = "Move the ops of bufferization segments back into their one caller";
  let description = [{
    After one-shot-bufferize: each function marked
    `rankc.bufferization_segment` by rankc-outline-bufferization-segments
    has its ops moved to its one call site (its arguments replaced by the
    call's operands, the call's results by what it returned) and is
    erased, so that later passes see one function again.
  }];
}

def RankcPartOutParams : Pass<"rankc-part-out-params", "mlir::ModuleOp"> {
  let summary = "Parts write their results into buffers their callers allocate";
  let description = [{
    Upstream's promoteBufferResultsToOutParams for the functions marked
    `rankc.part` (each result of a static shape becomes an argument the
    callers allocate; a result the part allocated itself is replaced by
    that argument, with no copy). The step function keeps its results (the
    program's outputs). Then every buffer that passes between parts is an
    allocation of the step function, which rankc-plan-buffers places.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def RankcDonateCarried : Pass<"rankc-donate-carried", "mlir::ModuleOp"> {
  let summary = "Write a carried value's next value over the buffer it is read from";
  let description = [{
    On a step function whose results carry `rankc.carried_from = ARG` (the
    input each is the next value of, set by rankc-runtime-manifest): a
    carried result that is a buffer the function allocates is replaced by
    the argument, so that the runtime finds the next value where the input
    was (no step arena buffer, no move). Only where that is safe: the
    argument (or anything made from it) is used last before the buffer is
    first used; or both are first and last used by one call of a part in
    which the argument is read last by the elementwise linalg.generic
    (parallel loops, the same indexing) that first writes the result,
    directly or through reshapes of both (the GPU's collapsed dimensions);
    a result returned through a reshape pair that undoes itself counts as
    the buffer. Run after rankc-part-out-params (parts' results are then
    the caller's buffers). Parameters, optimizer moments and accumulated gradients are
    then updated in place.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def RankcPlanBuffers : Pass<"rankc-plan-buffers", "mlir::ModuleOp"> {
  let summary = "Place a step's buffers in one block, reusing the bytes of dead ones";
  let description = [{
    A static memory plan per function. Each allocation of a static size in
    a function's body (memref.alloc; gpu.alloc with `device`) that does not
    leave the function becomes a `memref.view` of one byte block at an
    offset (multiples of 256 bytes), and two buffers share bytes only when
    no operation of the body uses both while both are alive: a buffer lives
    from the first to the last operation that uses it or a value made from
    it (a view, its address, the request of a message it is in: until that
    request's wait). In a step function, a result not carried into the
    next step (no `rankc.carried_from`: a gradient, the loss) is placed too,
    alive to the return (the runtime copies outputs out before the next
    step); carried results stay allocations. A part's block is a new last argument
    (`rankc.scratch_bytes` on it), which every caller allocates before the
    call; a function only the outside calls (the step function) takes its
    block from the runtime: `func.call @rankc_rt_scratch(bytes)` (one block
    for every step, of a fixed address), marked `rankc.scratch_bytes`.
    Unused allocations are erased. Straight-line bodies only (a function of
    several blocks is left alone).
  }];
  let options = [
    Option<"device", "device", "bool", /*default=*/"false",
           "Plan gpu.alloc (device buffers) rather than memref.alloc">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::gpu::GPUDialect"];
}

#endif // RANKC_CODEGEN_COMMON_PASSES_TD
