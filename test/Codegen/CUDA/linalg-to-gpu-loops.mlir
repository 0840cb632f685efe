// RUN: rankc-opt %s -rankc-linalg-to-gpu-loops="unroll=1 min-vector-elements=0" | FileCheck %s
// RUN: rankc-opt %s -rankc-linalg-to-gpu-loops=min-vector-elements=0 | FileCheck %s --check-prefix=UNROLL
// RUN: rankc-opt %s -rankc-linalg-to-gpu-loops="threads=64 min-vector-elements=0" | FileCheck %s --check-prefix=T64
// RUN: rankc-opt %s -rankc-linalg-to-gpu-loops | FileCheck %s --check-prefix=SMALL

// (The shapes here are small; min-vector-elements=0 vectorizes them as if
// they were large. By default, ops of fewer than 16384 elements stay
// scalar: launch-bound, and a quarter of the PTX. The bucket's 1024-element
// update below is one, @large is not.)
// SMALL-LABEL: func.func @elementwise(
// SMALL-NOT: vector.
// SMALL-LABEL: func.func @rows(
// SMALL-NOT: vector.
// SMALL-LABEL: func.func @large(
// SMALL: vector.load
// SMALL-LABEL: func.func @bucket_view(
// SMALL-NOT: vector.
// SMALL: return
// RUN: rankc-opt %s -rankc-linalg-to-gpu-loops="vector-width=1 register-block=1 unroll=1" | FileCheck %s --check-prefix=SCALAR

#id = affine_map<(d0, d1) -> (d0, d1)>

