// RUN: rankc-opt %s -rankc-gpu-library-calls | FileCheck %s
// RUN: rankc-opt %s -rankc-gpu-library-calls=precision=tf32 | FileCheck %s --check-prefix=TF32
// RUN: rankc-opt %s -rankc-gpu-library-calls=precision=bf16 | FileCheck %s --check-prefix=BF16
// RUN: not rankc-opt %s -rankc-gpu-library-calls=precision=fp8 2>&1 | FileCheck %s --check-prefix=BAD
// Contractions that are one (batched) GEMM become cuBLASLt calls:
// rankc_rt_gemm(A, B, C, batch, M, N, K, dtype, accumulate, transA, transB,
// precision): precision 0 is exact f32 (the default), 1 TF32, 2 BF16, 3 F16.
// BAD: error: unknown precision 'fp8' (f32, tf32 or bf16)

// A matmul after a fill of zeros: the fill is folded in (accumulate 0).
// CHECK-LABEL: func.func @matmul(
// CHECK-NOT: linalg.fill
// CHECK: %[[A:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: %[[B:.*]] = memref.extract_aligned_pointer_as_index %arg1
// CHECK: %[[C:.*]] = memref.extract_aligned_pointer_as_index %arg2
// CHECK: call @rankc_rt_gemm(%[[A]], %[[B]], %[[C]], %c1_i64, %c8_i64, %c4_i64, %c16_i64, %c6_i32, %c0_i32, %c0_i32{{.*}}, %c0_i32{{.*}}, %c0_i32{{.*}})
// TF32-LABEL: func.func @matmul(
// TF32: call @rankc_rt_gemm({{.*}}, %c6_i32, %c0_i32, %c0_i32{{.*}}, %c0_i32{{.*}}, %c1_i32{{.*}})
// BF16-LABEL: func.func @matmul(
// BF16: call @rankc_rt_gemm({{.*}}, %c6_i32, %c0_i32, %c0_i32{{.*}}, %c0_i32{{.*}}, %c2_i32{{.*}})
// CHECK-NOT: linalg.matmul
func.func @matmul(%a: memref<8x16xf32>, %b: memref<16x4xf32>, %c: memref<8x4xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%c : memref<8x4xf32>)
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  return
}

// A matmul marked by rankc-gpu-narrow-contractions (operands widened from
// bf16, f16) asks for the fast compute type of its inputs whatever the
// precision option: 2 (BF16), 3 (F16); exact on such operands.
// CHECK-LABEL: func.func @narrow(
// CHECK: call @rankc_rt_gemm({{.*}}, %c6_i32, %c0_i32, %c0_i32{{.*}}, %c0_i32{{.*}}, %c2_i32{{.*}})
// CHECK: call @rankc_rt_gemm({{.*}}, %c6_i32{{.*}}, %c0_i32{{.*}}, %c0_i32{{.*}}, %c0_i32{{.*}}, %c3_i32{{.*}})
// TF32-LABEL: func.func @narrow(
// TF32: call @rankc_rt_gemm({{.*}}, %c6_i32, %c0_i32, %c0_i32{{.*}}, %c0_i32{{.*}}, %c2_i32{{.*}})
func.func @narrow(%a: memref<8x16xf32>, %b: memref<16x4xf32>, %c: memref<8x4xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%c : memref<8x4xf32>)
  linalg.matmul {rankc.narrow_operands = bf16} ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  linalg.fill ins(%z : f32) outs(%c : memref<8x4xf32>)
  linalg.matmul {rankc.narrow_operands = f16} ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  return
}

// A batched matmul of f64 that accumulates into C (no fill): accumulate 1.
// CHECK-LABEL: func.func @batch(
// CHECK: call @rankc_rt_gemm({{.*}}, %c3_i64, %c2_i64, %c5_i64{{.*}}, %c7_i64, %c7_i32, %c1_i32{{.*}})
func.func @batch(%a: memref<3x2x7xf64>, %b: memref<3x7x5xf64>, %c: memref<3x2x5xf64>) {
  linalg.batch_matmul ins(%a, %b : memref<3x2x7xf64>, memref<3x7x5xf64>) outs(%c : memref<3x2x5xf64>)
  return
}

