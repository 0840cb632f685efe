// RUN: rankc-opt %s -rankc-gpu-stream-ordered-calls | FileCheck %s

// The host wait before a stream-ordered call (the runtime's GEMM, queued on
// the kernels' stream) goes; the one before any other call stays, and so
// do waits that are not right before the call or that return a token.

func.func private @rankc_rt_gemm(index) attributes {rankc.stream_ordered}
func.func private @rankc_rt_isend(index)

// CHECK-LABEL: func.func @waits(
// CHECK: %[[T:.*]] = gpu.wait async
// CHECK-NOT: gpu.wait [%[[T]]]
// CHECK: call @rankc_rt_gemm
// CHECK: %[[U:.*]] = gpu.wait async
// CHECK-NEXT: gpu.wait [%[[U]]]
// CHECK-NEXT: call @rankc_rt_isend
// CHECK: %[[V:.*]] = gpu.wait async
// CHECK-NEXT: gpu.wait [%[[V]]]
// CHECK-NEXT: arith.constant
// CHECK-NEXT: call @rankc_rt_gemm
// CHECK: %[[W:.*]] = gpu.wait async
// CHECK-NEXT: %{{.*}} = gpu.wait async [%[[W]]]
// CHECK-NEXT: call @rankc_rt_gemm
func.func @waits(%p: index) {
  %t = gpu.wait async
  gpu.wait [%t]
  call @rankc_rt_gemm(%p) : (index) -> ()
  %u = gpu.wait async
  gpu.wait [%u]
  call @rankc_rt_isend(%p) : (index) -> ()
  %v = gpu.wait async
  gpu.wait [%v]
  %c = arith.constant 0 : index
  call @rankc_rt_gemm(%c) : (index) -> ()
  %w = gpu.wait async
  %x = gpu.wait async [%w]
  call @rankc_rt_gemm(%p) : (index) -> ()
  return
}

// A part's return needs no wait (its results reach the runtime or other
// parts, all on the one stream); a function that is no part keeps it.
// CHECK-LABEL: func.func @part(
// CHECK: gpu.wait async
// CHECK-NEXT: return
func.func @part() attributes {rankc.part} {
  %t = gpu.wait async
  gpu.wait [%t]
  return
}
// CHECK-LABEL: func.func @not_a_part(
// CHECK: %[[T:.*]] = gpu.wait async
// CHECK-NEXT: gpu.wait [%[[T]]]
// CHECK-NEXT: return
func.func @not_a_part() {
  %t = gpu.wait async
  gpu.wait [%t]
  return
}

// Nor does a call of a part (its kernels go on the same stream): the
// allocation of a buffer it writes for the caller makes no host wait.
// CHECK-LABEL: func.func @calls_a_part(
// CHECK: %[[T:.*]] = gpu.wait async
// CHECK-NOT: gpu.wait [%[[T]]]
// CHECK: call @part()
func.func @calls_a_part() {
  %t = gpu.wait async
  gpu.wait [%t]
  call @part() : () -> ()
  return
}
