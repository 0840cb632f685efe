// RUN: rankc-opt %s -rankc-gpu-narrow-contractions | FileCheck %s
// The same after rankc-gpu-pads-as-generics (as the CUDA pipeline runs
// them): a constant pad is then one generic that selects between the
// source's element and the pad value (@conv_im2col, @pad_not_bf16).
// RUN: rankc-opt %s -rankc-gpu-pads-as-generics -rankc-gpu-narrow-contractions | FileCheck %s --check-prefixes=CHECK,PADS

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

// A bf16 convolution as the frontend builds it (dag-format.md v3): x
// widened, padded into zeros, its windows copied out (im2col), then one
// GEMM with the widened weights. Zero is a bf16 value and the copy moves
// elements unchanged: marked.
#win = affine_map<(c, k, e) -> (c, e + k)>
#cols = affine_map<(c, k, e) -> (c, k, e)>
#mA = affine_map<(o, e, c, k) -> (o, c, k)>
#mB = affine_map<(o, e, c, k) -> (c, k, e)>
#mC = affine_map<(o, e, c, k) -> (o, e)>
// CHECK-LABEL: func.func @conv_im2col
// CHECK: linalg.generic {{.*}}rankc.narrow_operands = bf16
func.func @conv_im2col(%x: tensor<2x6xbf16>, %w: tensor<4x2x3xbf16>) -> tensor<4x6xf32> {
  %z = arith.constant 0.0 : f32
  %xe = arith.extf %x : tensor<2x6xbf16> to tensor<2x6xf32>
  %we = arith.extf %w : tensor<4x2x3xbf16> to tensor<4x2x3xf32>
  %pe = tensor.empty() : tensor<2x8xf32>
  %p0 = linalg.fill ins(%z : f32) outs(%pe : tensor<2x8xf32>) -> tensor<2x8xf32>
  %p = tensor.insert_slice %xe into %p0[0, 1] [2, 6] [1, 1] : tensor<2x6xf32> into tensor<2x8xf32>
  %ce = tensor.empty() : tensor<2x3x6xf32>
  %cols = linalg.generic {indexing_maps = [#win, #cols], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p : tensor<2x8xf32>) outs(%ce : tensor<2x3x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<2x3x6xf32>
  %oe = tensor.empty() : tensor<4x6xf32>
  %o0 = linalg.fill ins(%z : f32) outs(%oe : tensor<4x6xf32>) -> tensor<4x6xf32>
  %r = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%we, %cols : tensor<4x2x3xf32>, tensor<2x3x6xf32>) outs(%o0 : tensor<4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}

// The same with padding of 0.1, which bf16 cannot hold exactly: the fast
// GEMM would round it. Not marked.
// CHECK-LABEL: func.func @pad_not_bf16
// CHECK-NOT: rankc.narrow_operands
// CHECK: return
func.func @pad_not_bf16(%x: tensor<2x6xbf16>, %w: tensor<4x2x8xbf16>) -> tensor<4xf32> {
  %z = arith.constant 0.0 : f32
  %pad = arith.constant 0.1 : f32
  %xe = arith.extf %x : tensor<2x6xbf16> to tensor<2x6xf32>
  %we = arith.extf %w : tensor<4x2x8xbf16> to tensor<4x2x8xf32>
  %pe = tensor.empty() : tensor<2x8xf32>
  %p0 = linalg.fill ins(%pad : f32) outs(%pe : tensor<2x8xf32>) -> tensor<2x8xf32>
  %p = tensor.insert_slice %xe into %p0[0, 1] [2, 6] [1, 1] : tensor<2x6xf32> into tensor<2x8xf32>
  %oe = tensor.empty() : tensor<4xf32>
  %o0 = linalg.fill ins(%z : f32) outs(%oe : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(o, c, k) -> (o, c, k)>, affine_map<(o, c, k) -> (c, k)>, affine_map<(o, c, k) -> (o)>], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%we, %p : tensor<4x2x8xf32>, tensor<2x8xf32>) outs(%o0 : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// A concat written as insert_slices into an empty tensor (q, k and v's
// gradients side by side) that the slices cover exactly: marked. Covering
// half of it leaves the other half undefined, not bf16: not marked.
// CHECK-LABEL: func.func @concat
// CHECK: linalg.matmul {rankc.narrow_operands = bf16}
// CHECK: linalg.matmul ins
// CHECK-NOT: rankc.narrow_operands
// CHECK: return
func.func @concat(%a: tensor<4x8xbf16>, %b: tensor<4x8xbf16>, %w: tensor<16x16xbf16>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %ea = arith.extf %a : tensor<4x8xbf16> to tensor<4x8xf32>
  %eb = arith.extf %b : tensor<4x8xbf16> to tensor<4x8xf32>
  %ew = arith.extf %w : tensor<16x16xbf16> to tensor<16x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %c0 = tensor.insert_slice %ea into %e[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x16xf32>
  %c = tensor.insert_slice %eb into %c0[0, 8] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x16xf32>
  %z = arith.constant 0.0 : f32
  %oe = tensor.empty() : tensor<4x16xf32>
  %o = linalg.fill ins(%z : f32) outs(%oe : tensor<4x16xf32>) -> tensor<4x16xf32>
  %r = linalg.matmul ins(%c, %ew : tensor<4x16xf32>, tensor<16x16xf32>) outs(%o : tensor<4x16xf32>) -> tensor<4x16xf32>
  %h = tensor.insert_slice %ea into %e[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x16xf32>
  %r2 = linalg.matmul ins(%h, %ew : tensor<4x16xf32>, tensor<16x16xf32>) outs(%o : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r, %r2 : tensor<4x16xf32>, tensor<4x16xf32>
}

// A marked contraction then reads the bf16 values themselves, widening
// them in its body: A's producer only widens (transposing): fused in, its
// map composed; B is a multi-output generic's extf of a value it also
// yields in bf16 (a layer norm's output), reshaped: that bf16 result,
// reshaped the same way. cuBLASLt then reads A and B as bf16.
// CHECK-LABEL: func.func @reads_bf16
// CHECK-SAME:    (%[[A:.*]]: tensor<8x4xbf16>, %[[X:.*]]: tensor<2x4x16xf32>)
// The f32 copy nobody reads any more is dropped from its generic.
// CHECK:         %[[Y:.*]] = linalg.generic
// CHECK-SAME:      outs(%{{.*}} : tensor<2x4x16xbf16>)
// CHECK:         %[[YC:.*]] = tensor.collapse_shape %[[Y]] {{.*}} : tensor<2x4x16xbf16> into tensor<8x16xbf16>
// CHECK:         linalg.generic {indexing_maps = [#[[AT:map[0-9]*]], #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME:      ins(%[[YC]], %[[A]] : tensor<8x16xbf16>, tensor<8x4xbf16>)
// CHECK-SAME:      rankc.narrow_operands = bf16
// CHECK:         ^bb0(%[[IY:.*]]: bf16, %[[IA:.*]]: bf16, %{{.*}}: f32):
// CHECK-DAG:       arith.extf %[[IY]] : bf16 to f32
// CHECK-DAG:       arith.extf %[[IA]] : bf16 to f32
func.func @reads_bf16(%a: tensor<8x4xbf16>, %x: tensor<2x4x16xf32>) -> (tensor<4x4xf32>, tensor<2x4x16xbf16>) {
  %e3 = tensor.empty() : tensor<2x4x16xbf16>
  %f3 = tensor.empty() : tensor<2x4x16xf32>
  %y:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x4x16xf32>) outs(%e3, %f3 : tensor<2x4x16xbf16>, tensor<2x4x16xf32>) {
  ^bb0(%v: f32, %o: bf16, %p: f32):
    %t = arith.truncf %v : f32 to bf16
    %w = arith.extf %t : bf16 to f32
    linalg.yield %t, %w : bf16, f32
  } -> (tensor<2x4x16xbf16>, tensor<2x4x16xf32>)
  %yc = tensor.collapse_shape %y#1 [[0, 1], [2]] : tensor<2x4x16xf32> into tensor<8x16xf32>
  %ea = tensor.empty() : tensor<4x8xf32>
  %wa = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<8x4xbf16>) outs(%ea : tensor<4x8xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %e = arith.extf %v : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %ec = tensor.empty() : tensor<16x4xf32>
  %c = linalg.fill ins(%z : f32) outs(%ec : tensor<16x4xf32>) -> tensor<16x4xf32>
  // C[n, m] = sum_k Y[k, n] * A^T[m, k]
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%yc, %wa : tensor<8x16xf32>, tensor<4x8xf32>) outs(%c : tensor<16x4xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x4xf32>
  %e44 = tensor.empty() : tensor<4x4xf32>
  %r4 = tensor.extract_slice %r[0, 0] [4, 4] [1, 1] : tensor<16x4xf32> to tensor<4x4xf32>
  return %r4, %y#0 : tensor<4x4xf32>, tensor<2x4x16xbf16>
}

// B is a concat of widened bf16 values (q's, k's and v's gradients side by
// side, read by the qkv projection's weight gradient): it gets a bf16
// concat of the bf16 pieces, and A and B are read as bf16.
// CHECK-LABEL: func.func @concat_reads_bf16
// CHECK-SAME:    (%[[A:.*]]: tensor<4x8xbf16>, %[[B0:.*]]: tensor<4x4xbf16>, %[[B1:.*]]: tensor<4x4xbf16>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<8x4xbf16>
// CHECK:         %[[I0:.*]] = tensor.insert_slice %[[B0]] into %[[E]][0, 0] [4, 4] [1, 1]
// CHECK:         %[[I1:.*]] = tensor.insert_slice %[[B1]] into %[[I0]][4, 0] [4, 4] [1, 1]
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME:      ins(%[[A]], %[[I1]] : tensor<4x8xbf16>, tensor<8x4xbf16>)
// CHECK-SAME:      rankc.narrow_operands = bf16
func.func @concat_reads_bf16(%a: tensor<4x8xbf16>, %b0: tensor<4x4xbf16>, %b1: tensor<4x4xbf16>) -> tensor<4x4xf32> {
  %ea = tensor.empty() : tensor<4x8xf32>
  %wa = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xbf16>) outs(%ea : tensor<4x8xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %e = arith.extf %v : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<4x8xf32>
  %w0 = arith.extf %b0 : tensor<4x4xbf16> to tensor<4x4xf32>
  %w1 = arith.extf %b1 : tensor<4x4xbf16> to tensor<4x4xf32>
  %eb = tensor.empty() : tensor<8x4xf32>
  %i0 = tensor.insert_slice %w0 into %eb[0, 0] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<8x4xf32>
  %i1 = tensor.insert_slice %w1 into %i0[4, 0] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<8x4xf32>
  %z = arith.constant 0.0 : f32
  %ec = tensor.empty() : tensor<4x4xf32>
  %c = linalg.fill ins(%z : f32) outs(%ec : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%wa, %i1 : tensor<4x8xf32>, tensor<8x4xf32>) outs(%c : tensor<4x4xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// Marked, but one piece of B's concat is a constant (exact in bf16, so the
// fast GEMM is exact), which has no bf16 tensor to read: A and B stay f32
// both (cuBLASLt takes A and B of one type).
// CHECK-LABEL: func.func @one_side
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME:      ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x4xf32>)
// CHECK-SAME:      rankc.narrow_operands = bf16
func.func @one_side(%a: tensor<4x8xbf16>, %b0: tensor<4x4xbf16>) -> tensor<4x4xf32> {
  %ea = tensor.empty() : tensor<4x8xf32>
  %wa = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xbf16>) outs(%ea : tensor<4x8xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %e = arith.extf %v : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<4x8xf32>
  %w0 = arith.extf %b0 : tensor<4x4xbf16> to tensor<4x4xf32>
  %w1 = arith.constant dense<0.5> : tensor<4x4xf32>
  %eb = tensor.empty() : tensor<8x4xf32>
  %i0 = tensor.insert_slice %w0 into %eb[0, 0] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<8x4xf32>
  %i1 = tensor.insert_slice %w1 into %i0[4, 0] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<8x4xf32>
  %z = arith.constant 0.0 : f32
  %ec = tensor.empty() : tensor<4x4xf32>
  %c = linalg.fill ins(%z : f32) outs(%ec : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%wa, %i1 : tensor<4x8xf32>, tensor<8x4xf32>) outs(%c : tensor<4x4xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// A's widening has another reader (so it is not fused) and reaches the
// contraction reshaped: the contraction reads its bf16 input, reshaped the
// same way; the widened copy stays for its other reader.
// CHECK-LABEL: func.func @widened_copy_reshaped
// CHECK-SAME:    (%[[A:.*]]: tensor<2x4x8xbf16>, %[[B:.*]]: tensor<8x4xbf16>)
// CHECK:         %[[W:.*]] = linalg.generic
// CHECK:         %[[AC:.*]] = tensor.collapse_shape %[[A]] {{.*}} : tensor<2x4x8xbf16> into tensor<8x8xbf16>
// CHECK:         linalg.generic {{.*}} ins(%[[AC]], %[[B]] : tensor<8x8xbf16>, tensor<8x4xbf16>)
// CHECK:         return %{{.*}}, %[[W]]
func.func @widened_copy_reshaped(%a: tensor<2x4x8xbf16>, %b: tensor<8x4xbf16>) -> (tensor<8x4xf32>, tensor<2x4x8xf32>) {
  %ea = tensor.empty() : tensor<2x4x8xf32>
  %wa = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<2x4x8xbf16>) outs(%ea : tensor<2x4x8xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %e = arith.extf %v : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<2x4x8xf32>
  %ac = tensor.collapse_shape %wa [[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
  %eb = tensor.empty() : tensor<8x4xf32>
  %wb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<8x4xbf16>) outs(%eb : tensor<8x4xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %e = arith.extf %v : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<8x4xf32>
  %z = arith.constant 0.0 : f32
  %ec = tensor.empty() : tensor<8x4xf32>
  %c = linalg.fill ins(%z : f32) outs(%ec : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ac, %wb : tensor<8x8xf32>, tensor<8x4xf32>) outs(%c : tensor<8x4xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  return %r, %wa : tensor<8x4xf32>, tensor<2x4x8xf32>
}

// A bf16 convolution after convert-elementwise-to-linalg: x widened by a
// generic, padded, its windows copied out. With the pad one generic
// (PADS; rankc-gpu-pads-as-generics also moves it into the im2col copy),
// the copy has a bf16 version: it extracts from x itself and writes bf16
// elements, half the bytes; the GEMM reads them (and w, its widening
// fused in). The f32 chain is gone.
// CHECK-LABEL: func.func @conv_reads_bf16
// PADS-SAME:     (%[[X:.*]]: tensor<2x6xbf16>, %[[W:.*]]: tensor<4x2x3xbf16>)
// (The f32 chain would come first: each copy is built after its source.)
// PADS-NOT:      tensor<2x{{[0-9x]+}}f32>
// PADS:          %[[C:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3x6xbf16>)
// PADS:            tensor.extract %[[X]][{{.*}}] : tensor<2x6xbf16>
// PADS:            arith.truncf {{.*}} : f32 to bf16
// PADS:          linalg.generic {{.*}} ins(%[[W]], %[[C]] : tensor<4x2x3xbf16>, tensor<2x3x6xbf16>)
// PADS-SAME:       rankc.narrow_operands = bf16
func.func @conv_reads_bf16(%x: tensor<2x6xbf16>, %w: tensor<4x2x3xbf16>) -> tensor<4x6xf32> {
  %z = arith.constant 0.0 : f32
  %ex = tensor.empty() : tensor<2x6xf32>
  %xe = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x6xbf16>) outs(%ex : tensor<2x6xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %e = arith.extf %v : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<2x6xf32>
  %ew = tensor.empty() : tensor<4x2x3xf32>
  %we = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w : tensor<4x2x3xbf16>) outs(%ew : tensor<4x2x3xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %e = arith.extf %v : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<4x2x3xf32>
  %pe = tensor.empty() : tensor<2x8xf32>
  %p0 = linalg.fill ins(%z : f32) outs(%pe : tensor<2x8xf32>) -> tensor<2x8xf32>
  %p = tensor.insert_slice %xe into %p0[0, 1] [2, 6] [1, 1] : tensor<2x6xf32> into tensor<2x8xf32>
  %ce = tensor.empty() : tensor<2x3x6xf32>
  %cols = linalg.generic {indexing_maps = [#win, #cols], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p : tensor<2x8xf32>) outs(%ce : tensor<2x3x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<2x3x6xf32>
  %oe = tensor.empty() : tensor<4x6xf32>
  %o0 = linalg.fill ins(%z : f32) outs(%oe : tensor<4x6xf32>) -> tensor<4x6xf32>
  %r = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%we, %cols : tensor<4x2x3xf32>, tensor<2x3x6xf32>) outs(%o0 : tensor<4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}
