// RUN: rankc-opt %s -rankc-fold-transposes | FileCheck %s
// The backward's transpose of the forward's transposed weight is the
// weight itself; a transpose of a transpose with another permutation is
// one transpose; other ops (the identity slice, the constant) stay as they
// are and where they are.
// CHECK-LABEL: func.func @weights(
// CHECK-SAME: %[[W:.*]]: tensor<4x8xf32>
// CHECK-NEXT: %[[C:.*]] = arith.constant
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %[[W]][0, 0] [4, 8] [1, 1]
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[W]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<8x4xf32>) permutation = [1, 0]
// CHECK-NOT: linalg.transpose
// CHECK: return %[[W]], %[[T]], %[[S]], %[[C]]
func.func @weights(%w: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8x4xf32>, tensor<4x8xf32>, f32) {
  %c = arith.constant 1.0 : f32
  %s = tensor.extract_slice %w[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> to tensor<4x8xf32>
  %e = tensor.empty() : tensor<8x4xf32>
  %t = linalg.transpose ins(%w : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<4x8xf32>
  %tt = linalg.transpose ins(%t : tensor<8x4xf32>) outs(%e2 : tensor<4x8xf32>) permutation = [1, 0]
  return %tt, %t, %s, %c : tensor<4x8xf32>, tensor<8x4xf32>, tensor<4x8xf32>, f32
}

// CHECK-LABEL: func.func @three(
// CHECK: linalg.transpose ins(%arg0 : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<3x4x2xf32>) permutation = [1, 2, 0]
// CHECK-NOT: linalg.transpose
func.func @three(%x: tensor<2x3x4xf32>) -> tensor<3x4x2xf32> {
  %e = tensor.empty() : tensor<3x2x4xf32>
  %t = linalg.transpose ins(%x : tensor<2x3x4xf32>) outs(%e : tensor<3x2x4xf32>) permutation = [1, 0, 2]
  %e2 = tensor.empty() : tensor<3x4x2xf32>
  %t2 = linalg.transpose ins(%t : tensor<3x2x4xf32>) outs(%e2 : tensor<3x4x2xf32>) permutation = [0, 2, 1]
  return %t2 : tensor<3x4x2xf32>
}
