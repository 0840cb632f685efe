// RUN: rankc-opt %s -rankc-outline-bufferization-segments="max-uses=3 segment=2" | FileCheck %s --check-prefix=OUT
// RUN: rankc-opt %s -rankc-outline-bufferization-segments="max-uses=3 segment=2" -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -rankc-inline-bufferization-segments | FileCheck %s
// Bufferized in segments, the schedule is the one bufferized whole:
// (constants canonicalized: a segment's clone of %c0 against the original)
// RUN: rankc-opt %s -rankc-outline-bufferization-segments="max-uses=3 segment=2" -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -rankc-inline-bufferization-segments -canonicalize > %t.segments
// RUN: rankc-opt %s -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -canonicalize > %t.whole
// RUN: diff %t.whole %t.segments
// Without a value of more than max-uses uses, nothing is cut:
// RUN: rankc-opt %s -rankc-outline-bufferization-segments | FileCheck %s --check-prefix=NONE
// RUN: not rankc-opt %s -rankc-outline-bufferization-segments="segment=1" 2>&1 | FileCheck %s --check-prefix=ERR

// ERR: error: rankc-outline-bufferization-segments: segment must be at least 2, not 1

func.func private @reads(%t: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.map ins(%t : tensor<4xf32>) outs(%e : tensor<4xf32>)
    (%x: f32, %o: f32) {
      %n = arith.negf %x : f32
      linalg.yield %n : f32
    }
  return %r : tensor<4xf32>
}

// Writes its argument in place and returns it.
func.func private @writes(%t: tensor<4xf32>, %i: index) -> tensor<4xf32> {
  %f = arith.constant 1.0 : f32
  %w = tensor.insert %f into %t[%i] : tensor<4xf32>
  return %w : tensor<4xf32>
}

// %a is read by four calls (more than max-uses=3): the five calls are cut
// into segments of two (the last one call). The scalar constant %c0 stays
// and is cloned into the segment that uses it; %1, written by @writes in
// the second segment and returned after it, is copied before that
// segment's call, as the whole function's bufferization copies it before
// @writes.
// OUT-LABEL: func.func private @schedule_segment0(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {rankc.bufferization_segment}
// OUT: call @reads(%arg0)
// OUT: call @reads(%arg0)
// OUT: return
// OUT-LABEL: func.func private @schedule_segment1(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {rankc.bufferization_segment}
// OUT: %[[C:.*]] = arith.constant 0 : index
// OUT: call @writes(%arg0, %[[C]])
// OUT: call @reads(%arg1)
// OUT-LABEL: func.func private @schedule_segment2
// OUT-LABEL: func.func @schedule(
// OUT: %[[S0:.*]]:2 = call @schedule_segment0(%arg0)
// OUT: %[[S1:.*]]:2 = call @schedule_segment1(%[[S0]]#1, %arg0)
// OUT: %[[S2:.*]] = call @schedule_segment2(%arg0)
// OUT: return %[[S0]]#0, %[[S0]]#1, %[[S1]]#0, %[[S1]]#1, %[[S2]]

// After bufferization and inlining: no segment left, one function.
// CHECK-NOT: bufferization_segment
// CHECK-LABEL: func.func @schedule(
// CHECK: memref.copy
// CHECK: call @writes
// CHECK-NOT: call @schedule_segment
// NONE-NOT: bufferization_segment
func.func @schedule(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %0 = call @reads(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = call @reads(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = call @writes(%1, %c0) : (tensor<4xf32>, index) -> tensor<4xf32>
  %3 = call @reads(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = call @reads(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
