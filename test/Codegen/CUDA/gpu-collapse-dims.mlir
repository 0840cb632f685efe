// RUN: rankc-opt %s -pass-pipeline='builtin.module(func.func(rankc-gpu-collapse-dims))' | FileCheck %s

#in = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#out = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// Layer norm's row sums over [8, 256, 1, 1024]: the three parallel loops
// (batch, sequence, the keepdim 1) become one of 2048, so that the GPU
// mapping has two loops, not four.
// CHECK-LABEL: func.func @rows(
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1, 2], [3]] : tensor<8x256x1x1024xf32> into tensor<2048x1024xf32>
// CHECK: %[[I:.*]] = tensor.collapse_shape %arg1 {{\[}}[0, 1, 2]] : tensor<8x256x1xf32> into tensor<2048xf32>
// CHECK: %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<2048x1024xf32>) outs(%[[I]] : tensor<2048xf32>)
// CHECK: tensor.expand_shape %[[R]] {{\[}}[0, 1, 2]] output_shape [8, 256, 1]
func.func @rows(%x: tensor<8x256x1x1024xf32>, %init: tensor<8x256x1xf32>) -> tensor<8x256x1xf32> {
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x : tensor<8x256x1x1024xf32>) outs(%init : tensor<8x256x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<8x256x1xf32>
  return %r : tensor<8x256x1xf32>
}

// Kept: loops that an operand reads transposed (not contiguous), and a
// broadcast written with a constant index (upstream would build a reshape
// of the wrong rank).
#t = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#b0 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: collapse_shape
// CHECK: return
func.func @kept(%x: tensor<4x8x16xf32>, %m: tensor<8x4x1xf32>, %init: tensor<8x4x16xf32>) -> tensor<8x4x16xf32> {
  %r = linalg.generic {indexing_maps = [#t, #b0, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<4x8x16xf32>, tensor<8x4x1xf32>) outs(%init : tensor<8x4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x4x16xf32>
  return %r : tensor<8x4x16xf32>
}
