// RUN: rankc-opt %s -pass-pipeline='builtin.module(func.func(rankc-gpu-pads-as-generics))' | FileCheck %s
// A constant pad (a fill of an empty tensor, then the interior inserted)
// as one elementwise op: the source's element inside the slice, the fill's
// value outside; dimensions the slice takes whole need no check.

// CHECK-LABEL: func.func @conv_pad(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3x4x5xf32>)
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[I0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[FIVE:.*]] = arith.constant 5 : index
// CHECK-NOT:     linalg.fill
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x3x6x9xf32>
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%[[E]] : tensor<2x3x6x9xf32>)
// CHECK:           %[[N:.*]] = linalg.index 0
// CHECK:           %[[C:.*]] = linalg.index 1
// CHECK:           %[[H:.*]] = linalg.index 2
// CHECK:           %[[HR:.*]] = arith.subi %[[H]], %[[ONE]]
// CHECK:           %[[HIN:.*]] = arith.cmpi ult, %[[HR]], %[[FOUR]]
// CHECK:           %[[HS:.*]] = arith.select %[[HIN]], %[[HR]], %[[I0]]
// CHECK:           %[[W:.*]] = linalg.index 3
// CHECK:           %[[WR:.*]] = arith.subi %[[W]], %[[TWO]]
// CHECK:           %[[WIN:.*]] = arith.cmpi ult, %[[WR]], %[[FIVE]]
// CHECK:           %[[IN:.*]] = arith.andi %[[HIN]], %[[WIN]]
// CHECK:           %[[WS:.*]] = arith.select %[[WIN]], %[[WR]], %[[I0]]
// CHECK:           %[[V:.*]] = tensor.extract %[[X]][%[[N]], %[[C]], %[[HS]], %[[WS]]]
// CHECK:           %[[Y:.*]] = arith.select %[[IN]], %[[V]], %[[ZERO]]
// CHECK:           linalg.yield %[[Y]]
// CHECK-NOT:     tensor.insert_slice
// CHECK:         return %[[R]]
func.func @conv_pad(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x6x9xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x6x9xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x6x9xf32>) -> tensor<2x3x6x9xf32>
  %p = tensor.insert_slice %x into %f[0, 0, 1, 2] [2, 3, 4, 5] [1, 1, 1, 1] : tensor<2x3x4x5xf32> into tensor<2x3x6x9xf32>
  return %p : tensor<2x3x6x9xf32>
}

// Kept: the fill is read elsewhere too; the insert drops a dimension
// (rank-reducing); the destination is no fill.
// CHECK-LABEL: func.func @kept(
// CHECK-COUNT-2: tensor.insert_slice
// CHECK:         tensor.insert_slice
// CHECK-NOT:     linalg.index
// CHECK:         return
func.func @kept(%x: tensor<4xf32>, %y: tensor<4x1xf32>, %d: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8x2xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %a = tensor.insert_slice %x into %f[2] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %e3 = tensor.empty() : tensor<8x2xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %c = tensor.insert_slice %x into %f3[2, 1] [4, 1] [1, 1] : tensor<4xf32> into tensor<8x2xf32>
  %g = tensor.insert_slice %x into %d[2] [4] [1] : tensor<4xf32> into tensor<8xf32>
  return %a, %f, %c, %g : tensor<8xf32>, tensor<8xf32>, tensor<8x2xf32>, tensor<8xf32>
}

// A strided insert (input dilation 2 and a pad of 1: x's 4 elements at
// 1, 3, 5, 7 of 9): inside where i - 1 is below 7 and even, the element
// (i - 1) / 2.
// CHECK-LABEL: func.func @dilated(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>)
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[SEVEN:.*]] = arith.constant 7 : index
// CHECK-DAG:     %[[I0:.*]] = arith.constant 0 : index
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<9xf32>)
// CHECK:           %[[I:.*]] = linalg.index 0
// CHECK:           %[[R:.*]] = arith.subi %[[I]], %[[ONE]]
// CHECK:           %[[SPAN:.*]] = arith.cmpi ult, %[[R]], %[[SEVEN]]
// CHECK:           %[[REM:.*]] = arith.remui %[[R]], %[[TWO]]
// CHECK:           %[[EVEN:.*]] = arith.cmpi eq, %[[REM]], %[[I0]]
// CHECK:           %[[IN:.*]] = arith.andi %[[SPAN]], %[[EVEN]]
// CHECK:           %[[Q:.*]] = arith.divui %[[R]], %[[TWO]]
// CHECK:           %[[AT:.*]] = arith.select %[[IN]], %[[Q]], %[[I0]]
// CHECK:           %[[V:.*]] = tensor.extract %[[X]][%[[AT]]]
// CHECK:           arith.select %[[IN]], %[[V]]
// CHECK-NOT:     tensor.insert_slice
func.func @dilated(%x: tensor<4xf32>) -> tensor<9xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<9xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<9xf32>) -> tensor<9xf32>
  %p = tensor.insert_slice %x into %f[1] [4] [2] : tensor<4xf32> into tensor<9xf32>
  return %p : tensor<9xf32>
}

