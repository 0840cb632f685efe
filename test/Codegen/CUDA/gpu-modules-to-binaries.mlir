// RUN: rankc-opt %s -rankc-gpu-modules-to-binaries="format=isa" | FileCheck %s
// RUN: rankc-opt %s -rankc-gpu-modules-to-binaries="format=isa" -mlir-disable-threading | FileCheck %s

// Each gpu.module becomes a gpu.binary of the same name, in module order,
// whatever thread serialized it; each holds its own kernels' PTX only.
// CHECK: gpu.binary @first [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">, properties = {{.*}}assembly = "
// CHECK-SAME: .entry first_kernel(
// CHECK-NOT: second_kernel
// CHECK-SAME: "
// CHECK-NEXT: gpu.binary @second [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">
// CHECK-SAME: .entry second_kernel(
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  llvm.func @host() {
    llvm.return
  }
  gpu.module @first [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
    llvm.func @first_kernel(%p: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %c = llvm.mlir.constant(1.0 : f32) : f32
      llvm.store %c, %p : f32, !llvm.ptr
      llvm.return
    }
  }
  gpu.module @second [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
    llvm.func @second_kernel(%p: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %c = llvm.mlir.constant(2.0 : f32) : f32
      llvm.store %c, %p : f32, !llvm.ptr
      llvm.return
    }
  }
}

