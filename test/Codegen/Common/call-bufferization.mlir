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

// A result that may be either argument, and one that is the second: what a
// result aliases is read from the callee's analysis (the model's
// getAliasingOpOperands, upstream's default asks every operand), and writes
// into either result must leave %a and %b, read after, untouched.
func.func private @picks(%c: i1, %x: tensor<4xf32>, %y: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>) {
  %r = arith.select %c, %x, %y : tensor<4xf32>
  return %y, %r : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @writes_aliases
// CHECK-SAME: (%{{.*}}: i1, %[[A:.*]]: memref<4xf32, {{.*}}>, %[[B:.*]]: memref<4xf32, {{.*}}>)
func.func @writes_aliases(%c: i1, %a: tensor<4xf32>, %b: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // Both results are written after and each is %a's or %b's buffer, which
  // are returned: the call gets copies of both.
  // CHECK: memref.copy %[[A]], %[[CA:.*]] :
  // CHECK: memref.copy %[[B]], %[[CB:.*]] :
  // CHECK: %[[CAST_A:.*]] = memref.cast %[[CA]]
  // CHECK: %[[CAST_B:.*]] = memref.cast %[[CB]]
  // CHECK: %[[P:.*]]:2 = call @picks(%{{.*}}, %[[CAST_A]], %[[CAST_B]])
  // CHECK: memref.store %{{.*}}, %[[P]]#0
  // CHECK: memref.store %{{.*}}, %[[P]]#1
  // CHECK: return %[[A]], %[[B]], %[[P]]#0, %[[P]]#1
  %p:2 = call @picks(%c, %a, %b)
    : (i1, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %i = arith.constant 0 : index
  %f = arith.constant 2.0 : f32
  %w0 = tensor.insert %f into %p#0[%i] : tensor<4xf32>
  %w1 = tensor.insert %f into %p#1[%i] : tensor<4xf32>
  return %a, %b, %w0, %w1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
