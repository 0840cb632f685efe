// RUN: rankc-opt %s -rankc-constant-globals | FileCheck %s
// RUN: rankc-opt %s -rankc-constant-globals -one-shot-bufferize='bufferize-function-boundaries' | FileCheck %s --check-prefix=BUF

// Each distinct tensor constant gets a global, made function after function
// in module order (each put first in the module, so the last made comes
// first), named by its type with _N where the name is taken; the same value
// twice is one global. Scalars are not tensors: no global.
// CHECK: memref.global "private" constant @__constant_2xf32_0 : memref<2xf32> = dense<[3.000000e+00, 4.000000e+00]> {alignment = 64 : i64}
// CHECK-NEXT: memref.global "private" constant @__constant_3xi64 : memref<3xi64> = dense<[0, 2, 1]> {alignment = 64 : i64}
// CHECK-NEXT: memref.global "private" constant @__constant_2xf32 : memref<2xf32> = dense<[1.000000e+00, 2.000000e+00]> {alignment = 64 : i64}
// CHECK-NOT: memref.global
// CHECK-LABEL: func.func @first
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]>

// One-shot bufferization reuses them (their alignment is its
// buffer-alignment): no other global, each constant reads its own.
// BUF-COUNT-3: memref.global
// BUF-NOT: memref.global
// BUF-LABEL: func.func @first
// BUF: memref.get_global @__constant_2xf32 :
// BUF: memref.get_global @__constant_3xi64 :
// BUF-LABEL: func.func @second
// BUF: memref.get_global @__constant_2xf32_0 :
// BUF: memref.get_global @__constant_2xf32 :

func.func @first() -> (tensor<2xf32>, tensor<3xi64>, f32) {
  %a = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %i = arith.constant dense<[0, 2, 1]> : tensor<3xi64>
  %s = arith.constant 5.0 : f32
  return %a, %i, %s : tensor<2xf32>, tensor<3xi64>, f32
}

func.func @second() -> (tensor<2xf32>, tensor<2xf32>) {
  %b = arith.constant dense<[3.0, 4.0]> : tensor<2xf32>
  %a = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %b, %a : tensor<2xf32>, tensor<2xf32>
}
