// RUN: rankc-opt %s -rankc-step-memory | FileCheck %s
// rankc-step-memory adds up a step's allocations as the runtime's step
// arena hands them out (each rounded up to 256 bytes): host memref.alloc,
// device gpu.alloc; one in a loop, or of a dynamic size, makes the sums a
// lower bound.

// 4000 B -> 4096, 4 B -> 256, 1 B -> 256 (host); 8 KiB on the device.
// CHECK: module attributes
// CHECK-SAME: rankc.step_bytes_dynamic
// CHECK-SAME: rankc.step_device_bytes = 8192 : i64
// CHECK-SAME: rankc.step_host_bytes = 4608 : i64
module {
  func.func @step(%n: index) {
    %a = memref.alloc() : memref<1000xf32>
    %b = memref.alloc() : memref<f32>
    %c = memref.alloc() : memref<1xi8>
    %d = gpu.alloc () : memref<2048xf32>
    %e = memref.alloc(%n) : memref<?xf32>
    return
  }
  // Allocations in kernels are the kernels' own: not counted.
  gpu.module @kernels {
    gpu.func @k() kernel {
      %x = memref.alloc() : memref<1000000xf32>
      gpu.return
    }
  }
}
