//===- CommBase.td - comm dialect definition ---------------*- tablegen -*-===//
//
// The comm dialect carries point-to-point and collective communication of
// whole tensors between the ranks of a rankc program. Computation stays in
// upstream dialects; only messages live here.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_COMM_BASE_TD
#define RANKC_COMM_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Comm_Dialect : Dialect {
  let name = "comm";
  let cppNamespace = "::rankc::comm";
  let summary = "Messages between the ranks of a rankc program";
  let description = [{
    A rankc module holds one `func.func` per program of the DAG. Discardable
    attributes of this dialect describe how the functions map onto MPI ranks;
    the dialect verifies them:

    - `comm.world_size` (module, integer >= 1): the number of ranks; with it,
      the functions carrying `comm.ranks` cover every rank exactly once.
    - `comm.data_parallel` (module, `#comm.data_parallel<...>`): bucketing
      settings and the optimizer of a data-parallel training step.
    - `comm.ranks` (function): `array<i64: ...>` of ranks or the string "all".
    - `comm.input` / `comm.param` (function argument): the DAG node id of a
      value supplied at run time; `param` marks trainable parameters, in
      registration order.
    - `comm.outputs` (function result): the output names of that value.
    - `comm.grad_of` (function result): the parameter id it is the gradient of.
    - `comm.partitioned` (module, unit): comm-partition has run.
    - `comm.part_of` (function, string): this private function is a part of
      the named program function.
    - `comm.bucket` (comm.allreduce, `#comm.bucket<...>`): the gradient
      bucket it reduces: index, params, bytes, dtype.
    - `comm.state` (program function, dictionary input id -> output name):
      after each step, that output's value becomes the input's (v2 `state`).
    - `comm.optimizer_state` (function argument and result, string): state
      of the optimizer (a momentum buffer, Adam's moments, the step count)
      that comm-apply-optimizer added: zeros before the first step, then the
      result of the same name; never read from or written to files.
    - `comm.update_of` (function result, string): the parameter's value
      after the optimizer's update; carried into the next step as that
      parameter.
    - `comm.step` (function argument, string): the DAG node id of a `step`
      leaf (v3): a scalar the runtime sets to the number of the step being
      run (0, 1, ...), never read from files.
    - `comm.micro_step_of` (function, string): this partitioned function is
      the micro-step of the named program (`accumulate` > 1): same arguments
      and results, gradients summed into their accumulators, no gradient
      communication and no update (comm-micro-steps).
    - `comm.unsigned` (function argument and result, unit): the integer
      values are unsigned (u8, u16, u32 in files; i8, i16, i32 in the IR,
      which computes on them with unsigned ops where the sign matters).
  }];
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
    void registerTypes();

    static constexpr ::llvm::StringLiteral kWorldSize = "comm.world_size";
    static constexpr ::llvm::StringLiteral kDataParallel = "comm.data_parallel";
    /// The machine model buckets are chosen by (#comm.machine) and the
    /// report of that choice (a dictionary: chosen, candidates' predicted
    /// finish, compute and exposed seconds).
    static constexpr ::llvm::StringLiteral kMachine = "comm.machine";
    static constexpr ::llvm::StringLiteral kBucketChoice = "comm.bucket_choice";
    static constexpr ::llvm::StringLiteral kRanks = "comm.ranks";
    static constexpr ::llvm::StringLiteral kInput = "comm.input";
    static constexpr ::llvm::StringLiteral kParam = "comm.param";
    static constexpr ::llvm::StringLiteral kOutputs = "comm.outputs";
    static constexpr ::llvm::StringLiteral kGradOf = "comm.grad_of";
    static constexpr ::llvm::StringLiteral kPartitioned = "comm.partitioned";
    static constexpr ::llvm::StringLiteral kPartOf = "comm.part_of";
    static constexpr ::llvm::StringLiteral kBucket = "comm.bucket";
    static constexpr ::llvm::StringLiteral kState = "comm.state";
    static constexpr ::llvm::StringLiteral kOptimizerState = "comm.optimizer_state";
    static constexpr ::llvm::StringLiteral kUpdateOf = "comm.update_of";
    static constexpr ::llvm::StringLiteral kStep = "comm.step";
    static constexpr ::llvm::StringLiteral kUnsigned = "comm.unsigned";
    static constexpr ::llvm::StringLiteral kMicroStepOf = "comm.micro_step_of";
  }];
}