#x3 = affine_map<(b, s, n, k) -> (b, s, k)>
#w = affine_map<(b, s, n, k) -> (k, n)>
#y3 = affine_map<(b, s, n, k) -> (b, s, n)>
// An einsum bsk,kn->bsn (a linear layer on [b, s, k]): one GEMM with
// M = b * s = 12.
// CHECK-LABEL: func.func @linear(
// CHECK: call @rankc_rt_gemm({{.*}}, %c1_i64, %c12_i64, %c6_i64, %c5_i64, %c6_i32, %c0_i32, %c0_i32{{.*}}, %c0_i32{{.*}})
// CHECK-NOT: linalg.generic
func.func @linear(%x: memref<3x4x5xf32>, %w: memref<5x6xf32>, %y: memref<3x4x6xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%y : memref<3x4x6xf32>)
  linalg.generic {indexing_maps = [#x3, #w, #y3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<3x4x5xf32>, memref<5x6xf32>) outs(%y : memref<3x4x6xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

#ki = affine_map<(i, j, k) -> (k, i)>
#kj = affine_map<(i, j, k) -> (k, j)>
#jk = affine_map<(i, j, k) -> (j, k)>
#ij = affine_map<(i, j, k) -> (i, j)>
// A weight gradient ki,kj->ij (A stored transposed) and ik,jk->ij (B
// stored transposed).
// CHECK-LABEL: func.func @transposed(
// CHECK: call @rankc_rt_gemm({{.*}}, %c1_i64, %c2_i64, %c3_i64, %c4_i64, %c6_i32, %c1_i32, %c1_i32{{.*}}, %c0_i32{{.*}}, %c0_i32{{.*}})
// CHECK: call @rankc_rt_gemm({{.*}}, %c1_i64{{.*}}, %c2_i64{{.*}}, %c3_i64{{.*}}, %c4_i64{{.*}}, %c6_i32{{.*}}, %c1_i32{{.*}}, %c0_i32{{.*}}, %c1_i32{{.*}})
func.func @transposed(%a: memref<4x2xf32>, %b: memref<4x3xf32>, %at: memref<2x4xf32>, %bt: memref<3x4xf32>, %c: memref<2x3xf32>) {
  linalg.generic {indexing_maps = [#ki, #kj, #ij], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x2xf32>, memref<4x3xf32>) outs(%c : memref<2x3xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, #jk, #ij], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%at, %bt : memref<2x4xf32>, memref<3x4xf32>) outs(%c : memref<2x3xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// One weight for a batch of activations stored transposed per batch
// (dX[b, s, j] = sum_k dY[b, k, s] W[k, j]): b leads A and C but not B, so
// it is a batch over which B stays (broadcastB 1), each A[b] transposed.
// CHECK-LABEL: func.func @shared_weight(
// CHECK: call @rankc_rt_gemm({{.*}}, %c4_i64, %c5_i64, %c6_i64, %c8_i64, %c6_i32, %c1_i32, %c1_i32{{.*}}, %c0_i32{{.*}}, %c0_i32{{.*}}, %c1_i32{{.*}})
// CHECK-NOT: linalg.generic
func.func @shared_weight(%dy: memref<4x8x5xf32>, %w: memref<8x6xf32>, %dx: memref<4x5x6xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, s, j, k) -> (b, k, s)>, affine_map<(b, s, j, k) -> (k, j)>, affine_map<(b, s, j, k) -> (b, s, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%dy, %w : memref<4x8x5xf32>, memref<8x6xf32>) outs(%dx : memref<4x5x6xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// Left to the kernel generator: f16 (accumulates in f16 here), an output
// whose groups interleave (ibj: not [batch, m, n]), and batches of dot
// products (no M, no N: a row reduction, not a GEMM), also where a unit
// dimension of the output and one operand (a keepdim row) would be an N of 1.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: call @rankc_rt_gemm
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg12, %arg13 : memref<16x32xbf16>, memref<16x1x32xbf16>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg9, %arg10 : memref<16x32xf32>, memref<16x32xf32>)
// CHECK: linalg.matmul ins(%arg0, %arg1 : memref<8x16xf16>
// CHECK: linalg.generic
// CHECK-NOT: call @rankc_rt_gemm
func.func @kept(%a: memref<8x16xf16>, %b: memref<16x4xf16>, %c: memref<8x4xf16>,
                %big: memref<8x32xf32>, %b32: memref<16x4xf32>, %c32: memref<8x4xf32>,
                %x: memref<3x2x7xf32>, %y: memref<3x7x5xf32>, %o: memref<2x3x5xf32>,
                %r1: memref<16x32xf32>, %r2: memref<16x32xf32>, %dots: memref<16xf32>,
                %n1: memref<16x32xbf16>, %n2: memref<16x1x32xbf16>, %ndots: memref<16x1xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, u, k) -> (b, k)>, affine_map<(b, u, k) -> (b, u, k)>, affine_map<(b, u, k) -> (b, u)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%n1, %n2 : memref<16x32xbf16>, memref<16x1x32xbf16>) outs(%ndots : memref<16x1xf32>) {
  ^bb0(%p: bf16, %q: bf16, %acc: f32):
    %pw = arith.extf %p : bf16 to f32
    %qw = arith.extf %q : bf16 to f32
    %m = arith.mulf %pw, %qw : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, k) -> (b, k)>, affine_map<(b, k) -> (b, k)>, affine_map<(b, k) -> (b)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%r1, %r2 : memref<16x32xf32>, memref<16x32xf32>) outs(%dots : memref<16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.matmul ins(%a, %b : memref<8x16xf16>, memref<16x4xf16>) outs(%c : memref<8x4xf16>)
  linalg.generic {indexing_maps = [affine_map<(b, i, j, k) -> (b, i, k)>, affine_map<(b, i, j, k) -> (b, k, j)>, affine_map<(b, i, j, k) -> (i, b, j)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<3x2x7xf32>, memref<3x7x5xf32>) outs(%o : memref<2x3x5xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}


// Strided views (q and k split from one fused projection): each is copied
// to a device buffer of its own first, before the fill that starts the
// accumulator (still folded in: accumulate 0); a strided result is copied
// in (it may accumulate) and back out after the call.
// CHECK-LABEL: func.func @strided(
// CHECK: %[[V:.*]] = memref.subview %arg0[0, 0] [8, 16] [1, 1]
// CHECK: %[[SA:.*]] = gpu.alloc () : memref<8x16xf32>
// CHECK-NEXT: linalg.copy ins(%[[V]] : memref<8x16xf32, strided<[32, 1]>>) outs(%[[SA]] : memref<8x16xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[PA:.*]] = memref.extract_aligned_pointer_as_index %[[SA]]
// CHECK: call @rankc_rt_gemm(%[[PA]], {{.*}}, %c1_i64, %c8_i64, %c4_i64, %c16_i64, %c6_i32, %c0_i32
// CHECK: %[[W:.*]] = memref.subview %arg3[0, 0] [8, 4] [1, 1]
// CHECK: %[[SC:.*]] = gpu.alloc () : memref<8x4xf32>
// CHECK-NEXT: linalg.copy ins(%[[W]] : memref<8x4xf32, strided<[8, 1]>>) outs(%[[SC]] : memref<8x4xf32>)
// CHECK: call @rankc_rt_gemm({{.*}}, %c6_i32{{.*}}, %c1_i32
// CHECK-NEXT: linalg.copy ins(%[[SC]] : memref<8x4xf32>) outs(%[[W]] : memref<8x4xf32, strided<[8, 1]>>)
// CHECK-NOT: linalg.matmul
func.func @strided(%big: memref<8x32xf32>, %b: memref<16x4xf32>, %c: memref<8x4xf32>, %wide: memref<8x8xf32>) {
  %z = arith.constant 0.0 : f32
  %v = memref.subview %big[0, 0] [8, 16] [1, 1] : memref<8x32xf32> to memref<8x16xf32, strided<[32, 1]>>
  linalg.fill ins(%z : f32) outs(%c : memref<8x4xf32>)
  linalg.matmul ins(%v, %b : memref<8x16xf32, strided<[32, 1]>>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  %w = memref.subview %wide[0, 0] [8, 4] [1, 1] : memref<8x8xf32> to memref<8x4xf32, strided<[8, 1]>>
  linalg.matmul ins(%v, %b : memref<8x16xf32, strided<[32, 1]>>, memref<16x4xf32>) outs(%w : memref<8x4xf32, strided<[8, 1]>>)
  return
}


// The fill of the accumulator's buffer before its reshape (GpuCollapseDims
// collapses a convolution's GEMM after the fill was made), with the
// operands' reshapes between: folded in too (accumulate 0).
// CHECK-LABEL: func.func @fill_before_reshape(
// CHECK-NOT: linalg.fill
// CHECK: call @rankc_rt_gemm({{.*}}, %c6_i32, %c0_i32
func.func @fill_before_reshape(%a: memref<2x4x16xf32>, %b: memref<16x4xf32>) -> memref<2x4x2x2xf32> {
  %z = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<2x4x2x2xf32>
  linalg.fill ins(%z : f32) outs(%c : memref<2x4x2x2xf32>)
  %a2 = memref.collapse_shape %a [[0, 1], [2]] : memref<2x4x16xf32> into memref<8x16xf32>
  %c2 = memref.collapse_shape %c [[0, 1], [2, 3]] : memref<2x4x2x2xf32> into memref<8x4xf32>
  linalg.matmul ins(%a2, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c2 : memref<8x4xf32>)
  return %c : memref<2x4x2x2xf32>
}

// Not folded: the buffer is read between the fill and the GEMM (the copy
// must see the zeros), so the fill stays and the GEMM accumulates onto it.
// CHECK-LABEL: func.func @fill_read_before(
// CHECK: linalg.fill
// CHECK: memref.copy
// CHECK: call @rankc_rt_gemm({{.*}}, %c6_i32, %c1_i32
func.func @fill_read_before(%a: memref<8x16xf32>, %b: memref<16x4xf32>, %d: memref<8x4xf32>) -> memref<8x4xf32> {
  %z = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x4xf32>
  linalg.fill ins(%z : f32) outs(%c : memref<8x4xf32>)
  memref.copy %c, %d : memref<8x4xf32> to memref<8x4xf32>
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  return %c : memref<8x4xf32>
}

// Ops that touch other buffers between the fill and the GEMM (the layer
// norm that makes A, the copies that stage it): the accumulator is a whole
// allocation that none of them uses, so the GEMM is still the first to
// touch it after the fill: folded (accumulate 0).
// CHECK-LABEL: func.func @fill_other_writes_between(
// CHECK-NOT: linalg.fill
// CHECK: linalg.copy
// CHECK: call @rankc_rt_gemm({{.*}}, %c6_i32, %c0_i32
func.func @fill_other_writes_between(%a: memref<8x16xf32>, %b: memref<16x4xf32>) -> memref<8x4xf32> {
  %z = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x4xf32>
  linalg.fill ins(%z : f32) outs(%c : memref<8x4xf32>)
  %a2 = memref.alloc() : memref<8x16xf32>
  linalg.copy ins(%a : memref<8x16xf32>) outs(%a2 : memref<8x16xf32>)
  linalg.matmul ins(%a2, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  return %c : memref<8x4xf32>
}

// The same between views of the step's arena (rankc's buffer plan gives no
// two live buffers the same bytes): folded.
// CHECK-LABEL: func.func @fill_arena_views(
// CHECK-NOT: linalg.fill
// CHECK: call @rankc_rt_gemm({{.*}}, %c6_i32, %c0_i32
func.func @fill_arena_views(%arena: memref<1024xi8>, %a: memref<8x16xf32>, %b: memref<16x4xf32>) {
  %z = arith.constant 0.0 : f32
  %o0 = arith.constant 0 : index
  %o1 = arith.constant 128 : index
  %c = memref.view %arena[%o0][] : memref<1024xi8> to memref<8x4xf32>
  linalg.fill ins(%z : f32) outs(%c : memref<8x4xf32>)
  %a2 = memref.view %arena[%o1][] : memref<1024xi8> to memref<8x16xf32>
  linalg.copy ins(%a : memref<8x16xf32>) outs(%a2 : memref<8x16xf32>)
  linalg.matmul ins(%a2, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  return
}

// Not folded: a view of the accumulator other than a reshape (a subview,
// made after the fill) is written between: the GEMM must add to it.
// CHECK-LABEL: func.func @fill_subview_written_between(
// CHECK: linalg.fill
// CHECK: linalg.copy
// CHECK: call @rankc_rt_gemm({{.*}}, %c6_i32, %c1_i32
func.func @fill_subview_written_between(%a: memref<8x16xf32>, %b: memref<16x4xf32>, %d: memref<2x4xf32>) -> memref<8x4xf32> {
  %z = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x4xf32>
  linalg.fill ins(%z : f32) outs(%c : memref<8x4xf32>)
  %s = memref.subview %c[0, 0] [2, 4] [1, 1] : memref<8x4xf32> to memref<2x4xf32, strided<[4, 1]>>
  linalg.copy ins(%d : memref<2x4xf32>) outs(%s : memref<2x4xf32, strided<[4, 1]>>)
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  return %c : memref<8x4xf32>
}

// Not folded: the accumulator is a function argument (it may alias the
// buffer written between), and a write comes between.
// CHECK-LABEL: func.func @fill_argument_write_between(
// CHECK: linalg.fill
// CHECK: linalg.copy
// CHECK: call @rankc_rt_gemm({{.*}}, %c6_i32, %c1_i32
func.func @fill_argument_write_between(%a: memref<8x16xf32>, %b: memref<16x4xf32>, %c: memref<8x4xf32>, %d: memref<8x4xf32>, %e: memref<8x4xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%c : memref<8x4xf32>)
  linalg.copy ins(%d : memref<8x4xf32>) outs(%e : memref<8x4xf32>)
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  return
}

// A contraction of bf16 A and B widened in its body into an f32 C (what
// rankc-gpu-narrow-contractions leaves): the GEMM reads them as bf16
// (dtype 5, RANKC_BF16; C f32, accumulated in f32).
// CHECK-LABEL: func.func @bf16_inputs(
// CHECK-NOT: linalg.fill
// CHECK: call @rankc_rt_gemm({{.*}}, %c1_i64, %c8_i64, %c4_i64, %c16_i64, %c5_i32, %c0_i32
// CHECK-NOT: linalg.generic
func.func @bf16_inputs(%a: memref<8x16xbf16>, %b: memref<16x4xbf16>, %c: memref<8x4xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%c : memref<8x4xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xbf16>, memref<16x4xbf16>) outs(%c : memref<8x4xf32>) attrs = {rankc.narrow_operands = bf16} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// The rounding of its result to bf16 right after it (the generic marked
// by rankc-gpu-round-gemm-results; the view of its buffer between them
// moves before the call): the call writes the bf16 buffer itself, dtype
// 5 | RANKC_GEMM_NARROW_C = 261, and the rounding kernel goes, and so does
// the fill that started that buffer before the GEMM.
// CHECK-LABEL: func.func @bf16_result(
// CHECK-NOT: linalg.fill
// CHECK: %[[D:.*]] = memref.view %arg3
// CHECK: %[[PD:.*]] = memref.extract_aligned_pointer_as_index %[[D]]
// CHECK: call @rankc_rt_gemm(%{{.*}}, %{{.*}}, %[[PD]], %c1_i64, %c8_i64, %c4_i64, %c16_i64, %c261_i32, %c0_i32
// CHECK-NOT: linalg.generic
// CHECK: return %[[D]]
#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @bf16_result(%a: memref<8x16xbf16>, %b: memref<16x4xbf16>, %c: memref<8x4xf32>, %arena: memref<64xi8>) -> memref<8x4xbf16> {
  %z = arith.constant 0.0 : f32
  %z16 = arith.constant 0.0 : bf16
  %off = arith.constant 0 : index
  %d = memref.view %arena[%off][] : memref<64xi8> to memref<8x4xbf16>
  linalg.fill ins(%z16 : bf16) outs(%d : memref<8x4xbf16>)
  linalg.fill ins(%z : f32) outs(%c : memref<8x4xf32>)
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xbf16>, memref<16x4xbf16>) outs(%c : memref<8x4xf32>) attrs = {rankc.narrow_operands = bf16} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<8x4xf32>) outs(%d : memref<8x4xbf16>) attrs = {rankc.gemm_result} {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  }
  return %d : memref<8x4xbf16>
}

// Kept as a kernel: a rounded buffer that shares bytes with A (views of
// one arena at overlapping offsets): the GEMM would write it while it
// reads A.
// CHECK-LABEL: func.func @bf16_result_over_a(
// CHECK: call @rankc_rt_gemm({{.*}}, %c5_i32, %c0_i32
// CHECK: linalg.generic {{.*}}rankc.gemm_result
func.func @bf16_result_over_a(%b: memref<16x4xbf16>, %c: memref<8x4xf32>, %arena: memref<512xi8>) {
  %z = arith.constant 0.0 : f32
  %off0 = arith.constant 0 : index
  %off64 = arith.constant 64 : index
  %a = memref.view %arena[%off0][] : memref<512xi8> to memref<8x16xbf16>
  linalg.fill ins(%z : f32) outs(%c : memref<8x4xf32>)
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xbf16>, memref<16x4xbf16>) outs(%c : memref<8x4xf32>) attrs = {rankc.narrow_operands = bf16} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  %d = memref.view %arena[%off64][] : memref<512xi8> to memref<8x4xbf16>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<8x4xf32>) outs(%d : memref<8x4xbf16>) attrs = {rankc.gemm_result} {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}

// Copies the buffer placement put between the GEMM and its rounding (a
// parameter copied out, a strided operand staged) that touch neither the
// rounding's input nor its output move after it: the rounding is still
// the call's (from zeros: the fill of C stays right before the GEMM).
// CHECK-LABEL: func.func @bf16_result_copies_between(
// CHECK: call @rankc_rt_gemm({{.*}}, %c261_i32, %c0_i32
// CHECK-NEXT: gpu.memcpy %arg4, %arg5
// CHECK-NEXT: linalg.copy ins(%arg6 : memref<8xf32>) outs(%arg7 : memref<8xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @bf16_result_copies_between(%a: memref<8x16xbf16>, %b: memref<16x4xbf16>, %c: memref<8x4xf32>, %arena: memref<64xi8>,
                                      %p: memref<4xf32>, %q: memref<4xf32>, %r: memref<8xf32>, %t: memref<8xf32>) {
  %z = arith.constant 0.0 : f32
  %z16 = arith.constant 0.0 : bf16
  %off = arith.constant 0 : index
  %d = memref.view %arena[%off][] : memref<64xi8> to memref<8x4xbf16>
  linalg.fill ins(%z16 : bf16) outs(%d : memref<8x4xbf16>)
  linalg.fill ins(%z : f32) outs(%c : memref<8x4xf32>)
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xbf16>, memref<16x4xbf16>) outs(%c : memref<8x4xf32>) attrs = {rankc.narrow_operands = bf16} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  gpu.memcpy %p, %q : memref<4xf32>, memref<4xf32>
  linalg.copy ins(%r : memref<8xf32>) outs(%t : memref<8xf32>)
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<8x4xf32>) outs(%d : memref<8x4xbf16>) attrs = {rankc.gemm_result} {
  ^bb0(%v: f32, %o: bf16):
    %tr = arith.truncf %v : f32 to bf16
    linalg.yield %tr : bf16
  }
  return
}

