// RUN: rankc-opt %s -rankc-plan-buffers -split-input-file | FileCheck %s
// RUN: rankc-opt %s -rankc-plan-buffers=device=true -split-input-file | FileCheck %s --check-prefix=DEVICE
// rankc-plan-buffers places a function's buffers in one block: a buffer
// lives from the first to the last operation that uses it (or its address,
// or the request of a message it is in, until that request's wait), and a
// dead buffer's bytes are reused.

// The step function's block comes from the runtime. %a dies at the copy
// into %b, so %c takes its bytes (offset 0); %m then takes %b's. %m is in a
// message until its wait: %t, born meanwhile while %c is alive too, must
// not share its bytes (it would, at 4096, if the send's start ended %m's
// life); %u, born after the wait, takes them. A result of the step that is
// not carried into the next step (%r) is in the block too, alive to the end
// (the runtime copies it out before the next step); a carried one (%k,
// rankc.carried_from) stays an allocation of the step arena. An unused
// buffer is erased.
// CHECK-LABEL: func.func private @step
// CHECK: %[[S:.*]] = call @rankc_rt_scratch(%{{.*}}) {rankc.scratch_bytes = 12288 : i64} : (i64) -> memref<?xi8>
// CHECK: %[[K:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.view %[[S]][%c0{{(_[0-9]+)?}}][] : memref<?xi8> to memref<1000xf32>
// CHECK: memref.view %[[S]][%c4096{{(_[0-9]+)?}}][] : memref<?xi8> to memref<1000xf32>
// CHECK: memref.view %[[S]][%c0{{(_[0-9]+)?}}][] : memref<?xi8> to memref<1000xf32>
// CHECK: memref.view %[[S]][%c4096{{(_[0-9]+)?}}][] : memref<?xi8> to memref<1000xf32>
// CHECK: memref.view %[[S]][%c8192{{(_[0-9]+)?}}][] : memref<?xi8> to memref<1000xf32>
// CHECK: memref.view %[[S]][%c4096{{(_[0-9]+)?}}][] : memref<?xi8> to memref<1000xf32>
// CHECK: memref.view %[[S]][%c0{{(_[0-9]+)?}}][] : memref<?xi8> to memref<4xf32>
// CHECK-NOT: memref.alloc
// Each view is made right before its first use, and a result's again
// right before the return (no descriptor alive across the function).
// CHECK: %[[R:.*]] = memref.view %[[S]][%c0{{(_[0-9]+)?}}][] : memref<?xi8> to memref<4xf32>
// CHECK-NEXT: return %[[R]], %[[K]]
// CHECK: func.func private @rankc_rt_scratch(i64) -> memref<?xi8> attributes {llvm.emit_c_interface}
// With `device`, host allocations are not the plan's.
// DEVICE-LABEL: func.func private @step
// DEVICE-NOT: rankc_rt_scratch
// DEVICE: return
func.func private @rankc_rt_isend(index, i64, i64, i32, i32, i32) -> i64
func.func private @rankc_rt_wait(i64)
func.func private @step(%x: f32) -> (memref<4xf32>, memref<4xf32> {rankc.carried_from = 0 : i64}) {
  %a = memref.alloc() : memref<1000xf32>
  %b = memref.alloc() : memref<1000xf32>
  %c = memref.alloc() : memref<1000xf32>
  %m = memref.alloc() : memref<1000xf32>
  %t = memref.alloc() : memref<1000xf32>
  %u = memref.alloc() : memref<1000xf32>
  %r = memref.alloc() : memref<4xf32>
  %k = memref.alloc() : memref<4xf32>
  %unused = memref.alloc() : memref<8xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<1000xf32>)
  memref.copy %a, %b : memref<1000xf32> to memref<1000xf32>
  memref.copy %b, %c : memref<1000xf32> to memref<1000xf32>
  memref.copy %c, %m : memref<1000xf32> to memref<1000xf32>
  %p = memref.extract_aligned_pointer_as_index %m : memref<1000xf32> -> index
  %n = arith.constant 4000 : i64
  %z = arith.constant 0 : i32
  %req = call @rankc_rt_isend(%p, %n, %n, %z, %z, %z) : (index, i64, i64, i32, i32, i32) -> i64
  linalg.fill ins(%x : f32) outs(%t : memref<1000xf32>)
  call @rankc_rt_wait(%req) : (i64) -> ()
  memref.copy %c, %u : memref<1000xf32> to memref<1000xf32>
  linalg.fill ins(%x : f32) outs(%r : memref<4xf32>)
  linalg.fill ins(%x : f32) outs(%k : memref<4xf32>)
  return %r, %k : memref<4xf32>, memref<4xf32>
}

