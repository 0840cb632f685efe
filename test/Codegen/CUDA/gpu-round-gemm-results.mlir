// RUN: rankc-opt %s -pass-pipeline='builtin.module(func.func(rankc-gpu-round-gemm-results))' | FileCheck %s

// (The maps of @biased's rounding: the result's, and its columns'.)
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[COL:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>

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

// Kept f32: a reader that adds an f32 tensor before rounding (not a
// narrow bias per column), a GEMM that adds to earlier values (no zero
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

// Autocast linear layers: readers that round the sum of the f32 result
// and a rounded bias per column (PyTorch's addmm: one rounding). The
// rounding generic adds the bias (cuBLASLt's bias epilogue, in
// rankc-gpu-library-calls); the two biases, function arguments of one
// shape, are rounded by one generic at the start. The first reader also
// returned the rounded sum (a multi-output op): that result is now the
// rounding's. The second GEMM's reader reads it transposed, and its bias
// through the same transposition (still per column); the third's bias is
// bf16 already.
// CHECK-LABEL: func.func @biased(
// CHECK-SAME: %[[B1:[a-z0-9]+]]: tensor<4xf32>, %[[B2:[a-z0-9]+]]: tensor<4xf32>, %[[B3:[a-z0-9]+]]: tensor<4xbf16>
// CHECK: %[[NB:.*]]:2 = linalg.generic {{.*}} ins(%[[B1]], %[[B2]] : tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X1:.*]]: f32, %[[X2:.*]]: f32, %{{.*}}: bf16, %{{.*}}: bf16):
// CHECK-NEXT: %[[T1:.*]] = arith.truncf %[[X1]] : f32 to bf16
// CHECK-NEXT: %[[T2:.*]] = arith.truncf %[[X2]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[T1]], %[[T2]] : bf16, bf16
// CHECK: %[[G1:.*]] = linalg.generic {{.*}} attrs = {rankc.narrow_operands = bf16}
// CHECK: %[[R1:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[COL]], #[[ID]]], {{.*}} ins(%[[G1]], %[[NB]]#0 : tensor<8x4xf32>, tensor<4xbf16>) {{.*}} attrs = {rankc.gemm_result}
// CHECK-NEXT: ^bb0(%[[C:.*]]: f32, %[[BB:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[BB]] : bf16 to f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[W]], %[[C]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[S]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[T]] : bf16
// CHECK: %[[GELU:.*]] = linalg.generic {{.*}} ins(%[[R1]] : tensor<8x4xbf16>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: bf16, %{{.*}}: f32):
// CHECK-NEXT: %[[VW:.*]] = arith.extf %[[V]] : bf16 to f32
// CHECK-NEXT: arith.mulf %[[VW]]
// CHECK-NEXT: math.erf
// CHECK: %[[G2:.*]] = linalg.generic {{.*}} attrs = {rankc.narrow_operands = bf16}
// CHECK: %[[R2:.*]] = linalg.generic {{.*}} ins(%[[G2]], %[[NB]]#1 : tensor<8x4xf32>, tensor<4xbf16>) {{.*}} attrs = {rankc.gemm_result}
// CHECK: %[[G3:.*]] = linalg.generic {{.*}} attrs = {rankc.narrow_operands = bf16}
// CHECK: %[[R3:.*]] = linalg.generic {{.*}} ins(%[[G3]], %[[B3]] : tensor<8x4xf32>, tensor<4xbf16>) {{.*}} attrs = {rankc.gemm_result}
// CHECK: linalg.generic {{.*}} ins(%[[R2]] : tensor<8x4xbf16>)
// CHECK: return %[[R1]], %[[GELU]], %{{.*}}, %[[R3]] :
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
func.func @biased(%a: tensor<8x16xbf16>, %b: tensor<16x4xbf16>, %c: tensor<8x4xf32>, %bias1: tensor<4xf32>, %bias2: tensor<4xf32>, %bias3: tensor<4xbf16>) -> (tensor<8x4xbf16>, tensor<8x4xf32>, tensor<4x8xbf16>, tensor<8x4xbf16>) {
  %z = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
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
  %ef = tensor.empty() : tensor<8x4xf32>
  %pre, %act = linalg.generic {indexing_maps = [#col, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias1, %g : tensor<4xf32>, tensor<8x4xf32>) outs(%e, %ef : tensor<8x4xbf16>, tensor<8x4xf32>) {
  ^bb0(%w: f32, %v: f32, %o: bf16, %o2: f32):
    %wt = arith.truncf %w : f32 to bf16
    %ww = arith.extf %wt : bf16 to f32
    %s = arith.addf %ww, %v : f32
    %t = arith.truncf %s : f32 to bf16
    %x = arith.extf %t : bf16 to f32
    %m = arith.mulf %x, %half : f32
    %r = math.erf %m : f32
    linalg.yield %t, %r : bf16, f32
  } -> (tensor<8x4xbf16>, tensor<8x4xf32>)
  %g2 = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8x16xbf16>, tensor<16x4xbf16>) outs(%c0 : tensor<8x4xf32>) attrs = {rankc.narrow_operands = bf16} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %g3 = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8x16xbf16>, tensor<16x4xbf16>) outs(%c0 : tensor<8x4xf32>) attrs = {rankc.narrow_operands = bf16} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %et = tensor.empty() : tensor<4x8xbf16>
  %trans = linalg.generic {indexing_maps = [#tr, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g2, %bias2 : tensor<8x4xf32>, tensor<4xf32>) outs(%et : tensor<4x8xbf16>) {
  ^bb0(%v: f32, %w: f32, %o: bf16):
    %wt = arith.truncf %w : f32 to bf16
    %ww = arith.extf %wt : bf16 to f32
    %s = arith.addf %v, %ww : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  %third = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g3, %bias3 : tensor<8x4xf32>, tensor<4xbf16>) outs(%e : tensor<8x4xbf16>) {
  ^bb0(%v: f32, %w: bf16, %o: bf16):
    %ww = arith.extf %w : bf16 to f32
    %s = arith.addf %ww, %v : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<8x4xbf16>
  return %pre, %act, %trans, %third : tensor<8x4xbf16>, tensor<8x4xf32>, tensor<4x8xbf16>, tensor<8x4xbf16>
}

// Kept f32: a bias per row (not cuBLASLt's per column), two readers with
// different biases, and a bias read through a reshape of the result.
// CHECK-LABEL: func.func @biases_kept(
// CHECK-NOT: rankc.gemm_result
// CHECK: return
func.func @biases_kept(%a: tensor<8x16xbf16>, %b: tensor<16x4xbf16>, %c: tensor<8x4xf32>, %rows: tensor<8xf32>, %bias1: tensor<4xf32>, %bias2: tensor<4xf32>, %flat: tensor<32xf32>) -> (tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<32xbf16>) {
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
  %perRow = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %rows : tensor<8x4xf32>, tensor<8xf32>) outs(%e : tensor<8x4xbf16>) {
  ^bb0(%v: f32, %w: f32, %o: bf16):
    %wt = arith.truncf %w : f32 to bf16
    %ww = arith.extf %wt : bf16 to f32
    %s = arith.addf %ww, %v : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<8x4xbf16>
  %g2 = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8x16xbf16>, tensor<16x4xbf16>) outs(%c0 : tensor<8x4xf32>) attrs = {rankc.narrow_operands = bf16} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %one = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g2, %bias1 : tensor<8x4xf32>, tensor<4xf32>) outs(%e : tensor<8x4xbf16>) {
  ^bb0(%v: f32, %w: f32, %o: bf16):
    %wt = arith.truncf %w : f32 to bf16
    %ww = arith.extf %wt : bf16 to f32
    %s = arith.addf %ww, %v : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<8x4xbf16>
  %other = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g2, %bias2 : tensor<8x4xf32>, tensor<4xf32>) outs(%e : tensor<8x4xbf16>) {
  ^bb0(%v: f32, %w: f32, %o: bf16):
    %wt = arith.truncf %w : f32 to bf16
    %ww = arith.extf %wt : bf16 to f32
    %s = arith.addf %ww, %v : f32
    %t = arith.truncf %s : f32 to bf16
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
  %g3flat = tensor.collapse_shape %g3 [[0, 1]] : tensor<8x4xf32> into tensor<32xf32>
  %e32 = tensor.empty() : tensor<32xbf16>
  %reshaped = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%g3flat, %flat : tensor<32xf32>, tensor<32xf32>) outs(%e32 : tensor<32xbf16>) {
  ^bb0(%v: f32, %w: f32, %o: bf16):
    %wt = arith.truncf %w : f32 to bf16
    %ww = arith.extf %wt : bf16 to f32
    %s = arith.addf %ww, %v : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<32xbf16>
  return %perRow, %one, %other, %reshaped : tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<32xbf16>
}
