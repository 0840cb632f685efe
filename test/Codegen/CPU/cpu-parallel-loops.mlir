// RUN: rankc-opt %s -rankc-cpu-parallel-loops | FileCheck %s
// RUN: rankc-opt %s -rankc-cpu-parallel-loops=min-iterations=16 | FileCheck %s --check-prefix=LOW
// rankc compile --threads: a linalg op of 2^18 iterations or more, two or
// more of them parallel, becomes an scf.parallel over its parallel loops
// (reduction loops sequential inside: every sum in one thread's order);
// every other op becomes sequential loops, as linalg-to-loops makes them.

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

// 512 x 512 elementwise: parallel over both loops.
// CHECK-LABEL: func.func @elementwise(
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0{{.*}}, %c0{{.*}}) to (%c512{{.*}}, %c512{{.*}})
// CHECK:   math.exp
// CHECK-NOT: scf.for
func.func @elementwise(%x: memref<512x512xf32>, %y: memref<512x512xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<512x512xf32>) outs(%y : memref<512x512xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

// Row sums of 512 x 512: rows in parallel, each row summed by one thread.
// CHECK-LABEL: func.func @row_sums(
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c512)
// CHECK:   scf.for %{{.*}} = %c0{{.*}} to %c512
// CHECK:     memref.load %arg0
// CHECK:     arith.addf
// CHECK:   scf.reduce
func.func @row_sums(%x: memref<512x512xf32>, %s: memref<512xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<512x512xf32>) outs(%s : memref<512xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %acc, %a : f32
    linalg.yield %t : f32
  }
  return
}

// A full sum (no parallel loop) and a small op: sequential, whatever their
// size; with a threshold of 16 the 8 x 8 copy is parallel too.
// CHECK-LABEL: func.func @sequential(
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// LOW-LABEL: func.func @sequential(
// LOW: scf.for
// LOW: scf.parallel (%{{.*}}, %{{.*}}) = (%c0{{.*}}, %c0{{.*}}) to (%c8{{.*}}, %c8{{.*}})
func.func @sequential(%x: memref<1048576xf32>, %s: memref<f32>, %a: memref<8x8xf32>, %b: memref<8x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%x : memref<1048576xf32>) outs(%s : memref<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %t = arith.addf %acc, %v : f32
    linalg.yield %t : f32
  }
  linalg.copy ins(%a : memref<8x8xf32>) outs(%b : memref<8x8xf32>)
  return
}