// A pad read by a copy through windows (a convolution's im2col, its
// channels split into one group by an expand_shape): the copy computes the
// padded element itself, reading x where the window lies inside it; the
// padded tensor is gone. The reshape is folded into the copy's read
// (group * 3 + channel), the window's position composed in (e + k).
// CHECK-LABEL: func.func @pad_into_im2col(
// CHECK-SAME:    %[[X:.*]]: tensor<3x6xf32>)
// CHECK-NOT:     tensor<3x8xf32>
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%{{.*}} : tensor<1x3x3x6xf32>)
// (The group's index is 0: its one iteration.)
// CHECK-DAG:       %[[C:.*]] = linalg.index 1
// CHECK-DAG:       %[[K:.*]] = linalg.index 2
// CHECK-DAG:       %[[E:.*]] = linalg.index 3
// CHECK:           %[[CH:.*]] = affine.apply #[[CHMAP:.*]](%{{.*}}, %[[C]], %[[K]], %[[E]])
// CHECK:           %[[POS:.*]] = affine.apply #[[POSMAP:.*]](%{{.*}}, %[[C]], %[[K]], %[[E]])
// CHECK:           arith.subi %[[POS]]
// CHECK:           tensor.extract %[[X]][%[[CH]], %{{.*}}] : tensor<3x6xf32>
// CHECK:           arith.select
// CHECK-NOT:     tensor<3x8xf32>
// CHECK:         return %[[R]]
func.func @pad_into_im2col(%x: tensor<3x6xf32>) -> tensor<1x3x3x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x8xf32>) -> tensor<3x8xf32>
  %p = tensor.insert_slice %x into %f[0, 1] [3, 6] [1, 1] : tensor<3x6xf32> into tensor<3x8xf32>
  %g = tensor.expand_shape %p [[0, 1], [2]] output_shape [1, 3, 8] : tensor<3x8xf32> into tensor<1x3x8xf32>
  %ce = tensor.empty() : tensor<1x3x3x6xf32>
  %cols = linalg.generic {indexing_maps = [affine_map<(g, c, k, e) -> (g, c, e + k)>, affine_map<(g, c, k, e) -> (g, c, k, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%g : tensor<1x3x8xf32>) outs(%ce : tensor<1x3x3x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<1x3x3x6xf32>
  return %cols : tensor<1x3x3x6xf32>
}

// Two copies read one pad, and the pad is returned too: each copy computes
// it (a clone fused into each), the pad stays as one generic for the
// return. A reader that is no copy (it adds) leaves the pad alone.
// CHECK-LABEL: func.func @pad_read_twice(
// CHECK:         %[[P:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8xf32>)
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3x6xf32>)
// CHECK:           tensor.extract
// CHECK:         %[[B:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<6x3xf32>)
// CHECK:           tensor.extract
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<8xf32>)
// CHECK:           arith.addf
// CHECK:         return %[[A]], %[[B]], %[[P]], %[[S]]
func.func @pad_read_twice(%x: tensor<6xf32>) -> (tensor<3x6xf32>, tensor<6x3xf32>, tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %p = tensor.insert_slice %x into %f[1] [6] [1] : tensor<6xf32> into tensor<8xf32>
  %ae = tensor.empty() : tensor<3x6xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(k, e) -> (e + k)>, affine_map<(k, e) -> (k, e)>], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<8xf32>) outs(%ae : tensor<3x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<3x6xf32>
  %be = tensor.empty() : tensor<6x3xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(e, k) -> (e + k)>, affine_map<(e, k) -> (e, k)>], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<8xf32>) outs(%be : tensor<6x3xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<6x3xf32>
  %se = tensor.empty() : tensor<8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%p : tensor<8xf32>) outs(%se : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = arith.addf %v, %v : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  return %a, %b, %p, %s : tensor<3x6xf32>, tensor<6x3xf32>, tensor<8xf32>, tensor<8xf32>
}
