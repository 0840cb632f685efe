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

// Kept: the fill is read elsewhere too; the slice strides; the insert
// drops a dimension (rank-reducing); the destination is no fill.
// CHECK-LABEL: func.func @kept(
// CHECK-COUNT-3: tensor.insert_slice
// CHECK:         tensor.insert_slice
// CHECK-NOT:     linalg.index
// CHECK:         return
func.func @kept(%x: tensor<4xf32>, %y: tensor<4x1xf32>, %d: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x2xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %a = tensor.insert_slice %x into %f[2] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8xf32>) -> tensor<8xf32>
  %b = tensor.insert_slice %x into %f2[0] [4] [2] : tensor<4xf32> into tensor<8xf32>
  %e3 = tensor.empty() : tensor<8x2xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %c = tensor.insert_slice %x into %f3[2, 1] [4, 1] [1, 1] : tensor<4xf32> into tensor<8x2xf32>
  %g = tensor.insert_slice %x into %d[2] [4] [1] : tensor<4xf32> into tensor<8xf32>
  return %a, %f, %b, %c, %g : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x2xf32>, tensor<8xf32>
}
