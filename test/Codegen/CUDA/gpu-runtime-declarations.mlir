// RUN: rankc-opt %s -rankc-gpu-runtime-declarations | FileCheck %s --check-prefix=DECL
// RUN: rankc-opt %s -rankc-gpu-runtime-declarations -gpu-to-llvm -rankc-gpu-runtime-declarations=erase-unused | FileCheck %s

// The mgpu* entry points are declared first in the module, where
// gpu-to-llvm's lookups (a scan from the module's first op) find them at
// once; one declared already is kept, not declared twice.
// DECL: module
// DECL-NEXT: llvm.func @mgpuStreamCreate() -> !llvm.ptr
// DECL-NEXT: llvm.func @mgpuStreamDestroy(!llvm.ptr)
// DECL-NEXT: llvm.func @mgpuStreamSynchronize(!llvm.ptr)
// DECL-NEXT: llvm.func @mgpuStreamWaitEvent(!llvm.ptr, !llvm.ptr)
// DECL-NEXT: llvm.func @mgpuEventCreate() -> !llvm.ptr
// DECL-NEXT: llvm.func @mgpuEventDestroy(!llvm.ptr)
// DECL-NEXT: llvm.func @mgpuEventSynchronize(!llvm.ptr)
// DECL-NEXT: llvm.func @mgpuEventRecord(!llvm.ptr, !llvm.ptr)
// DECL-NEXT: llvm.func @mgpuMemAlloc(i64, !llvm.ptr, i8) -> !llvm.ptr
// DECL-NEXT: llvm.func @mgpuMemcpy(!llvm.ptr, !llvm.ptr, i64, !llvm.ptr)
// DECL-NEXT: llvm.func @mgpuMemset16(!llvm.ptr, i16, i64, !llvm.ptr)
// DECL-NEXT: llvm.func @mgpuMemset32(!llvm.ptr, i32, i64, !llvm.ptr)
// DECL-NEXT: llvm.func @mgpuSetDefaultDevice(i32)
// DECL-NEXT: llvm.func @mgpuMemFree(!llvm.ptr, !llvm.ptr)
// DECL-NOT: llvm.func @mgpu

// With gpu-to-llvm between, every lowering calls a declaration made here
// (llvm.call's verifier would reject one whose type disagreed), and nothing
// new is declared at the end. The unused declarations are erased after:
// here only mgpuEventSynchronize's.
// CHECK: module
// CHECK-COUNT-12: llvm.func @mgpu
// CHECK-NEXT: llvm.func @mgpuMemFree
// CHECK-NEXT: llvm.func @host
// CHECK-NOT: llvm.func @mgpu
// CHECK-NOT: @mgpuEventSynchronize
module attributes {gpu.container_module} {
  llvm.func @mgpuMemFree(!llvm.ptr, !llvm.ptr)
  func.func @host(%n: memref<16xf32>, %h: memref<16xf16>, %f: f32, %g: f16,
                  %device: i32) {
    gpu.set_default_device %device
    %t0 = gpu.wait async
    %m, %t1 = gpu.alloc async [%t0] () : memref<16xf32>
    %t2 = gpu.memcpy async [%t1] %m, %n : memref<16xf32>, memref<16xf32>
    %t3 = gpu.memset async [%t2] %m, %f : memref<16xf32>, f32
    %u0 = gpu.wait async
    %t4 = gpu.memset async [%u0] %h, %g : memref<16xf16>, f16
    // Two streams joined: an event recorded on one, waited for on the other.
    %t5 = gpu.wait async [%t3, %t4]
    %t6 = gpu.dealloc async [%t5] %m : memref<16xf32>
    gpu.wait [%t6]
    return
  }
}
