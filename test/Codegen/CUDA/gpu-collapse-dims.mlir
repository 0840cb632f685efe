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

// An operand that is a slice of a bigger tensor (a gradient written into
// its third of q, k and v's concat): its loops join only across dims the
// slice takes whole. [8, 256] join (the slice has all 256 of each row
// group), the last 512 of 1536 stays a loop of its own: the collapsed
// operand is a view of the concat's buffer, not a copy of it.
#id3s = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @into_slice(
// CHECK:         %[[S:.*]] = tensor.extract_slice %arg1[0, 0, 512] [8, 256, 512] [1, 1, 1]
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0, 1], [2]] : tensor<8x256x512xf32> into tensor<2048x512xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} {{.*}} outs(%[[C]] : tensor<2048x512xf32>)
// A slice that cuts its middle dim: the inner two join (the rows are
// whole), the outer stays; a whole tensor of the same shape joins all
// three.
// CHECK-LABEL: func.func @from_slice(
// CHECK:         tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<8x256x512xf32> into tensor<8x131072xf32>
// CHECK:         iterator_types = ["parallel", "parallel"]
// CHECK-LABEL: func.func @no_slice(
// CHECK:         iterator_types = ["parallel"]}
func.func @into_slice(%g: tensor<8x256x512xbf16>, %dest: tensor<8x256x1536xf32>) -> tensor<8x256x1536xf32> {
  %s = tensor.extract_slice %dest[0, 0, 512] [8, 256, 512] [1, 1, 1] : tensor<8x256x1536xf32> to tensor<8x256x512xf32>
  %w = linalg.generic {indexing_maps = [#id3s, #id3s], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%g : tensor<8x256x512xbf16>) outs(%s : tensor<8x256x512xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %e = arith.extf %a : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<8x256x512xf32>
  %r = tensor.insert_slice %w into %dest[0, 0, 512] [8, 256, 512] [1, 1, 1] : tensor<8x256x512xf32> into tensor<8x256x1536xf32>
  return %r : tensor<8x256x1536xf32>
}
func.func @from_slice(%x: tensor<8x512x512xf32>, %o: tensor<8x256x512xf32>) -> tensor<8x256x512xf32> {
  %s = tensor.extract_slice %x[0, 256, 0] [8, 256, 512] [1, 1, 1] : tensor<8x512x512xf32> to tensor<8x256x512xf32>
  %w = linalg.generic {indexing_maps = [#id3s, #id3s], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<8x256x512xf32>) outs(%o : tensor<8x256x512xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = arith.negf %a : f32
    linalg.yield %e : f32
  } -> tensor<8x256x512xf32>
  return %w : tensor<8x256x512xf32>
}
func.func @no_slice(%x: tensor<8x256x512xf32>, %o: tensor<8x256x512xf32>) -> tensor<8x256x512xf32> {
  %w = linalg.generic {indexing_maps = [#id3s, #id3s], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<8x256x512xf32>) outs(%o : tensor<8x256x512xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = arith.negf %a : f32
    linalg.yield %e : f32
  } -> tensor<8x256x512xf32>
  return %w : tensor<8x256x512xf32>
}

// Ops that read their loop indices. Four parallel loops (a convolution's
// im2col copy with its pad in it has seven): one loop, its indices
// recovered by remainder and division by the loops' sizes. Three loops, or
// a reduction: kept (the mapping takes three loops as they are; a
// reduction's index would move with its collapse).
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @indices(
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} outs(%{{.*}} : tensor<210xi64>)
// CHECK-DAG:       arith.remsi %{{.*}}, %c7
// CHECK-DAG:       arith.divsi %{{.*}}, %c7
// CHECK:         tensor.expand_shape %[[R]] {{\[}}[0, 1, 2, 3]] output_shape [2, 3, 5, 7]
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} outs(%{{.*}} : tensor<3x5x7xi64>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
func.func @indices(%e4: tensor<2x3x5x7xi64>, %e3: tensor<3x5x7xi64>, %s: tensor<2x3x5xi64>) -> (tensor<2x3x5x7xi64>, tensor<3x5x7xi64>, tensor<2x3x5xi64>) {
  %a = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%e4 : tensor<2x3x5x7xi64>) {
  ^bb0(%o: i64):
    %i = linalg.index 0 : index
    %l = linalg.index 3 : index
    %v = arith.addi %i, %l : index
    %c = arith.index_cast %v : index to i64
    linalg.yield %c : i64
  } -> tensor<2x3x5x7xi64>
  %b = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%e3 : tensor<3x5x7xi64>) {
  ^bb0(%o: i64):
    %l = linalg.index 2 : index
    %c = arith.index_cast %l : index to i64
    linalg.yield %c : i64
  } -> tensor<3x5x7xi64>
  %r = linalg.generic {indexing_maps = [#id4, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a : tensor<2x3x5x7xi64>) outs(%s : tensor<2x3x5xi64>) {
  ^bb0(%x: i64, %acc: i64):
    %l = linalg.index 3 : index
    %c = arith.index_cast %l : index to i64
    %m = arith.muli %x, %c : i64
    %t = arith.addi %acc, %m : i64
    linalg.yield %t : i64
  } -> tensor<2x3x5xi64>
  return %a, %b, %r : tensor<2x3x5x7xi64>, tensor<3x5x7xi64>, tensor<2x3x5xi64>
}
