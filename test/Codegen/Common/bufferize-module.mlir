// rankc-bufferize-module is upstream's one-shot-bufferize (function
// boundaries, identity-layout signatures) with a linear module driver: the
// same output, byte for byte, on functions whose results are equivalent
// to, alias, or are independent of their arguments, in any order.
// RUN: rankc-opt %s -rankc-bufferize-module > %t.rankc
// RUN: rankc-opt %s -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" > %t.upstream
// RUN: diff %t.upstream %t.rankc
// RUN: FileCheck %s < %t.rankc
// A test hook of the pipeline: RANKC_UPSTREAM_BUFFERIZE=1 builds with
// upstream's pass (test/Random/differential-upstream-bufferize.test).

// Writes its second argument in place and returns it: result 0 is
// equivalent to argument 1 (the first equivalent argument counts).
func.func private @update(%g: tensor<4xf32>, %p: tensor<4xf32>, %i: index)
    -> (tensor<4xf32>, tensor<2xf32>, tensor<4xf32>) {
  %f = arith.constant 1.0 : f32
  %w = tensor.insert %f into %p[%i] : tensor<4xf32>
  // Result 1 aliases argument 0 (a view of it), equivalent to none.
  %s = tensor.extract_slice %g[0] [2] [1] : tensor<4xf32> to tensor<2xf32>
  // Result 2 is new.
  %e = tensor.empty() : tensor<4xf32>
  %n = linalg.map ins(%g : tensor<4xf32>) outs(%e : tensor<4xf32>)
    (%x: f32, %o: f32) {
      %m = arith.negf %x : f32
      linalg.yield %m : f32
    }
  return %w, %s, %n : tensor<4xf32>, tensor<2xf32>, tensor<4xf32>
}

// Returns its arguments swapped: each result equivalent to the other
// argument.
func.func private @swap(%a: tensor<4xf32>, %b: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>) {
  return %b, %a : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @step
// %p is read after @update wrote it in place: the call gets a copy.
// CHECK:         %[[COPY:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK:         memref.copy %arg1, %[[COPY]]
// CHECK:         call @update(%arg0, %[[COPY]], %arg2)
// %g's slice is written below while %g is returned: a copy too.
// CHECK:         memref.alloc
// CHECK:         memref.copy
func.func @step(%g: tensor<4xf32>, %p: tensor<4xf32>, %i: index)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<2xf32>, tensor<4xf32>, tensor<4xf32>) {
  %w, %s, %n = call @update(%g, %p, %i)
      : (tensor<4xf32>, tensor<4xf32>, index)
      -> (tensor<4xf32>, tensor<2xf32>, tensor<4xf32>)
  %f = arith.constant 2.0 : f32
  %s2 = tensor.insert %f into %s[%i] : tensor<2xf32>
  %x, %y = call @swap(%n, %w) : (tensor<4xf32>, tensor<4xf32>)
      -> (tensor<4xf32>, tensor<4xf32>)
  return %p, %g, %s2, %x, %y
      : tensor<4xf32>, tensor<4xf32>, tensor<2xf32>, tensor<4xf32>, tensor<4xf32>
}

// A loop that updates its carried tensor through @update: the call's
// result 0 is equivalent to its operand, so the loop runs in place on the
// carried buffer (one copy of %p before it, none per iteration).
// CHECK-LABEL: func.func @loop
// CHECK:         memref.alloc
// CHECK:         memref.copy %arg0
// CHECK:         scf.for
// CHECK-NOT:       memref.alloc
// CHECK-NOT:       memref.copy
// CHECK:           call @update
// CHECK-NOT:       memref.copy
// CHECK:         }
func.func @loop(%p: tensor<4xf32>, %g: tensor<4xf32>, %i: index, %n: index)
    -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%t = %p) -> tensor<4xf32> {
    %w, %s, %m = func.call @update(%g, %t, %i)
        : (tensor<4xf32>, tensor<4xf32>, index)
        -> (tensor<4xf32>, tensor<2xf32>, tensor<4xf32>)
    scf.yield %w : tensor<4xf32>
  }
  return %r, %p : tensor<4xf32>, tensor<4xf32>
}
