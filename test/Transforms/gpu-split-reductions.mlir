// RUN: rankc-opt %s -rankc-gpu-split-reductions | FileCheck %s
// RUN: rankc-opt %s -rankc-gpu-split-reductions="ratio=16" | FileCheck %s --check-prefix=R16

#all = affine_map<(d0, d1) -> (d0, d1)>
#none = affine_map<(d0, d1) -> ()>
#row = affine_map<(d0, d1) -> (d0)>

// A sum of 64x128 elements to a scalar: one loop of 8192, then 1024
// partial sums of 8 elements each (in parallel), then a sum of the 1024.
// CHECK-LABEL: func.func @total(
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1]] : tensor<64x128xf32> into tensor<8192xf32>
// CHECK: %[[CHUNKS:.*]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [1024, 8]
// CHECK: %[[PART:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[CHUNKS]] : tensor<1024x8xf32>) outs(%{{.*}} : tensor<1024xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[PART]] : tensor<1024xf32>) outs(%arg1 : tensor<f32>)
// R16-LABEL: func.func @total(
// R16: output_shape [16, 512]
func.func @total(%x: tensor<64x128xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [#all, #none], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<64x128xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// Left alone: a reduction with a parallel loop (rows), and a small one.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: expand_shape
// CHECK: iterator_types = ["parallel", "reduction"]} ins(%arg0
// CHECK: iterator_types = ["reduction", "reduction"]} ins(%arg2
func.func @kept(%x: tensor<64x128xf32>, %rows: tensor<64xf32>, %small: tensor<8x8xf32>, %init: tensor<f32>) -> (tensor<64xf32>, tensor<f32>) {
  %r = linalg.generic {indexing_maps = [#all, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x128xf32>) outs(%rows : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %t = linalg.generic {indexing_maps = [#all, #none], iterator_types = ["reduction", "reduction"]}
      ins(%small : tensor<8x8xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.maximumf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r, %t : tensor<64xf32>, tensor<f32>
}
