// RUN: rankc-opt %s -rankc-donate-carried -split-input-file | FileCheck %s
// rankc-donate-carried: a carried result (rankc.carried_from = ARG) that is
// a buffer of the step is written over its argument where that is safe.

// The update reads the parameter last, element for element, in the same
// generic that first writes its next value: in place.
// CHECK-LABEL: func.func private @step
// CHECK-NOT: memref.alloc
// CHECK: call @update(%arg0, %arg1, %arg0)
// CHECK: return %arg0
#id = affine_map<(d0) -> (d0)>
func.func private @step(%p: memref<4xf32>, %g: memref<4xf32>) -> (memref<4xf32> {rankc.carried_from = 0 : i64}) {
  %next = memref.alloc() : memref<4xf32>
  call @update(%p, %g, %next) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  return %next : memref<4xf32>
}
func.func private @update(%p: memref<4xf32>, %g: memref<4xf32>, %out: memref<4xf32>) attributes {rankc.part} {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %g : memref<4xf32>, memref<4xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// The part reads the parameter again after it wrote the next value: not.
// CHECK-LABEL: func.func private @step
// CHECK: %[[N:.*]] = memref.alloc()
// CHECK: return %[[N]]
#id = affine_map<(d0) -> (d0)>
func.func private @step(%p: memref<4xf32>, %g: memref<4xf32>) -> (memref<4xf32> {rankc.carried_from = 0 : i64}) {
  %next = memref.alloc() : memref<4xf32>
  call @update(%p, %g, %next) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  return %next : memref<4xf32>
}
func.func private @update(%p: memref<4xf32>, %g: memref<4xf32>, %out: memref<4xf32>) attributes {rankc.part} {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %g : memref<4xf32>, memref<4xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  memref.copy %p, %g : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Read in another order than written (a reversal): not in place.
// CHECK-LABEL: func.func private @step
// CHECK: %[[N:.*]] = memref.alloc()
// CHECK: return %[[N]]
#id = affine_map<(d0) -> (d0)>
#rev = affine_map<(d0) -> (3 - d0)>
func.func private @step(%p: memref<4xf32>) -> (memref<4xf32> {rankc.carried_from = 0 : i64}) {
  %next = memref.alloc() : memref<4xf32>
  call @reverse(%p, %next) : (memref<4xf32>, memref<4xf32>) -> ()
  return %next : memref<4xf32>
}
func.func private @reverse(%p: memref<4xf32>, %out: memref<4xf32>) attributes {rankc.part} {
  linalg.generic {indexing_maps = [#rev, #id], iterator_types = ["parallel"]}
      ins(%p : memref<4xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// The input dies before the buffer is first written: in place. A result
// also passed through unchanged, or not marked carried, stays.
// CHECK-LABEL: func.func private @step
// CHECK: %[[T:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %arg0, %[[T]]
// CHECK: memref.copy %[[T]], %arg0
// CHECK: %[[K:.*]] = memref.alloc() : memref<4xf32>
// CHECK: return %arg0, %arg1, %[[K]]
func.func private @step(%p: memref<4xf32>, %q: memref<4xf32>) -> (memref<4xf32> {rankc.carried_from = 0 : i64}, memref<4xf32> {rankc.carried_from = 1 : i64}, memref<4xf32>) {
  %t = memref.alloc() : memref<4xf32>
  memref.copy %p, %t : memref<4xf32> to memref<4xf32>
  %next = memref.alloc() : memref<4xf32>
  memref.copy %t, %next : memref<4xf32> to memref<4xf32>
  %k = memref.alloc() : memref<4xf32>
  memref.copy %t, %k : memref<4xf32> to memref<4xf32>
  return %next, %q, %k : memref<4xf32>, memref<4xf32>, memref<4xf32>
}

// -----

// A view of the parameter made before the next value is first written but
// read after it (collapsed dimensions on the GPU make such views): the
// read comes late, whatever the view's position. Not in place.
// CHECK-LABEL: func.func private @step
// CHECK: %[[N:.*]] = memref.alloc() : memref<2x2xf32>
// CHECK: call @late(%arg0, %[[N]])
// CHECK: return %[[N]]
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func private @step(%p: memref<2x2xf32>) -> (memref<2x2xf32> {rankc.carried_from = 0 : i64}) {
  %n = memref.alloc() : memref<2x2xf32>
  call @late(%p, %n) : (memref<2x2xf32>, memref<2x2xf32>) -> ()
  return %n : memref<2x2xf32>
}
func.func private @late(%p: memref<2x2xf32>, %out: memref<2x2xf32>) attributes {rankc.part} {
  %v = memref.collapse_shape %p [[0, 1]] : memref<2x2xf32> into memref<4xf32>
  %cst = arith.constant 0.0 : f32
  linalg.fill ins(%cst : f32) outs(%out : memref<2x2xf32>)
  %w = memref.collapse_shape %out [[0, 1]] : memref<2x2xf32> into memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%v : memref<4xf32>) outs(%w : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The GPU's collapsed dimensions: the part reads and writes both buffers
// through reshapes made ahead of the update, and the step returns its
// buffer through a collapse_shape / expand_shape pair that undo each other
// (bufferized tensor reshapes). Still element for element: in place, the
// pair gone.
// CHECK-LABEL: func.func private @step
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.expand_shape
// CHECK: call @update(%arg0, %arg1, %arg0)
// CHECK-NOT: memref.expand_shape
// CHECK: return %arg0
#id = affine_map<(d0) -> (d0)>
func.func private @step(%p: memref<2x3xf32>, %g: memref<6xf32>) -> (memref<2x3xf32> {rankc.carried_from = 0 : i64}) {
  %next = memref.alloc() : memref<2x3xf32>
  call @update(%p, %g, %next) : (memref<2x3xf32>, memref<6xf32>, memref<2x3xf32>) -> ()
  %c = memref.collapse_shape %next [[0, 1]] : memref<2x3xf32> into memref<6xf32>
  %e = memref.expand_shape %c [[0, 1]] output_shape [2, 3] : memref<6xf32> into memref<2x3xf32>
  return %e : memref<2x3xf32>
}
func.func private @update(%p: memref<2x3xf32>, %g: memref<6xf32>, %out: memref<2x3xf32>) attributes {rankc.part} {
  %pv = memref.collapse_shape %p [[0, 1]] : memref<2x3xf32> into memref<6xf32>
  %ov = memref.collapse_shape %out [[0, 1]] : memref<2x3xf32> into memref<6xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%pv, %g : memref<6xf32>, memref<6xf32>) outs(%ov : memref<6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// The writing generic reads the parameter through a subview (other
// elements than the one it writes): not in place.
// CHECK-LABEL: func.func private @step
// CHECK: %[[N:.*]] = memref.alloc() : memref<8xf32>
// CHECK: call @shifted(%arg0, %[[N]])
// CHECK: return %[[N]]
#id = affine_map<(d0) -> (d0)>
func.func private @step(%p: memref<8xf32>) -> (memref<8xf32> {rankc.carried_from = 0 : i64}) {
  %n = memref.alloc() : memref<8xf32>
  call @shifted(%p, %n) : (memref<8xf32>, memref<8xf32>) -> ()
  return %n : memref<8xf32>
}
func.func private @shifted(%p: memref<8xf32>, %out: memref<8xf32>) attributes {rankc.part} {
  %hi = memref.subview %p[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  %lo = memref.subview %out[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%hi : memref<4xf32, strided<[1], offset: 4>>) outs(%lo : memref<4xf32, strided<[1]>>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}
