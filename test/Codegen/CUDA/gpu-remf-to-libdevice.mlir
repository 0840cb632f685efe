// RUN: rankc-opt %s -pass-pipeline='builtin.module(gpu.module(rankc-gpu-remf-to-libdevice))' -split-input-file -verify-diagnostics | FileCheck %s

// A kernel's float remainders call libdevice's fmod (llvm.frem, what arith
// lowering would make, has no NVPTX instruction); one declaration each.
// CHECK-LABEL: gpu.module @kernels
// CHECK-DAG: llvm.func @__nv_fmodf(f32, f32) -> f32
// CHECK-DAG: llvm.func @__nv_fmod(f64, f64) -> f64
// CHECK: gpu.func @k
// CHECK: llvm.call @__nv_fmodf(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// CHECK: llvm.call @__nv_fmodf(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// CHECK: llvm.call @__nv_fmod(%{{.*}}, %{{.*}}) : (f64, f64) -> f64
// CHECK-NOT: arith.remf
gpu.module @kernels {
  gpu.func @k(%a: f32, %b: f32, %c: f64, %d: f64, %o: memref<3xf64>) kernel {
    %r = arith.remf %a, %b : f32
    %s = arith.remf %r, %b : f32
    %t = arith.remf %c, %d : f64
    %w = arith.extf %s : f32 to f64
    %i0 = arith.constant 0 : index
    %i1 = arith.constant 1 : index
    memref.store %w, %o[%i0] : memref<3xf64>
    memref.store %t, %o[%i1] : memref<3xf64>
    gpu.return
  }
}

// -----

gpu.module @half {
  gpu.func @k(%a: f16, %o: memref<1xf16>) kernel {
    // expected-error @+1 {{on the GPU takes f32 or f64, got 'f16'}}
    %r = arith.remf %a, %a : f16
    %i0 = arith.constant 0 : index
    memref.store %r, %o[%i0] : memref<1xf16>
    gpu.return
  }
}
