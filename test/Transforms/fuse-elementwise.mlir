// RUN: rankc-opt %s -rankc-fuse-elementwise | FileCheck %s

// x @ W^T as the exporter writes it: the transpose folds into the matmul
// as a permuted operand (a GEMM with B transposed), while the relu that
// feeds it stays its own op (arithmetic would make the GEMM a kernel). The
// transpose also folds into its second user, an elementwise add.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[T:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @linear(
// CHECK-NOT: linalg.transpose
// CHECK: %[[RELU:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<8x16xf32>)
// CHECK: arith.maximumf
// CHECK: linalg.fill
// CHECK: %[[MM:.*]] = linalg.generic {indexing_maps = [#[[A]], #[[BT]], #[[C]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[RELU]], %arg1 : tensor<8x16xf32>, tensor<32x16xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK: linalg.generic {indexing_maps = [#[[T]], {{.*}}]{{.*}} ins(%arg1, %arg2 : tensor<32x16xf32>, tensor<16x32xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#v = affine_map<(d0) -> (d0)>
func.func @linear(%x: tensor<8x16xf32>, %w: tensor<32x16xf32>, %y: tensor<16x32xf32>) -> (tensor<8x32xf32>, tensor<16x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x16xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<8x16xf32>
  %e1 = tensor.empty() : tensor<16x32xf32>
  %wt = linalg.transpose ins(%w : tensor<32x16xf32>) outs(%e1 : tensor<16x32xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<8x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %mm = linalg.matmul ins(%relu, %wt : tensor<8x16xf32>, tensor<16x32xf32>) outs(%acc : tensor<8x32xf32>) -> tensor<8x32xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%wt, %y : tensor<16x32xf32>, tensor<16x32xf32>) outs(%e1 : tensor<16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  return %mm, %sum : tensor<8x32xf32>, tensor<16x32xf32>
}

// A chain of elementwise ops is one generic (one kernel), as upstream.
// CHECK-LABEL: func.func @chain(
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @chain(%a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %s = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %p = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]}
      ins(%s, %a : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.mulf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  return %p : tensor<64xf32>
}

// A transpose folds into a GEMM only where the GEMM stays one: dW[j, k] =
// sum over b, t of dY[b, t, j] X[b, t, k] with dY given as [b, j, t]
// transposed to [b, t, j]. Read through the permuted map, the reduced b
// and t would not be adjacent in dY: no GEMM (a kernel that reduces 2048
// elements per thread). The transpose stays, and the GEMM reads its result.
// CHECK-LABEL: func.func @split_k
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<8x16x4xf32>) outs(%{{.*}} : tensor<8x4x16xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[T]], %arg1 : tensor<8x4x16xf32>, tensor<8x4x32xf32>)
func.func @split_k(%dy: tensor<8x16x4xf32>, %x: tensor<8x4x32xf32>) -> tensor<16x32xf32> {
  %e = tensor.empty() : tensor<8x4x16xf32>
  %t = linalg.transpose ins(%dy : tensor<8x16x4xf32>) outs(%e : tensor<8x4x16xf32>) permutation = [0, 2, 1]
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<16x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(j, k, b, s) -> (b, s, j)>, affine_map<(j, k, b, s) -> (b, s, k)>, affine_map<(j, k, b, s) -> (j, k)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%t, %x : tensor<8x4x16xf32>, tensor<8x4x32xf32>) outs(%acc : tensor<16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}
