// RUN: rankc-opt %s -rankc-constant-globals='max-splat-elements=8' | FileCheck %s

// A splat of more elements than max-splat-elements is a fill of an empty
// tensor (no global: its bytes would be in the binary); a splat at the
// limit and a non-splat constant keep their globals.
// CHECK: memref.global "private" constant @__constant_8xf32 : memref<8xf32> = dense<1.000000e+00>
// CHECK-NOT: memref.global
// CHECK-LABEL: func.func @zeros
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x1000xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E]] : tensor<4x1000xf32>)
// CHECK: %[[S:.*]] = arith.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK: return %[[F]], %[[S]]
func.func @zeros() -> (tensor<4x1000xf32>, tensor<8xf32>) {
  %z = arith.constant dense<0.0> : tensor<4x1000xf32>
  %s = arith.constant dense<1.0> : tensor<8xf32>
  return %z, %s : tensor<4x1000xf32>, tensor<8xf32>
}
