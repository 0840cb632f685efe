//===- Passes.td - rankc's passes --------------------------*- tablegen -*-===//

#ifndef RANKC_TRANSFORMS_PASSES_TD
#define RANKC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def CommVerifyRanks : Pass<"comm-verify-ranks", "mlir::ModuleOp"> {
  let summary = "Verify communication across all ranks at compile time";
  let description = [{
    Instantiates every rank's program and checks, without MPI: sends and
    receives match one to one by (source, destination, tag) with equal types;
    every rank has exactly one allreduce per tag, all of one type and
    reduction; the happens-before graph (local dependencies, send to matching
    receive, collectives across ranks) has no cycle. A cycle is reported as a
    path of (rank, node id, op). The proof assumes rendezvous sends: it never
    relies on MPI buffering a message.

    The cross-rank graph it builds is an MLIR analysis (CrossRankAnalysis),
    kept for the passes that follow.
  }];
}

def CommPartition : Pass<"comm-partition", "mlir::ModuleOp"> {
  let summary = "Split each program into parts at communication boundaries";
  let description = [{
    Outlines each program's computation into private functions, its parts,
    and rewrites the program into a schedule of receives, calls, sends and
    allreduces:

    - a receive is waited for only just before the first part that needs it,
      in the order of a topological order of all ranks' communication (so the
      schedule is deadlock-free for every rank);
    - a send is issued right after the part that produces its value, and the
      work needed only by later messages is moved after it;
    - values used by several parts are passed between them; constants and
      empty tensors are cloned into the parts that use them.

    Deterministic: the same input gives the same parts. Marks the module
    `comm.partitioned`; a partitioned module is left as it is.

    With `eager-sends=false` a send waits for all the work of its level
    (the bulk-synchronous baseline of bench/overlap.sh).
  }];
  let options = [
    Option<"eagerSends", "eager-sends", "bool", /*default=*/"true",
           "Cut parts so that each send leaves as soon as its value exists">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def CommBucketGradients : Pass<"comm-bucket-gradients", "mlir::ModuleOp"> {
  let summary = "Average gradients over all ranks in DDP's buckets";
  let description = [{
    With `comm.data_parallel` on the module, every result marked
    `comm.grad_of` (but those of ignored parameters) becomes its mean over
    all ranks, as PyTorch DistributedDataParallel does. Gradients are grouped
    into buckets exactly as DDP's reducer groups them (see
    rankc/Analysis/Buckets.h): order "ddp-initial" fills buckets in
    registration order, sorts them by lowest index and reverses them (DDP's
    first iteration); order "ready" fills them in the order the program
    produces the gradients (DDP's rebuilt buckets).

    Each bucket becomes one flat buffer (the gradients flattened and
    concatenated), one `comm.allreduce mean` placed right after the bucket's
    last gradient, and views back into the gradients. The allreduce carries
    `comm.bucket = {index, params, bytes, dtype}`; partitioning then splits
    the program there, so the reduction runs while the rest is computed.
    A module that has buckets already (or is partitioned) is left as it is.
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
}

def CommApplyOptimizer : Pass<"comm-apply-optimizer", "mlir::ModuleOp"> {
  let summary = "Update parameters with the data-parallel optimizer, in the program";
  let description = [{
    With `optimizer` in `comm.data_parallel` (SGD with momentum, dampening,
    Nesterov and weight decay; Adam; AdamW), every parameter that has a
    `comm.grad_of` result is updated from that gradient as torch.optim's
    single-tensor implementation updates it, in the parameter's dtype (f16
    and bf16 through f32). Runs after comm-bucket-gradients, so the gradient
    is the average over all ranks (an ignored parameter's: its own rank's).

    The new parameter becomes a result named after the parameter and marked
    `comm.update_of`; the optimizer's state (the step count, momentum
    buffers, Adam's moments) becomes arguments and results marked
    `comm.optimizer_state`, which the runtime starts at zero and carries
    from step to step. One elementwise linalg.generic per parameter computes
    the parameter and its state together, so partitioning places it right
    after its bucket's reduction. A module that has the optimizer applied
    already (or is partitioned) is left as it is.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::math::MathDialect",
                           "mlir::tensor::TensorDialect"];
}

def RankcFoldTransposes : Pass<"rankc-fold-transposes", "mlir::ModuleOp"> {
  let summary = "Fold transposes of transposes (upstream's linalg.transpose patterns)";
  let description = [{
    An exported training step's backward transposes the forward's
    transposed weights back: `t(t(W))` is `W`. Left in, the forward part
    materializes `W^T` for the backward part (partitioning puts the two
    transposes in different functions) instead of the GEMM reading `W`
    transposed. Applies linalg.transpose's canonicalization patterns and
    folds only (no constant hoisting: printed modules stay in document
    order), before the program is partitioned.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def CommAssignMpiTags : Pass<"comm-assign-mpi-tags", "mlir::ModuleOp"> {
  let summary = "Give every send and receive the MPI tag it travels with";
  let description = [{
    Sets `mpi_tag` on every comm.send and comm.recv from the cross-rank
    graph's numbering: the DAG's tags, integers ascending then strings, are
    numbered densely, the same way on every rank, so both ends of a message
    agree without any exchange at run time.
  }];
}

def CommLowerToRuntime : Pass<"comm-lower-to-runtime", "mlir::ModuleOp"> {
  let summary = "Lower one program's messages to the runtime's C ABI, asynchronously";
  let description = [{
    Runs on a module that holds one partitioned program (and its parts) and
    turns it into what a CPU or GPU executable runs:

    - every receive is posted at the start of the program (a buffer and
      `rankc_rt_irecv`) and waited for (`rankc_rt_wait`) where the value is
      first needed, which partitioning made as late as possible;
    - every send starts (`rankc_rt_isend`) right where its value exists and
      is completed at the end of the program;
    - every allreduce starts (`rankc_rt_iallreduce`) as soon as its input
      exists, in the same order on every rank, and is waited for where its
      result is needed;
    - part calls are bracketed by `rankc_rt_part_begin/end` (for the trace);
    - `rankc_entry` reads the inputs (`rankc_rt_input`), runs the program and
      hands the outputs over (`rankc_rt_output`); `rankc_manifest` describes
      inputs, outputs and messages for the runtime.

    The comm.* attributes are dropped: the manifest carries them.

    With `blocking-sends` every send is completed right after it starts:
    the bulk-synchronous baseline, which exposes its communication.
  }];
  let options = [
    Option<"blockingSends", "blocking-sends", "bool", /*default=*/"false",
           "Complete each send right after starting it">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::memref::MemRefDialect",
                           "mlir::bufferization::BufferizationDialect",
                           "mlir::arith::ArithDialect"];
}

def RankcGpuDeviceBuffers : Pass<"rankc-gpu-device-buffers", "mlir::ModuleOp"> {
  let summary = "Put every buffer of the host functions in GPU memory";
  let description = [{
    Runs on bufferized host code (memrefs), before kernels are formed:

    - `memref.alloc` becomes `gpu.alloc` (device memory);
    - `memref.get_global` of a constant becomes a device buffer filled from
      the host global by `gpu.memcpy`, so kernels never read host memory;
    - `memref.copy` between contiguous buffers becomes `gpu.memcpy`; a copy
      of a strided view becomes `linalg.copy`, which then runs as a kernel.

    The runtime (rankc_runtime_cuda) stages these buffers through pinned host
    memory for MPI and file I/O, or hands them to a CUDA-aware MPI directly.
    Ops inside `gpu.module` are left alone.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::linalg::LinalgDialect"];
}

def RankcFuseElementwise : Pass<"rankc-fuse-elementwise", "mlir::func::FuncOp"> {
  let summary = "Fuse elementwise ops (one kernel or loop nest per chain) and fold transposes into GEMMs";
  let description = [{
    Upstream `linalg-fuse-elementwise-ops` with its patterns (elementwise
    fusion, reshape folding by expansion, constant folding), after
    generalizing `linalg.transpose`, `linalg.matmul` and
    `linalg.batch_matmul`, and with its own control: a contraction only
    takes in producers that move data (a generic whose body yields an
    input: a transpose becomes a permuted operand, which
    rankc-gpu-library-calls and rankc-cpu-library-calls hand to the
    library as transposed) and stays a
    GEMM; such producers fold into every consumer, others only into their
    one user, as upstream.
  }];
  let dependentDialects = ["mlir::affine::AffineDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def RankcGpuCollapseDims : Pass<"rankc-gpu-collapse-dims", "mlir::func::FuncOp"> {
  let summary = "Collapse adjacent loops of one kind into one, for the GPU's three grid dimensions";
  let description = [{
    On tensors: in every linalg.generic (without linalg.index), each
    maximal run of adjacent loops of the same iterator type that every
    operand's indexing map keeps contiguous becomes one loop, through
    upstream's `linalg::populateCollapseDimensions` (operands reshaped by
    tensor.collapse_shape, results expanded back). rankc-linalg-to-gpu-loops
    maps three loops to the grid and block; without this a fourth parallel
    loop (batch, sequence, a keepdim 1, columns) would run serially in
    every thread.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def RankcGpuSplitReductions : Pass<"rankc-gpu-split-reductions", "mlir::func::FuncOp"> {
  let summary = "Split reductions with too few outputs into a parallel stage and a small final one";
  let description = [{
    On tensors, before bufferization: every linalg.generic with reduction
    loops, fewer than `threads` output elements (its parallel iterations)
    and at least `min-size` iterations in all has its reduction loops
    collapsed into one (when every operand allows it) and is split by
    upstream `linalg::splitReduction` into partial results (per output
    element the largest power of two that divides the reduced size, at most
    `ratio`, `threads` / outputs and a chunk of 16 elements each) and a
    final reduction of the partials, which is split again while it reduces
    64 elements or more: a reduction to a scalar becomes a tree of a few
    kernels. Without it a reduction to a scalar runs as
    one GPU thread, and a row or column reduction as one thread per row or
    column. Row reductions interleave the partials (partial j reads
    elements j, j + ratio, ...) so that neighbouring threads read
    neighbouring elements. Contractions (GEMMs, for cuBLASLt) are left
    alone. A serial GPU thread is slow even on a thousand elements (a
    1024-element loss mean took 67 us), so the default `min-size` is small.
  }];
  let options = [
    Option<"ratio", "ratio", "int64_t", /*default=*/"65536",
           "Partial results per output element (at most)">,
    Option<"minSize", "min-size", "int64_t", /*default=*/"256",
           "Reductions of fewer iterations stay as they are">,
    Option<"threads", "threads", "int64_t", /*default=*/"65536",
           "Reductions with this many outputs have parallelism enough">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def RankcGpuIndexChecks : Pass<"rankc-gpu-index-checks", "mlir::ModuleOp"> {
  let summary = "Index checks that GPU kernels can make: a record the runtime reads";
  let description = [{
    Runs on bufferized code of the CUDA backend, before kernels are formed.
    Every call of `rankc_rt_index_error(check, index, bound)` (an index of
    `take` or `scatter_add` out of range; the host ends the run there on the
    CPU) becomes a claim of the runtime's index record, a `memref<3xi64>`
    viewed from `rankc_rt_index_record()` (called once at the start of each
    function that checks): a `memref.generic_atomic_rmw` sets word 0 from 0
    to `check + 1`, and the thread that won stores the index and the bound
    in words 1 and 2. The runtime reads the record after every step and
    ends the run naming the rank, the node and the index. The importer
    already clamps a bad index to 0, so kernels stay in bounds meanwhile.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def RankcGpuLibraryCalls : Pass<"rankc-gpu-library-calls", "mlir::ModuleOp"> {
  let summary = "Run the GPU program's matmuls through cuBLASLt (runtime calls)";
  let description = [{
    Every contraction on buffers of f32 or f64 that is one batched GEMM
    once its batch, M, N and K loop groups are
    collapsed, possibly with transposed operands (linalg.matmul,
    batch_matmul, einsum generics), becomes a call of
    `rankc_rt_gemm(A, B, C, batch, M, N, K, dtype, accumulate, transA,
    transB, precision, broadcastB)` (device addresses; row-major;
    broadcastB: one B for all batches, when the batch is leading M
    dimensions of A and C), which the CUDA
    runtime serves with cuBLASLt on the stream of the program's kernels:
    exact f32 by default (no TF32, as PyTorch with TF32 off). A
    `linalg.fill` of zeros right before, into the same buffer, is folded
    into the call (`accumulate` 0). An operand that is a strided view is
    copied to a `gpu.alloc` buffer of identity layout first (`linalg.copy`),
    a strided result copied back after. Other contractions are left to
    rankc-linalg-to-gpu-loops.
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"f32\"",
           "f32 GEMMs: f32 (exact), tf32 or bf16 (tensor cores, f32 "
           "accumulation; PyTorch's float32_matmul_precision high and "
           "medium)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::memref::MemRefDialect"];
}

def RankcSplitOverConcat : Pass<"rankc-split-over-concat", "mlir::func::FuncOp"> {
  let summary = "Split elementwise ops that read a concat at its pieces' boundaries (halo updates without the concat's copy)";
  let description = [{
    An elementwise `linalg.generic` (tensors of static shapes, parallel
    loops, identity maps, no `linalg.index`) that reads a `tensor.concat`,
    directly or through unit-stride `tensor.extract_slice`s, all along one
    axis, becomes one generic per range of that axis in which every read
    lies within one piece of its concat: each reads slices of the pieces
    themselves and writes a slice of the result (`extract_slice` of the
    init, `insert_slice` back: in place once bufferized). A halo update
    `u + k (ext[0:n] - 2 u + ext[2:n+2])` with `ext = concat(lo, u, hi)`
    so reads `u` where it is, instead of a copy of `u` into `ext` first.
    Concats and slices left without readers are erased.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def RankcFuseMultiOutput : Pass<"rankc-fuse-multi-output", "mlir::func::FuncOp"> {
  let summary = "Merge the elementwise ops of a block that share an iteration space into one linalg.generic with several results";
  let description = [{
    Multi-output loop fusion, for what upstream's elementwise fusion leaves:
    a value with several readers. The `linalg.generic`s of a block on
    tensors of one static shape (parallel loops, identity output maps,
    bodies without memory effects that do not read their outputs) become
    one generic placed before the first op outside that reads one of their
    results. Each member's body is cloned once, in block order; a member
    that reads an earlier member's result through an identity map takes
    the scalar of the same iteration; results read by no other op are
    dropped. Nothing is recomputed. An op with memory effects closes every
    open group (no computation moves past a message or a call); a group
    holds at most 256 body ops and 64 operands. One loop nest, one buffer
    per value read outside, and one function for LLVM instead of one per op.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def RankcCpuLibraryCalls : Pass<"rankc-cpu-library-calls", "mlir::ModuleOp"> {
  let summary = "Run the CPU program's matmuls through the system BLAS (runtime calls)";
  let description = [{
    The CPU's counterpart of rankc-gpu-library-calls, with the same match:
    every contraction on buffers of f32 or f64 that is one batched GEMM
    once its batch, M, N and K loop groups are collapsed (linalg.matmul,
    batch_matmul, einsum generics; transposed operands; one B for all
    batches) becomes a call of `rankc_rt_cpu_gemm(A, B, C, batch, M, N, K,
    dtype, accumulate, transA, transB, precision, broadcastB)` (host
    addresses, row-major, precision always 0), which the runtime serves
    with a CBLAS it opens at run time (OpenBLAS, one thread). A
    `linalg.fill` of zeros right before, into the same buffer, is folded
    into the call; strided operands are copied to `memref.alloc` buffers of
    identity layout first (a strided result copied back after). Other
    contractions stay for linalg-to-loops. With `threads` > 1, a GEMM of
    2^22 multiply-adds or more is an `scf.parallel` over up to `threads`
    slices of C's rows (or columns, where C has more columns than rows; no
    slice under 16) instead, each a call of `rankc_rt_cpu_gemm_block(...,
    m0, m1, n0, n1)` (convert-scf-to-openmp makes the threads).
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"1",
           "Threads of each rank (rankc compile --threads)">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def RankcCpuMathApproximations : Pass<"rankc-cpu-math-approximations", "mlir::func::FuncOp"> {
  let summary = "f32 erf as piecewise polynomials that vectorize, within 1 ulp (CPU)";
  let description = [{
    On the CPU, `math.erf` of f32 otherwise becomes calls of libm's erff,
    one element at a time: a GELU's erf and its backward were 15-20% of the
    exported transformer step. This pass writes it as four polynomials
    (|x| < 0.9: x + x Q(x^2); up to 3.93: 1 - P_i(|x| - c_i) in three
    pieces; beyond, +-1), all computed and one selected, in arith and
    `math.fma` ops that LLVM vectorizes with the rest of the loop. Fitted by
    scripts/fit_erf_f32.py: < 0.95 ulps, as libm's erff (upstream's
    approximation is 4.5 ulps off, enough to move a 6-step Adam run further
    from the GPU's than test tolerances allow). tanh and f64 stay with libm.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::math::MathDialect"];
}

def RankcCpuOutlineLoopNests : Pass<"rankc-cpu-outline-loop-nests", "mlir::ModuleOp"> {
  let summary = "Give every linalg op of a large part a function of its own (LLVM's loop passes cost more than linearly in a function's size)";
  let description = [{
    A part of an exported model is one function of hundreds of loop
    nests once lowered (resnet18: about a thousand), and LLVM's
    IndVarSimplify and LoopRotate take time that grows faster than the
    function: 77% of the 56 s of -O3 that resnet18's step took. In every
    function with at least `min-ops` linalg ops on buffers, each such op
    moves into a private function of its own (upstream's
    outlineSingleBlockRegion of SCF's utilities, with the constants it reads cloned in so
    that LLVM still folds them), marked `no_inline` so that -O3 does not
    put it back, and the part calls it.
  }];
  let options = [
    Option<"minOps", "min-ops", "int64_t", /*default=*/"16",
           "Linalg ops a function needs before they are outlined">
  ];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::scf::SCFDialect",
                           "mlir::LLVM::LLVMDialect"];
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

def RankcCpuParallelLoops : Pass<"rankc-cpu-parallel-loops", "mlir::func::FuncOp"> {
  let summary = "Lower linalg on buffers to loops, the large ones as scf.parallel (for OpenMP threads)";
  let description = [{
    `rankc compile --threads N`'s split of the work: a linalg op on buffers
    with at least `min-iterations` iterations in all (default 2^18: 2^15
    made the exported steps no faster on 2 threads than on 1, the threads
    waiting at the joins) and at least two
    parallel ones becomes an `scf.parallel` over its parallel loops (its
    reduction loops sequential inside, upstream's linalgOpToParallelLoops),
    which convert-scf-to-openmp then shares among the rank's threads;
    every other linalg op becomes sequential loops, as linalg-to-loops
    makes them (a fork and join of the threads costs microseconds: more
    than a small loop nest's own time). Reductions are never split across
    threads, so every element is summed in the order one thread sums it:
    the results do not depend on the number of threads.
  }];
  let options = [
    Option<"minIterations", "min-iterations", "int64_t", /*default=*/"262144",
           "Iterations (all loops) below which a linalg op stays sequential">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def RankcLinalgToGpuLoops : Pass<"rankc-linalg-to-gpu-loops", "mlir::func::FuncOp"> {
  let summary = "Lower linalg on buffers to tiled scf.parallel loops mapped to GPU blocks and threads";
  let description = [{
    Every linalg op becomes one kernel's worth of loops:

    - a `linalg.generic` whose reduction loops come before parallel ones is
      interchanged so that the parallel loops are outermost (the reduction
      order of each element is kept);
    - the op is lowered to `scf.parallel` over its parallel loops, with its
      reduction loops as `scf.for` inside (upstream linalg lowering);
    - that loop is tiled (`scf::tileParallelLoop`): tiles go to blocks, the
      points of a tile to threads, at most `threads` threads per block, the
      innermost (contiguous) dimension on thread x so that accesses coalesce;
    - an op without parallel loops (a reduction to a scalar, a 0-d op) runs
      in a loop of one iteration, as one thread: nothing stays on the host;
    - a contraction whose two innermost parallel loops are static multiples
      of `register-block` (N) is tiled by N x N (linalg tiling), the tile
      generalized and interchanged (reductions outermost), lowered to loops
      and its N x N loops unrolled: each thread computes an N x N block of
      the output, N loads of each input feeding N^2 multiply-adds per
      reduction step, with the accumulators in registers;
    - an elementwise `linalg.generic` whose innermost loop is a static
      multiple of `vector-width` is tiled by it (linalg tiling) and the tile
      vectorized (linalg vectorization, then vector loads and stores): each
      thread moves 16 contiguous bytes at a time, which HBM needs to stream
      (ops of fewer than `min-vector-elements` elements stay scalar).

    `convert-parallel-loops-to-gpu` then turns each mapped loop into a
    `gpu.launch`.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"256",
           "Threads per block (the product of the tile sizes)">,
    Option<"registerBlockSize", "register-block", "int64_t", /*default=*/"4",
           "Output tile (N x N) of a contraction computed by each thread, "
           "its accumulators in registers (1: one element per thread)">,
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"4",
           "Elements per thread of elementwise ops, as vector loads and "
           "stores (1: scalar)">,
    Option<"minVectorElements", "min-vector-elements", "int64_t",
           /*default=*/"16384",
           "Elementwise ops of fewer elements stay scalar, one element per "
           "thread: they are bound by the launch, not by HBM, and their "
           "vector code is `vector-width` times the PTX to compile">,
    Option<"unroll", "unroll", "int64_t", /*default=*/"4",
           "Unroll factor of each thread's innermost sequential loop "
           "(reductions), so that several loads are in flight (1: none)">,
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::gpu::GPUDialect",
                           "mlir::affine::AffineDialect",
                           "mlir::vector::VectorDialect"];
}

def RankcGpuModulesToBinaries : Pass<"rankc-gpu-modules-to-binaries", "mlir::ModuleOp"> {
  let summary = "gpu-module-to-binary with the modules serialized on threads";
  let description = [{
    Upstream's `gpu-module-to-binary`, through the same target interfaces,
    with the program's `gpu.module`s serialized (LLVM NVPTX, ptxas,
    fatbinary) in parallel on the context's threads. The `gpu.binary` ops
    are then made in module order: the output does not depend on the threads.
  }];
  let options = [
    Option<"toolkitPath", "toolkit", "std::string", /*default=*/"",
           "The CUDA toolkit (ptxas, fatbinary, libdevice)">,
    ListOption<"linkFiles", "l", "std::string",
               "Extra files to link to">,
    Option<"cmdOptions", "opts", "std::string", /*default=*/"",
           "Options passed to ptxas">,
    Option<"compilationTarget", "format", "std::string", /*default=*/"\"fatbin\"",
           "llvm, isa (PTX), bin or fatbin">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def RankcGpuMergeKernelModules : Pass<"rankc-gpu-merge-kernel-modules", "mlir::ModuleOp"> {
  let summary = "Gather the outlined kernels into a few gpu.modules";
  let description = [{
    `gpu-kernel-outlining` makes one `gpu.module` per kernel, and each module
    becomes its own binary: one ptxas run and one module load per kernel.
    This pass moves the kernels, in program order, into modules
    `@rankc_kernels`, `@rankc_kernels_0`, ... of about `ops-per-module`
    operations each (at most 16 modules: the budget grows for bigger
    programs), each kernel named after the module it came from (unique), and
    points every `gpu.launch_func` at its new home. A few modules rather than
    one: each is serialized on a thread of its own. The cut depends on the
    code only. A module holding anything but its kernel is left as it is.
  }];
  let options = [
    Option<"opsPerModule", "ops-per-module", "int64_t", /*default=*/"8000",
           "Operations of kernel bodies per module (0: one module)">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def RankcGpuStreamOrderedCalls : Pass<"rankc-gpu-stream-ordered-calls", "mlir::ModuleOp"> {
  let summary = "Let calls that enqueue on the kernels' stream go without a host wait";
  let description = [{
    `gpu-async-region` makes the host wait for the GPU (`gpu.wait [%t]`)
    before every call it cannot see into. A callee marked
    `rankc.stream_ordered` (the runtime's `rankc_rt_gemm`, which enqueues
    cuBLAS on the one stream every kernel of the process uses) is already
    ordered after the kernels before it and before those after it, so the
    wait right before such a call is erased: the host goes on queueing
    work instead of draining the GPU at every GEMM. comm-lower-to-runtime
    marks the message calls so too (the runtime waits for the stream itself
    before MPI or a staging copy touches a buffer). The wait before a
    part's return goes as well: its results only reach the
    runtime, other parts (the same stream) or the step's end (where the
    runtime waits); comm-lower-to-runtime marks parts `rankc.part`. Other
    calls keep their waits.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def RankcGpuRuntimeDeclarations : Pass<"rankc-gpu-runtime-declarations", "mlir::ModuleOp"> {
  let summary = "Declare the runtime's mgpu* entry points at the top of the module, for gpu-to-llvm to find";
  let description = [{
    `convert-gpu-to-llvm` lowers gpu.wait, gpu.alloc, gpu.memcpy and the
    like to calls of `mgpu*` functions (rankc's runtime defines them,
    runtime/MgpuWrappers.cpp). For every call it makes, it looks the
    function up with `ModuleOp::lookupSymbol`, a scan of the module from its
    first op, and declares it at the module's end if it is missing: each
    lookup then scans every function and kernel module before it finds the
    declaration, and the pass was quadratic in the program (1.40 s of a
    50,000-node program, where 0.05 s at 5,000).

    This pass declares those functions first in the module, with the
    signatures of the runtime's C definitions, so that every lookup stops
    at once. One already declared is left alone. A declaration whose type
    disagreed with the calls gpu-to-llvm makes would fail the verifier
    (llvm.call checks its operands against the callee), never pass
    silently. Declarations nothing calls are erased by
    `rankc-gpu-runtime-declarations{erase-unused}` after gpu-to-llvm.
  }];
  let options = [
    Option<"eraseUnused", "erase-unused", "bool", /*default=*/"false",
           "Erase instead the mgpu* declarations that nothing calls">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

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
  }];
  let options = [
    Option<"alignment", "alignment", "uint64_t", /*default=*/"64",
           "The globals' alignment: one-shot-bufferize's buffer-alignment">,
  ];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
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
    the function (1.6 s). The cuts are made from the end backwards, each
    moving at most one block of operations; none falls before an
    `llvm.alloca` of the entry block (which must stay there to be a static
    stack slot). Optimized functions are left alone: LLVM merges such
    blocks at once.
  }];
  let options = [
    Option<"maxOps", "max-ops", "int64_t", /*default=*/"1024",
           "Operations of a block at most (at least 1)">,
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
    slot a value: stored where it is defined, loaded where the run that
    reads it starts (or after the call, for the function's own blocks).
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

#endif // RANKC_TRANSFORMS_PASSES_TD
