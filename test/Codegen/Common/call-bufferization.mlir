// RUN: rankc-opt %s -one-shot-bufferize='bufferize-function-boundaries' | FileCheck %s
// rankc's own bufferization model of func.call (lib/Registration/
// CallBufferization.cpp) looks callees up in cached symbol tables, where
// upstream's builds a table of the module for each tensor result; it must
// mean the same: the same IR as upstream's mlir-opt, whose model is its own.
// RUN: rankc-opt %s -one-shot-bufferize='bufferize-function-boundaries' > %t.rankc
// RUN: mlir-opt %s -one-shot-bufferize='bufferize-function-boundaries' > %t.upstream
// RUN: diff %t.upstream %t.rankc

// Writes its argument in place and returns it: the call's result is the
// argument's buffer (equivalent).
func.func private @returns_written_arg(%t: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  %w = tensor.insert %f into %t[%c0] : tensor<4xf32>
  return %w : tensor<4xf32>
}

// Only reads its argument: a new buffer comes back.
func.func private @reads_arg(%t: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.map ins(%t : tensor<4xf32>) outs(%e : tensor<4xf32>)
    (%x: f32, %o: f32) {
      %n = arith.negf %x : f32
      linalg.yield %n : f32
    }
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @schedule
// CHECK-SAME: (%[[A:.*]]: memref<4xf32, {{.*}}>, %[[B:.*]]: memref<4xf32, {{.*}}>)
func.func @schedule(%a: tensor<4xf32>, %b: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // %a is only read: passed as it is, no copy, though it is returned after.
  // CHECK: %[[R0:.*]] = call @reads_arg(%[[A]])
  %0 = call @reads_arg(%a) : (tensor<4xf32>) -> tensor<4xf32>
  // %b is written and not used again: written in place, and the result is it.
  // CHECK: %[[R1:.*]] = call @returns_written_arg(%[[B]])
  %1 = call @returns_written_arg(%b) : (tensor<4xf32>) -> tensor<4xf32>
  // %0 is written but returned after: the call gets a copy, cast to the
  // callee's layout.
  // CHECK: %[[COPY:.*]] = memref.alloc
  // CHECK: memref.copy %[[R0]], %[[COPY]]
  // CHECK: %[[CAST:.*]] = memref.cast %[[COPY]]
  // CHECK: %[[R2:.*]] = call @returns_written_arg(%[[CAST]])
  %2 = call @returns_written_arg(%0) : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: return %[[A]], %[[R1]], %[[R2]], %[[R0]]
  return %a, %1, %2, %0 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
