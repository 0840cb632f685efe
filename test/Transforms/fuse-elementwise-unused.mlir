// RUN: rankc-opt %s -rankc-fuse-elementwise | FileCheck %s

// A transpose nobody reads (a program may compute a value it neither
// outputs nor sends) next to one read twice: the pass copied each mover
// per user by walking its uses after the first, and an unused mover's empty
// use list sent it past the end (a segfault, shared/repro
// fuse-elementwise-segv-*.json). The read one still folds into both of its
// users; the unused one is erased.
// CHECK-LABEL: func.func @unused_mover(
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<4x3xf64>)
// CHECK: arith.negf
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<4x3xf64>)
// CHECK: math.sin
// CHECK-NOT: linalg.generic
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @unused_mover(%x: tensor<4x3xf64>) -> (tensor<3x4xf64>, tensor<3x4xf64>) {
  %e = tensor.empty() : tensor<3x4xf64>
  %dead = linalg.transpose ins(%x : tensor<4x3xf64>) outs(%e : tensor<3x4xf64>) permutation = [1, 0]
  %t = linalg.transpose ins(%x : tensor<4x3xf64>) outs(%e : tensor<3x4xf64>) permutation = [1, 0]
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<3x4xf64>) outs(%e : tensor<3x4xf64>) {
  ^bb0(%in: f64, %out: f64):
    %n = arith.negf %in : f64
    linalg.yield %n : f64
  } -> tensor<3x4xf64>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<3x4xf64>) outs(%e : tensor<3x4xf64>) {
  ^bb0(%in: f64, %out: f64):
    %s = math.sin %in : f64
    linalg.yield %s : f64
  } -> tensor<3x4xf64>
  return %a, %b : tensor<3x4xf64>, tensor<3x4xf64>
}
