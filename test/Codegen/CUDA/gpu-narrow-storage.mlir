// RUN: rankc-opt %s -pass-pipeline='builtin.module(func.func(rankc-gpu-narrow-storage))' | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#id1 = affine_map<(d0) -> (d0)>

// Autocast's rounded logits: rounded to bf16, widened, read by a row max
// (through a reshape) and a subtraction. Stored bf16; each reader widens.
// CHECK-LABEL: func.func @rounded(
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8xbf16>
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<8xf32>) outs(%[[E]] : tensor<8xbf16>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[IN]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[T]] : bf16
// CHECK: %[[X:.*]] = tensor.expand_shape %[[R]] {{\[}}[0, 1]] output_shape [2, 4] : tensor<8xbf16> into tensor<2x4xbf16>
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<2x4xbf16>) outs(%arg1 : tensor<2xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT: arith.maximumf %[[ACC]], %[[W]] : f32
// CHECK: linalg.generic {{.*}} ins(%[[R]], %arg0 : tensor<8xbf16>, tensor<8xf32>)
// CHECK-NEXT: ^bb0(%[[B:.*]]: bf16, %[[C:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[W2:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT: arith.subf %[[W2]], %[[C]] : f32
func.func @rounded(%x: tensor<8xf32>, %acc: tensor<2xf32>) -> (tensor<2xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.truncf %a : f32 to bf16
    %w = arith.extf %t : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<8xf32>
  %r2 = tensor.expand_shape %r [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%r2 : tensor<2x4xf32>) outs(%acc : tensor<2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  %d = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%r, %x : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %m, %d : tensor<2xf32>, tensor<8xf32>
}

// Kept f32: a widened value the function returns, one a GEMM reads (the
// other operand is f32: cuBLASLt reads A and B in one type), and one whose
// init the body reads (an accumulation).
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: tensor.empty() : tensor<4x4xbf16>
// CHECK-NOT: -> tensor<4x4xbf16>
// CHECK: return
#ma = affine_map<(m, n, k) -> (m, k)>
#mb = affine_map<(m, n, k) -> (k, n)>
#mc = affine_map<(m, n, k) -> (m, n)>
func.func @kept(%x: tensor<4x4xbf16>, %w: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %ret = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xbf16>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %v = arith.extf %a : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<4x4xf32>
  %a2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xbf16>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %n = arith.negf %a : bf16
    %v = arith.extf %n : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<4x4xf32>
  %mm = linalg.matmul ins(%a2, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  %acc = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xbf16>) outs(%c : tensor<4x4xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %t = arith.truncf %o : f32 to bf16
    %s = arith.addf %a, %t : bf16
    %v = arith.extf %s : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<4x4xf32>
  %use = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%acc : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %ret, %mm, %use : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// A batch of dot products (softmax backward's sum of p * dp over a row) is
// a reduction, not a GEMM: it reads the widened value narrow (once: an
// input read twice through one map is one input, upstream's dedup).
// CHECK-LABEL: func.func @row_dot(
// CHECK: %[[P:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x4xbf16>)
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<4x4xbf16>) outs(%arg1 : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[U:.*]]: bf16, %{{.*}}: f32):
// CHECK-NEXT: %[[W1:.*]] = arith.extf %[[U]] : bf16 to f32
// CHECK-NEXT: %[[W2:.*]] = arith.extf %[[U]] : bf16 to f32
// CHECK-NEXT: arith.mulf %[[W1]], %[[W2]] : f32
func.func @row_dot(%x: tensor<4x4xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.truncf %a : f32 to bf16
    %w = arith.extf %t : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<4x4xf32>
  %d = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%p, %p : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %d : tensor<4xf32>
}