// Elementwise, 4 wide: tiled by 4 on the contiguous dimension and
// vectorized (one 16-byte vector load and store per thread), then tiles to
// blocks, points to threads: the single 4-wide column is a unit dimension
// (sequential, one iteration), so x takes 256 rows; a guard for the last,
// partial tile.
// CHECK-LABEL: func.func @elementwise(
// CHECK-DAG: %[[C1000:c1000]]{{.*}} = arith.constant 1000 : index
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = ({{.*}}) to (%[[C1000]]{{.*}}, %{{.*}}) step
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to ({{.*}}) step
// CHECK: scf.if
// CHECK: %[[V:.*]] = vector.load %{{.*}}[%{{.*}}] {alignment = 16 : i64} : memref<4xf32, {{.*}}>, vector<4xf32>
// CHECK-NEXT: %[[E:.*]] = math.exp %[[V]] : vector<4xf32>
// CHECK: vector.store %[[E]], %{{.*}}[%{{.*}}] {alignment = 16 : i64}
// CHECK: {mapping = [#gpu.loop_dim_map<processor = thread_x, {{.*}}>, #gpu.loop_dim_map<processor = sequential, {{.*}}>]}
// CHECK: {mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>, #gpu.loop_dim_map<processor = sequential, {{.*}}>]}
// T64-LABEL: func.func @elementwise(
// T64: arith.constant 64 : index
// Scalar (vector-width=1): the contiguous dimension (4 wide) takes 4
// threads on x, the other 64 on y.
// SCALAR-LABEL: func.func @elementwise(
// SCALAR-DAG: %[[C64:.*]] = arith.constant 64 : index
// SCALAR: scf.parallel
// SCALAR: scf.parallel
// SCALAR: scf.if
// SCALAR: memref.load
// SCALAR: math.exp %{{.*}} : f32
// SCALAR: memref.store
// SCALAR-NOT: vector.
func.func @elementwise(%a: memref<1000x4xf32>, %b: memref<1000x4xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<1000x4xf32>) outs(%b : memref<1000x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// Rows of 16 vectors: the loop counts vectors (0 to 16 by 1; the column is
// the vector index times 4) before it is tiled, since tiling's in-bound
// guard is only right for unit steps (it once skipped all but each tile's
// first vector).
// CHECK-LABEL: func.func @rows(
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = ({{.*}}) to (%{{.*}}, %[[C16]]) step
// CHECK: scf.parallel (%{{.*}}, %[[J:.*]]) = ({{.*}}) to ({{.*}}) step (%{{.*}}, %{{.*}})
// CHECK: %[[V:.*]] = arith.addi %[[J]], %{{.*}} : index
// CHECK: %[[COL:.*]] = arith.muli %[[V]], %[[C4]] : index
// CHECK: %[[COL0:.*]] = arith.addi %[[COL]], %{{.*}} : index
// CHECK: memref.subview %{{.*}}[%{{.*}}, %[[COL0]]] [1, 4]
// CHECK: vector.load
func.func @rows(%a: memref<4x64xf32>, %b: memref<4x64xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x64xf32>) outs(%b : memref<4x64xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// 16384 elements: vectorized by default too.
func.func @large(%a: memref<128x128xf32>, %b: memref<128x128xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<128x128xf32>) outs(%b : memref<128x128xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// An innermost dimension that is not a multiple of 4: scalar, 1 per thread.
// CHECK-LABEL: func.func @odd(
// CHECK-NOT: vector.
// CHECK: math.sqrt %{{.*}} : f32
func.func @odd(%a: memref<10x7xf32>, %b: memref<10x7xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<10x7xf32>) outs(%b : memref<10x7xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.sqrt %x : f32
    linalg.yield %e : f32
  }
  return
}

// A contraction, register-blocked: each thread computes a 4x4 tile of C
// (tiles of 4x4 over blocks of 8x32 threads), loading its 16 accumulators
// before the k loop, carrying them in registers, storing them after.
// CHECK-LABEL: func.func @matmul(
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to (%c16, %c32{{.*}}) step
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to ({{.*}}) step
// CHECK: %[[C:.*]] = memref.subview %{{.*}}[%{{.*}}, %{{.*}}] [4, 4] [1, 1]
// CHECK-COUNT-16: memref.load %[[C]]
// CHECK-NEXT: %[[SUMS:.*]]:16 = scf.for %{{.*}} = %{{.*}} to %c32 step %{{.*}} iter_args(
// CHECK-NOT: memref.store
// CHECK: scf.yield
// CHECK-COUNT-16: memref.store %[[SUMS]]#{{[0-9]+}}, %[[C]]
// Without register blocking: (i, j) tiled over blocks and threads, k a
// sequential loop in each thread, accumulating in a register: C[i, j] is
// loaded once before the loop and stored once after it.
// SCALAR-LABEL: func.func @matmul(
// SCALAR: scf.parallel
// SCALAR: scf.parallel
// SCALAR: %[[INIT:.*]] = memref.load %{{.*}}[%[[I:.*]], %[[J:.*]]] : memref<64x128xf32>
// SCALAR-NEXT: %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %c32 step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32)
// SCALAR: arith.mulf
// SCALAR-NEXT: %[[NEXT:.*]] = arith.addf %[[ACC]]
// SCALAR-NEXT: scf.yield %[[NEXT]]
// SCALAR-NEXT: }
// SCALAR-NEXT: memref.store %[[SUM]], %{{.*}}[%[[I]], %[[J]]] : memref<64x128xf32>
// SCALAR: processor = thread_y
// SCALAR: processor = block_y
func.func @matmul(%a: memref<64x32xf32>, %b: memref<32x128xf32>, %c: memref<64x128xf32>) {
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x128xf32>) outs(%c : memref<64x128xf32>)
  return
}

// The reduction dimension comes first in the op: interchanged, so the
// parallel dimension is on threads and each thread sums its column.
// By default each thread's reduction loop is unrolled 4 times (several
// loads in flight): 100 rows in 25 iterations of 4 loads and 4 adds.
// UNROLL-LABEL: func.func @colsum(
// UNROLL: scf.for %{{.*}} = %{{.*}} to %c100 step %c4
// UNROLL-COUNT-4: memref.load
// UNROLL-NOT: memref.load
// UNROLL: scf.yield
// CHECK-LABEL: func.func @colsum(
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: scf.for %{{.*}} = %{{.*}} to %c100
// CHECK: processor = thread_x
// CHECK: processor = block_x
func.func @colsum(%a: memref<100x300xf32>, %s: memref<300xf32>) {
  linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<100x300xf32>) outs(%s : memref<300xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// A split reduction's partial stage (16 chunks of 128 rows of 64 columns):
// two parallel loops around a reduction, like a matmul, but every output
// reads its own elements, so there is nothing to reuse: one thread per
// output, not a 4x4 tile per thread.
// CHECK-LABEL: func.func @partials(
// CHECK-NOT: [4, 4] [1, 1]
// CHECK: scf.for %{{.*}} = %{{.*}} to %c128
// CHECK-NOT: [4, 4] [1, 1]
// CHECK: return
func.func @partials(%a: memref<16x128x64xf32>, %s: memref<16x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a : memref<16x128x64xf32>) outs(%s : memref<16x64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// The same partials beside small inputs that each output does not read
// all of (cross-entropy's pick of the target logits after its split: the
// rows' targets, an iota of the classes): those would be reused by a 4x4
// tile, but the logits, read once per output, are what costs. One thread
// per output still.
// CHECK-LABEL: func.func @partials_pick(
// CHECK-NOT: [4, 4] [1, 1]
// CHECK: scf.for %{{.*}} = %{{.*}} to %c128
// CHECK-NOT: [4, 4] [1, 1]
// CHECK: return
func.func @partials_pick(%t: memref<16xi64>, %a: memref<16x128x64xf32>, %iota: memref<128x64xi64>, %s: memref<16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%t, %a, %iota : memref<16xi64>, memref<16x128x64xf32>, memref<128x64xi64>) outs(%s : memref<16x64xf32>) {
  ^bb0(%target: i64, %x: f32, %k: i64, %acc: f32):
    %hit = arith.cmpi eq, %k, %target : i64
    %v = arith.select %hit, %x, %zero : f32
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  }
  return
}

// A parameter's update reading its gradient inside a bucket (a view at an
// offset that is a multiple of 4): still 16-byte vector loads. At an odd
// offset the loads would be misaligned: scalar.
// CHECK-LABEL: func.func @bucket_view(
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<4xf32, strided<[1], offset: ?>>, vector<4xf32>
// CHECK-LABEL: func.func @odd_view(
// CHECK-NOT: vector.load
// CHECK: return
func.func @bucket_view(%bucket: memref<4096xf32>, %p: memref<1024xf32>) {
  %g = memref.subview %bucket[1024] [1024] [1] : memref<4096xf32> to memref<1024xf32, strided<[1], offset: 1024>>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%g : memref<1024xf32, strided<[1], offset: 1024>>) outs(%p : memref<1024xf32>) {
  ^bb0(%x: f32, %y: f32):
    %r = arith.subf %y, %x : f32
    linalg.yield %r : f32
  }
  return
}
func.func @odd_view(%bucket: memref<4096xf32>, %p: memref<1024xf32>) {
  %g = memref.subview %bucket[1] [1024] [1] : memref<4096xf32> to memref<1024xf32, strided<[1], offset: 1>>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%g : memref<1024xf32, strided<[1], offset: 1>>) outs(%p : memref<1024xf32>) {
  ^bb0(%x: f32, %y: f32):
    %r = arith.subf %y, %x : f32
    linalg.yield %r : f32
  }
  return
}

