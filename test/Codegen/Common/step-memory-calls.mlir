// RUN: rankc-opt %s -rankc-step-memory | FileCheck %s
// A function's allocations count once per run of it: a part that equal
// parts were folded into (rankc-fold-equal-functions) is called once per
// part, and a part called from a part called twice runs twice as often.
// @step: 256; @part: 1024 x (2 calls from @step + 2 runs of @pair) = 4096;
// @pair (called twice): 512 x 2 = 1024; @unused (no caller): 256.
// CHECK: module attributes
// CHECK-SAME: rankc.step_host_bytes = 5632 : i64
module {
  func.func @step() {
    %a = memref.alloc() : memref<64xf32>
    call @part() : () -> ()
    call @part() : () -> ()
    call @pair() : () -> ()
    call @pair() : () -> ()
    return
  }
  func.func private @part() {
    %a = memref.alloc() : memref<256xf32>
    return
  }
  func.func private @pair() {
    %a = memref.alloc() : memref<128xf32>
    call @part() : () -> ()
    return
  }
  func.func private @unused() {
    %a = memref.alloc() : memref<1xf32>
    return
  }
}
