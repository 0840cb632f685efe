// RUN: rankc-opt %s -split-input-file -comm-apply-optimizer | FileCheck %s
// Applying it twice changes nothing.
// RUN: rankc-opt %s -split-input-file -comm-apply-optimizer -comm-apply-optimizer | FileCheck %s

// A schedule (linear warm-up, then cosine) and clipping by total norm: the
// step's learning rate is computed in f64 from the step count (each
// phase's factor, the one whose range holds t selected), the gradient's
// partial (sum of squares) reduces it alone, the total and the
// coefficient min(max_norm / (total + 1e-6), 1) follow, and the update
// uses the clipped gradient, which is also the gradient output.
// CHECK-LABEL: func.func @all(
// CHECK-SAME: -> (tensor<4xf32> {comm.outputs = ["loss"]}, tensor<4xf32> {comm.grad_of = "w", comm.outputs = ["g"]}, tensor<4xf32> {comm.outputs = ["w"], comm.update_of = "w"}, {{.*}}, tensor<f32> {comm.outputs = ["gnorm"]}, tensor<i64> {comm.optimizer_state = "optimizer@step"})
// CHECK: %[[SCALARS:.*]]:5 = linalg.generic
// CHECK: math.cos {{.*}} : f64
// CHECK: %[[WARM:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : i64
// CHECK: %[[F:.*]] = arith.select %[[WARM]], %{{.*}}, %{{.*}} : f64
// CHECK: %[[LR:.*]] = arith.mulf %{{.*}}, %[[F]] : f64
// CHECK: %[[PARTIAL:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[G:.*]] : tensor<4xf32>)
// CHECK: %[[TOTAL:.*]]:2 = linalg.generic {{.*}} ins(%[[PARTIAL]] : tensor<f32>)
// CHECK: math.sqrt
// CHECK: arith.minimumf
// CHECK: %[[CLIPPED:.*]] = linalg.generic {{.*}} ins(%[[G]], %[[TOTAL]]#1 : tensor<4xf32>, tensor<f32>)
// CHECK: %[[NEW:.*]]:3 = linalg.generic {{.*}} ins(%{{.*}}, %[[CLIPPED]], {{.*}}, %[[SCALARS]]#2, %[[SCALARS]]#3, %[[SCALARS]]#4 :
// CHECK: return %{{.*}}, %[[CLIPPED]], %[[NEW]]#0, %[[NEW]]#1, %[[NEW]]#2, %[[TOTAL]]#0, %[[SCALARS]]#0
#id = affine_map<(d0) -> (d0)>
module attributes {comm.world_size = 1 : i64, comm.data_parallel = #comm.data_parallel<optimizer = <kind = adamw, lr = 0.1 : f64, weight_decay = 0.01 : f64, betas = [0.9 : f64, 0.999 : f64], eps = 1.0e-08 : f64, lr_schedule = [#comm.lr_phase<kind = "linear", steps = 10 : i64, start_factor = 0.1 : f64, end_factor = 1.0 : f64>, #comm.lr_phase<kind = "cosine", steps = 90 : i64, min_factor = 0.1 : f64>], clip_max_norm = 1.0 : f64, clip_norm_type = "2", clip_output = "gnorm">>} {
  func.func @all(%w: tensor<4xf32> {comm.param = "w"}, %x: tensor<4xf32> {comm.input = "x"})
      -> (tensor<4xf32> {comm.outputs = ["loss"]}, tensor<4xf32> {comm.grad_of = "w", comm.outputs = ["g"]})
      attributes {comm.ranks = "all"} {
    return %x, %x : tensor<4xf32>, tensor<4xf32>
  }
}

// -----

// The learning rate as an input (SGD): read each step, widened to f64, and
// handed to the update, which negates it in the parameter's dtype; the inf
// norm takes the largest magnitude.
// CHECK-LABEL: func.func @all(
// CHECK-SAME: %[[LRIN:[a-z0-9]+]]: tensor<f32> {comm.input = "lr"}
// CHECK: %[[S:.*]]:2 = linalg.generic {{.*}} ins(%{{.*}}, %[[LRIN]] : tensor<i64>, tensor<f32>)
// CHECK: arith.extf {{.*}} : f32 to f64
// CHECK: math.absf
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %[[S]]#1 :
// CHECK: arith.negf {{.*}} : f64
// CHECK: arith.truncf {{.*}} : f64 to f32
module attributes {comm.world_size = 1 : i64, comm.data_parallel = #comm.data_parallel<optimizer = <kind = sgd, lr_input = "lr", weight_decay = 0.0 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, nesterov = false, clip_max_norm = 0.5 : f64, clip_norm_type = "inf">>} {
  func.func @all(%w: tensor<4xf32> {comm.param = "w"}, %x: tensor<4xf32> {comm.input = "x"}, %lr: tensor<f32> {comm.input = "lr"})
      -> (tensor<4xf32> {comm.outputs = ["loss"]}, tensor<4xf32> {comm.grad_of = "w", comm.outputs = ["g"]})
      attributes {comm.ranks = "all"} {
    return %x, %x : tensor<4xf32>, tensor<4xf32>
  }
}
