// RUN: rankc-opt %s -rankc-cpu-library-calls=threads=4 | FileCheck %s
// Under --threads 4, a GEMM of 2^22 multiply-adds or more is shared among
// the threads by slices of C: rows where C has at least as many rows as
// columns, else columns; up to 4 slices, none under 16, each a call of
// rankc_rt_cpu_gemm_block(..., m0, m1, n0, n1). A smaller GEMM stays one
// call of rankc_rt_cpu_gemm on one thread.

// 256 x 128 x 128: 2^22 multiply-adds, 4 slices of 64 rows.
// CHECK-LABEL: func.func @large(
// CHECK-DAG: %[[N:.*]] = arith.constant 4 : index
// CHECK: scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%[[N]])
// CHECK:   %[[T64:.*]] = arith.index_cast %[[T]] : index to i64
// CHECK:   %[[M0:.*]] = arith.muli %[[T64]], %c64_i64
// CHECK:   %[[M1:.*]] = arith.addi %[[M0]], %c64_i64
// CHECK:   func.call @rankc_rt_cpu_gemm_block({{.*}}, %c1_i64, %c256_i64, %c128_i64, %c128_i64{{.*}}, %[[M0]], %[[M1]], %c0_i64{{.*}}, %c128_i64{{.*}})
// CHECK-NOT: call @rankc_rt_cpu_gemm(
func.func @large(%a: memref<256x128xf32>, %b: memref<128x128xf32>, %c: memref<256x128xf32>) {
  linalg.matmul ins(%a, %b : memref<256x128xf32>, memref<128x128xf32>) outs(%c : memref<256x128xf32>)
  return
}

// 64 rows and 1024 columns (a forward GEMM of a batch of 64): 4 slices of
// 256 columns.
// CHECK-LABEL: func.func @wide(
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c4)
// CHECK:   %[[N0:.*]] = arith.muli %{{.*}}, %c256_i64
// CHECK:   %[[N1:.*]] = arith.addi %[[N0]], %c256_i64
// CHECK:   func.call @rankc_rt_cpu_gemm_block({{.*}}, %c64_i64, %c1024_i64, %c512_i64{{.*}}, %c0_i64{{.*}}, %c64_i64{{.*}}, %[[N0]], %[[N1]])
func.func @wide(%a: memref<64x512xf32>, %b: memref<512x1024xf32>, %c: memref<64x1024xf32>) {
  linalg.matmul ins(%a, %b : memref<64x512xf32>, memref<512x1024xf32>) outs(%c : memref<64x1024xf32>)
  return
}

// 40 x 40 with a K of 4096: two slices of 20 rows (none under 16).
// CHECK-LABEL: func.func @narrow(
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c2)
// CHECK: func.call @rankc_rt_cpu_gemm_block({{.*}}, %c40_i64, %c40_i64{{.*}}, %c4096_i64
func.func @narrow(%a: memref<40x4096xf32>, %b: memref<4096x40xf32>, %c: memref<40x40xf32>) {
  linalg.matmul ins(%a, %b : memref<40x4096xf32>, memref<4096x40xf32>) outs(%c : memref<40x40xf32>)
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
// CHECK-DAG: func.func private @rankc_rt_cpu_gemm_block(index, index, index, i64, i64, i64, i64, i32, i32, i32, i32, i32, i32, i64, i64, i64, i64)
