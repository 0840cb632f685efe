// RUN: rankc-opt %s | FileCheck %s
// Round trip: what rankc-opt prints, it parses back to the same text.
// RUN: rankc-opt %s | rankc-opt | FileCheck %s

// CHECK-LABEL: func.func @messages
func.func @messages(%x: tensor<4xf32>, %b: tensor<2x3xi1>) -> tensor<4xf32> {
  // CHECK: comm.send %{{.*}} to rank 1 tag 7 : tensor<4xf32>
  comm.send %x to rank 1 tag 7 : tensor<4xf32>
  // CHECK: comm.send %{{.*}} to offset -1 tag "west" : tensor<2x3xi1>
  comm.send %b to offset -1 tag "west" : tensor<2x3xi1>
  // CHECK: comm.send %{{.*}} to grid <shape = [2, 3], shift = [0, 1], periodic = [false, true]> tag "g" : tensor<4xf32>
  comm.send %x to grid <shape = [2, 3], shift = [0, 1], periodic = [false, true]> tag "g" : tensor<4xf32>
  // CHECK: comm.recv from grid <shape = [2, 3], shift = [-1, 0], periodic = [false, false]> tag "g" {fill = 2.500000e-01 : f32} : tensor<4xf32>
  %g = comm.recv from grid <shape = [2, 3], shift = [-1, 0], periodic = [false, false]> tag "g" {fill = 0.25 : f32} : tensor<4xf32>
  // CHECK: comm.recv from offset 1 tag "east" : tensor<4xf32>
  %r = comm.recv from offset 1 tag "east" : tensor<4xf32>
  // CHECK: comm.recv from rank 0 tag 2147483647 : tensor<f64>
  %s = comm.recv from rank 0 tag 2147483647 : tensor<f64>
  // CHECK: comm.allreduce mean %{{.*}} tag "grads" : tensor<4xf32>
  %m = comm.allreduce mean %r tag "grads" : tensor<4xf32>
  // CHECK: comm.allreduce max %{{.*}} tag 3 : tensor<2x3xi1>
  %o = comm.allreduce max %b tag 3 : tensor<2x3xi1>
  return %m : tensor<4xf32>
}

// Tags with characters that need escaping survive printing.
// CHECK-LABEL: func.func @escaped
func.func @escaped(%x: tensor<bf16>) {
  // CHECK: comm.send %{{.*}} to rank 0 tag "a\22b" : tensor<bf16>
  comm.send %x to rank 0 tag "a\"b" : tensor<bf16>
  return
}

// The asynchronous schedule: starts return requests, waits complete them
// (and deliver a receive's or a reduction's value).
// CHECK-LABEL: func.func @async
func.func @async(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[R:.*]] = comm.irecv from offset 1 tag "east" event 1 {mpi_tag = 3 : i32} : !comm.request<tensor<4xf32>>
  %r = comm.irecv from offset 1 tag "east" event 1 {mpi_tag = 3 : i32} : !comm.request<tensor<4xf32>>
  // CHECK: %[[S:.*]] = comm.isend %{{.*}} to rank 0 tag 7 event 0 : tensor<4xf32>
  %s = comm.isend %x to rank 0 tag 7 event 0 : tensor<4xf32>
  // CHECK: %[[A:.*]] = comm.iallreduce sum %{{.*}} tag "g" event 2 : tensor<4xf32>
  %a = comm.iallreduce sum %x tag "g" event 2 : tensor<4xf32>
  // CHECK: comm.wait %[[R]] : tensor<4xf32>
  %v = comm.wait %r : tensor<4xf32>
  // CHECK: comm.wait %[[A]] : tensor<4xf32>
  %w = comm.wait %a : tensor<4xf32>
  // CHECK: comm.wait %[[S]]{{$}}
  comm.wait %s
  return %v : tensor<4xf32>
}
