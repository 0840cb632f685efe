// RUN: rankc-opt %s -split-input-file -verify-diagnostics
// The comm.* attributes that map functions onto ranks.

// expected-error @+1 {{rank 1 belongs to no program}}
module attributes {comm.world_size = 2 : i64} {
  func.func @rank0() attributes {comm.ranks = array<i64: 0>} { return }
}

// -----

// The least rank missing, wherever the gap is.
// expected-error @+1 {{rank 2 belongs to no program}}
module attributes {comm.world_size = 5 : i64} {
  func.func @a() attributes {comm.ranks = array<i64: 4, 0>} { return }
  func.func @b() attributes {comm.ranks = array<i64: 1, 3>} { return }
}

// -----

// "all" after a program with ranks of its own, and before one.
module attributes {comm.world_size = 4 : i64} {
  func.func @a() attributes {comm.ranks = array<i64: 3, 2>} { return }
  // expected-error @+1 {{runs on all ranks, but rank 2 also belongs to another program}}
  func.func @b() attributes {comm.ranks = "all"} { return }
}

// -----

module attributes {comm.world_size = 4 : i64} {
  func.func @a() attributes {comm.ranks = "all"} { return }
  // expected-error @+1 {{runs on rank 3, which already belongs to another program}}
  func.func @b() attributes {comm.ranks = array<i64: 3>} { return }
}

// -----

module attributes {comm.world_size = 2 : i64} {
  func.func @a() attributes {comm.ranks = array<i64: 0, 1>} { return }
  // expected-error @+1 {{runs on rank 1, which already belongs to another program}}
  func.func @b() attributes {comm.ranks = array<i64: 1>} { return }
}

// -----

module attributes {comm.world_size = 2 : i64} {
  // expected-error @+1 {{runs on rank 2, outside the world of 2 ranks}}
  func.func @a() attributes {comm.ranks = array<i64: 0, 1, 2>} { return }
}

// -----

// expected-error @+1 {{'comm.world_size' must be an integer in [1, 2^24]}}
module attributes {comm.world_size = 0 : i64} {}

// -----

// Huge worlds are refused before anything is sized by them (they aborted
// with std::length_error or out of memory).
// expected-error @+1 {{'comm.world_size' must be an integer in [1, 2^24]}}
module attributes {comm.world_size = 9223372036854775807 : i64} {}

// -----

// expected-error @+1 {{'comm.world_size' must be an integer in [1, 2^24]}}
module attributes {comm.world_size = 2147483648 : i64} {}

// -----

// expected-error @+1 {{'comm.world_size' must be an integer in [1, 2^24]}}
module attributes {comm.world_size = 16777217 : i64} {}

// -----

// expected-error @+1 {{'comm.world_size' is only valid on a module}}
func.func @f() attributes {comm.world_size = 1 : i64} { return }

// -----

// expected-error @+1 {{'comm.ranks' must be an array<i64> of ranks or "all"}}
func.func @f() attributes {comm.ranks = "some"} { return }

// -----

// expected-error @+1 {{'comm.ranks' must list distinct ranks >= 0}}
func.func @f() attributes {comm.ranks = array<i64: 0, 0>} { return }

// -----

// expected-error @+1 {{argument #0 must have exactly one of 'comm.input', 'comm.param', 'comm.optimizer_state' and 'comm.step'}}
func.func @f(%x: tensor<2xf32>) attributes {comm.ranks = "all"} { return }

// -----

// expected-error @+1 {{two arguments have the id 'x'}}
func.func @f(%x: tensor<2xf32> {comm.input = "x"}, %y: tensor<2xf32> {comm.param = "x"})
    attributes {comm.ranks = "all"} { return }

// -----

// expected-error @+1 {{argument #0: 'comm.input' must be a valid node id}}
func.func @f(%x: tensor<2xf32> {comm.input = "9x"}) { return }

// -----

// expected-error @+1 {{result #0 must have 'comm.outputs' or 'comm.optimizer_state' (both: an output carried as state)}}
func.func @f(%x: tensor<2xf32> {comm.input = "x"}) -> tensor<2xf32>
    attributes {comm.ranks = "all"} { return %x : tensor<2xf32> }

