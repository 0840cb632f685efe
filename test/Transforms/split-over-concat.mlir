// RUN: rankc-opt %s -rankc-split-over-concat | FileCheck %s
// RUN: rankc-opt %s -rankc-split-over-concat -one-shot-bufferize -cse -canonicalize | FileCheck %s --check-prefix=BUF

#id = affine_map<(d0) -> (d0)>
// A 1-D halo update: ext = concat(lo, u, hi), then u + (ext[0:8] + ext[2:10]
// - 2 u). Split at the pieces' boundaries: [0, 1) reads lo, [1, 7) reads
// only u, [7, 8) reads hi; each writes its slice of the result. The concat
// is gone.
// CHECK-LABEL: func.func @halo(
// CHECK-NOT: tensor.concat
// CHECK: %[[U0:.*]] = tensor.extract_slice %arg1[0] [1] [1]
// CHECK: %[[U1:.*]] = tensor.extract_slice %arg1[1] [1] [1]
// CHECK: %[[O0:.*]] = tensor.extract_slice %{{.*}}[0] [1] [1]
// CHECK: %[[G0:.*]] = linalg.generic {{.*}} ins(%[[U0]], %arg0, %[[U1]] : {{.*}}) outs(%[[O0]] :
// CHECK: %[[D0:.*]] = tensor.insert_slice %[[G0]] into %{{.*}}[0] [1] [1]
// CHECK: %[[M:.*]] = tensor.extract_slice %arg1[1] [6] [1]
// CHECK: %[[L:.*]] = tensor.extract_slice %arg1[0] [6] [1]
// CHECK: %[[R:.*]] = tensor.extract_slice %arg1[2] [6] [1]
// CHECK: %[[O1:.*]] = tensor.extract_slice %[[D0]][1] [6] [1]
// CHECK: %[[G1:.*]] = linalg.generic {{.*}} ins(%[[M]], %[[L]], %[[R]] : {{.*}}) outs(%[[O1]] :
// CHECK: %[[D1:.*]] = tensor.insert_slice %[[G1]] into %[[D0]][1] [6] [1]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %arg2 :
// CHECK: %[[D2:.*]] = tensor.insert_slice
// CHECK-NOT: tensor.concat
// CHECK: return %[[D2]]
// Bufferized, the interior is read from u's own buffer and written in
// place: no allocation of the concat's 10 elements, no copy.
// BUF-LABEL: func.func @halo(
// BUF-NOT: memref<10xf32>
// BUF-NOT: memref.copy
// BUF: return
func.func @halo(%lo: tensor<1xf32>, %u: tensor<8xf32>, %hi: tensor<1xf32>) -> tensor<8xf32> {
  %ext = tensor.concat dim(0) %lo, %u, %hi : (tensor<1xf32>, tensor<8xf32>, tensor<1xf32>) -> tensor<10xf32>
  %l = tensor.extract_slice %ext[0] [8] [1] : tensor<10xf32> to tensor<8xf32>
  %r = tensor.extract_slice %ext[2] [8] [1] : tensor<10xf32> to tensor<8xf32>
  %init = tensor.empty() : tensor<8xf32>
  %two = arith.constant 2.0 : f32
  %new = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%u, %l, %r : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%m: f32, %a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %t = arith.mulf %m, %two : f32
    %d = arith.subf %s, %t : f32
    %n = arith.addf %m, %d : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  return %new : tensor<8xf32>
}

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
// Rows of a 2-D halo (concat on axis 0, read whole): split in three by rows.
// CHECK-LABEL: func.func @rows(
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: tensor.concat
func.func @rows(%lo: tensor<1x4xf32>, %u: tensor<2x4xf32>, %hi: tensor<1x4xf32>) -> tensor<4x4xf32> {
  %ext = tensor.concat dim(0) %lo, %u, %hi : (tensor<1x4xf32>, tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<4x4xf32>
  %init = tensor.empty() : tensor<4x4xf32>
  %y = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ext : tensor<4x4xf32>) outs(%init : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// Left alone: a transposed read, and a reduction.
// CHECK-LABEL: func.func @transposed(
// CHECK: tensor.concat
// CHECK-COUNT-1: linalg.generic
func.func @transposed(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> tensor<4x4xf32> {
  %ext = tensor.concat dim(0) %a, %b : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
  %init = tensor.empty() : tensor<4x4xf32>
  %y = linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ext : tensor<4x4xf32>) outs(%init : tensor<4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// CHECK-LABEL: func.func @reduction(
// CHECK: tensor.concat
func.func @reduction(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<f32> {
  %ext = tensor.concat dim(0) %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%ext : tensor<4xf32>) outs(%init : tensor<f32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %y : tensor<f32>
}
