// RUN: rankc-opt %s -rankc-cpu-library-calls=threads=4 | FileCheck %s
// Under --threads 4, a GEMM of 2^22 multiply-adds or more is shared among
// the threads by rows of C: an scf.parallel over 4 slices of M, each a
// call of rankc_rt_cpu_gemm_rows(..., m0, m1); a smaller one stays one
// call of rankc_rt_cpu_gemm on one thread.

// 256 x 128 x 128: 2^22 multiply-adds, 64 rows each.
// CHECK-LABEL: func.func @large(
// CHECK-DAG: %[[N:.*]] = arith.constant 4 : index
// CHECK: scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%[[N]])
// CHECK:   %[[T64:.*]] = arith.index_cast %[[T]] : index to i64
// CHECK:   %[[M0:.*]] = arith.muli %[[T64]], %c64_i64
// CHECK:   %[[M1:.*]] = arith.addi %[[M0]], %c64_i64
// CHECK:   func.call @rankc_rt_cpu_gemm_rows({{.*}}, %c1_i64, %c256_i64, %c128_i64, %c128_i64{{.*}}, %[[M0]], %[[M1]])
// CHECK-NOT: call @rankc_rt_cpu_gemm(
func.func @large(%a: memref<256x128xf32>, %b: memref<128x128xf32>, %c: memref<256x128xf32>) {
  linalg.matmul ins(%a, %b : memref<256x128xf32>, memref<128x128xf32>) outs(%c : memref<256x128xf32>)
  return
}

// 6 rows only, of a large GEMM: 3 slices of 2 rows, no empty slice.
// CHECK-LABEL: func.func @few_rows(
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c3)
// CHECK: func.call @rankc_rt_cpu_gemm_rows({{.*}}, %c6_i64, %c1024_i64, %c1024_i64{{.*}},
func.func @few_rows(%a: memref<6x1024xf32>, %b: memref<1024x1024xf32>, %c: memref<6x1024xf32>) {
  linalg.matmul ins(%a, %b : memref<6x1024xf32>, memref<1024x1024xf32>) outs(%c : memref<6x1024xf32>)
  return
}

// 8 x 4 x 16: one thread.
// CHECK-LABEL: func.func @small(
// CHECK-NOT: scf.parallel
// CHECK: call @rankc_rt_cpu_gemm(
func.func @small(%a: memref<8x16xf32>, %b: memref<16x4xf32>, %c: memref<8x4xf32>) {
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  return
}

// CHECK-DAG: func.func private @rankc_rt_cpu_gemm(index, index, index, i64, i64, i64, i64, i32, i32, i32, i32, i32, i32)
// CHECK-DAG: func.func private @rankc_rt_cpu_gemm_rows(index, index, index, i64, i64, i64, i64, i32, i32, i32, i32, i32, i32, i64, i64)
