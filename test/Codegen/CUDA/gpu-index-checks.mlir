// RUN: rankc-opt %s -rankc-gpu-index-checks | FileCheck %s

// A check inside what becomes a kernel claims the runtime's index record
// instead of calling the host: word 0 from 0 to check + 1 (an atomic
// compare-and-swap), then the winner stores the index and the bound. The
// record is asked for once, at the start of the function; functions without
// checks are left alone, and the host function's declaration goes.

// CHECK-LABEL: func.func @scatter(
// CHECK-SAME: %[[IDX:.*]]: memref<3xi64>, %[[BUF:.*]]: memref<5xf32>
// CHECK-NEXT: %[[RAW:.*]] = call @rankc_rt_index_record() : () -> memref<?xi8>
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[REC:.*]] = memref.view %[[RAW]][%[[C0]]][] : memref<?xi8> to memref<3xi64>
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK: %[[X:.*]] = memref.load %[[IDX]][%[[I]]]
// CHECK: scf.if %[[BAD:.*]] {
// CHECK-NOT: call @rankc_rt_index_error
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: %[[TAG:.*]] = arith.addi %{{.*}}, %{{.*}} : i64
// CHECK: %[[OLD:.*]] = memref.generic_atomic_rmw %[[REC]][%{{.*}}] : memref<3xi64> {
// CHECK-NEXT: ^bb0(%[[CUR:.*]]: i64):
// CHECK-NEXT: %[[FREE:.*]] = arith.cmpi eq, %[[CUR]], %[[ZERO]]
// CHECK-NEXT: %[[NEW:.*]] = arith.select %[[FREE]], %[[TAG]], %[[CUR]]
// CHECK-NEXT: memref.atomic_yield %[[NEW]] : i64
// CHECK: %[[WON:.*]] = arith.cmpi eq, %[[OLD]], %[[ZERO]]
// CHECK: scf.if %[[WON]] {
// CHECK: memref.store %[[X]], %[[REC]][%{{.*}}] : memref<3xi64>
// CHECK: memref.store %c5_i64, %[[REC]][%{{.*}}] : memref<3xi64>
// CHECK: memref.atomic_rmw addf
// CHECK-LABEL: func.func @nothing_checked(
// CHECK-NOT: rankc_rt_index_record
// CHECK: return
// CHECK: func.func private @rankc_rt_index_record() -> memref<?xi8> attributes {llvm.emit_c_interface}
// CHECK-NOT: rankc_rt_index_error
func.func private @rankc_rt_index_error(i32, i64, i64)

func.func @scatter(%idx: memref<3xi64>, %buf: memref<5xf32>, %u: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0 : i64
  %n = arith.constant 5 : i64
  %check = arith.constant 1 : i32
  scf.parallel (%i) = (%c0) to (%c3) step (%c1) {
    %x = memref.load %idx[%i] : memref<3xi64>
    %lo = arith.cmpi slt, %x, %zero : i64
    %hi = arith.cmpi sge, %x, %n : i64
    %bad = arith.ori %lo, %hi : i1
    scf.if %bad {
      func.call @rankc_rt_index_error(%check, %x, %n) : (i32, i64, i64) -> ()
    }
    %safe = arith.select %bad, %zero, %x : i64
    %at = arith.index_cast %safe : i64 to index
    %old = memref.atomic_rmw addf %u, %buf[%at] : (f32, memref<5xf32>) -> f32
    scf.reduce
  }
  return
}

func.func @nothing_checked(%buf: memref<5xf32>) {
  return
}
