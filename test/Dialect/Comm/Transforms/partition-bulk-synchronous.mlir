// RUN: rankc-opt %s -comm-partition=eager-sends=false | FileCheck %s
// The baseline of bench/overlap.sh: the send waits for all the work of its
// level (one part), instead of leaving before the unrelated work.
// CHECK-LABEL: func.func @rank0(
// CHECK-NEXT: %[[P:.*]]:2 = call @rank0_part0(%arg0)
// CHECK-NEXT: comm.send %[[P]]#0 to rank 1 tag 1
// CHECK-NEXT: return %[[P]]#1
module attributes {comm.world_size = 2 : i64} {
  func.func @rank0(%x: tensor<4xf32> {comm.input = "x"}) -> (tensor<4xf32> {comm.outputs = ["b"]})
      attributes {comm.ranks = array<i64: 0>} {
    %e0 = tensor.empty() : tensor<4xf32>
    %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e0 : tensor<4xf32>) -> tensor<4xf32>
    %e1 = tensor.empty() : tensor<4xf32>
    %b = linalg.negf ins(%x : tensor<4xf32>) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
    comm.send %a to rank 1 tag 1 : tensor<4xf32>
    return %b : tensor<4xf32>
  }
  func.func @rank1() attributes {comm.ranks = array<i64: 1>} {
    %r = comm.recv from rank 0 tag 1 : tensor<4xf32>
    return
  }
}
