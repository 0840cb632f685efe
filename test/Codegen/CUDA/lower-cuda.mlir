// RUN: rankc-opt %s -rankc-lower-cuda="format=isa" | FileCheck %s
// RUN: rankc-opt %s -rankc-lower-cuda="format=isa chip=sm_80" | FileCheck %s --check-prefix=SM80

// The whole CUDA lowering of one program (`rankc compile --target cuda`
// runs it per program): the schedule stays host code calling the runtime;
// the part's computation becomes two kernels (exp is sent as well as
// squared, and the square is broadcast over four rows: another iteration
// space, so the two ops do not fuse) in the program's single gpu.module,
// serialized here as PTX (format=isa; executables embed a fatbin). exp is
// in the importer's form, an op on the whole tensor.
module attributes {comm.world_size = 1 : i64, comm.partitioned} {
  func.func @rank0(%x: tensor<16384xf32> {comm.input = "x"}) -> (tensor<4x16384xf32> {comm.outputs = ["y"]})
      attributes {comm.ranks = array<i64: 0>} {
    %t, %u = call @rank0_part0(%x) : (tensor<16384xf32>) -> (tensor<16384xf32>, tensor<4x16384xf32>)
    comm.send %t to rank 0 tag 3 {mpi_tag = 0 : i32} : tensor<16384xf32>
    %r = comm.recv from rank 0 tag 3 {mpi_tag = 0 : i32} : tensor<16384xf32>
    return %u : tensor<4x16384xf32>
  }
  func.func private @rank0_part0(%x: tensor<16384xf32>) -> (tensor<16384xf32>, tensor<4x16384xf32>) attributes {comm.part_of = "rank0"} {
    %t = math.exp %x : tensor<16384xf32>
    %e2 = tensor.empty() : tensor<4x16384xf32>
    %u = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%t : tensor<16384xf32>) outs(%e2 : tensor<4x16384xf32>) {
    ^bb0(%a: f32, %b: f32):
      %y = arith.mulf %a, %a : f32
      linalg.yield %y : f32
    } -> tensor<4x16384xf32>
    return %t, %u : tensor<16384xf32>, tensor<4x16384xf32>
  }
}

// The kernels, first in the module (rankc-gpu-merge-kernel-modules), as
// the gpu.binary of their PTX that rankc-gpu-launch-to-llvm made a global;
// each kernel's handle is a global the load fills in once.
// CHECK: llvm.mlir.global internal constant @rankc_kernels_binary("{{.*}}.version 8.0
// CHECK-SAME: .target sm_90
// CHECK-SAME: .entry rank0_part0_kernel(
// Its loop bounds are constants in its code (sunk into the launch), so it
// takes just its two buffers.
// CHECK-SAME: .param .u64 .ptr .align 1 rank0_part0_kernel_param_0,\0A\09.param .u64 .ptr .align 1 rank0_part0_kernel_param_1\0A)
// CHECK-SAME: ld.global.v4.b32
// CHECK-SAME: ex2.approx
// CHECK-SAME: st.global.v4.b32
// CHECK-SAME: .entry rank0_part0_kernel_0(
// CHECK-SAME: mul.rn.f32
// CHECK: @rankc_kernels_rank0_part0_kernel_name("rank0_part0_kernel\00")
// CHECK: @rankc_kernels_rank0_part0_kernel_function()
// CHECK: @rankc_kernels_rank0_part0_kernel_0_name("rank0_part0_kernel_0\00")
// CHECK: @rankc_kernels_rank0_part0_kernel_0_function()
// PTX (format=isa) is loaded by the driver's JIT, at the object's level 3.
// CHECK-LABEL: llvm.func internal @rankc_kernels_load()
// CHECK: %[[BIN:.*]] = llvm.mlir.addressof @rankc_kernels_binary
// CHECK: %[[LEVEL:.*]] = llvm.mlir.constant(3 : i32)
// CHECK: %[[M:.*]] = llvm.call @mgpuModuleLoadJIT(%[[BIN]], %[[LEVEL]], %{{.*}})
// CHECK: %[[N0:.*]] = llvm.mlir.addressof @rankc_kernels_rank0_part0_kernel_name
// CHECK: %[[K0:.*]] = llvm.call @mgpuModuleGetFunction(%[[M]], %[[N0]])
// CHECK: %[[F0:.*]] = llvm.mlir.addressof @rankc_kernels_rank0_part0_kernel_function
// CHECK: llvm.store %[[K0]], %[[F0]]
// CHECK: llvm.call @mgpuModuleGetFunction(%[[M]],
// CHECK: llvm.return
// CHECK-LABEL: llvm.func internal @rankc_kernels_unload()
// CHECK: llvm.call @mgpuModuleUnload(
// CHECK-LABEL: llvm.func @rank0(
// The step's planned buffers: one block from the runtime.
// CHECK: llvm.call @rankc_rt_scratch(
// CHECK: llvm.call @rankc_rt_irecv(
// CHECK: llvm.call @rankc_rt_part_begin(
// The buffer part0 writes the output into is in that block, and the host
// does not wait for the GPU before the part's call.
// CHECK-NOT: llvm.call @mgpuStreamSynchronize
// CHECK: llvm.call @rank0_part0(
// CHECK: llvm.call @rankc_rt_part_end(
// CHECK: llvm.call @rankc_rt_isend(
// CHECK: llvm.call @rankc_rt_wait(
// CHECK-LABEL: llvm.func @rank0_part0(
// Buffers go to kernels as bare pointers (their shapes are static): each
// kernel takes two pointers, not two descriptors, in an argument block
// allocated in the entry block.
// CHECK: llvm.alloca %{{.*}} x !llvm.struct<(ptr, ptr)>
// CHECK-NEXT: llvm.alloca %{{.*}} x !llvm.ptr
// The part allocates nothing: it writes its results into its arguments.
// CHECK: %[[S:.*]] = llvm.call @mgpuStreamCreate()
// CHECK-NOT: llvm.call @mgpuMemAlloc(
// The launch passes the array of pointers to the argument block's fields.
// CHECK: %[[SLOT:.*]] = llvm.getelementptr %{{.*}}[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, ptr)>
// CHECK: %[[P1:.*]] = llvm.getelementptr %[[PTRS:.*]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: llvm.store %[[SLOT]], %[[P1]]
// CHECK: %[[H0:.*]] = llvm.mlir.addressof @rankc_kernels_rank0_part0_kernel_function
// CHECK: %[[K:.*]] = llvm.load %[[H0]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call @mgpuLaunchKernel(%[[K]], {{.*}}, %[[S]], %[[PTRS]], %{{.*}}) :
// CHECK: llvm.call @mgpuLaunchKernel({{.*}}, %[[S]],
// The part returns without waiting for its kernels: its results go to the
// runtime (which waits for the stream itself) or to other parts.
// CHECK-NOT: llvm.call @mgpuStreamSynchronize
// CHECK: llvm.return
// CHECK: llvm.func @rankc_entry()
// CHECK: llvm.mlir.global_ctors ctors = [@rankc_kernels_load], priorities = [123 : i32]
// CHECK: llvm.mlir.global_dtors dtors = [@rankc_kernels_unload], priorities = [123 : i32]
// SM80: llvm.mlir.global internal constant @rankc_kernels_binary("{{.*}}.target sm_80