// Kept as a kernel: a copy between them that reads the GEMM's f32 result
// (folded, the rounding would leave it unwritten).
// CHECK-LABEL: func.func @bf16_result_copy_reads_c(
// CHECK: call @rankc_rt_gemm({{.*}}, %c5_i32, %c0_i32
// CHECK: gpu.memcpy %arg4, %arg2
// CHECK: linalg.generic {{.*}}rankc.gemm_result
func.func @bf16_result_copy_reads_c(%a: memref<8x16xbf16>, %b: memref<16x4xbf16>, %c: memref<8x4xf32>, %arena: memref<64xi8>,
                                    %keep: memref<8x4xf32>) {
  %z = arith.constant 0.0 : f32
  %z16 = arith.constant 0.0 : bf16
  %off = arith.constant 0 : index
  %d = memref.view %arena[%off][] : memref<64xi8> to memref<8x4xbf16>
  linalg.fill ins(%z16 : bf16) outs(%d : memref<8x4xbf16>)
  linalg.fill ins(%z : f32) outs(%c : memref<8x4xf32>)
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xbf16>, memref<16x4xbf16>) outs(%c : memref<8x4xf32>) attrs = {rankc.narrow_operands = bf16} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  gpu.memcpy %keep, %c : memref<8x4xf32>, memref<8x4xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<8x4xf32>) outs(%d : memref<8x4xbf16>) attrs = {rankc.gemm_result} {
  ^bb0(%v: f32, %o: bf16):
    %tr = arith.truncf %v : f32 to bf16
    linalg.yield %tr : bf16
  }
  return
}

