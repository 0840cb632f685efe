//===- Passes.td - target-independent tensor passes -*- tablegen -*-===//
//
// Rewrites of the computation on tensors (linalg, tensor) that every backend runs before bufferization; none knows about a target.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_TRANSFORMS_PASSES_TD
#define RANKC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

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

def RankcFoldEqualFunctions : Pass<"rankc-fold-equal-functions", "mlir::ModuleOp"> {
  let summary = "One function per distinct body: parts equal but for their names folded";
  let description = [{
    A private `func.func` that equals an earlier one but for its name
    (same attributes otherwise, same body up to locations and value names)
    and is used only as the callee of `func.call`s is erased, and its calls
    call the earlier one. Partitioning a program of repeated work makes
    thousands of parts of a handful of bodies; each distinct body is then
    fused, bufferized, lowered and compiled once. Run after
    `convert-comm-to-runtime`, which numbers the parts by their calls.
  }];
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

def RankcPruneDeadChecks : Pass<"rankc-prune-dead-checks", "mlir::func::FuncOp"> {
  let summary = "Reduce generics whose results nobody reads to their index checks";
  let description = [{
    A linalg.generic on tensors none of whose results is read, whose body's
    only effects are index checks (calls of rankc_rt_index_error, possibly
    under scf.if), is not trivially dead: fusion leaves such takes behind
    once it has copied their bodies into their readers. Each becomes a
    result-less generic holding only the checks and the body ops they use,
    reading only the inputs those use, over only the loops those inputs or
    linalg.index read (all parallel). A dropped loop only repeated a check
    with the same operands; the check's one effect is to end the run on
    the first bad index. Generics with other effects, or whose checks read
    an output or no loop, are left as they are. Then a result-less generic
    equal (OperationEquivalence) to an earlier one of its block goes: it
    cannot fail where the earlier one did not.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

#endif // RANKC_TRANSFORMS_PASSES_TD
