// RUN: rankc-opt %s -split-input-file -rankc-optimize-none-glue | FileCheck %s
// RUN: rankc-opt %s -split-input-file -rankc-optimize-none-glue -convert-func-to-llvm | FileCheck %s --check-prefix=LLVM

#id = affine_map<(d0) -> (d0)>
// 16 iterations of 2 body ops (and a copy: a memcpy call): glue. func-to-llvm
// carries the attribute onto the llvm.func (LLVM IR: noinline optnone).
// CHECK-LABEL: func.func @small(
// CHECK-SAME: attributes {passthrough = ["noinline", "optnone"]}
// LLVM-LABEL: llvm.func @small(
// LLVM-SAME: passthrough = ["noinline", "optnone"]
func.func @small(%x: memref<16xf32>, %y: memref<16xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<16xf32>) outs(%y : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  memref.copy %y, %x : memref<16xf32> to memref<16xf32>
  return
}

// -----

// A schedule: calls and no loop at all. A declaration has no code to
// compile.
// CHECK: func.func private @part(memref<4xf32>) -> memref<4xf32>{{$}}
// CHECK-LABEL: func.func @schedule(
// CHECK-SAME: passthrough = ["noinline", "optnone"]
func.func private @part(memref<4xf32>) -> memref<4xf32>
func.func @schedule(%x: memref<4xf32>) -> memref<4xf32> {
  %y = call @part(%x) : (memref<4xf32>) -> memref<4xf32>
  %z = call @part(%y) : (memref<4xf32>) -> memref<4xf32>
  return %z : memref<4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
// 2^20 iterations: a kernel, optimized.
// CHECK-LABEL: func.func @kernel(
// CHECK-NOT: passthrough
// CHECK: linalg.generic
func.func @kernel(%x: memref<1024x1024xf32>, %y: memref<1024x1024xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<1024x1024xf32>) outs(%y : memref<1024x1024xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

#id = affine_map<(d0) -> (d0)>
// Just over the bound: 16512 iterations of a body of one op (2^14 is 16384).
// CHECK-LABEL: func.func @adds_up(
// CHECK-NOT: passthrough
func.func @adds_up(%x: memref<16512xf32>, %y: memref<16512xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<16512xf32>) outs(%y : memref<16512xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

#id = affine_map<(d0) -> (d0)>
// Unbounded: a dynamic shape, a loop that is no linalg op's.
// CHECK-LABEL: func.func @dynamic(
// CHECK-NOT: passthrough
// CHECK-LABEL: func.func @loop(
// CHECK-NOT: passthrough
// CHECK: scf.for
func.func @dynamic(%x: memref<?xf32>, %y: memref<?xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}
func.func @loop(%x: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    memref.store %f, %x[%c0] : memref<4xf32>
  }
  return
}

// -----

// A schedule of many message copies (halo exchanges) is glue however many
// elements it copies: a copy is a call of memcpy, no loop to optimize.
// CHECK-LABEL: func.func @copies(
// CHECK-SAME: passthrough = ["noinline", "optnone"]
func.func @copies(%x: memref<1048576xf32>, %y: memref<1048576xf32>) {
  memref.copy %x, %y : memref<1048576xf32> to memref<1048576xf32>
  memref.copy %y, %x : memref<1048576xf32> to memref<1048576xf32>
  return
}