// -----

// expected-error @+1 {{result #0: invalid output name ".."}}
func.func @f(%x: tensor<2xf32> {comm.input = "x"}) -> (tensor<2xf32> {comm.outputs = [".."]}) {
  return %x : tensor<2xf32>
}

// -----

// expected-error @+1 {{output name 'y' is used twice}}
func.func @f(%x: tensor<2xf32> {comm.input = "x"})
    -> (tensor<2xf32> {comm.outputs = ["y"]}, tensor<2xf32> {comm.outputs = ["y"]})
    attributes {comm.ranks = "all"} {
  return %x, %x : tensor<2xf32>, tensor<2xf32>
}

// -----

// expected-error @+1 {{result #0: 'comm.grad_of' names 'x', which is not a parameter of this program}}
func.func @f(%x: tensor<2xf32> {comm.input = "x"}) -> (tensor<2xf32> {comm.grad_of = "x"}) {
  return %x : tensor<2xf32>
}

// -----

// expected-error @+1 {{result #0: gradient type 'tensor<3xf32>' differs from parameter 'w' of type 'tensor<2xf32>'}}
func.func @f(%w: tensor<2xf32> {comm.param = "w"}, %g: tensor<3xf32> {comm.input = "g"})
    -> (tensor<3xf32> {comm.grad_of = "w"}) {
  return %g : tensor<3xf32>
}

// -----

