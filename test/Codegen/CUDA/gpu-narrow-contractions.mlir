// RUN: rankc-opt %s -rankc-gpu-narrow-contractions | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// Both operands widened from bf16 (one through a transpose): marked.
// CHECK-LABEL: func.func @bf16
// CHECK: linalg.matmul {rankc.narrow_operands = bf16}
func.func @bf16(%a: tensor<4x8xbf16>, %b: tensor<16x8xbf16>) -> tensor<4x16xf32> {
  %ea = tensor.empty() : tensor<4x8xf32>
  %wa = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xbf16>) outs(%ea : tensor<4x8xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %e = arith.extf %x : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<4x8xf32>
  %eb = tensor.empty() : tensor<16x8xf32>
  %wb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<16x8xbf16>) outs(%eb : tensor<16x8xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %e = arith.extf %x : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<16x8xf32>
  %et = tensor.empty() : tensor<8x16xf32>
  %t = linalg.transpose ins(%wb : tensor<16x8xf32>) outs(%et : tensor<8x16xf32>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %ec = tensor.empty() : tensor<4x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%ec : tensor<4x16xf32>) -> tensor<4x16xf32>
  %r = linalg.matmul ins(%wa, %t : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// One operand is an f32 value (an extf of bf16 then arithmetic in f32, or
// an argument): its elements need not be bf16. Not marked.
// CHECK-LABEL: func.func @mixed
// CHECK: linalg.matmul ins
// CHECK-NOT: rankc.narrow_operands
func.func @mixed(%a: tensor<4x8xbf16>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %ea = tensor.empty() : tensor<4x8xf32>
  %wa = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xbf16>) outs(%ea : tensor<4x8xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %e = arith.extf %x : bf16 to f32
    %s = arith.mulf %e, %e : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %ec = tensor.empty() : tensor<4x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%ec : tensor<4x16xf32>) -> tensor<4x16xf32>
  %r = linalg.matmul ins(%wa, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