// Every communication op reads and writes this resource. That keeps them
// alive through DCE and canonicalization (a receive whose value is unused
// must still run, or its sender blocks forever) and keeps their relative
// order: passes may move computation across messages, never messages
// across each other.
def Comm_Network : Resource<"::rankc::comm::NetworkResource">;

class Comm_Op<string mnemonic, list<Trait> traits = []>
    : Op<Comm_Dialect, mnemonic, traits>;

def Comm_ReduceKind : I32EnumAttr<"ReduceKind", "reduction of a collective", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"prod", 1>,
    I32EnumAttrCase<"max", 2>, I32EnumAttrCase<"min", 3>,
    I32EnumAttrCase<"mean", 4>]> {
  let cppNamespace = "::rankc::comm";
  let genSpecializedAttr = 0;
}

def Comm_ReduceKindAttr : EnumAttr<Comm_Dialect, Comm_ReduceKind, "reduce"> {
  let assemblyFormat = "$value";
}

// A tag is what the DAG wrote: a non-negative integer below 2^31 or a
// non-empty string. Mapping onto MPI tags happens across ranks, later.
def Comm_TagAttr : AnyAttrOf<[I64Attr, StrAttr]>;

// Element types that the DAG format knows.
// Element types that the DAG format knows (u8 and u32 travel as i8 and
// i32, u16 as i16: signless, as arith computes on them).
def Comm_Element : AnyTypeOf<[I1, I8, I16, I32, I64, F16, BF16, F32, F64]>;
def Comm_Tensor : RankedTensorOf<[Comm_Element]>;

def Comm_OptimizerKind : I32EnumAttr<"OptimizerKind", "the data-parallel optimizer", [
    I32EnumAttrCase<"sgd", 0>, I32EnumAttrCase<"adam", 1>,
    I32EnumAttrCase<"adamw", 2>]> {
  let cppNamespace = "::rankc::comm";
  let genSpecializedAttr = 0;
}