// expected-error @+1 {{'comm.data_parallel' order must be "ready" or "ddp-initial"}}
module attributes {comm.data_parallel = #comm.data_parallel<order = "fast">} {}

// -----

// expected-error @+1 {{duplicate or unknown struct parameter name: cap}}
module attributes {comm.data_parallel = #comm.data_parallel<cap = 1.0>} {}

// -----

// A dictionary, as rankc before 2026-12 wrote it.
// expected-error @+1 {{'comm.data_parallel' must be a #comm.data_parallel<...> on a module}}
module attributes {comm.data_parallel = {bucket_cap_mb = 1.0}} {}

// -----

// expected-error @+1 {{'comm.data_parallel' bucket_cap_mb must be a positive float}}
module attributes {comm.data_parallel = #comm.data_parallel<bucket_cap_mb = -1.0 : f64>} {}

// -----

// expected-error @+1 {{unknown or misplaced attribute 'comm.rank'}}
func.func @f() attributes {comm.rank = 1} { return }

// -----

// expected-error @+1 {{'comm.outputs' is not valid on a function argument}}
func.func @f(%x: tensor<2xf32> {comm.outputs = ["x"]}) { return }

// -----
// State (v2): input ids to output names of the same type.

// expected-error @+1 {{'comm.state' names 'y', which is not an input or param of this program}}
func.func @f(%x: tensor<2xf32> {comm.input = "x"}) -> (tensor<2xf32> {comm.outputs = ["z"]})
    attributes {comm.ranks = "all", comm.state = {y = "z"}} { return %x : tensor<2xf32> }

// -----

// expected-error @+1 {{'comm.state' of 'x' names output 'w', which this program does not have}}
func.func @f(%x: tensor<2xf32> {comm.input = "x"}) -> (tensor<2xf32> {comm.outputs = ["z"]})
    attributes {comm.ranks = "all", comm.state = {x = "w"}} { return %x : tensor<2xf32> }

// -----

// expected-error @+1 {{'comm.state' of 'x' has type 'tensor<2xf32>' but output 'z' has type 'tensor<3xf32>'}}
func.func @f(%x: tensor<2xf32> {comm.input = "x"}, %y: tensor<3xf32> {comm.input = "y"}) -> (tensor<3xf32> {comm.outputs = ["z"]})
    attributes {comm.ranks = "all", comm.state = {x = "z"}} { return %y : tensor<3xf32> }

// -----

// expected-error @+1 {{'comm.state' is only valid on a program function}}
func.func @f() attributes {comm.state = {}} { return }

// -----

// expected-error @+1 {{result #0: optimizer state 'w@exp_avg' needs exactly one argument and one result of one type}}
func.func @f(%x: tensor<2xf32> {comm.optimizer_state = "w@exp_avg"}) -> (tensor<3xf32> {comm.optimizer_state = "w@exp_avg"})
    attributes {comm.ranks = "all"} { %0 = tensor.empty() : tensor<3xf32>
  return %0 : tensor<3xf32> }

// -----

// expected-error @+1 {{an optimizer state argument has no result of the same name}}
func.func @f(%x: tensor<2xf32> {comm.optimizer_state = "w@exp_avg"}) attributes {comm.ranks = "all"} { return }

// -----

// expected-error @+1 {{result #0: 'comm.update_of' names 'x', which is not a parameter of this program}}
func.func @f(%x: tensor<2xf32> {comm.input = "x"}) -> (tensor<2xf32> {comm.outputs = ["x"], comm.update_of = "x"})
    attributes {comm.ranks = "all"} { return %x : tensor<2xf32> }

// -----

// expected-error @+3 {{expected one of [sgd, adam, adamw] for the data-parallel optimizer, got: lamb}}
// expected-error @+2 {{failed to parse Comm_OptimizerAttr parameter 'kind'}}
// expected-error @+1 {{failed to parse Comm_DataParallelAttr parameter 'optimizer'}}
module attributes {comm.data_parallel = #comm.data_parallel<optimizer = <kind = lamb, lr = 0.1 : f64, weight_decay = 0.0 : f64>>} {}

// -----

// expected-error @+2 {{'comm.data_parallel' optimizer sgd needs 'momentum', 'dampening' and 'nesterov'}}
// expected-error @+1 {{failed to parse Comm_DataParallelAttr parameter 'optimizer'}}
module attributes {comm.data_parallel = #comm.data_parallel<optimizer = <kind = sgd, lr = 0.1 : f64, weight_decay = 0.0 : f64>>} {}

// -----

// expected-error @+2 {{'comm.data_parallel' optimizer adam needs 'betas' (two floats) and 'eps'}}
// expected-error @+1 {{failed to parse Comm_DataParallelAttr parameter 'optimizer'}}
module attributes {comm.data_parallel = #comm.data_parallel<optimizer = <kind = adam, lr = 0.1 : f64, weight_decay = 0.0 : f64, eps = 1.0e-08 : f64>>} {}

// -----

// expected-error @+2 {{'comm.data_parallel' optimizer lr must be > 0}}
// expected-error @+1 {{failed to parse Comm_DataParallelAttr parameter 'optimizer'}}
module attributes {comm.data_parallel = #comm.data_parallel<optimizer = <kind = sgd, lr = 0.0 : f64, weight_decay = 0.0 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, nesterov = false>>} {}

// -----

// expected-error @+2 {{'comm.data_parallel' optimizer has settings of another kind than adam}}
// expected-error @+1 {{failed to parse Comm_DataParallelAttr parameter 'optimizer'}}
module attributes {comm.data_parallel = #comm.data_parallel<optimizer = <kind = adam, lr = 0.1 : f64, weight_decay = 0.0 : f64, momentum = 0.9 : f64, eps = 1.0e-08 : f64, betas = [0.9 : f64, 0.999 : f64]>>} {}

// -----

// The largest world, one program on all its ranks: verified without
// anything sized by the world (it took 230 MB and, under the fuzzer's
// load, over 10 s). A program missing from it is still found.
module attributes {comm.world_size = 16777216 : i64} {
  func.func @all() attributes {comm.ranks = "all"} { return }
}

// -----

// expected-error @+1 {{rank 1 belongs to no program}}
module attributes {comm.world_size = 16777216 : i64} {
  func.func @rank0() attributes {comm.ranks = array<i64: 0>} { return }
}

// -----

// A comm.ranks of the wrong kind is its function's error, not a crash of
// the module's rank cover (found by rankc-mlir-fuzzer).
module attributes {comm.world_size = 1 : i64} {
  // expected-error @+1 {{'comm.ranks' must be an array<i64> of ranks or "all"}}
  func.func @a() attributes {comm.ranks = @"all"} { return }
}

// -----

module attributes {comm.world_size = 1 : i64} {
  // expected-error @+1 {{'comm.ranks' must be an array<i64> of ranks or "all"}}
  func.func @a() attributes {comm.ranks = "some"} { return }
}

// -----

func.func @bucket_as_dictionary(%x: tensor<4xf32>) {
  // expected-error @+1 {{'comm.bucket' must be a #comm.bucket<index, params, bytes, dtype> on a comm.allreduce}}
  %r = comm.allreduce mean %x tag "b" {comm.bucket = {index = 0 : i64, params = ["w"], bytes = 16 : i64, dtype = "f32"}} : tensor<4xf32>
  return
}

// -----

func.func @bucket_on_a_send(%x: tensor<4xf32>) {
  // expected-error @+1 {{'comm.bucket' must be a #comm.bucket<index, params, bytes, dtype> on a comm.allreduce}}
  comm.send %x to rank 0 tag 1 {comm.bucket = #comm.bucket<index = 0, params = ["w"], bytes = 16, dtype = "f32">} : tensor<4xf32>
  return
}

// -----

func.func @bucket_of_numbers(%x: tensor<4xf32>) {
  // expected-error @+1 {{a bucket's params are parameter ids (strings)}}
  %r = comm.allreduce mean %x tag "b" {comm.bucket = #comm.bucket<index = 0, params = [1], bytes = 16, dtype = "f32">} : tensor<4xf32>
  return
}

// -----

// expected-error @below {{'comm.data_parallel' optimizer needs 'lr' or 'lr_input', not both}}
// expected-error @below {{failed to parse Comm_DataParallelAttr parameter 'optimizer' which is to be a `OptimizerAttr`}}
module attributes {comm.data_parallel = #comm.data_parallel<optimizer = <kind = sgd, lr = 0.1 : f64, lr_input = "lr", weight_decay = 0.0 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, nesterov = false>>} {}

// -----

// expected-error @below {{'comm.lr_phase' of kind "linear" lacks a setting or is of no known kind}}
// expected-error @below {{failed to parse Comm_OptimizerAttr parameter 'lr_schedule' which is to be a `::mlir::ArrayAttr`}}
// expected-error @below {{failed to parse Comm_DataParallelAttr parameter 'optimizer' which is to be a `OptimizerAttr`}}
module attributes {comm.data_parallel = #comm.data_parallel<optimizer = <kind = sgd, lr = 0.1 : f64, weight_decay = 0.0 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, nesterov = false, lr_schedule = [#comm.lr_phase<kind = "linear", steps = 10 : i64>]>>} {}

// -----

// expected-error @below {{'comm.data_parallel' optimizer lr_schedule: every phase but the last needs 'steps'}}
// expected-error @below {{failed to parse Comm_DataParallelAttr parameter 'optimizer' which is to be a `OptimizerAttr`}}
module attributes {comm.data_parallel = #comm.data_parallel<optimizer = <kind = sgd, lr = 0.1 : f64, weight_decay = 0.0 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, nesterov = false, lr_schedule = [#comm.lr_phase<kind = "constant", factor = 1.0 : f64>, #comm.lr_phase<kind = "constant", factor = 1.0 : f64>]>>} {}

// -----

// expected-error @below {{'comm.data_parallel' optimizer clipping needs 'clip_max_norm' > 0 and 'clip_norm_type' "2" or "inf" ('clip_output' only with them)}}
// expected-error @below {{failed to parse Comm_DataParallelAttr parameter 'optimizer' which is to be a `OptimizerAttr`}}
module attributes {comm.data_parallel = #comm.data_parallel<optimizer = <kind = sgd, lr = 0.1 : f64, weight_decay = 0.0 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, nesterov = false, clip_max_norm = 1.0 : f64, clip_norm_type = "1">>} {}

// -----

// expected-error @below {{'comm.data_parallel' accumulate must be >= 1}}
module attributes {comm.data_parallel = #comm.data_parallel<accumulate = 0 : i64>} {}

// -----

// expected-error @below {{'comm.micro_step_of' must name a program function, on a function}}
module attributes {comm.micro_step_of = "all"} {}
