// RUN: rankc-opt %s -rankc-lower-cpu | FileCheck %s

// The whole CPU lowering of one program (`rankc compile` runs it per
// program). The part of 16-element tensors: exp is sent and squared, so
// upstream's fusion leaves the two ops apart; rankc-fuse-multi-output makes
// them one loop writing both. It and the schedule are glue (optnone: LLVM
// compiles them at -O0); the 512x512 part is a kernel and stays optimized.
// Buffers come from the step's planned block (rankc-plan-buffers). part0 is in the
// importer's form (ops on whole tensors, made linalg.generic by upstream's
// convert-elementwise-to-linalg), part1 a generic as written.
module attributes {comm.world_size = 1 : i64, comm.partitioned} {
  func.func @rank0(%x: tensor<16xf32> {comm.input = "x"}, %w: tensor<512x512xf32> {comm.input = "w"})
      -> (tensor<16xf32> {comm.outputs = ["y"]}, tensor<512x512xf32> {comm.outputs = ["v"]})
      attributes {comm.ranks = array<i64: 0>} {
    %t, %u = call @rank0_part0(%x) : (tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>)
    comm.send %t to rank 0 tag 3 {mpi_tag = 0 : i32} : tensor<16xf32>
    %r = comm.recv from rank 0 tag 3 {mpi_tag = 0 : i32} : tensor<16xf32>
    %v = call @rank0_part1(%w) : (tensor<512x512xf32>) -> tensor<512x512xf32>
    return %u, %v : tensor<16xf32>, tensor<512x512xf32>
  }
  func.func private @rank0_part0(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) attributes {comm.part_of = "rank0"} {
    %t = math.exp %x : tensor<16xf32>
    %u = arith.mulf %t, %t : tensor<16xf32>
    return %t, %u : tensor<16xf32>, tensor<16xf32>
  }
  func.func private @rank0_part1(%w: tensor<512x512xf32>) -> tensor<512x512xf32> attributes {comm.part_of = "rank0"} {
    %e = tensor.empty() : tensor<512x512xf32>
    %v = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%w : tensor<512x512xf32>) outs(%e : tensor<512x512xf32>) {
    ^bb0(%a: f32, %b: f32):
      %y = math.tanh %a : f32
      linalg.yield %y : f32
    } -> tensor<512x512xf32>
    return %v : tensor<512x512xf32>
  }
}

// CHECK-LABEL: llvm.func @rank0(
// CHECK-SAME: passthrough = ["noinline", "optnone"]
// The step's buffers (the received message, exp sent, and the outputs,
// none carried into a next step) in one planned block from the runtime:
// nothing from the step arena.
// CHECK: llvm.call @rankc_rt_scratch(
// CHECK-NOT: llvm.call @_mlir_memref_to_llvm_aligned_alloc(
// CHECK: llvm.call @rankc_rt_irecv(
// CHECK-NOT: llvm.call @_mlir_memref_to_llvm_aligned_alloc(
// CHECK: llvm.call @rank0_part0(
// CHECK: llvm.call @rankc_rt_isend(
// CHECK-NOT: llvm.call @_mlir_memref_to_llvm_aligned_alloc(
// CHECK: llvm.call @rank0_part1(
// part0 writes both results into buffers its caller gave it.
// CHECK-LABEL: llvm.func @rank0_part0(
// CHECK-SAME: passthrough = ["noinline", "optnone"]
// CHECK-NOT: llvm.call @_mlir_memref_to_llvm_aligned_alloc(
// One loop: exp, its square, two stores.
// CHECK: llvm.intr.exp
// CHECK-NEXT: llvm.fmul
// CHECK: llvm.store
// CHECK: llvm.store
// CHECK-NOT: llvm.intr.exp
// CHECK: llvm.return
// CHECK-LABEL: llvm.func @rank0_part1(
// CHECK-NOT: passthrough
// CHECK: llvm.return
