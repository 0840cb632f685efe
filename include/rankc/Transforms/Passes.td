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
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

#endif // RANKC_TRANSFORMS_PASSES_TD
