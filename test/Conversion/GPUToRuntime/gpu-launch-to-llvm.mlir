// RUN: rankc-opt %s -split-input-file -rankc-gpu-launch-to-llvm -verify-diagnostics | FileCheck %s

// A binary and its launches become globals, a load and an unload run as a
// constructor and destructor, and calls of the runtime: nothing is left
// for the translation to lower against the binary, so the launching
// function can be built in a module of its own (lib/Target/ProgramPieces).
// The handler selects the object of index 1 (a fatbin: mgpuModuleLoad).
module attributes {gpu.container_module} {
  // CHECK-NOT: gpu.binary
  // CHECK-DAG: llvm.func @mgpuModuleLoad(!llvm.ptr, i64) -> !llvm.ptr
  // CHECK-DAG: llvm.func @mgpuModuleGetFunction(!llvm.ptr, !llvm.ptr) -> !llvm.ptr
  // CHECK-DAG: llvm.func @mgpuLaunchKernel(!llvm.ptr, i64, i64, i64, i64, i64, i64, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64)
  // CHECK-DAG: llvm.func @mgpuStreamCreate() -> !llvm.ptr
  // CHECK: llvm.mlir.global internal constant @kernels_binary("FATBIN") {addr_space = 0 : i32, alignment = 8 : i64}
  // CHECK: llvm.mlir.global internal @kernels_module()
  // CHECK: llvm.mlir.global private constant @kernels_scale_name("scale\00")
  // CHECK: llvm.mlir.global internal @kernels_scale_function()
  // CHECK: llvm.mlir.global private constant @kernels_fill_name("fill\00")
  // CHECK: llvm.mlir.global internal @kernels_fill_function()
  // CHECK-LABEL: llvm.func internal @kernels_load()
  // CHECK: %[[BIN:.*]] = llvm.mlir.addressof @kernels_binary
  // CHECK: %[[SIZE:.*]] = llvm.mlir.constant(6 : i64)
  // CHECK: %[[M:.*]] = llvm.call @mgpuModuleLoad(%[[BIN]], %[[SIZE]])
  // CHECK: llvm.store %[[M]], %{{.*}} : !llvm.ptr, !llvm.ptr
  // CHECK: %[[N:.*]] = llvm.mlir.addressof @kernels_scale_name
  // CHECK: %[[F:.*]] = llvm.call @mgpuModuleGetFunction(%[[M]], %[[N]])
  // CHECK: %[[H:.*]] = llvm.mlir.addressof @kernels_scale_function
  // CHECK: llvm.store %[[F]], %[[H]]
  // CHECK: llvm.call @mgpuModuleGetFunction(%[[M]],
  // CHECK-LABEL: llvm.func internal @kernels_unload()
  // CHECK: llvm.call @mgpuModuleUnload(
  gpu.binary @kernels <#gpu.select_object<1>> [#gpu.object<#nvvm.target<chip = "sm_80">, "OTHER">,
                                               #gpu.object<#nvvm.target, "FATBIN">]

