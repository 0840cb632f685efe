//===- Passes.td - the CPU backend -*- tablegen -*-===//
//
// From a bufferized program to loops, BLAS calls and OpenMP for the host.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_CODEGEN_CPU_PASSES_TD
#define RANKC_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

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

#endif // RANKC_CODEGEN_CPU_PASSES_TD
