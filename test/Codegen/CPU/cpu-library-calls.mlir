// RUN: rankc-opt %s -rankc-cpu-library-calls | FileCheck %s
// Contractions that are one (batched) GEMM become calls of the CPU
// runtime's BLAS entry point: rankc_rt_cpu_gemm(A, B, C, batch, M, N, K,
// dtype, accumulate, transA, transB, precision, broadcastB), the GPU's
// conventions on host buffers.

// A matmul after a fill of zeros: the fill is folded in (accumulate 0).
// CHECK-LABEL: func.func @matmul(
// CHECK-NOT: linalg.fill
// CHECK: %[[A:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: %[[B:.*]] = memref.extract_aligned_pointer_as_index %arg1
// CHECK: %[[C:.*]] = memref.extract_aligned_pointer_as_index %arg2
// CHECK: call @rankc_rt_cpu_gemm(%[[A]], %[[B]], %[[C]], %c1_i64, %c8_i64, %c4_i64, %c16_i64, %c6_i32, %c0_i32, %c0_i32{{.*}}, %c0_i32{{.*}}, %c0_i32{{.*}}, %c0_i32{{.*}})
// CHECK-NOT: linalg.matmul
func.func @matmul(%a: memref<8x16xf32>, %b: memref<16x4xf32>, %c: memref<8x4xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%c : memref<8x4xf32>)
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  return
}

// A batched matmul of f64 that accumulates into C (no fill): accumulate 1.
// CHECK-LABEL: func.func @batch(
// CHECK: call @rankc_rt_cpu_gemm({{.*}}, %c3_i64, %c2_i64, %c5_i64{{.*}}, %c7_i64, %c7_i32, %c1_i32{{.*}})
func.func @batch(%a: memref<3x2x7xf64>, %b: memref<3x7x5xf64>, %c: memref<3x2x5xf64>) {
  linalg.batch_matmul ins(%a, %b : memref<3x2x7xf64>, memref<3x7x5xf64>) outs(%c : memref<3x2x5xf64>)
  return
}

#ki = affine_map<(i, j, k) -> (k, i)>
#kj = affine_map<(i, j, k) -> (k, j)>
#ij = affine_map<(i, j, k) -> (i, j)>
// A weight gradient ki,kj->ij: A stored transposed (transA 1).
// CHECK-LABEL: func.func @transposed(
// CHECK: call @rankc_rt_cpu_gemm({{.*}}, %c1_i64, %c2_i64, %c3_i64, %c4_i64, %c6_i32, %c1_i32, %c1_i32{{.*}}, %c0_i32{{.*}}, %c0_i32{{.*}}, %c0_i32{{.*}})
// CHECK-NOT: linalg.generic
func.func @transposed(%a: memref<4x2xf32>, %b: memref<4x3xf32>, %c: memref<2x3xf32>) {
  linalg.generic {indexing_maps = [#ki, #kj, #ij], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x2xf32>, memref<4x3xf32>) outs(%c : memref<2x3xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// A strided view of a fused projection (q of qkv): copied to a buffer of
// its own before the call.
// CHECK-LABEL: func.func @strided(
// CHECK: %[[Q:.*]] = memref.subview %arg0
// CHECK: %[[S:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK: linalg.copy ins(%[[Q]] : {{.*}}) outs(%[[S]] : memref<4x8xf32>)
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[S]]
// CHECK: call @rankc_rt_cpu_gemm(%[[P]],
func.func @strided(%qkv: memref<4x24xf32>, %w: memref<8x2xf32>, %c: memref<4x2xf32>) {
  %q = memref.subview %qkv[0, 0] [4, 8] [1, 1] : memref<4x24xf32> to memref<4x8xf32, strided<[24, 1]>>
  linalg.matmul ins(%q, %w : memref<4x8xf32, strided<[24, 1]>>, memref<8x2xf32>) outs(%c : memref<4x2xf32>)
  return
}

// Integers stay for linalg-to-loops (no integer GEMM in BLAS).
// CHECK-LABEL: func.func @integers(
// CHECK: linalg.matmul
// CHECK-NOT: call @rankc_rt_cpu_gemm
func.func @integers(%a: memref<2x3xi32>, %b: memref<3x4xi32>, %c: memref<2x4xi32>) {
  linalg.matmul ins(%a, %b : memref<2x3xi32>, memref<3x4xi32>) outs(%c : memref<2x4xi32>)
  return
}

// CHECK: func.func private @rankc_rt_cpu_gemm(index, index, index, i64, i64, i64, i64, i32, i32, i32, i32, i32, i32)