  // CHECK-LABEL: llvm.func @step(
  // CHECK-SAME: %[[P:[a-z0-9]+]]: !llvm.ptr, %[[N2:[a-z0-9]+]]: i64, %[[S:[a-z0-9]+]]: !llvm.ptr, %[[SMEM:[a-z0-9]+]]: i32
  // Each launch's argument block is in the entry block, however deep the
  // launch: a launch in a loop does not grow the stack.
  // CHECK-DAG: %[[A1:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, i64)>
  // CHECK-DAG: %[[A2:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr)>
  // CHECK: llvm.br ^bb1
  // CHECK: ^bb1:
  // The launch on a stream: its arguments stored, the kernel's handle read.
  // CHECK: %[[G0:.*]] = llvm.getelementptr %[[A1]][0, 0]
  // CHECK: llvm.store %[[P]], %[[G0]] : !llvm.ptr, !llvm.ptr
  // CHECK: llvm.store %[[G0]], %{{.*}} : !llvm.ptr, !llvm.ptr
  // CHECK: %[[G1:.*]] = llvm.getelementptr %[[A1]][0, 1]
  // CHECK: llvm.store %[[N2]], %[[G1]] : i64, !llvm.ptr
  // CHECK: %[[HS:.*]] = llvm.mlir.addressof @kernels_scale_function
  // CHECK: %[[K:.*]] = llvm.load %[[HS]] : !llvm.ptr -> !llvm.ptr
  // CHECK: %[[NARGS:.*]] = llvm.mlir.constant(2 : i64)
  // CHECK: llvm.call @mgpuLaunchKernel(%[[K]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SMEM]], %[[S]], %{{.*}}, %{{.*}}, %[[NARGS]])
  // CHECK-NOT: mgpuStreamSynchronize
  // Without a stream: one made, synchronized and destroyed around it.
  // CHECK: llvm.mlir.addressof @kernels_fill_function
  // CHECK: %[[NEW:.*]] = llvm.call @mgpuStreamCreate()
  // CHECK: %[[ZERO:.*]] = llvm.mlir.constant(0 : i32)
  // CHECK: llvm.call @mgpuLaunchKernel(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ZERO]], %[[NEW]],
  // CHECK: llvm.call @mgpuStreamSynchronize(%[[NEW]])
  // CHECK: llvm.call @mgpuStreamDestroy(%[[NEW]])
  llvm.func @step(%p: !llvm.ptr, %n: i64, %s: !llvm.ptr, %smem: i32) {
    %c = llvm.mlir.constant(4 : i64) : i64
    llvm.br ^bb1
  ^bb1:
    gpu.launch_func <%s : !llvm.ptr> @kernels::@scale blocks in (%c, %c, %c) threads in (%c, %c, %c) : i64 dynamic_shared_memory_size %smem args(%p : !llvm.ptr, %n : i64)
    gpu.launch_func @kernels::@fill blocks in (%c, %c, %c) threads in (%c, %c, %c) : i64 args(%p : !llvm.ptr)
    llvm.return
  }