// -----

// A part's block is a new last argument; its callers allocate it (and
// their own plans place it, alive for the call).
// CHECK-LABEL: func.func private @step
// CHECK: %[[S:.*]] = call @rankc_rt_scratch(%{{.*}}) {rankc.scratch_bytes = 512 : i64}
// CHECK: %[[B:.*]] = memref.view %[[S]][%c0{{.*}}][] : memref<?xi8> to memref<512xi8>
// CHECK: call @part(%arg0, %[[B]]) : (memref<4xf32>, memref<512xi8>) -> ()
// CHECK-LABEL: func.func private @part
// CHECK-SAME: %arg1: memref<512xi8> {rankc.scratch_bytes = 512 : i64}
// CHECK: memref.view %arg1[%c0{{.*}}][] : memref<512xi8> to memref<4xf32>
// CHECK: memref.view %arg1[%c256{{.*}}][] : memref<512xi8> to memref<4xf32>
// DEVICE-LABEL: func.func private @step
// DEVICE: %[[S:.*]] = call @rankc_rt_scratch(%{{.*}}) {rankc.scratch_bytes = 512 : i64, rankc.scratch_on_device}
// DEVICE: %[[B:.*]] = memref.view %[[S]][%c0{{.*}}][] : memref<?xi8> to memref<512xi8>
// DEVICE: call @part(%arg0, %[[B]])
// DEVICE-LABEL: func.func private @part
// DEVICE: memref.view %arg1[%c0{{.*}}][] : memref<512xi8> to memref<4xf32>
func.func private @step(%out: memref<4xf32>) {
  call @part(%out) : (memref<4xf32>) -> ()
  return
}
func.func private @part(%out: memref<4xf32>) attributes {rankc.part} {
  %cst = arith.constant 1.0 : f32
  %a = gpu.alloc () : memref<4xf32>
  %b = gpu.alloc () : memref<4xf32>
  %h = memref.alloc() : memref<4xf32>
  %k = memref.alloc() : memref<4xf32>
  linalg.fill ins(%cst : f32) outs(%h : memref<4xf32>)
  linalg.fill ins(%cst : f32) outs(%a : memref<4xf32>)
  linalg.add ins(%h, %a : memref<4xf32>, memref<4xf32>) outs(%k : memref<4xf32>)
  linalg.add ins(%k, %a : memref<4xf32>, memref<4xf32>) outs(%b : memref<4xf32>)
  memref.copy %b, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// A part that returns a buffer of its own (scatter_add's result, made in
// an scf.execute_region, which part-out-params cannot hand to the caller)
// does not make the caller's buffers passed to it escape: the call's
// result is not one of them. The step's out-buffer %o is still planned
// (a GPT step had none of its buffers planned: 326 -> 169 MB).
// CHECK-LABEL: func.func private @step
// CHECK: call @rankc_rt_scratch
// CHECK-NOT: memref.alloc() : memref<8xf32>
// CHECK: %[[R:.*]] = call @part_own(
// CHECK: return %[[R]], %{{.*}} : memref<8xf32>, memref<8xf32>
func.func private @step() -> (memref<8xf32>, memref<8xf32>) {
  %o = memref.alloc() : memref<8xf32>
  %r = call @part_own(%o) : (memref<8xf32>) -> memref<8xf32>
  return %r, %o : memref<8xf32>, memref<8xf32>
}
func.func private @part_own(%out: memref<8xf32>) -> memref<8xf32> attributes {rankc.part} {
  %cst = arith.constant 2.0 : f32
  linalg.fill ins(%cst : f32) outs(%out : memref<8xf32>)
  %r = scf.execute_region -> memref<8xf32> {
    %a = memref.alloc() : memref<8xf32>
    memref.copy %out, %a : memref<8xf32> to memref<8xf32>
    scf.yield %a : memref<8xf32>
  }
  return %r : memref<8xf32>
}
