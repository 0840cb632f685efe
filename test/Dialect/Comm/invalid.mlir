// RUN: rankc-opt %s -split-input-file -verify-diagnostics

func.func @negative_tag(%x: tensor<4xf32>) {
  // expected-error @+1 {{tag must be an integer in [0, 2^31) or a non-empty string, got -1}}
  comm.send %x to rank 1 tag -1 : tensor<4xf32>
  return
}

// -----

func.func @huge_tag(%x: tensor<4xf32>) {
  // expected-error @+1 {{tag must be an integer in [0, 2^31)}}
  comm.send %x to rank 1 tag 2147483648 : tensor<4xf32>
  return
}

// -----

func.func @empty_tag() {
  // expected-error @+1 {{tag must be an integer in [0, 2^31) or a non-empty string, got ""}}
  %r = comm.recv from rank 0 tag "" : tensor<4xf32>
  return
}

// -----

func.func @negative_rank(%x: tensor<4xf32>) {
  // expected-error @+1 {{peer rank must be >= 0, got -2}}
  comm.send %x to rank -2 tag 1 : tensor<4xf32>
  return
}

// -----

func.func @dynamic(%x: tensor<?xf32>) {
  // expected-error @+1 {{needs a statically shaped tensor, got 'tensor<?xf32>'}}
  comm.send %x to rank 0 tag 1 : tensor<?xf32>
  return
}

// -----

func.func @element(%x: tensor<4xi4>) {
  // expected-error @+1 {{must be ranked tensor of}}
  comm.send %x to rank 0 tag 1 : tensor<4xi4>
  return
}

// -----

func.func @mean_of_ints(%x: tensor<4xi32>) {
  // expected-error @+1 {{'mean' needs a floating-point tensor, got 'tensor<4xi32>'}}
  %r = comm.allreduce mean %x tag 1 : tensor<4xi32>
  return
}

// -----

func.func @sum_of_bools(%x: tensor<4xi1>) {
  // expected-error @+1 {{'sum' of booleans is not defined; use 'max' (or) or 'min' (and)}}
  %r = comm.allreduce sum %x tag 1 : tensor<4xi1>
  return
}

// -----

func.func @bad_peer_keyword(%x: tensor<4xf32>) {
  // expected-error @+1 {{expected 'rank'}}
  comm.send %x to peer 1 tag 1 : tensor<4xf32>
  return
}

// -----

func.func @wait_without_value(%x: tensor<4xf32>) {
  %s = comm.isend %x to rank 0 tag 1 event 0 : tensor<4xf32>
  // expected-error @+1 {{'comm.wait' op the request delivers 'none' but the wait gives 'tensor<4xf32>'}}
  %v = "comm.wait"(%s) : (!comm.request) -> tensor<4xf32>
  return
}

// -----

func.func @wait_wrong_type() {
  %r = comm.irecv from rank 0 tag 1 event 0 : !comm.request<tensor<4xf32>>
  // expected-error @+1 {{'comm.wait' op the request delivers 'tensor<4xf32>' but the wait gives 'tensor<4xf64>'}}
  %v = "comm.wait"(%r) : (!comm.request<tensor<4xf32>>) -> tensor<4xf64>
  return
}

// -----

func.func @irecv_without_type() {
  // expected-error @+1 {{'comm.irecv' op a receive's request names the tensor it delivers: !comm.request<tensor<...>>}}
  %r = comm.irecv from rank 0 tag 1 event 0 : !comm.request
  return
}

// -----

func.func @iallreduce_wrong_request(%x: tensor<4xf32>) {
  // expected-error @+1 {{'comm.iallreduce' op failed to verify that the request delivers the reduced type}}
  %a = "comm.iallreduce"(%x) <{reduce = #comm<reduce sum>, tag = 1 : i64, event = 0 : i32}> : (tensor<4xf32>) -> !comm.request
  return
}

// -----

func.func @grid_with_offset(%x: tensor<4xf32>) {
  // expected-error @+1 {{a grid peer has no rank or offset besides it}}
  "comm.send"(%x) {peer = 1 : i64, grid = #comm.grid<shape = [2], shift = [1], periodic = [false]>, tag = 1 : i64} : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @grid_shift_length(%x: tensor<4xf32>) {
  // expected-error @+1 {{a grid needs one shift and one periodic flag per axis of a non-empty shape}}
  comm.send %x to grid <shape = [2, 2], shift = [1], periodic = [false, false]> tag 1 : tensor<4xf32>
  return
}

// -----

func.func @recv_needs_fill() -> tensor<4xf32> {
  // expected-error @+1 {{receives from a grid peer that some ranks lack (a shift off a non-periodic axis): it needs 'fill'}}
  %r = comm.recv from grid <shape = [4], shift = [-1], periodic = [false]> tag 1 : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @fill_type() -> tensor<4xf32> {
  // expected-error @+1 {{'fill' must be a scalar of the element type 'f32', got 1 : i32}}
  %r = comm.recv from grid <shape = [4], shift = [-1], periodic = [false]> tag 1 {fill = 1 : i32} : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument #0: the step number 'comm.step' is a 0-d tensor}}
func.func @step_shape(%s: tensor<2xi64> {comm.step = "t"}) attributes {comm.ranks = "all"} {
  return
}

// -----

// expected-error @+1 {{argument #0: 'comm.unsigned' is a unit attribute on a tensor of i8, i16 or i32 (u8, u16, u32)}}
func.func @unsigned_float(%x: tensor<2xf32> {comm.input = "x", comm.unsigned}) attributes {comm.ranks = "all"} {
  return
}