  // The module's own constructors stay, ours after them.
  llvm.func @init() {
    llvm.return
  }
  llvm.mlir.global_ctors ctors = [@init], priorities = [0 : i32], data = [#llvm.zero]
  // CHECK: llvm.mlir.global_ctors ctors = [@init, @kernels_load], priorities = [0 : i32, 123 : i32], data = [#llvm.zero, #llvm.zero]
  // CHECK: llvm.mlir.global_dtors dtors = [@kernels_unload], priorities = [123 : i32], data = [#llvm.zero]
}

// -----

// PTX is compiled by the driver's JIT at the level the object names; the
// handler selects by target.
// CHECK-LABEL: llvm.func internal @ptx_load()
// CHECK: %[[LEVEL:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK: llvm.call @mgpuModuleLoadJIT(%{{.*}}, %[[LEVEL]], %{{.*}}) : (!llvm.ptr, i32, i64) -> !llvm.ptr
module attributes {gpu.container_module} {
  gpu.binary @ptx <#gpu.select_object<#nvvm.target<chip = "sm_90">>> [
      #gpu.object<#nvvm.target<chip = "sm_80">, "OTHER">,
      #gpu.object<#nvvm.target<chip = "sm_90">, properties = {O = 2 : i32}, assembly = ".version 8.0">]
  llvm.func @f(%s: !llvm.ptr) {
    %c = llvm.mlir.constant(1 : i64) : i64
    gpu.launch_func <%s : !llvm.ptr> @ptx::@k blocks in (%c, %c, %c) threads in (%c, %c, %c) : i64
    llvm.return
  }
}

// -----

module attributes {gpu.container_module} {
  // expected-error @+1 {{rankc-gpu-launch-to-llvm: gpu.binary @kernels has no object for its handler #gpu.select_object<5 : i64>}}
  gpu.binary @kernels <#gpu.select_object<5>> [#gpu.object<#nvvm.target, "FATBIN">]
}

// -----

module attributes {gpu.container_module} {
  // expected-error @+1 {{rankc-gpu-launch-to-llvm: gpu.binary @kernels holds LLVM IR (format offloading), which the runtime cannot load}}
  gpu.binary @kernels [#gpu.object<#nvvm.target, offload = "BITCODE">]
}

// -----

module attributes {gpu.container_module} {
  // expected-error @+1 {{rankc-gpu-launch-to-llvm: gpu.binary @kernels: the optimization level "high" is not an integer}}
  gpu.binary @kernels [#gpu.object<#nvvm.target, properties = {O = "high"}, assembly = "PTX">]
}

// -----

module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target, "FATBIN">]
  llvm.func @f(%s: !llvm.ptr) {
    %c = llvm.mlir.constant(1 : i64) : i64
    // expected-error @+1 {{rankc-gpu-launch-to-llvm: cannot lower this launch of @kernels::@k: cluster launches are not supported}}
    gpu.launch_func <%s : !llvm.ptr> @kernels::@k clusters in (%c, %c, %c) blocks in (%c, %c, %c) threads in (%c, %c, %c) : i64
    llvm.return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target, "FATBIN">]
  func.func @f() {
    %c = arith.constant 1 : index
    // expected-error @+1 {{rankc-gpu-launch-to-llvm: cannot lower this launch of @kernels::@k: it is not in an llvm.func}}
    gpu.launch_func @kernels::@k blocks in (%c, %c, %c) threads in (%c, %c, %c)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target, "FATBIN">]
  llvm.func @f() {
    %c = arith.constant 1 : index
    // expected-error @+1 {{rankc-gpu-launch-to-llvm: cannot lower this launch of @kernels::@k: an operand has the non-LLVM type index (run convert-gpu-to-llvm first)}}
    gpu.launch_func @kernels::@k blocks in (%c, %c, %c) threads in (%c, %c, %c)
    llvm.return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target, "FATBIN">]
  llvm.func @f() {
    %c = llvm.mlir.constant(1 : i64) : i64
    %t = gpu.wait async
    // expected-error @+1 {{rankc-gpu-launch-to-llvm: cannot lower this launch of @kernels::@k: it has async tokens (run convert-gpu-to-llvm first)}}
    %u = gpu.launch_func async [%t] @kernels::@k blocks in (%c, %c, %c) threads in (%c, %c, %c) : i64
    llvm.return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k() kernel { gpu.return }
  }
  llvm.func @f(%s: !llvm.ptr) {
    %c = llvm.mlir.constant(1 : i64) : i64
    // expected-error @+1 {{rankc-gpu-launch-to-llvm: no gpu.binary @kernels in this module for the launch of its kernel @k}}
    gpu.launch_func <%s : !llvm.ptr> @kernels::@k blocks in (%c, %c, %c) threads in (%c, %c, %c) : i64
    llvm.return
  }
}

// -----

module attributes {gpu.container_module} {
  // expected-error @+1 {{rankc-gpu-launch-to-llvm: 'mgpuLaunchKernel' is declared here, but the runtime's mgpuLaunchKernel is '!llvm.func<void (ptr, i64, i64, i64, i64, i64, i64, i32, ptr, ptr, ptr, i64)>'}}
  llvm.func @mgpuLaunchKernel(i32)
  gpu.binary @kernels [#gpu.object<#nvvm.target, "FATBIN">]
  llvm.func @f(%s: !llvm.ptr) {
    %c = llvm.mlir.constant(1 : i64) : i64
    gpu.launch_func <%s : !llvm.ptr> @kernels::@k blocks in (%c, %c, %c) threads in (%c, %c, %c) : i64
    llvm.return
  }
}
