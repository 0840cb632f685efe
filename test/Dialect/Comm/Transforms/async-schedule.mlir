// RUN: rankc-opt %s -comm-async-schedule | FileCheck %s
// RUN: rankc-opt %s -comm-async-schedule=blocking-sends | FileCheck %s --check-prefix=BLOCKING

// Receives are posted first thing (the later one before the earlier, as
// the runtime has always posted them) and waited for where their value is
// needed; the send starts where it was and completes before the return;
// the allreduce starts right after the part that makes its input, but
// after the previous collective, and is waited for where it was, keeping
// the DDP bucket it reduces (for the manifest). Events number the messages
// in program order.
// CHECK-LABEL: func.func @rank0(
// CHECK-NEXT: %[[R2:.*]] = comm.irecv from rank 0 tag 10 event 3 {mpi_tag = 6 : i32} : !comm.request<tensor<4xf32>>
// CHECK-NEXT: %[[R1:.*]] = comm.irecv from rank 0 tag 9 event 1 {mpi_tag = 5 : i32} : !comm.request<tensor<4xf32>>
// CHECK-NEXT: %[[P:.*]] = call @rank0_part0(%arg0)
// CHECK-NEXT: %[[A1:.*]] = comm.iallreduce sum %[[P]] tag "g" event 2 {comm.bucket = #comm.bucket<index = 0, params = ["w"], bytes = 16, dtype = "f32", ready_seconds = 1.000000e-03 : f64, start_seconds = 2.000000e-03 : f64, reduce_seconds = 3.000000e-03 : f64, exposed_seconds = 4.000000e-03 : f64>} : tensor<4xf32>
// CHECK-NEXT: %[[A2:.*]] = comm.iallreduce max %[[P]] tag "h" event 4 : tensor<4xf32>
// CHECK-NEXT: %[[S:.*]] = comm.isend %[[P]] to rank 0 tag 3 event 0 {mpi_tag = 2 : i32} : tensor<4xf32>
// CHECK-NEXT: %[[V1:.*]] = comm.wait %[[R1]] : tensor<4xf32>
// CHECK-NEXT: %[[G:.*]] = comm.wait %[[A1]] : tensor<4xf32>
// CHECK-NEXT: %[[V2:.*]] = comm.wait %[[R2]] : tensor<4xf32>
// CHECK-NEXT: %[[H:.*]] = comm.wait %[[A2]] : tensor<4xf32>
// CHECK-NEXT: comm.wait %[[S]]{{$}}
// CHECK-NEXT: return %[[V1]], %[[G]], %[[V2]], %[[H]]
// BLOCKING: %[[S:.*]] = comm.isend
// BLOCKING-NEXT: comm.wait %[[S]]{{$}}
// BLOCKING-NOT: comm.wait %[[S]]
module attributes {comm.world_size = 1 : i64, comm.partitioned} {
  func.func @rank0(%x: tensor<4xf32> {comm.input = "x"})
      -> (tensor<4xf32> {comm.outputs = ["a"]}, tensor<4xf32> {comm.outputs = ["b"]},
          tensor<4xf32> {comm.outputs = ["c"]}, tensor<4xf32> {comm.outputs = ["d"]})
      attributes {comm.ranks = array<i64: 0>} {
    %p = call @rank0_part0(%x) : (tensor<4xf32>) -> tensor<4xf32>
    comm.send %p to rank 0 tag 3 {mpi_tag = 2 : i32} : tensor<4xf32>
    %r = comm.recv from rank 0 tag 9 {mpi_tag = 5 : i32} : tensor<4xf32>
    %a = comm.allreduce sum %p tag "g" {comm.bucket = #comm.bucket<index = 0, params = ["w"], bytes = 16, dtype = "f32", ready_seconds = 1.0e-3 : f64, start_seconds = 2.0e-3 : f64, reduce_seconds = 3.0e-3 : f64, exposed_seconds = 4.0e-3 : f64>} : tensor<4xf32>
    %r2 = comm.recv from rank 0 tag 10 {mpi_tag = 6 : i32} : tensor<4xf32>
    %b = comm.allreduce max %p tag "h" : tensor<4xf32>
    return %r, %a, %r2, %b : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
  func.func private @rank0_part0(%x: tensor<4xf32>) -> tensor<4xf32> attributes {comm.part_of = "rank0"} {
    return %x : tensor<4xf32>
  }
}
