// RUN: rankc-opt %s -comm-assign-mpi-tags | FileCheck %s
// Integer tags first (ascending), then strings (byte order), numbered
// densely: both ends of each message get the same number.

// CHECK-LABEL: func.func @rank0
// CHECK: comm.send %{{.*}} to rank 1 tag "b" {mpi_tag = 3 : i32}
// CHECK: comm.send %{{.*}} to rank 1 tag 40 {mpi_tag = 1 : i32}
// CHECK: comm.recv from rank 1 tag 7 {mpi_tag = 0 : i32}
// CHECK-LABEL: func.func @rank1
// CHECK: comm.recv from offset -1 tag "b" {mpi_tag = 3 : i32}
// CHECK: comm.recv from rank 0 tag 40 {mpi_tag = 1 : i32}
// CHECK: comm.send %{{.*}} to rank 0 tag 7 {mpi_tag = 0 : i32}
// CHECK: comm.allreduce sum %{{.*}} tag "a" : tensor<2xf32>
module attributes {comm.world_size = 2 : i64} {
  func.func @rank0(%x: tensor<2xf32> {comm.input = "x"}) attributes {comm.ranks = array<i64: 0>} {
    comm.send %x to rank 1 tag "b" : tensor<2xf32>
    comm.send %x to rank 1 tag 40 : tensor<2xf32>
    %r = comm.recv from rank 1 tag 7 : tensor<2xf32>
    %a = comm.allreduce sum %r tag "a" : tensor<2xf32>
    return
  }
  func.func @rank1() attributes {comm.ranks = array<i64: 1>} {
    %b = comm.recv from offset -1 tag "b" : tensor<2xf32>
    %f = comm.recv from rank 0 tag 40 : tensor<2xf32>
    comm.send %b to rank 0 tag 7 : tensor<2xf32>
    %a = comm.allreduce sum %f tag "a" : tensor<2xf32>
    return
  }
}
