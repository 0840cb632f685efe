// RUN: rankc-opt %s -rankc-fuse-multi-output -split-input-file | FileCheck %s

#id = affine_map<(d0) -> (d0)>
// A value with two readers (upstream's fusion leaves it alone): a = exp(x),
// b = a + y, c = a * b. One generic: a and b are computed once per
// iteration and read in registers; only b and c, returned, are written.
// CHECK-LABEL: func.func @diamond(
// CHECK-SAME: %[[X:.*]]: tensor<16xf32>, %[[Y:.*]]: tensor<16xf32>
// CHECK: %[[R:.*]]:2 = linalg.generic
// CHECK-SAME: ins(%[[X]], %[[Y]] : tensor<16xf32>, tensor<16xf32>)
// CHECK-NEXT: ^bb0(%[[XS:.*]]: f32, %[[YS:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[A:.*]] = math.exp %[[XS]]
// CHECK-NEXT: %[[B:.*]] = arith.addf %[[A]], %[[YS]]
// CHECK-NEXT: %[[C:.*]] = arith.mulf %[[A]], %[[B]]
// CHECK-NEXT: linalg.yield %[[B]], %[[C]]
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @diamond(%x: tensor<16xf32>, %y: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = math.exp %i : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %y : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %r = arith.addf %i, %j : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %c = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %r = arith.mulf %i, %j : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  return %b, %c : tensor<16xf32>, tensor<16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
// A reader through a permuted map needs a's whole tensor, not the element
// of its own iteration: the group of a and b is placed before it, and the
// transpose starts one of its own.
// CHECK-LABEL: func.func @permuted_reader(
// CHECK: %[[AB:.*]]:2 = linalg.generic
// CHECK: math.exp
// CHECK: math.tanh
// CHECK: linalg.yield
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[AB]]#0, %[[AB]]#1 :
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @permuted_reader(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = math.exp %i : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = math.tanh %i : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %t = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  } -> tensor<4x4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b, %t : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %r = arith.addf %i, %j : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  return %s, %a : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
func.func private @send(tensor<8xf32>)
// A call (a message) closes the group: the ops before it stay before it,
// those after it form a group of their own. Independent ops of one shape
// (b beside a) join the same group; another shape (c) has its own.
// CHECK-LABEL: func.func @effects_close(
// CHECK: %[[G:.*]]:2 = linalg.generic
// CHECK: math.exp
// CHECK: math.sin
// CHECK: call @send(%[[G]]#0)
// CHECK: linalg.generic
// CHECK-SAME: tensor<4xf32>
// CHECK: %[[H:.*]] = linalg.generic
// CHECK-SAME: ins(%[[G]]#0, %[[G]]#1 :
// CHECK: math.cos
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @effects_close(%x: tensor<8xf32>, %y: tensor<8xf32>, %z: tensor<4xf32>) -> (tensor<8xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = math.exp %i : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%y : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = math.sin %i : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  call @send(%a) : (tensor<8xf32>) -> ()
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%z : tensor<4xf32>) outs(%e4 : tensor<4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = math.exp %i : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = math.cos %i : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %f = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%d, %b : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %r = arith.mulf %i, %j : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %f, %c : tensor<8xf32>, tensor<4xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
#sum = affine_map<(d0) -> ()>
// Not members: a reduction, and an op that writes into a member's result
// (reads it as an init). A reader that is no linalg op (extract_slice)
// closes the group where it is.
// CHECK-LABEL: func.func @not_members(
// CHECK: %[[AB:.*]]:2 = linalg.generic
// CHECK: math.exp
// CHECK: math.sin
// CHECK: tensor.extract_slice %[[AB]]#0
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[AB]]#1 :
// CHECK: math.cos
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["reduction"]
// CHECK-SAME: ins(%[[AB]]#0 :
// CHECK: return
func.func @not_members(%x: tensor<8xf32>, %s: tensor<f32>) -> (tensor<f32>, tensor<8xf32>, tensor<2xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = math.exp %i : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = math.sin %i : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %sl = tensor.extract_slice %a[0] [2] [1] : tensor<8xf32> to tensor<2xf32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%b : tensor<8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %v = math.cos %i : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #sum], iterator_types = ["reduction"]}
      ins(%a : tensor<8xf32>) outs(%s : tensor<f32>) {
  ^bb0(%i: f32, %o: f32):
    %v = arith.addf %i, %o : f32
    linalg.yield %v : f32
  } -> tensor<f32>
  return %r, %w, %sl : tensor<f32>, tensor<8xf32>, tensor<2xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
// An op that writes into a member's result while its group is open does
// not join it (the init would be the merged op's own result).
// CHECK-LABEL: func.func @init_reader(
// CHECK: %[[A:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[A]] :
// CHECK: math.cos
func.func @init_reader(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = math.exp %i : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%a : tensor<8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %v = math.cos %i : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %a, %w : tensor<8xf32>, tensor<8xf32>
}