def Comm_LrPhaseAttr : AttrDef<Comm_Dialect, "LrPhase"> {
  let mnemonic = "lr_phase";
  let summary = "one phase of a learning-rate schedule (torch.optim.lr_scheduler's)";
  let description = [{
    The learning rate of an optimizer step t steps into the phase is
    `lr * factor(t)`: `constant` (factor), `linear` (start_factor,
    end_factor over `steps`: LinearLR), `cosine` (min_factor over `steps`:
    CosineAnnealingLR's closed form), `step` (gamma every step_size: StepLR)
    or `exponential` (gamma: ExponentialLR). Every setting present, as the
    importer fills the defaults in; `steps` is absent only in a schedule's
    last phase. comm-apply-optimizer computes the factors in f64.

    ```mlir
    #comm.lr_phase<kind = "linear", steps = 100 : i64,
                   start_factor = 0.01 : f64, end_factor = 1.0 : f64>
    ```
  }];
  let parameters = (ins "::mlir::StringAttr":$kind,
                        OptionalParameter<"::mlir::IntegerAttr">:$steps,
                        OptionalParameter<"::mlir::FloatAttr">:$factor,
                        OptionalParameter<"::mlir::FloatAttr">:$start_factor,
                        OptionalParameter<"::mlir::FloatAttr">:$end_factor,
                        OptionalParameter<"::mlir::FloatAttr">:$min_factor,
                        OptionalParameter<"::mlir::IntegerAttr">:$step_size,
                        OptionalParameter<"::mlir::FloatAttr">:$gamma);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Comm_OptimizerAttr : AttrDef<Comm_Dialect, "Optimizer"> {
  let mnemonic = "optimizer";
  let summary = "the optimizer a data-parallel step applies (torch.optim's)";
  let description = [{
    Every setting present, as the importer fills PyTorch's defaults in: SGD
    has `momentum`, `dampening` and `nesterov`; Adam and AdamW have `betas`
    (two floats) and `eps`. comm-apply-optimizer reads it.

    The learning rate is `lr`, or the value of the program's input named
    `lr_input` at each step; `lr_schedule` (a list of #comm.lr_phase)
    scales `lr` step by step. `clip_max_norm` clips the gradients as
    torch.nn.utils.clip_grad_norm_ does (`clip_norm_type` "2" or "inf"),
    `clip_output` names the output holding the total norm.

    ```mlir
    #comm.optimizer<kind = adam, lr = 1.0e-03 : f64, weight_decay = 0.0 : f64,
                    betas = [0.9 : f64, 0.999 : f64], eps = 1.0e-08 : f64>
    ```
  }];
  let parameters = (ins "OptimizerKind":$kind,
                        OptionalParameter<"::mlir::FloatAttr">:$lr,
                        "::mlir::FloatAttr":$weight_decay,
                        OptionalParameter<"::mlir::FloatAttr">:$momentum,
                        OptionalParameter<"::mlir::FloatAttr">:$dampening,
                        OptionalParameter<"::mlir::BoolAttr">:$nesterov,
                        OptionalParameter<"::mlir::ArrayAttr">:$betas,
                        OptionalParameter<"::mlir::FloatAttr">:$eps,
                        OptionalParameter<"::mlir::StringAttr">:$lr_input,
                        OptionalParameter<"::mlir::ArrayAttr">:$lr_schedule,
                        OptionalParameter<"::mlir::FloatAttr">:$clip_max_norm,
                        OptionalParameter<"::mlir::StringAttr">:$clip_norm_type,
                        OptionalParameter<"::mlir::StringAttr">:$clip_output);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Comm_DataParallelAttr : AttrDef<Comm_Dialect, "DataParallel"> {
  let mnemonic = "data_parallel";
  let summary = "the settings of a data-parallel training step";
  let description = [{
    On the module (as `comm.data_parallel`): DDP's bucket limits in MiB,
    the parameters whose gradients are not averaged, the order buckets are
    filled in ("ready" or "ddp-initial"), the optimizer, if any, and
    `accumulate`, the micro-steps per update. An absent setting takes DDP's
    default (25 and 1 MiB, none, "ready", 1).

    ```mlir
    module attributes {comm.data_parallel = #comm.data_parallel<
        bucket_cap_mb = 2.5e+01 : f64, order = "ready">} {}
    ```
  }];
  let parameters = (ins OptionalParameter<"::mlir::FloatAttr">:$bucket_cap_mb,
                        OptionalParameter<"::mlir::FloatAttr">:$first_bucket_cap_mb,
                        OptionalParameter<"::mlir::ArrayAttr">:$ignore,
                        OptionalParameter<"::mlir::StringAttr">:$order,
                        OptionalParameter<"OptimizerAttr">:$optimizer,
                        OptionalParameter<"::mlir::IntegerAttr">:$accumulate);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getAccumulateOr1() const {
      return getAccumulate() ? getAccumulate().getInt() : 1;
    }
    double getBucketCapMbOr(double dflt) const {
      return getBucketCapMb() ? getBucketCapMb().getValueAsDouble() : dflt;
    }
    double getFirstBucketCapMbOr(double dflt) const {
      return getFirstBucketCapMb() ? getFirstBucketCapMb().getValueAsDouble()
                                   : dflt;
    }
  }];
}

def Comm_BucketAttr : AttrDef<Comm_Dialect, "Bucket"> {
  let mnemonic = "bucket";
  let summary = "the DDP gradient bucket an allreduce averages";
  let description = [{
    On the `comm.allreduce` that comm-bucket-gradients makes for a bucket
    (as `comm.bucket`): its index in the order reductions start, the
    parameters whose gradients it holds (in the flat buffer's order), its
    size in bytes and its dtype. Chosen by a machine model (`--bucket-cap-mb
    auto`), also what the model predicts, in seconds into the step: when
    its last gradient is ready, when its reduction starts, how long the
    reduction takes, and how much of the step's time its wait adds after
    the computation (its exposed share). comm-async-schedule keeps it on
    the `comm.iallreduce` that starts the reduction; the manifest gives it
    to the runtime, which reports the measured times beside it.

    ```mlir
    {comm.bucket = #comm.bucket<index = 1, params = ["w2", "w1"], bytes = 96, dtype = "f32">}
    ```
  }];
  let parameters = (ins "int64_t":$index, "::mlir::ArrayAttr":$params,
                        "int64_t":$bytes, "::mlir::StringAttr":$dtype,
                        OptionalParameter<"::mlir::FloatAttr">:$ready_seconds,
                        OptionalParameter<"::mlir::FloatAttr">:$start_seconds,
                        OptionalParameter<"::mlir::FloatAttr">:$reduce_seconds,
                        OptionalParameter<"::mlir::FloatAttr">:$exposed_seconds);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Comm_MachineModelAttr : AttrDef<Comm_Dialect, "MachineModel"> {
  let mnemonic = "machine";
  let summary = "what a machine's reductions and computation cost (rankc calibrate)";
  let description = [{
    On the module (as `comm.machine`), from `--bucket-cap-mb auto
    --machine MACHINE.json`: the allreduce fit of the world size
    calibrated (`ranks`; the nearest one measured), as pieces
    `[from_bytes, alpha_seconds, beta_seconds_per_byte, ...]`; the
    fraction of a reduction that advances while ranks compute (`overlap`);
    the compute rate (flops per second) and copy rate (bytes per second)
    that estimate each op's time, and, from a measured run (`--profile`,
    `launch --stats`), the step's computation in seconds (`compute_seconds`),
    which scales the estimates to it, and what the step spends neither in
    its parts nor in waits (`overhead_seconds`: the schedule's glue, the
    runtime's calls, the starts of the reductions), which the predicted
    step adds whatever the buckets; and what each MPI call during the
    computation adds to a reduction's hidden fraction (`overlap_per_call`:
    without asynchronous progress, a bucket's reduction advances at the
    starts of the buckets after it). comm-bucket-gradients then chooses the
    buckets (rankc/Analysis/CostModel.h).

    ```mlir
    module attributes {comm.machine = #comm.machine<ranks = 2,
        allreduce = array<f64: 0.0, 2.0e-06, 3.0e-10>, overlap = 0.0 : f64,
        flops = 2.0e+09 : f64, copy = 1.0e+10 : f64>} {}
    ```
  }];
  let parameters = (ins "int64_t":$ranks,
                        "::mlir::DenseF64ArrayAttr":$allreduce,
                        "::mlir::FloatAttr":$overlap,
                        "::mlir::FloatAttr":$flops,
                        "::mlir::FloatAttr":$copy,
                        OptionalParameter<"::mlir::FloatAttr">:$compute_seconds,
                        OptionalParameter<"::mlir::FloatAttr">:$overhead_seconds,
                        OptionalParameter<"::mlir::FloatAttr">:$overlap_per_call);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Comm_GridAttr : AttrDef<Comm_Dialect, "Grid"> {
  let mnemonic = "grid";
  let summary = "a peer on a row-major process grid (MPI_Cart_shift's)";
  let description = [{
    The ranks form a row-major grid of extents `shape` (their product is the
    world size); the peer of a rank is the rank at its coordinates moved by
    `shift`. Past the edge of an axis that is not `periodic` there is no
    peer (MPI_PROC_NULL): a send does nothing, a receive gives its `fill`.

    ```mlir
    comm.send %x to grid #comm.grid<shape = [2, 3], shift = [0, 1],
        periodic = [false, false]> tag "east" : tensor<8xf32>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        ArrayRefParameter<"int64_t">:$shift,
                        "::mlir::DenseBoolArrayAttr":$periodic);
  let assemblyFormat = [{
    `<` `shape` `=` `[` $shape `]` `,` `shift` `=` `[` $shift `]` `,`
    `periodic` `=` $periodic `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The peer of `rank`, or -1 where there is none.
    int64_t resolve(int64_t rank) const;
    /// Whether some rank has no peer.
    bool leavesGrid() const;
  }];
}

def Comm_RequestType : TypeDef<Comm_Dialect, "Request"> {
  let mnemonic = "request";
  let summary = "a message or collective in flight";
  let description = [{
    What `comm.isend`, `comm.irecv` and `comm.iallreduce` start and
    `comm.wait` completes, as MPI's requests. A request that delivers a
    value (a receive's, a reduction's) names its type:
    `!comm.request<tensor<8xf32>>`; a send's is `!comm.request`.
  }];
  let parameters = (ins OptionalParameter<"::mlir::Type">:$valueType);
  let assemblyFormat = "(`<` $valueType^ `>`)?";
}

/// A send's request: it delivers nothing.
def Comm_SendRequest : Type<
    CPred<"::llvm::isa<::rankc::comm::RequestType>($_self) && "
          "!::llvm::cast<::rankc::comm::RequestType>($_self).getValueType()">,
    "a send's request (!comm.request)", "::rankc::comm::RequestType">,
    BuildableType<"::rankc::comm::RequestType::get($_builder.getContext(), "
                  "::mlir::Type())">;

#endif // RANKC_COMM_BASE_TD
