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

// The kernels, first in the module (rankc-gpu-merge-kernel-modules):
// CHECK: gpu.binary @rankc_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}.version 8.0
// CHECK-SAME: .target sm_90
// CHECK-SAME: .entry rank0_part0_kernel(
// CHECK-SAME: .param .u64 .ptr .align 1 rank0_part0_kernel_param_6,\0A\09.param .u64 .ptr .align 1 rank0_part0_kernel_param_7\0A)
// CHECK-SAME: ld.global.v4.b32
// CHECK-SAME: ex2.approx
// CHECK-SAME: st.global.v4.b32
// CHECK-SAME: .entry rank0_part0_kernel_0(
// CHECK-SAME: mul.rn.f32
// CHECK-LABEL: llvm.func @rank0(
// CHECK: llvm.call @rankc_rt_irecv(
// CHECK: llvm.call @rankc_rt_part_begin(
// CHECK: llvm.call @rank0_part0(
// CHECK: llvm.call @rankc_rt_part_end(
// CHECK: llvm.call @rankc_rt_isend(
// CHECK: llvm.call @rankc_rt_wait(
// CHECK-LABEL: llvm.func @rank0_part0(
// CHECK: llvm.call @mgpuStreamCreate()
// CHECK: llvm.call @mgpuMemAlloc(
// Buffers go to kernels as bare pointers (their shapes are static): the
// first kernel takes its loop bounds and two pointers, not two descriptors.
// CHECK: gpu.launch_func <%[[S:.*]] : !llvm.ptr> @rankc_kernels::@rank0_part0_kernel blocks in
// CHECK-SAME: : i64, %{{[0-9a-z]+}} : !llvm.ptr, %{{[0-9a-z]+}} : !llvm.ptr){{$}}
// CHECK: gpu.launch_func <%[[S]] : !llvm.ptr> @rankc_kernels::@rank0_part0_kernel_0 blocks in
// The part returns without waiting for its kernels: its results go to the
// runtime (which waits for the stream itself) or to other parts.
// CHECK-NOT: llvm.call @mgpuStreamSynchronize
// CHECK: llvm.return
// CHECK: llvm.func @rankc_entry()
// SM80: gpu.binary @rankc_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">
