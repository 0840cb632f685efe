//===- Passes.td - the comm dialect's passes -*- tablegen -*-===//
//
// Verify all ranks, average gradients in buckets, apply the optimizer, split each program at its messages and give them MPI tags: everything that needs to know about communication and nothing about a target.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_DIALECT_COMM_TRANSFORMS_PASSES_TD
#define RANKC_DIALECT_COMM_TRANSFORMS_PASSES_TD

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

def CommMicroSteps : Pass<"comm-micro-steps", "mlir::ModuleOp"> {
  let summary = "Build each program's micro-step (gradient accumulation)";
  let description = [{
    With `accumulate` K > 1 in `comm.data_parallel`, adds for every program
    P a partitioned function `P__micro` (marked `comm.micro_step_of = "P"`,
    its parts `<part>__micro`) that the runtime runs on the K - 1 steps
    between updates: the gradients are added into their accumulators and
    nothing else changes (no gradient reduction, no optimizer update). It
    has the arguments and results that P gets from
    comm-accumulate-gradients and comm-apply-optimizer, which run after it;
    the document's own messages stay, partitioned as P's are.
  }];
  let options = [
    Option<"eagerSends", "eager-sends", "bool", /*default=*/"true",
           "As comm-partition's option of the same name">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::math::MathDialect",
                           "mlir::tensor::TensorDialect"];
}

def CommAccumulateGradients : Pass<"comm-accumulate-gradients", "mlir::ModuleOp"> {
  let summary = "Sum gradients over K micro-steps before they are averaged";
  let description = [{
    With `accumulate` K > 1 in `comm.data_parallel`, every `comm.grad_of`
    result g of a program gets an accumulator (an argument and a result
    marked `comm.optimizer_state = "<output>@grad_sum"`, zero before the
    first step) and becomes (sum + g) / K, the accumulator restarting at
    zero: the update step, which runs every K-th step. The result is also
    carried as state ("<output>@grad"), so that the micro-steps between
    updates (comm-micro-steps) return the last update's gradient. Runs
    before comm-bucket-gradients, which then averages (sum + g) / K over
    the ranks.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
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

def CommAssignMpiTags : Pass<"comm-assign-mpi-tags", "mlir::ModuleOp"> {
  let summary = "Give every send and receive the MPI tag it travels with";
  let description = [{
    Sets `mpi_tag` on every comm.send and comm.recv from the cross-rank
    graph's numbering: the DAG's tags, integers ascending then strings, are
    numbered densely, the same way on every rank, so both ends of a message
    agree without any exchange at run time.
  }];
}

def CommAsyncSchedule : Pass<"comm-async-schedule", "mlir::ModuleOp"> {
  let summary = "Make each program's schedule of messages explicit: nonblocking starts and waits";
  let description = [{
    Runs on partitioned programs and turns every message and collective
    into MPI's nonblocking form, placed for overlap:

    - every `comm.recv` is posted (`comm.irecv`) at the start of the
      program and waited for (`comm.wait`) where the value is first needed,
      which partitioning made as late as possible;
    - every `comm.send` starts (`comm.isend`) right where its value exists
      and is completed at the end of the program;
    - every `comm.allreduce` starts (`comm.iallreduce`) as soon as its input
      exists, but never before the previous collective (every rank starts
      them in the same order), and is waited for where its result is needed.

    Each start carries `event`: its message's index in program order, as
    the runtime's manifest, trace and errors number them.

    With `blocking-sends` every send is completed right after it starts:
    the bulk-synchronous baseline, which exposes its communication.
  }];
  let options = [
    Option<"blockingSends", "blocking-sends", "bool", /*default=*/"false",
           "Complete each send right after starting it">,
  ];
}

#endif // RANKC_DIALECT_COMM_TRANSFORMS_PASSES_TD