// Kept as a kernel: a rounding after a GEMM that adds to C (no zero fill:
// a narrow C cannot accumulate).
// CHECK-LABEL: func.func @bf16_result_accumulating(
// CHECK: call @rankc_rt_gemm({{.*}}, %c5_i32, %c1_i32
// CHECK: linalg.generic {{.*}}rankc.gemm_result
func.func @bf16_result_accumulating(%a: memref<8x16xbf16>, %b: memref<16x4xbf16>, %c: memref<8x4xf32>, %d: memref<8x4xbf16>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xbf16>, memref<16x4xbf16>) outs(%c : memref<8x4xf32>) attrs = {rankc.narrow_operands = bf16} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<8x4xf32>) outs(%d : memref<8x4xbf16>) attrs = {rankc.gemm_result} {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}

// A rounding that adds a bf16 bias per column (an autocast linear layer):
// cuBLASLt's bias epilogue, rankc_rt_gemm_bias with the bias's address
// last. The bias is read as n = 4 values of the result's last dimension.
// CHECK-LABEL: func.func @bf16_result_bias(
// CHECK-NOT: linalg.fill
// CHECK: %[[D:.*]] = memref.view %arg4
// CHECK: %[[PD:.*]] = memref.extract_aligned_pointer_as_index %[[D]]
// CHECK: %[[PB:.*]] = memref.extract_aligned_pointer_as_index %arg3
// CHECK: call @rankc_rt_gemm_bias(%{{.*}}, %{{.*}}, %[[PD]], %c1_i64, %c8_i64, %c4_i64, %c16_i64, %c261_i32, %c0_i32, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[PB]])
// CHECK-NOT: linalg.generic
// CHECK: return %[[D]]
#col2 = affine_map<(d0, d1) -> (d1)>
#row2 = affine_map<(d0, d1) -> (d0)>
func.func @bf16_result_bias(%a: memref<8x16xbf16>, %b: memref<16x4xbf16>, %c: memref<8x4xf32>, %bias: memref<4xbf16>, %arena: memref<64xi8>) -> memref<8x4xbf16> {
  %z = arith.constant 0.0 : f32
  %z16 = arith.constant 0.0 : bf16
  %off = arith.constant 0 : index
  %d = memref.view %arena[%off][] : memref<64xi8> to memref<8x4xbf16>
  linalg.fill ins(%z16 : bf16) outs(%d : memref<8x4xbf16>)
  linalg.fill ins(%z : f32) outs(%c : memref<8x4xf32>)
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xbf16>, memref<16x4xbf16>) outs(%c : memref<8x4xf32>) attrs = {rankc.narrow_operands = bf16} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id2, #col2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<8x4xf32>, memref<4xbf16>) outs(%d : memref<8x4xbf16>) attrs = {rankc.gemm_result} {
  ^bb0(%v: f32, %w: bf16, %o: bf16):
    %ww = arith.extf %w : bf16 to f32
    %s = arith.addf %ww, %v : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  }
  return %d : memref<8x4xbf16>
}

