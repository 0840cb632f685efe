// RUN: rankc-opt %s -rankc-gpu-device-buffers | FileCheck %s

// Host buffers become device buffers; a copy of a constant straight into a
// buffer is one host-to-device gpu.memcpy; a copy into a strided view is a
// linalg.copy (a kernel later).
memref.global "private" constant @cst : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

// CHECK-LABEL: func.func @buffers(
// CHECK-SAME: %[[A:.*]]: memref<4xf32>)
// CHECK: %[[HOST:.*]] = memref.get_global @cst : memref<4xf32>
// CHECK-NEXT: %[[B:.*]] = gpu.alloc () : memref<4xf32>
// CHECK-NEXT: gpu.memcpy %[[B]], %[[HOST]]
// CHECK-NEXT: %[[C:.*]] = gpu.alloc () : memref<8xf32>
// CHECK-NEXT: %[[V:.*]] = memref.subview %[[C]][2] [4] [1]
// CHECK-NEXT: linalg.copy ins(%[[A]] : memref<4xf32>) outs(%[[V]] : memref<4xf32, strided<[1], offset: 2>>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
func.func @buffers(%a: memref<4xf32>) -> memref<4xf32> {
  %g = memref.get_global @cst : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  memref.copy %g, %b : memref<4xf32> to memref<4xf32>
  %c = memref.alloc() : memref<8xf32>
  %v = memref.subview %c[2] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>
  memref.copy %a, %v : memref<4xf32> to memref<4xf32, strided<[1], offset: 2>>
  return %b : memref<4xf32>
}

// A constant that an op reads (a kernel, later) is first copied into a
// device buffer, and the op reads that.
// CHECK-LABEL: func.func @read_by_op(
// CHECK: %[[HOST:.*]] = memref.get_global @cst : memref<4xf32>
// CHECK-NEXT: %[[DEV:.*]] = gpu.alloc () : memref<4xf32>
// CHECK-NEXT: gpu.memcpy %[[DEV]], %[[HOST]]
// CHECK: linalg.generic {{.*}} ins(%[[DEV]], %{{.*}} : memref<4xf32>, memref<4xf32>)
func.func @read_by_op(%a: memref<4xf32>, %out: memref<4xf32>) {
  %g = memref.get_global @cst : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%g, %a : memref<4xf32>, memref<4xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// Kernels' own code (in a gpu.module) is left alone.
// CHECK-LABEL: gpu.module @kernels
// CHECK: memref.alloc() : memref<2xf32>
gpu.module @kernels {
  gpu.func @k(%x: f32) kernel {
    %c0 = arith.constant 0 : index
    %s = memref.alloc() : memref<2xf32>
    memref.store %x, %s[%c0] : memref<2xf32>
    gpu.return
  }
}
