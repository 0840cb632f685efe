// RUN: rankc-opt %s -rankc-linalg-to-gpu-loops="unroll=1" | FileCheck %s
// Blocks of fewer than 32 threads cannot hold a warp's lanes in one tile of
// thread x: no shuffles then.
// RUN: rankc-opt %s -rankc-linalg-to-gpu-loops="unroll=1 threads=16" | FileCheck %s --check-prefix=T16
// T16-NOT: gpu.shuffle
// A reduction over its input's contiguous dimension, with outputs enough,
// runs on one warp per output (lib/Codegen/CUDA/WarpReductions.h): lane l
// of 32 (thread x, 32 wide) reduces elements l, l + 32, ... of the row from
// the combiner's neutral element, a butterfly of five xor shuffles combines
// the lanes, and lane 0 combines the total into the output.
// (rankc-gpu-split-reductions leaves these whole: gpu-split-reductions.mlir.)

// CHECK-LABEL: func.func @row_sum(
// CHECK-SAME:    %[[X:.*]]: memref<512x128xf32>, %[[Y:.*]]: memref<512xf32>)
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[W:.*]] = arith.constant 32 : index
// CHECK:         scf.parallel
// CHECK:         scf.parallel (%[[R:.*]], %[[L:.*]]) =
// CHECK:           %[[ROW:.*]] = arith.addi %[[R]]
// CHECK:           %[[LANE:.*]] = arith.addi %[[L]]
// CHECK:           %[[PART:.*]] = scf.for %[[J:.*]] = %{{.*}} to %c4 step %{{.*}} iter_args(%[[A:.*]] = %[[ZERO]])
// CHECK:             %[[J32:.*]] = arith.muli %[[J]], %[[W]]
// CHECK:             %[[K:.*]] = arith.addi %[[J32]], %[[LANE]]
// CHECK:             memref.load %[[X]][%[[ROW]], %[[K]]]
// CHECK:           gpu.shuffle xor %[[PART]], %c16_i32, %c32_i32
// CHECK-COUNT-4:   gpu.shuffle xor
// CHECK:           %[[TOTAL:.*]] = arith.addf
// CHECK:           %[[LEAD:.*]] = arith.cmpi eq, %[[LANE]]
// CHECK:           scf.if %[[LEAD]] {
// CHECK:             %[[OLD:.*]] = memref.load %[[Y]][%[[ROW]]]
// CHECK:             %[[NEW:.*]] = arith.addf %[[TOTAL]], %[[OLD]]
// CHECK:             memref.store %[[NEW]], %[[Y]][%[[ROW]]]
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = thread_y{{.*}}>, #gpu.loop_dim_map<processor = thread_x
func.func @row_sum(%x: memref<512x128xf32>, %y: memref<512xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<512x128xf32>) outs(%y : memref<512xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// A row of 100 (not a multiple of 32): lanes past its end add the neutral
// element; the body before the combiner (bf16 widened, squared) is each
// element's; a fill of the output folds in (lane 0 starts from its value,
// no fill's loop left); the [rows, 1] statistic broadcast along the row is
// read at column 0.
// CHECK-LABEL: func.func @guarded_fill_folded(
// CHECK-SAME:    %[[X:.*]]: memref<256x100xbf16>, %[[M:.*]]: memref<256x1xf32>)
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[N:.*]] = arith.constant 100 : index
// CHECK:         %[[S:.*]] = memref.alloc() : memref<256xf32>
// CHECK-NOT:     memref.store %[[ONE]]
// CHECK:         scf.for {{.*}} to %c4 {{.*}} iter_args(%[[A:.*]] = %[[ZERO]])
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %[[N]]
// CHECK:           scf.if %[[IN]] -> (f32) {
// CHECK:             memref.load %[[M]][%{{.*}}, %c0]
// CHECK:             arith.extf
// CHECK:             arith.mulf
// CHECK:           } else {
// CHECK:             scf.yield %[[A]]
// CHECK-COUNT-5:   gpu.shuffle xor
// CHECK:           scf.if
// CHECK-NOT:         memref.load
// CHECK:             %[[NEW:.*]] = arith.addf %{{.*}}, %[[ONE]]
// CHECK:             memref.store %[[NEW]], %[[S]]
func.func @guarded_fill_folded(%x: memref<256x100xbf16>, %m: memref<256x1xf32>) -> memref<256xf32> {
  %one = arith.constant 1.0 : f32
  %s = memref.alloc() : memref<256xf32>
  linalg.fill ins(%one : f32) outs(%s : memref<256xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : memref<256x100xbf16>, memref<256x1xf32>) outs(%s : memref<256xf32>) {
  ^bb0(%a: bf16, %b: f32, %acc: f32):
    %w = arith.extf %a : bf16 to f32
    %d = arith.subf %w, %b : f32
    %q = arith.mulf %d, %d : f32
    %r = arith.addf %q, %acc : f32
    linalg.yield %r : f32
  }
  return %s : memref<256xf32>
}

// Few outputs of short rows (batch norm's per-channel sums of the
// per-image partials: 64 channels of 64 images): a warp each too, one
// kernel where a split would make two.
// CHECK-LABEL: func.func @few_short_rows(
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK:         return
func.func @few_short_rows(%p: memref<64x64xf32>, %s: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%p : memref<64x64xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %y = arith.addf %a, %acc : f32
    linalg.yield %y : f32
  }
  return
}

// Not on warps: a column sum (the rows are the reduced dimension's
// neighbours, not the lanes'), few outputs of long rows (64 of 4096: split
// instead, for threads enough), a row too short (one thread walks it), and a combiner without a neutral element
// known to arith (a select: argmax-like).
// CHECK-LABEL: func.func @not_warps(
// CHECK-NOT:     gpu.shuffle
// CHECK:         return
func.func @not_warps(%x: memref<512x128xf32>, %c: memref<128xf32>, %small: memref<64x4096xf32>, %s: memref<64xf32>, %short: memref<512x32xf32>, %r: memref<512xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<512x128xf32>) outs(%c : memref<128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %y = arith.addf %a, %acc : f32
    linalg.yield %y : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%small : memref<64x4096xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %y = arith.addf %a, %acc : f32
    linalg.yield %y : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%short : memref<512x32xf32>) outs(%r : memref<512xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %y = arith.addf %a, %acc : f32
    linalg.yield %y : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<512x128xf32>) outs(%r : memref<512xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %gt = arith.cmpf ogt, %a, %acc : f32
    %y = arith.select %gt, %a, %acc : f32
    linalg.yield %y : f32
  }
  return
}
