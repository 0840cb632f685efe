// RUN: rankc-opt %s -rankc-part-out-params | FileCheck %s
// rankc-part-out-params: a part's result that is a buffer it allocated (or
// a reshape or cast of one) becomes an argument its callers allocate: no
// copy, the caller rebuilds the reshape. A buffer returned twice is one
// argument. The step function (no rankc.part) keeps its results.

// CHECK-LABEL: func.func private @step
// CHECK-SAME: -> (memref<4xf32>, memref<2x2xf32>, memref<4xf32>, memref<4xf32>)
// CHECK: %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[R:.*]] = call @part(%arg0, %arg1, %[[A]], %[[B]]) : (f32, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> memref<4xf32>
// CHECK: %[[E:.*]] = memref.expand_shape %[[B]] {{\[\[}}0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
// CHECK: return %[[A]], %[[E]], %[[R]], %[[A]]
// CHECK-LABEL: func.func private @part
// CHECK-SAME: (%arg0: f32, %arg1: memref<4xf32>, %arg2: memref<4xf32>, %arg3: memref<4xf32>) -> memref<4xf32> attributes {rankc.part}
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: linalg.fill ins(%arg0 : f32) outs(%arg2 : memref<4xf32>)
// CHECK: linalg.fill ins(%arg0 : f32) outs(%arg3 : memref<4xf32>)
// CHECK: return %arg1 : memref<4xf32>
func.func private @step(%x: f32, %in: memref<4xf32>) -> (memref<4xf32>, memref<2x2xf32>, memref<4xf32>, memref<4xf32>) {
  %r:4 = call @part(%x, %in) : (f32, memref<4xf32>) -> (memref<4xf32>, memref<2x2xf32>, memref<4xf32>, memref<4xf32>)
  return %r#0, %r#1, %r#2, %r#3 : memref<4xf32>, memref<2x2xf32>, memref<4xf32>, memref<4xf32>
}
func.func private @part(%x: f32, %in: memref<4xf32>) -> (memref<4xf32>, memref<2x2xf32>, memref<4xf32>, memref<4xf32>) attributes {rankc.part} {
  %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<4xf32>)
  linalg.fill ins(%x : f32) outs(%b : memref<4xf32>)
  %e = memref.expand_shape %b [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
  return %a, %e, %in, %a : memref<4xf32>, memref<2x2xf32>, memref<4xf32>, memref<4xf32>
}

// A part with a result of a dynamic shape keeps it.
// CHECK-LABEL: func.func private @dynamic
// CHECK-SAME: -> memref<?xf32>
func.func private @dynamic(%n: index) -> memref<?xf32> attributes {rankc.part} {
  %a = memref.alloc(%n) : memref<?xf32>
  return %a : memref<?xf32>
}
