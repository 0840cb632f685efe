// RUN: rankc-opt %s -pass-pipeline='builtin.module(func.func(rankc-gpu-round-gemm-results))' | FileCheck %s

#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#id1 = affine_map<(d0) -> (d0)>

// An autocast matmul: bf16 operands, f32 accumulation from zeros, read by
// an op that rounds it to bf16 (and adds) and, through a reshape, by one
// that rounds and widens it. One rounding generic after the GEMM, marked
// for rankc-gpu-library-calls, into a tensor of zeros filled before the
// GEMM (so that its buffer is planned live across the GEMM, apart from A
// and B); the readers read bf16 and round no more.
// CHECK-LABEL: func.func @rounded(
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8x4xbf16>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : bf16) outs(%[[E]] : tensor<8x4xbf16>)
// CHECK: %[[G:.*]] = linalg.generic {{.*}} attrs = {rankc.narrow_operands = bf16}
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[G]] : tensor<8x4xf32>) outs(%[[F]] : tensor<8x4xbf16>) attrs = {rankc.gemm_result}
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[V]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[T]] : bf16
// CHECK: linalg.generic {{.*}} ins(%[[R]], %arg3 : tensor<8x4xbf16>, tensor<8x4xbf16>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: bf16, %[[Y:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT: arith.addf %[[X]], %[[Y]] : bf16
// CHECK: %[[S:.*]] = tensor.collapse_shape %[[R]] {{\[}}[0, 1]] : tensor<8x4xbf16> into tensor<32xbf16>
// CHECK: linalg.generic {{.*}} ins(%[[S]] : tensor<32xbf16>)
// CHECK-NEXT: ^bb0(%[[Z:.*]]: bf16, %{{.*}}: f32):
// CHECK-NEXT: arith.extf %[[Z]] : bf16 to f32
func.func @rounded(%a: tensor<8x16xbf16>, %b: tensor<16x4xbf16>, %c: tensor<8x4xf32>, %r: tensor<8x4xbf16>) -> (tensor<8x4xbf16>, tensor<32xf32>) {
  %z = arith.constant 0.0 : f32
  %c0 = linalg.fill ins(%z : f32) outs(%c : tensor<8x4xf32>) -> tensor<8x4xf32>
  %g = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8x16xbf16>, tensor<16x4xbf16>) outs(%c0 : tensor<8x4xf32>) attrs = {rankc.narrow_operands = bf16} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %e = tensor.empty() : tensor<8x4xbf16>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %r : tensor<8x4xf32>, tensor<8x4xbf16>) outs(%e : tensor<8x4xbf16>) {
  ^bb0(%v: f32, %w: bf16, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    %s = arith.addf %t, %w : bf16
    linalg.yield %s : bf16
  } -> tensor<8x4xbf16>
  %flat = tensor.collapse_shape %g [[0, 1]] : tensor<8x4xf32> into tensor<32xf32>
  %e2 = tensor.empty() : tensor<32xf32>
  %wide = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%flat : tensor<32xf32>) outs(%e2 : tensor<32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = arith.truncf %v : f32 to bf16
    %x = arith.extf %t : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<32xf32>
  return %sum, %wide : tensor<8x4xbf16>, tensor<32xf32>
}

// Kept f32: a reader that adds before rounding (a bias: cuBLASLt's
// epilogue, not this pass), a GEMM that adds to earlier values (no zero
// fill), and one the function returns.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: rankc.gemm_result
// CHECK: return
func.func @kept(%a: tensor<8x16xbf16>, %b: tensor<16x4xbf16>, %c: tensor<8x4xf32>, %bias: tensor<8x4xf32>) -> (tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x4xf32>) {
  %z = arith.constant 0.0 : f32
  %c0 = linalg.fill ins(%z : f32) outs(%c : tensor<8x4xf32>) -> tensor<8x4xf32>
  %g = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8x16xbf16>, tensor<16x4xbf16>) outs(%c0 : tensor<8x4xf32>) attrs = {rankc.narrow_operands = bf16} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %e = tensor.empty() : tensor<8x4xbf16>
  %biased = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %bias : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xbf16>) {
  ^bb0(%v: f32, %w: f32, %o: bf16):
    %s = arith.addf %v, %w : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<8x4xbf16>
  %g2 = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8x16xbf16>, tensor<16x4xbf16>) outs(%c : tensor<8x4xf32>) attrs = {rankc.narrow_operands = bf16} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %r2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g2 : tensor<8x4xf32>) outs(%e : tensor<8x4xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<8x4xbf16>
  %g3 = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8x16xbf16>, tensor<16x4xbf16>) outs(%c0 : tensor<8x4xf32>) attrs = {rankc.narrow_operands = bf16} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  return %biased, %r2, %g3 : tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x4xf32>
}
