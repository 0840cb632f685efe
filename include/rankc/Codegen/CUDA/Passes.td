//===- Passes.td - the CUDA backend -*- tablegen -*-===//
//
// From a program on tensors to kernels over device buffers, cuBLASLt calls and embedded binaries.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_CODEGEN_CUDA_PASSES_TD
#define RANKC_CODEGEN_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def RankcGpuPadsAsGenerics : Pass<"rankc-gpu-pads-as-generics", "mlir::func::FuncOp"> {
  let summary = "A constant pad (fill, then insert_slice) as one elementwise op";
  let description = [{
    On tensors: a `tensor.insert_slice` of static offsets, sizes and
    strides into a `linalg.fill` of a `tensor.empty` that nothing else
    reads (a convolution's zero padding and input dilation, the gradient of
    a slice or of a strided convolution) becomes one `linalg.generic` over
    the padded shape that yields the source's element where its index is
    one the slice writes (`tensor.extract` at the index less the offset,
    divided by the stride) and the fill's value elsewhere. On the GPU the
    fill and the copy of the interior were two kernels, the fill writing
    every element the copy then overwrote; now one kernel writes each
    element once.

    Where such a pad (or any generic computed from its indices alone) is
    read by a copy (an all-parallel generic that yields its one input's
    element: a convolution's im2col, reading windows of the padded x,
    possibly through a `tensor.expand_shape` that splits channels into
    groups), the copy computes the pad's elements itself: the reshape is
    folded into the copy's indexing map, then upstream's elementwise
    fusion moves the pad's body in. One kernel instead of two, and the
    padded tensor is never written.
  }];
  let dependentDialects = ["mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def RankcGpuCollapseDims : Pass<"rankc-gpu-collapse-dims", "mlir::func::FuncOp"> {
  let summary = "Collapse adjacent loops of one kind into one, for the GPU's three grid dimensions";
  let description = [{
    On tensors: in every linalg.generic (with linalg.index only if it has
    more than three loops, all parallel: its indices are then recovered by
    division and remainder), each
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
    alone, and so are the row reductions that rankc-linalg-to-gpu-loops
    runs on a warp per output (lib/Codegen/CUDA/WarpReductions.h). A serial
    GPU thread is slow even on a thousand elements (a 1024-element loss
    mean took 67 us), so the default `min-size` is small.
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

def RankcGpuNarrowContractions : Pass<"rankc-gpu-narrow-contractions", "mlir::func::FuncOp"> {
  let summary = "Mark f32 contractions of widened bf16/f16 operands (cuBLASLt's fast compute types are exact on them)";
  let description = [{
    On tensors, before bufferization: a contraction (linalg's contraction
    interface) with an f32 result whose two operands are each, through
    transposes, reshapes and slices, the `arith.extf` of a bf16 (or f16)
    value yielded by a linalg.generic gets `rankc.narrow_operands = bf16`
    (or f16). That is how the frontend builds a bf16 matmul (dag-format.md
    v3: an f32 contraction between casts): rankc-gpu-library-calls runs
    such a GEMM with CUBLAS_COMPUTE_32F_FAST_16BF (FAST_16F), whose
    rounding of the inputs is exact on them: the same values, on tensor
    cores. Then each marked contraction reads the narrow values themselves
    where its operands' producer is their widening (an extf-only generic
    fused in; a multi-output generic's extf of a value it also yields
    narrow; a widened copy of an input; through reshapes), both operands
    or neither, and widens them in its body: cuBLASLt reads bf16 A and B
    (half the bytes, its fast kernels) into an f32 C, and the widening
    kernels go.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def RankcGpuRoundGemmResults : Pass<"rankc-gpu-round-gemm-results", "mlir::func::FuncOp"> {
  let summary = "GEMMs whose every reader rounds their result get that rounding next to them";
  let description = [{
    On tensors, after rankc-gpu-narrow-contractions: a GEMM (rankc::asGemm)
    marked `rankc.narrow_operands` that reads its A and B narrow, starts
    from a fill of zeros, and whose every reader (generics reading it as
    an input, directly or through expand_shape / collapse_shape) uses it
    only through `arith.truncf` to that narrow type, gets one generic
    rounding its result, right after it and marked `rankc.gemm_result`;
    the readers read the rounded tensor instead of rounding. That is how
    dag-format.md v3 writes an autocast matmul's bf16 result.
    rankc-gpu-library-calls folds the rounding into the GEMM's call
    (cuBLASLt writes a bf16 C, rounded from its f32 accumulator): half the
    bytes written, and half read by every reader.

    Likewise where every reader reads the result itself (through a
    permutation) and rounds its sum with one bias per column,
    `truncf(extf(b) + c)`, b narrow and computed in the reader's body
    from inputs read per column (a parameter rounded to bf16): an autocast
    linear layer (PyTorch adds the bf16 bias to the f32 sum and rounds
    once). The rounding generic then adds the narrow bias, which the
    call's bias epilogue does (`rankc_rt_gemm_bias`). Each bias is
    computed once, as a tensor of its own: from function arguments (a
    layer's parameters) by one generic per shape at the function's start,
    all of that shape in one kernel; else right before its GEMM.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def RankcGpuNarrowStorage : Pass<"rankc-gpu-narrow-storage", "mlir::func::FuncOp"> {
  let summary = "Store widened bf16/f16 values narrow; their readers widen them";
  let description = [{
    On tensors, before bufferization: a linalg.generic result that its body
    yields as `arith.extf %v` of a bf16 (f16) value computed there (and whose
    init the body does not read) becomes %v itself, a bf16 tensor, and every
    generic that reads it widens its block argument with `arith.extf` in its
    own body. Autocast steps (dag-format.md v3) hold most of their f32
    tensors as such widened values; stored narrow, they move half the bytes,
    and every op sees the same values. Applied only where every use of the
    result is an input of a generic other than a GEMM (rankc::asGemm),
    directly or through expand_shape / collapse_shape: a returned, sent,
    sliced or accumulated tensor, or a GEMM's operand (cuBLASLt reads A and
    B in one type; rankc-gpu-narrow-contractions has narrowed those it
    can), keeps f32.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def RankcGpuRecomputeCheapTensors : Pass<"rankc-gpu-recompute-cheap-tensors", "mlir::func::FuncOp"> {
  let summary = "Recompute in their readers the tensors made from much smaller inputs";
  let description = [{
    On tensors, after fusion, split reductions and narrow storage: a
    linalg.generic that is all parallel, has one result written through a
    permutation (its init not read), whose inputs hold at most 60% of the
    result's bytes (a value widened from bf16, a row's statistic broadcast,
    a one-hot made from indices), and whose every use, at most four, is an
    input of a generic other than a GEMM that reads each element once
    (through a permutation of its loops), is fused into each of those
    readers (upstream's linalg::fuseElementwiseOps) and erased: its readers
    read its small inputs instead of its large result, which is never
    written. Readers made so are considered in their turn, so a chain of
    such tensors goes whole (log_softmax's f32 tensors over bf16 logits).
    The values are the same.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
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
    rankc-linalg-to-gpu-loops. A contraction marked by
    rankc-gpu-narrow-contractions asks for the bf16 (f16) fast compute
    type whatever `precision` says: on its operands it is exact. Its
    rounding right after it (a generic marked `rankc.gemm_result`, from
    rankc-gpu-round-gemm-results) is folded into the call, which writes
    the rounded buffer (RANKC_GEMM_NARROW_C); a rounding that adds a
    narrow bias per column first becomes `rankc_rt_gemm_bias` (the same
    arguments, then the bias's address: cuBLASLt's bias epilogue). Not
    where the rounded buffer may share bytes with A, B or the bias.
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

    - with `row-chains` (the default), a row chain (RowChains.h: a
      warp-sized row reduction, then ops over the same rows that each read
      a row total of an earlier one, such as softmax's max, sum of
      exponentials and quotient) becomes one loop over rows and lanes: each reduction's total
      reaches every lane through a butterfly of shuffles and the later ops
      take it from there, each op's elements re-read from the cache instead
      of memory. Only where no op of the chain writes bytes another one
      touches (extents in the plan's block).

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
    Option<"rowChains", "row-chains", "bool", /*default=*/"true",
           "Run each row chain (a row reduction and the ops after it that "
           "read its total: softmax's max, sum and quotient) as one kernel, "
           "a row per `row-chain-lanes` threads (RowChains.h)">,
    Option<"rowChainLanes", "row-chain-lanes", "int64_t", /*default=*/"32",
           "Threads per row of a row chain: 32 (a warp) on the GPU; 1 runs "
           "each row on one thread, without shuffles, which the CPU can "
           "execute (the chains' value tests)">,
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::gpu::GPUDialect",
                           "mlir::affine::AffineDialect",
                           "mlir::vector::VectorDialect"];
}

def RankcGpuFoldEqualKernels : Pass<"rankc-gpu-fold-equal-kernels", "mlir::ModuleOp"> {
  let summary = "One kernel per distinct body: equal outlined kernels folded";
  let description = [{
    `gpu-kernel-outlining` makes one `gpu.module` per launch site. A module
    holding only its kernel that equals an earlier such module but for the
    names (the module's, the kernel's; same attributes otherwise, same body
    up to locations) is erased, and its launches go to the earlier kernel.
    Programs of repeated work have thousands of launch sites and a handful
    of distinct kernels; each distinct kernel is then lowered, serialized
    and loaded once. `launch --kernel-stats` counts the launches of folded
    kernels under the kept kernel's name.
  }];
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

def RankcGpuRemFToLibdevice : Pass<"rankc-gpu-remf-to-libdevice", "mlir::gpu::GPUModuleOp"> {
  let summary = "A kernel's float remainder as libdevice's fmod";
  let description = [{
    `arith.remf` (a float `rem`) in a kernel becomes a call of
    `__nv_fmodf` / `__nv_fmod`: lowered to LLVM first, it would be
    `llvm.frem`, which the NVVM conversion refuses (NVPTX has no such
    instruction). Runs before arith is lowered to LLVM; libdevice is linked
    with every kernel module.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
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
    work instead of draining the GPU at every GEMM. convert-comm-to-runtime
    marks the message calls so too (the runtime waits for the stream itself
    before MPI or a staging copy touches a buffer). The wait before a
    part's return goes as well: its results only reach the
    runtime, other parts (the same stream) or the step's end (where the
    runtime waits); convert-comm-to-runtime marks parts `rankc.part`. Other
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

#endif // RANKC_CODEGEN_CUDA_PASSES_TD