// Kept as a kernel: a bias per row (cuBLASLt's epilogue adds one per
// column of the row-major result), and a rounded buffer that shares bytes
// with the bias, which the call reads while it writes.
// CHECK-LABEL: func.func @bf16_result_bias_kept(
// CHECK: call @rankc_rt_gemm({{.*}}, %c5_i32, %c0_i32
// CHECK: linalg.generic {{.*}}rankc.gemm_result
// CHECK: call @rankc_rt_gemm({{.*}}, %c5_i32_{{[0-9]+}}, %c0_i32
// CHECK: linalg.generic {{.*}}rankc.gemm_result
func.func @bf16_result_bias_kept(%a: memref<8x16xbf16>, %b: memref<16x4xbf16>, %c: memref<8x4xf32>, %rows: memref<8xbf16>, %d: memref<8x4xbf16>, %arena: memref<512xi8>) {
  %z = arith.constant 0.0 : f32
  %off0 = arith.constant 0 : index
  %off4 = arith.constant 4 : index
  linalg.fill ins(%z : f32) outs(%c : memref<8x4xf32>)
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xbf16>, memref<16x4xbf16>) outs(%c : memref<8x4xf32>) attrs = {rankc.narrow_operands = bf16} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id2, #row2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c, %rows : memref<8x4xf32>, memref<8xbf16>) outs(%d : memref<8x4xbf16>) attrs = {rankc.gemm_result} {
  ^bb0(%v: f32, %w: bf16, %o: bf16):
    %ww = arith.extf %w : bf16 to f32
    %s = arith.addf %ww, %v : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  }
  %bias = memref.view %arena[%off0][] : memref<512xi8> to memref<4xbf16>
  %d2 = memref.view %arena[%off4][] : memref<512xi8> to memref<8x4xbf16>
  linalg.fill ins(%z : f32) outs(%c : memref<8x4xf32>)
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xbf16>, memref<16x4xbf16>) outs(%c : memref<8x4xf32>) attrs = {rankc.narrow_operands = bf16} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id2, #col2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<8x4xf32>, memref<4xbf16>) outs(%d2 : memref<8x4xbf16>) attrs = {rankc.gemm_result} {
  ^bb0(%v: f32, %w: bf16, %o: bf16):
    %ww = arith.extf %w : bf16 to f32
    %s = arith.addf %ww, %v : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}

// The runtime's GEMM is queued on the kernels' stream: no host wait before
// it (rankc-gpu-stream-ordered-calls).
// CHECK: func.func private @rankc_rt_gemm(index, index, index, i64, i64, i64, i64, i32, i32, i32, i32, i32, i32) attributes {rankc.stream_ordered}
// CHECK: func.func private @rankc_rt_gemm_bias(index, index, index, i64, i64, i64, i64, i32, i32, i32, i32, i32, i32, index) attributes {rankc.stream_ordered}
