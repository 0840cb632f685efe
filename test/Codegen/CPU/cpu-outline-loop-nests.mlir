// RUN: rankc-opt %s -rankc-cpu-outline-loop-nests=min-ops=2 | FileCheck %s
// RUN: rankc-opt %s -rankc-cpu-outline-loop-nests | FileCheck %s --check-prefix=FEW
// In a function with at least min-ops linalg ops on buffers, each moves
// into a private function of its own (internal to the object, its call
// no_inline), with a copy of the constants it reads; below min-ops
// (default 16) nothing changes.

// CHECK: func.func private @part_nest0(%{{.*}}: memref<64xf32>, %{{.*}}: memref<64xf32>) attributes {llvm.linkage = #llvm.linkage<internal>}
// CHECK:   arith.constant 2.0
// CHECK:   linalg.generic
// CHECK: func.func private @part_nest1(
// CHECK:   linalg.copy
// The calls stand where the ops were, not wrapped (a wrapper region per
// call was a block split each for scf-to-cf: quadratic in the nests).
// CHECK-LABEL: func.func @part(
// CHECK-NEXT: arith.constant
// CHECK-NEXT: call @part_nest0(%arg0, %arg1) {no_inline}
// CHECK-NEXT: call @part_nest1(%arg1, %arg2) {no_inline}
// CHECK-NEXT: return
// FEW-LABEL: func.func @part(
// FEW: linalg.generic
// FEW: linalg.copy
// FEW-NOT: call
#id = affine_map<(i) -> (i)>
func.func @part(%a: memref<64xf32>, %b: memref<64xf32>, %c: memref<64xf32>) {
  %two = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : memref<64xf32>) outs(%b : memref<64xf32>) {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %two : f32
    linalg.yield %m : f32
  }
  linalg.copy ins(%b : memref<64xf32>) outs(%c : memref<64xf32>)
  return
}
