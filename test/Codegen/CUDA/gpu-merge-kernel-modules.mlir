// RUN: rankc-opt %s -rankc-gpu-merge-kernel-modules | FileCheck %s
// RUN: rankc-opt %s -rankc-gpu-merge-kernel-modules=ops-per-module=3 | FileCheck %s --check-prefix=CUT

// Two outlined kernels (same function name, different modules) end up in
// one module, named after the modules they came from; launches follow.
// A module that holds more than its kernel stays as it is. The merged
// modules go first in the module (symbol lookups without a table scan from
// the start: the container-module verifier's, one a launch).
// CHECK: module attributes {gpu.container_module} {
// CHECK-NEXT: gpu.module @rankc_kernels {
// CHECK-NEXT: gpu.func @part0_kernel(%{{.*}}: memref<4xf32>) kernel
// CHECK: gpu.func @part0_kernel_0(%{{.*}}: memref<4xf32>) kernel
// CHECK-LABEL: func.func @host(
// CHECK: gpu.launch_func @rankc_kernels::@part0_kernel
// CHECK: gpu.launch_func @rankc_kernels::@part0_kernel_0
// CHECK: gpu.launch_func @other::@k
// CHECK-NOT: gpu.module @part0_kernel
// CHECK: gpu.module @other
// With a budget of 3 operations (each kernel is 2: its func and return) the
// kernels go into two modules, in program order, and launches follow.
// CUT: module attributes {gpu.container_module} {
// CUT-NEXT: gpu.module @rankc_kernels {
// CUT-NEXT: gpu.func @part0_kernel(
// CUT-NOT: gpu.func
// CUT: gpu.module @rankc_kernels_0 {
// CUT-NEXT: gpu.func @part0_kernel_0(
// CUT-NOT: gpu.func
// CUT-LABEL: func.func @host(
// CUT: gpu.launch_func @rankc_kernels::@part0_kernel
// CUT: gpu.launch_func @rankc_kernels_0::@part0_kernel_0
// CUT: gpu.launch_func @other::@k
// CUT: gpu.module @other
module attributes {gpu.container_module} {
  func.func @host(%m: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @part0_kernel::@part0_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @part0_kernel_0::@part0_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @other::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
  gpu.module @part0_kernel {
    gpu.func @part0_kernel(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @part0_kernel_0 {
    gpu.func @part0_kernel(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @other {
    gpu.func @k() kernel {
      gpu.return
    }
    func.func @helper() {
      return
    }
  }
}