// No parallel loop at all: one block of one thread runs the reduction, so
// nothing touches device memory from the host. (A sum of 64 or more runs
// on a warp: warp-reductions.mlir.)
// CHECK-LABEL: func.func @total(
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c1) step (%c1)
// CHECK: memref.load %{{.*}}[] : memref<f32>
// CHECK-NEXT: scf.for {{.*}} iter_args
// CHECK: {mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>]}
// CHECK-NOT: linalg.
func.func @total(%a: memref<40xf32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%a : memref<40xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// Five loops, the innermost a unit one (a 1x1 window): x, y and z go to the
// three innermost loops of several iterations (8, 8, 64 threads at most on
// z), and the outer batch loop joins z's tiles in one grid dimension
// (32 x 64 / 4 blocks) instead of running in sequence in every thread.
// CHECK-LABEL: func.func @window(
// CHECK: scf.parallel (%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}) = ({{[^)]*}}) to ({{[^)]*}}) step
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) =
// CHECK: {mapping = [#gpu.loop_dim_map<processor = sequential, {{.*}}>, #gpu.loop_dim_map<processor = thread_z, {{.*}}>, #gpu.loop_dim_map<processor = thread_y, {{.*}}>, #gpu.loop_dim_map<processor = thread_x, {{.*}}>, #gpu.loop_dim_map<processor = sequential, {{.*}}>]}
// CHECK: {mapping = [#gpu.loop_dim_map<processor = block_z, {{.*}}>, #gpu.loop_dim_map<processor = block_y, {{.*}}>, #gpu.loop_dim_map<processor = block_x, {{.*}}>]}
#w5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
func.func @window(%a: memref<32x64x8x8x1xf32>, %b: memref<32x64x8x8x1xf32>) {
  linalg.generic {indexing_maps = [#w5, #w5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%a : memref<32x64x8x8x1xf32>) outs(%b : memref<32x64x8x8x1xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// A reduction's fill of zeros folds into it (FillFolding.h): each thread
// starts its sum from the fill's value, not from a load of what a fill
// kernel wrote, and no loop is left for the fill. The buffer is an
// allocation, and the reduction (through a reshape of it) is the next op
// that touches it.
// CHECK-LABEL: func.func @fill_folded(
// CHECK-SAME:    %[[A:.*]]: memref<100x300xf32>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.0
// CHECK:         %[[S:.*]] = memref.alloc() : memref<300xf32>
// CHECK-NOT:     memref.store %[[ZERO]]
// CHECK:         %[[R:.*]] = memref.expand_shape %[[S]]
// CHECK:         scf.parallel
// CHECK-NOT:     memref.load %[[R]]
// CHECK:         scf.for %{{.*}} iter_args(%{{.*}} = %[[ZERO]])
// CHECK:         memref.store %{{.*}}, %[[R]]
func.func @fill_folded(%a: memref<100x300xf32>) -> memref<300xf32> {
  %zero = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<300xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<300xf32>)
  %r = memref.expand_shape %s [[0, 1]] output_shape [3, 100] : memref<300xf32> into memref<3x100xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0 * 100 + d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a : memref<100x300xf32>) outs(%r : memref<3x100xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  }
  return %s : memref<300xf32>
}

// Not folded: the buffer is read before the reduction (the copy must see
// the zeros); a function argument (whose bytes another argument may
// share); an elementwise op, not a reduction, reads the fill. Each fill
// stays a loop of stores of zero.
// CHECK-LABEL: func.func @fill_kept(
// CHECK-COUNT-3: memref.store %cst
// CHECK:         return
func.func @fill_kept(%a: memref<100x300xf32>, %arg: memref<300xf32>, %c: memref<300xf32>) {
  %zero = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<300xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<300xf32>)
  memref.copy %s, %c : memref<300xf32> to memref<300xf32>
  linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<100x300xf32>) outs(%s : memref<300xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  }
  linalg.fill ins(%zero : f32) outs(%arg : memref<300xf32>)
  linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<100x300xf32>) outs(%arg : memref<300xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  }
  %t = memref.alloc() : memref<300xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<300xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%t : memref<300xf32>) outs(%c : memref<300xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  return
}

