// RUN: rankc-opt %s -comm-bucket-gradients | FileCheck %s
// Limits: floor(0.00005 MiB) = 52 bytes first, floor(0.0001 MiB) = 104 after.
// Ready order (production order): g3 (64 B) closes bucket 0 alone; g2 (32 B)
// and g1 (64 B) reach 96 < 104 bytes: the partial bucket 1, last.
// CHECK-LABEL: func.func @all(
// CHECK: %[[G3:.*]] = linalg.generic
// CHECK-NEXT: ^bb0
// CHECK: %[[R0:.*]] = comm.allreduce mean %[[G3]] tag "rankc.bucket.0" {comm.bucket = #comm.bucket<index = 0, params = ["w3"], bytes = 64, dtype = "f32">} : tensor<16xf32>
// CHECK-NEXT: %[[V3:.*]] = tensor.extract_slice %[[R0]][0] [16] [1]
// CHECK: %[[F2:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
// CHECK: %[[F1:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
// CHECK: %[[FLAT:.*]] = tensor.concat dim(0) %[[F2]], %[[F1]] : (tensor<8xf32>, tensor<16xf32>) -> tensor<24xf32>
// CHECK: %[[R1:.*]] = comm.allreduce mean %[[FLAT]] tag "rankc.bucket.1" {comm.bucket = #comm.bucket<index = 1, params = ["w2", "w1"], bytes = 96, dtype = "f32">} : tensor<24xf32>
// CHECK: %[[S2:.*]] = tensor.extract_slice %[[R1]][0] [8] [1]
// CHECK: %[[V2:.*]] = tensor.expand_shape %[[S2]]
// CHECK: %[[S1:.*]] = tensor.extract_slice %[[R1]][8] [16] [1]
// CHECK: %[[V1:.*]] = tensor.expand_shape %[[S1]]
// The ignored parameter's gradient is returned as it is.
// CHECK: return %[[V1]], %[[V2]], %[[V3]], %arg3
#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
module attributes {comm.world_size = 2 : i64, comm.data_parallel = #comm.data_parallel<bucket_cap_mb = 0.0001 : f64, first_bucket_cap_mb = 0.00005 : f64, ignore = ["w4"], order = "ready">} {
  func.func @all(%w1: tensor<4x4xf32> {comm.param = "w1"}, %w2: tensor<2x4xf32> {comm.param = "w2"},
                 %w3: tensor<16xf32> {comm.param = "w3"}, %w4: tensor<2xf32> {comm.param = "w4"})
      -> (tensor<4x4xf32> {comm.grad_of = "w1", comm.outputs = ["g1"]},
          tensor<2x4xf32> {comm.grad_of = "w2", comm.outputs = ["g2"]},
          tensor<16xf32> {comm.grad_of = "w3", comm.outputs = ["g3"]},
          tensor<2xf32> {comm.grad_of = "w4", comm.outputs = ["g4"]})
      attributes {comm.ranks = "all"} {
    %e3 = tensor.empty() : tensor<16xf32>
    %g3 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
        ins(%w3 : tensor<16xf32>) outs(%e3 : tensor<16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %n = arith.negf %a : f32
      linalg.yield %n : f32
    } -> tensor<16xf32>
    %e2 = tensor.empty() : tensor<2x4xf32>
    %g2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%w2 : tensor<2x4xf32>) outs(%e2 : tensor<2x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %n = arith.negf %a : f32
      linalg.yield %n : f32
    } -> tensor<2x4xf32>
    %e1 = tensor.empty() : tensor<4x4xf32>
    %g1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%w1 : tensor<4x4xf32>) outs(%e1 : tensor<4x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %n = arith.negf %a : f32
      linalg.yield %n : f32
    } -> tensor<4x4xf32>
    return %g1, %g2, %g3, %w4 : tensor<4x4xf32>, tensor<2x4xf32>, tensor<16xf32>, tensor<2xf32>
  }
}
