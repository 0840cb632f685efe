// RUN: rankc-opt %s -canonicalize -cse | FileCheck %s
// Messages are never dropped or merged: a receive whose value is unused must
// still run (its sender would block forever), and two identical sends are two
// messages.

// CHECK-LABEL: func.func @kept
func.func @kept(%x: tensor<4xf32>) {
  // CHECK-NEXT: comm.recv from rank 1 tag 1
  // CHECK-NEXT: comm.send %{{.*}} to rank 1 tag 2
  // CHECK-NEXT: comm.send %{{.*}} to rank 1 tag 2
  // CHECK-NEXT: comm.allreduce sum
  // CHECK-NEXT: comm.recv from rank 1 tag 3
  // CHECK-NEXT: return
  %unused = comm.recv from rank 1 tag 1 : tensor<4xf32>
  comm.send %x to rank 1 tag 2 : tensor<4xf32>
  comm.send %x to rank 1 tag 2 : tensor<4xf32>
  %sum = comm.allreduce sum %x tag 9 : tensor<4xf32>
  %again = comm.recv from rank 1 tag 3 : tensor<4xf32>
  return
}