// The fill writes the allocation under another shape made before it (batch
// norm's statistics: a [1, C, 1, 1] fill, the sum written as [C]): folded.
// CHECK-LABEL: func.func @fill_reshaped_before(
// CHECK-NOT:     memref.store %cst,
// CHECK:         scf.for %{{.*}} iter_args(%{{.*}} = %cst)
// CHECK:         return
func.func @fill_reshaped_before(%a: memref<300x100xf32>) -> memref<300xf32> {
  %zero = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<300xf32>
  %e = memref.expand_shape %s [[0, 1, 2]] output_shape [1, 300, 1] : memref<300xf32> into memref<1x300x1xf32>
  linalg.fill ins(%zero : f32) outs(%e : memref<1x300x1xf32>)
  linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<300x100xf32>) outs(%s : memref<300xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  }
  return %s : memref<300xf32>
}

// Not folded: a view of the buffer made before the fill (a subview, not a
// reshape) is written between the fill and the reduction; the fill stays.
// CHECK-LABEL: func.func @fill_view_before(
// CHECK:         memref.store %cst,
// CHECK:         return
func.func @fill_view_before(%a: memref<300x100xf32>) -> memref<300xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %s = memref.alloc() : memref<300xf32>
  %head = memref.subview %s[0] [10] [1] : memref<300xf32> to memref<10xf32, strided<[1]>>
  linalg.fill ins(%zero : f32) outs(%s : memref<300xf32>)
  linalg.fill ins(%one : f32) outs(%head : memref<10xf32, strided<[1]>>)
  linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<300x100xf32>) outs(%s : memref<300xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  }
  return %s : memref<300xf32>
}
