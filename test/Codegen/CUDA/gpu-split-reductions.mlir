// RUN: rankc-opt %s -rankc-gpu-split-reductions | FileCheck %s
// RUN: rankc-opt %s -rankc-gpu-split-reductions="ratio=16" | FileCheck %s --check-prefix=R16
// RUN: rankc-opt %s -rankc-gpu-split-reductions="threads=64" | FileCheck %s --check-prefix=T64

#all = affine_map<(d0, d1) -> (d0, d1)>
#none = affine_map<(d0, d1) -> ()>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// A sum of 64x128 elements to a scalar: one loop of 8192, then 512
// partial sums of 16 elements each (in parallel; partial j takes elements
// j, j + 512, ...); the sum of the 512 stays whole (one warp runs it,
// WarpReductions.h) instead of splitting again.
// CHECK-LABEL: func.func @total(
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1]] : tensor<64x128xf32> into tensor<8192xf32>
// CHECK: %[[CHUNKS:.*]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [16, 512]
// CHECK: %[[PART:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[CHUNKS]] : tensor<16x512xf32>) outs(%{{.*}} : tensor<512xf32>)
// CHECK-NOT: expand_shape
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[PART]] : tensor<512xf32>) outs(%arg1 : tensor<f32>)
// R16-LABEL: func.func @total(
// R16: output_shape [512, 16]
func.func @total(%x: tensor<64x128xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [#all, #none], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<64x128xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// Long row sums (64 rows of 4096: too few outputs for warps over rows
// that long): 256 interleaved partials per row (the chunk of 16 per thread
// bounds them), the partials' dimension last; the final stage (256 per
// row) stays whole for a warp per row.
// CHECK-LABEL: func.func @rows(
// CHECK: %[[R:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1, 2]] output_shape [64, 16, 256]
// CHECK: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[R]] : tensor<64x16x256xf32>) outs(%{{.*}} : tensor<64x256xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<64x256xf32>) outs(%arg1 : tensor<64xf32>)
// With 64 threads' worth of outputs already, rows stay as they are.
// T64-LABEL: func.func @rows(
// T64-NOT: expand_shape
// T64: return
func.func @rows(%x: tensor<64x4096xf32>, %rows: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.generic {indexing_maps = [#all, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x4096xf32>) outs(%rows : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// Column sums (a bias gradient over a batch): contiguous chunks of rows
// per partial; with 32 partials a column (too few for a warp's row) the
// partials' dimension goes first, so that the final stage's neighbouring
// threads take neighbouring columns. (With 64 or more it goes last:
// @unit_stats.)
// CHECK-LABEL: func.func @columns(
// CHECK: %[[C:.*]] = tensor.expand_shape %arg0 {{\[}}[0, 1], [2]] output_shape [32, 16, 32]
// CHECK: %[[Q:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<32x16x32xf32>) outs(%{{.*}} : tensor<32x32xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[Q]] : tensor<32x32xf32>) outs(%arg1 : tensor<32xf32>)
func.func @columns(%x: tensor<512x32xf32>, %cols: tensor<32xf32>) -> tensor<32xf32> {
  %r = linalg.generic {indexing_maps = [#all, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<512x32xf32>) outs(%cols : tensor<32xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// Left alone: a small reduction (64 elements).
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: expand_shape
// CHECK: iterator_types = ["reduction", "reduction"]} ins(%arg0
func.func @kept(%small: tensor<8x8xf32>, %init: tensor<f32>) -> tensor<f32> {
  %t = linalg.generic {indexing_maps = [#all, #none], iterator_types = ["reduction", "reduction"]}
      ins(%small : tensor<8x8xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.maximumf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %t : tensor<f32>
}

// Left alone: a contraction (a GEMM for cuBLASLt), even with few outputs.
// CHECK-LABEL: func.func @gemm(
// CHECK-NOT: expand_shape
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @gemm(%x: tensor<16x512xf32>, %y: tensor<512x16xf32>, %init: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %r = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : tensor<16x512xf32>, tensor<512x16xf32>) outs(%init : tensor<16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}

// Split: a contraction that is no GEMM (layer norm's weight gradient, a
// sum over rows of a product: one dot product per column).
// CHECK-LABEL: func.func @dots(
// CHECK: tensor.expand_shape %arg0 {{\[}}[0, 1], [2]] output_shape [32, 16, 32]
// CHECK: tensor.expand_shape %arg1 {{\[}}[0, 1], [2]] output_shape [32, 16, 32]
#rc = affine_map<(d0, d1) -> (d0, d1)>
func.func @dots(%x: tensor<512x32xf32>, %y: tensor<512x32xf32>, %cols: tensor<32xf32>) -> tensor<32xf32> {
  %r = linalg.generic {indexing_maps = [#rc, #rc, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x, %y : tensor<512x32xf32>, tensor<512x32xf32>) outs(%cols : tensor<32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// Layer norm's weight gradient: a column sum over 8x256 rows whose
// statistics ([8, 256, 1], read at a constant 0) broadcast over the
// columns. The statistics are collapsed to [8, 256] first, so that the two
// reduction loops become one (collapsing them with the constant index
// built an invalid collapse_shape) and the sum is split.
// CHECK-LABEL: func.func @unit_stats(
// CHECK: %[[S:.*]] = tensor.collapse_shape %arg1 {{\[}}[0], [1, 2]] : tensor<8x256x1xf32> into tensor<8x256xf32>
// CHECK: tensor.collapse_shape %[[S]] {{\[}}[0, 1]] : tensor<8x256xf32> into tensor<2048xf32>
// The 64 partials of each of the 1024 columns go last ([1024, 64]): the
// final stage is a warp's row per column.
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins({{.*}} : tensor<64x32x1024xf32>, tensor<64x32xf32>) outs({{.*}} : tensor<1024x64xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<1024x64xf32>) outs(%arg2 : tensor<1024xf32>)
#x3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#s3 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#c3 = affine_map<(d0, d1, d2) -> (d2)>
func.func @unit_stats(%x: tensor<8x256x1024xf32>, %s: tensor<8x256x1xf32>, %init: tensor<1024xf32>) -> tensor<1024xf32> {
  %r = linalg.generic {indexing_maps = [#x3, #s3, #c3], iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%x, %s : tensor<8x256x1024xf32>, tensor<8x256x1xf32>) outs(%init : tensor<1024xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %t = arith.addf %acc, %p : f32
    linalg.yield %t : f32
  } -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}

// One reduction loop and an input read at a constant (a column scaled by
// [rows, 1] statistics, summed over the rows): the input is collapsed
// before splitting too (splitReduction built an invalid op from the
// constant, which crashed the verifier).
// CHECK-LABEL: func.func @one_loop_unit(
// CHECK: %[[S1:.*]] = tensor.collapse_shape %arg1 {{\[}}[0, 1]] : tensor<2048x1xf32> into tensor<2048xf32>
// CHECK: tensor.expand_shape %[[S1]]
// CHECK: linalg.generic {{.*}} outs({{.*}} : tensor<16x128xf32>)
#x2 = affine_map<(d0, d1) -> (d0, d1)>
#s2 = affine_map<(d0, d1) -> (d0, 0)>
func.func @one_loop_unit(%x: tensor<2048x16xf32>, %s: tensor<2048x1xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  %r = linalg.generic {indexing_maps = [#x2, #s2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x, %s : tensor<2048x16xf32>, tensor<2048x1xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %t = arith.addf %acc, %p : f32
    linalg.yield %t : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// A reduction that reads its loop indices (cross-entropy's pick of each
// row's target logit: linalg.index of the reduced loop) reads them from an
// iota input instead, whose map follows the loops when they are split
// (linalg.index would not), and is split like any other: as rows, since
// the logits (the largest input, not the targets before them) are read
// along their contiguous dimension: partial j of a row takes logits j,
// j + 512, ..., the partials' dimension last.
// CHECK-LABEL: func.func @picks(
// CHECK: %[[IOTA:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8192xi64>)
// CHECK: linalg.index 0
// CHECK: %[[X3:.*]] = tensor.expand_shape %arg1 {{\[}}[0], [1, 2]] output_shape [16, 16, 512]
// CHECK: %[[I2:.*]] = tensor.expand_shape %[[IOTA]] {{\[}}[0, 1]] output_shape [16, 512]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%{{.*}}, %[[X3]], %[[I2]] : tensor<16xi64>, tensor<16x16x512xf32>, tensor<16x512xi64>) outs(%{{.*}} : tensor<16x512xf32>)
// CHECK-NOT: linalg.index
// CHECK: arith.cmpi eq
// CHECK: return
func.func @picks(%t: tensor<16x1xi64>, %x: tensor<16x8192xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  %zero = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [#s2, #x2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%t, %x : tensor<16x1xi64>, tensor<16x8192xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%target: i64, %a: f32, %acc: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %hit = arith.cmpi eq, %ji, %target : i64
    %v = arith.select %hit, %a, %zero : f32
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// Reduction loops that are not adjacent (batch norm's per-channel sums of
// [N, C, H, W] over N, H and W): first a partial reduction over the inner
// group (H, W) that keeps N as a parallel loop, into [C, N] partials that
// start at the combiner's neutral element (0 for addf), itself split like
// any other; then the partials reduced over N into the original init.
// CHECK-LABEL: func.func @channels(
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[P0:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%{{.*}} : tensor<64x32xf32>)
// CHECK: tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<32x64x16x16xf32> into tensor<32x64x256xf32>
// CHECK: %[[PART:.*]] = linalg.generic {{.*}} outs(%[[P0]] : tensor<64x32xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[PART]] : tensor<64x32xf32>) outs(%arg1 : tensor<64xf32>)
// CHECK: arith.addf
// CHECK: return
#nchw = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @channels(%x: tensor<32x64x16x16xf32>, %init: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.generic {indexing_maps = [#nchw, #ch], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : tensor<32x64x16x16xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// A row's reduction with outputs enough (512 rows of 256) is left whole:
// rankc-linalg-to-gpu-loops runs it on a warp per row (warp-reductions.mlir).
// CHECK-LABEL: func.func @row_max_for_warps(
// CHECK:         linalg.generic
// CHECK-SAME:    iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @row_max_for_warps(%x: tensor<8x64x256xf32>, %init: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<8x64x256xf32>) outs(%init : tensor<8x64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}
