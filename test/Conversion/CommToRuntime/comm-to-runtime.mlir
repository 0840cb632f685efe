// The three passes that take a program's messages to the runtime:
// comm-async-schedule (its own test in Dialect/Comm/Transforms), the
// manifest, and the conversion.
// RUN: rankc-opt %s -comm-async-schedule -rankc-runtime-manifest -convert-comm-to-runtime | FileCheck %s
// RUN: rankc-opt %s -comm-async-schedule=blocking-sends -rankc-runtime-manifest -convert-comm-to-runtime | FileCheck %s --check-prefix=BLOCKING
// RUN: rankc-opt %s -comm-async-schedule -rankc-runtime-manifest -convert-comm-to-runtime | FileCheck %s --check-prefix=ORDERED
// Each needs a program whose messages are scheduled, and one program.
// RUN: not rankc-opt %s -rankc-runtime-manifest 2>&1 | FileCheck %s --check-prefix=UNSCHEDULED
// UNSCHEDULED: error: 'comm.send' op is not scheduled: run comm-async-schedule before rankc-runtime-manifest
// RUN: not rankc-opt %s -convert-comm-to-runtime 2>&1 | FileCheck %s --check-prefix=UNCONVERTED
// UNCONVERTED: error: failed to legalize operation 'comm.send'
// RUN: echo 'module {}' | not rankc-opt -convert-comm-to-runtime 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: error: convert-comm-to-runtime needs a module with one program function, found 0
// RUN: echo 'module {}' | not rankc-opt -rankc-runtime-manifest 2>&1 | FileCheck %s --check-prefix=NONE-MANIFEST
// NONE-MANIFEST: error: rankc-runtime-manifest needs a module with one program function, found 0

// The receive is posted first thing, waited for just before its use; the
// send starts where it was and completes before the return; the allreduce
// starts right after its input exists and is waited for where it was.
// CHECK-LABEL: func.func private @rank0(
// CHECK-NEXT: %[[RBUF:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[RPTR:.*]] = memref.extract_aligned_pointer_as_index %[[RBUF]]
// CHECK: %[[RREQ:.*]] = call @rankc_rt_irecv(%[[RPTR]], %c16_i64, %c0_i64, %c0_i32, %c5_i32, %c{{[0-9]+}}_i32)
// CHECK: call @rankc_rt_part_begin
// CHECK: %[[P:.*]] = call @rank0_part0(%arg0)
// CHECK: call @rankc_rt_part_end
// CHECK: %[[COPY:.*]] = bufferization.alloc_tensor() copy(%[[P]])
// CHECK: %[[AIN:.*]] = bufferization.to_buffer %[[COPY]] read_only
// CHECK: call @rankc_rt_iallreduce({{.*}}) : (index, index, i64, i32, i32, i32) -> i64
// CHECK: %[[SBUF:.*]] = bufferization.to_buffer %{{.*}} read_only
// CHECK: %[[SREQ:.*]] = call @rankc_rt_isend({{.*}}) : (index, i64, i64, i32, i32, i32) -> i64
// CHECK: call @rankc_rt_wait(%[[RREQ]])
// CHECK-NEXT: %[[R:.*]] = bufferization.to_tensor %[[RBUF]] restrict writable
// CHECK: call @rankc_rt_wait
// CHECK-NEXT: bufferization.to_tensor {{.*}} restrict writable
// CHECK: call @rankc_rt_wait(%[[SREQ]])
// CHECK-NEXT: return
// The manifest: the ranks that run the program, inputs, outputs with their
// names, events (as text).
// CHECK: memref.global "public" constant @rankc_manifest : memref<134xi8>
// rankc_rt_input returns a memref: called through its C interface.
// CHECK: func.func private @rankc_rt_input(i32) -> memref<?xi8> attributes {llvm.emit_c_interface}
// The entry reads each input where the runtime keeps it (a byte buffer it
// views; read-only, so the program never writes it) and tells the runtime
// where each output is: no copy either way.
// CHECK-LABEL: func.func @rankc_entry()
// CHECK: %[[BYTES:.*]] = call @rankc_rt_input(%c0_i32) : (i32) -> memref<?xi8>
// CHECK-NEXT: %[[VIEW:.*]] = memref.view %[[BYTES]][%{{.*}}][] : memref<?xi8> to memref<4xf32>
// CHECK-NEXT: %[[IN:.*]] = bufferization.to_tensor %[[VIEW]] restrict : memref<4xf32>
// CHECK-NEXT: %[[OUT:.*]] = call @rank0(%[[IN]])
// CHECK-NEXT: %[[OBUF:.*]] = bufferization.to_buffer %[[OUT]] read_only
// CHECK: %[[OPTR:.*]] = memref.extract_aligned_pointer_as_index %[[OBUF]]
// CHECK-NEXT: call @rankc_rt_output(%{{.*}}, %[[OPTR]])
// No comm.* attribute is left.
// CHECK-NOT: comm.
// BLOCKING: %[[SREQ:.*]] = call @rankc_rt_isend(
// BLOCKING-NEXT: call @rankc_rt_wait(%[[SREQ]])
module attributes {comm.world_size = 1 : i64, comm.partitioned} {
  func.func @rank0(%x: tensor<4xf32> {comm.input = "x"}) -> (tensor<4xf32> {comm.outputs = ["y", "z"]})
      attributes {comm.ranks = array<i64: 0>} {
    %p = call @rank0_part0(%x) : (tensor<4xf32>) -> tensor<4xf32>
    comm.send %p to rank 0 tag 3 {mpi_tag = 2 : i32} : tensor<4xf32>
    %r = comm.recv from rank 0 tag 9 {mpi_tag = 5 : i32} : tensor<4xf32>
    %a = comm.allreduce sum %p tag "g" : tensor<4xf32>
    return %r : tensor<4xf32>
  }
  func.func private @rank0_part0(%x: tensor<4xf32>) -> tensor<4xf32> attributes {comm.part_of = "rank0"} {
    return %x : tensor<4xf32>
  }
}
// The message calls order themselves after the GPU's work (the runtime
// waits for the stream before MPI or a staging copy reads a buffer).
// ORDERED-DAG: func.func private @rankc_rt_isend({{.*}}) -> i64 attributes {rankc.stream_ordered}
// ORDERED-DAG: func.func private @rankc_rt_wait(i64) attributes {rankc.stream_ordered}
// ORDERED-DAG: func.func private @rankc_rt_part_begin(i32){{$}}
// A part keeps a mark of what it is (rankc-gpu-stream-ordered-calls).
// ORDERED-DAG: func.func private @rank0_part0({{.*}} attributes {rankc.part}
