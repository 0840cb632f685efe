// RUN: rankc-opt %s -rankc-gpu-fold-equal-kernels | FileCheck %s

// Outlined kernels equal but for their names (and locations) are folded
// into the first; launches follow it. Kernels that differ in a constant, an
// attribute or a type stay, as does a module holding more than its kernel.
// CHECK-LABEL: func.func @host(
// CHECK: gpu.launch_func @scale::@scale blocks
// CHECK-NEXT: gpu.launch_func @scale::@scale blocks
// CHECK-NEXT: gpu.launch_func @other_constant::@other_constant
// CHECK-NEXT: gpu.launch_func @other_type::@other_type
// CHECK-NEXT: gpu.launch_func @other_block::@other_block
// CHECK-NEXT: gpu.launch_func @with_helper::@with_helper
// CHECK-NEXT: gpu.launch_func @with_helper_0::@with_helper
// CHECK-NEXT: gpu.launch_func @scale::@scale blocks
// CHECK: gpu.module @scale
// CHECK-NOT: gpu.module @scale_again
// CHECK: gpu.module @other_constant
// CHECK: gpu.module @other_type
// CHECK: gpu.module @other_block
// CHECK: gpu.module @with_helper
// CHECK: gpu.module @with_helper_0
// CHECK-NOT: gpu.module @scale_third
module attributes {gpu.container_module} {
  func.func @host(%m: memref<4xf32>, %d: memref<4xf64>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @scale::@scale blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @scale_again::@scale_again blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @other_constant::@other_constant blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @other_type::@other_type blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%d : memref<4xf64>)
    gpu.launch_func @other_block::@other_block blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @with_helper::@with_helper blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @with_helper_0::@with_helper blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @scale_third::@scale_third blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    return
  }
  gpu.module @scale {
    gpu.func @scale(%a: memref<4xf32>) kernel attributes {known_block_size = array<i32: 4, 1, 1>} {
      %i = gpu.thread_id x
      %two = arith.constant 2.0 : f32
      %v = memref.load %a[%i] : memref<4xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %a[%i] : memref<4xf32>
      gpu.return
    }
  }
  // The same body with other value names and locations: folded.
  gpu.module @scale_again {
    gpu.func @scale_again(%b: memref<4xf32>) kernel attributes {known_block_size = array<i32: 4, 1, 1>} {
      %t = gpu.thread_id x loc("elsewhere":1:1)
      %c = arith.constant 2.0 : f32
      %x = memref.load %b[%t] : memref<4xf32>
      %y = arith.mulf %x, %c : f32
      memref.store %y, %b[%t] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @other_constant {
    gpu.func @other_constant(%a: memref<4xf32>) kernel attributes {known_block_size = array<i32: 4, 1, 1>} {
      %i = gpu.thread_id x
      %three = arith.constant 3.0 : f32
      %v = memref.load %a[%i] : memref<4xf32>
      %w = arith.mulf %v, %three : f32
      memref.store %w, %a[%i] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @other_type {
    gpu.func @other_type(%a: memref<4xf64>) kernel attributes {known_block_size = array<i32: 4, 1, 1>} {
      %i = gpu.thread_id x
      %two = arith.constant 2.0 : f64
      %v = memref.load %a[%i] : memref<4xf64>
      %w = arith.mulf %v, %two : f64
      memref.store %w, %a[%i] : memref<4xf64>
      gpu.return
    }
  }
  // Same body, launched on other blocks (an attribute of the kernel).
  gpu.module @other_block {
    gpu.func @other_block(%a: memref<4xf32>) kernel attributes {known_block_size = array<i32: 2, 1, 1>} {
      %i = gpu.thread_id x
      %two = arith.constant 2.0 : f32
      %v = memref.load %a[%i] : memref<4xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %a[%i] : memref<4xf32>
      gpu.return
    }
  }
  // Modules holding more than their kernel are left alone, even if equal.
  gpu.module @with_helper {
    gpu.func @with_helper(%a: memref<4xf32>) kernel {
      gpu.return
    }
    func.func @helper() {
      return
    }
  }
  gpu.module @with_helper_0 {
    gpu.func @with_helper(%a: memref<4xf32>) kernel {
      gpu.return
    }
    func.func @helper() {
      return
    }
  }
  // A third copy, declared last, launched last: folded into the first too.
  gpu.module @scale_third {
    gpu.func @scale_third(%q: memref<4xf32>) kernel attributes {known_block_size = array<i32: 4, 1, 1>} {
      %i = gpu.thread_id x
      %two = arith.constant 2.0 : f32
      %v = memref.load %q[%i] : memref<4xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %q[%i] : memref<4xf32>
      gpu.return
    }
  }
}
