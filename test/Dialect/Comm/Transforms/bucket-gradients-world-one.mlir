// RUN: rankc-opt %s -comm-bucket-gradients | FileCheck %s
// A world of one: the gradients are their own average. No bucket, no
// concatenation (which would copy every gradient once a step) and no
// allreduce: the gradients are returned as they are.
// CHECK-LABEL: func.func @all(
// CHECK-NOT: tensor.concat
// CHECK-NOT: comm.allreduce
// CHECK: %[[G1:.*]] = linalg.generic
// CHECK: return %[[G1]], %arg1
#id2 = affine_map<(d0, d1) -> (d0, d1)>
module attributes {comm.world_size = 1 : i64, comm.data_parallel = #comm.data_parallel<bucket_cap_mb = 25.0 : f64, first_bucket_cap_mb = 1.0 : f64, order = "ready">} {
  func.func @all(%w1: tensor<4x4xf32> {comm.param = "w1"}, %w2: tensor<2x4xf32> {comm.param = "w2"})
      -> (tensor<4x4xf32> {comm.grad_of = "w1", comm.outputs = ["g1"]},
          tensor<2x4xf32> {comm.grad_of = "w2", comm.outputs = ["g2"]})
      attributes {comm.ranks = "all"} {
    %e1 = tensor.empty() : tensor<4x4xf32>
    %g1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%w1 : tensor<4x4xf32>) outs(%e1 : tensor<4x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %n = arith.negf %a : f32
      linalg.yield %n : f32
    } -> tensor<4x4xf32>
    return %g1, %w2 : tensor<4x4xf32>, tensor<2x4xf32>
  }
}
